/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * mshim status [--json]: bootctl status's job. What `mshim install`
 * recorded and whether the files are still what it wrote, Secure Boot and
 * Setup Mode, MOK, the firmware's boot entries (BootCurrent, BootNext,
 * BootOrder, each Boot#### path decoded), the policy key, the approvals on
 * the ESP, the TPM and the last boot's Boot Loader Interface variables.
 * Reads files only: no TPM command, no write. docs/UPGRADES.md
 * "mshim status"; JSON schema docs/schema/mshim-status-1.schema.json.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "cli.h"
#include "instrec.h"
#include "mb/devpath.h"

#define GUID_GLOBAL "8be4df61-93ca-11d2-aa0d-00e098032b8c"
#define GUID_SHIM "605dab50-e046-4300-abb6-3dd810dd8b23"
#define GUID_LOADER "4a67b082-0a4c-41cf-b6c7-440b29bb8c4f" /* the Boot Loader Interface's */
#define VAR_MAX_MIB 1

typedef struct st_opts {
        const char *root, *state_dir, *efivars, *esp;
        bool json;
} st_opts;

/* One efivarfs variable's data (after its 4 bytes of attributes): 0, or
 * -1 when absent or unreadable (no message: absence is an answer). */
static int var_load(const char *dir, const char *name, const char *guid, cli_file *f, const uint8_t **ret,
                    size_t *ret_n) {
        char path[4096];

        snprintf(path, sizeof(path), "%s/%s-%s", dir, name, guid);
        /* cli_file_load prints on a missing file: check first. */
        if (access(path, R_OK) < 0 || cli_file_load_max(path, (size_t) VAR_MAX_MIB << 20, "a variable", f) < 0)
                return -1;
        if (f->size < 4) {
                cli_file_free(f);
                return -1;
        }
        *ret = f->data + 4;
        *ret_n = f->size - 4;
        return 0;
}

/* A one-byte boolean variable: 1, 0, or -1 when absent or malformed. */
static int var_bool(const char *dir, const char *name) {
        cli_file f;
        const uint8_t *d;
        size_t n;
        int r;

        if (var_load(dir, name, GUID_GLOBAL, &f, &d, &n) < 0)
                return -1;
        r = n == 1 && d[0] <= 1 ? d[0] : -1;
        cli_file_free(&f);
        return r;
}

/* A UINT16 variable as 4 hex digits into out: 0 or -1. */
static int var_u16(const char *dir, const char *name, char out[5]) {
        cli_file f;
        const uint8_t *d;
        size_t n;
        int r = -1;

        if (var_load(dir, name, GUID_GLOBAL, &f, &d, &n) < 0)
                return -1;
        if (n == 2) {
                snprintf(out, 5, "%04X", (unsigned) (d[0] | d[1] << 8));
                r = 0;
        }
        cli_file_free(&f);
        return r;
}

/* UCS-2 (units of 2 bytes, up to a NUL or n) as ASCII, others as '?'. */
static size_t ucs2_ascii(const uint8_t *p, size_t n, char *out, size_t cap) {
        size_t i, len = 0;

        for (i = 0; i + 1 < n; i += 2) {
                unsigned c = (unsigned) (p[i] | p[i + 1] << 8);
                if (!c)
                        break;
                if (len + 1 < cap)
                        out[len++] = c >= 0x20 && c < 0x7f ? (char) c : '?';
        }
        out[len] = '\0';
        return i + 2 <= n ? i + 2 : n;  /* bytes used, with the NUL */
}

/* A load option (UEFI 2.10 3.1.3 EFI_LOAD_OPTION): its description, and of
 * its device path the file path nodes (type 4, subtype 4; 10.3.5.4) joined
 * and the GPT partition's GUID. No node length is trusted. */
typedef struct load_option {
        char label[128], path[512], partuuid[37];
        bool active;
} load_option;

static int load_option_parse(const uint8_t *d, size_t n, load_option *ret) {
        load_option o = { 0 };
        size_t off, fpl, plen = 0;
        uint8_t guid[16], txt[MB_PARTUUID_VAR_SIZE];

        if (n < 6)
                return -1;
        o.active = d[0] & 1;
        fpl = (size_t) (d[4] | d[5] << 8);
        off = 6 + ucs2_ascii(d + 6, n - 6, o.label, sizeof(o.label));
        if (off > n || n - off < fpl)
                return -1;
        d += off;
        for (size_t p = 0; p + 4 <= fpl;) {
                size_t len = (size_t) (d[p + 2] | d[p + 3] << 8);
                if (len < 4 || len > fpl - p)
                        return -1;
                if (d[p] == 0x7f && d[p + 1] == 0xff)
                        break;
                if (d[p] == 4 && d[p + 1] == 4) {
                        char part[256];
                        ucs2_ascii(d + p + 4, len - 4, part, sizeof(part));
                        plen += (size_t) snprintf(o.path + plen, sizeof(o.path) - plen, "%s%s",
                                                  plen && part[0] != '\\' ? "\\" : "", part);
                        if (plen >= sizeof(o.path))
                                plen = sizeof(o.path) - 1;
                }
                p += len;
        }
        if (mb_devpath_gpt_partuuid(d, fpl, guid) == MB_OK) {
                mb_devpath_partuuid_var(guid, txt);
                ucs2_ascii(txt, sizeof(txt), o.partuuid, sizeof(o.partuuid));
        }
        *ret = o;
        return 0;
}

/* ---- output: JSON, or text lines ---------------------------------------------- */

static bool json_first;
static void jkey(const char *k) {
        if (!json_first)
                out_putc(',');
        json_first = false;
        json_string(k, strlen(k));
        out_putc(':');
}
static void jstr(const char *k, const char *v) {
        jkey(k);
        if (v)
                json_string(v, strlen(v));
        else
                out_puts("null");
}
static void jbool(const char *k, int v) {
        jkey(k);
        out_puts(v < 0 ? "null" : v ? "true" : "false");
}
static void jnum(const char *k, uint64_t v) {
        jkey(k);
        out_u64(v);
}
static void jopen(const char *k, char c) {
        if (k)
                jkey(k);
        else if (!json_first)
                out_putc(',');
        out_putc(c);
        json_first = true;
}
static void jclose(char c) {
        out_putc(c);
        json_first = false;
}

static const char *yesno(int v, const char *yes, const char *no) { return v < 0 ? "unknown" : v ? yes : no; }

/* ---- the parts ------------------------------------------------------------------ */

static void show_install(const st_opts *o, const char *record) {
        instrec r;
        int lr = instrec_load(record, &r);

        if (o->json) {
                if (lr != 0) {
                        jkey("install");
                        out_puts("null");
                        return;
                }
                jopen("install", '{');
                jstr("record", record);
                jstr("esp", r.esp);
                jstr("layout", r.layout);
                jstr("mshim", r.mshim);
                jstr("boot_entry", r.boot_entry);
                jbool("confirmed", r.confirmed);
                jopen("files", '[');
        } else if (lr != 0)
                printf("Installed: no (%s: %s)\n", record, lr == 1 ? "absent" : "unreadable");
        else
                printf("Installed: %s on %s (%s layout), boot entry %s%s\n", r.mshim, r.esp, r.layout,
                       r.boot_entry ? r.boot_entry : "none", r.confirmed ? ", confirmed (first in BootOrder)" : "");
        for (size_t i = 0; lr == 0 && i < r.n_items; i++) {
                const instrec_item *it = &r.items[i];
                char path[4096], moved[4096];
                uint8_t d[32];
                const char *state;
                if (it->kind == INSTREC_DIR)
                        continue;
                if (it->kind == INSTREC_HOST_FILE)
                        snprintf(path, sizeof(path), "%s", it->path);
                else
                        snprintf(path, sizeof(path), "%s/%s", r.esp, it->path);
                /* An entry renamed by boot counting is the recorded one. */
                if (instrec_sha256_file(path, d) == 0)
                        state = memcmp(d, it->sha256, 32) ? "changed" : "ok";
                else if (errno == ENOENT && instrec_renamed_entry(path, it->sha256, moved, sizeof(moved)) == 0)
                        state = "ok";
                else
                        state = "missing";
                if (o->json) {
                        jopen(NULL, '{');
                        jstr("path", path);
                        jstr("state", state);
                        jclose('}');
                } else if (strcmp(state, "ok") != 0 || !strcmp(it->path, r.mshim))
                        printf("  %s: %s\n", path, !strcmp(state, "ok") ? "as installed" :
                               !strcmp(state, "missing") ? "missing" : "changed since mshim install wrote it");
        }
        if (lr == 0 && o->json) {
                jclose(']');
                jclose('}');
        }
        if (lr == 0)
                instrec_free(&r);
}

static void show_firmware(const st_opts *o, const char *ev) {
        int sb = var_bool(ev, "SecureBoot"), sm = var_bool(ev, "SetupMode");
        char cur[5] = "", next[5] = "";
        cli_file f;
        const uint8_t *d = NULL;
        size_t n = 0;
        bool mok = false, have_order;
        char orderbuf[64][5];
        size_t n_order = 0;

        if (var_load(ev, "MokListRT", GUID_SHIM, &f, &d, &n) == 0) {
                mok = true;
                cli_file_free(&f);
        }
        var_u16(ev, "BootCurrent", cur);
        var_u16(ev, "BootNext", next);
        have_order = var_load(ev, "BootOrder", GUID_GLOBAL, &f, &d, &n) == 0;
        for (size_t i = 0; have_order && i + 1 < n && n_order < 64; i += 2)
                snprintf(orderbuf[n_order++], 5, "%04X", (unsigned) (d[i] | d[i + 1] << 8));
        if (have_order)
                cli_file_free(&f);
        if (o->json) {
                jopen("firmware", '{');
                jstr("efivars", ev);
                jbool("secure_boot", sb);
                jbool("setup_mode", sm);
                jbool("mok_list", mok);
                jstr("boot_current", cur[0] ? cur : NULL);
                jstr("boot_next", next[0] ? next : NULL);
                jopen("boot_order", '[');
                for (size_t i = 0; i < n_order; i++) {
                        if (i)
                                out_putc(',');
                        json_string(orderbuf[i], 4);
                }
                json_first = false;
                jclose(']');
                jopen("entries", '[');
        } else {
                printf("Secure Boot: %s; Setup Mode: %s (%s)\n", yesno(sb, "enabled", "disabled"),
                       yesno(sm, "yes (no platform key: anyone can enrol keys)", "no"), ev);
                printf("MOK: %s\n", mok ? "MokListRT present (shim ran this boot)" : "no MokListRT");
                printf("Firmware: BootCurrent %s, BootNext %s, BootOrder", cur[0] ? cur : "-", next[0] ? next : "-");
                for (size_t i = 0; i < n_order; i++)
                        printf("%c%s", i ? ',' : ' ', orderbuf[i]);
                printf("%s\n", n_order ? "" : " -");
        }
        /* The entries the chain can take: BootNext first, then BootOrder. */
        for (size_t i = 0; i <= n_order; i++) {
                const char *num = i == 0 ? next : orderbuf[i - 1];
                char name[9];
                load_option lo;
                bool ok;
                if (!num[0] || (i > 0 && !strcmp(num, next)))
                        continue;
                snprintf(name, sizeof(name), "Boot%s", num);
                ok = var_load(ev, name, GUID_GLOBAL, &f, &d, &n) == 0;
                if (ok) {
                        ok = load_option_parse(d, n, &lo) == 0;
                        cli_file_free(&f);
                }
                if (o->json) {
                        jopen(NULL, '{');
                        jstr("number", num);
                        jstr("label", ok ? lo.label : NULL);
                        jstr("path", ok && lo.path[0] ? lo.path : NULL);
                        jstr("partuuid", ok && lo.partuuid[0] ? lo.partuuid : NULL);
                        jbool("active", ok ? lo.active : -1);
                        jbool("mshim", ok ? strstr(lo.path, "\\EFI\\mshim\\") != NULL || strstr(lo.path, "\\EFI\\MSHIM\\") != NULL : -1);
                        jclose('}');
                } else if (ok)
                        printf("  Boot%s%s %s: %s%s%s\n", num, !strcmp(num, next) ? " (BootNext)" : "", lo.label,
                               lo.path[0] ? lo.path : "(no file path)", lo.partuuid[0] ? " on partition " : "",
                               lo.partuuid);
                else
                        printf("  Boot%s: absent or unreadable\n", num);
        }
        if (o->json) {
                jclose(']');
                jclose('}');
        }
}

/* What to do next with an install that is not confirmed yet (text only):
 * the trial boot's state, from the record's entry and BootCurrent and
 * BootNext. MokManager's boot spends BootNext, so after the key's
 * enrolment the trial has to be set again. */
static void show_next_step(const st_opts *o, const char *record, const char *ev) {
        char cur[5] = "", next[5] = "";
        instrec r;

        if (o->json || instrec_load(record, &r) != 0)
                return;
        var_u16(ev, "BootCurrent", cur);
        var_u16(ev, "BootNext", next);
        if (r.boot_entry && !r.confirmed) {
                if (!strcmp(cur, r.boot_entry))
                        printf("Next: this boot came through mshim (Boot%s): mshim install --confirm makes it the "
                               "default\n", cur);
                else if (!strcmp(next, r.boot_entry))
                        printf("Next: the next boot tries mshim once (BootNext %s); after it worked: mshim install "
                               "--confirm\n", next);
                else
                        printf("Next: mshim install --trial, then reboot: one trial boot through mshim (Boot%s); "
                               "BootNext is spent (MokManager's boot spends it)\n", r.boot_entry);
        }
        instrec_free(&r);
}

/* The approvals on the ESP: how many, and at which epochs (the epoch
 * counter itself is the TPM's: `mshim policy list` compares). */
static void show_policy(const st_opts *o, const char *state, const char *esp) {
        char path[8192];
        cli_file f;
        int key = -1;   /* -1 absent, 0 plain, 1 encrypted */
        uint64_t count = 0, maxep = 0;
        bool any_ep = false;
        DIR *dir;
        struct dirent *e;

        snprintf(path, sizeof(path), "%s/policy.key", state);
        if (access(path, F_OK) == 0 && cli_file_load_max(path, 1 << 20, "a key", &f) == 0) {
                key = memmem(f.data, f.size, "ENCRYPTED", 9) != NULL;
                cli_file_free(&f);
        }
        snprintf(path, sizeof(path), "%s/loader/mshim/approvals", esp ? esp : "/nonexistent");
        if (esp && (dir = opendir(path))) {
                while ((e = readdir(dir))) {
                        size_t l = strlen(e->d_name);
                        char ap[8192 + 256];
                        if (l < 10 || strcmp(e->d_name + l - 9, ".approval") != 0)
                                continue;
                        count++;
                        snprintf(ap, sizeof(ap), "%s/%s", path, e->d_name);
                        if (cli_file_load_max(ap, 1 << 20, "an approval", &f) == 0) {
                                const char *p = memmem(f.data, f.size, "\nepoch ", 7);
                                if (p) {
                                        uint64_t ep = strtoull(p + 7, NULL, 10);
                                        maxep = !any_ep || ep > maxep ? ep : maxep;
                                        any_ep = true;
                                }
                                cli_file_free(&f);
                        }
                }
                closedir(dir);
        }
        if (o->json) {
                jopen("policy", '{');
                jstr("key", key < 0 ? "absent" : key ? "encrypted" : "plain");
                jnum("approvals", count);
                jkey("highest_epoch");
                if (any_ep)
                        out_u64(maxep);
                else
                        out_puts("null");
                jclose('}');
        } else {
                printf("Policy key: %s; approvals on the ESP: %llu",
                       key < 0 ? "absent (mshim policy init has not run)" : key ? "present, encrypted" : "present, not encrypted",
                       (unsigned long long) count);
                if (any_ep)
                        printf(" (highest epoch %llu; `mshim policy list` compares them with the TPM's counter)",
                               (unsigned long long) maxep);
                printf("\n");
        }
}

static void show_tpm_boot(const st_opts *o, const char *root, const char *state, const char *ev) {
        static const char *const names[] = { "LoaderEntrySelected", "LoaderInfo", "LoaderDevicePartUUID",
                                             "LoaderEntryDefault" };
        char path[8192];
        bool dev, srk, shown = false;

        snprintf(path, sizeof(path), "%s/dev/tpmrm0", root);
        dev = access(path, F_OK) == 0;
        snprintf(path, sizeof(path), "%s/srk.public", state);
        srk = access(path, F_OK) == 0;
        if (o->json) {
                jopen("tpm", '{');
                jbool("device", dev);
                jbool("srk_record", srk);
                jclose('}');
                jopen("last_boot", '{');
        } else
                printf("TPM: %s; SRK record: %s\nLast boot:", dev ? "/dev/tpmrm0 present" : "no /dev/tpmrm0",
                       srk ? "present" : "absent");
        for (size_t i = 0; i < MB_ARRAY_SIZE(names); i++) {
                cli_file f;
                const uint8_t *d;
                size_t n;
                char val[256] = "";
                bool have = var_load(ev, names[i], GUID_LOADER, &f, &d, &n) == 0;
                if (have) {
                        ucs2_ascii(d, n, val, sizeof(val));
                        cli_file_free(&f);
                }
                shown |= have;
                if (o->json)
                        jstr(names[i], have ? val : NULL);
                else if (have)
                        printf(" %s=%s", names[i], val);
        }
        if (o->json)
                jclose('}');
        else
                printf("%s\n", shown ? "" : " no Boot Loader Interface variable set");
}

/* The keyscript's outcome for each volume this boot (hooks/cryptroot-unseal
 * leaves "unsealed" or "fallback REASON" in /run/mshim/unlock-NAME; the
 * initramfs hands /run to the system): on a fallback, the cause and the
 * commands of docs/RECOVERY.md, in mshim unseal's own words. */
static void show_unlock(const st_opts *o, const char *root) {
        char dir[4200], path[8600], line[4096];
        DIR *d;
        struct dirent *e;
        bool any = false;

        snprintf(dir, sizeof(dir), "%s/run/mshim", root);
        d = opendir(dir);
        if (o->json)
                jopen("unlock", '{');
        while (d && (e = readdir(d))) {
                FILE *f;
                size_t n;
                if (strncmp(e->d_name, "unlock-", 7) || !e->d_name[7])
                        continue;
                snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
                f = fopen(path, "r");
                if (!f)
                        continue;
                n = fread(line, 1, sizeof(line) - 1, f);
                fclose(f);
                line[n] = 0;
                line[strcspn(line, "\n")] = 0;
                if (o->json) {
                        jstr(e->d_name + 7, line);
                } else {
                        printf("%s  %s: %s\n", any ? "" : "Disk unlock this boot (the keyscript):\n", e->d_name + 7,
                               strncmp(line, "fallback ", 9) ? line : line + 9);
                        if (!strncmp(line, "fallback ", 9))
                                printf("    (the passphrase was asked: the line above names the cause and the "
                                       "commands that restore TPM unlock, docs/RECOVERY.md)\n");
                }
                any = true;
        }
        if (d)
                closedir(d);
        if (o->json)
                jclose('}');
        else if (!any)
                printf("Disk unlock this boot: nothing recorded in %s (no volume used mshim's keyscript)\n", dir);
}

int cmd_status(int argc, char **argv) {
        static const struct option longopts[] = {
                { "json", no_argument, NULL, 'j' },             { "root", required_argument, NULL, 'r' },
                { "state-dir", required_argument, NULL, 'D' },  { "efivars", required_argument, NULL, 'v' },
                { "help", no_argument, NULL, 'h' },             { 0 },
        };
        st_opts o = { 0 };
        char state[4096], ev[4096], record[4200], esp[4096] = "";
        const char *root;
        instrec r;
        int c, rc = 0;

        optind = 1;
        while ((c = cli_getopt(argc, argv, "h", longopts, "status")) != -1) {
                switch (c) {
                case 'j': o.json = true; break;
                case 'r': rc = cli_opt_once(&o.root, "--root", optarg); break;
                case 'D': rc = cli_opt_once(&o.state_dir, "--state-dir", optarg); break;
                case 'v': rc = cli_opt_once(&o.efivars, "--efivars", optarg); break;
                case 'h': cli_help(stdout, "status"); return 0;
                default: return EXIT_BAD_INPUT;
                }
                if (rc < 0)
                        return EXIT_BAD_INPUT;
        }
        if (optind != argc)
                return cli_usage_error("status", "status takes no operand ('%s')", argv[optind]);
        root = o.root ? o.root : "";
        snprintf(state, sizeof(state), "%s", o.state_dir ? o.state_dir : "");
        if (!o.state_dir)
                snprintf(state, sizeof(state), "%s/var/lib/mshim", root);
        if (o.efivars)
                snprintf(ev, sizeof(ev), "%s", o.efivars);
        else
                snprintf(ev, sizeof(ev), "%s/sys/firmware/efi/efivars", root);
        snprintf(record, sizeof(record), "%s/%s", state, INSTREC_NAME);
        /* The ESP: the recorded one, else /boot/efi (for the approvals). */
        if (instrec_load(record, &r) == 0) {
                snprintf(esp, sizeof(esp), "%s", r.esp);
                instrec_free(&r);
        } else
                snprintf(esp, sizeof(esp), "%s/boot/efi", root);
        if (o.json) {
                json_first = true;
                out_putc('{');
                jstr("schema", "mshim-status/1");
                jstr("mshim_version", MB_VERSION);
        }
        show_install(&o, record);
        show_firmware(&o, ev);
        show_next_step(&o, record, ev);
        show_policy(&o, state, esp);
        show_tpm_boot(&o, root, state, ev);
        show_unlock(&o, root);
        if (o.json)
                out_puts("}\n");
        fflush(stdout);
        return out_finish() < 0 ? EXIT_BAD_INPUT : 0;
}
