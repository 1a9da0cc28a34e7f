/* SPDX-License-Identifier: BSD-2-Clause */
/* `mshim predict --json` output, read back for mshim policy approve, mshim
 * seal --literal and mshim totp enroll --literal (docs/predict.md
 * "Output", docs/schema/mshim-predict-1.schema.json). */
#include <string.h>
#include "jsonread.h"
#include "predjson.h"

#define MAX_STRING 4096

/* Why the document is not a prediction, and where. */
typedef struct pj_err {
        const char *why;
        size_t off;
} pj_err;

static bool bad(pj_err *e, const jr_node *at, const char *why) {
        e->why = why;
        e->off = at->off;
        return false;
}

/* "pcrs": { "<bank>": { "<pcr>": "<hex>" } }; a bank mshim does not know
 * is skipped (a later mshim-predict/1 may list more). */
static bool read_pcrs(const jr_node *o, pred_json *ret, pj_err *e) {
        if (o->type != JR_OBJECT)
                return bad(e, o, "\"pcrs\" is not an object");
        for (size_t b = 0; b < o->n_kids; b++) {
                const jr_node *bank = &o->kids[b];
                uint16_t alg = mb_hash_alg_by_name(bank->key);
                size_t size = mb_hash_size(alg);

                if (!alg)
                        continue;
                /* Names are unique (jsonread); two names of one bank are not. */
                for (uint32_t k = 0; k < ret->pcrs.n_banks; k++)
                        if (ret->pcrs.banks[k].alg == alg)
                                return bad(e, bank, "a bank given twice");
                if (bank->type != JR_OBJECT)
                        return bad(e, bank, "a bank that is not an object");
                for (size_t i = 0; i < bank->n_kids; i++) {
                        const jr_node *pv = &bank->kids[i];
                        uint8_t v[MB_HASH_MAX];
                        uint32_t pcr;

                        if (!jr_pcr_index(pv->key, &pcr))
                                return bad(e, pv, "a PCR index must be a decimal number 0-23");
                        if (!jr_hex(pv, size, v))
                                return bad(e, pv, "a PCR value that is not hex of its bank's digest size");
                        if (mb_pcrs_set(&ret->pcrs, alg, pcr, v, size) != MB_OK)
                                return bad(e, pv, "too many banks");
                }
        }
        return true;
}

/* "unpredictable": { "<pcr>": "<reason>" }. */
static bool read_unpredictable(const jr_node *o, pred_json *ret, pj_err *e) {
        if (o->type != JR_OBJECT)
                return bad(e, o, "\"unpredictable\" is not an object");
        for (size_t i = 0; i < o->n_kids; i++) {
                uint32_t pcr;
                if (!jr_pcr_index(o->kids[i].key, &pcr))
                        return bad(e, &o->kids[i], "a PCR index must be a decimal number 0-23");
                if (o->kids[i].type != JR_STRING)
                        return bad(e, &o->kids[i], "a reason that is not a string");
                ret->unpredictable |= 1u << pcr;
        }
        return true;
}

/* "changed": [ <pcr>, ... ]. */
static bool read_changed(const jr_node *a, pj_err *e) {
        uint32_t v;

        if (a->type != JR_ARRAY)
                return bad(e, a, "\"changed\" is not an array");
        for (size_t i = 0; i < a->n_kids; i++)
                if (!jr_uint(&a->kids[i], &v))
                        return bad(e, &a->kids[i], "\"changed\" holds what is not a PCR number");
        return true;
}

static bool read_point(const jr_node *s, pred_json *ret, pj_err *e) {
        if (s->type == JR_STRING && !strcmp(s->str, "boot"))
                ret->point = PRED_POINT_BOOT;
        else if (s->type == JR_STRING && !strcmp(s->str, "totp"))
                ret->point = PRED_POINT_TOTP;
        else
                return bad(e, s, "\"point\" is neither \"boot\" nor \"totp\"");
        return true;
}

/* A string member, when present. */
static bool string_member(const jr_node *doc, const char *key, pj_err *e) {
        const jr_node *m = jr_get(doc, key);

        return !m || m->type == JR_STRING || bad(e, m, "a member that should be a string is not");
}

static bool document(const jr_node *doc, pred_json *ret, pj_err *e) {
        const jr_node *schema = jr_get(doc, "schema"), *pcrs = jr_get(doc, "pcrs");
        const jr_node *unpred = jr_get(doc, "unpredictable"), *m;

        if (doc->type != JR_OBJECT)
                return bad(e, doc, "not a JSON object");
        if (!schema || !pcrs || !unpred)
                return bad(e, doc, "no schema, pcrs or unpredictable member: not `mshim predict --json` output");
        if (schema->type != JR_STRING || strcmp(schema->str, "mshim-predict/1"))
                return bad(e, schema, "not schema mshim-predict/1");
        if (!string_member(doc, "mshim_version", e) || !string_member(doc, "baseline", e) ||
            !string_member(doc, "refused", e) || !read_pcrs(pcrs, ret, e) || !read_unpredictable(unpred, ret, e))
                return false;
        ret->refused = jr_get(doc, "refused") != NULL;
        if ((m = jr_get(doc, "changed")) && !read_changed(m, e))
                return false;
        return !(m = jr_get(doc, "point")) || read_point(m, ret, e);
}

int pred_json_parse(const char *name, const char *buf, size_t size, pred_json *ret) {
        pj_err e = { 0 };
        jr_node *doc = jr_parse(buf, size, &JR_LIMITS(MAX_STRING), &e.why, &e.off);
        pred_json r;
        bool ok;

        memset(&r, 0, sizeof(r));
        ok = doc && document(doc, &r, &e);
        jr_free(doc);
        if (!ok) {
                cli_error("%s: not `mshim predict --json` output (schema mshim-predict/1): %s at byte %zu", name,
                          e.why, e.off);
                return -1;
        }
        *ret = r;
        return 0;
}

int pred_json_load(const char *path, pred_json *ret) {
        cli_file f;
        int r;

        if (cli_file_load_max(path, PREDJSON_MAX_SIZE, "a prediction", &f) < 0)
                return -1;
        r = pred_json_parse(path, (const char *) f.data, f.size, ret);
        cli_file_free(&f);
        return r;
}

/* The point a use wants, and the predict option that gives it. */
static const char *point_name(pred_point p) {
        return p == PRED_POINT_TOTP ? "the TOTP point (`mshim predict --totp-point --json`)"
                                    : "the end of the boot (`mshim predict --json`)";
}

int pred_json_values(const char *name, const pred_json *p, pred_point want, uint32_t mask, uint8_t *values) {
        char list[CLI_PCR_LIST_MAX];
        uint32_t missing = 0;
        size_t k = 0;

        /* A file without "point" cannot say which moment it holds: a TOTP
         * point's values approved as a disk state would be useless (PCR 9
         * at zero), and the reverse too. */
        if (p->point == PRED_POINT_NONE) {
                cli_error("%s: this prediction does not say which point of the boot it is of (no \"point\": written "
                          "by an older mshim); re-run mshim predict%s --json", name,
                          want == PRED_POINT_TOTP ? " --totp-point" : "");
                return -1;
        }
        if (p->point != want) {
                cli_error("%s: a prediction of %s; this needs one of %s", name, point_name(p->point), point_name(want));
                return -1;
        }
        if (p->refused) {
                cli_error("%s: the firmware would refuse that boot (\"refused\"): nothing to approve", name);
                return -1;
        }
        if (p->unpredictable & mask) {
                cli_error("%s: PCR %d is unpredictable there: never approved or sealed to", name,
                          __builtin_ctz(p->unpredictable & mask));
                return -1;
        }
        for (uint32_t i = 0; i < MB_PCR_COUNT; i++)
                if ((mask & (1u << i)) && !mb_pcrs_get(&p->pcrs, MB_ALG_SHA256, i))
                        missing |= 1u << i;
        if (missing) {
                cli_pcr_select_print(missing, list);
                cli_error("%s: no sha256 value for PCR %s: the prediction does not hold what is to be approved "
                          "(never taken as zero); re-run mshim predict with --select naming every PCR of the "
                          "selection", name, list);
                return -1;
        }
        for (uint32_t i = 0; i < MB_PCR_COUNT; i++)
                if (mask & (1u << i))
                        memcpy(values + 32 * k++, mb_pcrs_get(&p->pcrs, MB_ALG_SHA256, i), 32);
        return 0;
}
