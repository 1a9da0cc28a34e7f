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
#include "mb/pe.h"

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

/* ---- enforcing the policy (docs/SIGNING.md, "SBAT revocations") -------- */

/*
 * One policy variable as the firmware returned it: SbatLevel or
 * SbatLevelRT in shim's vendor GUID (605dab50-e046-4300-abb6-3dd810dd8b23).
 * present is false when GetVariable said EFI_NOT_FOUND.
 */
typedef struct mb_sbat_var {
        bool present;
        uint32_t attributes;       /* MB_VAR_* (mb/varstore.h) */
        const void *data;
        size_t size;
} mb_sbat_var;

/* Which variable a policy came from. */
typedef enum mb_sbat_source {
        MB_SBAT_LEVEL,             /* "SbatLevel": NV+BS, written only before ExitBootServices */
        MB_SBAT_LEVEL_RT,          /* "SbatLevelRT": shim's volatile BS+RT copy for the OS */
        MB_SBAT_N_SOURCES,
} mb_sbat_source;

/* The policies an image must pass: every one present applies. */
typedef struct mb_sbat_policy {
        struct {
                mb_sbat_source source;
                const char *text;  /* borrowed from the mb_sbat_var */
                size_t len;
        } p[MB_SBAT_N_SOURCES];
        size_t n;                  /* 0: no policy, nothing is revoked */
} mb_sbat_policy;

/* "SbatLevel" / "SbatLevelRT". */
const char *mb_sbat_source_name(mb_sbat_source s);

/*
 * Decide which policy text applies, from the two variables (indexed by
 * mb_sbat_source). Both apply when both exist: an image is refused when
 * either revokes it, so the order only decides which one a message names
 * (SbatLevel first). Attributes must be what shim writes: SbatLevel
 * NV+BS (or NV+BS+time-authenticated, which shim also accepts), never RT,
 * since a runtime-visible one may have been written by the OS;
 * SbatLevelRT exactly BS+RT, volatile, since only code running before the
 * OS in this very boot can have created a volatile variable, while a
 * non-volatile one may have been left by the OS. Any other attributes,
 * or a policy text that does not parse, is MB_ERR_INVALID with
 * *ret_source naming the variable: the caller must then refuse every
 * image (fail closed), not fall back to no policy. ret untouched on error.
 */
mb_err mb_sbat_policy_select(const mb_sbat_var vars[MB_SBAT_N_SOURCES], mb_sbat_policy *ret,
                             mb_sbat_source *ret_source);

typedef enum mb_sbat_outcome {
        MB_SBAT_ALLOWED,           /* passes every policy, or there is none */
        MB_SBAT_REVOKED,           /* a record's generation is below a policy's */
        MB_SBAT_MISSING,           /* no .sbat section, and one is required */
        MB_SBAT_MALFORMED,         /* two .sbat sections, one with VirtualSize > SizeOfRawData,
                                    * or text that does not parse */
} mb_sbat_outcome;

typedef struct mb_sbat_verdict {
        mb_sbat_outcome outcome;
        mb_sbat_source source;     /* REVOKED: the policy that revoked it */
        mb_sbat_entry entry;       /* REVOKED: the image's record (borrows the image) */
        uint32_t min_generation;   /* REVOKED: the lowest generation that policy accepts */
        size_t lineno;             /* MALFORMED: the bad .sbat line, 0 for the section layout */
} mb_sbat_verdict;

/*
 * shim's verify_sbat_section for one parsed image (pe.c, sbat.c): with no
 * policy everything is allowed, even an image without .sbat. Otherwise an
 * image without a .sbat section passes only when !section_required (shim
 * requires one for what it loads itself, not for what it verifies through
 * SHIM_LOCK), a malformed one never does, and a record whose component a
 * policy lists with a higher generation revokes it. Where shim ignores a
 * section with VirtualSize > SizeOfRawData and uses the first of several
 * rules for one component, this refuses the image and applies every
 * rule: stricter, never laxer.
 */
void mb_sbat_image_verdict(const mb_sbat_policy *pol, const mb_pe *pe, bool section_required,
                           mb_sbat_verdict *ret);

#endif
