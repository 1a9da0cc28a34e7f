/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * What mshim measures, as pure functions: the loader builds its events with
 * them and the host tools (the oracle-free parts of prediction) compute the
 * same bytes with the very same code, so the two cannot disagree.
 * docs/MEASUREMENTS.md documents every rule here byte for byte.
 */
#ifndef MB_MBOOT_H
#define MB_MBOOT_H

#include "mb/base.h"
#include "mb/bls.h"

/*
 * TCG_PCClientTaggedEvent (PC Client PFP 10.4.2): u32 taggedEventID,
 * u32 taggedEventDataSize, then the data, little endian. Writes
 * 8 + data_size bytes to dst; MB_ERR_NOSPACE (dst untouched) when they do
 * not fit, MB_ERR_OVERFLOW when data_size does not fit a u32.
 */
mb_err mb_tagged_event_build(uint32_t tag, const void *data, size_t data_size,
                             uint8_t *dst, size_t dst_size, size_t *ret_size);

/*
 * The digest input of one of mshim's PCR 5 file events: the event data
 * (tagged event: tag, path size, UTF-16LE path with its NUL) followed by
 * the file's bytes (none for the "absent" and "unreadable" tags). Binding
 * the tag and the path into the digest is what keeps two different files,
 * or a file and its absence, from ever giving the same PCR 5 value: the
 * tagged event carries its own length, so the split between event and
 * file content is unambiguous. mb_pcr5_input_size says how many bytes the
 * input needs (MB_ERR_OVERFLOW when that does not fit a size_t);
 * mb_pcr5_input_build writes them.
 */
mb_err mb_pcr5_input_size(size_t path_bytes, size_t file_size, size_t *ret_size);
mb_err mb_pcr5_input_build(uint32_t tag, const uint8_t *path_utf16, size_t path_bytes,
                           const void *file, size_t file_size,
                           uint8_t *dst, size_t dst_size, size_t *ret_size);

/*
 * Will this Linux kernel's EFI stub measure the initrd it receives through
 * LoadFile2 into PCR 9 (tag MB_TAG_LINUX_INITRD)? The stub does so from
 * Linux 5.17; 5.8 to 5.16 take the initrd and measure nothing. Decided
 * from the x86 setup header (Documentation/arch/x86/boot.rst): "HdrS" at
 * 0x202, protocol >= 2.00, kernel_version (0x20e) pointing at a version
 * string "MAJOR.MINOR..." at kernel_version + 0x200. Anything that is not
 * such a kernel, or whose version cannot be read, answers false: mshim
 * then measures the initrd itself, and a second measurement is harmless
 * where one missing is not.
 */
bool mb_linux_stub_measures_initrd(const void *image, size_t size);
/*
 * The kernel version the setup header names (the rules above): MB_OK with
 * MAJOR and MINOR, MB_ERR_INVALID for an image that is not such a kernel
 * or whose version cannot be read (outputs untouched).
 */
mb_err mb_linux_kernel_version(const void *image, size_t size, unsigned *ret_major, unsigned *ret_minor);
/* Will its stub measure LOADED_IMAGE::LoadOptions into PCR 9 (tag
 * MB_TAG_LINUX_LOAD_OPTIONS)? From Linux 6.1; false when the version
 * cannot be read (a predictor then cannot know, and says so). */
bool mb_linux_stub_measures_load_options(const void *image, size_t size);

/* ---- the built-in boot policy (docs/CONFIG.md) -------------------------- */

/* The PE section that carries it, inside what the Authenticode signature
 * covers, so nobody with only ESP write access can weaken it. Its size is
 * fixed: the text, then NUL padding. */
#define MB_BOOT_POLICY_SECTION ".mpolicy"
#define MB_BOOT_POLICY_SIZE    512

typedef struct mb_boot_policy {
        bool tpm_required;      /* "tpm-required yes": no usable TPM, no boot */
        bool tpm_failure_boot;  /* "tpm-failure boot": a failing TPM does not stop the boot */
        mb_totp_mode totp;      /* "totp no|show|require": the floor loader.conf's totp can only raise */
        bool editor_off;        /* "editor no": the menu's editor may not change a command line */
        size_t err_line;        /* set on failure: the offending line, 0 for the whole text */
} mb_boot_policy;

/*
 * Parse the section: "KEY VALUE" lines (loader.conf's grammar), text up to
 * the first NUL, only NULs after it. Keys: tpm-required yes|no (default
 * no), tpm-failure refuse|boot (default refuse), totp no|show|require
 * (default no), editor yes|no (default yes; loader.conf's "editor no"
 * can still turn it off, never on). Unlike loader.conf,
 * unknown keys and repeated keys are MB_ERR_INVALID: a typo in a security
 * policy must not pass as a weaker one. On failure only ret->err_line is
 * written.
 */
mb_err mb_boot_policy_parse(const void *buf, size_t size, mb_boot_policy *ret);
/* The TOTP mode a boot runs with: the built-in floor, raised (never
 * lowered) by loader.conf's (issue 20: "totp no" in loader.conf, which
 * anyone with ESP write access can edit, must not switch off a signed
 * "totp require"). The loader and the predictor both decide with it. */
mb_totp_mode mb_boot_totp_mode(const mb_boot_policy *p, mb_totp_mode conf);
/* The canonical text of p ("tpm-required no\ntpm-failure refuse\ntotp no\n",
 * then "editor no\n" only when the editor is off, so the text of every
 * policy from before the key is unchanged), NUL-terminated; MB_ERR_NOSPACE (dst untouched) when it does not fit. */
mb_err mb_boot_policy_format(const mb_boot_policy *p, char *dst, size_t dst_size, size_t *ret_len);

#endif
