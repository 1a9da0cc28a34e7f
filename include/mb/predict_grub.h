/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * GRUB 2.06's measured commands, for mshim predict (docs/predict.md "GRUB
 * as next stage"). Pure: no I/O, no allocation.
 *
 * GRUB's tpm module measures, with Secure Boot off (docs/MEASUREMENTS.md):
 * into PCR 8 an EV_IPL "grub_cmd: <command>" for each command it runs,
 * the text being the command's words after GRUB's own quote removal,
 * joined by one space, and "kernel_cmdline: <path> <args>" when linux
 * builds the kernel's command line; into PCR 9 an EV_IPL per file it opens
 * (data the path, digest the hash of the file's bytes). Only a small
 * subset of grub.cfg is predicted exactly: one command per line, no
 * variables, no escapes, no menus or conditionals, and the commands set,
 * echo, search, linux/linuxefi, initrd/initrdefi and a final boot.
 */
#ifndef MB_PREDICT_GRUB_H
#define MB_PREDICT_GRUB_H

#include "mb/base.h"

#define MB_GRUB_MAX_WORDS 64

/* One line's words: buf holds them joined by one space (the text GRUB
 * measures after "grub_cmd: "); word i is buf[off[i]..off[i] + len[i]). */
typedef struct mb_grub_words {
        size_t n;
        size_t off[MB_GRUB_MAX_WORDS];
        size_t len[MB_GRUB_MAX_WORDS];
        size_t text_len;
} mb_grub_words;

/*
 * Split one grub.cfg line (no newline in it) into words as GRUB's lexer
 * does for the subset: blanks separate words, '...' and "..." quote (the
 * quotes removed), # at a word's start comments out the rest. buf needs
 * len bytes (the text is never longer than the line). MB_END for a blank
 * or comment line; MB_ERR_UNSUPPORTED, with *ret_why, for anything the
 * subset does not cover ($ variables, \ escapes, ; | & < > { }, an
 * unterminated or empty quoted word, too many words); MB_ERR_NOSPACE when
 * cap < len. ret untouched on failure.
 * measured: line is a text GRUB logged after "grub_cmd: " instead (the
 * words joined by one space, quotes already removed): split at each space;
 * an empty word (a word that held a blank) is MB_ERR_UNSUPPORTED.
 */
mb_err mb_grub_line_words(const char *line, size_t len, bool measured, char *buf, size_t cap, mb_grub_words *ret,
                          const char **ret_why);

/* What a command of the subset makes GRUB measure. */
typedef enum mb_grub_cmd_kind {
        MB_GRUB_CMD_PLAIN = 0,  /* set, echo, search without --file: PCR 8 only */
        MB_GRUB_CMD_SEARCH_FILE,/* search --file: PCR 8, and PCR 9 for the file found (word file_word) */
        MB_GRUB_CMD_LINUX,      /* PCR 8, PCR 9 for the kernel (word 1), PCR 8 kernel_cmdline */
        MB_GRUB_CMD_INITRD,     /* PCR 8, PCR 9 for each file (words 1..n-1) */
        MB_GRUB_CMD_BOOT,       /* PCR 8; GRUB then starts the kernel: nothing after it runs */
} mb_grub_cmd_kind;

/*
 * Classify a line's words. MB_ERR_UNSUPPORTED with *ret_why for a command
 * or a form outside the subset; for MB_GRUB_CMD_SEARCH_FILE, *ret_file_word
 * is the index of the searched path. For linux, the words after the path
 * must hold no blank, quote or backslash (GRUB escapes those when it
 * builds the command line: not predicted).
 */
mb_err mb_grub_cmd_classify(const char *buf, const mb_grub_words *w, mb_grub_cmd_kind *ret_kind,
                            size_t *ret_file_word, const char **ret_why);

#endif
