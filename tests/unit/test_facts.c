/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * What booted (src/facts.c) on the synthetic mshim boot of
 * tests/cli/attest_boot.py (kept in the fuzz corpus: mshim-boot-synthetic
 * and its disclosure variant, the same digests with the SecureBoot byte
 * and the command line edited). Expected values are the fixture's inputs,
 * hashed here with OpenSSL, never mshim's own output.
 */
#include <openssl/evp.h>
#include "testlib.h"
#include "mb/facts.h"

#define GOOD "tests/fuzz/corpus/facts/mshim-boot-synthetic.bin"
#define DISCLOSED "tests/fuzz/corpus/facts/mshim-boot-disclosed.bin"

static void sha256(const void *p, size_t n, uint8_t out[32]) {
        EVP_Digest(p, n, out, NULL, EVP_sha256(), NULL);
}

static void repeat(const char *s, int times, uint8_t out[32]) {
        char buf[256] = "";
        for (int i = 0; i < times; i++)
                strcat(buf, s);
        sha256(buf, strlen(buf), out);
}

static mb_facts *collect(const char *path, uint32_t quoted, uint8_t **ret_buf) {
        size_t n = 0;
        uint8_t *b = tl_read_file(path, &n);
        mb_facts *f = malloc(sizeof(*f));

        CHECK(b != NULL);
        CHECK(f != NULL);
        if (!b || !f || mb_facts_collect(b, n, quoted, f) != MB_OK) {
                CHECK(!"mb_facts_collect");
                free(b);
                free(f);
                return NULL;
        }
        *ret_buf = b;
        return f;
}

TEST(secure_boot_keys_and_authority) {
        /* attest_boot.py when the corpus file was made: keys = "PK contents " * 3, "KEK contents " * 5,
         * "db contents " * 7, dbx empty; owner 77fa9abd-0359-4d32-bd60-28f4e78f784b */
        static const uint8_t owner[16] = { 0xbd, 0x9a, 0xfa, 0x77, 0x59, 0x03, 0x32, 0x4d,
                                           0xbd, 0x60, 0x28, 0xf4, 0xe7, 0x8f, 0x78, 0x4b };
        uint8_t *b = NULL, want[32], got[32];
        mb_facts *f = collect(GOOD, 0xffffffu, &b);

        if (!f)
                return;
        CHECK_EQ_INT(f->secure_boot, 1);
        repeat("PK contents ", 3, want);
        sha256(f->key[MB_FACTS_PK].p, f->key[MB_FACTS_PK].size, got);
        CHECK(f->have_key[MB_FACTS_PK] && !memcmp(got, want, 32));
        repeat("KEK contents ", 5, want);
        sha256(f->key[MB_FACTS_KEK].p, f->key[MB_FACTS_KEK].size, got);
        CHECK(f->have_key[MB_FACTS_KEK] && !memcmp(got, want, 32));
        repeat("db contents ", 7, want);
        sha256(f->key[MB_FACTS_DB].p, f->key[MB_FACTS_DB].size, got);
        CHECK(f->have_key[MB_FACTS_DB] && !memcmp(got, want, 32));
        CHECK(f->have_key[MB_FACTS_DBX] && f->key[MB_FACTS_DBX].size == 0);
        CHECK_EQ_INT(f->n_auth, 1);
        CHECK(f->auth[0].owner.size == 16 && !memcmp(f->auth[0].owner.p, owner, 16));
        /* the signature is a certificate's DER: a SEQUENCE */
        CHECK(f->auth[0].sig.size > 100 && f->auth[0].sig.p[0] == 0x30);
        free(f);
        free(b);
}

TEST(events_totp_and_initrd) {
        uint8_t *b = NULL, initrd[10240], want[32];
        mb_facts *f = collect(GOOD, 0xffffffu, &b);
        size_t per[24] = { 0 }, unbound4 = 0;

        if (!f)
                return;
        for (size_t i = 0; i < sizeof(initrd); i++)
                initrd[i] = (uint8_t) i;
        sha256(initrd, sizeof(initrd), want);
        /* PCR 4: separator, action, 2 images; 5: separator, loader.conf,
         * ExitBootServices; 9: the initrd; 12: command line, TOTP initrd,
         * fence */
        for (size_t i = 0; i < f->n_ev; i++) {
                per[f->ev[i].pcr]++;
                unbound4 += f->ev[i].pcr == 4 && !f->ev[i].bound;
                CHECK(f->ev[i].bound || !f->ev[i].data.p);
        }
        CHECK_EQ_INT(f->n_ev, 11);
        CHECK(per[4] == 4 && per[5] == 3 && per[9] == 1 && per[12] == 3);
        CHECK_EQ_INT(unbound4, 2);
        CHECK(f->totp_fence);
        CHECK(f->have_initrd && f->initrd_size == sizeof(initrd) && !memcmp(f->initrd_sha256.p, want, 32));
        free(f);
        free(b);
        /* PCR 12 not quoted: none of its facts */
        f = collect(GOOD, 0xffffffu & ~(1u << 12), &b);
        if (!f)
                return;
        CHECK(!f->totp_fence && !f->have_initrd);
        for (size_t i = 0; i < f->n_ev; i++)
                CHECK(f->ev[i].pcr != 12);
        free(f);
        free(b);
}

TEST(disclosure_edited_data_is_not_read) {
        uint8_t *b = NULL;
        mb_facts *f = collect(DISCLOSED, 0xffffffu, &b);

        if (!f)
                return;
        CHECK_EQ_INT(f->secure_boot, -1);
        for (size_t i = 0; i < f->n_ev; i++)
                if (f->ev[i].pcr == 12 && f->ev[i].type == MB_EV_IPL)
                        CHECK(!f->ev[i].bound && !f->ev[i].data.p);
        free(f);
        free(b);
}

int main(void) {
        RUN(secure_boot_keys_and_authority);
        RUN(events_totp_and_initrd);
        RUN(disclosure_edited_data_is_not_read);
        TL_EXIT();
}
