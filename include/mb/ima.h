/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Linux IMA's binary measurement list (securityfs
 * ima/binary_runtime_measurements): the parser and the digest each entry
 * extends into a PCR bank, for `mshim verify --ima` (docs/ATTESTATION.md
 * "IMA"). Host only: the loader never reads IMA.
 *
 * The layout is the kernel's (security/integrity/ima/ima_fs.c,
 * ima_measurements_show; Documentation/security/IMA-templates.rst), in the
 * machine's byte order (little endian: x86-64, the only machine mshim
 * boots), per entry:
 *   u32 PCR; 20 bytes template digest (SHA-1 of the template data, all
 *   zeros for a violation); u32 template name length; the name; u32
 *   template data length; the template data: per field, u32 length and
 *   its bytes.
 * The legacy "ima" template, which has no template data length and hashes
 * other bytes than it logs, is refused (MB_ERR_UNSUPPORTED).
 */
#ifndef MB_IMA_H
#define MB_IMA_H

#include "mb/base.h"
#include "mb/sha.h"

#define MB_IMA_PCR              10      /* CONFIG_IMA_MEASURE_PCR_IDX's default */
#define MB_IMA_NAME_MAX         255     /* IMA_TEMPLATE_NAME_LEN_MAX */
#define MB_IMA_DATA_MAX         (1u << 20)      /* a sanity bound: the largest fields (ima-buf keys, signatures) are KiB */
#define MB_IMA_SHA1_SIZE        20

typedef enum mb_ima_kind {
        MB_IMA_OTHER = 0,       /* a template mshim does not look into (ima-buf, ima-modsig...) */
        MB_IMA_NG,              /* d-ng|n-ng */
        MB_IMA_SIG,             /* d-ng|n-ng|sig */
} mb_ima_kind;

typedef struct mb_ima_entry {
        size_t offset;                  /* in the list */
        uint32_t number;                /* 1 for the first entry */
        uint32_t pcr;
        const uint8_t *template_sha1;   /* MB_IMA_SHA1_SIZE bytes, as logged (not digest-bound: see below) */
        bool violation;                 /* template_sha1 all zeros: IMA extends all ones instead */
        mb_str name;                    /* the template's name */
        const uint8_t *data;            /* the template data: what every bank's digest covers */
        size_t data_size;
        mb_ima_kind kind;
        /* ima-ng and ima-sig: the d-ng field ("ALG:" NUL digest) */
        mb_str digest_alg;              /* "sha256" */
        const uint8_t *digest;
        size_t digest_size;
        mb_str path;                    /* the n-ng field, without its NUL */
        const uint8_t *sig;             /* ima-sig: the sig field (possibly empty) */
        size_t sig_size;
} mb_ima_entry;

typedef struct mb_ima_log {
        const uint8_t *buf;
        size_t size, off;
        uint32_t next_number;
} mb_ima_log;

void mb_ima_begin(mb_ima_log *log, const void *buf, size_t size);

/* The next entry. MB_END after the last; MB_ERR_TRUNCATED when the list
 * ends inside one, MB_ERR_TOOLONG for a name or data over its bound,
 * MB_ERR_INVALID for fields that do not fill the template data exactly
 * or an ima-ng/ima-sig field that is malformed, MB_ERR_UNSUPPORTED for the
 * legacy "ima" template. ret_entry untouched on failure; log->off then
 * still names the entry that failed. */
mb_err mb_ima_next(mb_ima_log *log, mb_ima_entry *ret_entry);

/* The digest IMA extends into a bank of alg for entry e: the hash of the
 * template data (all ones for a violation). Only this is trusted, never
 * the logged template_sha1: the replay binds the data the allowlist reads.
 * ret gets mb_hash_size(alg) bytes; MB_ERR_UNSUPPORTED for other algs. */
mb_err mb_ima_extend_digest(const mb_ima_entry *e, uint16_t alg, uint8_t *ret);

#endif
