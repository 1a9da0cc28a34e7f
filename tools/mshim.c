/* SPDX-License-Identifier: BSD-2-Clause */
/* mshim: the host-side companion of the mshimx64.efi loader. */
#include <string.h>
#include "cli.h"

/* Every command; 'mshim help NAME' is 'mshim NAME --help'. */
static const struct {
        const char *name;
        int (*fn)(int argc, char **argv);
} commands[] = {
        { "log", cmd_log },
        { "vars", cmd_vars },
        { "sign", cmd_sign },
        { "pe-hash", cmd_pe_hash },
        { "sbat", cmd_sbat },
        { "boot-policy", cmd_boot_policy },
        { "predict", cmd_predict },
};

static void usage(FILE *f) {
        fprintf(f,
"Usage: mshim COMMAND [OPTIONS] [ARGS]\n"
"\n"
"Host tools for the mshim measured-boot loader.\n"
"\n"
"Commands:\n"
"  log [FILE]       decode, check and replay a TCG event log (default: this\n"
"                   machine's /sys/kernel/security/tpm0/binary_bios_measurements);\n"
"                   compare it with PCR values (--pcrs FILE, --tpm)\n"
"  log diff A B     show the event-level differences between two boots' logs\n"
"  vars SUB FILE    list, read and edit an OVMF variable store (keys, MOK)\n"
"  sign IMAGE       Authenticode-sign an EFI image or kernel (--key, --cert)\n"
"  pe-hash IMAGE... print images' Authenticode digests (as PCR 4 and db see them)\n"
"  sbat IMAGE       print an image's SBAT records; check them against a policy\n"
"  boot-policy IMAGE show or set mshimx64.efi's built-in boot policy (before signing)\n"
"  predict          the next boot's PCR values from this boot's log and the\n"
"                   next boot's files (--esp DIR, --kernel, --initrd, ...)\n"
"  help [COMMAND]   show this help, or a command's\n"
"\n"
"Options:\n"
"  -h, --help       show this help\n"
"  --version        print the version\n"
"\n"
"Run 'mshim COMMAND --help' for a command's options. Exit status: 0 success,\n"
"1 a check failed, 2 bad usage or unreadable/malformed input.\n"
"See README.md and docs/ for the loader, its configuration and its measurements.\n");
}

int main(int argc, char **argv) {
        const char *cmd = argc > 1 ? argv[1] : NULL;

        if (!cmd) {
                usage(stderr);
                return EXIT_BAD_INPUT;
        }
        if (!strcmp(cmd, "-h") || !strcmp(cmd, "--help")) {
                usage(stdout);
                return 0;
        }
        if (!strcmp(cmd, "help")) {
                for (size_t i = 0; argc > 2 && i < MB_ARRAY_SIZE(commands); i++)
                        if (!strcmp(argv[2], commands[i].name)) {
                                char *args[] = { argv[2], "--help", NULL };
                                return commands[i].fn(2, args);
                        }
                if (argc > 2) {
                        cli_error("unknown command '%s'; see 'mshim --help'", argv[2]);
                        return EXIT_BAD_INPUT;
                }
                usage(stdout);
                return 0;
        }
        if (!strcmp(cmd, "--version")) {
                printf("mshim %s\n", MB_VERSION);
                return 0;
        }
        for (size_t i = 0; i < MB_ARRAY_SIZE(commands); i++)
                if (!strcmp(cmd, commands[i].name))
                        return commands[i].fn(argc - 1, argv + 1);
        cli_error("unknown command '%s'; see 'mshim --help'", cmd);
        return EXIT_BAD_INPUT;
}
