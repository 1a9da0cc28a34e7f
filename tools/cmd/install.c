/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * mshim install, mshim uninstall: put mshim on the ESP in a directory of
 * its own (EFI/mshim, which no GRUB or shim update writes), signed when a
 * key is given, behind Debian's signed shim with --shim; loader.conf when
 * there is none; one entry per installed kernel, written by the kernel hook
 * itself (hooks/kernel-hook, so install and the hook write the same bytes);
 * a firmware boot entry as BootNext only, made the default by --confirm.
 * What was done is recorded in the state directory (tools/lib/instrec.h)
 * and `mshim uninstall` undoes exactly that. docs/UPGRADES.md "mshim
 * install".
 *
 * The ESP belongs to whoever had the disk (docs/SECURITY.md): what is
 * written there comes from the package (/usr/lib/mshim), /boot and the
 * state directory, never from the ESP; only uninstall reads ESP files, to
 * compare them with the hashes it recorded before it deletes them.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <getopt.h>
#include <limits.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <openssl/x509.h>
#include "cli.h"
#include "instrec.h"
#include "safeio.h"
#include "sigs.h"
#include "mb/pe.h"
#include "mb/plan.h"
#include "mb/sha.h"

/* Where the package puts the loader and the hook; the Makefile's LIBDIR
 * (a `make install` under /usr/local) is tried after it. */
#define PKG_LIBDIR "/usr/lib/mshim"
#ifndef MB_LIBDIR
#define MB_LIBDIR "/usr/local/lib/mshim"
#endif
#define SHIM_DIR "/usr/lib/shim"
#define MSHIM_DIR "EFI/mshim"
#define BOOT_LABEL "mshim"

typedef struct inst_opts {
        const char *esp, *key, *cert, *pass_file, *loader, *shim_dir, *boot, *root, *state_dir, *efibootmgr,
                *disk, *part;
        bool shim, enroll_mok, no_boot_entry, dry_run, update, confirm, trial;
} inst_opts;

/* Strings made along the way, freed together at the end. */
typedef struct strs {
        char **v;
        size_t n;
} strs;

static char *sfmt(strs *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static char *sfmt(strs *s, const char *fmt, ...) {
        char *p = NULL, **n;
        va_list ap;
        int r;

        va_start(ap, fmt);
        r = vasprintf(&p, fmt, ap);
        va_end(ap);
        n = r < 0 ? NULL : realloc(s->v, (s->n + 1) * sizeof(*n));
        if (!n) {
                if (r >= 0)
                        free(p);
                cli_error("out of memory");
                return NULL;
        }
        s->v = n;
        s->v[s->n++] = p;
        return p;
}

static void strs_free(strs *s) {
        for (size_t i = 0; i < s->n; i++)
                free(s->v[i]);
        free(s->v);
}

typedef struct ctx {
        const inst_opts *o;
        strs s;
        const char *root;       /* "" or --root */
        const char *state, *record, *esp, *boot;
        instrec rec;
} ctx;

/* ---- running programs ------------------------------------------------------ */

/* Run argv (PATH searched) with standard error and input inherited; its
 * standard output captured into *out (NUL-terminated, malloc()ed) when out
 * is given, else inherited. Returns its exit status, 127 when it cannot be
 * run, -1 when it died of a signal. */
static int run(char *const argv[], char **out) {
        int p[2] = { -1, -1 }, status;
        char *buf = NULL;
        size_t len = 0, cap = 0;
        pid_t pid;

        out_flush();
        fflush(stdout);
        fflush(stderr);
        if (out && pipe2(p, O_CLOEXEC) < 0) {
                cli_error("cannot run %s: %s", argv[0], strerror(errno));
                return -1;
        }
        pid = fork();
        if (pid == 0) {
                if (out && dup2(p[1], 1) < 0)
                        _exit(127);
                execvp(argv[0], argv);
                _exit(127);
        }
        if (out)
                close(p[1]);
        if (pid < 0) {
                if (out)
                        close(p[0]);
                cli_error("cannot run %s: %s", argv[0], strerror(errno));
                return -1;
        }
        while (out) {
                ssize_t n;
                if (cap - len < 4097) {
                        char *nb = realloc(buf, cap = cap ? cap * 2 : 8192);
                        if (!nb)
                                break;
                        buf = nb;
                }
                n = read(p[0], buf + len, cap - len - 1);
                if (n < 0 && errno == EINTR)
                        continue;
                if (n <= 0)
                        break;
                len += (size_t) n;
        }
        if (out)
                close(p[0]);
        while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
                ;
        if (out) {
                if (!buf)
                        buf = calloc(1, 1);
                else
                        buf[len] = '\0';
                *out = buf;
        }
        return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/* A file wholly into memory (at most max_mib MiB). */
static int load(const char *path, size_t max_mib, const char *what, cli_file *ret) {
        return cli_file_load_max(path, max_mib << 20, what, ret);
}

/* ---- the firmware's boot entries, through efibootmgr ------------------------ */

typedef struct fw_list {
        char order[512];        /* BootOrder, as efibootmgr prints it ("" when none) */
        char next[5];           /* BootNext, "" when unset */
        uint8_t seen[65536 / 8];        /* bit N: Boot%04X exists */
} fw_list;

static const char *efibootmgr_prog(const ctx *c) {
        const char *e = getenv("MSHIM_EFIBOOTMGR");

        return c->o->efibootmgr ? c->o->efibootmgr : e && *e ? e : "efibootmgr";
}

/* `efibootmgr` with ARGS (NULL-terminated, at most 10); its listing into
 * ret when ret is given (every call prints it). 0, or -1 with a message. */
static int efibootmgr(const ctx *c, fw_list *ret, ...) {
        char *argv[12] = { (char *) efibootmgr_prog(c) }, *out = NULL, *line, *save = NULL;
        va_list ap;
        size_t n = 1;
        int r;

        va_start(ap, ret);
        while (n < 11 && (argv[n] = va_arg(ap, char *)))
                n++;
        va_end(ap);
        r = run(argv, &out);
        if (r != 0) {
                cli_error("%s %s failed (%s)", argv[0], argv[1] ? argv[1] : "",
                          r == 127 ? "not found: install the Debian package efibootmgr" : "above");
                free(out);
                return -1;
        }
        if (ret) {
                memset(ret, 0, sizeof(*ret));
                for (line = strtok_r(out, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
                        unsigned num;
                        if (!strncmp(line, "BootOrder: ", 11))
                                snprintf(ret->order, sizeof(ret->order), "%s", line + 11);
                        else if (!strncmp(line, "BootNext: ", 10))
                                snprintf(ret->next, sizeof(ret->next), "%.4s", line + 10);
                        else if (!strncmp(line, "Boot", 4) && strspn(line + 4, "0123456789ABCDEFabcdef") == 4 &&
                                 sscanf(line + 4, "%4x", &num) == 1)
                                ret->seen[num / 8] |= (uint8_t) (1u << (num % 8));
                }
        }
        free(out);
        return 0;
}

static bool fw_has(const fw_list *l, unsigned num) { return l->seen[num / 8] & (1u << (num % 8)); }

/* ---- the ESP ---------------------------------------------------------------- */

/* mountinfo's octal escapes (\040 for a space) undone in place. */
static void unescape(char *s) {
        char *d = s;

        for (; *s; s++) {
                if (s[0] == '\\' && s[1] >= '0' && s[1] <= '3' && s[2] >= '0' && s[2] <= '7' && s[3] >= '0' &&
                    s[3] <= '7') {
                        *d++ = (char) ((s[1] - '0') * 64 + (s[2] - '0') * 8 + (s[3] - '0'));
                        s += 3;
                } else
                        *d++ = *s;
        }
        *d = '\0';
}

/* The mount at MOUNTPOINT in ROOT/proc/self/mountinfo (proc(5)): its file
 * system type and source device into fstype/source (bounded copies). 0
 * when found, 1 when nothing is mounted there, -1 when unreadable. The
 * last mount of a point is the one seen. */
static int mount_lookup(const ctx *c, const char *mountpoint, char fstype[32], char source[PATH_MAX]) {
        char path[PATH_MAX], line[8192];
        FILE *f;
        int found = 1;

        snprintf(path, sizeof(path), "%s/proc/self/mountinfo", c->root);
        if (!(f = fopen(path, "re")))
                return -1;
        while (fgets(line, sizeof(line), f)) {
                char *fld[12] = { 0 }, *save = NULL, *dash;
                int n = 0;
                if (!(dash = strstr(line, " - ")))
                        continue;
                *dash = '\0';
                for (char *t = strtok_r(line, " ", &save); t && n < 6; t = strtok_r(NULL, " ", &save))
                        fld[n++] = t;
                if (n < 5)
                        continue;
                unescape(fld[4]);
                if (strcmp(fld[4], mountpoint) != 0)
                        continue;
                save = NULL;
                fld[6] = strtok_r(dash + 3, " \n", &save);
                fld[7] = fld[6] ? strtok_r(NULL, " \n", &save) : NULL;
                if (!fld[6] || !fld[7])
                        continue;
                unescape(fld[7]);
                snprintf(fstype, 32, "%s", fld[6]);
                snprintf(source, PATH_MAX, "%s", fld[7]);
                found = 0;
        }
        fclose(f);
        return found;
}

/* The ESP: --esp, else the vfat mount at /boot/efi or /efi. Its device,
 * when known, into dev (for the boot entry). */
static int find_esp(ctx *c, char dev[PATH_MAX]) {
        static const char *const where[] = { "/boot/efi", "/efi" };
        char fstype[32];
        struct stat st;

        dev[0] = '\0';
        if (c->o->esp) {
                const char *mp = c->o->esp;
                size_t rl = strlen(c->root);
                if (rl && !strncmp(mp, c->root, rl) && mp[rl] == '/')
                        mp += rl;
                if (mount_lookup(c, mp, fstype, dev) != 0)
                        dev[0] = '\0';
                c->esp = c->o->esp;
        } else {
                for (size_t i = 0; i < MB_ARRAY_SIZE(where) && !c->esp; i++) {
                        int r = mount_lookup(c, where[i], fstype, dev);
                        if (r < 0) {
                                cli_error("%s/proc/self/mountinfo: cannot read it (give --esp DIR)", c->root);
                                return -1;
                        }
                        if (r == 0 && strcmp(fstype, "vfat") != 0) {
                                cli_error("%s is mounted, but as %s, not vfat: not an EFI system partition (give --esp DIR)",
                                          where[i], fstype);
                                return -1;
                        }
                        if (r == 0 && !(c->esp = sfmt(&c->s, "%s%s", c->root, where[i])))
                                return -1;
                }
                if (!c->esp) {
                        cli_error("no ESP found: nothing is mounted (vfat) at /boot/efi or /efi; mount the EFI system "
                                  "partition there, or give --esp DIR");
                        return -1;
                }
        }
        if (stat(c->esp, &st) < 0 || !S_ISDIR(st.st_mode)) {
                cli_error("%s: not a directory (is the ESP mounted?)", c->esp);
                return -1;
        }
        if (access(c->esp, W_OK) < 0) {
                cli_error("%s: the ESP is not writable (%s)", c->esp, strerror(errno));
                return -1;
        }
        return 0;
}

/* The disk and partition number of the ESP's device, for efibootmgr:
 * ROOT/sys/class/block/NAME/partition, and NAME's parent in sysfs. */
static int esp_disk(ctx *c, const char *dev, const char **ret_disk, const char **ret_part) {
        const char *name = strrchr(dev, '/'), *s;
        char link[PATH_MAX], *path, *slash;
        cli_file f;
        ssize_t n;
        long part = 0;

        if (c->o->disk && c->o->part) {
                *ret_disk = c->o->disk;
                *ret_part = c->o->part;
                return 0;
        }
        if (!dev[0] || strncmp(dev, "/dev/", 5) != 0) {
                cli_error("%s: cannot tell the ESP's disk and partition%s%s; give --disk DEV --part N, or "
                          "--no-boot-entry", c->esp, dev[0] ? ": its source is " : " (not a mount point)", dev);
                return -1;
        }
        name++;
        if (!(path = sfmt(&c->s, "%s/sys/class/block/%s", c->root, name)))
                return -1;
        n = readlink(path, link, sizeof(link) - 1);
        if (!(s = sfmt(&c->s, "%s/partition", path)) || n <= 0 || load(s, 1, "a sysfs file", &f) < 0) {
                cli_error("%s: not a partition (sysfs has no %s/partition); give --disk DEV --part N", dev, path);
                return -1;
        }
        part = strtol((const char *) f.data, NULL, 10);
        cli_file_free(&f);
        link[n] = '\0';
        if (!(slash = strrchr(link, '/')) || part <= 0) {
                cli_error("%s: cannot read its partition number; give --disk DEV --part N", dev);
                return -1;
        }
        *slash = '\0';
        s = strrchr(link, '/');
        *ret_disk = sfmt(&c->s, "/dev/%s", s ? s + 1 : link);
        *ret_part = sfmt(&c->s, "%ld", part);
        return *ret_disk && *ret_part ? 0 : -1;
}

/* ---- files ------------------------------------------------------------------ */

/* Write data to PATH as the hook writes the ESP: a temporary name in the
 * same directory, flushed, renamed, synced again (cli_sync_renamed_path;
 * never half-written; no chmod or chown,
 * which FAT may refuse). An existing PATH is refused unless replace. */
static int esp_write(const char *path, const void *data, size_t n, bool replace) {
        char *tmp = NULL;
        const uint8_t *p = data;
        int fd, r = -1;

        if (!replace && access(path, F_OK) == 0) {
                cli_error("%s: exists; not overwriting it", path);
                return -1;
        }
        if (asprintf(&tmp, "%s.mshim-tmp", path) < 0) {
                cli_error("out of memory");
                return -1;
        }
        fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0644);
        if (fd < 0)
                goto out;
        while (n > 0) {
                ssize_t w = write(fd, p, n);
                if (w < 0 && errno == EINTR)
                        continue;
                if (w <= 0)
                        break;
                p += w;
                n -= (size_t) w;
        }
        if (n == 0 && fsync(fd) == 0 && close(fd) == 0) {
                fd = -1;
                if (rename(tmp, path) == 0 && cli_sync_renamed_path(path) == 0)
                        r = 0;
        }
        if (fd >= 0)
                close(fd);
out:
        if (r < 0) {
                cli_error("%s: cannot write it: %s (ESP full?)", path, strerror(errno));
                unlink(tmp);
        }
        free(tmp);
        return r;
}

static int mkdir_rec(ctx *c, const char *rel) {
        char *p = sfmt(&c->s, "%s/%s", c->esp, rel);
        struct stat st;

        if (!p)
                return -1;
        if (stat(p, &st) == 0 && S_ISDIR(st.st_mode))
                return 0;
        if (mkdir(p, 0755) < 0) {
                cli_error("%s: cannot create it: %s", p, strerror(errno));
                return -1;
        }
        return instrec_add(&c->rec, INSTREC_DIR, rel, NULL);
}

/* Write data as ESP/rel and record it. */
static int put_file(ctx *c, const char *rel, const void *data, size_t n) {
        uint8_t d[32];
        char *p = sfmt(&c->s, "%s/%s", c->esp, rel);

        if (!p || esp_write(p, data, n, false) < 0)
                return -1;
        mb_hash_buf(MB_ALG_SHA256, data, n, d);
        if (instrec_add(&c->rec, INSTREC_FILE, rel, d) < 0)
                return -1;
        printf("wrote %s\n", p);
        return 0;
}

/* Copy SRC (a package file, never the ESP's) as ESP/rel. */
static int put_copy(ctx *c, const char *src, const char *rel) {
        cli_file f;
        int r;

        if (load(src, 64, "an EFI image", &f) < 0)
                return -1;
        r = put_file(c, rel, f.data, f.size);
        cli_file_free(&f);
        return r;
}

/* ---- undoing what a record says ---------------------------------------------- */

/* loader/mshim/: the policy's (approvals, the TOTP enrolment), not the
 * install's, though the kernel hook wrote them during it: uninstall
 * leaves them (removing an approval does not end it: mshim policy). */
#define POLICY_DIR "loader/mshim"
static bool policy_path(const char *rel) {
        size_t n = strlen(POLICY_DIR);

        return !strncmp(rel, POLICY_DIR, n) && (rel[n] == '\0' || rel[n] == '/');
}

/* ESP/loader holds nothing but the policy's directory: kept for it, as
 * it should be (said), not a failure of the uninstall. */
static bool only_policy(ctx *c, const char *loader) {
        DIR *d = opendir(loader);
        bool only = d != NULL;

        for (struct dirent *de; only && (de = readdir(d));)
                only = !strcmp(de->d_name, ".") || !strcmp(de->d_name, "..") || !strcmp(de->d_name, "mshim");
        if (d)
                closedir(d);
        if (only)
                printf("kept %s: it holds %s/%s, the policy's approvals (mshim policy revoke ends them; removing "
                       "the files does not)\n", loader, c->rec.esp ? c->rec.esp : "", POLICY_DIR);
        return only;
}

/* Remove what rec lists, newest first: a file whose SHA-256 still is the
 * recorded one (an absent one is gone already), a directory when empty;
 * the firmware boot entry. What is kept is named and stays in rec (the
 * rest is dropped from it). Returns the number of things kept, or -1. */
static int undo(ctx *c, instrec *rec, bool verbose) {
        size_t keep = 0;
        int kept = 0;

        if (rec->boot_entry) {
                fw_list l;
                unsigned num = 0;
                char *order_before = rec->boot_order;
                if (efibootmgr(c, &l, NULL) < 0)
                        return -1;
                sscanf(rec->boot_entry, "%4x", &num);
                if (!strcmp(l.next, rec->boot_entry) && efibootmgr(c, NULL, "--delete-bootnext", NULL) < 0)
                        return -1;
                if (fw_has(&l, num)) {
                        /* efibootmgr drops it from BootOrder too. */
                        if (efibootmgr(c, NULL, "--bootnum", rec->boot_entry, "--delete-bootnum", NULL) < 0 ||
                            efibootmgr(c, &l, NULL) < 0)
                                return -1;
                        if (verbose)
                                printf("removed firmware boot entry Boot%s\n", rec->boot_entry);
                } else if (verbose)
                        printf("firmware boot entry Boot%s: gone already\n", rec->boot_entry);
                if (verbose && order_before && strcmp(l.order, order_before) != 0)
                        printf("note: BootOrder is %s, it was %s before the install (changed since; left as it is)\n",
                               l.order, order_before);
                instrec_set(&rec->boot_entry, NULL);
        }
        for (size_t i = rec->n_items; i-- > 0;) {
                instrec_item *it = &rec->items[i];
                char *p = it->kind == INSTREC_HOST_FILE ? sfmt(&c->s, "%s", it->path)
                                                        : sfmt(&c->s, "%s/%s", rec->esp, it->path);
                char moved[4096];
                uint8_t d[32];
                if (!p)
                        return -1;
                if (it->kind == INSTREC_DIR) {
                        if (rmdir(p) == 0 || errno == ENOENT || (!strcmp(it->path, "loader") && only_policy(c, p))) {
                                free(it->path);
                                it->path = NULL;
                                continue;
                        }
                        cli_error("%s: kept: it holds files mshim install did not write", p);
                } else if (instrec_sha256_file(p, d) < 0 && errno == ENOENT &&
                           (instrec_renamed_entry(p, it->sha256, moved, sizeof(moved)) < 0 ||
                            !(p = sfmt(&c->s, "%s", moved)) || instrec_sha256_file(p, d) < 0)) {
                        free(it->path);
                        it->path = NULL;
                        continue;
                } else if (!memcmp(d, it->sha256, 32) && unlink(p) == 0) {
                        if (verbose)
                                printf("removed %s\n", p);
                        free(it->path);
                        it->path = NULL;
                        continue;
                } else
                        cli_error("%s: kept: changed since mshim install wrote it (or unreadable)", p);
                kept++;
        }
        for (size_t i = 0; i < rec->n_items; i++)
                if (rec->items[i].path)
                        rec->items[keep++] = rec->items[i];
        rec->n_items = keep;
        return kept;
}

/* ---- the pieces of an install ------------------------------------------------- */

/* The loader's bytes as installed: the package's image, signed when a key
 * is given (into the state directory, never via the ESP). */
static int loader_image(ctx *c, const char *loader, cli_file *ret) {
        const inst_opts *o = c->o;
        char *tmp;
        mb_pe pe;
        int r;

        if (load(loader, 64, "an EFI image", ret) < 0)
                return -1;
        if (mb_pe_parse(ret->data, ret->size, &pe) != MB_OK) {
                cli_error("%s: not a PE/COFF image", loader);
                cli_file_free(ret);
                return -1;
        }
        if (!o->key)
                return 0;
        cli_file_free(ret);
        if (!(tmp = sfmt(&c->s, "%s/.mshim-signed.efi", c->state)))
                return -1;
        r = cli_sign_image(o->key, o->cert, o->pass_file, loader, tmp);
        if (r == 0)
                r = load(tmp, 64, "an EFI image", ret);
        unlink(tmp);
        return r == 0 ? 0 : -1;
}

/* The package's loader: --loader, else /usr/lib/mshim, else LIBDIR. */
static const char *package_loader(const ctx *c) {
        static const char *const cand[] = { PKG_LIBDIR "/mshimx64.efi", MB_LIBDIR "/mshimx64.efi" };

        if (c->o->loader)
                return c->o->loader;
        for (size_t i = 0; i < MB_ARRAY_SIZE(cand); i++)
                if (access(cand[i], R_OK) == 0)
                        return cand[i];
        cli_error("no mshimx64.efi in %s or %s (is the mshim package installed? or give --loader FILE)",
                  PKG_LIBDIR, MB_LIBDIR);
        return NULL;
}

static const char *kernel_hook(void) {
        static const char *const cand[] = { PKG_LIBDIR "/kernel-hook", MB_LIBDIR "/kernel-hook" };
        const char *e = getenv("MSHIM_KERNEL_HOOK");

        if (e && *e)
                return e;
        for (size_t i = 0; i < MB_ARRAY_SIZE(cand); i++)
                if (access(cand[i], X_OK) == 0)
                        return cand[i];
        cli_error("no kernel-hook in %s or %s (is the mshim package installed?)", PKG_LIBDIR, MB_LIBDIR);
        return NULL;
}

/* The kernel command line: ROOT/etc/kernel/cmdline, else the running one
 * (/proc/cmdline less BOOT_IMAGE=, GRUB's), which is then written there
 * for the kernel hook (and kernel-install) to use from now on. */
static int cmdline(ctx *c) {
        char *file = sfmt(&c->s, "%s/etc/kernel/cmdline", c->root), *proc = sfmt(&c->s, "%s/proc/cmdline", c->root);
        char *line, *tok, *save = NULL, *out;
        size_t len = 0;
        cli_file f;
        uint8_t d[32];
        int r;

        if (!file || !proc)
                return -1;
        if (access(file, F_OK) == 0) {
                printf("kernel command line: %s\n", file);
                return 0;
        }
        if (load(proc, 1, "a command line", &f) < 0)
                return -1;
        line = cli_first_line(f.data, f.size);
        cli_file_free(&f);
        out = line ? calloc(1, strlen(line) + 2) : NULL;
        if (!out) {
                free(line);
                cli_error("out of memory");
                return -1;
        }
        for (tok = strtok_r(line, " \t", &save); tok; tok = strtok_r(NULL, " \t", &save)) {
                if (!strncmp(tok, "BOOT_IMAGE=", 11))
                        continue;
                len += (size_t) sprintf(out + len, "%s%s", len ? " " : "", tok);
        }
        free(line);
        if (!len) {
                cli_error("%s is absent and %s is empty: no kernel command line; write it to %s", file, proc, file);
                free(out);
                return -1;
        }
        out[len++] = '\n';
        if (c->o->dry_run) {
                printf("would write %s: %s", file, out);
                free(out);
                return 0;
        }
        mkdir(sfmt(&c->s, "%s/etc/kernel", c->root), 0755);
        r = cli_write_file(file, CLI_MODE_PUBLIC, out, len);
        mb_hash_buf(MB_ALG_SHA256, out, len, d);
        if (r == 0)
                r = instrec_add(&c->rec, INSTREC_HOST_FILE, file, d);
        if (r == 0)
                printf("wrote %s (the running command line, less BOOT_IMAGE=): %.*s\n", file, (int) len - 1, out);
        free(out);
        return r;
}

/* loader.conf, only when there is none: never a user's file overwritten. */
static int loader_conf(ctx *c) {
        char *p = sfmt(&c->s, "%s/loader/loader.conf", c->esp);
        const char *text = c->o->shim
                ? "# written by `mshim install` (it never replaces this file); see mshim-loader.conf(5).\n"
                  "# With no entries, start Debian's GRUB (behind shim): grubx64.efi in\n"
                  "# mshim's own directory is mshim itself.\n"
                  "chainload /EFI/debian/grubx64.efi\n"
                : "# written by `mshim install` (it never replaces this file); see mshim-loader.conf(5).\n";

        if (!p)
                return -1;
        if (access(p, F_OK) == 0) {
                printf("kept %s (exists)\n", p);
                return 0;
        }
        if (c->o->dry_run) {
                printf("would write %s\n", p);
                return 0;
        }
        return mkdir_rec(c, "loader") == 0 && put_file(c, "loader/loader.conf", text, strlen(text)) == 0 ? 0 : -1;
}

/* The ESP's tree, as sorted "d REL" / "f REL" strings (nftw). */
static strs *tree_out;
static size_t tree_skip;
static int tree_add(const char *path, const struct stat *st, int type, struct FTW *ftw) {
        if (ftw->level == 0)
                return 0;
        if (!sfmt(tree_out, "%c %s", type == FTW_D ? 'd' : 'f', path + tree_skip))
                return -1;
        return 0;
}
static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *) a, *(char *const *) b); }
static int tree(const char *esp, strs *out) {
        tree_out = out;
        tree_skip = strlen(esp) + 1;
        if (nftw(esp, tree_add, 16, FTW_PHYS) != 0) {
                cli_error("%s: cannot list it", esp);
                return -1;
        }
        qsort(out->v, out->n, sizeof(*out->v), cmp_str);
        return 0;
}

/* Record what is in after and not in before: the kernel hook's files. */
static int record_new(ctx *c, const strs *before, const strs *after) {
        for (int pass = 0; pass < 2; pass++)
                for (size_t i = 0; i < after->n; i++) {
                        const char *e = after->v[i];
                        uint8_t d[32];
                        if ((e[0] == 'd') != (pass == 0) || policy_path(e + 2) ||
                            bsearch(&e, before->v, before->n, sizeof(*before->v), cmp_str))
                                continue;
                        if (e[0] == 'd') {
                                if (instrec_add(&c->rec, INSTREC_DIR, e + 2, NULL) < 0)
                                        return -1;
                                continue;
                        }
                        if (instrec_sha256_file(sfmt(&c->s, "%s/%s", c->esp, e + 2), d) < 0 ||
                            instrec_add(&c->rec, INSTREC_FILE, e + 2, d) < 0)
                                return -1;
                }
        return 0;
}

/* hook.conf for the kernel hook's run: the machine's (when there is one),
 * with what install was told (--esp, --boot, --state-dir, this mshim)
 * after it; with --root, the entry token, title and command-line file of
 * that root before it (the hook reads /etc's otherwise). */
static const char *hook_conf(ctx *c) {
        char *p = sfmt(&c->s, "%s/.install-hook.conf", c->state), self[PATH_MAX];
        char *conf = sfmt(&c->s, "%s/etc/mshim/hook.conf", c->root), *pub = sfmt(&c->s, "%s/policy.pub", c->state);
        char *buf = NULL;
        size_t len = 0;
        FILE *m;
        cli_file f;
        ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
        int r;

        if (!p || !conf || n <= 0 || !(m = open_memstream(&buf, &len))) {
                cli_error("cannot write the kernel hook's settings");
                return NULL;
        }
        self[n] = '\0';
        if (c->root[0]) {
                cli_file id, os;
                if (load(sfmt(&c->s, "%s/etc/machine-id", c->root), 1, "a machine id", &id) == 0) {
                        fprintf(m, "ENTRY_TOKEN=%.*s\n", (int) strcspn((const char *) id.data, "\n"), id.data);
                        cli_file_free(&id);
                }
                if (load(sfmt(&c->s, "%s/etc/os-release", c->root), 1, "os-release", &os) == 0) {
                        const char *t = memmem(os.data, os.size, "\nPRETTY_NAME=", 13);
                        if (t) {
                                t += 13;
                                fputs("TITLE=", m);
                                for (; t < (const char *) os.data + os.size && *t != '\n'; t++)
                                        if (*t != '"')
                                                fputc(*t, m);
                                fputc('\n', m);
                        }
                        cli_file_free(&os);
                }
                fprintf(m, "CMDLINE_FILE=%s/etc/kernel/cmdline\n", c->root);
        }
        if (access(conf, F_OK) == 0) {
                if (load(conf, 1, "hook.conf", &f) < 0) {
                        fclose(m);
                        free(buf);
                        return NULL;
                }
                fwrite(f.data, 1, f.size, m);
                if (f.size && f.data[f.size - 1] != '\n')
                        fputc('\n', m);
                cli_file_free(&f);
        }
        fprintf(m, "ESP=%s\nBOOT_DIR=%s\nSTATE_DIR=%s\nMSHIM=%s\n", c->esp, c->boot, c->state, self);
        /* Before setup there is nothing to approve with: an install then
         * writes the entries and says what to run next, STRICT or not
         * (the STRICT hook refuses so that apt stops, not bootctl's job). */
        if (!pub || access(pub, F_OK) < 0)
                fputs("STRICT=no\n", m);
        fclose(m);
        r = buf ? cli_write_file(p, CLI_MODE_SECRET, buf, len) : -1;
        free(buf);
        return r == 0 ? p : NULL;
}

/* A kernel version as the hook accepts it. */
static bool version_ok(const char *v) {
        return v[0] && v[0] != '.' &&
               strspn(v, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789.+_~-") == strlen(v);
}

/* One entry per kernel in /boot with its initrd: the kernel hook writes
 * it, copies the kernel and initrd and (when mshim is set up) predicts and
 * approves its boot, exactly as on a kernel upgrade. */
static int entries(ctx *c) {
        struct dirent **names = NULL;
        const char *hook = kernel_hook(), *conf;
        strs before = { 0 }, after = { 0 };
        int n, r = -1, written = 0;
        bool listed = false, failed = false;

        if (!hook)
                return -1;
        n = scandir(c->boot, &names, NULL, alphasort);
        if (n < 0) {
                cli_error("%s: cannot list it: %s", c->boot, strerror(errno));
                return -1;
        }
        conf = c->o->dry_run ? "" : hook_conf(c);
        if (!conf || (!c->o->dry_run && tree(c->esp, &before) < 0))
                goto out;
        listed = !c->o->dry_run;
        for (int i = 0; i < n; i++) {
                const char *v = names[i]->d_name + 8;
                char *k, *ini;
                if (strncmp(names[i]->d_name, "vmlinuz-", 8) != 0 || !version_ok(v))
                        continue;
                k = sfmt(&c->s, "%s/vmlinuz-%s", c->boot, v);
                ini = sfmt(&c->s, "%s/initrd.img-%s", c->boot, v);
                if (!k || !ini)
                        goto out;
                if (access(ini, R_OK) < 0) {
                        printf("kernel %s: no %s: no entry (the kernel hook writes it with the initrd)\n", v, ini);
                        continue;
                }
                if (c->o->dry_run) {
                        printf("would run %s kernel-install add %s %s %s %s\n", hook, v, c->esp, k, ini);
                        continue;
                }
                {
                        char *argv[] = { (char *) hook, "kernel-install", "add", (char *) v, (char *) c->esp, k, ini, NULL };
                        int rc;
                        setenv("MSHIM_HOOK_CONF", conf, 1);
                        rc = run(argv, NULL);
                        unsetenv("MSHIM_HOOK_CONF");
                        if (rc != 0) {
                                cli_error("the kernel hook failed for %s (above)", v);
                                failed = true;
                                break;
                        }
                        written++;
                }
        }
        if (!c->o->dry_run && !written && !failed)
                printf("no kernel with an initrd in %s: no entries written\n", c->boot);
        r = failed ? -1 : 0;
out:
        /* What the hook wrote is recorded even when a later run of it
         * failed: the install's undo then removes it too. */
        if (listed && (tree(c->esp, &after) < 0 || record_new(c, &before, &after) < 0))
                r = -1;
        if (conf && *conf)
                unlink(conf);
        for (int i = 0; i < n; i++)
                free(names[i]);
        free(names);
        strs_free(&before);
        strs_free(&after);
        return r;
}

/* The firmware boot entry: created without touching BootOrder, set as
 * BootNext (one trial boot). */
static int boot_entry(ctx *c, const char *disk, const char *part) {
        const char *loader = c->o->shim ? "\\EFI\\mshim\\shimx64.efi" : "\\EFI\\mshim\\mshimx64.efi";
        fw_list before, after;
        char num[5] = "";

        if (c->o->no_boot_entry) {
                printf("no firmware boot entry (--no-boot-entry): the firmware starts %s only when told to\n", loader);
                return 0;
        }
        if (c->o->dry_run) {
                printf("would run %s --create-only --disk %s --part %s --loader %s --label %s, then --bootnext\n",
                       efibootmgr_prog(c), disk, part, loader, BOOT_LABEL);
                return 0;
        }
        if (efibootmgr(c, &before, NULL) < 0 ||
            efibootmgr(c, &after, "--create-only", "--disk", disk, "--part", part, "--loader", loader, "--label",
                       BOOT_LABEL, NULL) < 0 ||
            efibootmgr(c, &after, NULL) < 0)
                return -1;
        for (unsigned i = 0; i < 65536; i++)
                if (fw_has(&after, i) && !fw_has(&before, i)) {
                        if (num[0]) {
                                cli_error("efibootmgr added more than one boot entry; cannot tell which is mshim's");
                                return -1;
                        }
                        snprintf(num, sizeof(num), "%04X", i);
                }
        if (!num[0]) {
                cli_error("efibootmgr --create-only added no boot entry");
                return -1;
        }
        if (instrec_set(&c->rec.boot_entry, num) < 0 || instrec_set(&c->rec.boot_order, before.order) < 0 ||
            efibootmgr(c, NULL, "--bootnext", num, NULL) < 0)
                return -1;
        printf("firmware boot entry Boot%s (%s, %s) added as BootNext only: the next boot tries mshim once; "
               "BootOrder is unchanged (%s).\nAfter a good boot through mshim: mshim install --confirm\n",
               num, BOOT_LABEL, loader, before.order[0] ? before.order : "empty");
        return 0;
}

/* The MOK step: the certificate as DER in the state directory, and
 * `mokutil --import` printed or (--enroll-mok) run. */
static int mok(ctx *c, bool *ret_imported) {
        X509 *x;
        unsigned char *der = NULL;
        char *p = sfmt(&c->s, "%s/mok.der", c->state);
        const char *prog = getenv("MSHIM_MOKUTIL");
        uint8_t d[32];
        int n, r = -1;

        if (!c->o->shim || !c->o->cert)
                return 0;
        if (c->o->dry_run) {
                printf("would %s mokutil --import %s\n", c->o->enroll_mok ? "run" : "print", p);
                return 0;
        }
        if (!p || !(x = cred_load_cert(c->o->cert)))
                return -1;
        n = i2d_X509(x, &der);
        X509_free(x);
        if (n <= 0 || cli_write_file(p, CLI_MODE_PUBLIC, der, (size_t) n) < 0)
                goto out;
        mb_hash_buf(MB_ALG_SHA256, der, (size_t) n, d);
        if (instrec_add(&c->rec, INSTREC_HOST_FILE, p, d) < 0)
                goto out;
        if (c->o->enroll_mok) {
                char *argv[] = { (char *) (prog && *prog ? prog : "mokutil"), "--import", p, NULL };
                printf("enrolling %s as a Machine Owner Key: mokutil asks for a one-time password, which "
                       "MokManager asks for at the next boot (docs/MOK.md). MokManager's boot spends BootNext: "
                       "after its reset the firmware boots shim and GRUB again; then run mshim install --trial "
                       "and reboot\n", c->o->cert);
                if (run(argv, NULL) != 0) {
                        cli_error("mokutil --import %s failed (above); run it yourself", p);
                        goto out;
                }
                *ret_imported = true;
        } else
                printf("Next, enrol the key shim must trust mshim by (docs/MOK.md):\n  mokutil --import %s\n"
                       "and confirm it in MokManager at the next boot.\n", p);
        r = 0;
out:
        OPENSSL_free(der);
        return r;
}

/* A failed install takes back the MOK request it queued (MokNew), so
 * that MokManager does not enrol a key for an mshim that is gone. */
static void mok_revoke(ctx *c) {
        const char *prog = getenv("MSHIM_MOKUTIL");
        char *argv[] = { (char *) (prog && *prog ? prog : "mokutil"), "--revoke-import", NULL };

        if (run(argv, NULL) != 0)
                cli_error("mokutil --revoke-import failed (above): the MOK request stays; run it yourself");
}

/* What is left to do after an install: before setup (no policy key), the
 * steps to a first boot through mshim that unlocks with no passphrase;
 * the kernel hook said what it approved, or why it did not. */
static void next_steps(ctx *c) {
        char *pub = sfmt(&c->s, "%s/policy.pub", c->state);
        const char *newest = NULL;
        struct dirent **names = NULL;
        int n;

        if (!pub || access(pub, F_OK) == 0)
                return;
        n = scandir(c->boot, &names, NULL, versionsort);
        for (int i = 0; i < n; i++) {
                const char *v = names[i]->d_name + 8;
                if (!strncmp(names[i]->d_name, "vmlinuz-", 8) && version_ok(v))
                        newest = sfmt(&c->s, "%s", v);
                free(names[i]);
        }
        free(names);
        printf("Nothing is approved yet: mshim is not set up (%s is absent). Next, before rebooting:\n"
               "  mshim policy init%s%s\n"
               "  mshim luks enroll DEVICE        # the LUKS2 root (mshim-luks(1)), if it is not enrolled yet\n"
               "  /etc/kernel/postinst.d/zz-mshim %s   # approves the first boot through mshim\n",
               pub, c->o->state_dir ? " --state-dir " : "", c->o->state_dir ? c->o->state_dir : "",
               newest ? newest : "VERSION");
}

/* ---- the commands --------------------------------------------------------------- */

static int do_confirm(ctx *c) {
        fw_list l;
        char order[600];
        const char *e = c->rec.boot_entry;
        size_t len;

        if (!e) {
                cli_error("%s: mshim install added no firmware boot entry (--no-boot-entry): nothing to confirm",
                          c->record);
                return EXIT_CHECK_FAILED;
        }
        if (efibootmgr(c, &l, NULL) < 0)
                return EXIT_CHECK_FAILED;
        len = (size_t) snprintf(order, sizeof(order), "%s", e);
        for (char *save = NULL, *t = strtok_r(l.order, ",", &save); t; t = strtok_r(NULL, ",", &save))
                if (strcmp(t, e) != 0 && len < sizeof(order))
                        len += (size_t) snprintf(order + len, sizeof(order) - len, ",%s", t);
        if (c->o->dry_run) {
                printf("would set BootOrder %s\n", order);
                return 0;
        }
        if (efibootmgr(c, NULL, "--bootorder", order, NULL) < 0)
                return EXIT_CHECK_FAILED;
        c->rec.confirmed = true;
        if (instrec_save(c->record, &c->rec) < 0)
                return EXIT_CHECK_FAILED;
        printf("BootOrder %s: mshim (Boot%s) is the default; the entries after it stay the way back\n", order, e);
        return 0;
}

/* --trial: the recorded entry as BootNext again. MokManager's boot spends
 * the BootNext install set (the firmware deletes BootNext before it starts
 * the entry: the UEFI specification's Boot Manager chapter), so after the key's enrolment the firmware
 * boots shim and GRUB again; this tries mshim once more, BootOrder
 * untouched. */
static int do_trial(ctx *c) {
        const char *e = c->rec.boot_entry;

        if (!e) {
                cli_error("%s: mshim install added no firmware boot entry (--no-boot-entry): nothing to try",
                          c->record);
                return EXIT_CHECK_FAILED;
        }
        if (c->o->dry_run) {
                printf("would set BootNext %s\n", e);
                return 0;
        }
        if (efibootmgr(c, NULL, "--bootnext", e, NULL) < 0)
                return EXIT_CHECK_FAILED;
        printf("BootNext %s: the next boot tries mshim once; BootOrder is unchanged.\n"
               "After a good boot through mshim: mshim install --confirm\n", e);
        return 0;
}

/* --update's approval: the kernel hook's loader-update (hooks/kernel-hook)
 * checks the ESP's next entry against /boot and the command line,
 * predicts the next boot with the image at `staged` as mshim (mshim
 * predict --loader: its PCR 4 digest, the rest from this boot's log and
 * the files) and approves it, or writes a request when the policy key is
 * kept elsewhere. 0 when the next boot is approved. */
static int approve_update(ctx *c, const char *staged) {
        const char *hook = kernel_hook(), *conf = hook ? hook_conf(c) : NULL;
        char *argv[] = { (char *) hook, "loader-update", (char *) staged, NULL };
        int rc;

        if (!conf)
                return -1;
        setenv("MSHIM_HOOK_CONF", conf, 1);
        rc = run(argv, NULL);
        unsetenv("MSHIM_HOOK_CONF");
        unlink(conf);
        return rc == 0 ? 0 : -1;
}

/* --update: mshim itself replaced by the package's image, signed again
 * with the recorded (or given) key; what is on the ESP is never read for
 * it, only overwritten. When mshim is set up (a policy key), the next
 * boot with the new image is approved first (approve_update), and only
 * then is the file swapped: on any failure the old loader and the old
 * approvals stay. */
static int do_update(ctx *c) {
        inst_opts o = *c->o;
        const char *loader;
        char *p = sfmt(&c->s, "%s/%s", c->rec.esp, c->rec.mshim), *staged = sfmt(&c->s, "%s/.mshim-update.efi", c->state);
        char *pub = sfmt(&c->s, "%s/policy.pub", c->state);
        uint8_t now[32], d[32];
        cli_file img;
        bool policy;
        int r = EXIT_CHECK_FAILED;

        if (!o.key && c->rec.key && c->rec.cert) {
                o.key = c->rec.key;
                o.cert = c->rec.cert;
        }
        if (strcmp(c->rec.layout, "unsigned") != 0 && !o.key) {
                cli_error("%s: mshim was installed signed; give --key and --cert to sign the new one", c->record);
                return EXIT_BAD_INPUT;
        }
        c->o = &o;
        c->esp = c->rec.esp;
        if (!p || !staged || !pub || !(loader = package_loader(c)))
                return EXIT_BAD_INPUT;
        policy = access(pub, F_OK) == 0;
        if (o.dry_run) {
                printf("would %s %s, %s, and put it in place as %s\n", o.key ? "sign" : "copy", loader,
                       policy ? "approve the next boot with it" : "approve nothing (no policy key)", p);
                return 0;
        }
        if (loader_image(c, loader, &img) < 0)
                return EXIT_BAD_INPUT;
        mb_hash_buf(MB_ALG_SHA256, img.data, img.size, d);
        for (size_t i = 0; i < c->rec.n_items; i++) {
                instrec_item *it = &c->rec.items[i];
                if (it->kind != INSTREC_FILE || strcmp(it->path, c->rec.mshim) != 0)
                        continue;
                if (instrec_sha256_file(p, now) == 0 && memcmp(now, it->sha256, 32) != 0)
                        printf("warning: %s was changed since mshim install wrote it (outside mshim); replacing "
                               "it with %s\n", p, loader);
                /* The prediction reads the image from the state directory,
                 * the bytes that will be installed, never the ESP's. */
                if (policy && (cli_write_file(staged, CLI_MODE_PUBLIC, img.data, img.size) < 0 ||
                               approve_update(c, staged) < 0)) {
                        cli_error("the next boot with the new mshim is not approved (above): %s is kept as it was, "
                                  "and so are the approvals", p);
                        goto out;
                }
                if (esp_write(p, img.data, img.size, true) < 0)
                        goto out;
                memcpy(it->sha256, d, 32);
                if (instrec_set(&c->rec.loader, loader) < 0 || instrec_save(c->record, &c->rec) < 0)
                        goto out;
                printf("updated %s from %s%s\n", p, loader, o.key ? " (signed)" : "");
                if (!policy)
                        printf("note: %s is absent (mshim policy init has not run): nothing was approved (there "
                               "is no policy key to approve with)\n", pub);
                r = 0;
                goto out;
        }
        cli_error("%s: names mshim (%s) but records no such file", c->record, c->rec.mshim);
out:
        unlink(staged);
        cli_file_free(&img);
        return r;
}

static int do_install(ctx *c) {
        const inst_opts *o = c->o;
        const char *loader = package_loader(c), *shim_dir = o->shim_dir ? o->shim_dir : SHIM_DIR;
        const char *mshim_rel = o->shim ? MSHIM_DIR "/grubx64.efi" : MSHIM_DIR "/mshimx64.efi";
        char dev[PATH_MAX], *mdir;
        const char *disk = NULL, *part = NULL;
        cli_file img = { 0 };
        int r = EXIT_CHECK_FAILED, k;
        bool imported = false;

        if (!loader)
                return EXIT_BAD_INPUT;
        if (find_esp(c, dev) < 0 || (!o->no_boot_entry && esp_disk(c, dev, &disk, &part) < 0))
                return EXIT_CHECK_FAILED;
        if (!(mdir = sfmt(&c->s, "%s/%s", c->esp, MSHIM_DIR)))
                return EXIT_BAD_INPUT;
        if (access(mdir, F_OK) == 0) {
                cli_error("%s: exists, and %s records no install: another install is there; remove it first "
                          "(mshim install --update replaces an install mshim recorded)", mdir, c->record);
                return EXIT_CHECK_FAILED;
        }
        if (o->shim)
                for (int i = 0; i < 2; i++) {
                        char *p = sfmt(&c->s, "%s/%s.efi.signed", shim_dir, i ? "mmx64" : "shimx64");
                        if (!p || access(p, R_OK) < 0) {
                                cli_error("%s: cannot read it (install the Debian package shim-signed)", p);
                                return EXIT_BAD_INPUT;
                        }
                }
        if (o->dry_run) {
                printf("would install %s%s as %s/%s\n", loader, o->key ? " (signed)" : "", c->esp, mshim_rel);
                if (o->shim)
                        printf("would copy %s/shimx64.efi.signed and mmx64.efi.signed to %s\n", shim_dir, mdir);
                if (loader_conf(c) < 0 || cmdline(c) < 0 || mok(c, &imported) < 0 || entries(c) < 0 ||
                    boot_entry(c, disk, part) < 0)
                        return EXIT_CHECK_FAILED;
                return 0;
        }
        if (mkdir(c->state, 0700) < 0 && errno != EEXIST) {
                cli_error("%s: cannot create it: %s", c->state, strerror(errno));
                return EXIT_BAD_INPUT;
        }
        if (loader_image(c, loader, &img) < 0)
                return EXIT_BAD_INPUT;
        if (instrec_set(&c->rec.esp, c->esp) < 0 || instrec_set(&c->rec.loader, loader) < 0 ||
            instrec_set(&c->rec.layout, o->shim ? "shim" : o->key ? "signed" : "unsigned") < 0 ||
            instrec_set(&c->rec.mshim, mshim_rel) < 0 || instrec_set(&c->rec.key, o->key) < 0 ||
            instrec_set(&c->rec.cert, o->cert) < 0)
                goto fail;
        /* The record is saved before the kernel hook runs: when this boot
         * did not run mshim, the hook predicts the first boot through it
         * from the files the record names, checked against their SHA-256
         * there (hooks/kernel-hook first_boot). The MOK is queued before
         * too: the hook predicts that boot with it enrolled (MokNew). */
        if (mkdir_rec(c, "EFI") < 0 || mkdir_rec(c, MSHIM_DIR) < 0 ||
            put_file(c, mshim_rel, img.data, img.size) < 0 ||
            (o->shim && (put_copy(c, sfmt(&c->s, "%s/shimx64.efi.signed", shim_dir), MSHIM_DIR "/shimx64.efi") < 0 ||
                         put_copy(c, sfmt(&c->s, "%s/mmx64.efi.signed", shim_dir), MSHIM_DIR "/mmx64.efi") < 0)) ||
            loader_conf(c) < 0 || cmdline(c) < 0 || mok(c, &imported) < 0 || instrec_save(c->record, &c->rec) < 0 ||
            entries(c) < 0 || boot_entry(c, disk, part) < 0 || instrec_save(c->record, &c->rec) < 0)
                goto fail;
        if (o->shim && !o->key)
                printf("warning: mshim is not signed: with Secure Boot on, shim refuses it (give --key and --cert "
                       "of a MOK)\n");
        printf("installed; %s records it (mshim status shows it, mshim uninstall undoes it)\n", c->record);
        next_steps(c);
        r = 0;
        goto out;
fail:
        /* Put the machine back as it was: what this run wrote goes. */
        k = undo(c, &c->rec, false);
        if (imported)
                mok_revoke(c);
        if (unlink(c->record) < 0 && errno != ENOENT)
                k = -1;
        cli_error("install failed; %s", k == 0 ? "what it had written is removed" : "some of what it wrote is kept (above)");
out:
        cli_file_free(&img);
        return r;
}

static int ctx_init(ctx *c, const inst_opts *o) {
        memset(c, 0, sizeof(*c));
        c->o = o;
        c->root = o->root ? o->root : "";
        c->state = o->state_dir ? o->state_dir : sfmt(&c->s, "%s/var/lib/mshim", c->root);
        c->boot = o->boot ? o->boot : sfmt(&c->s, "%s/boot", c->root);
        c->record = c->state ? sfmt(&c->s, "%s/%s", c->state, INSTREC_NAME) : NULL;
        return c->state && c->boot && c->record ? 0 : -1;
}

int cmd_install(int argc, char **argv) {
        static const struct option longopts[] = {
                { "esp", required_argument, NULL, 'e' },        { "key", required_argument, NULL, 'k' },
                { "cert", required_argument, NULL, 'c' },       { "pass-file", required_argument, NULL, 'P' },
                { "shim", no_argument, NULL, 's' },             { "shim-dir", required_argument, NULL, 'S' },
                { "loader", required_argument, NULL, 'L' },     { "enroll-mok", no_argument, NULL, 'm' },
                { "no-boot-entry", no_argument, NULL, 'n' },    { "dry-run", no_argument, NULL, 'd' },
                { "update", no_argument, NULL, 'u' },           { "confirm", no_argument, NULL, 'C' },
                { "trial", no_argument, NULL, 'T' },
                { "boot", required_argument, NULL, 'b' },       { "root", required_argument, NULL, 'r' },
                { "state-dir", required_argument, NULL, 'D' },  { "efibootmgr", required_argument, NULL, 'E' },
                { "disk", required_argument, NULL, 'K' },       { "part", required_argument, NULL, 'p' },
                { "help", no_argument, NULL, 'h' },             { 0 },
        };
        inst_opts o = { 0 };
        ctx c;
        int ch, r = 0, loaded;

        optind = 1;
        while ((ch = cli_getopt(argc, argv, "h", longopts, "install")) != -1) {
                switch (ch) {
                case 'e': r = cli_opt_once(&o.esp, "--esp", optarg); break;
                case 'k': r = cli_opt_once(&o.key, "--key", optarg); break;
                case 'c': r = cli_opt_once(&o.cert, "--cert", optarg); break;
                case 'P': r = cli_opt_once(&o.pass_file, "--pass-file", optarg); break;
                case 'S': r = cli_opt_once(&o.shim_dir, "--shim-dir", optarg); break;
                case 'L': r = cli_opt_once(&o.loader, "--loader", optarg); break;
                case 'b': r = cli_opt_once(&o.boot, "--boot", optarg); break;
                case 'r': r = cli_opt_once(&o.root, "--root", optarg); break;
                case 'D': r = cli_opt_once(&o.state_dir, "--state-dir", optarg); break;
                case 'E': r = cli_opt_once(&o.efibootmgr, "--efibootmgr", optarg); break;
                case 'K': r = cli_opt_once(&o.disk, "--disk", optarg); break;
                case 'p': r = cli_opt_once(&o.part, "--part", optarg); break;
                case 's': o.shim = true; break;
                case 'm': o.enroll_mok = true; break;
                case 'n': o.no_boot_entry = true; break;
                case 'd': o.dry_run = true; break;
                case 'u': o.update = true; break;
                case 'C': o.confirm = true; break;
                case 'T': o.trial = true; break;
                case 'h': cli_help(stdout, "install"); return 0;
                default: return EXIT_BAD_INPUT;
                }
                if (r < 0)
                        return EXIT_BAD_INPUT;
        }
        if (optind != argc)
                return cli_usage_error("install", "install takes no operand ('%s')", argv[optind]);
        if (!o.key != !o.cert)
                return cli_usage_error("install", "--key and --cert go together");
        if (o.enroll_mok && !(o.shim && o.cert))
                return cli_usage_error("install", "--enroll-mok needs --shim and the key's --cert");
        if (!o.disk != !o.part)
                return cli_usage_error("install", "--disk and --part go together");
        bool recorded = o.update || o.confirm || o.trial;
        if (o.update + o.confirm + o.trial > 1 ||
            (recorded && (o.shim || o.enroll_mok || o.no_boot_entry || o.shim_dir || o.boot)))
                return cli_usage_error("install", "--update, --confirm and --trial act on the recorded install: "
                                                  "one of them, with no layout option");
        if ((o.confirm || o.trial) && (o.key || o.loader))
                return cli_usage_error("install", "--confirm and --trial take no --key, --cert or --loader");
        if (o.root && o.root[0] != '/')
                return cli_usage_error("install", "--root %s: an absolute path", o.root);
        if (ctx_init(&c, &o) < 0) {
                strs_free(&c.s);
                return EXIT_BAD_INPUT;
        }
        loaded = instrec_load(c.record, &c.rec);
        if (loaded < 0)
                r = EXIT_BAD_INPUT;
        else if (recorded && loaded == 1) {
                cli_error("%s: no install recorded: run mshim install first", c.record);
                r = EXIT_CHECK_FAILED;
        } else if (recorded) {
                if (o.esp && strcmp(o.esp, c.rec.esp) != 0) {
                        cli_error("--esp %s: mshim is installed on %s (%s)", o.esp, c.rec.esp, c.record);
                        r = EXIT_CHECK_FAILED;
                } else
                        r = o.update ? do_update(&c) : o.confirm ? do_confirm(&c) : do_trial(&c);
        } else if (loaded == 0) {
                cli_error("mshim is installed already on %s (%s): mshim install --update replaces mshim there, "
                          "--confirm makes its boot entry the default, --trial tries it once more, mshim uninstall removes "
                          "it",
                          c.rec.esp, c.record);
                r = EXIT_CHECK_FAILED;
        } else
                r = do_install(&c);
        instrec_free(&c.rec);
        strs_free(&c.s);
        return r;
}

int cmd_uninstall(int argc, char **argv) {
        static const struct option longopts[] = {
                { "state-dir", required_argument, NULL, 'D' }, { "root", required_argument, NULL, 'r' },
                { "efibootmgr", required_argument, NULL, 'E' }, { "help", no_argument, NULL, 'h' },
                { 0 },
        };
        inst_opts o = { 0 };
        ctx c;
        int ch, r = 0, kept;

        optind = 1;
        while ((ch = cli_getopt(argc, argv, "h", longopts, "uninstall")) != -1) {
                switch (ch) {
                case 'D': r = cli_opt_once(&o.state_dir, "--state-dir", optarg); break;
                case 'r': r = cli_opt_once(&o.root, "--root", optarg); break;
                case 'E': r = cli_opt_once(&o.efibootmgr, "--efibootmgr", optarg); break;
                case 'h': cli_help(stdout, "uninstall"); return 0;
                default: return EXIT_BAD_INPUT;
                }
                if (r < 0)
                        return EXIT_BAD_INPUT;
        }
        if (optind != argc)
                return cli_usage_error("uninstall", "uninstall takes no operand ('%s')", argv[optind]);
        if (ctx_init(&c, &o) < 0) {
                strs_free(&c.s);
                return EXIT_BAD_INPUT;
        }
        r = instrec_load(c.record, &c.rec);
        if (r == 1) {
                cli_error("%s: no install recorded: nothing to uninstall", c.record);
                r = EXIT_CHECK_FAILED;
        } else if (r == 0) {
                kept = undo(&c, &c.rec, true);
                if (kept < 0)
                        r = EXIT_CHECK_FAILED;
                else if (kept > 0) {
                        /* What stays is what the record still lists. */
                        r = instrec_save(c.record, &c.rec) < 0 ? EXIT_BAD_INPUT : EXIT_CHECK_FAILED;
                        cli_error("kept %d file(s) or directories (above); %s lists them: look at them, remove "
                                  "them, and run mshim uninstall again", kept, c.record);
                } else if (unlink(c.record) < 0) {
                        cli_error("%s: cannot remove it: %s", c.record, strerror(errno));
                        r = EXIT_BAD_INPUT;
                } else
                        printf("uninstalled: the firmware boots as before mshim install\n");
        } else
                r = EXIT_BAD_INPUT;
        instrec_free(&c.rec);
        strs_free(&c.s);
        return r;
}
