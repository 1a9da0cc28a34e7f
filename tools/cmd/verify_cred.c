/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * mshim verify challenge | register: the verifier proves that a machine's
 * attestation key lives in the same TPM as its endorsement key before it
 * trusts the AK's quotes (docs/ATTESTATION.md "Proving the AK").
 *
 * challenge: the EK (a TPM2B_PUBLIC, or a certificate checked against the
 * verifier's EK CA directory) and the AK's public area; the AK must have an
 * AK's attributes; a random secret is made into a credential for the AK's
 * Name under the EK (TPM2_MakeCredential in software, tools/lib/makecred.c),
 * written as a tpm2-tools credential file, and the secret's SHA-256 is kept
 * in DIR/pending/NAME.json with the EK and the AK.
 *
 * register: the secret the machine recovered (TPM2_ActivateCredential: only
 * a TPM holding that EK and an object of that Name can) against the pending
 * challenge; the machine is then recorded in DIR/machines/NAME.json. A
 * challenge is answered once: a wrong secret spends it.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <openssl/crypto.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/x509.h>
#include "makecred.h"
#include "mb/tpm2.h"
#include "safeio.h"
#include "verify.h"

#define VERIFIER_DIR    "/var/lib/mshim/verifier"
#define MACHINE_SCHEMA  "mshim-machine/1"
#define SECRET_SIZE     32u
#define STATE_MAX       ((size_t) 1 << 20)

/* An AK: a restricted signing key that never left the TPM that made it
 * (fixedTPM, fixedParent, sensitiveDataOrigin) and decrypts nothing. A
 * restricted key signs only what the TPM made (Part 1 §19.2.4), and the
 * other three attributes are in the Name the TPM proves it holds: a key
 * imported or duplicated from outside could not have them. */
#define AK_NEEDS (MB_ATTEST_OBJ_FIXED_TPM | MB_ATTEST_OBJ_FIXED_PARENT | MB_ATTEST_OBJ_SENSITIVE_ORIGIN | \
                  MB_ATTEST_OBJ_RESTRICTED | MB_ATTEST_OBJ_SIGN)

/* A machine's record, pending or registered (docs/schema/mshim-machine-1). */
typedef struct machine {
        char ak_name[2 * MB_ATTEST_NAME_MAX + 1];
        uint8_t *ak_pub, *ek_spki, *cert;
        size_t ak_pub_n, ek_spki_n, cert_n;
        const char *ek_type;            /* "rsa" or "ecc" */
        char *issuer;                   /* the certificate's issuer, or NULL */
        bool pending;
        uint8_t secret_sha256[32];      /* pending only */
        long long time;
} machine;

static void machine_free(machine *m) {
        free(m->ak_pub);
        free(m->ek_spki);
        free(m->cert);
        free(m->issuer);
}

/* ---- inputs ------------------------------------------------------------ */

static uint8_t *load_copy(const char *path, size_t max, const char *what, size_t *ret_n) {
        cli_file f;
        uint8_t *p;

        if (cli_file_load_max(path, max, what, &f) < 0)
                return NULL;
        p = malloc(f.size ? f.size : 1);
        if (p) {
                memcpy(p, f.data, f.size);
                *ret_n = f.size;
        } else
                cli_error("out of memory");
        cli_file_free(&f);
        return p;
}

static int load_public(const char *path, const char *what, uint8_t **ret_buf, size_t *ret_n, mb_attest_public *ret) {
        mb_err e;

        *ret_buf = load_copy(path, (size_t) 1 << 20, what, ret_n);
        if (!*ret_buf)
                return EXIT_BAD_INPUT;
        e = mb_attest_public_parse(*ret_buf, *ret_n, ret);
        if (e != MB_OK) {
                cli_error("%s: not an RSA or ECC key's TPM2B_PUBLIC (%s): %s", path, what, mb_strerror(e));
                return EXIT_BAD_INPUT;
        }
        return 0;
}

/* The AK's attributes (AK_NEEDS, no decrypt): 0 or a refusal. */
static int ak_attrs(const mb_attest_public *p, const char *path) {
        if ((p->attrs & AK_NEEDS) == AK_NEEDS && !(p->attrs & MB_ATTEST_OBJ_DECRYPT))
                return 0;
        cli_error("refused: %s: not an attestation key: objectAttributes 0x%08x lack%s%s%s%s%s%s", path, p->attrs,
                  p->attrs & MB_ATTEST_OBJ_RESTRICTED ? "" : " restricted", p->attrs & MB_ATTEST_OBJ_SIGN ? "" : " sign",
                  p->attrs & MB_ATTEST_OBJ_FIXED_TPM ? "" : " fixedTPM",
                  p->attrs & MB_ATTEST_OBJ_FIXED_PARENT ? "" : " fixedParent",
                  p->attrs & MB_ATTEST_OBJ_SENSITIVE_ORIGIN ? "" : " sensitiveDataOrigin",
                  p->attrs & MB_ATTEST_OBJ_DECRYPT ? " (or have decrypt set)" : "");
        return EXIT_CHECK_FAILED;
}

static void hex_name(const uint8_t *p, size_t n, char *out) {
        for (size_t i = 0; i < n; i++)
                snprintf(out + 2 * i, 3, "%02x", p[i]);
        out[2 * n] = 0;
}

static int ak_name_hex(const mb_attest_public *p, const char *path, char *out, mb_tpm2_name *ret) {
        mb_tpm2_name name;

        if (mb_tpm2_object_name(p->area.p, p->area.size, &name) != MB_OK) {
                cli_error("%s: the AK's nameAlg 0x%04x is not one mshim knows", path, p->name_alg);
                return EXIT_BAD_INPUT;
        }
        hex_name(name.b, name.size, out);
        *ret = name;
        return 0;
}

/* A certificate, PEM or DER. */
static X509 *load_cert(const char *path) {
        size_t n = 0;
        uint8_t *b = load_copy(path, (size_t) 1 << 20, "a certificate", &n);
        const unsigned char *p = b;
        BIO *bio = b ? BIO_new_mem_buf(b, (int) n) : NULL;
        X509 *x = bio ? PEM_read_bio_X509(bio, NULL, NULL, NULL) : NULL;

        if (b && !x) {
                x = d2i_X509(NULL, &p, (long) n);
                if (x && p != b + n) {
                        X509_free(x);
                        x = NULL;
                }
        }
        if (b && !x)
                cli_error("%s: not an X.509 certificate (PEM or DER)", path);
        BIO_free(bio);
        free(b);
        return x;
}

/* Every certificate in DIR's *.pem and *.crt files is a trust anchor. */
static int load_ca_file(X509_STORE *st, const char *path, unsigned *count) {
        BIO *bio = BIO_new_file(path, "r");
        STACK_OF(X509_INFO) *infos = bio ? PEM_X509_INFO_read_bio(bio, NULL, NULL, NULL) : NULL;
        int r = 0;

        for (int i = 0; infos && i < sk_X509_INFO_num(infos); i++) {
                X509_INFO *in = sk_X509_INFO_value(infos, i);
                if (in->x509 && !X509_STORE_add_cert(st, in->x509))
                        r = -1;
                else if (in->x509)
                        (*count)++;
        }
        sk_X509_INFO_pop_free(infos, X509_INFO_free);
        BIO_free(bio);
        return r;
}

static X509_STORE *load_ca_dir(const char *dir) {
        X509_STORE *st = X509_STORE_new();
        DIR *d = opendir(dir);
        struct dirent *e;
        unsigned count = 0;
        char path[4096];

        if (!d) {
                cli_error("%s: cannot read the EK CA directory: %s", dir, strerror(errno));
                X509_STORE_free(st);
                return NULL;
        }
        while (st && (e = readdir(d))) {
                size_t n = strlen(e->d_name);
                if (n < 5 || (strcmp(e->d_name + n - 4, ".pem") && strcmp(e->d_name + n - 4, ".crt")))
                        continue;
                snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
                if (load_ca_file(st, path, &count) < 0) {
                        X509_STORE_free(st);
                        st = NULL;
                }
        }
        closedir(d);
        if (st && !count) {
                cli_error("%s: no CA certificate in a *.pem or *.crt file", dir);
                X509_STORE_free(st);
                return NULL;
        }
        /* Each certificate of the directory is trusted as it is: an
         * intermediate CA alone is enough (X509_V_FLAG_PARTIAL_CHAIN). */
        if (st)
                X509_STORE_set_flags(st, X509_V_FLAG_PARTIAL_CHAIN);
        return st;
}

/* The certificate chains to a certificate of ca_dir: 0, or a refusal. */
static int cert_trusted(X509 *x, const char *path, const char *ca_dir) {
        X509_STORE *st = load_ca_dir(ca_dir);
        X509_STORE_CTX *ctx = st ? X509_STORE_CTX_new() : NULL;
        int ok;

        if (!st)
                return EXIT_BAD_INPUT;
        ok = ctx && X509_STORE_CTX_init(ctx, st, x, NULL) && X509_verify_cert(ctx) == 1;
        if (!ok)
                cli_error("refused: %s: the EK certificate does not chain to a CA of %s: %s", path, ca_dir,
                          ctx ? X509_verify_cert_error_string(X509_STORE_CTX_get_error(ctx)) : "out of memory");
        X509_STORE_CTX_free(ctx);
        X509_STORE_free(st);
        return ok ? 0 : EXIT_CHECK_FAILED;
}

static char *issuer_of(X509 *x) {
        BIO *b = BIO_new(BIO_s_mem());
        char *p = NULL, *s = NULL;
        long n;

        if (b && X509_NAME_print_ex(b, X509_get_issuer_name(x), 0, XN_FLAG_RFC2253) >= 0 &&
            (n = BIO_get_mem_data(b, &p)) >= 0 && (s = malloc((size_t) n + 1))) {
                memcpy(s, p, (size_t) n);
                s[n] = 0;
        }
        BIO_free(b);
        return s;
}

/* ---- the verifier's directory --------------------------------------------- */

static int make_dir(const char *path) {
        if (mkdir(path, 0700) < 0 && errno != EEXIST) {
                cli_error("%s: cannot create: %s", path, strerror(errno));
                return -1;
        }
        return 0;
}

static void state_path(char *buf, size_t n, const char *dir, const char *sub, const char *name) {
        snprintf(buf, n, "%s/%s/%s.json", dir, sub, name);
}

static void json_esc(FILE *f, const char *s) {
        fputc('"', f);
        for (; *s; s++) {
                unsigned char c = (unsigned char) *s;
                if (c == '"' || c == '\\')
                        fprintf(f, "\\%c", c);
                else if (c < 0x20)
                        fprintf(f, "\\u%04x", c);
                else
                        fputc(c, f);
        }
        fputc('"', f);
}

static int write_machine(const char *path, const machine *m) {
        char *doc = NULL, *ak = att_b64(m->ak_pub, m->ak_pub_n), *ek = att_b64(m->ek_spki, m->ek_spki_n);
        char *cert = m->cert ? att_b64(m->cert, m->cert_n) : NULL;
        size_t n = 0;
        FILE *f = open_memstream(&doc, &n);
        int r = -1;

        if (f && ak && ek && (cert || !m->cert)) {
                fprintf(f, "{\n  \"schema\": \"%s\",\n  \"mshim_version\": \"%s\",\n  \"status\": \"%s\",\n",
                        MACHINE_SCHEMA, MB_VERSION, m->pending ? "pending" : "registered");
                fprintf(f, "  \"time\": %lld,\n  \"ak_name\": \"%s\",\n  \"ak_public\": \"%s\",\n", m->time, m->ak_name, ak);
                fprintf(f, "  \"ek_type\": \"%s\",\n  \"ek_public\": \"%s\",\n", m->ek_type, ek);
                fprintf(f, "  \"ek_certificate\": ");
                cert ? fprintf(f, "\"%s\"", cert) : fprintf(f, "null");
                fprintf(f, ",\n  \"ek_issuer\": ");
                m->issuer ? json_esc(f, m->issuer) : (void) fprintf(f, "null");
                if (m->pending) {
                        fprintf(f, ",\n  \"secret_sha256\": \"");
                        for (size_t i = 0; i < sizeof(m->secret_sha256); i++)
                                fprintf(f, "%02x", m->secret_sha256[i]);
                        fputc('"', f);
                }
                fprintf(f, "\n}\n");
        }
        if (f && !fclose(f) && ak && ek && (cert || !m->cert))
                r = cli_write_file(path, CLI_MODE_SECRET, doc, n);
        else
                cli_error("out of memory");
        free(doc);
        free(ak);
        free(ek);
        free(cert);
        return r;
}

/* A base64 member of the record, or NULL (with null_ok, a JSON null). */
static int b64_of(const jr_node *d, const char *key, bool null_ok, uint8_t **ret, size_t *ret_n) {
        const jr_node *v = jr_get(d, key);

        if (null_ok && v && v->type == JR_NULL)
                return 0;
        if (!v || v->type != JR_STRING || !(*ret = att_unb64(v->str, v->len, ret_n)))
                return -1;
        return 0;
}

/* The record at path (the verifier's own file), pending or registered as
 * pending says: 0, 1 when there is none, or EXIT_BAD_INPUT. */
static int read_record(const char *path, bool pending, machine *m) {
        const char *status = pending ? "pending" : "registered";
        cli_file f;
        const char *err = NULL;
        size_t off = 0;
        jr_node *d;
        const jr_node *s, *st, *t, *is, *h, *n, *tm;
        uint32_t when = 0;
        int r = EXIT_BAD_INPUT;

        if (access(path, F_OK) < 0 && errno == ENOENT)
                return 1;
        if (cli_file_load_max(path, STATE_MAX, pending ? "a pending challenge" : "a machine's record", &f) < 0)
                return EXIT_BAD_INPUT;
        d = jr_parse((const char *) f.data, f.size, &JR_LIMITS(STATE_MAX), &err, &off);
        cli_file_free(&f);
        if (!d) {
                cli_error("%s: not a %s record: at byte %zu: %s", path, MACHINE_SCHEMA, off, err);
                return EXIT_BAD_INPUT;
        }
        s = jr_get(d, "schema");
        st = jr_get(d, "status");
        t = jr_get(d, "ek_type");
        is = jr_get(d, "ek_issuer");
        h = jr_get(d, "secret_sha256");
        n = jr_get(d, "ak_name");
        tm = jr_get(d, "time");
        if (s && s->type == JR_STRING && !strcmp(s->str, MACHINE_SCHEMA) && st && st->type == JR_STRING &&
            !strcmp(st->str, status) && t && t->type == JR_STRING && (!strcmp(t->str, "rsa") || !strcmp(t->str, "ecc")) &&
            is && (is->type == JR_NULL || is->type == JR_STRING) && (pending ? h && jr_hex(h, 32, m->secret_sha256) : !h) &&
            n && n->type == JR_STRING && n->len < sizeof(m->ak_name) && jr_uint(tm, &when) &&
            !b64_of(d, "ak_public", false, &m->ak_pub, &m->ak_pub_n) &&
            !b64_of(d, "ek_public", false, &m->ek_spki, &m->ek_spki_n) &&
            !b64_of(d, "ek_certificate", true, &m->cert, &m->cert_n)) {
                m->ek_type = !strcmp(t->str, "rsa") ? "rsa" : "ecc";
                m->issuer = is->type == JR_STRING ? strdup(is->str) : NULL;
                m->pending = pending;
                m->time = when;
                memcpy(m->ak_name, n->str, n->len + 1);
                r = is->type == JR_STRING && !m->issuer ? EXIT_BAD_INPUT : 0;
        }
        if (r)
                cli_error("%s: not a %s %s record", path, status, MACHINE_SCHEMA);
        jr_free(d);
        return r;
}

/* A machine's Name as the file name of its record: hex alone, so no Name
 * (the evidence's, which the sender wrote) can leave the directory. */
static bool name_ok(const char *name) {
        size_t n = strlen(name);

        /* nameAlg and a digest of 20 to 64 bytes */
        if (n < 2 * (2 + 20) || n > 2 * MB_ATTEST_NAME_MAX || n % 2)
                return false;
        for (size_t i = 0; i < n; i++)
                if (!((name[i] >= '0' && name[i] <= '9') || (name[i] >= 'a' && name[i] <= 'f')))
                        return false;
        return true;
}

int verify_machine_ak(const char *dir, const char *name, uint8_t **ret_pub, size_t *ret_n, char **ret_about,
                      char *why, size_t why_n) {
        machine m = { 0 };
        mb_attest_public ak;
        mb_tpm2_name nm;
        char path[4096], hex[2 * MB_ATTEST_NAME_MAX + 1];
        int r;

        if (!dir)
                dir = VERIFIER_DIR;
        if (!name_ok(name)) {
                cli_error("'%.80s' is not an AK's Name (lower-case hex, as 'mshim verify register' names machines)", name);
                return EXIT_BAD_INPUT;
        }
        state_path(path, sizeof(path), dir, "machines", name);
        r = read_record(path, false, &m);
        if (r == 1) {
                state_path(path, sizeof(path), dir, "pending", name);
                snprintf(why, why_n, "the AK %s is not registered in %s%s", name, dir,
                          access(path, F_OK) == 0 ? ": its challenge is pending (answer it: 'mshim attest activate', "
                          "then 'mshim verify register')" : " (register it: 'mshim verify challenge', 'mshim attest "
                          "activate', 'mshim verify register')");
                r = EXIT_CHECK_FAILED;
        }
        /* The record is the verifier's, but its file name, its ak_name and
         * its AK must still agree: the key found is the one registered. */
        if (!r && (mb_attest_public_parse(m.ak_pub, m.ak_pub_n, &ak) != MB_OK ||
                   mb_tpm2_object_name(ak.area.p, ak.area.size, &nm) != MB_OK ||
                   (hex_name(nm.b, nm.size, hex), strcmp(hex, name)) || strcmp(m.ak_name, name))) {
                cli_error("%s: its AK is not the AK %s its name says", path, name);
                r = EXIT_BAD_INPUT;
        }
        if (!r && asprintf(ret_about, "the registered machine %s (%s EK %s%s), registered at %lld", name,
                           !strcmp(m.ek_type, "ecc") ? "ECC" : "RSA", m.issuer ? "certified by " : "given as a public key",
                           m.issuer ? m.issuer : "", m.time) < 0) {
                cli_error("out of memory");
                r = EXIT_BAD_INPUT;
        }
        if (!r) {
                *ret_pub = m.ak_pub;
                *ret_n = m.ak_pub_n;
                m.ak_pub = NULL;
        }
        machine_free(&m);
        return r;
}

/* ---- verify challenge ------------------------------------------------------ */

typedef struct cred_opts {
        const char *ak, *ek_pub, *ek_cert, *ek_ca, *dir, *out, *secret;
} cred_opts;

static int cred_parse(int argc, char **argv, cred_opts *o, bool challenge) {
        static const struct option longopts[] = {
                { "ak", required_argument, NULL, 'a' },         { "ek-pub", required_argument, NULL, 'p' },
                { "ek-cert", required_argument, NULL, 'c' },    { "ek-ca", required_argument, NULL, 'C' },
                { "dir", required_argument, NULL, 'd' },        { "output", required_argument, NULL, 'o' },
                { "help", no_argument, NULL, 'h' },             { 0 },
        };
        int c;

        optind = 1;
        while ((c = cli_getopt(argc, argv, "ho:", longopts, "verify")) != -1) {
                const char **slot = c == 'a' ? &o->ak : c == 'p' ? &o->ek_pub : c == 'c' ? &o->ek_cert : c == 'C' ? &o->ek_ca
                                  : c == 'd' ? &o->dir : c == 'o' ? &o->out : NULL;
                if (c == 'h') {
                        cli_help(stdout, "verify");
                        return -1;
                }
                if (!slot)
                        return EXIT_BAD_INPUT;
                if (cli_opt_once_for(longopts, c, slot, optarg) < 0)
                        return EXIT_BAD_INPUT;
        }
        if (!o->dir)
                o->dir = VERIFIER_DIR;
        if (challenge && (optind < argc || !o->ak || !o->out || (!o->ek_pub && !o->ek_cert)))
                return cli_usage_error("verify", "verify challenge takes --ak AK.pub, --ek-cert CERT or --ek-pub EK.pub, "
                                       "and -o CHALLENGE");
        if (challenge && !!o->ek_cert != !!o->ek_ca)
                return cli_usage_error("verify", "an EK certificate is checked against --ek-ca DIR: give both or neither");
        if (!challenge && (argc - optind != 1 || !o->ak || o->ek_pub || o->ek_cert || o->ek_ca || o->out))
                return cli_usage_error("verify", "verify register takes --ak AK.pub and the SECRET file");
        if (!challenge)
                o->secret = argv[optind];
        return 0;
}

/* The EK, from --ek-pub and/or a certificate checked against --ek-ca. */
static int challenge_ek(const cred_opts *o, att_ek *ek, machine *m) {
        uint8_t *buf = NULL;
        size_t n = 0;
        mb_attest_public pub;
        X509 *x = NULL;
        int r = 0;

        if (o->ek_pub && !(r = load_public(o->ek_pub, "the EK", &buf, &n, &pub)))
                r = att_ek_from_public(&pub, ek, o->ek_pub);
        free(buf);
        if (!r && o->ek_cert && !(x = load_cert(o->ek_cert)))
                r = EXIT_BAD_INPUT;
        if (!r && x)
                r = cert_trusted(x, o->ek_cert, o->ek_ca);
        if (!r && x && o->ek_pub && EVP_PKEY_eq(X509_get0_pubkey(x), ek->key) != 1) {
                cli_error("refused: %s: the certificate's key is not the EK of %s", o->ek_cert, o->ek_pub);
                r = EXIT_CHECK_FAILED;
        }
        if (!r && x && !o->ek_pub)
                r = X509_get0_pubkey(x) ? att_ek_from_key(X509_get0_pubkey(x), ek, o->ek_cert) : EXIT_BAD_INPUT;
        if (!r && x) {
                unsigned char *der = NULL;
                int dn = i2d_X509(x, &der);
                m->issuer = issuer_of(x);
                m->cert = dn > 0 ? malloc((size_t) dn) : NULL;
                if (m->cert)
                        memcpy(m->cert, der, (size_t) dn);
                m->cert_n = dn > 0 ? (size_t) dn : 0;
                OPENSSL_free(der);
                r = m->cert && m->issuer ? 0 : EXIT_BAD_INPUT;
        }
        X509_free(x);
        return r;
}

static int ek_spki(const att_ek *ek, machine *m) {
        unsigned char *der = NULL;
        int n = i2d_PUBKEY(ek->key, &der);

        m->ek_spki = n > 0 ? malloc((size_t) n) : NULL;
        if (m->ek_spki) {
                memcpy(m->ek_spki, der, (size_t) n);
                m->ek_spki_n = (size_t) n;
        }
        OPENSSL_free(der);
        m->ek_type = ek->ecc ? "ecc" : "rsa";
        return m->ek_spki ? 0 : EXIT_BAD_INPUT;
}

int verify_challenge(int argc, char **argv) {
        cred_opts o = { 0 };
        machine m = { .pending = true };
        att_ek ek = { 0 };
        mb_attest_public ak;
        mb_tpm2_name name;
        uint8_t secret[SECRET_SIZE], *cred = NULL;
        size_t cred_n = 0;
        char path[4096];
        cli_input in[3];
        int r = cred_parse(argc, argv, &o, true);

        if (r)
                return r < 0 ? 0 : r;
        in[0] = (cli_input) { "the AK", o.ak };
        in[1] = (cli_input) { "the EK", o.ek_pub };
        in[2] = (cli_input) { "the EK certificate", o.ek_cert };
        if (cli_out_not_input(o.out, in, 3) < 0)
                return EXIT_BAD_INPUT;
        r = load_public(o.ak, "the AK", &m.ak_pub, &m.ak_pub_n, &ak);
        if (!r)
                r = ak_attrs(&ak, o.ak);
        if (!r)
                r = ak_name_hex(&ak, o.ak, m.ak_name, &name);
        if (!r)
                r = challenge_ek(&o, &ek, &m);
        if (!r)
                r = ek_spki(&ek, &m);
        if (r)
                goto out;
        r = EXIT_BAD_INPUT;
        if (RAND_bytes(secret, sizeof(secret)) != 1 ||
            !EVP_Digest(secret, sizeof(secret), m.secret_sha256, NULL, EVP_sha256(), NULL)) {
                cli_error("no random bytes (OpenSSL)");
                goto out;
        }
        cred = att_make_credential(&ek, name.b, name.size, secret, sizeof(secret), &cred_n);
        m.time = (long long) time(NULL);
        snprintf(path, sizeof(path), "%s/pending", o.dir);
        if (!cred || make_dir(o.dir) < 0 || make_dir(path) < 0)
                goto out;
        snprintf(path, sizeof(path), "%s/machines", o.dir);
        if (make_dir(path) < 0)
                goto out;
        state_path(path, sizeof(path), o.dir, "pending", m.ak_name);
        /* The record first: a challenge whose secret the verifier lost
         * could never be answered. */
        if (write_machine(path, &m) < 0 || cli_write_file(o.out, CLI_MODE_PUBLIC, cred, cred_n) < 0)
                goto out;
        printf("challenge for the AK %s\n  under the %s EK%s%s\n  written to %s; pending: %s\n", m.ak_name,
               ek.ecc ? "ECC" : "RSA", m.issuer ? " certified by " : " given as a public key", m.issuer ? m.issuer : "",
               o.out, path);
        r = 0;
out:
        OPENSSL_cleanse(secret, sizeof(secret));
        free(cred);
        att_ek_free(&ek);
        machine_free(&m);
        return r;
}

/* ---- verify register -------------------------------------------------------- */

int verify_register(int argc, char **argv) {
        cred_opts o = { 0 };
        machine m = { 0 };
        mb_attest_public ak;
        mb_tpm2_name name;
        uint8_t *ak_buf = NULL, *secret = NULL, h[32];
        size_t ak_n = 0, secret_n = 0;
        char pending[4096], done[4096];
        int r = cred_parse(argc, argv, &o, false);

        if (r)
                return r < 0 ? 0 : r;
        r = load_public(o.ak, "the AK", &ak_buf, &ak_n, &ak);
        if (!r)
                r = ak_attrs(&ak, o.ak);
        if (!r)
                r = ak_name_hex(&ak, o.ak, m.ak_name, &name);
        if (!r && !(secret = load_copy(o.secret, (size_t) 1 << 20, "a recovered secret", &secret_n)))
                r = EXIT_BAD_INPUT;
        if (r)
                goto out;
        state_path(pending, sizeof(pending), o.dir, "pending", m.ak_name);
        state_path(done, sizeof(done), o.dir, "machines", m.ak_name);
        r = read_record(pending, true, &m);
        if (r == 1) {
                cli_error("refused: no pending challenge for the AK %s in %s (make one with 'mshim verify challenge')",
                          m.ak_name, o.dir);
                r = EXIT_CHECK_FAILED;
        }
        if (!r && (m.ak_pub_n != ak_n || memcmp(m.ak_pub, ak_buf, ak_n))) {
                cli_error("refused: %s: not the AK the pending challenge was made for", o.ak);
                r = EXIT_CHECK_FAILED;
        }
        if (r)
                goto out;
        /* The secret the TPM recovered, compared in constant time. A wrong
         * one spends the challenge: no second guess. */
        if (!EVP_Digest(secret, secret_n, h, NULL, EVP_sha256(), NULL) || CRYPTO_memcmp(h, m.secret_sha256, 32)) {
                unlink(pending);
                cli_error("refused: %s is not the secret of the challenge for the AK %s: the AK was not activated "
                          "with that TPM's EK (the challenge is spent; make a new one)", o.secret, m.ak_name);
                r = EXIT_CHECK_FAILED;
                goto out;
        }
        m.pending = false;
        m.time = (long long) time(NULL);
        r = EXIT_BAD_INPUT;
        if (write_machine(done, &m) < 0)
                goto out;
        if (unlink(pending) < 0)
                cli_error("warning: %s: cannot remove: %s", pending, strerror(errno));
        printf("registered the AK %s\n  of the %s EK%s%s\n  recorded in %s\n", m.ak_name, !strcmp(m.ek_type, "ecc") ? "ECC" : "RSA", m.issuer ? " certified by " : " given as a public key",
               m.issuer ? m.issuer : "", done);
        r = 0;
out:
        if (secret)
                OPENSSL_cleanse(secret, secret_n);
        free(secret);
        free(ak_buf);
        machine_free(&m);
        return r;
}
