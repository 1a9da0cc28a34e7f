/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * SBAT (UEFI Secure Boot Advanced Targeting, shim's SBAT.md): the .sbat
 * section an EFI image carries and the SbatLevel revocation policy shim
 * keeps in the SbatLevel variable and in its own .sbatlevel section.
 *
 * Both are CSV text without quoting or escaping, one record a line:
 *   image .sbat:  component,generation,vendor_name,vendor_package_name,vendor_version,vendor_url
 *   SbatLevel:    component,generation[,...]
 * The first record must be "sbat,1,..." (the format version). Generations
 * are positive decimal integers. The text ends at the first NUL byte; a
 * section is NUL-padded to its size, so only NULs may follow it.
 * Parsing borrows the buffer: every mb_str points into it.
 */
#ifndef MB_SBAT_H
#define MB_SBAT_H

#include "mb/base.h"

/* Longest accepted line, without its newline (MB_ERR_TOOLONG beyond).
 * Real entries are about 100 bytes; the limit bounds what a hostile
 * section can make a line-oriented consumer hold. */
#define MB_SBAT_MAX_LINE 1024

typedef struct mb_sbat_entry {
        mb_str component;          /* never empty */
        uint32_t generation;       /* >= 1 */
        /* In policy records (SbatLevel), whatever follows the generation:
         * e.g. the date of "sbat,1,2022052400" lands in vendor_name. */
        mb_str vendor_name, vendor_package, vendor_version, vendor_url;
        size_t lineno;             /* 1-based, for messages */
} mb_sbat_entry;

typedef struct mb_sbat_iter {
        const char *text;
        size_t len;                /* text length, up to the first NUL */
        size_t off;
        size_t lineno;             /* line of the last record read, or of the error */
        size_t n_records;
        bool policy;               /* SbatLevel rules: 2+ fields, not exactly 6 */
        mb_err padding_err;        /* non-NUL bytes after the text */
} mb_sbat_iter;

/* Start iterating an image's .sbat section (records of exactly 6 fields). */
void mb_sbat_init(mb_sbat_iter *it, const void *data, size_t size);
/* Start iterating an SbatLevel policy (records of 2 or more fields). */
void mb_sbat_policy_init(mb_sbat_iter *it, const void *data, size_t size);

/*
 * The next record: MB_OK, MB_END after the last, or an error with
 * it->lineno naming the line: MB_ERR_INVALID for a NUL byte followed by
 * more text, a first record that is not "sbat,1", a missing record
 * altogether, an empty component, a generation that is not a positive
 * decimal integer below 2^32, a control character, or the wrong number of
 * fields; MB_ERR_TOOLONG for a line over MB_SBAT_MAX_LINE bytes. Empty
 * lines are skipped and a '\r' before '\n' is dropped.
 */
mb_err mb_sbat_next(mb_sbat_iter *it, mb_sbat_entry *ret);

/* Parse a whole image .sbat section; MB_OK when every record is valid. */
mb_err mb_sbat_validate(const void *data, size_t size, size_t *ret_lineno);

/*
 * Check an image's .sbat against an SbatLevel policy (shim's rule): the
 * image is revoked when one of its records names a component that the
 * policy lists with a higher generation. On MB_OK *ret_revoked says which;
 * when revoked, *ret_entry is the offending image record and
 * *ret_min_generation the generation the policy requires. Parse errors of
 * either input are returned as is (an image with a malformed .sbat must be
 * treated as revoked by the caller).
 */
mb_err mb_sbat_check(const void *sbat, size_t sbat_size, const void *policy, size_t policy_size,
                     bool *ret_revoked, mb_sbat_entry *ret_entry, uint32_t *ret_min_generation);

/*
 * shim's .sbatlevel section: { u32 version = 0; u32 previous; u32 latest; }
 * followed by two NUL-terminated SbatLevel policies, whose offsets count
 * from the end of the version field. Returns the text of the "latest"
 * (want_latest) or "previous" policy, without its NUL.
 */
mb_err mb_sbat_level_section(const void *data, size_t size, bool want_latest,
                             const char **ret_text, size_t *ret_len);

#endif
