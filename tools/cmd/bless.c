/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * mshim bless: mark this boot good (systemd-bless-boot's job for mshim,
 * Boot Loader Specification "Boot counting"): the entry the loader booted
 * (LoaderEntrySelected, set by mshim before each entry it tries) loses its
 * boot counter, NAME+LEFT-DONE.conf becoming NAME.conf, so the loader no
 * longer counts its tries down. The counter is not measured, so the next
 * boot's PCRs do not change (docs/MEASUREMENTS.md).
 *
 * With --revoke (the kernel hook's REVOKE_AFTER_BLESS=yes), a boot blessed
 * now, the first good boot of a new entry, also ends every approval that is
 * not this boot's (`mshim policy revoke --others`), so the kernel booted before it,
 * perhaps a vulnerable one, no longer unseals. Until that bless the older
 * boots stay approved: they are the way back if the new entry fails.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "cli.h"
#include "efivar.h"
#include "safeio.h"
#include "mb/plan.h"

/* The ESP: --esp, else the first of the usual mount points that holds
 * loader/entries. */
static const char *find_esp(const char *given) {
        static const char *const where[] = { "/efi", "/boot/efi", "/boot" };
        char p[64];

        if (given)
                return given;
        for (size_t i = 0; i < sizeof(where) / sizeof(where[0]); i++) {
                snprintf(p, sizeof(p), "%s/loader/entries", where[i]);
                if (access(p, F_OK) == 0)
                        return where[i];
        }
        return NULL;
}

/* The counted entry file whose id is `id`, into found (at most one). */
typedef struct bless_find {
        char name[MB_PLAN_NAME_MAX];
        size_t n_counted;
        bool plain;             /* the id's own file, without counter, exists */
} bless_find;

static int find_entry(const char *dir, const char *id, bless_find *f) {
        DIR *d = opendir(dir);
        struct dirent *de;

        if (!d) {
                cli_error("%s: cannot list it: %s", dir, strerror(errno));
                return -1;
        }
        while ((de = readdir(d))) {
                mb_str name = { de->d_name, strlen(de->d_name) }, eid;
                char buf[MB_PLAN_NAME_MAX];
                mb_plan_counter c;

                if (mb_plan_entry_id(name, buf, sizeof(buf), &eid) != MB_OK || eid.len != strlen(id) ||
                    memcmp(eid.p, id, eid.len) != 0)
                        continue;
                mb_plan_counter_parse(name, &c);
                if (!c.counted) {
                        f->plain = true;
                } else if (f->n_counted++ == 0) {
                        snprintf(f->name, sizeof(f->name), "%s", de->d_name);
                }
        }
        closedir(d);
        return 0;
}

/* Rename without ever replacing a file (RENAME_NOREPLACE; where the file
 * system lacks it, a check first), then sync the file and the directory
 * (cli_sync_renamed: on FAT the directory alone leaves an empty entry
 * after a power cut). */
static int rename_noreplace(const char *dir, const char *from, const char *to) {
        int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC), r = -1;

        if (dfd < 0) {
                cli_error("%s: %s", dir, strerror(errno));
                return -1;
        }
        if (renameat2(dfd, from, dfd, to, RENAME_NOREPLACE) == 0) {
                r = 0;
        } else if (errno == EINVAL || errno == ENOSYS) {
                if (faccessat(dfd, to, F_OK, AT_SYMLINK_NOFOLLOW) == 0)
                        errno = EEXIST;
                else
                        r = renameat(dfd, from, dfd, to);
        }
        if (r < 0)
                cli_error("%s: cannot rename %s to %s: %s", dir, from, to, strerror(errno));
        else if (cli_sync_renamed(dfd, to) < 0) {
                /* Not durable: a power cut may still undo it (or, on FAT,
                 * leave the entry empty); the unit fails and says so. */
                cli_error("%s: renamed %s to %s, but syncing it to disk failed: %s", dir, from, to, strerror(errno));
                r = -1;
        }
        close(dfd);
        return r;
}

/* --revoke, once the boot is blessed: before `mshim policy init` there is
 * nothing approved to revoke. */
static int revoke_others(const char *state, const char *esp, const char *pass) {
        char pub[4096];

        snprintf(pub, sizeof(pub), "%s/policy.pub", state);
        if (access(pub, F_OK) < 0) {
                printf("%s: absent (mshim policy init has not run): no approval to revoke\n", pub);
                return 0;
        }
        printf("revoking the approvals of every other boot (--revoke)\n");
        {
                char *argv[] = { "policy", "revoke", "--others", "--state-dir", (char *) state, "--esp", (char *) esp,
                                 pass ? "--pass-file" : NULL, (char *) pass, NULL };
                return cmd_policy(pass ? 9 : 7, argv);
        }
}

int cmd_bless(int argc, char **argv) {
        static const struct option longopts[] = {
                { "esp", required_argument, NULL, 'E' },
                { "vars", required_argument, NULL, 'v' },
                { "revoke", no_argument, NULL, 'R' },
                { "state-dir", required_argument, NULL, 'D' },
                { "pass-file", required_argument, NULL, 'P' },
                { "help", no_argument, NULL, 'h' },
                { 0 },
        };
        const char *esp_opt = NULL, *store = NULL, *esp, *state = NULL, *pass = NULL;
        bool revoke = false;
        char *id = NULL, *dir = NULL, target[MB_PLAN_NAME_MAX];
        bless_find f = { .n_counted = 0 };
        int c, ret = EXIT_BAD_INPUT;

        optind = 1;
        while ((c = cli_getopt(argc, argv, "h", longopts, "bless")) != -1) {
                int once = 0;

                switch (c) {
                case 'E': once = cli_opt_once(&esp_opt, "--esp", optarg); break;
                case 'v': once = cli_opt_once(&store, "--vars", optarg); break;
                case 'R': revoke = true; break;
                case 'D': once = cli_opt_once(&state, "--state-dir", optarg); break;
                case 'P': once = cli_opt_once(&pass, "--pass-file", optarg); break;
                case 'h': cli_help(stdout, "bless"); return 0;
                default: return EXIT_BAD_INPUT;
                }
                if (once < 0)
                        return EXIT_BAD_INPUT;
        }
        if (optind < argc)
                return cli_usage_error("bless", "unexpected argument '%s'", argv[optind]);
        if (!revoke && (state || pass))
                return cli_usage_error("bless", "--state-dir and --pass-file go with --revoke");
        esp = find_esp(esp_opt);
        if (!esp) {
                cli_error("no ESP with loader/entries at /efi, /boot/efi or /boot: give --esp DIR");
                return EXIT_BAD_INPUT;
        }
        if (efivar_get_id(store, "LoaderEntrySelected", &id) < 0)
                return EXIT_BAD_INPUT;
        if (!id) {
                printf("LoaderEntrySelected is not set (this boot did not come through mshim): nothing to bless\n");
                return 0;
        }
        if (asprintf(&dir, "%s/loader/entries", esp) < 0) {
                dir = NULL;
                cli_error("out of memory");
                goto out;
        }
        if (find_entry(dir, id, &f) < 0)
                goto out;
        if (f.n_counted == 0) {
                ret = f.plain ? 0 : EXIT_BAD_INPUT;
                if (f.plain)
                        printf("%s: no boot counter: already good\n", id);
                else
                        cli_error("%s: no entry %s (LoaderEntrySelected)", dir, id);
                goto out;
        }
        ret = EXIT_CHECK_FAILED;
        if (f.n_counted > 1 || f.plain) {
                cli_error("%s: %s has %s: not renaming any (remove the stale one)", dir, id,
                          f.plain ? "a file without counter as well" : "several counted files");
                goto out;
        }
        snprintf(target, sizeof(target), "%s", id);
        if (rename_noreplace(dir, f.name, target) < 0)
                goto out;
        printf("%s -> %s\n", f.name, target);
        ret = revoke ? revoke_others(state ? state : "/var/lib/mshim", esp, pass) : 0;
out:
        free(id);
        free(dir);
        return ret;
}
