/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * mshim set-default ID, mshim set-oneshot ID: the Boot Loader Interface's
 * LoaderEntryDefault and LoaderEntryOneShot, which the loader's boot plan
 * follows (src/plan.c: OneShot, then Default, then loader.conf's glob),
 * written through efivarfs or, with --vars FILE, into an OVMF variable
 * store (tools/lib/efivar.c). An empty ID deletes the variable.
 */
#include <getopt.h>
#include <string.h>
#include "cli.h"
#include "efivar.h"

static int set_entry_var(int argc, char **argv, const char *cmd, const char *var) {
        static const struct option longopts[] = {
                { "vars", required_argument, NULL, 'v' },
                { "help", no_argument, NULL, 'h' },
                { 0 },
        };
        const char *store = NULL;
        int c;

        optind = 1;
        while ((c = cli_getopt(argc, argv, "h", longopts, cmd)) != -1) {
                switch (c) {
                case 'v':
                        if (cli_opt_once(&store, "--vars", optarg) < 0)
                                return EXIT_BAD_INPUT;
                        break;
                case 'h':
                        cli_help(stdout, cmd);
                        return 0;
                default:
                        return EXIT_BAD_INPUT;
                }
        }
        if (argc - optind != 1)
                return argc - optind ? cli_usage_error(cmd, "unexpected argument '%s'", argv[optind + 1])
                                     : cli_usage_error(cmd, "no entry ID given");
        /* An id names an entry file: a path would name none. */
        if (strpbrk(argv[optind], "/\\"))
                return cli_usage_error(cmd, "'%s' is not an entry id (a file name in loader/entries, "
                                       "with or without .conf)", argv[optind]);
        if (efivar_set_id(store, var, *argv[optind] ? argv[optind] : NULL, EFIVAR_ATTR_NV_BS_RT) < 0)
                return EXIT_BAD_INPUT;
        return 0;
}

int cmd_set_default(int argc, char **argv) {
        return set_entry_var(argc, argv, "set-default", "LoaderEntryDefault");
}

int cmd_set_oneshot(int argc, char **argv) {
        return set_entry_var(argc, argv, "set-oneshot", "LoaderEntryOneShot");
}
