/* SPDX-License-Identifier: BSD-2-Clause */
/* mshim: the host-side companion of the mshimx64.efi loader. */
#include <string.h>
#include "cli.h"

/* Every command; `mshim help NAME` is `mshim NAME --help`. The help texts
 * are man/mshim.1.txt and man/mshim-NAME.1.txt (tools/lib/help.h). */
static const struct {
        const char *name;
        int (*fn)(int argc, char **argv);
} commands[] = {
        { "log", cmd_log },
        { "pcrs", cmd_pcrs },
        { "vars", cmd_vars },
        { "sign", cmd_sign },
        { "sigs", cmd_sigs },
        { "pe-hash", cmd_pe_hash },
        { "sbat", cmd_sbat },
        { "boot-policy", cmd_boot_policy },
        { "predict", cmd_predict },
        { "policy", cmd_policy },
        { "seal", cmd_seal },
        { "unseal", cmd_unseal },
        { "fence", cmd_fence },
        { "luks", cmd_luks },
        { "totp", cmd_totp },
        { "attest", cmd_attest },
        { "verify", cmd_verify },
        { "set-default", cmd_set_default },
        { "set-oneshot", cmd_set_oneshot },
        { "bless", cmd_bless },
        { "install", cmd_install },
        { "uninstall", cmd_uninstall },
        { "status", cmd_status },
};

/* `mshim help log diff` and `mshim help "log diff"`: the words, joined by
 * spaces, name a help text. */
static int cmd_help(int argc, char **argv) {
        char unit[64] = "";
        size_t len = 0;

        for (int i = 0; i < argc; i++) {
                size_t n = strlen(argv[i]);
                if (n >= sizeof(unit) - len - 1)
                        return cli_usage_error("", "unknown command '%s'", argv[i]);
                if (i)
                        unit[len++] = ' ';
                memcpy(unit + len, argv[i], n + 1);
                len += n;
        }
        if (cli_help(stdout, unit) < 0)
                return cli_usage_error("", "unknown command '%s'", unit);
        return 0;
}

int main(int argc, char **argv) {
        const char *cmd = argc > 1 ? argv[1] : NULL;

        if (!cmd)
                return cli_usage_error("", "no command given");
        if (!strcmp(cmd, "-h") || !strcmp(cmd, "--help")) {
                cli_help(stdout, "");
                return 0;
        }
        if (!strcmp(cmd, "help"))
                return cmd_help(argc - 2, argv + 2);
        if (!strcmp(cmd, "--version")) {
                printf("mshim %s\n", MB_VERSION);
                return 0;
        }
        for (size_t i = 0; i < MB_ARRAY_SIZE(commands); i++)
                if (!strcmp(cmd, commands[i].name))
                        return commands[i].fn(argc - 1, argv + 1);
        if (cmd[0] == '-')
                return cli_usage_error("", "unknown option '%s'", cmd);
        return cli_usage_error("", "unknown command '%s'", cmd);
}
