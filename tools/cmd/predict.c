/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * mshim predict: the next boot's PCR values from this boot's event log and
 * the next boot's files (docs/predict.md). The rules are the core's
 * (src/predict.c, on src/mboot.c, src/pe.c, src/bls.c); this file checks
 * the baseline, reads the files, picks the entry as mshim would, and prints.
 */
#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "cli.h"
#include "efivar.h"
#include "pcrtable.h"
#include "predict.h"
#include "sealcmd.h"
#include "mb/bls.h"
#include "mb/plan.h"
#include "mb/predict.h"
#include "sigs.h"

#define DEFAULT_LOG "/sys/kernel/security/tpm0/binary_bios_measurements"
#define JSON_SCHEMA "mshim-predict/1"
#define PLAN_SCHEMA "mshim-plan/1"     /* --list-entries --json */
#define MAX_ENTRIES MB_PLAN_MAX_ENTRIES   /* as the loader */
#define MAX_INITRD  MB_BLS_MAX_INITRD

/* PCRs the predictor may rebuild: the baseline check covers them even
 * when the log does not extend them (they must then be at reset). */
#define REBUILT_PCRS ((1u << 4) | (1u << 5) | (1u << 7) | (1u << 8) | (1u << 9) | \
                      (1u << 12) | (1u << 13) | (1u << 14))

typedef struct predict_opts {
        const char *log, *log_given, *pcrs_file, *esp, *entry_id, *kernel, *options, *entry, *loader_conf, *loader;
        const char *next_stage, *grub_cfg;
        const char *initrd[MAX_INITRD];
        size_t n_initrd;
        const char *db_append, *dbx_append;
        const char *shim, *mok;
        const char *entry_default, *oneshot;    /* --default, --oneshot: the Boot Loader Interface's */
        const char *state_dir;  /* --state-dir: where the TOTP enrolment is */
        const void *conf_bytes; /* non-NULL: loader.conf's bytes as they will be (predict_totp_values) */
        size_t conf_size;
        bool tpm, json;
        bool list_entries;      /* the plan's entry files; nothing predicted */
        bool totp_point;        /* --totp-point: the PCRs when mshim makes the TOTP code */
        uint32_t select;        /* 0: every PCR the boot extends; else these, each shown */
} predict_opts;

/* One file of the next boot, read, with its PCR 5 identity when it has one. */
typedef struct pfile {
        char *path;             /* host path, for messages */
        char *id;               /* entry file name (UTF-8) */
        cli_file f;
        bool loaded;
        uint8_t *path16;        /* \loader\... in UTF-16LE with NUL */
        size_t path16_bytes;
        mb_plan_entry plan;     /* an entry file: the boot plan's view (src/plan.c) */
} pfile;

typedef struct predict_run {
        const predict_opts *o;
        cli_file log;
        pfile conf, entry, loader, kernel, initrd[MAX_INITRD];
        pfile db_append, dbx_append;
        pfile shim, mok;
        pfile next_stage, grub_cfg;
        pfile *listing;         /* ESP entries */
        const pfile *chosen;    /* the entry that boots (in listing, or entry) */
        size_t n_listing, n_initrd;
        mb_predict_file conf_pf, entry_pf, bad_pf[MAX_ENTRIES];
        size_t n_bad;
        mb_predict_chunk chunks[MAX_INITRD];
        char *options;
        char *oneshot_var, *default_var;        /* as efivarfs holds them */
        mb_predict_input in;
        mb_predict *p;
        uint8_t *scratch;
} predict_run;

/* ---- files ----------------------------------------------------------------- */

static char *path_join(const char *dir, const char *rel) {
        size_t n = strlen(dir) + strlen(rel) + 2;
        char *s = malloc(n);

        if (!s)
                return NULL;
        /* BLS paths are from the ESP root with '/' (mshim also takes '\'). */
        while (*rel == '/' || *rel == '\\')
                rel++;
        snprintf(s, n, "%s/%s", dir, rel);
        for (char *c = s + strlen(dir); *c; c++)
                if (*c == '\\')
                        *c = '/';
        return s;
}

static int pfile_load(pfile *pf, const char *path) {
        pf->path = strdup(path);
        if (!pf->path) {
                cli_error("out of memory");
                return -1;
        }
        if (cli_file_load(path, &pf->f) < 0)
                return -1;
        pf->loaded = true;
        return 0;
}

/* An optional input: path NULL leaves *ret and *ret_size alone. */
static int pfile_opt(pfile *pf, const char *path, const void **ret, size_t *ret_size) {
        if (!path)
                return 0;
        if (pfile_load(pf, path) < 0)
                return -1;
        *ret = pf->f.data;
        *ret_size = pf->f.size;
        return 0;
}

static void pfile_free(pfile *pf) {
        if (pf->loaded)
                cli_file_free(&pf->f);
        free(pf->path);
        free(pf->id);
        free(pf->path16);
}

/* The path mshim measures: "\loader\" + rel, UTF-16LE with its NUL. */
static int pfile_path16(pfile *pf, const char *rel) {
        size_t n = strlen(rel) + 9, cap;
        char *s = malloc(n);
        mb_err r = MB_ERR_NOSPACE;

        if (s) {
                snprintf(s, n, "\\loader\\%s", rel);
                cap = (strlen(s) + 1) * 2;
                pf->path16 = malloc(cap);
                if (pf->path16)
                        r = mb_utf8_to_utf16le(s, strlen(s), pf->path16, cap, &pf->path16_bytes);
        }
        free(s);
        if (r != MB_OK) {
                cli_error("%s: cannot name it as mshim does (%s)", pf->path ? pf->path : rel, mb_strerror(r));
                return -1;
        }
        return 0;
}

static const char *base_name(const char *path) {
        const char *s = strrchr(path, '/');
        return s ? s + 1 : path;
}

/* An entry file: read and named \loader\entries\<name>; the plan
 * parses it. */
static int entry_load(pfile *pf, const char *path, const char *name) {
        char rel[300], idb[MB_PLAN_NAME_MAX];
        mb_str id = { "", 0 };

        if (pfile_load(pf, path) < 0)
                return -1;
        pf->id = strdup(name);
        /* Measured without its boot counter, as the loader does. */
        if (!pf->id || mb_plan_entry_id((mb_str) { name, strlen(name) }, idb, sizeof(idb), &id) != MB_OK ||
            snprintf(rel, sizeof(rel), "entries\\%.*s", (int) id.len, id.p) >= (int) sizeof(rel)) {
                cli_error("%s: name too long", path);
                return -1;
        }
        if (pfile_path16(pf, rel) < 0)
                return -1;
        pf->plan.id = (mb_str) { pf->id, strlen(pf->id) };
        pf->plan.buf = (const char *) pf->f.data;
        pf->plan.size = pf->f.size;
        return 0;
}

/* ---- the ESP: entries as mshim lists, sorts and picks them ------------------ */

static bool is_conf_name(const char *name) {
        size_t n = strlen(name);
        return n > 5 && strcasecmp(name + n - 5, ".conf") == 0;
}

static int esp_list(predict_run *r) {
        char *dir = path_join(r->o->esp, "loader/entries");
        DIR *d = dir ? opendir(dir) : NULL;
        struct dirent *de;
        int ret = -1;

        if (!d) {
                cli_error("%s: cannot list it: %s (an ESP without entries)", dir ? dir : r->o->esp, strerror(errno));
                goto out;
        }
        r->listing = calloc(MAX_ENTRIES, sizeof(*r->listing));
        if (!r->listing) {
                cli_error("out of memory");
                goto out;
        }
        while ((de = readdir(d))) {
                char *path;
                struct stat st;
                int rc;

                if (!is_conf_name(de->d_name))
                        continue;
                path = path_join(dir, de->d_name);
                rc = path && stat(path, &st) == 0 && S_ISREG(st.st_mode);
                if (rc && r->n_listing == MAX_ENTRIES) {
                        cli_error("%s: more than %d entry files: mshim ignores the rest, which is not predicted",
                                  dir, MAX_ENTRIES);
                        free(path);
                        goto out;
                }
                if (rc && entry_load(&r->listing[r->n_listing++], path, de->d_name) < 0) {
                        free(path);
                        goto out;
                }
                free(path);
        }
        ret = 0;
out:
        if (d)
                closedir(d);
        free(dir);
        return ret;
}

/* The entry id (the name without its boot counter), with or without
 * ".conf". */
static bool id_matches(const pfile *pf, const char *id) {
        return !pf->plan.bad_tag && mb_plan_id_matches((mb_str) { id, strlen(id) }, &pf->plan.bls);
}

/* Does the file of pf, usable or not, have entry id id (with or without
 * ".conf")? Its id is the file name without a boot counter (id_buf). */
static bool names_entry(const pfile *pf, const char *id) {
        const mb_plan_entry *e = &pf->plan;
        mb_bls_entry b = { 0 };

        b.id = (mb_str) { e->id_buf, e->counter.counted ? e->counter.stem + 5 : e->id.len };
        return b.id.len <= sizeof(e->id_buf) && mb_plan_id_matches((mb_str) { id, strlen(id) }, &b);
}

/* The boot plan mshim makes of the ESP (src/plan.c, the loader's own
 * decision): the entry it tries first, and the unusable entries it
 * measures before it. The plan's settings (TPM, TOTP) need the built-in
 * policy; which entry boots does not, so the default policy serves. */
/* One Boot Loader Interface variable: the option, else this machine's
 * (efivarfs, as the loader will read it). */
static int esp_var(const char *given, const char *name, char **held, mb_str *ret, bool *ret_set) {
        const char *v = given;

        if (!v) {
                if (efivar_get_id(NULL, name, held) < 0)
                        return -1;
                v = *held;
        }
        if (ret_set)
                *ret_set = v != NULL;
        *ret = v ? (mb_str) { v, strlen(v) } : (mb_str) { "", 0 };
        return 0;
}

static int esp_plan(predict_run *r, mb_plan *ret) {
        static const mb_boot_policy any_policy;
        mb_plan_entry *pv[MAX_ENTRIES];
        mb_plan_vars vars = { 0 };

        for (size_t i = 0; i < r->n_listing; i++)
                pv[i] = &r->listing[i].plan;
        if (esp_var(r->o->oneshot, "LoaderEntryOneShot", &r->oneshot_var, &vars.oneshot, &vars.oneshot_set) < 0 ||
            esp_var(r->o->entry_default, "LoaderEntryDefault", &r->default_var, &vars.entry_default, NULL) < 0)
                return -1;
        if (mb_plan_build(&any_policy, &vars, r->conf_pf.tag == MB_TAG_FILE_ABSENT ? MB_PLAN_CONF_ABSENT
                          : r->conf_pf.tag == MB_TAG_FILE_UNREADABLE ? MB_PLAN_CONF_UNREADABLE : MB_PLAN_CONF_READ,
                          (const char *) r->conf_pf.data, r->conf_pf.size, pv, r->n_listing, ret) != MB_OK) {
                cli_error("%s: cannot plan the boot", r->o->esp);
                return -1;
        }
        return 0;
}

static int esp_choose(predict_run *r, pfile **ret) {
        mb_plan plan;
        pfile *e;

        if (esp_plan(r, &plan) < 0)
                return -1;
        if (plan.chainload) {
                cli_error("%s: no usable entry in loader/entries: mshim would chainload its next stage, "
                          "which is not predicted yet", r->o->esp);
                return -1;
        }
        e = &r->listing[plan.boot[0]];
        if (r->o->entry_id && !id_matches(e, r->o->entry_id)) {
                for (size_t i = 0; i < r->n_listing; i++)
                        if (names_entry(&r->listing[i], r->o->entry_id))
                                goto not_first;
                cli_error("%s: no entry %s in loader/entries", r->o->esp, r->o->entry_id);
                return -1;
not_first:
                cli_error("%s: mshim would boot %s, not %s (LoaderEntryOneShot, LoaderEntryDefault, loader.conf's "
                          "default, then the BLS order); make %s the default to predict its boot", r->o->esp, e->id, r->o->entry_id, r->o->entry_id);
                return -1;
        }
        /* The plan's PCR 5 steps before the entry, replayed in its order:
         * loader.conf (load_conf), then each unusable entry file. */
        for (size_t k = 0; k < plan.n_start; k++) {
                const mb_plan_step *st = &plan.start[k];
                const pfile *b = &r->listing[st->entry];
                bool read = st->tag != MB_TAG_FILE_UNREADABLE;

                if (st->src == MB_PLAN_SRC_UNUSABLE)
                        r->bad_pf[r->n_bad++] = (mb_predict_file) { st->tag, b->path16, b->path16_bytes,
                                                                    read ? b->f.data : NULL, read ? b->f.size : 0 };
        }
        r->in.bad_entries_given = true;
        r->in.bad_entries = r->bad_pf;
        r->in.n_bad_entries = r->n_bad;
        *ret = e;
        return 0;
}

/* loader.conf from --loader-conf, else the ESP's (absent when not there). */
static int load_conf(predict_run *r) {
        const char *given = r->o->loader_conf;
        char *path = given ? strdup(given) : r->o->esp ? path_join(r->o->esp, "loader/loader.conf") : NULL;
        int ret = -1;

        if (!path)
                return given || r->o->esp ? (cli_error("out of memory"), -1) : 0;
        if (pfile_path16(&r->conf, "loader.conf") < 0)
                goto out;
        r->conf_pf = (mb_predict_file) { MB_TAG_FILE_ABSENT, r->conf.path16, r->conf.path16_bytes, NULL, 0 };
        if (r->o->conf_bytes) {
                /* The file as a caller is about to write it (totp enroll
                 * --configure): no larger than mshim reads. */
                r->conf_pf.tag = MB_TAG_LOADER_CONF;
                r->conf_pf.data = r->o->conf_bytes;
                r->conf_pf.size = r->o->conf_size;
                ret = 0;
        } else if (!given && access(path, F_OK) < 0 && errno == ENOENT) {
                ret = 0;        /* mshim measures its absence */
        } else if (pfile_load(&r->conf, path) == 0 && r->conf.f.size > MB_CONF_FILE_MAX) {
                r->conf_pf.tag = MB_TAG_FILE_UNREADABLE;        /* mshim does not read it */
                ret = 0;
        } else if (r->conf.loaded) {
                r->conf_pf.tag = MB_TAG_LOADER_CONF;
                r->conf_pf.data = r->conf.f.data;
                r->conf_pf.size = r->conf.f.size;
                ret = 0;
        }
        r->in.loader_conf = &r->conf_pf;
out:
        free(path);
        return ret;
}

/* ---- the entry, its kernel, initrds and options ----------------------------- */

static int join_options(predict_run *r, const mb_bls_entry *e) {
        size_t need = 1;

        for (size_t i = 0; i < e->n_options; i++)
                need += e->options[i].len + 1;
        r->options = malloc(need);
        if (!r->options || mb_bls_options_join(e, r->options, need, NULL) != MB_OK) {
                cli_error("out of memory");
                return -1;
        }
        return 0;
}

static int load_initrds(predict_run *r, const mb_bls_entry *e) {
        size_t n = r->o->n_initrd ? r->o->n_initrd : e ? e->n_initrd : 0;

        if (!r->o->n_initrd && !(e && r->o->esp))
                return 0;       /* unchanged */
        for (size_t i = 0; i < n; i++) {
                char *path = r->o->n_initrd ? strdup(r->o->initrd[i]) : path_join(r->o->esp, "");
                int rc;

                if (path && !r->o->n_initrd) {
                        char rel[4096];
                        snprintf(rel, sizeof(rel), "%.*s", (int) e->initrd[i].len, e->initrd[i].p);
                        free(path);
                        path = path_join(r->o->esp, rel);
                }
                rc = path ? pfile_load(&r->initrd[i], path) : -1;
                free(path);
                if (rc < 0)
                        return -1;
                r->chunks[i] = (mb_predict_chunk) { r->initrd[i].f.data, r->initrd[i].f.size };
                r->n_initrd++;
        }
        r->in.initrd_given = true;
        r->in.initrd = r->chunks;
        r->in.n_initrd = r->n_initrd;
        return 0;
}

static int load_kernel(predict_run *r, const mb_bls_entry *e) {
        char rel[4096];
        char *path;
        int rc;

        if (r->o->kernel)
                path = strdup(r->o->kernel);
        else if (e && r->o->esp && e->linux.len) {
                snprintf(rel, sizeof(rel), "%.*s", (int) e->linux.len, e->linux.p);
                path = path_join(r->o->esp, rel);
        } else
                return 0;       /* unchanged */
        rc = path ? pfile_load(&r->kernel, path) : -1;
        free(path);
        if (rc == 0) {
                r->in.kernel = r->kernel.f.data;
                r->in.kernel_size = r->kernel.f.size;
        }
        return rc;
}

/* --entry FILE: usable by the plan's rules (the plan of an ESP holding
 * this entry alone), else why mshim would skip it. */
static int entry_check(pfile *pf, const char *path) {
        static const mb_boot_policy any_policy;
        mb_plan_entry *pv[1] = { &pf->plan };
        mb_plan plan;

        if (mb_plan_build(&any_policy, NULL, MB_PLAN_CONF_ABSENT, NULL, 0, pv, 1, &plan) != MB_OK) {
                cli_error("%s: cannot plan the boot", path);
                return -1;
        }
        if (pf->plan.bad_tag == MB_TAG_FILE_UNREADABLE)
                cli_error("%s: over %u bytes, more than mshim reads: it would skip it", path, MB_CONF_FILE_MAX);
        else if (pf->plan.bad_tag && pf->plan.err == MB_ERR_UNSUPPORTED)
                cli_error("%s: its options (line %zu) hold initrd=, a file the kernel would load "
                          "unmeasured: mshim would skip it", path, pf->plan.bls.err_line);
        else if (pf->plan.bad_tag)
                cli_error("%s: not a bootable BLS entry (line %zu): mshim would skip it", path, pf->plan.bls.err_line);
        return pf->plan.bad_tag ? -1 : 0;
}

/* The entry that boots: --entry FILE, else the one mshim picks from --esp. */
static int load_entry(predict_run *r, const mb_bls_entry **ret) {
        pfile *e = NULL;

        if (r->o->esp && esp_list(r) < 0)
                return -1;
        if (r->o->esp && esp_choose(r, &e) < 0)
                return -1;
        if (r->o->entry) {
                if (entry_load(&r->entry, r->o->entry, base_name(r->o->entry)) < 0)
                        return -1;
                if (entry_check(&r->entry, r->o->entry) < 0)
                        return -1;
                e = &r->entry;
        }
        if (!e) {
                *ret = NULL;
                return 0;
        }
        r->chosen = e;
        r->entry_pf = (mb_predict_file) { MB_TAG_BLS_ENTRY, e->path16, e->path16_bytes, e->f.data, e->f.size };
        r->in.entry = &r->entry_pf;
        if (e->plan.bls.efi.len)
                r->in.next_stage_unsupported = "the entry starts an EFI program (efi), not a Linux kernel: "
                                               "what it measures is not predicted yet";
        *ret = &e->plan.bls;
        return 0;
}

/* GRUB as next stage: its image and its grub.cfg, as given. */
static int load_grub(predict_run *r) {
        if (r->o->next_stage) {
                if (pfile_load(&r->next_stage, r->o->next_stage) < 0)
                        return -1;
                r->in.next_stage = r->next_stage.f.data;
                r->in.next_stage_size = r->next_stage.f.size;
        }
        if (r->o->grub_cfg) {
                if (pfile_load(&r->grub_cfg, r->o->grub_cfg) < 0)
                        return -1;
                r->in.grub_cfg = (const char *) r->grub_cfg.f.data;
                r->in.grub_cfg_size = r->grub_cfg.f.size;
        }
        return 0;
}

/* --db-append, --dbx-append; their signature lists' checks are the
 * engine's (mb_siglist_payload), as are the rules of PCR 7. The OpenSSL
 * check of which db entry verifies a new image is tools/cmd/sigs.c's. */
static int load_sb_updates(predict_run *r) {
        r->in.sb_verify = sig_verify_with;
        return pfile_opt(&r->db_append, r->o->db_append, &r->in.db_append, &r->in.db_append_size) < 0 ||
               pfile_opt(&r->dbx_append, r->o->dbx_append, &r->in.dbx_append, &r->in.dbx_append_size) < 0 ? -1 : 0;
}

static int load_inputs(predict_run *r) {
        const mb_bls_entry *e = NULL;

        if (load_grub(r) < 0)
                return -1;

        if (load_conf(r) < 0 || load_entry(r, &e) < 0)
                return -1;
        if (pfile_opt(&r->loader, r->o->loader, &r->in.loader, &r->in.loader_size) < 0)
                return -1;
        if (load_kernel(r, e) < 0 || load_initrds(r, e) < 0 || load_sb_updates(r) < 0)
                return -1;
        if (r->o->options) {
                r->in.options = r->o->options;
        } else if (e) {
                if (join_options(r, e) < 0)
                        return -1;
                r->in.options = r->options;
        }
        if (r->in.options)
                r->in.options_len = strlen(r->in.options);
        return 0;
}

/* Behind shim: --shim (the image the firmware will start) and --mok
 * (MokList's data, as `mshim vars get STORE MokList` writes it). */
static int load_shim(predict_run *r) {
        if (pfile_opt(&r->shim, r->o->shim, &r->in.shim, &r->in.shim_size) < 0)
                return -1;
        if (r->o->mok) {
                if (pfile_load(&r->mok, r->o->mok) < 0)
                        return -1;
                r->in.mok_list_given = true;
                r->in.mok_list = r->mok.f.data;
                r->in.mok_list_size = r->mok.f.size;
        }
        return 0;
}

/* ---- the baseline: it must replay to the PCRs the TPM holds ------------------ */

static bool tpm_present(void) {
        return access("/dev/tpmrm0", F_OK) == 0 || access("/dev/tpm0", F_OK) == 0 ||
               getenv("TPM2TOOLS_TCTI") || getenv("TCTI") || getenv("TSS2_TCTI");
}

/* Every PCR the log extends, and those the predictor may rebuild, in every
 * bank mshim can hash: equal, or the log is refused, naming them all. */
static int check_baseline(predict_run *r, const mb_replay *base) {
        mb_pcr_values *actual = calloc(1, sizeof(*actual));
        char list[1024] = "", lb[16];
        size_t len = 0;
        int ret = -1;

        if (!actual) {
                cli_error("out of memory");
                return -1;
        }
        if (cli_pcr_values_load(r->o->pcrs_file, base, actual) < 0)
                goto out;
        for (uint32_t b = 0; b < base->n_banks; b++) {
                const mb_pcr_bank *bank = &base->banks[b];
                if (!bank->computable)
                        continue;
                for (uint32_t i = 0; i < MB_PCR_COUNT; i++) {
                        const uint8_t *v = mb_pcrs_get(actual, bank->alg, i);
                        /* A PCR the log does not extend is checked only
                         * when a value is given: at reset, or something
                         * outside the log extended it. */
                        if (!((bank->extended | REBUILT_PCRS) & (1u << i)) ||
                            (!v && !(bank->extended & (1u << i))) ||
                            (v && memcmp(v, bank->pcr[i], bank->size) == 0))
                                continue;
                        if (len < sizeof(list) - 64)
                                len += (size_t) snprintf(list + len, sizeof(list) - len, "%s%s PCR %u%s",
                                                         len ? ", " : "", cli_alg_label(bank->alg, lb), i,
                                                         v ? "" : " (no value given)");
                }
        }
        if (len) {
                cli_error("%s does not replay to %s: %s; refusing to predict from it", r->o->log,
                          r->o->pcrs_file ? r->o->pcrs_file : "the TPM's PCRs", list);
                goto out;
        }
        ret = 0;
out:
        free(actual);
        return ret;
}

/* ---- output ------------------------------------------------------------------ */

static bool selected(const predict_run *r, uint32_t i) {
        return !r->o->select || (r->o->select & (1u << i));
}

/* With a selection, every PCR of it is shown (one nothing extends with the
 * value it will have: a prediction says what was asked, and approvals
 * never take an absent PCR as zero); without one, each PCR the baseline or
 * the prediction extends. An unpredictable one is named wherever it is
 * selected. */
static bool shown(const predict_run *r, const mb_pcr_bank *bank, uint32_t i) {
        if (r->o->select)
                return selected(r, i);
        return ((bank->extended | r->p->baseline.banks[bank - r->p->pcrs.banks].extended) & (1u << i)) ||
               (r->p->unpredictable & (1u << i));
}

/* PCRs 17-22 reset to all ones, not zero, at TPM2_Startup on a PC
 * (TCG PC Client Platform TPM Profile, PCR attributes) and to zero only at
 * a dynamic launch: one the boot never extends has no value mshim can
 * promise. PCRs 0-16 and 23 reset to zero (PCR 0 to the start locality,
 * which the replay sets). */
static void unextended_drtm_pcrs(predict_run *r) {
        uint32_t extended = 0;

        for (uint32_t b = 0; b < r->p->pcrs.n_banks; b++)
                extended |= r->p->pcrs.banks[b].extended | r->p->baseline.banks[b].extended;
        for (uint32_t i = 17; i <= 22; i++)
                if (r->o->select & ~extended & ~r->p->unpredictable & (1u << i)) {
                        r->p->unpredictable |= 1u << i;
                        r->p->reason[i] = "nothing in the boot extends it, and its reset value depends on the "
                                          "platform (all ones, or zero after a dynamic launch)";
                }
}

/* The prediction's values of the PCRs shown; unpredictable ones with their reasons. */
static void predict_table(const predict_run *r, pcrtab *t) {
        for (uint32_t b = 0; b < r->p->pcrs.n_banks; b++) {
                const mb_pcr_bank *bank = &r->p->pcrs.banks[b];
                uint32_t shown_mask = 0;

                for (uint32_t i = 0; i < MB_PCR_COUNT; i++)
                        shown_mask |= shown(r, bank, i) ? 1u << i : 0;
                pcrtab_add(t, bank->alg, bank->size, bank->computable, shown_mask, bank->pcr);
        }
        t->changed = r->p->changed;
        t->unpredictable = r->p->unpredictable;
        t->reason = r->p->reason;
}

static void print_json(const predict_run *r) {
        json_sink js;
        mb_emit *e = &js.emit;
        pcrtab t = { 0 };
        char idx[4];

        predict_table(r, &t);
        json_sink_init(&js);
        mb_emit_begin_obj(e, NULL);
        mb_emit_cstr(e, "schema", JSON_SCHEMA);
        mb_emit_cstr(e, "mshim_version", MB_VERSION);
        mb_emit_cstr(e, "baseline", r->o->log);
        /* Which moment the values are of: approvals of the disk key want
         * the end of the boot, the TOTP key's the TOTP point. */
        mb_emit_cstr(e, "point", r->o->totp_point ? "totp" : "boot");
        pcrtab_json(&t, e);
        mb_emit_begin_arr(e, "changed");
        for (uint32_t i = 0; i < MB_PCR_COUNT; i++)
                if ((r->p->changed & (1u << i)) && selected(r, i))
                        mb_emit_u64(e, NULL, i);
        mb_emit_end_arr(e);
        mb_emit_begin_obj(e, "unpredictable");
        for (uint32_t i = 0; i < MB_PCR_COUNT; i++)
                if ((r->p->unpredictable & (1u << i)) && selected(r, i)) {
                        snprintf(idx, sizeof(idx), "%u", i);
                        mb_emit_cstr(e, idx, r->p->reason[i]);
                }
        mb_emit_end_obj(e);
        if (r->p->refused)
                mb_emit_cstr(e, "refused", r->p->refused);
        mb_emit_end_obj(e);
        out_putc('\n');
}

static void print_text(const predict_run *r) {
        pcrtab t = { 0 };

        predict_table(r, &t);
        out_puts(r->o->totp_point ? "Predicted PCRs at the next boot's TOTP point (baseline "
                                  : "Predicted PCRs for the next boot (baseline ");
        out_puts(r->o->log);
        out_puts("):\n");
        if (r->p->refused) {
                out_puts("No boot: ");
                out_puts(r->p->refused);
                out_putc('\n');
        }
        pcrtab_text(&t, PCRTAB_LIST, "");
}

/* ---- driver ------------------------------------------------------------------ */

static int report_engine_error(const predict_run *r, mb_err err) {
        switch (r->p->err_what) {
        case MB_PREDICT_LOG:
                cli_error("%s: malformed event log: %s", r->o->log, mb_strerror(err));
                break;
        case MB_PREDICT_LOADER:
                cli_error("%s: not a PE image mshim's firmware could start (%s)", r->loader.path, mb_strerror(err));
                break;
        case MB_PREDICT_KERNEL:
                cli_error("%s: not a PE image (an EFI-stub kernel): %s", r->kernel.path, mb_strerror(err));
                break;
        case MB_PREDICT_NEXT_STAGE:
                cli_error("%s: not a PE image (a GRUB EFI image): %s", r->next_stage.path, mb_strerror(err));
                break;
        case MB_PREDICT_OPTIONS:
                cli_error("the options are not valid UTF-8 (%s)", mb_strerror(err));
                break;
        case MB_PREDICT_DB_APPEND:
        case MB_PREDICT_DBX_APPEND:
                cli_error("%s: not an EFI_SIGNATURE_LIST or authenticated variable payload: %s (%s)",
                          r->p->err_what == MB_PREDICT_DB_APPEND ? r->db_append.path : r->dbx_append.path,
                          r->p->err_why ? r->p->err_why : "malformed", mb_strerror(err));
                break;
        case MB_PREDICT_SHIM:
                cli_error("%s: not a PE image (shimx64.efi): %s", r->shim.path, mb_strerror(err));
                break;
        case MB_PREDICT_MOK:
                cli_error("%s: not a MokList (an array of EFI_SIGNATURE_LISTs): %s", r->mok.path, mb_strerror(err));
                break;
        default:
                cli_error("cannot predict: %s", mb_strerror(err));
        }
        return EXIT_BAD_INPUT;
}

/* --list-entries: the plan's entry files in the order mshim tries them
 * ("boot"; the first is the one it boots), then the unusable ones in the
 * order it measures them ("unusable"), or "chainload" when none is
 * usable; --json adds the rule that chose the first
 * (docs/schema/mshim-plan-1.schema.json). Nothing is predicted: no log or
 * TPM is read. */
static void list_json(const predict_run *r, const mb_plan *plan) {
        static const char *const from[] = {
                [MB_PLAN_DEFAULT_FIRST] = "first", [MB_PLAN_DEFAULT_CONF] = "loader.conf",
                [MB_PLAN_DEFAULT_VAR] = "LoaderEntryDefault", [MB_PLAN_DEFAULT_ONESHOT] = "LoaderEntryOneShot",
        };
        json_sink js;
        mb_emit *e = &js.emit;

        json_sink_init(&js);
        mb_emit_begin_obj(e, NULL);
        mb_emit_cstr(e, "schema", PLAN_SCHEMA);
        mb_emit_cstr(e, "mshim_version", MB_VERSION);
        mb_emit_bool(e, "chainload", plan->chainload);
        if (!plan->chainload)
                mb_emit_cstr(e, "default_from", from[plan->default_from]);
        mb_emit_begin_arr(e, "boot");
        for (size_t k = 0; k < plan->n_boot; k++)
                mb_emit_cstr(e, NULL, r->listing[plan->boot[k]].id);
        mb_emit_end_arr(e);
        mb_emit_begin_arr(e, "unusable");
        for (size_t k = 0; k < plan->n_unusable; k++)
                mb_emit_cstr(e, NULL, r->listing[plan->unusable[k]].id);
        mb_emit_end_arr(e);
        mb_emit_end_obj(e);
        out_putc('\n');
}

static void list_line(const char *what, const char *id) {
        out_puts(what);
        out_putc(' ');
        out_puts(id);
        out_putc('\n');
}

static int list_entries(predict_run *r) {
        mb_plan plan;

        if (load_conf(r) < 0 || esp_list(r) < 0 || esp_plan(r, &plan) < 0)
                return EXIT_BAD_INPUT;
        if (r->o->json) {
                list_json(r, &plan);
        } else {
                for (size_t k = 0; k < plan.n_boot; k++)
                        list_line("boot", r->listing[plan.boot[k]].id);
                for (size_t k = 0; k < plan.n_unusable; k++)
                        list_line("unusable", r->listing[plan.unusable[k]].id);
                if (plan.chainload)
                        out_puts("chainload\n");
        }
        return out_finish() < 0 ? EXIT_BAD_INPUT : 0;
}

/* A baseline that did not run mshim (shim + GRUB, GRUB): the next boot is
 * the first through mshim, predicted from all of its files
 * (docs/predict.md "The first boot"). 0, or -1 with a message. */
static int first_boot_check(predict_run *r) {
        const predict_opts *o = r->o;

        /* Nothing of mshim's asked for: the next boot is this one again
         * (the baseline's values), whatever ran in it. */
        if (r->p->mshim_seen || (!o->loader && !o->esp))
                return 0;
        if (!o->loader || !o->esp) {
                cli_error("%s: the baseline boot did not run mshim: the first boot through mshim is computed from "
                          "its files: give --loader (mshimx64.efi as the firmware or shim will start it) and --esp "
                          "(the ESP tree with its loader.conf and entries)", o->log);
                return -1;
        }
        if (o->next_stage || o->grub_cfg || o->db_append || o->dbx_append) {
                cli_error("%s: the baseline boot did not run mshim: --next-stage, --grub-cfg, --db-append and "
                          "--dbx-append are not predicted for the first boot through mshim", o->log);
                return -1;
        }
        r->in.first_boot = true;
        cli_error("note: %s: the baseline boot did not run mshim: predicting the first boot through mshim "
                  "(%s), the firmware's events from the log", o->log,
                  o->shim ? "started by the same shim" : "started by the firmware");
        return 0;
}

/* The prediction into r->p: 0, or an exit status with a message. */
static int predict_run_engine(predict_run *r) {
        mb_predict_input base_in = { 0 };
        size_t scratch = 0;
        mb_err err;

        if (cli_file_load(r->o->log, &r->log) < 0)
                return EXIT_BAD_INPUT;
        r->p = calloc(1, sizeof(*r->p));
        if (!r->p) {
                cli_error("out of memory");
                return EXIT_BAD_INPUT;
        }
        /* The baseline alone first: its replay is checked before anything
         * else is read. */
        base_in.log = r->log.data;
        base_in.log_size = r->log.size;
        err = mb_predict_run(&base_in, r->p);
        if (err != MB_OK)
                return report_engine_error(r, err);
        /* The entry mshim picks is checked first (--entry-id, the kernel
         * hook's probe), whatever the baseline. */
        if (check_baseline(r, &r->p->baseline) < 0 || load_inputs(r) < 0 || first_boot_check(r) < 0 ||
            load_shim(r) < 0)
                return EXIT_BAD_INPUT;
        r->in.log = r->log.data;
        r->in.log_size = r->log.size;
        r->in.totp_point = r->o->totp_point;
        err = mb_predict_scratch_size(&r->in, &scratch);
        if (err == MB_OK && !(r->scratch = malloc(scratch ? scratch : 1)))
                err = MB_ERR_NOSPACE;
        r->in.scratch = r->scratch;
        r->in.scratch_size = scratch;
        if (err == MB_OK)
                err = mb_predict_run(&r->in, r->p);
        if (err != MB_OK)
                return report_engine_error(r, err);
        unextended_drtm_pcrs(r);
        return 0;
}

static int predict(predict_run *r) {
        int ret = predict_run_engine(r);

        if (ret)
                return ret;
        if (r->o->json)
                print_json(r);
        else
                print_text(r);
        if (out_finish() < 0)
                return EXIT_BAD_INPUT;
        for (uint32_t i = 0; i < MB_PCR_COUNT; i++)
                if ((r->p->unpredictable & (1u << i)) && selected(r, i))
                        return EXIT_CHECK_FAILED;
        return 0;
}

/* --totp-point without --select: the TOTP policy's PCRs, those of the
 * enrolment the state directory keeps (mshim totp enroll's trusted copy;
 * the ESP's is not read: approvals check it), else the default of mshim
 * totp enroll. 0, or -1 with a message. */
static int totp_select(predict_opts *o) {
        char *path = seal_path(o->state_dir ? o->state_dir : SEAL_STATE_DIR, SEAL_TOTP_TRUSTED);
        mb_totp_enrolment e;
        int k = path ? totp_enrolment_load(path, &e) : -1;

        if (k == 0)
                o->select = e.pcrs;
        else if (k == 1)
                o->select = SEAL_TOTP_DEFAULT_PCRS;
        free(path);
        return k < 0 ? -1 : 0;
}

static void run_free(predict_run *r) {
        pfile_free(&r->conf);
        pfile_free(&r->entry);
        pfile_free(&r->loader);
        pfile_free(&r->kernel);
        pfile_free(&r->db_append);
        pfile_free(&r->dbx_append);
        pfile_free(&r->shim);
        pfile_free(&r->mok);
        pfile_free(&r->next_stage);
        pfile_free(&r->grub_cfg);
        for (size_t i = 0; i < MAX_INITRD; i++)
                pfile_free(&r->initrd[i]);
        for (size_t i = 0; r->listing && i < r->n_listing; i++)
                pfile_free(&r->listing[i]);
        free(r->listing);
        free(r->options);
        free(r->oneshot_var);
        free(r->default_var);
        free(r->scratch);
        free(r->p);
        cli_file_free(&r->log);
}

/* The initrd files of the run, "A, B" (at most size bytes), for messages. */
static const char *initrd_list(const predict_run *r, char *buf, size_t size) {
        size_t len = 0;

        buf[0] = 0;
        for (size_t i = 0; i < r->n_initrd && len < size; i++)
                len += (size_t) snprintf(buf + len, size - len, "%s%s", i ? ", " : "", r->initrd[i].path);
        return r->n_initrd ? buf : "none";
}

/* Why PCR i of the next boot differs from this boot's, naming the files
 * that make it (docs/MEASUREMENTS.md: PCR 4 the kernel, PCR 9 the initrd
 * and the stub's LoadOptions, PCR 12 the command line and, with TOTP on,
 * the initrd event and the fence). */
static void not_this_boot(const predict_run *r, uint32_t i) {
        const char *entry = r->chosen ? r->chosen->path : "(no entry)";
        char list[2048];

        if (i == 4)
                cli_error("PCR 4: the next boot's kernel, %s (entry %s), is not the one this boot started",
                          r->kernel.path ? r->kernel.path : "(none)", entry);
        else if (i == 9)
                cli_error("PCR 9: the next boot's initrd (%s) or command line (entry %s) is not this boot's",
                          initrd_list(r, list, sizeof(list)), entry);
        else
                cli_error("PCR 12: the next boot's command line (entry %s), initrd (%s) or loader.conf's totp "
                          "setting is not this boot's", entry, initrd_list(r, list, sizeof(list)));
}

/* The ESP is the attacker's (docs/SECURITY.md, issue 20 finding 1's class:
 * an entry that sorts first, the real kernel, their initrd, approved while
 * the owner happened to boot another entry). So the next boot is approved
 * only when, from the ESP as it stands, it is measured in PCRs 4, 9 and 12
 * exactly as this boot was, in the log checked against the TPM: the same
 * kernel, initrd and command line, whatever the files are called. 0 with
 * the entry it boots in *ret_entry (strdup'd), or an exit status. */
#define THIS_BOOT_PCRS ((1u << 4) | (1u << 9) | (1u << 12))
static int next_is_this_boot(const char *esp, const char *log, char **ret_entry) {
        predict_opts o = { .log = log ? log : DEFAULT_LOG, .esp = esp, .select = THIS_BOOT_PCRS };
        predict_run r = { .o = &o };
        const mb_pcr_bank *next, *now;
        int ret = predict_run_engine(&r);

        next = ret == 0 ? mb_replay_bank(&r.p->pcrs, MB_ALG_SHA256) : NULL;
        now = ret == 0 ? mb_replay_bank(&r.p->baseline, MB_ALG_SHA256) : NULL;
        if (ret == 0 && (!next || !now || !next->computable)) {
                cli_error("%s: no sha256 bank in the log to compare the next boot with", o.log);
                ret = EXIT_BAD_INPUT;
        }
        for (uint32_t i = 0; ret == 0 && i < MB_PCR_COUNT; i++)
                if ((THIS_BOOT_PCRS & (1u << i)) && (r.p->unpredictable & (1u << i))) {
                        cli_error("PCR %u of the next boot cannot be predicted (%s): cannot tell whether it runs "
                                  "this boot's kernel, initrd and command line", i, r.p->reason[i]);
                        ret = EXIT_CHECK_FAILED;
                }
        for (uint32_t i = 0; ret <= EXIT_CHECK_FAILED && next && now && i < MB_PCR_COUNT; i++)
                if ((THIS_BOOT_PCRS & (1u << i)) && !(r.p->unpredictable & (1u << i)) &&
                    memcmp(next->pcr[i], now->pcr[i], next->size) != 0) {
                        not_this_boot(&r, i);
                        ret = EXIT_CHECK_FAILED;
                }
        if (ret == 0 && !(*ret_entry = strdup(r.chosen ? r.chosen->path : ""))) {
                cli_error("out of memory");
                ret = EXIT_BAD_INPUT;
        }
        if (ret == EXIT_CHECK_FAILED)
                cli_error("%s: not approving the next boot, which would run what this boot did not: make the "
                          "entry you trust (and booted) the default, boot it, and enroll again", esp);
        run_free(&r);
        return ret;
}

int predict_totp_values(const char *esp, const char *log, const void *conf, size_t conf_size, uint32_t mask,
                        uint8_t *values) {
        predict_opts o = { .log = log ? log : DEFAULT_LOG, .esp = esp, .totp_point = true, .select = mask,
                           .conf_bytes = conf, .conf_size = conf_size };
        predict_run r = { .o = &o };
        const mb_pcr_bank *bank;
        char *entry = NULL;
        size_t k = 0;
        int ret = next_is_this_boot(esp, log, &entry);

        ret = ret ? ret : predict_run_engine(&r);
        /* loader.conf as it will be picks the entry the check above saw
         * (--configure adds a totp line, which picks nothing). */
        if (ret == 0 && strcmp(entry, r.chosen ? r.chosen->path : "") != 0) {
                cli_error("%s: loader.conf as it will be boots %s, not %s: not approving it", esp,
                          r.chosen ? r.chosen->path : "no entry", entry);
                ret = EXIT_CHECK_FAILED;
        }
        if (ret == 0 && r.p->refused) {
                cli_error("%s: the next boot would start nothing: %s", esp, r.p->refused);
                ret = EXIT_CHECK_FAILED;
        }
        bank = ret == 0 ? mb_replay_bank(&r.p->pcrs, MB_ALG_SHA256) : NULL;
        if (ret == 0 && (!bank || !bank->computable)) {
                cli_error("%s: no sha256 bank in the log to predict from", o.log);
                ret = EXIT_BAD_INPUT;
        }
        for (uint32_t i = 0; ret == 0 && i < MB_PCR_COUNT; i++) {
                if (!(mask & (1u << i)))
                        continue;
                if (r.p->unpredictable & (1u << i)) {
                        cli_error("PCR %u at the next boot's TOTP point cannot be predicted: %s", i, r.p->reason[i]);
                        ret = EXIT_CHECK_FAILED;
                } else {
                        memcpy(values + SEAL_PCR_VALUE * k++, bank->pcr[i], SEAL_PCR_VALUE);
                }
        }
        free(entry);
        run_free(&r);
        return ret;
}

int cmd_predict(int argc, char **argv) {
        static const struct option longopts[] = {
                { "log", required_argument, NULL, 'l' },
                { "pcrs", required_argument, NULL, 'p' },
                { "tpm", no_argument, NULL, 't' },
                { "esp", required_argument, NULL, 'E' },
                { "entry-id", required_argument, NULL, 'I' },
                { "kernel", required_argument, NULL, 'k' },
                { "initrd", required_argument, NULL, 'i' },
                { "options", required_argument, NULL, 'o' },
                { "entry", required_argument, NULL, 'e' },
                { "loader-conf", required_argument, NULL, 'c' },
                { "loader", required_argument, NULL, 'L' },
                { "select", required_argument, NULL, 's' },
                { "json", no_argument, NULL, 'j' },
                { "next-stage", required_argument, NULL, 'N' },
                { "grub-cfg", required_argument, NULL, 'G' },
                { "shim", required_argument, NULL, 'S' },
                { "db-append", required_argument, NULL, 'D' },
                { "dbx-append", required_argument, NULL, 'X' },
                { "mok", required_argument, NULL, 'M' },
                { "totp-point", no_argument, NULL, 'T' },
                { "default", required_argument, NULL, 'F' },
                { "oneshot", required_argument, NULL, 'O' },
                { "state-dir", required_argument, NULL, 'd' },
                { "list-entries", no_argument, NULL, 'P' },
                { "help", no_argument, NULL, 'h' },
                { 0 },
        };
        predict_opts o = { .log = DEFAULT_LOG };
        predict_run r = { .o = &o };
        int c, ret;

        optind = 1;
        while ((c = cli_getopt(argc, argv, "h", longopts, "predict")) != -1) {
                int once = 0;

                switch (c) {
                case 'l': once = cli_opt_once(&o.log_given, "--log", optarg); o.log = optarg; break;
                case 'p': once = cli_opt_once(&o.pcrs_file, "--pcrs", optarg); break;
                case 't': o.tpm = true; break;
                case 'T': o.totp_point = true; break;
                case 'E': once = cli_opt_once(&o.esp, "--esp", optarg); break;
                case 'I': once = cli_opt_once(&o.entry_id, "--entry-id", optarg); break;
                case 'k': once = cli_opt_once(&o.kernel, "--kernel", optarg); break;
                case 'o': once = cli_opt_once(&o.options, "--options", optarg); break;
                case 'e': once = cli_opt_once(&o.entry, "--entry", optarg); break;
                case 'c': once = cli_opt_once(&o.loader_conf, "--loader-conf", optarg); break;
                case 'L': once = cli_opt_once(&o.loader, "--loader", optarg); break;
                case 'j': o.json = true; break;
                case 'P': o.list_entries = true; break;
                case 'i':
                        if (o.n_initrd == MAX_INITRD)
                                return cli_usage_error("predict", "at most %d --initrd files (as a BLS entry)",
                                                       MAX_INITRD);
                        o.initrd[o.n_initrd++] = optarg;
                        break;
                case 's':
                        if (cli_pcr_select_parse(optarg, &o.select) < 0)
                                return cli_usage_error("predict", "--select %s: want PCR numbers 0-23 and ranges, "
                                                       "e.g. 0-7,9,12", optarg);
                        break;
                case 'N': once = cli_opt_once(&o.next_stage, "--next-stage", optarg); break;
                case 'G': once = cli_opt_once(&o.grub_cfg, "--grub-cfg", optarg); break;
                case 'S': once = cli_opt_once(&o.shim, "--shim", optarg); break;
                case 'D': once = cli_opt_once(&o.db_append, "--db-append", optarg); break;
                case 'X': once = cli_opt_once(&o.dbx_append, "--dbx-append", optarg); break;
                case 'M': once = cli_opt_once(&o.mok, "--mok", optarg); break;
                case 'F': once = cli_opt_once(&o.entry_default, "--default", optarg); break;
                case 'O': once = cli_opt_once(&o.oneshot, "--oneshot", optarg); break;
                case 'd': once = cli_opt_once(&o.state_dir, "--state-dir", optarg); break;
                case 'h': cli_help(stdout, "predict"); return 0;
                default: return EXIT_BAD_INPUT;
                }
                if (once < 0)
                        return EXIT_BAD_INPUT;
        }
        if (optind < argc)
                return cli_usage_error("predict", "unexpected argument '%s'", argv[optind]);
        if (o.list_entries && !o.esp)
                return cli_usage_error("predict", "--list-entries needs --esp");
        if (o.list_entries && (o.log_given || o.pcrs_file || o.tpm || o.entry_id || o.kernel || o.n_initrd || o.options ||
                               o.entry || o.loader || o.select || o.next_stage || o.grub_cfg || o.shim || o.mok ||
                               o.db_append || o.dbx_append || o.totp_point || o.state_dir))
                return cli_usage_error("predict", "--list-entries goes with --esp, --loader-conf, --default, "
                                       "--oneshot and --json only (nothing is predicted)");
        if (o.list_entries) {
                ret = list_entries(&r);
                run_free(&r);
                return ret;
        }
        if (o.pcrs_file && o.tpm)
                return cli_usage_error("predict", "--pcrs and --tpm cannot be used together");
        if ((o.next_stage || o.grub_cfg) && (o.esp || o.entry || o.loader_conf || o.options))
                return cli_usage_error("predict", "--next-stage and --grub-cfg predict GRUB's boot: its command line "
                                       "and files are grub.cfg's, not --esp, --entry, --loader-conf or --options");
        if (o.entry_id && !o.esp)
                return cli_usage_error("predict", "--entry-id needs --esp");
        if ((o.entry_default || o.oneshot) && !o.esp)
                return cli_usage_error("predict", "--default and --oneshot need --esp");
        if (o.mok && !o.shim)
                return cli_usage_error("predict", "--mok needs --shim FILE (shim as the firmware will start it: "
                                       "the certificate built into it is measured with MokList)");
        if (o.state_dir && !o.totp_point)
                return cli_usage_error("predict", "--state-dir goes with --totp-point (where the TOTP enrolment is)");
        if (o.totp_point && !o.select && totp_select(&o) < 0)
                return EXIT_BAD_INPUT;
        if (!o.pcrs_file && !o.tpm && !tpm_present()) {
                cli_error("no TPM here to check the baseline log against: give --pcrs FILE");
                return EXIT_BAD_INPUT;
        }
        ret = predict(&r);
        run_free(&r);
        return ret;
}
