/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Help texts and usage errors. The texts are generated at build time from
 * the manual pages' sources (man/NAME.txt, scripts/mkman.py) into
 * build/gen/help.c, so `mshim X --help`, `mshim help X` and mshim-X(1)
 * cannot disagree.
 */
#ifndef MB_HELP_H
#define MB_HELP_H

#include <getopt.h>
#include <stdio.h>

typedef struct cli_help_page {
        const char *unit;       /* "" (mshim itself), "log", "log diff", ... */
        const char *text;
} cli_help_page;
extern const cli_help_page cli_help_pages[];   /* ends with { NULL, NULL } */

/* Print the help of `mshim UNIT` to f: 0, or -1 when there is none. */
int cli_help(FILE *f, const char *unit);

/* A usage error: "mshim: MESSAGE; see 'mshim UNIT --help'" on one line.
 * Returns EXIT_BAD_INPUT, for `return cli_usage_error(...)`. */
int cli_usage_error(const char *unit, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* getopt_long over a command's options, quiet: an unknown option, a
 * missing or unexpected argument comes back as '?' with the usage error
 * already printed (see cli_usage_error). */
int cli_getopt(int argc, char **argv, const char *shortopts, const struct option *longopts, const char *unit);

#endif
