/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Decoders for event-log payloads (PC Client PFP section 10.4 and the UEFI
 * structures it references), emitting what they find through mb_emit.
 * Integrity rules (which events' digests must cover their payload) live here
 * too, because they depend on the same understanding of each payload.
 */
#ifndef MB_EVDATA_H
#define MB_EVDATA_H

#include "mb/emit.h"
#include "mb/tcglog.h"

/* Emit the decoded payload of ev as an object under key "payload"
 * (always an object; unknown or malformed payloads yield {"hex": "..."}
 * plus "error" naming what was wrong). Never reads outside ev->data. */
void mb_evdata_decode(const mb_tcglog_event *ev, mb_emit *e);

typedef enum mb_integrity {
        MB_INTEGRITY_NOT_APPLICABLE = 0, /* the digest covers something outside the log (an image, a blob) */
        MB_INTEGRITY_OK,                 /* every computable digest equals the hash of the expected bytes */
        MB_INTEGRITY_MISMATCH,           /* at least one computable digest does not */
} mb_integrity;

/* For events whose digest must cover (a known function of) the payload:
 * separators, EV_EFI_ACTION, EV_EFI_VARIABLE_*, GPT, EV_IPL under the GRUB,
 * systemd and shim conventions, mshim's own tags. ret_convention names the
 * rule that matched (e.g. "systemd-utf16"), or NULL. */
mb_integrity mb_evdata_check(const mb_tcglog_event *ev, const char **ret_convention);

/* The same check with the digests of the n_algs algorithms in algs left to
 * the caller, so it can hash many events' data at once (the host CLI runs
 * SHA-384/512 eight at a time). The verdict assumes those digests match the
 * rule's bytes, listed in *ret_deferred; when one does not, the caller must
 * take mb_evdata_check()'s verdict instead. Rules are tried in the same
 * order, so when all match the verdict and convention are exactly
 * mb_evdata_check()'s. */
typedef struct mb_integrity_deferred {
        uint32_t n_digests;                             /* 0: nothing left to confirm */
        uint8_t digest_index[MB_TCGLOG_MAX_ALGS];       /* into ev->digests */
        const uint8_t *p;                               /* hash p[0..n) then suffix[0..suffix_n) */
        size_t n;
        const uint8_t *suffix;
        size_t suffix_n;
} mb_integrity_deferred;
mb_integrity mb_evdata_check_deferred(const mb_tcglog_event *ev, const uint16_t *algs, size_t n_algs,
                                      const char **ret_convention, mb_integrity_deferred *ret_deferred);

/* A UEFI_VARIABLE_DATA (PC Client PFP 10.4.4) split into its fields, every
 * length checked against the n bytes: VariableName GUID, UnicodeName
 * (name_units UTF-16LE units, no NUL), VariableData; trailing: bytes after
 * the data. MB_ERR_TRUNCATED when a length runs past the buffer. */
typedef struct mb_uefi_variable {
        const uint8_t *guid, *name, *data;
        size_t name_units, data_size, trailing;
} mb_uefi_variable;
mb_err mb_evdata_variable(const uint8_t *p, size_t n, mb_uefi_variable *ret);

#endif
