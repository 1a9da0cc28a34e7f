/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * mshim verify EVIDENCE --ak AK.pub --nonce HEX: a machine's quote, judged
 * with OpenSSL alone, no TPM (docs/ATTESTATION.md "What verify checks").
 * Everything in the evidence is the sender's until the AK's signature over
 * the TPMS_ATTEST is checked, and after that only what the signature
 * covers is: the PCR values listed beside the quote count because their
 * digest is the signed pcrDigest, the event log because it replays to
 * those values. Each check has its own refusal (exit 1); evidence that
 * cannot be read is bad input (exit 2).
 */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <openssl/bn.h>
#include <openssl/ecdsa.h>
#include <openssl/rsa.h>
#include "attest.h"
#include "ima.h"
#include "sealcmd.h"
#include "mb/policy.h"
#include "mb/tpm2.h"
#include "verify.h"

typedef struct evidence {
        uint8_t *msg, *sig, *log;
        size_t msg_n, sig_n, log_n;
        uint8_t *ima;           /* "ima_log": IMA's measurement list (attest quote --ima), or NULL */
        size_t ima_n;
        mb_pcr_values pcrs;     /* "pcrs": the values the machine says it quoted */
        char *ak_name;          /* "ak": "name", or NULL: only ever a key to look the machine up by */
} evidence;

typedef struct check {
        const char *name;
        bool ok;
        char detail[512];
} check;

/* A PCR the event log does not account for. */
typedef struct mismatch {
        uint16_t alg;
        uint32_t pcr;
        bool in_log;            /* the log has the bank (else: replayed is empty) */
        uint8_t quoted[MB_HASH_MAX], replayed[MB_HASH_MAX];
        uint16_t size;
} mismatch;

typedef struct verdict {
        check checks[12];
        size_t n;
        mismatch *mm;           /* MB_TCGLOG_MAX_ALGS * MB_PCR_COUNT */
        size_t n_mm;
        mb_attest_quote q;
        bool have_quote;        /* the signature verified: q may be shown */
        char ak_name[2 * MB_ATTEST_NAME_MAX + 1];
        uint32_t events;
        /* --previous: that quote's clock info (signed by the same AK) and
         * what happened between the two: "same-boot", "restart", "reboot" */
        bool have_prev;
        uint64_t prev_clock;
        uint32_t prev_reset, prev_restart;
        const char *since;
        vf_facts *facts;        /* the log replayed to the quote: what booted */
        bool have_state;        /* --state: res says which state matched, or the closest */
        vs_result res;
        const uint8_t *log;     /* the evidence's log, to name the events of PCRs that differ */
        size_t log_n;
        const mb_pcr_values *pcrs;      /* the quoted values */
} verdict;

static check *add(verdict *v, const char *name, bool ok, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static check *add(verdict *v, const char *name, bool ok, const char *fmt, ...) {
        check *c = &v->checks[v->n++];
        va_list ap;

        c->name = name;
        c->ok = ok;
        va_start(ap, fmt);
        vsnprintf(c->detail, sizeof(c->detail), fmt, ap);
        va_end(ap);
        return c;
}

static void hex_into(char *out, const uint8_t *p, size_t n) {
        for (size_t i = 0; i < n; i++)
                snprintf(out + 2 * i, 3, "%02x", p[i]);
        out[2 * n] = 0;
}

/* ---- reading the evidence ---------------------------------------------- */

static int bad(const char *path, const char *what) {
        cli_error("%s: not %s evidence: %s", path, ATT_EVIDENCE_SCHEMA, what);
        return EXIT_BAD_INPUT;
}

static int b64_member(const char *path, const jr_node *o, const char *key, uint8_t **ret, size_t *ret_n) {
        const jr_node *m = jr_get(o, key);
        char why[96];

        if (!m || m->type != JR_STRING) {
                snprintf(why, sizeof(why), "no \"%s\" string", key);
                return bad(path, why);
        }
        *ret = att_unb64(m->str, m->len, ret_n);
        if (!*ret) {
                snprintf(why, sizeof(why), "\"%s\" is not base64", key);
                return bad(path, why);
        }
        return 0;
}

/* "pcrs": {"sha256": {"0": "<hex>", ...}, ...}: banks mshim can hash, PCRs
 * 0-23 in canonical decimal, values of the bank's digest size. */
static int read_pcrs(const char *path, const jr_node *o, mb_pcr_values *ret) {
        char why[128];

        if (!o || o->type != JR_OBJECT)
                return bad(path, "no \"pcrs\" object");
        for (size_t b = 0; b < o->n_kids; b++) {
                const jr_node *bank = &o->kids[b];
                uint16_t alg = mb_hash_alg_by_name(bank->key);
                size_t ds = mb_hash_size(alg);

                if (!alg || !ds || bank->type != JR_OBJECT) {
                        snprintf(why, sizeof(why), "\"pcrs\": \"%.32s\" is not a bank of PCR values", bank->key);
                        return bad(path, why);
                }
                for (size_t i = 0; i < bank->n_kids; i++) {
                        const jr_node *pv = &bank->kids[i];
                        uint8_t val[MB_HASH_MAX];
                        uint32_t pcr = 0;
                        bool ok = jr_pcr_index(pv->key, &pcr) && jr_hex(pv, ds, val);

                        if (!ok || mb_pcrs_set(ret, alg, pcr, val, ds) != MB_OK) {
                                snprintf(why, sizeof(why), "\"pcrs\": \"%s\" \"%.8s\" is not a PCR and a %zu-byte hex value",
                                         bank->key, pv->key, ds);
                                return bad(path, why);
                        }
                }
        }
        return 0;
}

/* "ak": {"name": hex}, kept as the sender wrote it: it only says which
 * registered machine's AK to try, and that AK must then verify the quote. */
static int ak_member(const char *path, const jr_node *ak, evidence *ev) {
        const jr_node *n = jr_get(ak, "name");

        if (!ak)
                return 0;
        if (ak->type != JR_OBJECT || (n && n->type != JR_STRING))
                return bad(path, "\"ak\" is not an object with a \"name\" string");
        if (n && !(ev->ak_name = strdup(n->str))) {
                cli_error("out of memory");
                return EXIT_BAD_INPUT;
        }
        return 0;
}

/* "ima_log", when there: {"source", "data"} (docs/ATTESTATION.md "IMA"). */
static int read_ima(const char *path, const jr_node *o, evidence *ev) {
        if (!o)
                return 0;
        if (o->type != JR_OBJECT)
                return bad(path, "\"ima_log\" is not an object");
        return b64_member(path, o, "data", &ev->ima, &ev->ima_n);
}

static int read_evidence(const char *path, evidence *ev) {
        cli_file f;
        const char *err = NULL;
        size_t err_off = 0;
        jr_node *doc;
        const jr_node *s, *q, *log;
        int r;

        if (cli_file_load_max(path, (size_t) ATT_EVIDENCE_MAX_MIB << 20, "attestation evidence", &f) < 0)
                return EXIT_BAD_INPUT;
        doc = jr_parse((const char *) f.data, f.size, &JR_LIMITS((size_t) ATT_EVIDENCE_MAX_MIB << 20), &err, &err_off);
        cli_file_free(&f);
        if (!doc) {
                cli_error("%s: not %s evidence: at byte %zu: %s", path, ATT_EVIDENCE_SCHEMA, err_off, err);
                return EXIT_BAD_INPUT;
        }
        s = jr_get(doc, "schema");
        q = jr_get(doc, "quote");
        log = jr_get(doc, "event_log");
        if (doc->type != JR_OBJECT)
                r = bad(path, "not a JSON object");
        else if (!s || s->type != JR_STRING)
                r = bad(path, "no \"schema\"");
        else if (strcmp(s->str, ATT_EVIDENCE_SCHEMA)) {
                cli_error("%s: schema '%.64s' is not %s (written by another mshim version?)", path, s->str, ATT_EVIDENCE_SCHEMA);
                r = EXIT_BAD_INPUT;
        } else if (!q || q->type != JR_OBJECT)
                r = bad(path, "no \"quote\" object");
        else if (!log || log->type != JR_OBJECT)
                r = bad(path, "no \"event_log\" object");
        else if (!(r = ak_member(path, jr_get(doc, "ak"), ev)) &&
                 !(r = b64_member(path, q, "message", &ev->msg, &ev->msg_n)) &&
                 !(r = b64_member(path, q, "signature", &ev->sig, &ev->sig_n)) &&
                 !(r = b64_member(path, log, "data", &ev->log, &ev->log_n)) &&
                 !(r = read_ima(path, jr_get(doc, "ima_log"), ev)))
                r = read_pcrs(path, jr_get(doc, "pcrs"), &ev->pcrs);
        jr_free(doc);
        return r;
}

/* The AK from its TPM2B_PUBLIC in buf (what: for messages). */
static int parse_ak(const uint8_t *buf, size_t n, const char *what, mb_attest_public *ret) {
        mb_err e = mb_attest_public_parse(buf, n, ret);

        if (e != MB_OK) {
                cli_error("%s: not an RSA or ECC key's TPM2B_PUBLIC (as 'mshim attest init' writes ak.pub): %s", what,
                          mb_strerror(e));
                return EXIT_BAD_INPUT;
        }
        /* Only a restricted signing key refuses to sign a digest that begins
         * with TPM_GENERATED_VALUE it did not make: any other key could sign
         * a forged quote (Part 1 §19.2.4). */
        if ((ret->attrs & (MB_ATTEST_OBJ_RESTRICTED | MB_ATTEST_OBJ_SIGN | MB_ATTEST_OBJ_FIXED_TPM)) !=
                    (MB_ATTEST_OBJ_RESTRICTED | MB_ATTEST_OBJ_SIGN | MB_ATTEST_OBJ_FIXED_TPM) ||
            (ret->attrs & MB_ATTEST_OBJ_DECRYPT)) {
                cli_error("%s: not a restricted signing key fixed to its TPM (objectAttributes 0x%08x): a quote it signs "
                          "proves nothing", what, ret->attrs);
                return EXIT_BAD_INPUT;
        }
        return 0;
}

static int read_ak(const char *path, uint8_t **ret_buf, mb_attest_public *ret) {
        cli_file f;
        size_t n;

        if (cli_file_load_max(path, (size_t) 1 << 20, "an attestation key's public area", &f) < 0)
                return EXIT_BAD_INPUT;
        n = f.size;
        *ret_buf = malloc(n ? n : 1);
        if (*ret_buf)
                memcpy(*ret_buf, f.data, n);
        cli_file_free(&f);
        if (!*ret_buf) {
                cli_error("out of memory");
                return EXIT_BAD_INPUT;
        }
        return parse_ak(*ret_buf, n, path, ret);
}

/* ---- the checks ------------------------------------------------------- */

static const EVP_MD *md_of(uint16_t alg) {
        switch (alg) {
        case MB_ALG_SHA256: return EVP_sha256();
        case MB_ALG_SHA384: return EVP_sha384();
        case MB_ALG_SHA512: return EVP_sha512();
        default: return NULL;   /* SHA-1 signatures are not accepted */
        }
}

static const char *sig_name(uint16_t alg) {
        return alg == MB_ATTEST_ALG_ECDSA ? "ECDSA" : alg == MB_ATTEST_ALG_RSASSA ? "RSASSA" : "RSAPSS";
}

/* The signature's DER (ECDSA) or raw bytes (RSA) into *ret. */
static unsigned char *sig_bytes(const mb_attest_sig *s, size_t *ret_n) {
        ECDSA_SIG *es;
        BIGNUM *r, *sv;
        unsigned char *der = NULL;
        int n;

        if (s->alg != MB_ATTEST_ALG_ECDSA) {
                der = malloc(s->rsa.size ? s->rsa.size : 1);
                if (der)
                        memcpy(der, s->rsa.p, s->rsa.size);
                *ret_n = s->rsa.size;
                return der;
        }
        es = ECDSA_SIG_new();
        r = BN_bin2bn(s->r.p, s->r.size, NULL);
        sv = BN_bin2bn(s->s.p, s->s.size, NULL);
        if (!es || !r || !sv || !ECDSA_SIG_set0(es, r, sv)) {
                BN_free(r);
                BN_free(sv);
                ECDSA_SIG_free(es);
                return NULL;
        }
        n = i2d_ECDSA_SIG(es, &der);
        ECDSA_SIG_free(es);
        if (n <= 0)
                return NULL;
        *ret_n = (size_t) n;
        return der;
}

/* 1: verified, 0: not, -1: could not be checked (message printed). */
static int check_signature(verdict *v, const mb_attest_public *ak, const evidence *ev, const char *path) {
        mb_attest_sig s;
        const EVP_MD *md;
        EVP_PKEY *key;
        EVP_PKEY_CTX *ctx = NULL;
        unsigned char dig[EVP_MAX_MD_SIZE], *raw = NULL;
        unsigned int dn = 0;
        size_t rn = 0;
        int ok = 0;
        mb_err e = mb_attest_sig_parse(ev->sig, ev->sig_n, &s);

        if (e != MB_OK) {
                cli_error("%s: the quote's signature is not a TPMT_SIGNATURE mshim verifies (RSASSA, RSAPSS, ECDSA): %s",
                          path, mb_strerror(e));
                return -1;
        }
        /* A restricted key signs only with its own scheme (Part 3 §18.4:
         * inScheme must match it), so another algorithm is not the AK's. */
        if ((s.alg == MB_ATTEST_ALG_ECDSA) != (ak->type == MB_ATTEST_ALG_ECC) ||
            (ak->scheme != MB_ATTEST_ALG_NULL && (s.alg != ak->scheme || s.hash != ak->scheme_hash))) {
                add(v, "signature", false, "an %s signature with hash 0x%04x, which the AK (scheme 0x%04x, hash 0x%04x) "
                    "does not make", sig_name(s.alg), s.hash, ak->scheme, ak->scheme_hash);
                return 0;
        }
        md = md_of(s.hash);
        if (!md) {
                add(v, "signature", false, "a signature with hash 0x%04x; mshim accepts SHA-256, SHA-384 and SHA-512",
                    s.hash);
                return 0;
        }
        key = att_pkey(ak, "the AK");
        if (!key)
                return -1;
        raw = sig_bytes(&s, &rn);
        if (raw && EVP_Digest(ev->msg, ev->msg_n, dig, &dn, md, NULL) && (ctx = EVP_PKEY_CTX_new(key, NULL)) &&
            EVP_PKEY_verify_init(ctx) > 0 && EVP_PKEY_CTX_set_signature_md(ctx, md) > 0 &&
            (s.alg == MB_ATTEST_ALG_ECDSA ||
             EVP_PKEY_CTX_set_rsa_padding(ctx, s.alg == MB_ATTEST_ALG_RSAPSS ? RSA_PKCS1_PSS_PADDING : RSA_PKCS1_PADDING) > 0))
                ok = EVP_PKEY_verify(ctx, raw, rn, dig, dn) == 1;
        EVP_PKEY_CTX_free(ctx);
        EVP_PKEY_free(key);
        OPENSSL_free(raw);
        if (ok)
                add(v, "signature", true, "%s-%s by the AK %s", sig_name(s.alg), EVP_MD_get0_name(md), v->ak_name);
        else
                add(v, "signature", false, "the quote's signature does not verify with the AK %s (another key signed "
                    "it, or the quote was altered)", v->ak_name);
        return ok;
}

/* pcrDigest: the signature's hash over the evidence's values of the quoted
 * PCRs (Part 3 §18.4). The evidence must list exactly those. */
static int check_digest(verdict *v, const evidence *ev, uint16_t hash, const char *path) {
        uint8_t d[MB_HASH_MAX];
        mb_hash h;
        char lb[16];
        uint32_t count = 0;

        for (uint32_t b = 0; b < ev->pcrs.n_banks; b++) {
                uint32_t quoted = 0;
                for (uint32_t k = 0; k < v->q.n_sel; k++)
                        if (v->q.sel[k].alg == ev->pcrs.banks[b].alg)
                                quoted = v->q.sel[k].mask;
                if (ev->pcrs.banks[b].present & ~quoted) {
                        cli_error("%s: \"pcrs\" lists %s PCRs the quote does not cover", path,
                                  cli_alg_label(ev->pcrs.banks[b].alg, lb));
                        return -1;
                }
        }
        if (mb_hash_init(&h, hash) != MB_OK)
                return -1;
        for (uint32_t k = 0; k < v->q.n_sel; k++)
                for (uint32_t i = 0; i < MB_PCR_COUNT; i++) {
                        const uint8_t *val;
                        if (!(v->q.sel[k].mask & (1u << i)))
                                continue;
                        val = mb_pcrs_get(&ev->pcrs, v->q.sel[k].alg, i);
                        if (!val) {
                                cli_error("%s: \"pcrs\" has no value for %s PCR %u, which the quote covers", path,
                                          cli_alg_label(v->q.sel[k].alg, lb), i);
                                return -1;
                        }
                        mb_hash_update(&h, val, mb_hash_size(v->q.sel[k].alg));
                        count++;
                }
        mb_hash_final(&h, d);
        if (v->q.digest.size != mb_hash_size(hash) || memcmp(v->q.digest.p, d, v->q.digest.size)) {
                add(v, "pcr-digest", false, "the PCR values in the evidence are not the ones the TPM quoted (their digest "
                    "is not the quote's pcrDigest)");
                return 0;
        }
        add(v, "pcr-digest", true, "the quote's pcrDigest is the digest of the %u PCR values in the evidence", count);
        return 1;
}

/* Every quoted PCR, in every quoted bank, is what the log replays to. */
static int check_log(verdict *v, const evidence *ev, const char *path) {
        mb_tcglog log;
        mb_tcglog_event e;
        mb_replay *rp = calloc(1, sizeof(*rp));
        mb_err err = rp ? mb_tcglog_open(&log, ev->log, ev->log_n) : MB_ERR_NOSPACE;
        char lb[16];

        if (err == MB_OK) {
                mb_replay_init(rp, &log);
                while ((err = mb_tcglog_next(&log, &e)) == MB_OK) {
                        mb_replay_event(rp, &e);
                        v->events++;
                }
        }
        if (err != MB_END) {
                cli_error("%s: the event log is not a TCG event log mshim reads (offset %zu: %s)", path,
                          rp ? log.err_offset : 0, rp && log.err_reason ? log.err_reason : mb_strerror(err));
                free(rp);
                return -1;
        }
        for (uint32_t k = 0; k < v->q.n_sel; k++) {
                const mb_pcr_bank *bank = mb_replay_bank(rp, v->q.sel[k].alg);
                for (uint32_t i = 0; i < MB_PCR_COUNT; i++) {
                        const uint8_t *q = mb_pcrs_get(&ev->pcrs, v->q.sel[k].alg, i);
                        mismatch *m;
                        if (!(v->q.sel[k].mask & (1u << i)) ||
                            (bank && bank->computable && !memcmp(bank->pcr[i], q, bank->size)))
                                continue;
                        /* IMA's PCR: its own list accounts for it (check_ima). */
                        if (i == MB_IMA_PCR && ev->ima)
                                continue;
                        /* The initramfs's unseal fence is not in the
                         * firmware's log (docs/MEASUREMENTS.md "PCR 15"):
                         * PCR 15 may hold it, alone, when the log has
                         * nothing there. */
                        if (i == MB_UNSEAL_FENCE_PCR && bank && bank->computable &&
                            !(bank->extended & (1u << i)) && verify_unseal_fence(v->q.sel[k].alg, q) == 1) {
                                continue;
                        }
                        m = &v->mm[v->n_mm++];
                        m->alg = v->q.sel[k].alg;
                        m->pcr = i;
                        m->size = (uint16_t) mb_hash_size(m->alg);
                        m->in_log = bank && bank->computable;
                        memcpy(m->quoted, q, m->size);
                        if (m->in_log)
                                memcpy(m->replayed, bank->pcr[i], m->size);
                }
        }
        free(rp);
        if (v->n_mm) {
                const mismatch *m = &v->mm[0];
                add(v, "event-log", false, "%s PCR %u: %s%s", cli_alg_label(m->alg, lb), m->pcr,
                    m->in_log ? "the quoted value is not what the event log replays to (extended outside the log, or "
                                "the log was edited)" : "the event log has no such bank",
                    v->n_mm > 1 ? " (and more PCRs, listed below)" : "");
                return 0;
        }
        add(v, "event-log", true, "every quoted PCR is what the event log's %u records replay to", v->events);
        return 1;
}

/* What booted, from the log that replayed to the quote. */
static int find_facts(verdict *v, const evidence *ev, const verify_image *img, size_t n_img) {
        uint32_t quoted = 0;
        int fence = 0;

        for (uint32_t k = 0; k < v->q.n_sel; k++) {
                const uint8_t *p15 = mb_pcrs_get(&ev->pcrs, v->q.sel[k].alg, MB_UNSEAL_FENCE_PCR);
                if ((v->q.sel[k].mask & (1u << MB_UNSEAL_FENCE_PCR)) && p15 && !(quoted & (1u << MB_UNSEAL_FENCE_PCR)))
                        fence = verify_unseal_fence(v->q.sel[k].alg, p15);
                quoted |= v->q.sel[k].mask;
        }
        v->facts = verify_facts(ev->log, ev->log_n, quoted, fence, img, n_img);
        if (!v->facts)
                cli_error("out of memory");
        return v->facts ? 1 : -1;
}

/* The previous evidence's signed clock info into v: it must be a quote
 * by the same AK (else it says nothing about this machine: bad input). */
static int read_previous(verdict *v, const mb_attest_public *ak, const char *path) {
        evidence pe = { 0 };
        verdict *scratch = calloc(1, sizeof(*scratch));
        mb_attest_quote q;
        int r = scratch ? read_evidence(path, &pe) : EXIT_BAD_INPUT;

        if (!r) {
                memcpy(scratch->ak_name, v->ak_name, sizeof(v->ak_name));
                r = check_signature(scratch, ak, &pe, path);
                r = r == 1 && mb_attest_quote_parse(pe.msg, pe.msg_n, &q) == MB_OK && q.magic == MB_ATTEST_MAGIC &&
                    q.type == MB_ATTEST_ST_QUOTE ? 0 : EXIT_BAD_INPUT;
                if (r)
                        cli_error("%s: the previous evidence is not a quote signed by the AK %s", path, v->ak_name);
        }
        if (!r) {
                v->have_prev = true;
                v->prev_clock = q.clock;
                v->prev_reset = q.reset_count;
                v->prev_restart = q.restart_count;
        }
        free(scratch);
        free(pe.msg);
        free(pe.sig);
        free(pe.log);
        free(pe.ak_name);
        return r;
}

/* This quote after the previous one (TPM 2.0 Part 1 §36.3, §36.6, §36.7):
 * resetCount grows at each TPM Reset (a reboot) and never goes back;
 * within one, restartCount grows at each TPM Restart or Resume, and Clock
 * only advances (it may go back only across a TPM Reset, after a power
 * loss). So a quote whose counts or clock are not after the previous one's
 * is older than it: replayed, or kept from before. (TPM2_Clear sets both
 * counts to zero: a cleared TPM is a new machine to register again.) */
static int check_previous(verdict *v) {
        const mb_attest_quote *q = &v->q;

        if (q->reset_count < v->prev_reset) {
                add(v, "previous", false, "resetCount %u is below the previous evidence's %u: an older quote (replayed), "
                    "or the TPM was cleared", q->reset_count, v->prev_reset);
                return 0;
        }
        if (q->reset_count > v->prev_reset) {
                v->since = "reboot";
                add(v, "previous", true, "the machine rebooted since the previous evidence (resetCount %u -> %u)",
                    v->prev_reset, q->reset_count);
                return 1;
        }
        if (q->restart_count < v->prev_restart) {
                add(v, "previous", false, "restartCount %u is below the previous evidence's %u in the same boot "
                    "(resetCount %u): an older quote (replayed)", q->restart_count, v->prev_restart, q->reset_count);
                return 0;
        }
        if (q->clock <= v->prev_clock) {
                add(v, "previous", false, "the TPM's clock %llu ms is not after the previous evidence's %llu ms in the same "
                    "boot (resetCount %u): an older or replayed quote", (unsigned long long) q->clock,
                    (unsigned long long) v->prev_clock, q->reset_count);
                return 0;
        }
        v->since = q->restart_count > v->prev_restart ? "restart" : "same-boot";
        if (q->restart_count > v->prev_restart)
                add(v, "previous", true, "the same boot, resumed or restarted since the previous evidence (restartCount "
                    "%u -> %u), %llu ms of TPM clock later", v->prev_restart, q->restart_count,
                    (unsigned long long) (q->clock - v->prev_clock));
        else
                add(v, "previous", true, "the same boot as the previous evidence, %llu ms of TPM clock later",
                    (unsigned long long) (q->clock - v->prev_clock));
        return 1;
}

/* 1 accepted, 0 refused, -1 bad input (message printed). */
/* PCR 10 against the evidence's IMA list (tools/lib/ima.c), in every
 * quoted bank mshim hashes, and each entry the quote covers against the
 * allowlist when one is given. 1 accepted, 0 refused, -1 bad input. */
static int check_ima(verdict *v, const evidence *ev, const ima_allow *allow, const char *path) {
        ima_bank banks[MB_TCGLOG_MAX_ALGS];
        ima_verdict *iv = calloc(1, sizeof(*iv));
        size_t n = 0;
        char lb[16];
        int r;

        if (!iv) {
                cli_error("out of memory");
                return -1;
        }
        for (uint32_t k = 0; k < v->q.n_sel && n < MB_TCGLOG_MAX_ALGS; k++) {
                const uint8_t *q = mb_pcrs_get(&ev->pcrs, v->q.sel[k].alg, MB_IMA_PCR);
                uint16_t alg = v->q.sel[k].alg;
                if ((v->q.sel[k].mask & (1u << MB_IMA_PCR)) && q && alg != MB_ALG_SM3_256 && mb_hash_size(alg))
                        banks[n++] = (ima_bank) { .alg = alg, .want = q };
        }
        if (!n) {
                add(v, "ima", false, "the quote does not cover PCR 10 in a bank mshim hashes: the IMA list is bound by "
                    "nothing (mshim attest quote --ima quotes it)");
                free(iv);
                return 0;
        }
        r = ima_judge(path, ev->ima, ev->ima_n, banks, n, allow, iv);
        if (r == EXIT_BAD_INPUT)
                r = -1;
        else if (r == EXIT_CHECK_FAILED)
                r = 0, add(v, "ima", false, "the IMA list does not replay to the quoted PCR 10 (%s%s) at any entry: an "
                           "entry edited, removed or added", cli_alg_label(banks[0].alg, lb),
                           n > 1 ? " and the other quoted banks" : "");
        else if (iv->refused)
                r = 0, add(v, "ima", false, "%s", iv->why);
        else
                r = 1, add(v, "ima", true, "%u of the IMA list's %u entries are what PCR 10 holds (%u after the quote, not "
                           "judged; %u violations)%s", iv->covered, iv->entries, iv->entries - iv->covered,
                           iv->violations, allow ? ", each allowed by the allowlist" : "; no allowlist given");
        free(iv);
        return r;
}

static int run_checks(verdict *v, const mb_attest_public *ak, const evidence *ev, const uint8_t *nonce, size_t nonce_n,
                      const char *path) {
        mb_err e;
        int r = check_signature(v, ak, ev, path);
        mb_attest_sig s;

        if (r <= 0)
                return r;
        e = mb_attest_quote_parse(ev->msg, ev->msg_n, &v->q);
        if (e != MB_OK) {
                /* Signed by the AK yet not a TPMS_ATTEST: refused, not trusted. */
                add(v, "magic", false, "the signed message is not a TPMS_ATTEST (%s)", mb_strerror(e));
                return 0;
        }
        v->have_quote = true;
        if (v->q.magic != MB_ATTEST_MAGIC) {
                add(v, "magic", false, "0x%08x is not TPM_GENERATED_VALUE (0xff544347): the TPM did not make this", v->q.magic);
                return 0;
        }
        add(v, "magic", true, "TPM_GENERATED_VALUE");
        if (v->q.type != MB_ATTEST_ST_QUOTE) {
                add(v, "type", false, "0x%04x is not TPM_ST_ATTEST_QUOTE (0x8018): the AK signed something else", v->q.type);
                return 0;
        }
        add(v, "type", true, "TPM_ST_ATTEST_QUOTE");
        if (v->q.extra.size != nonce_n || memcmp(v->q.extra.p, nonce, nonce_n)) {
                char got[2 * MB_ATTEST_DATA_MAX + 1];
                hex_into(got, v->q.extra.p, v->q.extra.size);
                add(v, "nonce", false, "the quote was made for the nonce '%s', not this one (a stale or replayed quote)",
                    got);
                return 0;
        }
        add(v, "nonce", true, "the quote's extraData is the nonce");
        if (v->have_prev && !check_previous(v))
                return 0;
        (void) mb_attest_sig_parse(ev->sig, ev->sig_n, &s);
        r = check_digest(v, ev, s.hash, path);
        if (r <= 0)
                return r;
        return check_log(v, ev, path);
}

/* The quoted SHA-256 PCRs are one of the reference states. */
static int check_state(verdict *v, const evidence *ev, const vs_ref *refs, size_t n) {
        const vs_result *res = &v->res;
        char list[CLI_PCR_LIST_MAX];

        v->have_state = true;
        v->log = ev->log;
        v->log_n = ev->log_n;
        v->pcrs = &ev->pcrs;
        if (verify_states_match(refs, n, &ev->pcrs, &v->res)) {
                cli_pcr_select_print(res->matched->mask, list);
                add(v, "state", true, "PCRs %s are those of the %s %s%s%s%s", list,
                    res->matched->approval ? "approval" : "prediction", res->matched->path, res->matched->approval ? " (" : "",
                    res->matched->approval ? res->matched->label : "", res->matched->approval ? ")" : "");
                return 1;
        }
        if (res->forged)
                add(v, "state", false, "the only state these PCRs are, the approval %s, %s: %s", res->forged->path,
                    res->forged->revoked ? "is revoked" : "does not verify", res->forged->bad);
        else if (!res->closest)
                add(v, "state", false, "no reference state could be used (no approval verifies with the policy key and is of the current epoch)");
        else {
                cli_pcr_select_print(res->differ, list);
                add(v, "state", false, "no reference state matches: PCR%s %s differ%s from the closest, the %s %s%s%s%s%s",
                    __builtin_popcount(res->differ) > 1 ? "s" : "", list, __builtin_popcount(res->differ) > 1 ? "" : "s",
                    res->closest->approval ? "approval" : "prediction", res->closest->path,
                    res->closest->approval ? " (" : "", res->closest->approval ? res->closest->label : "",
                    res->closest->approval ? ")" : "", seal_pcr_cause(res->differ));
        }
        return 0;
}

/* ---- output ------------------------------------------------------------ */

static void print_state_json(const verdict *v) {
        const vs_ref *c = v->res.matched ? v->res.matched : v->res.forged ? v->res.forged : v->res.closest;
        char hx[2 * MB_HASH_MAX + 1];
        bool first = true;

        printf(", \"state\": {\"matched\": ");
        v->res.matched ? verify_json_str(v->res.matched->path) : (void) printf("null");
        printf(", \"closest\": ");
        c && !v->res.matched ? verify_json_str(c->path) : (void) printf("null");
        printf(", \"differing\": [");
        for (uint32_t i = 0; c && !v->res.matched && !v->res.forged && i < MB_PCR_COUNT; i++) {
                const uint8_t *q = mb_pcrs_get(v->pcrs, MB_ALG_SHA256, i);
                if (!(v->res.differ & (1u << i)))
                        continue;
                hex_into(hx, vs_value(c, i), 32);
                printf("%s{\"pcr\": %u, \"expected\": \"%s\", \"quoted\": ", first ? "" : ", ", i, hx);
                if (q) {
                        hex_into(hx, q, 32);
                        printf("\"%s\"}", hx);
                } else
                        printf("null}");
                first = false;
        }
        printf("]}");
}

/* The closest state's differing PCRs, and the log's events for each, as
 * unseal's refusal shows them. */
static void print_state_text(const verdict *v) {
        const vs_ref *c = v->res.closest;
        char hx[2 * MB_HASH_MAX + 1];

        if (v->res.matched || v->res.forged || !c)
                return;
        for (uint32_t i = 0; i < MB_PCR_COUNT; i++) {
                const uint8_t *q = mb_pcrs_get(v->pcrs, MB_ALG_SHA256, i);
                if (!(v->res.differ & (1u << i)))
                        continue;
                hex_into(hx, vs_value(c, i), 32);
                printf("  PCR %u: expected %s\n", i, hx);
                if (q)
                        hex_into(hx, q, 32);
                printf("  %*s  quoted   %s\n", 5 + (i > 9), "", q ? hx : "(not quoted)");
                /* cli_log_pcr_events writes through the CLI's own buffer */
                fflush(stdout);
                cli_log_pcr_events(v->log, v->log_n, i, MB_ALG_SHA256);
                out_flush();
        }
}

static void print_json(const verdict *v, const char *path, bool accepted) {
        char lb[16], hx[2 * MB_HASH_MAX + 1];

        printf("{\"schema\": \"%s\", \"mshim_version\": \"%s\", \"evidence\": ", ATT_VERDICT_SCHEMA, MB_VERSION);
        verify_json_str(path);
        printf(", \"ak_name\": \"%s\", \"accepted\": %s, \"checks\": [", v->ak_name, accepted ? "true" : "false");
        for (size_t i = 0; i < v->n; i++) {
                printf("%s{\"check\": \"%s\", \"ok\": %s, \"detail\": ", i ? ", " : "", v->checks[i].name,
                       v->checks[i].ok ? "true" : "false");
                verify_json_str(v->checks[i].detail);
                putchar('}');
        }
        printf("], \"unaccounted_pcrs\": [");
        for (size_t i = 0; i < v->n_mm; i++) {
                const mismatch *m = &v->mm[i];
                hex_into(hx, m->quoted, m->size);
                printf("%s{\"bank\": \"%s\", \"pcr\": %u, \"quoted\": \"%s\", \"replayed\": ", i ? ", " : "",
                       cli_alg_label(m->alg, lb), m->pcr, hx);
                hex_into(hx, m->replayed, m->size);
                if (m->in_log)
                        printf("\"%s\"}", hx);
                else
                        printf("null}");
        }
        printf("]");
        if (v->have_quote)
                printf(", \"clock\": {\"clock\": %llu, \"reset_count\": %u, \"restart_count\": %u, \"safe\": %s, "
                       "\"firmware_version\": %llu}", (unsigned long long) v->q.clock, v->q.reset_count,
                       v->q.restart_count, v->q.safe ? "true" : "false", (unsigned long long) v->q.firmware);
        if (v->have_prev)
                printf(", \"previous\": {\"clock\": %llu, \"reset_count\": %u, \"restart_count\": %u, \"since\": %s%s%s}",
                       (unsigned long long) v->prev_clock, v->prev_reset, v->prev_restart, v->since ? "\"" : "",
                       v->since ? v->since : "null", v->since ? "\"" : "");
        if (v->facts) {
                printf(", ");
                verify_facts_json(v->facts);
        }
        if (v->have_state)
                print_state_json(v);
        printf("}\n");
}

static void print_text(const verdict *v, bool accepted) {
        char lb[16], hx[2 * MB_HASH_MAX + 1];

        for (size_t i = 0; i < v->n; i++)
                printf("%s %s: %s\n", v->checks[i].ok ? "ok     " : "REFUSED", v->checks[i].name, v->checks[i].detail);
        for (size_t i = 0; i < v->n_mm; i++) {
                const mismatch *m = &v->mm[i];
                hex_into(hx, m->quoted, m->size);
                /* the label returned: cli_alg_label need not write lb */
                const char *label = cli_alg_label(m->alg, lb);
                printf("  %s PCR %u: quoted %s\n", label, m->pcr, hx);
                hex_into(hx, m->replayed, m->size);
                printf("  %*s  replayed %s\n", (int) strlen(label) + 5 + (m->pcr > 9), "",
                       m->in_log ? hx : "(no such bank in the log)");
        }
        if (v->have_state)
                print_state_text(v);
        if (v->facts)
                verify_facts_text(v->facts);
        if (v->have_quote && accepted)
                printf("clock %llu ms, reset count %u, restart count %u, safe %s\n", (unsigned long long) v->q.clock,
                       v->q.reset_count, v->q.restart_count, v->q.safe ? "yes" : "no");
        printf("%s\n", accepted ? "accepted" : "refused");
}

/* ---- the command ---------------------------------------------------------- */

#define IMAGES_MAX 32u
#define STATES_MAX 64u

typedef struct verify_opts {
        const char *ak, *nonce, *dir, *machine, *previous, *evidence;
        bool json;
        const char *images[IMAGES_MAX];
        size_t n_images;
        char *states[STATES_MAX];
        size_t n_states;
        const char *policy_key;
        const char *epoch;      /* --epoch: the machine's epoch counter (approvals below it are revoked) */
        const char *ima_allow;  /* --ima-allow */
        bool ima;               /* --ima: the evidence must carry IMA's list */
} verify_opts;

static int parse_opts(int argc, char **argv, verify_opts *o) {
        static const struct option longopts[] = {
                { "ak", required_argument, NULL, 'a' },         { "nonce", required_argument, NULL, 'n' },
                { "dir", required_argument, NULL, 'd' },        { "machine", required_argument, NULL, 'm' },
                { "previous", required_argument, NULL, 'p' },   { "json", no_argument, NULL, 'j' },
                { "image", required_argument, NULL, 'i' },      { "state", required_argument, NULL, 's' },
                { "policy-key", required_argument, NULL, 'k' }, { "help", no_argument, NULL, 'h' },
                { "ima", no_argument, NULL, 'I' },              { "ima-allow", required_argument, NULL, 'A' },
                { "epoch", required_argument, NULL, 'E' },      { 0 },
        };
        int c;

        optind = 1;
        while ((c = cli_getopt(argc, argv, "h", longopts, "verify")) != -1) {
                if (c == 'i') {
                        if (o->n_images == IMAGES_MAX)
                                return cli_usage_error("verify", "at most %u --image files", IMAGES_MAX);
                        o->images[o->n_images++] = optarg;
                        continue;
                }
                if (c == 's') {
                        if (o->n_states == STATES_MAX)
                                return cli_usage_error("verify", "at most %u --state files", STATES_MAX);
                        o->states[o->n_states++] = optarg;
                        continue;
                }
                const char **slot = c == 'a' ? &o->ak : c == 'n' ? &o->nonce : c == 'd' ? &o->dir
                                  : c == 'm' ? &o->machine : c == 'p' ? &o->previous
                                  : c == 'k' ? &o->policy_key : c == 'A' ? &o->ima_allow
                                  : c == 'E' ? &o->epoch : NULL;
                if (c == 'j')
                        o->json = true;
                else if (c == 'I')
                        o->ima = true;
                else if (c == 'h') {
                        cli_help(stdout, "verify");
                        return -1;
                } else if (!slot || cli_opt_once_for(longopts, c, slot, optarg) < 0)
                        return EXIT_BAD_INPUT;
        }
        if (argc - optind != 1 || !o->nonce)
                return cli_usage_error("verify", "verify takes one EVIDENCE file and --nonce HEX, with --ak AK.pub or "
                                       "a registered machine");
        /* The AK is either given or the registered machine's, never both:
         * a registered machine is looked up only when no AK is given. */
        if (o->ak && (o->dir || o->machine))
                return cli_usage_error("verify", "--ak names the AK itself: --dir and --machine look up a registered "
                                       "machine's instead; give one or the other");
        if ((o->policy_key || o->epoch) && !o->n_states)
                return cli_usage_error("verify", "%s checks the approvals given with --state: give them",
                                       o->policy_key ? "--policy-key" : "--epoch");
        o->evidence = argv[optind];
        o->ima = o->ima || o->ima_allow;
        return 0;
}

/* The AK: --ak, or the registered machine's (--machine, else the Name the
 * evidence names: whichever machine that is, its own AK must then verify
 * the quote). 0, EXIT_CHECK_FAILED (the "machine" check refused), or
 * EXIT_BAD_INPUT. */
static int find_ak(const verify_opts *o, const evidence *ev, verdict *v, uint8_t **ret_buf, mb_attest_public *ret) {
        const char *name = o->machine ? o->machine : ev->ak_name;
        char *about = NULL, why[512];
        size_t n = 0;
        int r;

        if (o->ak)
                return read_ak(o->ak, ret_buf, ret);
        if (!name) {
                cli_error("%s: the evidence names no AK: give --machine NAME (a registered machine) or --ak AK.pub",
                          o->evidence);
                return EXIT_BAD_INPUT;
        }
        r = verify_machine_ak(o->dir, name, ret_buf, &n, &about, why, sizeof(why));
        if (r == EXIT_CHECK_FAILED) {
                snprintf(v->ak_name, sizeof(v->ak_name), "%s", name);
                add(v, "machine", false, "%s", why);
                return r;
        }
        if (!r)
                r = parse_ak(*ret_buf, n, "the registered AK", ret);
        if (!r)
                add(v, "machine", true, "%s", about);
        free(about);
        return r;
}

static void report(const verdict *v, const verify_opts *o, bool accepted) {
        if (o->json)
                print_json(v, o->evidence, accepted);
        else
                print_text(v, accepted);
        if (!accepted)
                cli_error("refused: %s: %s", v->checks[v->n - 1].name, v->checks[v->n - 1].detail);
}

int cmd_verify(int argc, char **argv) {
        verify_opts o = { 0 };
        uint8_t nonce[ATT_NONCE_MAX], *ak_buf = NULL;
        size_t nonce_n = 0;
        mb_attest_public ak;
        mb_tpm2_name name;
        evidence ev = { 0 };
        verdict *v = NULL;
        cli_file files[IMAGES_MAX];
        verify_image img[IMAGES_MAX];
        size_t n_files = 0;
        vs_ref *refs = NULL;
        ima_allow allow = { 0 };
        uint64_t epoch;
        int r;

        /* A machine's AK is proven (challenge, register) before its quotes
         * mean anything: tools/cmd/verify_cred.c. */
        if (argc >= 2 && !strcmp(argv[1], "challenge"))
                return verify_challenge(argc - 1, argv + 1);
        if (argc >= 2 && !strcmp(argv[1], "register"))
                return verify_register(argc - 1, argv + 1);
        if (argc >= 2 && !strcmp(argv[1], "ima"))
                return verify_ima(argc - 1, argv + 1);
        if (argc >= 2 && !strcmp(argv[1], "keylime-refstate"))
                return verify_keylime_refstate(argc - 1, argv + 1);
        r = parse_opts(argc, argv, &o);
        if (r)
                return r < 0 ? 0 : r;
        if (att_nonce_parse(o.nonce, nonce, &nonce_n) < 0)
                return cli_usage_error("verify", "--nonce wants %u to %u bytes in hex, not '%s'", ATT_NONCE_MIN,
                                       ATT_NONCE_MAX, o.nonce);
        v = calloc(1, sizeof(*v));
        if (v)
                v->mm = calloc(MB_TCGLOG_MAX_ALGS * MB_PCR_COUNT, sizeof(*v->mm));
        if (!v || !v->mm) {
                cli_error("out of memory");
                r = EXIT_BAD_INPUT;
                goto out;
        }
        if (o.epoch && verify_parse_epoch(o.epoch, &epoch) < 0) {
                r = EXIT_BAD_INPUT;
                goto out;
        }
        if (o.n_states && !(refs = verify_states_load(o.states, o.n_states, o.policy_key, o.epoch ? &epoch : NULL, &r)))
                goto out;
        if (o.ima_allow && ima_allow_load(o.ima_allow, &allow) < 0) {
                r = EXIT_BAD_INPUT;
                goto out;
        }
        r = read_evidence(o.evidence, &ev);
        if (!r && o.ima && !ev.ima) {
                cli_error("%s: carries no IMA list: the machine quotes it with mshim attest quote --ima", o.evidence);
                r = EXIT_BAD_INPUT;
        }
        if (!r)
                r = find_ak(&o, &ev, v, &ak_buf, &ak);
        if (r == EXIT_CHECK_FAILED) {
                report(v, &o, false);
                goto out;
        }
        if (!r && mb_tpm2_object_name(ak.area.p, ak.area.size, &name) != MB_OK) {
                cli_error("%s: the AK's nameAlg 0x%04x is not one mshim knows", o.ak ? o.ak : "the registered AK",
                          ak.name_alg);
                r = EXIT_BAD_INPUT;
        }
        if (!r) {
                hex_into(v->ak_name, name.b, name.size);
                r = o.previous ? read_previous(v, &ak, o.previous) : 0;
        }
        for (size_t i = 0; !r && i < o.n_images; i++) {
                if (cli_file_load_max(o.images[i], (size_t) 1 << 30, "an EFI image", &files[i]) < 0) {
                        r = EXIT_BAD_INPUT;
                        break;
                }
                n_files = i + 1;
                img[i] = (verify_image) { o.images[i], files[i].data, files[i].size };
        }
        if (!r) {
                r = run_checks(v, &ak, &ev, nonce, nonce_n, o.evidence);
                if (r == 1 && ev.ima)
                        r = check_ima(v, &ev, o.ima_allow ? &allow : NULL, o.evidence);
                if (r == 1)
                        r = find_facts(v, &ev, img, o.n_images);
                if (r == 1 && refs)
                        r = check_state(v, &ev, refs, o.n_states);
                if (r >= 0)
                        report(v, &o, r == 1);
                r = r == 1 ? 0 : r == 0 ? EXIT_CHECK_FAILED : EXIT_BAD_INPUT;
        }
out:
        for (size_t i = 0; i < n_files; i++)
                cli_file_free(&files[i]);
        verify_states_free(refs);
        if (v) {
                free(v->mm);
                verify_facts_free(v->facts);
        }
        free(v);
        free(ak_buf);
        free(ev.msg);
        free(ev.sig);
        free(ev.log);
        free(ev.ima);
        free(ev.ak_name);
        ima_allow_free(&allow);
        return r;
}
