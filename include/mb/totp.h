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
#include "mb/policy.h"

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
 * this constant event into PCR 12, which every TOTP policy covers, and into
 * PCR 13 (MB_TOTP_LOCK_PCR): from then on no PolicyPCR over the enrolled
 * state can succeed, so nothing that runs later (the kernel, root) can make
 * the TPM compute a code. The predictor adds the same bytes to both PCRs
 * when the next boot's loader.conf enables TOTP, so sealed disk keys expect
 * them. EV_EVENT_TAG, a tagged event (tag MB_TAG_TOTP_FENCE, data
 * MB_TOTP_FENCE_TEXT with its NUL), the digest over the event data itself. */
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

/* The signed TOTP key's authPolicy is PolicyAuthorize(policy key,
 * policyRef) then PolicyPCR(sha256 PCR 13 == all zeros):
 *
 * policyRef = "mshim-totp" (10 bytes, no NUL) || the marshalled
 * TPML_PCR_SELECTION of the enrolment's PCRs (mb_policy_pcr_selection, 10
 * bytes): 20 bytes. TPM 2.0 Part 3 §23.16: aHash = H(approvedPolicy ||
 * policyRef), so a TOTP approval is signed for exactly one selection and
 * the key's authPolicy names it: an approval signed for other PCRs (an
 * ESP enrolment file edited to "pcrs 7") never authorizes the key. Disk
 * approvals are signed with an empty policyRef: neither kind can stand in
 * for the other.
 *
 * PCR 13 (MB_TOTP_LOCK_PCR): all zeros at the TOTP point (nothing extends
 * it before mshim: the firmware uses 0-7, shim 4, 7 and 14), and the fence
 * extends it. The PolicyPCR comes after PolicyAuthorize, outside what the
 * policy key approves, so once the fence is in PCR 13 no approval,
 * whatever its PCR values and whoever signed it (root holding the policy
 * key), satisfies the key until the TPM is reset. */
#define MB_TOTP_POLICY_REF "mshim-totp"
#define MB_TOTP_POLICY_REF_PREFIX_SIZE (sizeof(MB_TOTP_POLICY_REF) - 1u)
#define MB_TOTP_POLICY_REF_SIZE (MB_TOTP_POLICY_REF_PREFIX_SIZE + MB_POLICY_PCR_SELECTION_SIZE)
#define MB_TOTP_LOCK_PCR 13u
/* <ESP>/loader/mshim/totp-approvals/: the TOTP approvals (docs/CONFIG.md). */
#define MB_TOTP_APPROVALS_DIR "loader/mshim/totp-approvals"

/* The policyRef of an enrolment (or approval) selecting pcr_mask in bank;
 * MB_ERR_INVALID as mb_policy_pcr_selection. */
mb_err mb_totp_policy_ref(uint16_t bank, uint32_t pcr_mask, uint8_t ret[MB_TOTP_POLICY_REF_SIZE]);
/* The pcrDigest of the lock's PolicyPCR: SHA-256 of PCR 13's SHA-256
 * value at the TOTP point, 32 zero bytes. */
void mb_totp_lock_digest(uint8_t ret[MB_POLICY_SIZE]);
/* The signed TOTP key's authPolicy for the policy key named key_name and
 * the enrolment's selection (bank, pcr_mask). */
mb_err mb_totp_signed_policy(const uint8_t *key_name, size_t key_name_size, uint16_t bank, uint32_t pcr_mask,
                             mb_policy *ret);

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
