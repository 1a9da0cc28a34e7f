/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * IMA's binary measurement list (src/ima.c): hand-built entries in the
 * kernel's layout (Documentation/security/IMA-templates.rst), every
 * truncation, malformed fields, the legacy template, and the digest each
 * bank extends. The expected digests are FIPS 180-4 test vectors over the
 * bytes built here ("abc"), not values mshim computed.
 */
#include "testlib.h"
#include "mb/ima.h"

typedef struct buf {
        uint8_t b[4096];
        size_t n;
} buf;

static void put(buf *b, const void *p, size_t n) {
        memcpy(b->b + b->n, p, n);
        b->n += n;
}
static void put32(buf *b, uint32_t v) {
        uint8_t le[4] = { (uint8_t) v, (uint8_t) (v >> 8), (uint8_t) (v >> 16), (uint8_t) (v >> 24) };
        put(b, le, 4);
}
static void field(buf *b, const void *p, size_t n) {
        put32(b, (uint32_t) n);
        put(b, p, n);
}

/* An entry of template name with data (template digest: zeros when
 * violation, else 20 bytes of 0x11: the parser does not check it). */
static void entry(buf *b, uint32_t pcr, const char *name, const buf *data, int violation) {
        uint8_t t[20];

        memset(t, violation ? 0 : 0x11, sizeof(t));
        put32(b, pcr);
        put(b, t, sizeof(t));
        field(b, name, strlen(name));
        field(b, data->b, data->n);
}

/* ima-ng data: d-ng "sha256:" NUL + 32 bytes of fill, n-ng path + NUL. */
static void ng_data(buf *d, const char *path, uint8_t fill, int sig) {
        uint8_t dng[7 + 1 + 32];

        memcpy(dng, "sha256:", 7);
        dng[7] = 0;
        memset(dng + 8, fill, 32);
        field(d, dng, sizeof(dng));
        field(d, path, strlen(path) + 1);
        if (sig)
                field(d, "\x03\x02", 2);
}

static void two_entries(buf *b) {
        buf d1 = { .n = 0 }, d2 = { .n = 0 };

        ng_data(&d1, "boot_aggregate", 0xaa, 0);
        ng_data(&d2, "/usr/bin/true", 0xbb, 1);
        entry(b, 10, "ima-ng", &d1, 0);
        entry(b, 10, "ima-sig", &d2, 1);
}

TEST(parses_ng_and_sig) {
        buf b = { .n = 0 };
        mb_ima_log log;
        mb_ima_entry e;

        two_entries(&b);
        mb_ima_begin(&log, b.b, b.n);
        CHECK_EQ_INT(mb_ima_next(&log, &e), MB_OK);
        CHECK_EQ_INT(e.number, 1);
        CHECK_EQ_INT(e.pcr, 10);
        CHECK_EQ_INT(e.kind, MB_IMA_NG);
        CHECK(!e.violation);
        CHECK(mb_str_eq(e.digest_alg, "sha256"));
        CHECK_EQ_INT(e.digest_size, 32);
        CHECK(e.digest[0] == 0xaa && e.digest[31] == 0xaa);
        CHECK(mb_str_eq(e.path, "boot_aggregate"));
        CHECK_EQ_INT(mb_ima_next(&log, &e), MB_OK);
        CHECK_EQ_INT(e.number, 2);
        CHECK_EQ_INT(e.kind, MB_IMA_SIG);
        CHECK(e.violation);
        CHECK(mb_str_eq(e.path, "/usr/bin/true"));
        CHECK_EQ_INT(e.sig_size, 2);
        CHECK(e.sig[0] == 3 && e.sig[1] == 2);
        CHECK_EQ_INT(mb_ima_next(&log, &e), MB_END);
}

/* Every proper prefix that cuts an entry is truncated; ends of entries are
 * clean ends. */
TEST(every_truncation) {
        buf b = { .n = 0 };
        mb_ima_log log;
        mb_ima_entry e, keep = { .number = 77 };
        size_t first_end;

        two_entries(&b);
        mb_ima_begin(&log, b.b, b.n);
        CHECK_EQ_INT(mb_ima_next(&log, &e), MB_OK);
        first_end = log.off;
        for (size_t n = 0; n < b.n; n++) {
                mb_err r;
                mb_ima_begin(&log, b.b, n);
                while ((r = mb_ima_next(&log, &e)) == MB_OK)
                        ;
                CHECK_EQ_INT(r, n == 0 || n == first_end ? MB_END : MB_ERR_TRUNCATED);
        }
        /* A failure leaves the entry and the position alone. */
        mb_ima_begin(&log, b.b, first_end + 3);
        CHECK_EQ_INT(mb_ima_next(&log, &e), MB_OK);
        CHECK_EQ_INT(mb_ima_next(&log, &keep), MB_ERR_TRUNCATED);
        CHECK_EQ_INT(keep.number, 77);
        CHECK_EQ_INT(log.off, first_end);
}

TEST(malformed_fields) {
        static const struct {
                const char *name;
                const char *d;          /* the d-ng field's bytes */
                size_t dn;
                int fields;             /* 2 or 3, or 0: a field's length past the data */
                mb_err want;
        } cases[] = {
                { "ima-ng", "sha256", 6, 2, MB_ERR_INVALID },           /* no ':' */
                { "ima-ng", ":\0x", 3, 2, MB_ERR_INVALID },             /* no algorithm */
                { "ima-ng", "sha1:x", 6, 2, MB_ERR_INVALID },           /* no NUL after ':' */
                { "ima-ng", "sha1:", 6, 2, MB_ERR_INVALID },            /* no digest */
                { "ima-ng", "sha1:\0x", 7, 3, MB_ERR_INVALID },         /* a third field */
                { "ima-sig", "sha1:\0x", 7, 2, MB_ERR_INVALID },        /* no sig field */
                { "ima-ng", "sha1:\0x", 7, 0, MB_ERR_INVALID },         /* a length past the data */
                { "ima-buf", "anything", 8, 0, MB_OK },                 /* not looked into */
        };
        for (size_t i = 0; i < MB_ARRAY_SIZE(cases); i++) {
                buf b = { .n = 0 }, d = { .n = 0 };
                mb_ima_log log;
                mb_ima_entry e;

                field(&d, cases[i].d, cases[i].dn);
                field(&d, "/x", 3);
                if (cases[i].fields == 3)
                        field(&d, "", 0);
                if (cases[i].fields == 0)
                        put32(&d, 1000);
                entry(&b, 10, cases[i].name, &d, 0);
                mb_ima_begin(&log, b.b, b.n);
                CHECK_EQ_INT(mb_ima_next(&log, &e), cases[i].want);
        }
}

TEST(names_and_sizes) {
        buf b = { .n = 0 }, d = { .n = 0 };
        mb_ima_log log;
        mb_ima_entry e;
        char longname[300];

        /* The legacy template has no data length: refused, not misread. */
        ng_data(&d, "/x", 1, 0);
        entry(&b, 10, "ima", &d, 0);
        mb_ima_begin(&log, b.b, b.n);
        CHECK_EQ_INT(mb_ima_next(&log, &e), MB_ERR_UNSUPPORTED);
        /* An empty name, a name over 255 bytes. */
        b.n = 0;
        entry(&b, 10, "", &d, 0);
        mb_ima_begin(&log, b.b, b.n);
        CHECK_EQ_INT(mb_ima_next(&log, &e), MB_ERR_INVALID);
        memset(longname, 'a', 256);
        longname[256] = 0;
        b.n = 0;
        entry(&b, 10, longname, &d, 0);
        mb_ima_begin(&log, b.b, b.n);
        CHECK_EQ_INT(mb_ima_next(&log, &e), MB_ERR_TOOLONG);
        /* A data length of 4 GiB - 1 is never trusted. */
        b.n = 0;
        put32(&b, 10);
        put(&b, "xxxxxxxxxxxxxxxxxxxx", 20);
        field(&b, "ima-ng", 6);
        put32(&b, 0xffffffffu);
        mb_ima_begin(&log, b.b, b.n);
        CHECK_EQ_INT(mb_ima_next(&log, &e), MB_ERR_TRUNCATED);
}

/* The digest a bank extends: the hash of the template data (FIPS 180-4's
 * "abc" vectors), all ones for a violation whatever the data. */
TEST(extend_digest) {
        static const uint8_t abc_sha1[20] = { 0xa9, 0x99, 0x3e, 0x36, 0x47, 0x06, 0x81, 0x6a, 0xba, 0x3e,
                                              0x25, 0x71, 0x78, 0x50, 0xc2, 0x6c, 0x9c, 0xd0, 0xd8, 0x9d };
        static const uint8_t abc_sha256[32] = { 0xba, 0x78, 0x16, 0xbf, 0x8f, 0x01, 0xcf, 0xea, 0x41, 0x41, 0x40,
                                                0xde, 0x5d, 0xae, 0x22, 0x23, 0xb0, 0x03, 0x61, 0xa3, 0x96, 0x17,
                                                0x7a, 0x9c, 0xb4, 0x10, 0xff, 0x61, 0xf2, 0x00, 0x15, 0xad };
        mb_ima_entry e = { .data = (const uint8_t *) "abc", .data_size = 3 };
        uint8_t d[64], ones[32];

        CHECK_EQ_INT(mb_ima_extend_digest(&e, MB_ALG_SHA1, d), MB_OK);
        CHECK(memcmp(d, abc_sha1, 20) == 0);
        CHECK_EQ_INT(mb_ima_extend_digest(&e, MB_ALG_SHA256, d), MB_OK);
        CHECK(memcmp(d, abc_sha256, 32) == 0);
        CHECK_EQ_INT(mb_ima_extend_digest(&e, 0x1234, d), MB_ERR_UNSUPPORTED);
        e.violation = true;
        memset(ones, 0xff, sizeof(ones));
        CHECK_EQ_INT(mb_ima_extend_digest(&e, MB_ALG_SHA256, d), MB_OK);
        CHECK(memcmp(d, ones, 32) == 0);
}

int main(void) {
        RUN(parses_ng_and_sig);
        RUN(every_truncation);
        RUN(malformed_fields);
        RUN(names_and_sizes);
        RUN(extend_digest);
        TL_EXIT();
}
