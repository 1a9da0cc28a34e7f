/* SPDX-License-Identifier: BSD-2-Clause */
/* --help texts (generated from man/NAME.txt) and one form for usage errors. */
#define _GNU_SOURCE     /* vasprintf */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cli.h"

int cli_help(FILE *f, const char *unit) {
        for (const cli_help_page *p = cli_help_pages; p->unit; p++)
                if (!strcmp(p->unit, unit)) {
                        fputs(p->text, f);
                        return 0;
                }
        return -1;
}

int cli_usage_error(const char *unit, const char *fmt, ...) {
        char *msg = NULL;
        va_list ap;
        int n;

        va_start(ap, fmt);
        n = vasprintf(&msg, fmt, ap);
        va_end(ap);
        cli_error("%s; see 'mshim%s%s --help'", n >= 0 ? msg : fmt, *unit ? " " : "", unit);
        if (n >= 0)
                free(msg);
        return EXIT_BAD_INPUT;
}

/* What getopt_long found wrong with argv[optind - 1] (getopt's own
 * messages, turned off by opterr = 0, would start with the command's name
 * instead of "mshim:" and not point to the help). */
static void bad_option(char **argv, const char *shortopts, const char *unit) {
        const char *arg = argv[optind - 1];

        if (!strncmp(arg, "--", 2)) {
                size_t n = strcspn(arg, "=");
                if (!optopt)
                        cli_usage_error(unit, "unknown or ambiguous option '%.*s'", (int) n, arg);
                else if (arg[n])
                        cli_usage_error(unit, "option '%.*s' takes no value", (int) n, arg);
                else
                        cli_usage_error(unit, "option '%s' needs a value", arg);
        } else if (optopt && strchr(shortopts, optopt))
                cli_usage_error(unit, "option '-%c' needs a value", optopt);
        else
                cli_usage_error(unit, "unknown option '-%c'", optopt ? optopt : '?');
}

int cli_getopt(int argc, char **argv, const char *shortopts, const struct option *longopts, const char *unit) {
        int c;

        opterr = 0;
        c = getopt_long(argc, argv, shortopts, longopts, NULL);
        if (c == '?')
                bad_option(argv, shortopts, unit);
        return c;
}
