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

/* ---- the fence (docs/MEASUREMENTS.md, "The TOTP fence") ------------------ */

/* Once the code has been shown (or could not be made), the loader extends
 * this constant event into PCR 12, which every TOTP policy covers: from
 * then on no PolicyPCR over the enrolled state can succeed, so nothing that
 * runs later (the kernel, root) can make the TPM compute a code. The
 * predictor adds the same bytes to PCR 12 when the next boot's loader.conf
 * enables TOTP, so sealed disk keys expect it. EV_EVENT_TAG, a tagged event
 * (tag MB_TAG_TOTP_FENCE, data MB_TOTP_FENCE_TEXT with its NUL), the digest
 * over the event data itself. */
#define MB_TOTP_FENCE_PCR 12u
#define MB_TOTP_FENCE_TEXT "mshim TOTP fence"
#define MB_TOTP_FENCE_EVENT_SIZE (8u + sizeof(MB_TOTP_FENCE_TEXT))
void mb_totp_fence_event(uint8_t ret_event[MB_TOTP_FENCE_EVENT_SIZE]);

/* ---- the initrd (docs/MEASUREMENTS.md "The TOTP initrd event") --------- */

/* With TOTP on, right before the code, the loader extends this event into
 * PCR 12 (which every TOTP and disk policy covers): the initrd it is about
 * to serve, so the code vouches for it. The Linux stub's own initrd event
 * (PCR 9, 5.17+) comes only after StartImage, after the code, and PCR 9 is
 * not in a TOTP policy. EV_EVENT_TAG, tag MB_TAG_TOTP_INITRD, data {u64 LE
 * size, SHA-256 of the initrd bytes (the entry's initrd files concatenated,
 * as served)}; an entry without initrd gives size 0 and SHA-256 of nothing.
 * The digest is over the event data itself: 48 bytes, however large the
 * initrd (HashLogExtendEvent over the initrd would hash it once per bank).
 * The predictor builds the same bytes from the initrd files. */
#define MB_TOTP_INITRD_SHA256_SIZE 32u
#define MB_TOTP_INITRD_EVENT_SIZE (8u + 8u + MB_TOTP_INITRD_SHA256_SIZE)
void mb_totp_initrd_event(uint64_t size, const uint8_t sha256[MB_TOTP_INITRD_SHA256_SIZE],
                          uint8_t ret_event[MB_TOTP_INITRD_EVENT_SIZE]);

/* ---- the signed policy (docs/SEALING.md, "The TOTP key") ---------------- */

/* The policyRef of the TOTP key's PolicyAuthorize, and so of every TOTP
 * approval's signature (TPM 2.0 Part 3 §23.16: aHash = H(approvedPolicy ||
 * policyRef)). Disk approvals are signed with an empty policyRef: neither
 * kind can stand in for the other, so an approval of a boot state after the
 * fence (a disk key's) never lets root on that boot make a TOTP code. No
 * NUL: the 10 bytes. */
#define MB_TOTP_POLICY_REF "mshim-totp"
#define MB_TOTP_POLICY_REF_SIZE (sizeof(MB_TOTP_POLICY_REF) - 1u)
/* <ESP>/loader/mshim/totp-approvals/: the TOTP approvals (docs/CONFIG.md). */
#define MB_TOTP_APPROVALS_DIR "loader/mshim/totp-approvals"

/* ---- the clock ---------------------------------------------------------- */

/* What the RTC says (EFI_TIME's fields), read as local time at offset_min
 * minutes from UTC (local = UTC + offset; 0 for an RTC that keeps UTC). */
typedef struct mb_civil_time {
        uint16_t year;          /* 1970..9999 */
        uint8_t month, day, hour, minute, second;
} mb_civil_time;
/* The largest offset a time zone has (UEFI's EFI_TIME.TimeZone range,
 * +-24 h). */
#define MB_TOTP_OFFSET_MAX (24 * 60)

/* Seconds since the Unix epoch (RFC 6238's T0) of t at offset_min; leap
 * seconds as POSIX counts them (none; a :60 second is the next minute's
 * first). MB_ERR_INVALID for a field out of range (February 30th, hour 24,
 * an offset beyond MB_TOTP_OFFSET_MAX) or a result before the epoch. */
mb_err mb_totp_unix_time(const mb_civil_time *t, int32_t offset_min, uint64_t *ret_unix);

/* "YYYY-MM-DD HH:MM:SS UTC" of a Unix time before year 10000, NUL-terminated. */
#define MB_TOTP_TIME_TEXT_SIZE 24u
mb_err mb_totp_time_text(uint64_t unix_time, char ret[MB_TOTP_TIME_TEXT_SIZE]);

#endif
