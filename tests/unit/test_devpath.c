/* SPDX-License-Identifier: BSD-2-Clause */
/* The ESP's GPT partition GUID from a device path (UEFI 2.10 10.3.5.1)
 * and LoaderDevicePartUUID's text. Expected values are written out by
 * hand: the GUID is the ESP type GUID, whose on-disk byte order is in the
 * UEFI spec (5.3.3, table 5-7). */
#include "mb/devpath.h"
#include "testlib.h"

/* C12A7328-F81F-11D2-BA4B-00A0C93EC93B as stored (first three fields
 * little-endian). */
static const uint8_t esp_guid[16] = { 0x28, 0x73, 0x2a, 0xc1, 0x1f, 0xf8, 0xd2, 0x11,
                                      0xba, 0x4b, 0x00, 0xa0, 0xc9, 0x3e, 0xc9, 0x3b };
static const char esp_text[] = "C12A7328-F81F-11D2-BA4B-00A0C93EC93B";

static const uint8_t pciroot[12] = { 0x02, 0x01, 12, 0, 0xd0, 0x41, 0x03, 0x0a, 0, 0, 0, 0 };
static const uint8_t pci[6] = { 0x01, 0x01, 6, 0, 0, 4 };
static const uint8_t end[4] = { 0x7f, 0xff, 4, 0 };

/* A hard drive media node: partition 1 at LBA 2048, format and signature
 * type as given. */
static size_t hd(uint8_t *p, uint8_t format, uint8_t sig_type, const uint8_t sig[16]) {
        memset(p, 0, 42);
        p[0] = 0x04, p[1] = 0x01, p[2] = 42;
        p[4] = 1;
        p[9] = 0x08;                    /* start 0x800 */
        p[17] = 0x40;                   /* size 0x4000 */
        memcpy(p + 24, sig, 16);
        p[40] = format, p[41] = sig_type;
        return 42;
}

static size_t cat(uint8_t *p, size_t n, const uint8_t *node, size_t len) {
        memcpy(p + n, node, len);
        return n + len;
}

/* PciRoot(0)/Pci(4,0)/<node>/End */
static size_t path_with(uint8_t *p, const uint8_t *node, size_t len) {
        size_t n = cat(p, 0, pciroot, sizeof(pciroot));
        n = cat(p, n, pci, sizeof(pci));
        n = cat(p, n, node, len);
        return cat(p, n, end, sizeof(end));
}

TEST(gpt_node_found) {
        uint8_t node[42], p[128], got[16];
        size_t n = path_with(p, node, hd(node, 2, 2, esp_guid));

        CHECK_EQ_INT(mb_devpath_gpt_partuuid(p, n, got), MB_OK);
        CHECK(memcmp(got, esp_guid, 16) == 0);
        /* The end node is where the walk stops: bytes after it are not read. */
        memset(p + n, 0, 3);
        CHECK_EQ_INT(mb_devpath_gpt_partuuid(p, n + 3, got), MB_OK);
}

TEST(mbr_and_odd_nodes_skipped) {
        uint8_t mbr[42], bad[42], gpt[42], p[256], got[16];
        size_t n;

        memset(got, 0xEE, sizeof(got));
        /* An MBR partition: no GUID to give. */
        n = path_with(p, mbr, hd(mbr, 1, 1, esp_guid));
        CHECK_EQ_INT(mb_devpath_gpt_partuuid(p, n, got), MB_ERR_NOTFOUND);
        /* GPT format with an MBR signature type names no GUID either. */
        n = path_with(p, bad, hd(bad, 2, 1, esp_guid));
        CHECK_EQ_INT(mb_devpath_gpt_partuuid(p, n, got), MB_ERR_NOTFOUND);
        CHECK(got[0] == 0xEE);
        /* A hard drive node too short for its fields is not read. */
        hd(bad, 2, 2, esp_guid);
        bad[2] = 40;
        n = path_with(p, bad, 40);
        CHECK_EQ_INT(mb_devpath_gpt_partuuid(p, n, got), MB_ERR_NOTFOUND);
        CHECK(got[0] == 0xEE);
        /* The first GPT node after skipped ones. */
        n = cat(p, 0, mbr, hd(mbr, 1, 1, esp_guid));
        n = cat(p, n, gpt, hd(gpt, 2, 2, esp_guid));
        n = cat(p, n, end, sizeof(end));
        CHECK_EQ_INT(mb_devpath_gpt_partuuid(p, n, got), MB_OK);
        CHECK(memcmp(got, esp_guid, 16) == 0);
}

TEST(no_hd_node) {
        uint8_t p[64], got[16];
        size_t n = cat(p, 0, pciroot, sizeof(pciroot));

        n = cat(p, n, end, sizeof(end));
        CHECK_EQ_INT(mb_devpath_gpt_partuuid(p, n, got), MB_ERR_NOTFOUND);
        /* A GPT node after the end-entire node is not part of the path. */
        uint8_t node[42];
        n = cat(p, 0, end, sizeof(end));
        n = cat(p, n, node, hd(node, 2, 2, esp_guid));
        CHECK_EQ_INT(mb_devpath_gpt_partuuid(p, n, got), MB_ERR_NOTFOUND);
}

TEST(malformed_paths) {
        uint8_t node[42], p[128], got[16];
        size_t n = path_with(p, node, hd(node, 2, 2, esp_guid));

        memset(got, 0xEE, sizeof(got));
        /* No end node: every cut before the GPT node's last byte. */
        for (size_t cut = 0; cut < sizeof(pciroot) + sizeof(pci) + 42; cut++)
                CHECK_EQ_INT(mb_devpath_gpt_partuuid(p, cut, got), MB_ERR_TRUNCATED);
        CHECK_EQ_INT(mb_devpath_gpt_partuuid(NULL, 0, got), MB_ERR_TRUNCATED);
        /* A node length below the header's size would never advance. */
        p[2] = 3;
        CHECK_EQ_INT(mb_devpath_gpt_partuuid(p, n, got), MB_ERR_INVALID);
        p[2] = 0;
        CHECK_EQ_INT(mb_devpath_gpt_partuuid(p, n, got), MB_ERR_INVALID);
        /* A length that runs past the buffer. */
        p[2] = 0xff, p[3] = 0xff;
        CHECK_EQ_INT(mb_devpath_gpt_partuuid(p, n, got), MB_ERR_TRUNCATED);
        CHECK(got[0] == 0xEE);
}

TEST(partuuid_var_text) {
        uint8_t v[MB_PARTUUID_VAR_SIZE], want[MB_PARTUUID_VAR_SIZE];

        CHECK_EQ_INT(sizeof(esp_text) * 2, MB_PARTUUID_VAR_SIZE);
        for (size_t i = 0; i < sizeof(esp_text); i++)      /* the NUL included */
                want[2 * i] = (uint8_t) esp_text[i], want[2 * i + 1] = 0;
        memset(v, 0xEE, sizeof(v));
        mb_devpath_partuuid_var(esp_guid, v);
        CHECK(memcmp(v, want, sizeof(v)) == 0);
}

int main(void) {
        RUN(gpt_node_found);
        RUN(mbr_and_odd_nodes_skipped);
        RUN(no_hd_node);
        RUN(malformed_paths);
        RUN(partuuid_var_text);
        TL_EXIT();
}
