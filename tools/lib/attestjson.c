/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * What mshim attest and mshim verify share (tools/lib/attest.h): the key as
 * OpenSSL sees it, base64 and hex, the nonce, and a strict JSON reader for
 * the evidence document, which comes from the machine being judged and is
 * read before anything in it is trusted.
 */
#include <stdlib.h>
#include <string.h>
#include <openssl/bn.h>
#include <openssl/core_names.h>
#include <openssl/param_build.h>
#include <openssl/pem.h>
#include "attest.h"

int att_nonce_parse(const char *hex, uint8_t *ret, size_t *ret_size) {
        size_t n = strlen(hex);

        if (n % 2 || n / 2 < ATT_NONCE_MIN || n / 2 > ATT_NONCE_MAX)
                return -1;
        for (size_t i = 0; i < n; i += 2) {
                int hi = mb_hexval(hex[i]), lo = mb_hexval(hex[i + 1]);
                if (hi < 0 || lo < 0)
                        return -1;
                ret[i / 2] = (uint8_t) (hi << 4 | lo);
        }
        *ret_size = n / 2;
        return 0;
}

char *att_hex(const uint8_t *p, size_t n) {
        char *s = malloc(2 * n + 1);

        if (!s)
                return NULL;
        for (size_t i = 0; i < n; i++)
                snprintf(s + 2 * i, 3, "%02x", p[i]);
        s[2 * n] = 0;
        return s;
}

char *att_b64(const uint8_t *p, size_t n) {
        char *s = malloc(4 * ((n + 2) / 3) + 1);

        if (s)
                EVP_EncodeBlock((unsigned char *) s, p, (int) n);
        return s;
}

uint8_t *att_unb64(const char *s, size_t len, size_t *ret_n) {
        uint8_t *out;
        int n;

        /* EVP_DecodeBlock skips surrounding whitespace and takes padding
         * as zero bytes: refuse the first, subtract the second. */
        if (len % 4 || len > (size_t) INT32_MAX || strspn(s, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
                                                           "0123456789+/=") != len)
                return NULL;
        out = malloc(len / 4 * 3 + 1);
        if (!out)
                return NULL;
        n = EVP_DecodeBlock(out, (const unsigned char *) s, (int) len);
        if (n < 0) {
                free(out);
                return NULL;
        }
        for (size_t i = len; i > 0 && i > len - 2 && s[i - 1] == '='; i--)
                n--;
        /* '=' anywhere but the last two places is not base64. */
        if (memchr(s, '=', len - (len >= 2 ? 2 : len)) || (len >= 2 && s[len - 2] == '=' && s[len - 1] != '=')) {
                free(out);
                return NULL;
        }
        *ret_n = (size_t) n;
        return out;
}

/* ---- keys ----------------------------------------------------------- */

static EVP_PKEY *fromdata(const char *type, OSSL_PARAM_BLD *b) {
        OSSL_PARAM *params = OSSL_PARAM_BLD_to_param(b);
        EVP_PKEY_CTX *ctx = EVP_PKEY_CTX_new_from_name(NULL, type, NULL);
        EVP_PKEY *k = NULL;

        if (!params || !ctx || EVP_PKEY_fromdata_init(ctx) <= 0 ||
            EVP_PKEY_fromdata(ctx, &k, EVP_PKEY_PUBLIC_KEY, params) <= 0)
                k = NULL;
        OSSL_PARAM_free(params);
        EVP_PKEY_CTX_free(ctx);
        return k;
}

static EVP_PKEY *rsa_pkey(const mb_attest_public *pub) {
        OSSL_PARAM_BLD *b = OSSL_PARAM_BLD_new();
        /* §12.2.3.5: an exponent of 0 is the default, 2^16 + 1. */
        BIGNUM *n = BN_bin2bn(pub->rsa_n.p, pub->rsa_n.size, NULL);
        BIGNUM *e = BN_new();
        EVP_PKEY *k = NULL;

        if (b && n && e && BN_set_word(e, pub->rsa_exponent ? pub->rsa_exponent : 65537) &&
            OSSL_PARAM_BLD_push_BN(b, OSSL_PKEY_PARAM_RSA_N, n) && OSSL_PARAM_BLD_push_BN(b, OSSL_PKEY_PARAM_RSA_E, e))
                k = fromdata("RSA", b);
        BN_free(n);
        BN_free(e);
        OSSL_PARAM_BLD_free(b);
        return k;
}

static EVP_PKEY *ecc_pkey(const mb_attest_public *pub) {
        const char *group = pub->curve == MB_ATTEST_ECC_NIST_P256 ? "prime256v1" : "secp384r1";
        size_t fs = pub->curve == MB_ATTEST_ECC_NIST_P256 ? 32 : 48;
        uint8_t point[1 + 2 * 48] = { 4 };      /* SEC 1 §2.3.3: uncompressed */
        OSSL_PARAM_BLD *b;
        EVP_PKEY *k = NULL;

        if (pub->x.size > fs || pub->y.size > fs)
                return NULL;
        /* TPM coordinates may come without their leading zero bytes. */
        memcpy(point + 1 + fs - pub->x.size, pub->x.p, pub->x.size);
        memcpy(point + 1 + 2 * fs - pub->y.size, pub->y.p, pub->y.size);
        b = OSSL_PARAM_BLD_new();
        if (b && OSSL_PARAM_BLD_push_utf8_string(b, OSSL_PKEY_PARAM_GROUP_NAME, group, 0) &&
            OSSL_PARAM_BLD_push_octet_string(b, OSSL_PKEY_PARAM_PUB_KEY, point, 1 + 2 * fs))
                k = fromdata("EC", b);
        OSSL_PARAM_BLD_free(b);
        return k;
}

EVP_PKEY *att_pkey(const mb_attest_public *pub, const char *what) {
        EVP_PKEY *k = NULL;

        if (pub->type == MB_ATTEST_ALG_RSA)
                k = rsa_pkey(pub);
        else if (pub->curve == MB_ATTEST_ECC_NIST_P256 || pub->curve == MB_ATTEST_ECC_NIST_P384)
                k = ecc_pkey(pub);
        else {
                cli_error("%s: an ECC key on curve 0x%04x; mshim knows NIST P-256 and P-384", what, pub->curve);
                return NULL;
        }
        if (!k)
                cli_error("%s: not a valid %s public key", what, pub->type == MB_ATTEST_ALG_RSA ? "RSA" : "ECC");
        return k;
}

char *att_pem(EVP_PKEY *k, size_t *ret_n) {
        BIO *bio = BIO_new(BIO_s_mem());
        char *p = NULL, *s = NULL;
        long n;

        if (bio && PEM_write_bio_PUBKEY(bio, k) && (n = BIO_get_mem_data(bio, &p)) > 0 && (s = malloc((size_t) n + 1))) {
                memcpy(s, p, (size_t) n);
                s[n] = 0;
                *ret_n = (size_t) n;
        }
        BIO_free(bio);
        return s;
}

/* ---- JSON ------------------------------------------------------------- */

#define AJ_MAX_DEPTH 16
/* Values in one document: the evidence has a few hundred; without a bound
 * 64 MiB of "[0,0,..." would be 32 million nodes of 64 bytes each. */
#define AJ_MAX_NODES 4096

typedef struct ajp {
        const char *s;
        size_t n, off, max_string, nodes;
        const char *err;
        size_t err_off;
} ajp;

static bool aj_fail(ajp *p, const char *why) {
        if (!p->err) {
                p->err = why;
                p->err_off = p->off;
        }
        return false;
}

static void aj_ws(ajp *p) {
        while (p->off < p->n && (p->s[p->off] == ' ' || p->s[p->off] == '\t' || p->s[p->off] == '\r' ||
                                 p->s[p->off] == '\n'))
                p->off++;
}

static bool aj_lit(ajp *p, char c) {
        aj_ws(p);
        if (p->off < p->n && p->s[p->off] == c) {
                p->off++;
                return true;
        }
        return false;
}

/* A string: escapes decoded; \u outside ASCII kept as '?' (nothing the
 * evidence holds is other than ASCII). Control characters refused. */
static bool aj_string(ajp *p, char **ret, size_t *ret_len) {
        size_t start, cap, len = 0;
        char *out;

        if (!aj_lit(p, '"'))
                return aj_fail(p, "expected a string");
        start = p->off;
        while (p->off < p->n && p->s[p->off] != '"')
                p->off += p->s[p->off] == '\\' ? 2 : 1;
        if (p->off >= p->n)
                return aj_fail(p, "unterminated string");
        cap = p->off - start;
        if (cap > p->max_string)
                return aj_fail(p, "string too long");
        out = malloc(cap + 1);
        if (!out)
                return aj_fail(p, "out of memory");
        for (size_t i = start; i < p->off; i++) {
                unsigned char c = (unsigned char) p->s[i];
                if (c < 0x20) {
                        free(out);
                        p->off = i;
                        return aj_fail(p, "control character in a string");
                }
                if (c != '\\') {
                        out[len++] = (char) c;
                        continue;
                }
                c = (unsigned char) p->s[++i];
                if (c == 'u') {
                        int v = 0;
                        for (int k = 1; k <= 4; k++) {
                                int h = i + k < p->off ? mb_hexval(p->s[i + k]) : -1;
                                if (h < 0) {
                                        free(out);
                                        return aj_fail(p, "bad \\u escape");
                                }
                                v = v << 4 | h;
                        }
                        i += 4;
                        out[len++] = v > 0 && v < 0x80 ? (char) v : '?';
                        continue;
                }
                const char *esc = strchr("\"\"\\\\//b\bf\fn\nr\rt\t", c);
                if (!c || !esc || (esc - "\"\"\\\\//b\bf\fn\nr\rt\t") % 2) {
                        free(out);
                        return aj_fail(p, "bad escape in a string");
                }
                out[len++] = esc[1];
        }
        out[len] = 0;
        p->off++;
        *ret = out;
        *ret_len = len;
        return true;
}

static bool aj_value(ajp *p, aj_node *v, int depth);

static bool aj_push(ajp *p, aj_node *v, aj_node **ret) {
        aj_node *k;

        if (++p->nodes > AJ_MAX_NODES)
                return aj_fail(p, "too many values");
        if (v->n_kids % 16 == 0) {
                k = realloc(v->kids, (v->n_kids + 16) * sizeof(*k));
                if (!k)
                        return aj_fail(p, "out of memory");
                v->kids = k;
        }
        *ret = &v->kids[v->n_kids++];
        memset(*ret, 0, sizeof(**ret));
        return true;
}

static bool aj_container(ajp *p, aj_node *v, int depth, char close) {
        if (depth >= AJ_MAX_DEPTH)
                return aj_fail(p, "nested too deeply");
        if (aj_lit(p, close))
                return true;
        do {
                aj_node *k;
                if (!aj_push(p, v, &k))
                        return false;
                if (close == '}') {
                        if (!aj_string(p, &k->key, &k->len))
                                return false;
                        for (size_t i = 0; i + 1 < v->n_kids; i++)
                                if (!strcmp(v->kids[i].key, k->key))
                                        return aj_fail(p, "duplicate member name");
                        if (!aj_lit(p, ':'))
                                return aj_fail(p, "expected ':'");
                }
                if (!aj_value(p, k, depth + 1))
                        return false;
        } while (aj_lit(p, ','));
        return aj_lit(p, close) || aj_fail(p, close == '}' ? "expected ',' or '}'" : "expected ',' or ']'");
}

static bool aj_word(ajp *p, const char *w) {
        size_t n = strlen(w);

        if (p->n - p->off < n || memcmp(p->s + p->off, w, n))
                return aj_fail(p, "unexpected character");
        p->off += n;
        return true;
}

/* Numbers: RFC 8259's grammar; the text is kept. */
static bool aj_number(ajp *p, aj_node *v) {
        size_t start = p->off;

        if (p->off < p->n && p->s[p->off] == '-')
                p->off++;
        if (p->off < p->n && p->s[p->off] == '0')
                p->off++;
        else if (p->off < p->n && p->s[p->off] >= '1' && p->s[p->off] <= '9')
                while (p->off < p->n && p->s[p->off] >= '0' && p->s[p->off] <= '9')
                        p->off++;
        else
                return aj_fail(p, "unexpected character");
        if (p->off < p->n && p->s[p->off] == '.') {
                size_t d = ++p->off;
                while (p->off < p->n && p->s[p->off] >= '0' && p->s[p->off] <= '9')
                        p->off++;
                if (p->off == d)
                        return aj_fail(p, "bad number");
        }
        if (p->off < p->n && (p->s[p->off] == 'e' || p->s[p->off] == 'E')) {
                size_t d;
                p->off++;
                if (p->off < p->n && (p->s[p->off] == '+' || p->s[p->off] == '-'))
                        p->off++;
                d = p->off;
                while (p->off < p->n && p->s[p->off] >= '0' && p->s[p->off] <= '9')
                        p->off++;
                if (p->off == d)
                        return aj_fail(p, "bad number");
        }
        if (p->off - start > 32)
                return aj_fail(p, "number too long");
        v->type = AJ_NUMBER;
        v->len = p->off - start;
        v->str = strndup(p->s + start, v->len);
        return v->str || aj_fail(p, "out of memory");
}

static bool aj_value(ajp *p, aj_node *v, int depth) {
        aj_ws(p);
        if (p->off >= p->n)
                return aj_fail(p, "unexpected end");
        switch (p->s[p->off]) {
        case '{':
                p->off++;
                v->type = AJ_OBJECT;
                return aj_container(p, v, depth, '}');
        case '[':
                p->off++;
                v->type = AJ_ARRAY;
                return aj_container(p, v, depth, ']');
        case '"':
                v->type = AJ_STRING;
                return aj_string(p, &v->str, &v->len);
        case 't':
                v->type = AJ_BOOL;
                v->b = true;
                return aj_word(p, "true");
        case 'f':
                v->type = AJ_BOOL;
                return aj_word(p, "false");
        case 'n':
                v->type = AJ_NULL;
                return aj_word(p, "null");
        default:
                return aj_number(p, v);
        }
}

static void aj_free_kids(aj_node *n) {
        for (size_t i = 0; i < n->n_kids; i++)
                aj_free_kids(&n->kids[i]);
        free(n->kids);
        free(n->key);
        free(n->str);
}

void aj_free(aj_node *n) {
        if (n) {
                aj_free_kids(n);
                free(n);
        }
}

aj_node *aj_parse(const char *s, size_t n, size_t max_string, const char **err, size_t *err_off) {
        ajp p = { s, n, 0, max_string, 0, NULL, 0 };
        aj_node *root = calloc(1, sizeof(*root));

        if (!root) {
                *err = "out of memory";
                *err_off = 0;
                return NULL;
        }
        if (aj_value(&p, root, 0)) {
                aj_ws(&p);
                if (p.off == p.n)
                        return root;
                aj_fail(&p, "trailing characters after the document");
        }
        aj_free(root);
        *err = p.err;
        *err_off = p.err_off;
        return NULL;
}

const aj_node *aj_get(const aj_node *o, const char *key) {
        if (!o || o->type != AJ_OBJECT)
                return NULL;
        for (size_t i = 0; i < o->n_kids; i++)
                if (!strcmp(o->kids[i].key, key))
                        return &o->kids[i];
        return NULL;
}
