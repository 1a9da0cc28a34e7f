/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The sealed-file and approval codecs (src/sealfile.c). The expected texts
 * are written out by hand here from docs/SEALING.md's key tables, not
 * produced by the writer; each rejection is one mutation of a valid text.
 * DER signatures are made and taken apart by OpenSSL, the oracle for
 * mb_approval_sig_rs.
 */
#include <openssl/bn.h>
#include <openssl/ecdsa.h>
#include <openssl/evp.h>
#include "testlib.h"
#include "mb/sealfile.h"
#include "mb/sha.h"

#define H32(x) x x x x x x x x x x x x x x x x x x x x x x x x x x x x x x x x
#define V64(a, b) H32(a) H32(b)

static const char SIGNED[] =
        "mshim-sealed 1\n"
        "mode signed\n"
        "pin yes\n"
        "bank sha256\n"
        "pcrs 4,7,9,12\n"
        "srk-public 0003aabbcc\n"
        "policy-key 0002cafe\n"
        "nv-index 0x01804d53\n"
        "nv-name 000b" H32("11") "\n"
        "public 0001ff\n"
        "private 000411223344\n";

static const char LITERAL[] =
        "mshim-sealed 1\n"
        "mode literal\n"
        "pin no\n"
        "bank sha256\n"
        "pcrs 4,7\n"
        "srk-public 0003aabbcc\n"
        "state " V64("01", "02") "\n"
        "state " V64("03", "04") "\n"
        "public 0001ff\n"
        "private 000411223344\n";

static const char APPROVAL[] =
        "mshim-approval 1\n"
        "epoch 5\n"
        "bank sha256\n"
        "pcrs 4,7\n"
        "values " V64("05", "06") "\n"
        "policy " H32("ab") "\n"
        "signature 3006020101020102\n"
        "label Debian 6.1.0-13-amd64 (predicted)\n"
        "entry-id debian-6.1.0-13-amd64\n"
        "created 2026-12-03T19:00:00Z\n";

static uint8_t states[MB_SEAL_STATE_MAX * MB_SEAL_VALUES_MAX];

static mb_err parse_sealed(const char *text, mb_sealed *ret, size_t *line) {
        *line = 999;
        return mb_sealed_parse(text, strlen(text), states, sizeof(states), ret, line);
}

static mb_err parse_approval(const char *text, mb_approval *ret, size_t *line) {
        *line = 999;
        return mb_approval_parse(text, strlen(text), ret, line);
}

/* text with the first occurrence of from replaced by to (heap). */
static char *mutate(const char *text, const char *from, const char *to) {
        const char *at = strstr(text, from);
        size_t n = strlen(text) - strlen(from) + strlen(to) + 1;
        char *out = malloc(n);

        if (!at || !out) {
                fprintf(stderr, "  mutation %s not applicable\n", from);
                abort();
        }
        snprintf(out, n, "%.*s%s%s", (int) (at - text), text, to, at + strlen(from));
        return out;
}

/* A string of n copies of c (heap). */
static char *repeat(char c, size_t n) {
        char *s = malloc(n + 1);

        memset(s, c, n);
        s[n] = '\0';
        return s;
}

static void fill(uint8_t *p, int v, size_t n) {
        memset(p, v, n);
}

TEST(signed_round_trip) {
        static mb_sealed s, back;
        static char out[8192];
        size_t line, len = 0;

        CHECK_EQ_INT(parse_sealed(SIGNED, &s, &line), MB_OK);
        CHECK_EQ_INT(line, 999);        /* untouched on success */
        CHECK_EQ_INT(s.mode, MB_SEAL_SIGNED);
        CHECK(s.pin);
        CHECK_EQ_INT(s.bank, MB_ALG_SHA256);
        CHECK_EQ_INT(s.pcrs, 1u << 4 | 1u << 7 | 1u << 9 | 1u << 12);
        CHECK_EQ_INT(s.fence, 0);       /* a file sealed before the fence */
        CHECK(s.srk_public_size == 5 && memcmp(s.srk_public, "\x00\x03\xaa\xbb\xcc", 5) == 0);
        CHECK(s.policy_key_size == 4 && memcmp(s.policy_key, "\x00\x02\xca\xfe", 4) == 0);
        CHECK_EQ_INT(s.nv_index, 0x01804D53);
        CHECK(s.nv_name_size == 34 && s.nv_name[1] == 0x0b && s.nv_name[33] == 0x11);
        CHECK(s.n_states == 0 && s.states == NULL);
        CHECK(s.public_size == 3 && s.public_[2] == 0xff);
        CHECK(s.private_size == 6 && memcmp(s.private_, "\x00\x04\x11\x22\x33\x44", 6) == 0);
        CHECK_EQ_INT(mb_sealed_write(&s, out, sizeof(out), &len), MB_OK);
        CHECK_EQ_INT(len, strlen(SIGNED));
        CHECK(strcmp(out, SIGNED) == 0);
        CHECK_EQ_INT(parse_sealed(out, &back, &line), MB_OK);
        CHECK(memcmp(&s, &back, sizeof(s)) == 0);
        /* Too small a buffer: refused, never cut. */
        CHECK_EQ_INT(mb_sealed_write(&s, out, strlen(SIGNED), &len), MB_ERR_NOSPACE);
        CHECK_EQ_INT(mb_sealed_write(&s, out, strlen(SIGNED) + 1, &len), MB_OK);
}

TEST(literal_round_trip) {
        static mb_sealed s, made;
        static char out[8192];
        static uint8_t mine[3 * 64];
        size_t line, len;

        CHECK_EQ_INT(parse_sealed(LITERAL, &s, &line), MB_OK);
        CHECK_EQ_INT(s.mode, MB_SEAL_LITERAL);
        CHECK(!s.pin);
        CHECK_EQ_INT(s.n_states, 2);
        CHECK(s.states == states);
        CHECK(s.states[0] == 1 && s.states[31] == 1 && s.states[32] == 2 && s.states[64] == 3 && s.states[127] == 4);
        CHECK(s.policy_key_size == 0 && s.nv_index == 0 && s.nv_name_size == 0);
        CHECK_EQ_INT(mb_sealed_write(&s, out, sizeof(out), &len), MB_OK);
        CHECK(strcmp(out, LITERAL) == 0);

        /* Built by hand: three states, the writer's text parses back. */
        made = s;
        fill(mine, 0x77, sizeof(mine));
        made.states = mine;
        made.n_states = 3;
        CHECK_EQ_INT(mb_sealed_write(&made, out, sizeof(out), &len), MB_OK);
        CHECK_EQ_INT(parse_sealed(out, &s, &line), MB_OK);
        CHECK(s.n_states == 3 && memcmp(s.states, mine, sizeof(mine)) == 0);
}

TEST(the_most_states) {
        static char text[MB_SEAL_STATE_MAX * 140 + 1024];
        static mb_sealed s;
        char *more;
        size_t line, n = 0;

        n += (size_t) snprintf(text + n, sizeof(text) - n, "mshim-sealed 1\nmode literal\npin no\nbank sha256\n"
                               "pcrs 4,7\nsrk-public 0003aabbcc\npublic 0001ff\nprivate 000411223344\n");
        for (size_t i = 0; i < MB_SEAL_STATE_MAX; i++)
                n += (size_t) snprintf(text + n, sizeof(text) - n, "state %0128zx\n", i);
        CHECK_EQ_INT(parse_sealed(text, &s, &line), MB_OK);
        CHECK_EQ_INT(s.n_states, MB_SEAL_STATE_MAX);
        CHECK(s.states[511 * 64 + 62] == 0x01 && s.states[511 * 64 + 63] == 0xff);
        /* One more: too many. */
        more = mutate(text, "private", "state " V64("00", "00") "\nprivate");
        CHECK_EQ_INT(parse_sealed(more, &s, &line), MB_ERR_TOOLONG);
        CHECK_EQ_INT(line, 8 + MB_SEAL_STATE_MAX + 1);
        /* A caller's buffer for fewer states. */
        CHECK_EQ_INT(mb_sealed_parse(text, strlen(text), states, 10 * 64, &s, &line), MB_ERR_NOSPACE);
        CHECK_EQ_INT(line, 8 + 11);
        free(more);
}

struct mutation {
        const char *from, *to;
        mb_err want;
        size_t line;
};

static void check_mutations(const char *base, const struct mutation *m, size_t n, bool approval) {
        for (size_t i = 0; i < n; i++) {
                char *text = mutate(base, m[i].from, m[i].to);
                static mb_sealed s, s_before;
                static mb_approval a, a_before;
                size_t line;
                mb_err e;

                memset(&s, 0x5a, sizeof(s));
                memset(&a, 0x5a, sizeof(a));
                s_before = s;
                a_before = a;
                e = approval ? parse_approval(text, &a, &line) : parse_sealed(text, &s, &line);
                if (e != m[i].want || line != m[i].line) {
                        fprintf(stderr, "  mutation %zu (%.40s -> %.40s): %s at line %zu, expected %s at line %zu\n", i,
                                m[i].from, m[i].to, mb_strerror(e), line, mb_strerror(m[i].want), m[i].line);
                        tl_case_failed = 1;
                }
                if (m[i].want != MB_OK)
                        CHECK(memcmp(&s, &s_before, sizeof(s)) == 0 && memcmp(&a, &a_before, sizeof(a)) == 0);
                free(text);
        }
}

TEST(sealed_rejections) {
        char *long_blob = repeat('0', 2 * MB_SEAL_BLOB_MAX + 2), *long_line = repeat('0', MB_SEAL_LINE_MAX);
        char blob_line[2 * MB_SEAL_BLOB_MAX + 32], line_line[MB_SEAL_LINE_MAX + 32];
        const struct mutation m[] = {
                { "pin yes\n", "pin yes\ncolour red\n", MB_ERR_INVALID, 4 },          /* unknown key */
                { "pin yes\n", "pin yes\npin yes\n", MB_ERR_INVALID, 4 },             /* repeated key */
                { "pin yes\n", "", MB_ERR_INVALID, 0 },                               /* missing pin */
                { "public 0001ff\n", "", MB_ERR_INVALID, 0 },                         /* missing public */
                { "srk-public 0003aabbcc", "srk-public 0003aabbc", MB_ERR_INVALID, 6 },   /* odd hex */
                { "srk-public 0003aabbcc", "srk-public 0003AABBCC", MB_ERR_INVALID, 6 },  /* upper case */
                { "srk-public 0003aabbcc", "srk-public 0003aabbzz", MB_ERR_INVALID, 6 },
                { "srk-public 0003aabbcc", "srk-public 0x0003aabbcc", MB_ERR_INVALID, 6 },
                { "srk-public 0003aabbcc", blob_line, MB_ERR_TOOLONG, 6 },            /* 1025 bytes */
                { "srk-public 0003aabbcc", line_line, MB_ERR_TOOLONG, 6 },            /* line too long */
                { "srk-public 0003aabbcc", "srk-public 0004aabbcc", MB_ERR_INVALID, 0 },  /* TPM2B size */
                { "srk-public 0003aabbcc", "srk-public 0000", MB_ERR_INVALID, 0 },
                { "mshim-sealed 1", "mshim-sealed 2", MB_ERR_UNSUPPORTED, 1 },
                { "mshim-sealed 1", "mshim-approval 1", MB_ERR_INVALID, 1 },
                { "mshim-sealed 1\n", "", MB_ERR_INVALID, 1 },                        /* no version line */
                { "private 000411223344\n", "private 000411223344", MB_ERR_TRUNCATED, 11 },
                { "mode signed\n", "mode signed\r\n", MB_ERR_INVALID, 2 },
                { "mode signed", "mode\tsigned", MB_ERR_INVALID, 2 },
                { "mode signed", "mode  signed", MB_ERR_INVALID, 2 },
                { "mode signed", "mode signed ", MB_ERR_INVALID, 2 },
                { "mode signed", " mode signed", MB_ERR_INVALID, 2 },
                { "mode signed", "mode", MB_ERR_INVALID, 2 },
                { "mode signed", "mode ", MB_ERR_INVALID, 2 },
                { "mode signed", "Mode signed", MB_ERR_INVALID, 2 },
                { "mode signed", "mode s\xc3\xa9gned", MB_ERR_INVALID, 2 },
                { "mode signed\n", "mode signed\n\n", MB_ERR_INVALID, 3 },            /* empty line */
                { "mode signed\n", "mode signed\n# comment\n", MB_ERR_INVALID, 3 },
                { "mode signed", "mode trusted", MB_ERR_INVALID, 2 },
                { "pin yes", "pin true", MB_ERR_INVALID, 3 },
                { "bank sha256", "bank sha1", MB_ERR_UNSUPPORTED, 4 },
                { "bank sha256", "bank md5", MB_ERR_INVALID, 4 },
                { "bank sha256", "bank sha256sha256sha256", MB_ERR_INVALID, 4 },
                { "pcrs 4,7,9,12", "pcrs 7,4,9,12", MB_ERR_INVALID, 5 },
                { "pcrs 4,7,9,12", "pcrs 4,4,9,12", MB_ERR_INVALID, 5 },
                { "pcrs 4,7,9,12", "pcrs 4,7,9,24", MB_ERR_INVALID, 5 },
                { "pcrs 4,7,9,12", "pcrs 04,7", MB_ERR_INVALID, 5 },
                { "pcrs 4,7,9,12", "pcrs 4,7,", MB_ERR_INVALID, 5 },
                { "pcrs 4,7,9,12", "pcrs ,4", MB_ERR_INVALID, 5 },
                { "pcrs 4,7,9,12", "pcrs 4, 7", MB_ERR_INVALID, 5 },
                { "pcrs 4,7,9,12", "pcrs 99999999999999999999999", MB_ERR_INVALID, 5 },
                { "nv-index 0x01804d53", "nv-index 0x81000001", MB_ERR_INVALID, 8 },   /* not an NV index */
                { "nv-index 0x01804d53", "nv-index 0x1804d53", MB_ERR_INVALID, 8 },
                { "nv-index 0x01804d53", "nv-index 01804d53", MB_ERR_INVALID, 8 },
                { "nv-index 0x01804d53", "nv-index 0x01804D53", MB_ERR_INVALID, 8 },
                { "nv-name 000b", "nv-name 000b00", MB_ERR_INVALID, 0 },              /* 33-byte digest */
                { "nv-name 000b", "nv-name 0004", MB_ERR_INVALID, 0 },                /* SHA-1 alg, 32 bytes */
                { "nv-index 0x01804d53\n", "", MB_ERR_INVALID, 0 },                   /* signed without it */
                { "policy-key 0002cafe\n", "", MB_ERR_INVALID, 0 },
                { "public 0001ff\n", "state " V64("01", "02") "\npublic 0001ff\n", MB_ERR_INVALID, 0 },
        };
        const struct mutation lit[] = {
                { "pin no\n", "pin no\npolicy-key 0002cafe\n", MB_ERR_INVALID, 0 },   /* a signed key */
                { "pin no\n", "pin no\nnv-index 0x01804d53\n", MB_ERR_INVALID, 0 },
                { "state " V64("03", "04") "\n", "", MB_OK, 999 },                  /* one state is enough */
                { "state " V64("01", "02") "\nstate " V64("03", "04") "\n", "", MB_ERR_INVALID, 0 },  /* no state */
                { "state " V64("03", "04"), "state " H32("03"), MB_ERR_INVALID, 8 },  /* differing sizes */
                { "state " V64("01", "02") "\nstate " V64("03", "04"), "state " H32("01") "\nstate " H32("03"),
                  MB_ERR_INVALID, 0 },                                               /* one PCR's worth */
                { "state " V64("01", "02"), "state " V64("01", "02") "0", MB_ERR_INVALID, 7 },
        };

        snprintf(blob_line, sizeof(blob_line), "srk-public %s", long_blob);
        snprintf(line_line, sizeof(line_line), "srk-public %s", long_line);
        check_mutations(SIGNED, m, MB_ARRAY_SIZE(m), false);
        check_mutations(LITERAL, lit, MB_ARRAY_SIZE(lit), false);
        free(long_blob);
        free(long_line);
}

/* The unseal fence: "fence 15" after the selection (docs/SEALING.md). */
TEST(sealed_fence) {
        static mb_sealed s, back;
        static char out[8192];
        char *fenced = mutate(SIGNED, "pcrs 4,7,9,12\n", "pcrs 4,7,9,12\nfence 15\n");
        size_t line = 999, len = 0;
        const struct mutation m[] = {
                { "fence 15", "fence 12", MB_ERR_INVALID, 0 },          /* a selected PCR */
                { "fence 15", "fence 15,15", MB_ERR_INVALID, 6 },
                { "fence 15", "fence 24", MB_ERR_INVALID, 6 },
                { "fence 15", "fence ", MB_ERR_INVALID, 6 },
                { "fence 15\n", "fence 15\nfence 15\n", MB_ERR_INVALID, 7 },  /* repeated */
                { "fence 15", "fence 14,15", MB_OK, 999 },
        };

        CHECK_EQ_INT(parse_sealed(fenced, &s, &line), MB_OK);
        CHECK_EQ_INT(s.fence, 1u << 15);
        CHECK_EQ_INT(mb_sealed_write(&s, out, sizeof(out), &len), MB_OK);
        CHECK(strcmp(out, fenced) == 0);
        CHECK_EQ_INT(parse_sealed(out, &back, &line), MB_OK);
        CHECK(memcmp(&s, &back, sizeof(s)) == 0);
        s.fence = 1u << 4;
        CHECK_EQ_INT(mb_sealed_write(&s, out, sizeof(out), &len), MB_ERR_INVALID);
        check_mutations(fenced, m, MB_ARRAY_SIZE(m), false);
        free(fenced);
}

TEST(sealed_odd_inputs) {
        static mb_sealed s;
        size_t line = 999;

        CHECK_EQ_INT(mb_sealed_parse("", 0, states, sizeof(states), &s, &line), MB_ERR_TRUNCATED);
        CHECK_EQ_INT(mb_sealed_parse(NULL, 0, states, sizeof(states), &s, &line), MB_ERR_INVALID);
        CHECK_EQ_INT(mb_sealed_parse("mshim-sealed 1\0mode", 19, states, sizeof(states), &s, &line), MB_ERR_INVALID);
        CHECK_EQ_INT(mb_sealed_parse(SIGNED, strlen(SIGNED) - 1, states, sizeof(states), &s, &line), MB_ERR_TRUNCATED);
        CHECK_EQ_INT(mb_sealed_parse(LITERAL, strlen(LITERAL), NULL, 0, &s, &line), MB_ERR_NOSPACE);
        /* The signed mode needs no state buffer. */
        CHECK_EQ_INT(mb_sealed_parse(SIGNED, strlen(SIGNED), NULL, 0, &s, &line), MB_OK);
}

TEST(sealed_writer_refuses) {
        static mb_sealed s, bad;
        static char out[8192];
        size_t line, len = 4242;

        CHECK_EQ_INT(parse_sealed(SIGNED, &s, &line), MB_OK);
        bad = s;
        bad.n_states = 1;
        bad.states = states;
        CHECK_EQ_INT(mb_sealed_write(&bad, out, sizeof(out), &len), MB_ERR_INVALID);
        bad = s;
        bad.mode = 0;
        CHECK_EQ_INT(mb_sealed_write(&bad, out, sizeof(out), &len), MB_ERR_INVALID);
        bad = s;
        bad.pcrs = 1u << 24;
        CHECK_EQ_INT(mb_sealed_write(&bad, out, sizeof(out), &len), MB_ERR_INVALID);
        bad = s;
        bad.bank = MB_ALG_SHA1;
        CHECK_EQ_INT(mb_sealed_write(&bad, out, sizeof(out), &len), MB_ERR_INVALID);
        bad = s;
        bad.public_size = MB_SEAL_BLOB_MAX + 1;
        CHECK_EQ_INT(mb_sealed_write(&bad, out, sizeof(out), &len), MB_ERR_INVALID);
        bad = s;
        bad.mode = MB_SEAL_LITERAL;     /* with the signed keys still set */
        bad.n_states = 1;
        bad.states = states;
        CHECK_EQ_INT(mb_sealed_write(&bad, out, sizeof(out), &len), MB_ERR_INVALID);
        CHECK_EQ_INT(len, 4242);
}

TEST(approval_round_trip) {
        static mb_approval a, back;
        static char out[4096];
        char *no_label;
        size_t line, len;

        CHECK_EQ_INT(parse_approval(APPROVAL, &a, &line), MB_OK);
        CHECK(a.epoch == 5 && a.bank == MB_ALG_SHA256 && a.pcrs == (1u << 4 | 1u << 7));
        CHECK(a.values[0] == 5 && a.values[32] == 6 && a.policy[0] == 0xab && a.policy[31] == 0xab);
        CHECK(a.signature_size == 8 && a.signature[0] == 0x30);
        CHECK(strcmp(a.label, "Debian 6.1.0-13-amd64 (predicted)") == 0);
        CHECK(strcmp(a.entry_id, "debian-6.1.0-13-amd64") == 0);
        CHECK(strcmp(a.created, "2026-12-03T19:00:00Z") == 0);
        CHECK_EQ_INT(mb_approval_write(&a, out, sizeof(out), &len), MB_OK);
        CHECK(strcmp(out, APPROVAL) == 0 && len == strlen(APPROVAL));
        CHECK_EQ_INT(parse_approval(out, &back, &line), MB_OK);
        CHECK(memcmp(&a, &back, sizeof(a)) == 0);
        CHECK_EQ_INT(mb_approval_write(&a, out, 100, &len), MB_ERR_NOSPACE);

        /* label and entry-id are optional; the writer leaves them out when empty. */
        no_label = mutate(APPROVAL, "label Debian 6.1.0-13-amd64 (predicted)\nentry-id debian-6.1.0-13-amd64\n", "");
        CHECK_EQ_INT(parse_approval(no_label, &a, &line), MB_OK);
        CHECK(a.label[0] == '\0' && a.entry_id[0] == '\0');
        CHECK_EQ_INT(mb_approval_write(&a, out, sizeof(out), &len), MB_OK);
        CHECK(strcmp(out, no_label) == 0);
        /* The largest epoch. */
        free(no_label);
        no_label = mutate(APPROVAL, "epoch 5", "epoch 18446744073709551615");
        CHECK_EQ_INT(parse_approval(no_label, &a, &line), MB_OK);
        CHECK(a.epoch == UINT64_MAX);
        CHECK_EQ_INT(mb_approval_write(&a, out, sizeof(out), &len), MB_OK);
        CHECK(strcmp(out, no_label) == 0);
        free(no_label);
}

TEST(approval_rejections) {
        char *label129 = repeat('x', 129), *id256 = repeat('a', 256);
        char l129[160], i256[300], label128[160];
        char *x128 = repeat('x', 128);
        const struct mutation m[] = {
                { "epoch 5", "epoch 05", MB_ERR_INVALID, 2 },
                { "epoch 5", "epoch -1", MB_ERR_INVALID, 2 },
                { "epoch 5", "epoch +5", MB_ERR_INVALID, 2 },
                { "epoch 5", "epoch 0x5", MB_ERR_INVALID, 2 },
                { "epoch 5", "epoch 18446744073709551616", MB_ERR_OVERFLOW, 2 },
                { "epoch 5\n", "", MB_ERR_INVALID, 0 },
                { "epoch 5\n", "epoch 5\nepoch 6\n", MB_ERR_INVALID, 3 },
                { "epoch 5\n", "epoch 5\nstate 00\n", MB_ERR_INVALID, 3 },             /* a sealed-file key */
                { "mshim-approval 1", "mshim-sealed 1", MB_ERR_INVALID, 1 },
                { "mshim-approval 1", "mshim-approval 10", MB_ERR_UNSUPPORTED, 1 },
                { "values " V64("05", "06"), "values " H32("05"), MB_ERR_INVALID, 0 },   /* one PCR's worth */
                { "values 05", "values 5", MB_ERR_INVALID, 5 },
                { "pcrs 4,7", "pcrs 4,7,9", MB_ERR_INVALID, 0 },
                { "policy " H32("ab"), "policy " H32("ab") "ab", MB_ERR_TOOLONG, 6 },
                { "policy " H32("ab"), "policy abab", MB_ERR_INVALID, 6 },
                { "policy " H32("ab") "\n", "", MB_ERR_INVALID, 0 },
                { "signature 3006020101020102", "signature 3006020180020102", MB_ERR_INVALID, 0 },  /* negative */
                { "signature 3006020101020102", "signature 300702010102010200", MB_ERR_INVALID, 0 },  /* trailing */
                { "signature 3006020101020102", "signature 3006020100020102", MB_ERR_INVALID, 0 },  /* r = 0 */
                { "signature 3006020101020102", "signature 300702020001020102", MB_ERR_INVALID, 0 },  /* not minimal */
                { "signature 3006020101020102", "signature 3007020101020102", MB_ERR_INVALID, 0 },
                { "signature 3006020101020102", "signature 3106020101020102", MB_ERR_INVALID, 0 },
                { "signature 3006020101020102", "signature 30", MB_ERR_INVALID, 0 },
                { "signature 3006020101020102", "signature 300602010102010", MB_ERR_INVALID, 7 },
                { "label Debian 6.1.0-13-amd64 (predicted)", l129, MB_ERR_TOOLONG, 8 },
                { "label Debian 6.1.0-13-amd64 (predicted)", "label a\x7f", MB_ERR_INVALID, 8 },
                { "entry-id debian-6.1.0-13-amd64", "entry-id ../../etc", MB_ERR_INVALID, 9 },
                { "entry-id debian-6.1.0-13-amd64", "entry-id a b", MB_ERR_INVALID, 9 },
                { "entry-id debian-6.1.0-13-amd64", i256, MB_ERR_TOOLONG, 9 },
                { "created 2026-12-03T19:00:00Z", "created 2026-12-03 19:00:00", MB_ERR_INVALID, 10 },
                { "created 2026-12-03T19:00:00Z", "created 2026-12-03T19:00:00+00:00", MB_ERR_TOOLONG, 10 },
                { "created 2026-12-03T19:00:00Z", "created 2026-02-29T00:00:00Z", MB_ERR_INVALID, 10 },
                { "created 2026-12-03T19:00:00Z", "created 2100-02-29T00:00:00Z", MB_ERR_INVALID, 10 },
                { "created 2026-12-03T19:00:00Z", "created 2026-13-01T00:00:00Z", MB_ERR_INVALID, 10 },
                { "created 2026-12-03T19:00:00Z", "created 2026-04-31T00:00:00Z", MB_ERR_INVALID, 10 },
                { "created 2026-12-03T19:00:00Z", "created 2026-12-03T24:00:00Z", MB_ERR_INVALID, 10 },
                { "created 2026-12-03T19:00:00Z", "created 2026-12-03T19:60:00Z", MB_ERR_INVALID, 10 },
                { "created 2026-12-03T19:00:00Z", "created 2026-12-03t19:00:00z", MB_ERR_INVALID, 10 },
                { "created 2026-12-03T19:00:00Z", "created 2026-12-0aT19:00:00Z", MB_ERR_INVALID, 10 },
                { "created 2026-12-03T19:00:00Z\n", "", MB_ERR_INVALID, 0 },
        };
        const struct mutation ok[] = {
                { "created 2026-12-03T19:00:00Z", "created 2028-02-29T23:59:60Z", MB_OK, 999 },
                { "created 2026-12-03T19:00:00Z", "created 2000-02-29T00:00:00Z", MB_OK, 999 },
                { "label Debian 6.1.0-13-amd64 (predicted)", label128, MB_OK, 999 },
                { "entry-id debian-6.1.0-13-amd64", "entry-id a1b2-6.1.0~rc1+deb12_x@y:z.conf", MB_OK, 999 },
                { "epoch 5", "epoch 0", MB_OK, 999 },
        };

        snprintf(l129, sizeof(l129), "label %s", label129);
        snprintf(label128, sizeof(label128), "label %s", x128);
        snprintf(i256, sizeof(i256), "entry-id %s", id256);
        check_mutations(APPROVAL, m, MB_ARRAY_SIZE(m), true);
        for (size_t i = 0; i < MB_ARRAY_SIZE(ok); i++) {
                char *text = mutate(APPROVAL, ok[i].from, ok[i].to);
                static mb_approval a;
                size_t line;

                CHECK_EQ_INT(parse_approval(text, &a, &line), MB_OK);
                free(text);
        }
        free(label129);
        free(id256);
        free(x128);
}

TEST(approval_writer_refuses) {
        static mb_approval a, bad;
        static char out[4096];
        size_t line, len = 4242;

        CHECK_EQ_INT(parse_approval(APPROVAL, &a, &line), MB_OK);
        bad = a;
        strcpy(bad.label, "tab\there");
        CHECK_EQ_INT(mb_approval_write(&bad, out, sizeof(out), &len), MB_ERR_INVALID);
        bad = a;
        strcpy(bad.label, " leading");
        CHECK_EQ_INT(mb_approval_write(&bad, out, sizeof(out), &len), MB_ERR_INVALID);
        bad = a;
        strcpy(bad.entry_id, "a/b");
        CHECK_EQ_INT(mb_approval_write(&bad, out, sizeof(out), &len), MB_ERR_INVALID);
        bad = a;
        strcpy(bad.created, "2026-12-03");
        CHECK_EQ_INT(mb_approval_write(&bad, out, sizeof(out), &len), MB_ERR_INVALID);
        bad = a;
        bad.signature_size = MB_APPROVAL_SIG_MAX + 1;
        CHECK_EQ_INT(mb_approval_write(&bad, out, sizeof(out), &len), MB_ERR_INVALID);
        bad = a;
        bad.signature[0] = 0x31;
        CHECK_EQ_INT(mb_approval_write(&bad, out, sizeof(out), &len), MB_ERR_INVALID);
        bad = a;
        bad.pcrs = 0;
        CHECK_EQ_INT(mb_approval_write(&bad, out, sizeof(out), &len), MB_ERR_INVALID);
        CHECK_EQ_INT(len, 4242);
}

/* Real P-256 signatures from OpenSSL: their DER parsed by mb_approval_sig_rs
 * must give OpenSSL's own r and s. 200 signatures cover an r or s with the
 * top bit set (a 33-byte INTEGER) and, most likely, a short one. */
TEST(der_signatures_from_openssl) {
        EVP_PKEY *key = EVP_PKEY_Q_keygen(NULL, NULL, "EC", "P-256");
        int long_ints = 0;

        CHECK(key != NULL);
        for (int i = 0; key && i < 200; i++) {
                EVP_MD_CTX *md = EVP_MD_CTX_new();
                uint8_t der[80], r[32], s[32], want_r[32], want_s[32], msg[4] = { (uint8_t) i };
                size_t n = sizeof(der);
                const unsigned char *p = der;
                ECDSA_SIG *sig = NULL;

                if (EVP_DigestSignInit(md, NULL, EVP_sha256(), NULL, key) != 1 ||
                    EVP_DigestSign(md, der, &n, msg, sizeof(msg)) != 1 || !(sig = d2i_ECDSA_SIG(NULL, &p, (long) n))) {
                        CHECK(!"OpenSSL signs");
                } else {
                        BN_bn2binpad(ECDSA_SIG_get0_r(sig), want_r, 32);
                        BN_bn2binpad(ECDSA_SIG_get0_s(sig), want_s, 32);
                        long_ints += der[3] == 33;
                        CHECK_EQ_INT(mb_approval_sig_rs(der, n, r, s), MB_OK);
                        CHECK(memcmp(r, want_r, 32) == 0 && memcmp(s, want_s, 32) == 0);
                        /* Cut short by one byte: refused. */
                        CHECK_EQ_INT(mb_approval_sig_rs(der, n - 1, r, s), MB_ERR_INVALID);
                }
                ECDSA_SIG_free(sig);
                EVP_MD_CTX_free(md);
        }
        CHECK(long_ints > 0);
        EVP_PKEY_free(key);
}

/* Every proper prefix of a valid file is refused (each one's last line is
 * required), and so is each byte of it replaced by a newline, a NUL or a
 * space, or any change that still parses writes back to exactly itself. */
TEST(prefixes_and_corruptions) {
        static const char *const texts[] = { SIGNED, LITERAL, APPROVAL };
        static const char subst[] = { '\n', '\0', ' ', 'x', '0' };

        for (size_t t = 0; t < MB_ARRAY_SIZE(texts); t++) {
                size_t n = strlen(texts[t]), line;
                char *buf = malloc(n);
                static mb_sealed s;
                static mb_approval a;
                static char out[8192];

                for (size_t k = 0; k < n; k++) {
                        memcpy(buf, texts[t], k);       /* exactly k bytes: ASan sees a read past them */
                        CHECK(mb_sealed_parse(buf, k, states, sizeof(states), &s, &line) != MB_OK);
                        CHECK(mb_approval_parse(buf, k, &a, &line) != MB_OK);
                }
                for (size_t k = 0; k < n; k++)
                        for (size_t c = 0; c < sizeof(subst); c++) {
                                size_t len;

                                memcpy(buf, texts[t], n);
                                if (buf[k] == subst[c])
                                        continue;
                                buf[k] = subst[c];
                                if (mb_sealed_parse(buf, n, states, sizeof(states), &s, &line) == MB_OK)
                                        CHECK(mb_sealed_write(&s, out, sizeof(out), &len) == MB_OK && len == n &&
                                              memcmp(out, buf, n) == 0);
                                if (mb_approval_parse(buf, n, &a, &line) == MB_OK)
                                        CHECK(mb_approval_write(&a, out, sizeof(out), &len) == MB_OK && len == n &&
                                              memcmp(out, buf, n) == 0);
                        }
                free(buf);
        }
}

TEST(state_size) {
        CHECK_EQ_INT(mb_sealed_state_size(MB_ALG_SHA256, 0x1290), 4 * 32);
        CHECK_EQ_INT(mb_sealed_state_size(MB_ALG_SHA256, 0xFFFFFF), 24 * 32);
        CHECK_EQ_INT(mb_sealed_state_size(MB_ALG_SHA256, 0xFF000000), 0);
        CHECK_EQ_INT(mb_sealed_state_size(0x4242, 0x1), 0);
}

int main(void) {
        RUN(signed_round_trip);
        RUN(literal_round_trip);
        RUN(the_most_states);
        RUN(sealed_rejections);
        RUN(sealed_fence);
        RUN(sealed_odd_inputs);
        RUN(sealed_writer_refuses);
        RUN(approval_round_trip);
        RUN(approval_rejections);
        RUN(approval_writer_refuses);
        RUN(der_signatures_from_openssl);
        RUN(prefixes_and_corruptions);
        RUN(state_size);
        TL_EXIT();
}
