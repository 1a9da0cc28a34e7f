/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * mshim vars: list, read and edit an OVMF variable store file (what
 * virt-fw-vars does, for Debian 12 which lacks it). The store format is the
 * core's (src/varstore.c, src/siglist.c); this file reads certificates with
 * OpenSSL, prints, and writes the result through tools/lib/safeio.c, so that a
 * failure never leaves a half-written store behind and no output lands on
 * an input.
 */
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include "cli.h"
#include "sigs.h"
#include "safeio.h"
#include "mb/bls.h"
#include "mb/pe.h"
#include "mb/sbat.h"
#include "mb/sha.h"
#include "mb/varstore.h"

#define JSON_SCHEMA "mshim-vars/1"
#define MAX_CERTS   16
#define NAME_MAX_BYTES 512      /* UTF-16LE bytes of a variable name we accept */
/* Input size limits, so that a wrong file costs no memory (docs/FILES.md).
 * The largest store is AAVMF's, padded to its 64 MiB pflash device. */
#define STORE_MAX    ((size_t) 64 << 20)
#define CERT_MAX     ((size_t) 1 << 20)
#define POLICY_MAX   ((size_t) 1 << 20)

/* The owner recorded in signature lists we write unless --owner says
 * otherwise: mshim's own, fixed so that output is reproducible. */
static const char DEFAULT_OWNER[] = "4d0b4b1e-b009-4cb7-863a-287100431702";

typedef struct vars_opts {
        const char *file, *name, *out, *guid, *owner, *password, *password_file, *prefix, *policy;
        const char *pk, *kek[MAX_CERTS], *db[MAX_CERTS], *dbx[MAX_CERTS], *dbx_hash[MAX_CERTS], *cert;
        const char *dbx_image[MAX_CERTS];
        unsigned n_kek, n_db, n_dbx, n_dbx_hash, n_dbx_image;
        bool json, secure_boot, der;
} vars_opts;

/* A loaded store: a private, writable copy of the file. */
typedef struct store {
        uint8_t *img;
        size_t size;
        mb_varstore vs;
} store;

/* A growable byte buffer for variable data built from several lists. */
typedef struct bytes {
        uint8_t *p;
        size_t len;
} bytes;

/* ---- names and GUIDs ----------------------------------------------------- */

static const struct {
        const char *alias;
        const mb_guid *guid;
} guid_names[] = {
        { "global", &MB_GUID_GLOBAL_VARIABLE },
        { "security", &MB_GUID_IMAGE_SECURITY_DB },
        { "shim", &MB_GUID_SHIM_LOCK },
        { "secureboot-enable", &MB_GUID_SECURE_BOOT_ENABLE },
        { "custom-mode", &MB_GUID_CUSTOM_MODE },
};

static const char *guid_alias(const mb_guid *g) {
        for (size_t i = 0; i < MB_ARRAY_SIZE(guid_names); i++)
                if (mb_guid_eq(g, guid_names[i].guid))
                        return guid_names[i].alias;
        return NULL;
}

static int parse_guid_arg(const char *s, mb_guid *ret) {
        for (size_t i = 0; i < MB_ARRAY_SIZE(guid_names); i++)
                if (!strcmp(s, guid_names[i].alias)) {
                        *ret = *guid_names[i].guid;
                        return 0;
                }
        if (mb_guid_parse(s, strlen(s), ret) == MB_OK)
                return 0;
        cli_usage_error("vars", "'%s' is not a GUID (xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx) or one of "
                        "global, security, shim, secureboot-enable, custom-mode", s);
        return -1;
}

static void guid_text(const mb_guid *g, char out[40]) {
        mb_strbuf b;

        mb_strbuf_init(&b, out, 40);
        mb_strbuf_guid(&b, g->b);
        out[b.len < 40 ? b.len : 39] = 0;
}

static void name_text(const mb_var *v, char *out, size_t cap) {
        mb_strbuf b;

        mb_strbuf_init(&b, out, cap);
        mb_strbuf_utf16le(&b, v->name, v->name_size / 2);
        out[b.len < cap ? b.len : cap - 1] = 0;
}

static int name_utf16(const char *name, uint8_t out[NAME_MAX_BYTES], size_t *ret_size) {
        if (!*name || mb_utf8_to_utf16le(name, strlen(name), out, NAME_MAX_BYTES, ret_size) != MB_OK) {
                cli_usage_error("vars", "'%s' is not a usable variable name", name);
                return -1;
        }
        return 0;
}

static const char *attr_text(uint32_t a, char out[64]) {
        static const struct { uint32_t bit; const char *name; } bits[] = {
                { MB_VAR_NON_VOLATILE, "NV" }, { MB_VAR_BOOTSERVICE_ACCESS, "BS" },
                { MB_VAR_RUNTIME_ACCESS, "RT" }, { MB_VAR_HARDWARE_ERROR_RECORD, "HR" },
                { MB_VAR_AUTHENTICATED_WRITE_ACCESS, "AW" }, { MB_VAR_TIME_BASED_AUTHENTICATED_WRITE, "AT" },
                { MB_VAR_APPEND_WRITE, "AP" }, { MB_VAR_ENHANCED_AUTHENTICATED_ACCESS, "EA" },
        };
        size_t n = 0;

        out[0] = 0;
        for (size_t i = 0; i < MB_ARRAY_SIZE(bits); i++)
                if (a & bits[i].bit)
                        n += (size_t) snprintf(out + n, 64 - n, "%s%s", n ? "," : "", bits[i].name);
        if (a & ~0xffu)
                snprintf(out + n, 64 - n, "%s0x%x", n ? "," : "", a & ~0xffu);
        return out;
}

/* ---- loading and saving -------------------------------------------------- */

static const char *open_error(mb_err e) {
        switch (e) {
        case MB_ERR_TRUNCATED: return "truncated";
        case MB_ERR_UNSUPPORTED: return "unsupported variable store format (only EDK2's authenticated store is handled)";
        default: return "not an OVMF variable store, or corrupt (bad firmware volume header, checksum or record)";
        }
}

/* A private, writable copy of a loaded file, opened as a store. Errors
 * name path, or are not printed when it is NULL. */
static int store_parse(const cli_file *f, const char *path, store *ret) {
        mb_err e;

        ret->img = malloc(f->size ? f->size : 1);
        if (!ret->img) {
                if (path)
                        cli_error("out of memory reading %s", path);
                return -1;
        }
        memcpy(ret->img, f->data, f->size);
        ret->size = f->size;
        e = mb_varstore_open(ret->img, ret->size, &ret->vs);
        if (e == MB_OK)
                return 0;
        if (path)
                cli_error("%s: %s", path, open_error(e));
        free(ret->img);
        ret->img = NULL;
        return -1;
}

static int store_load(const char *path, store *ret) {
        cli_file f;
        int r;

        if (cli_file_load_max(path, STORE_MAX, "an OVMF variable store", &f) < 0)
                return -1;
        r = store_parse(&f, path, ret);
        cli_file_free(&f);
        return r;
}

/* Is path an existing, readable variable store? Quiet: only asked to keep
 * `vars get -o` off stores. */
static bool is_store(const char *path) {
        struct stat st;
        cli_file f;
        store s;
        int r;

        if (stat(path, &st) < 0 || !S_ISREG(st.st_mode) || (uintmax_t) st.st_size > STORE_MAX ||
            access(path, R_OK) < 0 || cli_file_load_max(path, STORE_MAX, "", &f) < 0)
                return false;
        r = store_parse(&f, NULL, &s);
        cli_file_free(&f);
        if (r == 0)
                free(s.img);
        return r == 0;
}

/* Re-check the edited image as a reader would before it reaches disk. */
static int store_save(store *s, const char *out) {
        mb_varstore check;

        if (mb_varstore_open(s->img, s->size, &check) != MB_OK) {
                cli_error("internal error: the edited store does not parse; nothing written");
                return -1;
        }
        return cli_write_file(out, CLI_MODE_SECRET, s->img, s->size);
}

static void store_free(store *s) {
        free(s->img);
        s->img = NULL;
}

/* ---- certificates and signature lists ------------------------------------ */

/* A PEM or DER X.509 certificate, returned as DER. */
static int cert_load(const char *path, uint8_t **ret_der, size_t *ret_len) {
        X509 *x = cred_load_cert(path);
        unsigned char *der = NULL;
        int len = x ? i2d_X509(x, &der) : -1;

        X509_free(x);
        if (len <= 0) {
                if (x)
                        cli_error("%s: cannot encode the certificate", path);
                return -1;
        }
        *ret_der = der;
        *ret_len = (size_t) len;
        return 0;
}

static int bytes_append_list(bytes *b, const mb_guid *type, const mb_guid *owner, const uint8_t *sig, size_t n) {
        size_t need;
        uint8_t *np;

        if (mb_siglist_build(type, owner, sig, n, NULL, 0, &need) != MB_OK || need > SIZE_MAX - b->len) {
                cli_error("signature too large");
                return -1;
        }
        np = realloc(b->p, b->len + need);
        if (!np) {
                cli_error("out of memory");
                return -1;
        }
        b->p = np;
        mb_siglist_build(type, owner, sig, n, b->p + b->len, need, &need);
        b->len += need;
        return 0;
}

static int bytes_append_cert(bytes *b, const char *path, const mb_guid *owner) {
        uint8_t *der;
        size_t n;
        int r;

        if (cert_load(path, &der, &n) < 0)
                return -1;
        r = bytes_append_list(b, &MB_GUID_CERT_X509, owner, der, n);
        OPENSSL_free(der);
        return r;
}

static int bytes_append_hash(bytes *b, const char *hex, const mb_guid *owner) {
        uint8_t h[32];

        if (strlen(hex) != 64)
                goto bad;
        for (size_t i = 0; i < 32; i++) {
                unsigned v;
                if (sscanf(hex + 2 * i, "%2x", &v) != 1 || !strchr("0123456789abcdefABCDEF", hex[2 * i]) ||
                    !strchr("0123456789abcdefABCDEF", hex[2 * i + 1]))
                        goto bad;
                h[i] = (uint8_t) v;
        }
        return bytes_append_list(b, &MB_GUID_CERT_SHA256, owner, h, sizeof(h));
bad:
        cli_usage_error("vars", "--dbx-hash wants a SHA-256 digest as 64 hex digits, not '%s'", hex);
        return -1;
}

/* An image's SHA-256 Authenticode digest, the dbx entry that forbids
 * exactly this build (what efitools' hash-to-efi-sig-list writes). */
static int bytes_append_image(bytes *b, const char *path, const mb_guid *owner) {
        uint8_t d[32];
        cli_file f;
        mb_err e;

        if (cli_file_load(path, &f) < 0)
                return -1;
        e = mb_pe_authenticode(f.data, f.size, MB_ALG_SHA256, d);
        cli_file_free(&f);
        if (e != MB_OK) {
                cli_error("%s: not a valid PE/COFF image (%s)", path, mb_strerror(e));
                return -1;
        }
        return bytes_append_list(b, &MB_GUID_CERT_SHA256, owner, d, sizeof(d));
}

/* ---- listing -------------------------------------------------------------- */

/* Variables whose data is a sequence of EFI_SIGNATURE_LISTs. */
static bool is_sigdb(const char *name) {
        static const char *const names[] = {
                "PK", "KEK", "db", "dbx", "dbt", "dbr", "PKDefault", "KEKDefault", "dbDefault",
                "dbxDefault", "MokList", "MokListX", "MokNew", "MokDel", "MokListRT", "MokListXRT",
        };
        for (size_t i = 0; i < MB_ARRAY_SIZE(names); i++)
                if (!strcmp(name, names[i]))
                        return true;
        return false;
}

static void x509_subject(const uint8_t *der, size_t n, char *out, size_t cap) {
        const unsigned char *p = der;
        X509 *x = d2i_X509(NULL, &p, (long) n);

        if (!x || !X509_NAME_oneline(X509_get_subject_name(x), out, (int) cap))
                snprintf(out, cap, "(unparsable certificate)");
        X509_free(x);
}

static void emit_entry(mb_emit *e, const mb_siglist *l, const uint8_t *sd, bool json) {
        const uint8_t *sig = sd + 16;
        size_t n = l->sig_size - 16;
        mb_guid owner;
        char og[40], subj[512];

        memcpy(owner.b, sd, 16);
        guid_text(&owner, og);
        if (mb_guid_eq(&l->type, &MB_GUID_CERT_X509))
                x509_subject(sig, n, subj, sizeof(subj));
        if (json) {
                mb_emit_begin_obj(e, NULL);
                mb_emit_cstr(e, "owner", og);
                if (mb_guid_eq(&l->type, &MB_GUID_CERT_X509))
                        mb_emit_cstr(e, "subject", subj);
                else
                        mb_emit_hex(e, "data", sig, n);
                mb_emit_end_obj(e);
                return;
        }
        out_puts("    ");
        if (mb_guid_eq(&l->type, &MB_GUID_CERT_X509)) {
                out_puts("x509 ");
                out_puts(subj);
        } else {
                out_puts(mb_guid_eq(&l->type, &MB_GUID_CERT_SHA256) ? "sha256 " : "data ");
                out_hex(sig, n);
        }
        out_puts("  owner=");
        out_puts(og);
        out_putc('\n');
}

static const char *list_type_name(const mb_guid *t) {
        if (mb_guid_eq(t, &MB_GUID_CERT_X509))
                return "x509";
        if (mb_guid_eq(t, &MB_GUID_CERT_SHA256))
                return "sha256";
        return NULL;
}

static mb_err count_sigs(const mb_var *v, size_t *ret_lists, size_t *ret_sigs) {
        size_t off = 0;
        mb_siglist l;
        mb_err r;

        *ret_lists = *ret_sigs = 0;
        while ((r = mb_siglist_next(v->data, v->data_size, &off, &l)) == MB_OK) {
                (*ret_lists)++;
                *ret_sigs += l.n_sigs;
        }
        return r;
}

/* The signature lists of PK/KEK/db/dbx/MokList...: a summary, then each
 * entry of the lists that parse. */
static void emit_sigdb(mb_emit *e, const mb_var *v, bool json) {
        size_t off = 0, n_lists, n_sigs;
        mb_err end = count_sigs(v, &n_lists, &n_sigs);
        char line[128];
        mb_siglist l;

        if (json) {
                mb_emit_u64(e, "signatures", n_sigs);
                mb_emit_bool(e, "signature_lists_valid", end == MB_END);
                mb_emit_begin_arr(e, "signature_lists");
        } else {
                snprintf(line, sizeof(line), "    (%zu signature list%s, %zu entr%s%s)\n", n_lists,
                         n_lists == 1 ? "" : "s", n_sigs, n_sigs == 1 ? "y" : "ies",
                         end == MB_END ? "" : "; malformed after that");
                out_puts(line);
        }
        while (mb_siglist_next(v->data, v->data_size, &off, &l) == MB_OK) {
                const char *tn = list_type_name(&l.type);
                char tg[40];

                guid_text(&l.type, tg);
                if (json) {
                        mb_emit_begin_obj(e, NULL);
                        mb_emit_cstr(e, "type", tn ? tn : tg);
                        mb_emit_begin_arr(e, "entries");
                }
                for (uint32_t i = 0; i < l.n_sigs; i++)
                        emit_entry(e, &l, l.sigs + (size_t) i * l.sig_size, json);
                if (json) {
                        mb_emit_end_arr(e);
                        mb_emit_end_obj(e);
                }
        }
        if (json)
                mb_emit_end_arr(e);
}

static void emit_var(mb_emit *e, const mb_var *v, bool json) {
        char g[40], name[256], at[64], line[400];
        const char *alias = guid_alias(&v->guid);

        guid_text(&v->guid, g);
        name_text(v, name, sizeof(name));
        attr_text(v->attributes, at);
        if (json) {
                mb_emit_begin_obj(e, NULL);
                mb_emit_cstr(e, "guid", g);
                if (alias)
                        mb_emit_cstr(e, "guid_name", alias);
                mb_emit_cstr(e, "name", name);
                mb_emit_cstr(e, "attributes", at);
                mb_emit_u64(e, "attributes_value", v->attributes);
                mb_emit_u64(e, "size", v->data_size);
                if (is_sigdb(name))
                        emit_sigdb(e, v, true);
                mb_emit_end_obj(e);
                return;
        }
        snprintf(line, sizeof(line), "%s %-17s %-22s %-12s %zu bytes\n", g, alias ? alias : "-", name, at,
                 v->data_size);
        out_puts(line);
        if (is_sigdb(name))
                emit_sigdb(e, v, false);
}

static int do_list(const vars_opts *o) {
        store s;
        json_sink js;
        size_t cursor = 0, n_live = 0;
        mb_var v;

        if (store_load(o->file, &s) < 0)
                return EXIT_BAD_INPUT;
        json_sink_init(&js);
        if (o->json) {
                mb_emit_begin_obj(&js.emit, NULL);
                mb_emit_cstr(&js.emit, "schema", JSON_SCHEMA);
                mb_emit_cstr(&js.emit, "mshim_version", MB_VERSION);
                mb_emit_cstr(&js.emit, "file", o->file);
                mb_emit_u64(&js.emit, "free_bytes", s.vs.vars_end - s.vs.free_off);
                mb_emit_begin_arr(&js.emit, "variables");
        }
        while (mb_varstore_next(&s.vs, &cursor, &v) == MB_OK)
                if (v.live) {
                        emit_var(&js.emit, &v, o->json);
                        n_live++;
                }
        if (!o->json && !n_live) {
                char line[80];

                snprintf(line, sizeof(line), "(no variables, %zu bytes free)\n", s.vs.vars_end - s.vs.free_off);
                out_puts(line);
        }
        if (o->json) {
                mb_emit_end_arr(&js.emit);
                mb_emit_end_obj(&js.emit);
                out_putc('\n');
        }
        out_flush();
        store_free(&s);
        return 0;
}

/* ---- get / delete --------------------------------------------------------- */

/* The live variable name under g: true with *ret. */
static bool find_var(const store *s, const char *name, const mb_guid *g, mb_var *ret) {
        uint8_t wname[NAME_MAX_BYTES];
        size_t wn;

        return name_utf16(name, wname, &wn) == 0 && mb_varstore_find(&s->vs, wname, wn, g, ret) == MB_OK;
}

/* The live variable NAME, under --guid if given, else the only one so
 * named. Prints its own errors. */
static int lookup(const store *s, const vars_opts *o, mb_var *ret) {
        uint8_t name[NAME_MAX_BYTES];
        size_t name_size, cursor = 0, hits = 0;
        mb_guid g;
        mb_var v;

        if (name_utf16(o->name, name, &name_size) < 0)
                return -1;
        if (o->guid) {
                if (parse_guid_arg(o->guid, &g) < 0)
                        return -1;
                if (find_var(s, o->name, &g, ret))
                        return 0;
                cli_error("%s: no variable %s under %s", o->file, o->name, o->guid);
                return -1;
        }
        while (mb_varstore_next(&s->vs, &cursor, &v) == MB_OK)
                if (v.live && v.name_size == name_size && !memcmp(v.name, name, name_size)) {
                        if (hits++ == 0)
                                *ret = v;
                }
        if (hits == 1)
                return 0;
        if (hits == 0)
                cli_error("%s: no variable named %s", o->file, o->name);
        else
                cli_error("%s: %zu variables are named %s; choose one with --guid", o->file, hits, o->name);
        return -1;
}

/* The store, and in it the variable --name [--guid] names: 0, or -1 with
 * a message (and nothing to free). */
static int store_lookup(const vars_opts *o, store *s, mb_var *v) {
        if (store_load(o->file, s) < 0)
                return -1;
        if (lookup(s, o, v) == 0)
                return 0;
        store_free(s);
        return -1;
}

static int do_get(const vars_opts *o) {
        store s;
        mb_var v;
        int r = EXIT_BAD_INPUT;

        if (store_lookup(o, &s, &v) < 0)
                return EXIT_BAD_INPUT;
        /* The editing commands' -o names the store to write; get's names a
         * data file. Mistaking one for the other must not cost a store. */
        if (o->out && is_store(o->out)) {
                cli_error("refusing to write %s's data over %s, a variable store: 'vars get -o' writes "
                          "a variable's raw data, it does not edit a store", o->name, o->out);
                goto out;
        }
        if (o->out) {
                if (cli_write_file(o->out, CLI_MODE_SECRET, v.data, v.data_size) < 0)
                        goto out;
        } else if (fwrite(v.data, 1, v.data_size, stdout) != v.data_size || fflush(stdout)) {
                cli_error("cannot write to stdout");
                goto out;
        }
        r = 0;
out:
        store_free(&s);
        return r;
}

static int do_delete(const vars_opts *o) {
        store s;
        mb_var v;
        int r = EXIT_BAD_INPUT;

        if (store_lookup(o, &s, &v) < 0)
                return EXIT_BAD_INPUT;
        if (mb_varstore_delete(&s.vs, v.name, v.name_size, &v.guid) != MB_OK) {
                cli_error("%s: cannot delete %s: the fault-tolerant-write area holds an unfinished "
                          "write (boot the firmware once to let it finish)", o->file, o->name);
                goto out;
        }
        if (store_save(&s, o->out) < 0)
                goto out;
        r = 0;
out:
        store_free(&s);
        return r;
}

/* ---- writing variables ---------------------------------------------------- */

/* EFI_TIME (UEFI 2.10, 8.3) for now, or for $SOURCE_DATE_EPOCH so that
 * builds are reproducible. Time-based authenticated variables need it: a
 * later signed update must carry a newer time. */
static void efi_time_now(uint8_t t[MB_EFI_TIME_SIZE]) {
        const char *sde = getenv("SOURCE_DATE_EPOCH");
        time_t now = sde ? (time_t) strtoll(sde, NULL, 10) : time(NULL);
        struct tm tm;

        memset(t, 0, MB_EFI_TIME_SIZE);
        if (!gmtime_r(&now, &tm))
                return;
        mb_put_le16(t, (uint16_t) (tm.tm_year + 1900));
        t[2] = (uint8_t) (tm.tm_mon + 1);
        t[3] = (uint8_t) tm.tm_mday;
        t[4] = (uint8_t) tm.tm_hour;
        t[5] = (uint8_t) tm.tm_min;
        t[6] = (uint8_t) tm.tm_sec;
}

/* EFI_TIME order (UEFI 2.10, 8.3): Year (u16), Month, Day, Hour, Minute,
 * Second, Pad1, Nanosecond (u32); the time zone and daylight fields after
 * it are not part of the order. */
static bool efi_time_before(const uint8_t a[MB_EFI_TIME_SIZE], const uint8_t b[MB_EFI_TIME_SIZE]) {
        if (mb_le16(a) != mb_le16(b))
                return mb_le16(a) < mb_le16(b);
        for (int i = 2; i <= 6; i++)
                if (a[i] != b[i])
                        return a[i] < b[i];
        return mb_le32(a + 8) < mb_le32(b + 8);
}

/* Write a variable. A time-authenticated one gets the current time, or
 * not_before when that is later: an append keeps the later of the
 * variable's and the update's TimeStamps (UEFI 2.10, 8.2.1 SetVariable,
 * EFI_VARIABLE_APPEND_WRITE). */
static int set_var_at(store *s, const char *name, const mb_guid *g, uint32_t attrs, const uint8_t *not_before,
                      const uint8_t *data, size_t n) {
        uint8_t wname[NAME_MAX_BYTES], ts[MB_EFI_TIME_SIZE];
        size_t wn;
        mb_err e;

        if (name_utf16(name, wname, &wn) < 0)
                return -1;
        efi_time_now(ts);
        if (not_before && efi_time_before(ts, not_before))
                memcpy(ts, not_before, MB_EFI_TIME_SIZE);
        e = mb_varstore_set(&s->vs, wname, wn, g, attrs,
                            attrs & MB_VAR_TIME_BASED_AUTHENTICATED_WRITE ? ts : NULL, data, n);
        if (e == MB_OK)
                return 0;
        if (e == MB_ERR_NOSPACE)
                cli_error("no room left in the variable store for %s (%zu bytes)", name, n);
        else if (e == MB_ERR_UNSUPPORTED)
                cli_error("the fault-tolerant-write area holds an unfinished write; boot the firmware "
                          "once to let it finish");
        else
                cli_error("cannot write %s: the store's free space is not erased flash", name);
        return -1;
}

static int set_var(store *s, const char *name, const mb_guid *g, uint32_t attrs, const uint8_t *data, size_t n) {
        return set_var_at(s, name, g, attrs, NULL, data, n);
}

#define ATTR_AUTH (MB_VAR_NON_VOLATILE | MB_VAR_BOOTSERVICE_ACCESS | MB_VAR_RUNTIME_ACCESS | \
                   MB_VAR_TIME_BASED_AUTHENTICATED_WRITE)
#define ATTR_NVBS (MB_VAR_NON_VOLATILE | MB_VAR_BOOTSERVICE_ACCESS)
#define ATTR_NVBSRT (ATTR_NVBS | MB_VAR_RUNTIME_ACCESS)

static int build_db(bytes *b, const char *const *certs, unsigned n, const mb_guid *owner) {
        for (unsigned i = 0; i < n; i++)
                if (bytes_append_cert(b, certs[i], owner) < 0)
                        return -1;
        return 0;
}

/* dbx from --dbx certificates, --dbx-hash digests and --dbx-image images. */
static int build_dbx(bytes *b, const vars_opts *o, const mb_guid *owner) {
        if (build_db(b, o->dbx, o->n_dbx, owner) < 0)
                return -1;
        for (unsigned i = 0; i < o->n_dbx_hash; i++)
                if (bytes_append_hash(b, o->dbx_hash[i], owner) < 0)
                        return -1;
        for (unsigned i = 0; i < o->n_dbx_image; i++)
                if (bytes_append_image(b, o->dbx_image[i], owner) < 0)
                        return -1;
        return 0;
}

static int enroll_keys(store *s, const vars_opts *o, const mb_guid *owner) {
        bytes pk = { 0 }, kek = { 0 }, db = { 0 }, dbx = { 0 };
        int r = -1;

        /* Read every certificate before touching the store: a bad one
         * must not leave half the keys written. */
        if (build_db(&pk, &o->pk, 1, owner) < 0 || build_db(&kek, o->kek, o->n_kek, owner) < 0 ||
            build_db(&db, o->db, o->n_db, owner) < 0 || build_dbx(&dbx, o, owner) < 0)
                goto out;
        /* db and dbx first, PK last, as a firmware enrolling them in
         * setup mode must: writing PK ends setup mode. */
        if (set_var(s, "db", &MB_GUID_IMAGE_SECURITY_DB, ATTR_AUTH, db.p, db.len) < 0 ||
            (dbx.len && set_var(s, "dbx", &MB_GUID_IMAGE_SECURITY_DB, ATTR_AUTH, dbx.p, dbx.len) < 0) ||
            set_var(s, "KEK", &MB_GUID_GLOBAL_VARIABLE, ATTR_AUTH, kek.p, kek.len) < 0 ||
            set_var(s, "PK", &MB_GUID_GLOBAL_VARIABLE, ATTR_AUTH, pk.p, pk.len) < 0)
                goto out;
        r = 0;
out:
        free(pk.p);
        free(kek.p);
        free(db.p);
        free(dbx.p);
        return r;
}

/* EDK2 AuthVariableLib: with a PK, SecureBoot is on iff SecureBootEnable
 * is 1 (a missing one is created as 1); CustomMode 0 is standard mode, in
 * which db/dbx/KEK/PK updates need signatures. */
static int set_secure_boot(store *s, bool on) {
        uint8_t enable = on ? 1 : 0, custom = 0;

        if (set_var(s, "SecureBootEnable", &MB_GUID_SECURE_BOOT_ENABLE, ATTR_NVBS, &enable, 1) < 0)
                return -1;
        return on ? set_var(s, "CustomMode", &MB_GUID_CUSTOM_MODE, ATTR_NVBS, &custom, 1) : 0;
}

static int do_enroll(const vars_opts *o) {
        store s;
        mb_guid owner;
        int r = EXIT_BAD_INPUT;

        if (!o->pk || !o->n_kek || !o->n_db)
                return cli_usage_error("vars", "vars enroll needs --pk, --kek and --db");
        if (parse_guid_arg(o->owner ? o->owner : DEFAULT_OWNER, &owner) < 0)
                return EXIT_BAD_INPUT;
        if (store_load(o->file, &s) < 0)
                return EXIT_BAD_INPUT;
        if (enroll_keys(&s, o, &owner) < 0 || set_secure_boot(&s, o->secure_boot) < 0)
                goto out;
        if (store_save(&s, o->out) < 0)
                goto out;
        r = 0;
out:
        store_free(&s);
        return r;
}

/* Is this exact signature already an entry of the lists in data? */
static bool sigdb_contains(const uint8_t *data, size_t n, const mb_guid *type, const uint8_t *sig, size_t len) {
        size_t off = 0;
        mb_siglist l;

        while (mb_siglist_next(data, n, &off, &l) == MB_OK) {
                if (!mb_guid_eq(&l.type, type) || l.sig_size - 16 != len)
                        continue;
                for (uint32_t i = 0; i < l.n_sigs; i++)
                        if (!memcmp(l.sigs + (size_t) i * l.sig_size + 16, sig, len))
                                return true;
        }
        return false;
}

/* shim reads MokList (NV|BS only: shim treats a runtime-visible MokList as
 * forged) and trusts every certificate in it. */
static int do_add_mok(const vars_opts *o) {
        uint8_t *der = NULL;
        size_t der_len;
        bytes b = { 0 };
        store s;
        mb_var old;
        int r = EXIT_BAD_INPUT;

        if (!o->cert)
                return cli_usage_error("vars", "vars add-mok needs --cert CERT");
        if (store_load(o->file, &s) < 0)
                return EXIT_BAD_INPUT;
        if (find_var(&s, "MokList", &MB_GUID_SHIM_LOCK, &old)) {
                b.p = malloc(old.data_size ? old.data_size : 1);
                if (!b.p) {
                        cli_error("out of memory");
                        goto out;
                }
                memcpy(b.p, old.data, old.data_size);
                b.len = old.data_size;
        }
        if (cert_load(o->cert, &der, &der_len) < 0)
                goto out;
        /* Like mokutil, refuse a certificate that is already enrolled. */
        if (sigdb_contains(b.p, b.len, &MB_GUID_CERT_X509, der, der_len)) {
                cli_error("%s: %s is already in MokList", o->file, o->cert);
                goto out;
        }
        if (bytes_append_list(&b, &MB_GUID_CERT_X509, &MB_GUID_SHIM_LOCK, der, der_len) < 0 ||
            set_var(&s, "MokList", &MB_GUID_SHIM_LOCK, ATTR_NVBS, b.p, b.len) < 0 ||
            store_save(&s, o->out) < 0)
                goto out;
        r = 0;
out:
        OPENSSL_free(der);
        free(b.p);
        store_free(&s);
        return r;
}

/* ---- append ---------------------------------------------------------------- */

/* Append the lists in add to variable name/g as firmware appends
 * (mb_siglist_append: an entry already there is not added twice), keeping
 * the variable's attributes; a variable that does not exist yet is created
 * like enroll's. Says how many entries were already there. */
static int append_var(store *s, const char *name, const mb_guid *g, const bytes *add) {
        uint8_t *out = NULL;
        size_t len = 0, added = 0, n_lists, n_new;
        mb_var old = { .attributes = ATTR_AUTH };
        bool exists;
        mb_err e;
        int r = -1;

        if (!add->len)
                return 0;
        exists = find_var(s, name, g, &old);
        out = malloc(old.data_size + add->len);
        if (!out) {
                cli_error("out of memory");
                return -1;
        }
        e = mb_siglist_append(old.data, old.data_size, add->p, add->len, out, old.data_size + add->len, &len, &added);
        if (e != MB_OK) {
                cli_error("%s holds malformed signature lists (%s); not appending to it", name, mb_strerror(e));
                goto out;
        }
        count_sigs(&(mb_var) { .data = add->p, .data_size = add->len }, &n_lists, &n_new);
        if (added < n_new)
                cli_error("%s: %zu new entr%s already there; not added again", name, n_new - added,
                          n_new - added == 1 ? "y is" : "ies are");
        r = added ? set_var_at(s, name, g, old.attributes, exists ? old.timestamp : NULL, out, len) : 0;
out:
        free(out);
        return r;
}

/* efi-updatevar -a: new entries for db, dbx and KEK; PK and every other
 * variable stay as they are. */
static int do_append(const vars_opts *o) {
        bytes kek = { 0 }, db = { 0 }, dbx = { 0 };
        mb_guid owner;
        store s = { 0 };
        int r = EXIT_BAD_INPUT;

        if (o->pk || o->secure_boot || o->cert)
                return cli_usage_error("vars", "vars append only adds to db, dbx and KEK (--pk, --secure-boot "
                                       "and --cert belong to other commands)");
        if (!o->n_kek && !o->n_db && !o->n_dbx && !o->n_dbx_hash && !o->n_dbx_image)
                return cli_usage_error("vars", "vars append needs --db, --dbx, --dbx-hash, --dbx-image or --kek");
        if (parse_guid_arg(o->owner ? o->owner : DEFAULT_OWNER, &owner) < 0)
                return EXIT_BAD_INPUT;
        /* Every input is read before the store is touched. */
        if (build_db(&kek, o->kek, o->n_kek, &owner) < 0 || build_db(&db, o->db, o->n_db, &owner) < 0 ||
            build_dbx(&dbx, o, &owner) < 0 || store_load(o->file, &s) < 0)
                goto out;
        if (append_var(&s, "db", &MB_GUID_IMAGE_SECURITY_DB, &db) < 0 ||
            append_var(&s, "dbx", &MB_GUID_IMAGE_SECURITY_DB, &dbx) < 0 ||
            append_var(&s, "KEK", &MB_GUID_GLOBAL_VARIABLE, &kek) < 0 || store_save(&s, o->out) < 0)
                goto out;
        r = 0;
out:
        free(kek.p);
        free(db.p);
        free(dbx.p);
        store_free(&s);
        return r;
}

/* ---- certs / export -------------------------------------------------------- */

typedef void (*cert_visit)(const char *var, size_t index, const uint8_t *owner, const uint8_t *der, size_t n,
                           void *u);

/* Call fn for each X.509 entry of v, numbered from 0 in order. The lists
 * must be well-formed: a malformed variable is refused whole. */
static int for_each_cert(const vars_opts *o, const mb_var *v, const char *name, cert_visit fn, void *u) {
        size_t off = 0, n_lists, n_sigs, k = 0;
        mb_siglist l;

        if (count_sigs(v, &n_lists, &n_sigs) != MB_END) {
                cli_error("%s: %s does not hold well-formed signature lists", o->file, name);
                return -1;
        }
        while (mb_siglist_next(v->data, v->data_size, &off, &l) == MB_OK)
                for (uint32_t i = 0; mb_guid_eq(&l.type, &MB_GUID_CERT_X509) && i < l.n_sigs; i++) {
                        const uint8_t *sd = l.sigs + (size_t) i * l.sig_size;
                        fn(name, k++, sd, sd + 16, l.sig_size - 16, u);
                }
        return 0;
}

/* As `mokutil --list-enrolled` shows a key: its SHA-1 fingerprint, subject
 * and issuer; and its owner. */
static void show_cert(const char *var, size_t index, const uint8_t *owner, const uint8_t *der, size_t n, void *u) {
        const unsigned char *p = der;
        X509 *x = d2i_X509(NULL, &p, (long) n);
        unsigned char fp[EVP_MAX_MD_SIZE];
        unsigned fplen = 0;
        char line[600], og[40];
        mb_guid g;

        memcpy(g.b, owner, 16);
        guid_text(&g, og);
        snprintf(line, sizeof(line), "%s [%zu]\n", var, index);
        out_puts(line);
        if (!x || !X509_digest(x, EVP_sha1(), fp, &fplen)) {
                out_puts("  (unparsable certificate)\n");
        } else {
                out_puts("  SHA1 Fingerprint: ");
                for (unsigned i = 0; i < fplen; i++) {
                        snprintf(line, sizeof(line), "%s%02x", i ? ":" : "", fp[i]);
                        out_puts(line);
                }
                out_puts("\n  subject: ");
                out_puts(X509_NAME_oneline(X509_get_subject_name(x), line, sizeof(line)) ? line : "?");
                out_puts("\n  issuer:  ");
                out_puts(X509_NAME_oneline(X509_get_issuer_name(x), line, sizeof(line)) ? line : "?");
                out_putc('\n');
        }
        out_puts("  owner:   ");
        out_puts(og);
        out_putc('\n');
        *(size_t *) u += 1;
        X509_free(x);
}

static int do_certs(const vars_opts *o) {
        size_t cursor = 0, shown = 0;
        store s;
        mb_var v;
        int r = 0;

        if (store_load(o->file, &s) < 0)
                return EXIT_BAD_INPUT;
        if (o->name) {
                r = lookup(&s, o, &v) < 0 || for_each_cert(o, &v, o->name, show_cert, &shown) < 0;
        } else {
                while (r == 0 && mb_varstore_next(&s.vs, &cursor, &v) == MB_OK) {
                        char name[256];

                        name_text(&v, name, sizeof(name));
                        if (v.live && is_sigdb(name))
                                r = for_each_cert(o, &v, name, show_cert, &shown) < 0;
                }
        }
        if (r == 0 && !shown)
                out_puts(o->name ? "(no certificates)\n" : "(no certificates in any signature database)\n");
        if (out_finish() < 0)
                r = 1;
        store_free(&s);
        return r ? EXIT_BAD_INPUT : 0;
}

typedef struct export_ctx {
        const vars_opts *o;
        bool write;     /* false: the checking pass */
        int failed;
        size_t n;
} export_ctx;

/* Write one certificate: its bytes exactly as stored (as efitools'
 * sig-list-to-certs writes them), as DER or PEM, to PREFIX-N.der/.pem or,
 * as PEM, to standard output. */
static int write_cert(const vars_opts *o, size_t index, const uint8_t *der, size_t n) {
        BIO *pem = NULL;
        char *path = NULL, *text = NULL;
        size_t plen = o->prefix ? strlen(o->prefix) + 32 : 0;
        long tlen = 0;
        int r = -1;

        if (!o->der && (!(pem = BIO_new(BIO_s_mem())) || !PEM_write_bio(pem, "CERTIFICATE", "", der, (long) n) ||
                        (tlen = BIO_get_mem_data(pem, &text)) <= 0))
                cli_error("out of memory");
        else if (!o->prefix) {
                out_put(text, (size_t) tlen);
                r = 0;
        } else if (!(path = malloc(plen)))
                cli_error("out of memory");
        else {
                snprintf(path, plen, "%s-%zu.%s", o->prefix, index, o->der ? "der" : "pem");
                r = cli_write_file(path, CLI_MODE_PUBLIC, o->der ? der : (const uint8_t *) text, o->der ? n : (size_t) tlen);
                if (r == 0) {
                        out_puts(path);
                        out_putc('\n');
                }
        }
        free(path);
        BIO_free(pem);
        return r;
}

/* Two passes: every entry must be a whole X.509 certificate before the
 * first file is written. */
static void export_cert(const char *var, size_t index, const uint8_t *owner, const uint8_t *der, size_t n, void *u) {
        export_ctx *c = u;
        const unsigned char *p = der;
        X509 *x;

        if (c->failed)
                return;
        if (c->write) {
                c->failed = write_cert(c->o, index, der, n) < 0;
                return;
        }
        x = d2i_X509(NULL, &p, (long) n);
        c->failed = !x || p != der + n;
        c->n++;
        X509_free(x);
        if (c->failed)
                cli_error("%s: %s [%zu] is not a well-formed X.509 certificate; nothing exported", c->o->file, var, index);
}

static int do_export(const vars_opts *o) {
        export_ctx c = { .o = o };
        store s;
        mb_var v;
        int r = EXIT_BAD_INPUT;

        if (o->der && !o->prefix) {
                cli_error("vars export --der writes files: give --prefix PREFIX");
                return EXIT_BAD_INPUT;
        }
        if (store_load(o->file, &s) < 0)
                return EXIT_BAD_INPUT;
        if (lookup(&s, o, &v) < 0 || for_each_cert(o, &v, o->name, export_cert, &c) < 0 || c.failed)
                goto out;
        if (c.n == 0) {
                cli_error("%s: %s holds no X.509 certificate", o->file, o->name);
                goto out;
        }
        c.write = true;
        for_each_cert(o, &v, o->name, export_cert, &c);
        r = c.failed ? EXIT_BAD_INPUT : 0;
out:
        if (out_finish() < 0)
                r = EXIT_BAD_INPUT;
        store_free(&s);
        return r;
}

/* The password from --password, --password-file, the terminal, or the
 * first line of standard input. */
static char *read_password(const vars_opts *o) {
        char *line = NULL, *s;
        size_t cap = 0;
        ssize_t n;

        if (o->password && o->password_file) {
                cli_error("give --password or --password-file, not both");
                return NULL;
        }
        if (o->password)
                return strdup(o->password);
        if (o->password_file)
                return cli_secret_file(o->password_file, "a password file");
        if (isatty(STDIN_FILENO))
                return cli_tty_new_secret(STDIN_FILENO, "MOK password: ", "MOK password again: ");
        n = getline(&line, &cap, stdin);
        if (n < 0) {
                free(line);
                cli_usage_error("vars", "vars mok-import: no --password and no password on standard input");
                return NULL;
        }
        s = cli_first_line((const uint8_t *) line, (size_t) n);
        explicit_bzero(line, cap);
        free(line);
        return s;
}

/* What `mokutil --import CERT` leaves for shim: MokNew holds the request,
 * MokAuth its SHA-256 with the password; shim sees MokNew at the next boot
 * and starts MokManager, which asks for the password before enrolling. */
static int do_mok_import(const vars_opts *o) {
        bytes b = { 0 };
        char *pw = NULL;
        uint8_t auth[32];
        store s = { 0 };
        int r = EXIT_BAD_INPUT;
        mb_err e;

        if (!o->cert)
                return cli_usage_error("vars", "vars mok-import needs --cert CERT");
        if (store_load(o->file, &s) < 0)
                return EXIT_BAD_INPUT;
        if (bytes_append_cert(&b, o->cert, &MB_GUID_SHIM_LOCK) < 0)
                goto out;
        pw = read_password(o);
        if (!pw)
                goto out;
        e = mb_mok_auth(b.p, b.len, pw, strlen(pw), auth);
        if (e != MB_OK) {
                cli_error("the MOK password must be 1 to 256 printable ASCII characters");
                goto out;
        }
        if (set_var(&s, "MokNew", &MB_GUID_SHIM_LOCK, ATTR_NVBSRT, b.p, b.len) < 0 ||
            set_var(&s, "MokAuth", &MB_GUID_SHIM_LOCK, ATTR_NVBSRT, auth, sizeof(auth)) < 0 ||
            store_save(&s, o->out) < 0)
                goto out;
        r = 0;
out:
        cli_secret_free(pw);
        free(b.p);
        store_free(&s);
        return r;
}

/* shim's SbatLevel (its sbat.h: shim's vendor GUID, NV+BS, the policy
 * text without a NUL): what mshim reads, with Secure Boot on, to refuse
 * revoked images (docs/SIGNING.md). The text must parse as a policy. */
static int do_sbat_level(const vars_opts *o) {
        cli_file f = { 0 };
        mb_sbat_iter it;
        mb_sbat_entry e;
        store s = { 0 };
        int r = EXIT_BAD_INPUT;
        mb_err pe;

        if (!o->policy)
                return cli_usage_error("vars", "vars sbat-level needs --policy FILE");
        if (cli_file_load_max(o->policy, POLICY_MAX, "an SbatLevel policy", &f) < 0)
                return EXIT_BAD_INPUT;
        mb_sbat_policy_init(&it, f.data, f.size);
        while ((pe = mb_sbat_next(&it, &e)) == MB_OK)
                ;
        if (pe != MB_END || f.size == 0 || memchr(f.data, 0, f.size)) {
                cli_error("%s: line %zu: not an SbatLevel policy (\"sbat,1,DATE\" first, then "
                          "\"component,generation\" lines, no NUL)", o->policy, it.lineno);
                goto out;
        }
        if (store_load(o->file, &s) < 0)
                goto out;
        if (set_var(&s, "SbatLevel", &MB_GUID_SHIM_LOCK, ATTR_NVBS, f.data, f.size) < 0 ||
            store_save(&s, o->out) < 0)
                goto out;
        r = 0;
out:
        store_free(&s);
        cli_file_free(&f);
        return r;
}

/* ---- command line ----------------------------------------------------------- */

static int add_cert(const char **list, unsigned *n, const char *opt, const char *v) {
        if (*n >= MAX_CERTS) {
                cli_usage_error("vars", "at most %d %s options", MAX_CERTS, opt);
                return -1;
        }
        list[(*n)++] = v;
        return 0;
}

static int parse_opts(int argc, char **argv, vars_opts *o) {
        enum { O_GUID = 256, O_JSON, O_PK, O_KEK, O_DB, O_DBX, O_DBXH, O_OWNER, O_SB, O_CERT, O_PW, O_DBXI,
               O_PREFIX, O_DER, O_POLICY, O_PWF };
        static const struct option opts[] = {
                { "help", no_argument, NULL, 'h' }, { "output", required_argument, NULL, 'o' },
                { "guid", required_argument, NULL, O_GUID }, { "json", no_argument, NULL, O_JSON },
                { "pk", required_argument, NULL, O_PK }, { "kek", required_argument, NULL, O_KEK },
                { "db", required_argument, NULL, O_DB }, { "dbx", required_argument, NULL, O_DBX },
                { "dbx-hash", required_argument, NULL, O_DBXH }, { "owner", required_argument, NULL, O_OWNER },
                { "secure-boot", no_argument, NULL, O_SB }, { "cert", required_argument, NULL, O_CERT },
                { "password", required_argument, NULL, O_PW }, { "dbx-image", required_argument, NULL, O_DBXI },
                { "prefix", required_argument, NULL, O_PREFIX }, { "der", no_argument, NULL, O_DER },
                { "policy", required_argument, NULL, O_POLICY },
                { "password-file", required_argument, NULL, O_PWF }, { 0 },
        };
        int c, r = 0;

        optind = 1;
        while (r == 0 && (c = cli_getopt(argc, argv, "ho:", opts, "vars")) != -1) {
                switch (c) {
                case 'h': cli_help(stdout, "vars"); return 1;
                case 'o': r = cli_opt_once(&o->out, "-o/--output", optarg); break;
                case O_GUID: r = cli_opt_once(&o->guid, "--guid", optarg); break;
                case O_JSON: o->json = true; break;
                case O_PK: r = cli_opt_once(&o->pk, "--pk", optarg); break;
                case O_KEK: r = add_cert(o->kek, &o->n_kek, "--kek", optarg); break;
                case O_DB: r = add_cert(o->db, &o->n_db, "--db", optarg); break;
                case O_DBX: r = add_cert(o->dbx, &o->n_dbx, "--dbx", optarg); break;
                case O_DBXH: r = add_cert(o->dbx_hash, &o->n_dbx_hash, "--dbx-hash", optarg); break;
                case O_OWNER: r = cli_opt_once(&o->owner, "--owner", optarg); break;
                case O_SB: o->secure_boot = true; break;
                case O_CERT: r = cli_opt_once(&o->cert, "--cert", optarg); break;
                case O_PW: r = cli_opt_once(&o->password, "--password", optarg); break;
                case O_PWF: r = cli_opt_once(&o->password_file, "--password-file", optarg); break;
                case O_DBXI: r = add_cert(o->dbx_image, &o->n_dbx_image, "--dbx-image", optarg); break;
                case O_PREFIX: r = cli_opt_once(&o->prefix, "--prefix", optarg); break;
                case O_DER: o->der = true; break;
                case O_POLICY: r = cli_opt_once(&o->policy, "--policy", optarg); break;
                default: return -1;
                }
        }
        return r;
}

/* No output over a certificate or password file read, nor, for get,
 * over the store read (the editing commands edit it in place). */
static int out_not_input(const vars_opts *o, bool store_too) {
        cli_input in[5 + 4 * MAX_CERTS] = {
                { "the variable store", store_too ? o->file : NULL }, { "the --pk certificate", o->pk },
                { "the --cert certificate", o->cert }, { "the --password-file", o->password_file },
                { "the --policy file", o->policy },
        };
        const struct { const char *what; const char *const *v; unsigned n; } lists[] = {
                { "a --kek certificate", o->kek, o->n_kek }, { "a --db certificate", o->db, o->n_db },
                { "a --dbx certificate", o->dbx, o->n_dbx }, { "a --dbx-image image", o->dbx_image, o->n_dbx_image },
        };
        size_t n = 5;

        for (size_t l = 0; l < MB_ARRAY_SIZE(lists); l++)
                for (unsigned i = 0; i < lists[l].n; i++)
                        in[n++] = (cli_input) { lists[l].what, lists[l].v[i] };
        return cli_out_not_input(o->out, in, n);
}

static const struct {
        const char *name;
        int (*run)(const vars_opts *o);
        bool takes_name, writes, name_optional;
} vars_cmds[] = {
        { "list", do_list, false, false, false },
        { "get", do_get, true, false, false },
        { "delete", do_delete, true, true, false },
        { "enroll", do_enroll, false, true, false },
        { "append", do_append, false, true, false },
        { "certs", do_certs, true, false, true },
        { "export", do_export, true, false, false },
        { "add-mok", do_add_mok, false, true, false },
        { "mok-import", do_mok_import, false, true, false },
        { "sbat-level", do_sbat_level, false, true, false },
};

int cmd_vars(int argc, char **argv) {
        vars_opts o = { 0 };
        const char *sub = argc > 1 ? argv[1] : NULL;
        int r, want;

        if (sub && (!strcmp(sub, "-h") || !strcmp(sub, "--help"))) {
                cli_help(stdout, "vars");
                return 0;
        }
        for (size_t i = 0; sub && i < MB_ARRAY_SIZE(vars_cmds); i++) {
                if (strcmp(sub, vars_cmds[i].name))
                        continue;
                r = parse_opts(argc - 1, argv + 1, &o);
                if (r)
                        return r > 0 ? 0 : EXIT_BAD_INPUT;
                want = vars_cmds[i].takes_name ? 2 : 1;
                if (vars_cmds[i].name_optional && argc - 1 - optind == 1)
                        want = 1;
                if (argc - 1 - optind != want)
                        return cli_usage_error("vars", "vars %s takes %s", sub, want == 2 ? "FILE and NAME" : "one FILE");
                o.file = argv[1 + optind];
                o.name = want == 2 ? argv[2 + optind] : NULL;
                if (vars_cmds[i].writes && !o.out)
                        return cli_usage_error("vars", "vars %s needs -o OUT (give -o %s to change the file in place)",
                                               sub, o.file);
                if (o.out && out_not_input(&o, !vars_cmds[i].writes) < 0)
                        return EXIT_BAD_INPUT;
                return vars_cmds[i].run(&o);
        }
        if (sub)
                return cli_usage_error("vars", "unknown vars command '%s'", sub);
        return cli_usage_error("vars", "vars needs a command: list, get, delete, enroll, append, certs, export, add-mok, mok-import or sbat-level");
}
