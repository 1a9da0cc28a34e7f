/* SPDX-License-Identifier: BSD-2-Clause */
/* TOTP time steps and HOTP truncation (include/mb/totp.h). */
#include "mb/totp.h"

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
