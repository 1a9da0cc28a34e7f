/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * TOTP steps and HOTP truncation (src/totp.c) against the RFCs' own test
 * vectors: RFC 4226 Appendix D (HOTP, its HMAC values as printed there)
 * and RFC 6238 Appendix B (TOTP, SHA-1 rows; the HMAC from OpenSSL).
 */
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include "testlib.h"
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

/* Civil time to Unix time against libc's timegm, every month of some
 * years (leap and not), and the offset's sign (local = UTC + offset). */
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
        RUN(unix_time_against_timegm);
        RUN(time_text);
        RUN(hotp_rfc4226_truncation);
        RUN(totp_rfc6238_sha1);
        RUN(truncate_refuses_bad_input);
        TL_EXIT();
}
