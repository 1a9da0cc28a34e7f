/* SPDX-License-Identifier: BSD-2-Clause */
/* SHA-1/256/384/512 and SM3: FIPS 180-4 and GB/T 32905-2016 example
 * vectors, then random inputs fed in random chunks and compared with
 * OpenSSL (EVP_sm3 for SM3). */
#include <openssl/evp.h>

#include "mb/sha.h"
#include "testlib.h"

static const uint16_t algs[] = { MB_ALG_SHA1, MB_ALG_SHA256, MB_ALG_SHA384, MB_ALG_SHA512, MB_ALG_SM3_256 };

static const EVP_MD *evp_md(uint16_t alg) {
        switch (alg) {
        case MB_ALG_SHA1: return EVP_sha1();
        case MB_ALG_SHA256: return EVP_sha256();
        case MB_ALG_SHA384: return EVP_sha384();
        case MB_ALG_SM3_256: return EVP_sm3();
        default: return EVP_sha512();
        }
}

static void hex(const uint8_t *d, size_t n, char *out) {
        for (size_t i = 0; i < n; i++)
                sprintf(out + 2 * i, "%02x", d[i]);
}

static int check_vector(uint16_t alg, const void *msg, size_t len, const char *want) {
        uint8_t d[MB_HASH_MAX];
        char got[2 * MB_HASH_MAX + 1];

        if (mb_hash_buf(alg, msg, len, d) != MB_OK)
                return 0;
        hex(d, mb_hash_size(alg), got);
        if (strcmp(got, want) != 0) {
                fprintf(stderr, "  %s: got %s\n  want %s\n", mb_hash_name(alg), got, want);
                return 0;
        }
        return 1;
}

#define MSG448 "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"
#define MSG896 "abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmnoijklmnopjklmnopqklmnopqrlmnopqrsmnopqrstnopqrstu"

/* FIPS 180-4 example computations (NIST CSRC "Examples with Intermediate
 * Values"): "abc", the two-block 448/896-bit messages. */
TEST(fips_short_vectors) {
        CHECK(check_vector(MB_ALG_SHA1, "abc", 3, "a9993e364706816aba3e25717850c26c9cd0d89d"));
        CHECK(check_vector(MB_ALG_SHA1, MSG448, 56, "84983e441c3bd26ebaae4aa1f95129e5e54670f1"));
        CHECK(check_vector(MB_ALG_SHA256, "abc", 3,
                           "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"));
        CHECK(check_vector(MB_ALG_SHA256, MSG448, 56,
                           "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"));
        CHECK(check_vector(MB_ALG_SHA384, "abc", 3,
                           "cb00753f45a35e8bb5a03d699ac65007272c32ab0eded1631a8b605a43ff5bed"
                           "8086072ba1e7cc2358baeca134c825a7"));
        CHECK(check_vector(MB_ALG_SHA384, MSG896, 112,
                           "09330c33f71147e83d192fc782cd1b4753111b173b3b05d22fa08086e3b0f712"
                           "fcc7c71a557e2db966c3e9fa91746039"));
        CHECK(check_vector(MB_ALG_SHA512, "abc", 3,
                           "ddaf35a193617abacc417349ae20413112e6fa4e89a97ea20a9eeee64b55d39a"
                           "2192992a274fc1a836ba3c23a3feebbd454d4423643ce80e2a9ac94fa54ca49f"));
        CHECK(check_vector(MB_ALG_SHA512, MSG896, 112,
                           "8e959b75dae313da8cf4f72814fc143f8f7779c6eb9f7fa17299aeadb6889018"
                           "501d289e4900f7e4331b99dec4b5433ac7d329eeb6dd26545e96e55b874be909"));
        /* The empty message. */
        CHECK(check_vector(MB_ALG_SHA256, "", 0,
                           "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"));
}

/* GB/T 32905-2016 Appendix A: "abc" and "abcd" x 16 (one full block, so
 * the padding takes a second). */
TEST(sm3_vectors) {
        CHECK(check_vector(MB_ALG_SM3_256, "abc", 3,
                           "66c7f0f462eeedd9d1f2d46bdc10e4e24167c4875cf2f7a2297da02b8f4ba8e0"));
        CHECK(check_vector(MB_ALG_SM3_256, "abcdabcdabcdabcdabcdabcdabcdabcdabcdabcdabcdabcdabcdabcdabcdabcd", 64,
                           "debe9ff92275b8a138604889c18e5a4d6fdb70e5387e5765293dcba39c0c5732"));
}

/* One million 'a', fed in 1000-byte pieces to exercise the streaming path. */
TEST(fips_million_a) {
        static const char *want[] = {
                "34aa973cd4c4daa4f61eeb2bdbad27316534016f",
                "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0",
                "9d0e1809716474cb086e834e310a4a1ced149e9c00f248527972cec5704c2a5b"
                "07b8b3dc38ecc4ebae97ddd87f3d8985",
                "e718483d0ce769644e2e42c7bc15b4638e1f98b13b2044285632a803afa973eb"
                "de0ff244877ea60a4cb0432ce577c31beb009c5c2c49aa2e4eadb217ad8cc09b",
                /* SM3: `openssl dgst -sm3` of the same input. */
                "c8aaf89429554029e231941a2acc0ad61ff2a5acd8fadd25847a3a732b3b02c3",
        };
        uint8_t chunk[1000];

        memset(chunk, 'a', sizeof(chunk));
        for (size_t i = 0; i < MB_ARRAY_SIZE(algs); i++) {
                mb_hash h;
                uint8_t d[MB_HASH_MAX];
                char got[2 * MB_HASH_MAX + 1];

                CHECK(mb_hash_init(&h, algs[i]) == MB_OK);
                for (int k = 0; k < 1000; k++)
                        mb_hash_update(&h, chunk, sizeof(chunk));
                mb_hash_final(&h, d);
                hex(d, mb_hash_size(algs[i]), got);
                CHECK(strcmp(got, want[i]) == 0);
        }
}

static void openssl_digest(uint16_t alg, const uint8_t *p, size_t n, uint8_t *out) {
        unsigned int len = 0;

        if (!EVP_Digest(p, n, out, &len, evp_md(alg), NULL) || len != mb_hash_size(alg))
                abort();
}

/* Every length around the padding boundaries (55/56, 111/112, 63/64,
 * 127/128 ...), one-shot. */
TEST(all_short_lengths_vs_openssl) {
        uint8_t buf[300];

        for (size_t i = 0; i < sizeof(buf); i++)
                buf[i] = (uint8_t) (i * 7 + 3);
        for (size_t a = 0; a < MB_ARRAY_SIZE(algs); a++)
                for (size_t n = 0; n <= sizeof(buf); n++) {
                        uint8_t want[MB_HASH_MAX], got[MB_HASH_MAX];

                        openssl_digest(algs[a], buf, n, want);
                        CHECK(mb_hash_buf(algs[a], buf, n, got) == MB_OK);
                        CHECK(memcmp(want, got, mb_hash_size(algs[a])) == 0);
                }
}

/* 2000 random messages of 0..5000 bytes, each hashed by every algorithm in
 * random-sized chunks (including empty ones), against OpenSSL. */
TEST(random_chunked_vs_openssl) {
        static uint8_t buf[5001];
        int mismatches = 0;

        srand(1);
        for (int iter = 0; iter < 2000; iter++) {
                size_t len = (size_t) rand() % 5001;

                for (size_t i = 0; i < len; i++)
                        buf[i] = (uint8_t) rand();
                for (size_t a = 0; a < MB_ARRAY_SIZE(algs); a++) {
                        uint8_t want[MB_HASH_MAX], got[MB_HASH_MAX];
                        mb_hash h;
                        size_t off = 0;

                        openssl_digest(algs[a], buf, len, want);
                        CHECK(mb_hash_init(&h, algs[a]) == MB_OK);
                        while (off < len) {
                                size_t n = (size_t) rand() % 300;

                                if (n > len - off)
                                        n = len - off;
                                mb_hash_update(&h, buf + off, n);
                                off += n;
                        }
                        mb_hash_final(&h, got);
                        if (memcmp(want, got, mb_hash_size(algs[a])) != 0)
                                mismatches++;
                }
        }
        CHECK_EQ_INT(mismatches, 0);
}

TEST(names_and_sizes) {
        CHECK_EQ_INT(mb_hash_size(MB_ALG_SHA1), 20);
        CHECK_EQ_INT(mb_hash_size(MB_ALG_SHA256), 32);
        CHECK_EQ_INT(mb_hash_size(MB_ALG_SHA384), 48);
        CHECK_EQ_INT(mb_hash_size(MB_ALG_SHA512), 64);
        CHECK_EQ_INT(mb_hash_size(MB_ALG_SM3_256), 32);
        CHECK_EQ_INT(mb_hash_size(0x9999), 0);

        CHECK(strcmp(mb_hash_name(MB_ALG_SHA1), "sha1") == 0);
        CHECK(strcmp(mb_hash_name(MB_ALG_SHA256), "sha256") == 0);
        CHECK(strcmp(mb_hash_name(MB_ALG_SHA384), "sha384") == 0);
        CHECK(strcmp(mb_hash_name(MB_ALG_SHA512), "sha512") == 0);
        CHECK(strcmp(mb_hash_name(MB_ALG_SM3_256), "sm3_256") == 0);
        CHECK(mb_hash_name(0x9999) == NULL);

        CHECK_EQ_INT(mb_hash_alg_by_name("sha1"), MB_ALG_SHA1);
        CHECK_EQ_INT(mb_hash_alg_by_name("sha256"), MB_ALG_SHA256);
        CHECK_EQ_INT(mb_hash_alg_by_name("sha384"), MB_ALG_SHA384);
        CHECK_EQ_INT(mb_hash_alg_by_name("sha512"), MB_ALG_SHA512);
        CHECK_EQ_INT(mb_hash_alg_by_name("sm3_256"), MB_ALG_SM3_256);
        CHECK_EQ_INT(mb_hash_alg_by_name("sha"), 0);
        CHECK_EQ_INT(mb_hash_alg_by_name("sha2560"), 0);
        CHECK_EQ_INT(mb_hash_alg_by_name("SHA256"), 0);
        CHECK_EQ_INT(mb_hash_alg_by_name(""), 0);
        CHECK_EQ_INT(mb_hash_alg_by_name(NULL), 0);
}

TEST(unsupported_algs) {
        mb_hash h;
        uint8_t d[MB_HASH_MAX];

        CHECK_EQ_INT(mb_hash_init(&h, 0), MB_ERR_UNSUPPORTED);
        CHECK_EQ_INT(mb_hash_init(&h, 0x0010), MB_ERR_UNSUPPORTED); /* TPM_ALG_NULL */
        CHECK_EQ_INT(mb_hash_buf(0x0027, "abc", 3, d), MB_ERR_UNSUPPORTED); /* SHA3-256 */
}

int main(void) {
        RUN(fips_short_vectors);
        RUN(sm3_vectors);
        RUN(fips_million_a);
        RUN(all_short_lengths_vs_openssl);
        RUN(random_chunked_vs_openssl);
        RUN(names_and_sizes);
        RUN(unsupported_algs);
        TL_EXIT();
}
