/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * TOTP (RFC 6238) over HOTP (RFC 4226): the time step and the dynamic
 * truncation that turn an HMAC into the digits an authenticator app shows.
 * The HMAC itself is the TPM's at boot (TPM2_HMAC with the enrolled key,
 * the secret never leaves the TPM) and OpenSSL's for `mshim totp recover`
 * (docs/SEALING.md, "TOTP"); both share these two steps.
 */
#ifndef MB_TOTP_H
#define MB_TOTP_H

#include "mb/base.h"

/* The parameters mshim enrols (tpm2-totp's, every authenticator app's
 * default): HMAC-SHA1, 6 digits, 30-second steps from the Unix epoch. */
#define MB_TOTP_SECRET_SIZE 20u
#define MB_TOTP_DIGITS 6u
#define MB_TOTP_PERIOD 30u
/* RFC 4226 §5.3: the truncation reads 4 bytes at an offset of at most 15. */
#define MB_TOTP_HMAC_MIN 20u
/* The counter HOTP's HMAC is over: 8 bytes, big-endian (RFC 4226 §5.2). */
#define MB_TOTP_COUNTER_SIZE 8u

/* RFC 6238 §4.2: T = floor((unix_time - T0) / period), T0 = 0, as the
 * 8-byte big-endian message HOTP takes. */
void mb_totp_counter(uint64_t unix_time, uint32_t period, uint8_t ret_msg[MB_TOTP_COUNTER_SIZE]);

/* RFC 4226 §5.3 dynamic truncation of hmac (hmac_size >= 20 bytes: SHA-1's
 * or longer, RFC 6238 §1.2) to `digits` (1..9) decimal digits. */
mb_err mb_totp_truncate(const uint8_t *hmac, size_t hmac_size, unsigned digits, uint32_t *ret_code);

#endif
