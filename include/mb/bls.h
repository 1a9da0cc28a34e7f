/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Boot Loader Specification Type #1 entries and loader.conf, parsed from a
 * file buffer without allocation: every value is a slice into that buffer,
 * so the buffer must outlive the parsed structure.
 *
 * Line grammar (BLS "Type #1 Boot Loader Entry Keys", systemd-boot's
 * loader.conf(5)): "KEY WHITESPACE VALUE"; lines starting with '#' and blank
 * lines are ignored; leading and trailing whitespace is dropped; unknown keys
 * are ignored; the last line may lack a newline.
 */
#ifndef MB_BLS_H
#define MB_BLS_H

#include "mb/base.h"

/* GNU C modes (-std=gnu11) predefine the macro "linux" as 1, which would
 * turn the mb_bls_entry field below into a syntax error in every file that
 * includes this header. */
#undef linux

#define MB_CONF_MAX_LINE   4096 /* longer lines are rejected: MB_ERR_TOOLONG */
/* The loader reads loader.conf and entry files up to this size; a larger
 * one is measured as unreadable (MB_TAG_FILE_UNREADABLE) and not used. */
#define MB_CONF_FILE_MAX   (64u * 1024)
#define MB_BLS_MAX_INITRD  8
#define MB_BLS_MAX_OPTIONS 16

typedef struct mb_conf_line {
        size_t lineno;          /* 1-based, for messages */
        mb_str key;
        mb_str value;           /* may be empty */
} mb_conf_line;

/* Iterate key/value lines; *off starts at 0. MB_END at end of buffer.
 * MB_ERR_TOOLONG for a line over MB_CONF_MAX_LINE bytes, MB_ERR_INVALID for
 * a NUL byte in the text. *lineno carries the line counter between calls.
 * Whitespace is space, tab and '\r' (so CRLF files work); the key ends at the
 * first space or tab. On an error *lineno is the offending line and *off is
 * unchanged. */
mb_err mb_conf_next(const char *buf, size_t size, size_t *off, size_t *lineno, mb_conf_line *ret);
/* Every line through apply, in order: MB_OK, or the first error (of
 * mb_conf_next or of apply) with *ret_err_line naming its line. */
mb_err mb_conf_each(const char *buf, size_t size, mb_err (*apply)(void *ctx, const mb_conf_line *l), void *ctx,
                    size_t *ret_err_line);

typedef struct mb_bls_entry {
        mb_str id;              /* file name, e.g. "debian-6.1.0-26-amd64.conf" */
        mb_str title, version, machine_id, sort_key;
        mb_str linux, efi;      /* exactly one must be set for a bootable entry */
        mb_str initrd[MB_BLS_MAX_INITRD];
        size_t n_initrd;
        mb_str options[MB_BLS_MAX_OPTIONS]; /* several "options" lines are joined with one space */
        size_t n_options;
        size_t err_line;        /* set when parsing failed */
} mb_bls_entry;

/* Parse one entry file. id is its file name (borrowed). MB_ERR_INVALID when
 * it names neither linux nor efi, both, or exceeds the initrd/options limits
 * (err_line says where). A repeated single-valued key keeps its last value,
 * as in systemd-boot; linux, efi and initrd need a non-empty value; empty
 * options lines are dropped; an entry counts as having a sort-key when its
 * sort-key is non-empty. MB_ERR_UNSUPPORTED (err_line: that options line)
 * when an options line holds "initrd=": the Linux stub would load that
 * file itself, unmeasured, so such an entry is unusable for the loader and
 * the predictor alike. On failure only ret->err_line is written (0 when
 * the file as a whole is to blame, e.g. neither linux nor efi). */
mb_err mb_bls_parse_entry(const char *buf, size_t size, mb_str id, mb_bls_entry *ret);
/* Join the options lines into dst (NUL-terminated), one space between them.
 * MB_ERR_NOSPACE, with dst untouched, when they do not fit; ret_len (the
 * length without the NUL) may be NULL. */
mb_err mb_bls_options_join(const mb_bls_entry *e, char *dst, size_t dst_size, size_t *ret_len);
/* BLS/systemd-boot sort order: entries with sort-key first, by sort-key,
 * then machine-id, then version (newest first); then the rest by id
 * (newest version first). Returns <0 when a sorts before b. */
int mb_bls_compare(const mb_bls_entry *a, const mb_bls_entry *b);
/* systemd's version comparison (strverscmp_improved semantics). */
int mb_vercmp(mb_str a, mb_str b);

typedef enum mb_tristate { MB_UNSET = 0, MB_NO, MB_YES } mb_tristate;

/* "totp" (mshim, docs/CONFIG.md "TOTP"): show a TPM-made TOTP code before
 * the kernel starts; with REQUIRE, boot nothing when no code can be made. */
typedef enum mb_totp_mode { MB_TOTP_NO = 0, MB_TOTP_SHOW, MB_TOTP_REQUIRE } mb_totp_mode;
#define MB_TOTP_TIMEOUT_DEFAULT 30u
#define MB_TOTP_TIMEOUT_MAX     3600u

typedef struct mb_loader_conf {
        mb_str default_glob;    /* "default" */
        int64_t timeout;        /* "timeout" seconds, -1 when unset */
        mb_tristate tpm_required;  /* "tpm-required yes|no" (mshim) */
        mb_tristate editor;     /* "editor" (systemd-boot's boolean): "no" turns the menu's editor off */
        mb_str chainload;       /* "chainload PATH" (mshim): next stage when there are no entries */
        mb_totp_mode totp;      /* "totp no|show|require" (mshim), default no */
        uint32_t totp_timeout;  /* "totp-timeout SECONDS" 0..MB_TOTP_TIMEOUT_MAX (0: until a key) */
        bool rtc_local;         /* "rtc local" (or an rtc-offset): the RTC keeps local time */
        bool rtc_offset_set;    /* "rtc-offset +HH:MM": the offset, not EFI_TIME.TimeZone */
        int32_t rtc_offset_min; /* local = UTC + this */
        size_t err_line;
} mb_loader_conf;

/* "timeout" values (systemd-boot loader.conf(5)). A number of seconds from 0
 * to MB_TIMEOUT_MAX (systemd-boot keeps it in 32 bits): the menu counts
 * down that long; "menu-hidden" is 0: no menu unless a key is pressed
 * (include/mb/menu.h); "menu-disabled": no menu, keys or not
 * (MB_TIMEOUT_MENU_DISABLED); "menu-force" shows the menu and waits for the
 * user (MB_TIMEOUT_MENU_FORCE). Anything else is MB_ERR_INVALID with
 * err_line set. */
#define MB_TIMEOUT_UNSET         (-1)
#define MB_TIMEOUT_MAX           ((int64_t) UINT32_MAX)
#define MB_TIMEOUT_MENU_FORCE    INT64_MAX
#define MB_TIMEOUT_MENU_DISABLED (INT64_MAX - 1)

/* Keys: default, timeout, tpm-required (yes/no/true/false/on/off/1/0, else
 * MB_ERR_INVALID), editor (systemd-boot's booleans: those and y/n/t/f, else
 * MB_ERR_INVALID), chainload (non-empty path, else MB_ERR_INVALID), totp
 * (no|show|require), totp-timeout (decimal seconds), rtc (utc|local),
 * rtc-offset ([+-]HH:MM, at most 24:00; implies rtc local); other
 * keys are systemd-boot's (console-mode, auto-entries, ...) and are ignored. On
 * failure only ret->err_line is written (0 when no line is to blame). */
mb_err mb_loader_conf_parse(const char *buf, size_t size, mb_loader_conf *ret);
/* fnmatch-style match of '*', '?' and '[...]' (no escapes needed by BLS ids). */
bool mb_glob_match(mb_str pattern, mb_str s);
/* Does the loader.conf default pattern select this entry? Matches the id
 * with and without its ".conf" suffix, as systemd-boot does. */
bool mb_bls_is_default(mb_str pattern, const mb_bls_entry *e);

/* ASCII/UTF-8 to UTF-16LE bytes with a terminating NUL (2 bytes); the code
 * units are written little-endian regardless of host order. Returns the
 * number of bytes written including the NUL. Non-ASCII UTF-8 sequences are
 * decoded; invalid ones give MB_ERR_INVALID. Overlong forms, surrogates,
 * values above U+10FFFF and U+0000 (it would end the string early) are
 * invalid; characters above U+FFFF become surrogate pairs. MB_ERR_NOSPACE
 * when dst is too small; dst is untouched on every failure. */
mb_err mb_utf8_to_utf16le(const char *s, size_t len, uint8_t *dst, size_t dst_size, size_t *ret_bytes);

#endif
