/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * TOTP steps and HOTP truncation (src/totp.c) against the RFCs' own test
 * vectors: RFC 4226 Appendix D (HOTP, its HMAC values as printed there)
 * and RFC 6238 Appendix B (TOTP, SHA-1 rows; the HMAC from OpenSSL); and
 * the TOTP enrolment codec (src/sealfile.c) against text written here by
 * hand, as docs/CONFIG.md describes it.
 */
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include "testlib.h"
#include "mb/sealfile.h"
#include "mb/sha.h"
#include <time.h>
#include "mb/totp.h"
#include "mb/tcglog.h"

static const uint8_t rfc_secret[] = "12345678901234567890";

static void unhex(const char *s, uint8_t *out, size_t n) {
        for (size_t i = 0; i < n; i++)
                sscanf(s + 2 * i, "%2hhx", &out[i]);
}

/* RFC 4226 Appendix D: HMAC-SHA1 per count, and the 6-digit HOTP value. */
TEST(hotp_rfc4226_truncation) {
        static const struct { const char *hmac; uint32_t hotp; } v[] = {
                { "cc93cf18508d94934c64b65d8ba7667fb7cde4b0", 755224 },
                { "75a48a19d4cbe100644e8ac1397eea747a2d33ab", 287082 },
                { "0bacb7fa082fef30782211938bc1c5e70416ff44", 359152 },
                { "66c28227d03a2d5529262ff016a1e6ef76557ece", 969429 },
                { "a904c900a64b35909874b33e61c5938a8e15ed1c", 338314 },
                { "a37e783d7b7233c083d4f62926c7a25f238d0316", 254676 },
                { "bc9cd28561042c83f219324d3c607256c03272ae", 287922 },
                { "a4fb960c0bc06e1eabb804e5b397cdc4b45596fa", 162583 },
                { "1b3c89f65e6c9e883012052823443f048b4332db", 399871 },
                { "1637409809a679dc698207310c8c7fc07290d9e5", 520489 },
        };
        for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
                uint8_t h[20];
                uint32_t code = 0;
                unhex(v[i].hmac, h, sizeof(h));
                CHECK(mb_totp_truncate(h, sizeof(h), 6, &code) == MB_OK);
                CHECK_EQ_INT(code, v[i].hotp);
        }
}

/* RFC 6238 Appendix B, SHA-1: time, the step as hex, the 8-digit TOTP. */
TEST(totp_rfc6238_sha1) {
        static const struct { uint64_t t; const char *step; uint32_t totp; } v[] = {
                { 59, "0000000000000001", 94287082 },
                { 1111111109, "00000000023523EC", 7081804 },
                { 1111111111, "00000000023523ED", 14050471 },
                { 1234567890, "000000000273EF07", 89005924 },
                { 2000000000, "0000000003F940AA", 69279037 },
                { 20000000000ull, "0000000027BC86AA", 65353130 },
        };
        for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
                uint8_t msg[MB_TOTP_COUNTER_SIZE], want[8], mac[EVP_MAX_MD_SIZE];
                unsigned mac_len = 0;
                uint32_t code = 0;
                mb_totp_counter(v[i].t, MB_TOTP_PERIOD, msg);
                unhex(v[i].step, want, sizeof(want));
                CHECK(memcmp(msg, want, sizeof(want)) == 0);
                HMAC(EVP_sha1(), rfc_secret, 20, msg, sizeof(msg), mac, &mac_len);
                CHECK(mb_totp_truncate(mac, mac_len, 8, &code) == MB_OK);
                CHECK_EQ_INT(code, v[i].totp);
                /* 6 digits: the same number's last six. */
                CHECK(mb_totp_truncate(mac, mac_len, 6, &code) == MB_OK);
                CHECK_EQ_INT(code, v[i].totp % 1000000);
        }
}

/* A short HMAC or a digit count outside 1..9 is refused, the output untouched. */
TEST(truncate_refuses_bad_input) {
        uint8_t h[32] = { 0 };
        uint32_t code = 12345;
        CHECK(mb_totp_truncate(h, 19, 6, &code) == MB_ERR_INVALID);
        CHECK(mb_totp_truncate(h, 20, 0, &code) == MB_ERR_INVALID);
        CHECK(mb_totp_truncate(h, 20, 10, &code) == MB_ERR_INVALID);
        CHECK_EQ_INT(code, 12345);
        /* Offset 15 from a 20-byte HMAC reads bytes 15..18: in bounds. */
        h[19] = 0x0f;
        h[15] = 0xff; h[16] = 0; h[17] = 0; h[18] = 1;
        CHECK(mb_totp_truncate(h, 20, 9, &code) == MB_OK);
        CHECK_EQ_INT(code, 0x7f000001u % 1000000000u);
}

/* docs/CONFIG.md's literal example: two PCRs, two states. */
#define H32(c) c c c c c c c c c c c c c c c c c c c c c c c c c c c c c c c c
#define NAME "000b" H32("ab")
#define POLICY H32("cd")
#define ST1 H32("11") H32("22")
#define ST2 H32("33") H32("44")
static const char literal_text[] =
        "mshim-totp 1\nhandle 0x81004d54\nname " NAME "\npolicy " POLICY "\nmode literal\nbank sha256\n"
        "pcrs 7,12\nstate " ST1 "\nstate " ST2 "\n";

static uint8_t states[MB_SEAL_STATE_MAX * MB_SEAL_VALUES_MAX];

static mb_err parse(const char *text, mb_totp_enrolment *ret, size_t *line) {
        return mb_totp_enrolment_parse(text, strlen(text), states, sizeof(states), ret, line);
}

TEST(enrolment_literal_round_trip) {
        static mb_totp_enrolment e;
        char out[4096];
        size_t line = 99, len = 0;

        CHECK(parse(literal_text, &e, &line) == MB_OK);
        CHECK_EQ_INT(e.handle, 0x81004d54u);
        CHECK(e.mode == MB_SEAL_LITERAL && e.bank == MB_ALG_SHA256 && e.pcrs == ((1u << 7) | (1u << 12)));
        CHECK(e.name_size == 34 && e.name[0] == 0x00 && e.name[1] == 0x0b && e.name[33] == 0xab);
        CHECK(e.policy[0] == 0xcd && e.policy[31] == 0xcd);
        CHECK_EQ_INT(e.n_states, 2);
        CHECK(e.states[0] == 0x11 && e.states[32] == 0x22 && e.states[64] == 0x33 && e.states[127] == 0x44);
        CHECK(e.policy_key_size == 0 && e.nv_index == 0);
        /* The writer gives back the same bytes. */
        CHECK(mb_totp_enrolment_write(&e, out, sizeof(out), &len) == MB_OK);
        CHECK(len == strlen(literal_text) && memcmp(out, literal_text, len) == 0);
}

/* Each variant breaks one rule; the parser refuses it and leaves *ret alone. */
TEST(enrolment_refusals) {
        static const struct { const char *why, *text; } bad[] = {
                { "an NV handle, not persistent", "mshim-totp 1\nhandle 0x01004d54\nname " NAME "\npolicy " POLICY
                  "\nmode literal\nbank sha256\npcrs 7,12\nstate " ST1 "\n" },
                { "no name", "mshim-totp 1\nhandle 0x81004d54\npolicy " POLICY
                  "\nmode literal\nbank sha256\npcrs 7,12\nstate " ST1 "\n" },
                { "a short policy", "mshim-totp 1\nhandle 0x81004d54\nname " NAME "\npolicy cdcd"
                  "\nmode literal\nbank sha256\npcrs 7,12\nstate " ST1 "\n" },
                { "literal without states", "mshim-totp 1\nhandle 0x81004d54\nname " NAME "\npolicy " POLICY
                  "\nmode literal\nbank sha256\npcrs 7,12\n" },
                { "signed with a state", "mshim-totp 1\nhandle 0x81004d54\nname " NAME "\npolicy " POLICY
                  "\nmode signed\nbank sha256\npcrs 7,12\nstate " ST1 "\n" },
                { "a state of the wrong size", "mshim-totp 1\nhandle 0x81004d54\nname " NAME "\npolicy " POLICY
                  "\nmode literal\nbank sha256\npcrs 7,12\nstate " H32("11") "\n" },
                { "the handle twice", "mshim-totp 1\nhandle 0x81004d54\nhandle 0x81004d54\nname " NAME "\npolicy "
                  POLICY "\nmode literal\nbank sha256\npcrs 7,12\nstate " ST1 "\n" },
                { "an unknown key", "mshim-totp 1\nhandle 0x81004d54\nname " NAME "\npolicy " POLICY
                  "\nmode literal\nbank sha256\npcrs 7,12\nstate " ST1 "\ndigits 8\n" },
                { "upper-case hex", "mshim-totp 1\nhandle 0x81004D54\nname " NAME "\npolicy " POLICY
                  "\nmode literal\nbank sha256\npcrs 7,12\nstate " ST1 "\n" },
                { "the sealed file's first line", "mshim-sealed 1\nhandle 0x81004d54\nname " NAME "\npolicy " POLICY
                  "\nmode literal\nbank sha256\npcrs 7,12\nstate " ST1 "\n" },
                { "no newline at the end", "mshim-totp 1\nhandle 0x81004d54\nname " NAME "\npolicy " POLICY
                  "\nmode literal\nbank sha256\npcrs 7,12\nstate " ST1 },
        };
        for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
                mb_totp_enrolment e;
                size_t line = 0;
                memset(&e, 0x5a, sizeof(e));
                if (parse(bad[i].text, &e, &line) == MB_OK) {
                        fprintf(stderr, "  accepted: %s\n", bad[i].why);
                        CHECK(0);
                }
                CHECK(((uint8_t *) &e)[0] == 0x5a && e.handle == 0x5a5a5a5au);
        }
}

/* The fence's bytes as docs/MEASUREMENTS.md spells them: tag 0x6d736808,
 * size 17, "mshim TOTP fence" and its NUL, little endian. */
TEST(fence_event_bytes) {
        static const uint8_t want[] = { 0x08, 0x68, 0x73, 0x6d, 17, 0, 0, 0, 'm', 's', 'h', 'i', 'm', ' ', 'T',
                                        'O', 'T', 'P', ' ', 'f', 'e', 'n', 'c', 'e', 0 };
        uint8_t ev[MB_TOTP_FENCE_EVENT_SIZE];

        CHECK_EQ_INT(sizeof(ev), sizeof(want));
        mb_totp_fence_event(ev);
        CHECK(memcmp(ev, want, sizeof(want)) == 0);
}

/* The TOTP initrd event as docs/MEASUREMENTS.md spells it: tag
 * 0x6d736809, size 40, the initrd's size as u64 LE, its SHA-256
 * (OpenSSL's, over the bytes); sizes above 4 GiB keep their high half. */
TEST(initrd_event_bytes) {
        static const char initrd[] = "an initramfs, concatenated";
        uint8_t ev[MB_TOTP_INITRD_EVENT_SIZE], want[48] = { 0x09, 0x68, 0x73, 0x6d, 40, 0, 0, 0 };
        uint8_t sha[32];
        unsigned len = 0;

        CHECK_EQ_INT(sizeof(ev), 48);
        EVP_Digest(initrd, strlen(initrd), sha, &len, EVP_sha256(), NULL);
        want[8] = (uint8_t) strlen(initrd);
        memcpy(want + 16, sha, 32);
        mb_totp_initrd_event(strlen(initrd), sha, ev);
        CHECK(memcmp(ev, want, sizeof(want)) == 0);
        /* No initrd: size 0 and SHA-256 of nothing (e3b0c442...). */
        EVP_Digest("", 0, sha, &len, EVP_sha256(), NULL);
        CHECK(sha[0] == 0xe3 && sha[1] == 0xb0);
        mb_totp_initrd_event(0, sha, ev);
        CHECK(ev[8] == 0 && ev[15] == 0 && memcmp(ev + 16, sha, 32) == 0);
        mb_totp_initrd_event(0x0102030405060708ull, sha, ev);
        CHECK(ev[8] == 0x08 && ev[11] == 0x05 && ev[12] == 0x04 && ev[15] == 0x01);
        /* Another initrd, another event: the digest input is the event. */
        EVP_Digest("x", 1, sha, &len, EVP_sha256(), NULL);
        mb_totp_initrd_event(strlen(initrd), sha, ev);
        CHECK(memcmp(ev, want, sizeof(want)) != 0);
}

/* Civil time to Unix time against libc's timegm, every month of some
 * years (leap and not), and the offset's sign (local = UTC + offset). */
/* The signed key's policyRef and authPolicy (docs/SEALING.md "The TOTP
 * key"), against values computed with Python's hashlib from TPM 2.0 Part 3
 * §23.7 and §23.16: policyRef = "mshim-totp" || TPML_PCR_SELECTION {1,
 * sha256, 3, PCRs 4,5,7,12}; authPolicy = PolicyAuthorize(Name 000b||11*32,
 * policyRef) then PolicyPCR(sha256 PCR 13, H(32 zero bytes)). */
TEST(signed_policy_ref_and_lock) {
        uint8_t ref[MB_TOTP_POLICY_REF_SIZE], want_ref[20], name[34], want[32];
        mb_policy p;

        unhex("6d7368696d2d746f747000000001000b03b01000", want_ref, sizeof(want_ref));
        CHECK_EQ_INT(MB_TOTP_POLICY_REF_SIZE, 20);
        CHECK_EQ_INT(mb_totp_policy_ref(MB_ALG_SHA256, (1u << 4) | (1u << 5) | (1u << 7) | (1u << 12), ref), MB_OK);
        CHECK(memcmp(ref, want_ref, sizeof(ref)) == 0);
        name[0] = 0x00;
        name[1] = 0x0b;
        memset(name + 2, 0x11, 32);
        unhex("a74a526d9f0ff3fa346e15697a53ce6099bb00b08c67e4322ea163bcfe9825c6", want, sizeof(want));
        CHECK_EQ_INT(mb_totp_signed_policy(name, sizeof(name), MB_ALG_SHA256,
                                           (1u << 4) | (1u << 5) | (1u << 7) | (1u << 12), &p), MB_OK);
        CHECK(memcmp(p.d, want, sizeof(want)) == 0);
        /* Another selection, another policyRef, another authPolicy. */
        CHECK_EQ_INT(mb_totp_policy_ref(MB_ALG_SHA256, 1u << 7, ref), MB_OK);
        CHECK(memcmp(ref, want_ref, sizeof(ref)) != 0);
        CHECK_EQ_INT(mb_totp_signed_policy(name, sizeof(name), MB_ALG_SHA256, 1u << 7, &p), MB_OK);
        CHECK(memcmp(p.d, want, sizeof(want)) != 0);
        /* No selection, a PCR above 23, an unknown bank: refused. */
        CHECK_EQ_INT(mb_totp_policy_ref(MB_ALG_SHA256, 0, ref), MB_ERR_INVALID);
        CHECK_EQ_INT(mb_totp_policy_ref(MB_ALG_SHA256, 1u << 24, ref), MB_ERR_INVALID);
        CHECK_EQ_INT(mb_totp_policy_ref(0x1234, 1u << 7, ref), MB_ERR_INVALID);
}

TEST(unix_time_against_timegm) {
        static const int years[] = { 1970, 1999, 2000, 2024, 2026, 2100, 2400, 9999 };
        mb_civil_time c;
        uint64_t u = 7;

        for (size_t i = 0; i < sizeof(years) / sizeof(years[0]); i++)
                for (int m = 1; m <= 12; m++) {
                        struct tm tm = { .tm_year = years[i] - 1900, .tm_mon = m - 1, .tm_mday = 28,
                                         .tm_hour = 23, .tm_min = 59, .tm_sec = 58 };
                        c = (mb_civil_time) { (uint16_t) years[i], (uint8_t) m, 28, 23, 59, 58 };
                        CHECK(mb_totp_unix_time(&c, 0, &u) == MB_OK);
                        CHECK_EQ_INT(u, timegm(&tm));
                }
        c = (mb_civil_time) { 2026, 1, 1, 1, 0, 0 };
        CHECK(mb_totp_unix_time(&c, 60, &u) == MB_OK);      /* 01:00 at +01:00 is midnight UTC */
        CHECK_EQ_INT(u, 1767225600);
        CHECK(mb_totp_unix_time(&c, -90, &u) == MB_OK);
        CHECK_EQ_INT(u, 1767225600 + 3600 + 5400);
        u = 7;
        c = (mb_civil_time) { 2025, 2, 29, 0, 0, 0 };
        CHECK(mb_totp_unix_time(&c, 0, &u) == MB_ERR_INVALID);
        c = (mb_civil_time) { 1970, 1, 1, 0, 0, 0 };
        CHECK(mb_totp_unix_time(&c, 1, &u) == MB_ERR_INVALID);   /* before the epoch */
        c = (mb_civil_time) { 2026, 1, 1, 24, 0, 0 };
        CHECK(mb_totp_unix_time(&c, 0, &u) == MB_ERR_INVALID);
        c = (mb_civil_time) { 2026, 13, 1, 0, 0, 0 };
        CHECK(mb_totp_unix_time(&c, 0, &u) == MB_ERR_INVALID);
        c = (mb_civil_time) { 2026, 1, 1, 0, 0, 0 };
        CHECK(mb_totp_unix_time(&c, 24 * 60 + 1, &u) == MB_ERR_INVALID);
        CHECK_EQ_INT(u, 7);
}

TEST(time_text) {
        char t[MB_TOTP_TIME_TEXT_SIZE];

        CHECK(mb_totp_time_text(0, t) == MB_OK);
        CHECK(strcmp(t, "1970-01-01 00:00:00 UTC") == 0);
        CHECK(mb_totp_time_text(1767225630, t) == MB_OK);
        CHECK(strcmp(t, "2026-01-01 00:00:30 UTC") == 0);
        CHECK(mb_totp_time_text(951782400 + 86399, t) == MB_OK);
        CHECK(strcmp(t, "2000-02-29 23:59:59 UTC") == 0);
        CHECK(mb_totp_time_text(253402300800ull, t) == MB_ERR_INVALID);    /* year 10000 */
}

int main(void) {
        RUN(fence_event_bytes);
        RUN(initrd_event_bytes);
        RUN(signed_policy_ref_and_lock);
        RUN(unix_time_against_timegm);
        RUN(time_text);
        RUN(hotp_rfc4226_truncation);
        RUN(totp_rfc6238_sha1);
        RUN(truncate_refuses_bad_input);
        RUN(enrolment_literal_round_trip);
        RUN(enrolment_refusals);
        TL_EXIT();
}
