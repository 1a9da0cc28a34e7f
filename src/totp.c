/* SPDX-License-Identifier: BSD-2-Clause */
/* TOTP time steps and HOTP truncation (include/mb/totp.h). */
#include "mb/totp.h"
#include "mb/sha.h"
#include "mb/tcglog.h"

void mb_totp_counter(uint64_t unix_time, uint32_t period, uint8_t ret_msg[MB_TOTP_COUNTER_SIZE]) {
        uint64_t t = period ? unix_time / period : 0;

        for (int i = MB_TOTP_COUNTER_SIZE - 1; i >= 0; i--, t >>= 8)
                ret_msg[i] = (uint8_t) t;
}

mb_err mb_totp_truncate(const uint8_t *hmac, size_t hmac_size, unsigned digits, uint32_t *ret_code) {
        uint32_t mod = 1, bin;
        size_t off;

        if (hmac_size < MB_TOTP_HMAC_MIN || digits < 1 || digits > 9)
                return MB_ERR_INVALID;
        /* The low nibble of the last byte picks 4 bytes, top bit cleared. */
        off = hmac[hmac_size - 1] & 0x0f;
        if (mb_out_of_bounds(hmac_size, off, 4))
                return MB_ERR_INVALID;
        bin = ((uint32_t) (hmac[off] & 0x7f) << 24) | ((uint32_t) hmac[off + 1] << 16) |
              ((uint32_t) hmac[off + 2] << 8) | hmac[off + 3];
        for (unsigned i = 0; i < digits; i++)
                mod *= 10;
        *ret_code = bin % mod;
        return MB_OK;
}

void mb_totp_fence_event(uint8_t ret_event[MB_TOTP_FENCE_EVENT_SIZE]) {
        static const char text[] = MB_TOTP_FENCE_TEXT;

        mb_put_le32(ret_event, MB_TAG_TOTP_FENCE);
        mb_put_le32(ret_event + 4, (uint32_t) sizeof(text));
        mb_memcpy(ret_event + 8, text, sizeof(text));
}

void mb_totp_initrd_event(uint64_t size, const uint8_t sha256[MB_TOTP_INITRD_SHA256_SIZE],
                          uint8_t ret_event[MB_TOTP_INITRD_EVENT_SIZE]) {
        mb_put_le32(ret_event, MB_TAG_TOTP_INITRD);
        mb_put_le32(ret_event + 4, 8u + MB_TOTP_INITRD_SHA256_SIZE);
        mb_put_le32(ret_event + 8, (uint32_t) size);
        mb_put_le32(ret_event + 12, (uint32_t) (size >> 32));
        mb_memcpy(ret_event + 16, sha256, MB_TOTP_INITRD_SHA256_SIZE);
}

mb_err mb_totp_policy_ref(uint16_t bank, uint32_t pcr_mask, uint8_t ret[MB_TOTP_POLICY_REF_SIZE]) {
        uint8_t sel[MB_POLICY_PCR_SELECTION_SIZE];

        if (mb_policy_pcr_selection(bank, pcr_mask, sel) != MB_OK)
                return MB_ERR_INVALID;
        mb_memcpy(ret, MB_TOTP_POLICY_REF, MB_TOTP_POLICY_REF_PREFIX_SIZE);
        mb_memcpy(ret + MB_TOTP_POLICY_REF_PREFIX_SIZE, sel, sizeof(sel));
        return MB_OK;
}

void mb_totp_lock_digest(uint8_t ret[MB_POLICY_SIZE]) {
        static const uint8_t zero[MB_POLICY_SIZE];

        /* One SHA-256 value: cannot fail. */
        (void) mb_policy_pcr_digest(zero, 1, sizeof(zero), ret);
}

mb_err mb_totp_signed_policy(const uint8_t *key_name, size_t key_name_size, uint16_t bank, uint32_t pcr_mask,
                             mb_policy *ret) {
        uint8_t ref[MB_TOTP_POLICY_REF_SIZE], lock[MB_POLICY_SIZE];
        mb_policy p;
        mb_err e = mb_totp_policy_ref(bank, pcr_mask, ref);

        mb_totp_lock_digest(lock);
        if (e == MB_OK)
                e = mb_policy_authorize(&p, key_name, key_name_size, ref, sizeof(ref));
        if (e == MB_OK)
                e = mb_policy_pcr(&p, MB_ALG_SHA256, 1u << MB_TOTP_LOCK_PCR, lock);
        if (e == MB_OK)
                *ret = p;
        return e;
}

static bool leap_year(uint32_t y) {
        return y % 4 == 0 && (y % 100 != 0 || y % 400 == 0);
}

static uint32_t month_days(uint32_t y, uint32_t m) {
        static const uint8_t days[12] = { 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31 };

        return m == 2 && leap_year(y) ? 29 : days[m - 1];
}

/* Days from 1970-01-01 to y-m-d (y >= 1970), counted plainly: at most
 * 8030 years of 366 days, no overflow. */
static uint64_t days_since_epoch(uint32_t y, uint32_t m, uint32_t d) {
        uint64_t n = 0;

        for (uint32_t i = 1970; i < y; i++)
                n += leap_year(i) ? 366 : 365;
        for (uint32_t i = 1; i < m; i++)
                n += month_days(y, i);
        return n + d - 1;
}

mb_err mb_totp_unix_time(const mb_civil_time *t, int32_t offset_min, uint64_t *ret_unix) {
        int64_t s;

        /* UEFI 2.10 §8.3.1 EFI_TIME: Second 0..59 (a leap second is allowed
         * here, as POSIX folds it into the next minute). */
        if (t->year < 1970 || t->year > 9999 || t->month < 1 || t->month > 12 || t->day < 1 ||
            t->day > month_days(t->year, t->month) || t->hour > 23 || t->minute > 59 || t->second > 60 ||
            offset_min < -MB_TOTP_OFFSET_MAX || offset_min > MB_TOTP_OFFSET_MAX)
                return MB_ERR_INVALID;
        s = (int64_t) days_since_epoch(t->year, t->month, t->day) * 86400 + t->hour * 3600 + t->minute * 60 +
            t->second - (int64_t) offset_min * 60;
        if (s < 0)
                return MB_ERR_INVALID;
        *ret_unix = (uint64_t) s;
        return MB_OK;
}

static void put_dec(char *p, uint32_t v, unsigned width) {
        for (unsigned i = width; i > 0; i--, v /= 10)
                p[i - 1] = (char) ('0' + v % 10);
}

mb_err mb_totp_time_text(uint64_t unix_time, char ret[MB_TOTP_TIME_TEXT_SIZE]) {
        uint64_t days = unix_time / 86400, secs = unix_time % 86400;
        uint32_t y = 1970, m = 1;

        while (y <= 9999 && days >= (leap_year(y) ? 366u : 365u))
                days -= leap_year(y++) ? 366 : 365;
        if (y > 9999)
                return MB_ERR_INVALID;
        while (days >= month_days(y, m))
                days -= month_days(y, m++);
        mb_memcpy(ret, "YYYY-MM-DD HH:MM:SS UTC", MB_TOTP_TIME_TEXT_SIZE);
        put_dec(ret, y, 4);
        put_dec(ret + 5, m, 2);
        put_dec(ret + 8, (uint32_t) days + 1, 2);
        put_dec(ret + 11, (uint32_t) (secs / 3600), 2);
        put_dec(ret + 14, (uint32_t) (secs / 60 % 60), 2);
        put_dec(ret + 17, (uint32_t) (secs % 60), 2);
        return MB_OK;
}
