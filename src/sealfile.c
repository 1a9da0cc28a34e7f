/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The sealed file and approval codecs (include/mb/sealfile.h,
 * docs/SEALING.md "Files"). One line reader and one loop over keys serve
 * both formats; each format has a table of keys, a function storing one
 * key's value and a check of the rules between keys, which its writer runs
 * too.
 */
#include "mb/sealfile.h"
#include "mb/emit.h"
#include "mb/sha.h"

#define SEALED_MAGIC "mshim-sealed"
#define APPROVAL_MAGIC "mshim-approval"
#define FORMAT_VERSION "1"
#define PCR_MAX 24u
/* TPM_HT_NV_INDEX: the top octet of an NV index handle (Part 2, §7.2). */
#define NV_INDEX_HT 0x01u
/* TPM_HT_PERSISTENT: a persistent object's. */
#define PERSISTENT_HT 0x81u

/* ---- lines ------------------------------------------------------------ */

typedef struct sf_reader {
        const char *buf;
        size_t size, off, line;
} sf_reader;

static bool is_print(char c) {
        return c >= 0x20 && c <= 0x7e;
}

static bool is_key_char(char c) {
        return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-';
}

/* The next line, split at its first space into key and value. MB_END after
 * the last line; MB_ERR_TRUNCATED for a last line without its newline (a
 * file cut short). Every byte must be printable ASCII; the key is [a-z0-9-]
 * and is followed by exactly one space and a non-empty value without
 * spaces around it. */
static mb_err sf_next(sf_reader *r, mb_str *ret_key, mb_str *ret_value) {
        const char *p = r->buf + r->off;
        size_t left = r->size - r->off, n = 0, k = 0;

        if (left == 0)
                return MB_END;
        r->line++;
        for (; n < left && p[n] != '\n'; n++) {
                if (n == MB_SEAL_LINE_MAX)
                        return MB_ERR_TOOLONG;
                if (!is_print(p[n]))
                        return MB_ERR_INVALID;
        }
        if (n == left)
                return MB_ERR_TRUNCATED;
        while (k < n && is_key_char(p[k]))
                k++;
        if (k == 0 || k + 1 >= n || p[k] != ' ' || p[k + 1] == ' ' || p[n - 1] == ' ')
                return MB_ERR_INVALID;
        r->off += n + 1;
        *ret_key = (mb_str) { p, k };
        *ret_value = (mb_str) { p + k + 1, n - k - 1 };
        return MB_OK;
}

/* ---- values ----------------------------------------------------------- */

/* A lower-case hex digit's value, -1 for anything else. */
static int lower_hex(char c) {
        return c >= 'A' && c <= 'F' ? -1 : mb_hexval(c);
}

/* Lower-case hex of 1..cap bytes. out may be written on failure: the
 * callers decode into their parse context, not the caller's result. */
static mb_err hex_decode(mb_str v, uint8_t *out, size_t cap, size_t *ret_n) {
        if (v.len % 2)
                return MB_ERR_INVALID;
        if (v.len / 2 > cap)
                return MB_ERR_TOOLONG;
        for (size_t i = 0; i < v.len / 2; i++) {
                int hi = lower_hex(v.p[2 * i]), lo = lower_hex(v.p[2 * i + 1]);

                if (hi < 0 || lo < 0)
                        return MB_ERR_INVALID;
                out[i] = (uint8_t) (hi << 4 | lo);
        }
        *ret_n = v.len / 2;
        return MB_OK;
}

/* Hex of exactly n bytes. */
static mb_err hex_exact(mb_str v, uint8_t *out, size_t n) {
        size_t got;
        mb_err e = hex_decode(v, out, n, &got);

        return e != MB_OK ? e : got == n ? MB_OK : MB_ERR_INVALID;
}

/* A decimal number without sign or leading zeros, at most UINT64_MAX. */
static mb_err dec_u64(mb_str v, uint64_t *ret) {
        uint64_t x = 0;

        if (v.len == 0 || (v.len > 1 && v.p[0] == '0'))
                return MB_ERR_INVALID;
        for (size_t i = 0; i < v.len; i++) {
                unsigned d = (unsigned) (v.p[i] - '0');

                if (v.p[i] < '0' || v.p[i] > '9')
                        return MB_ERR_INVALID;
                if (x > (UINT64_MAX - d) / 10)
                        return MB_ERR_OVERFLOW;
                x = x * 10 + d;
        }
        *ret = x;
        return MB_OK;
}

/* "4,7,9": PCR numbers 0-23, strictly ascending, so a set has one spelling. */
static mb_err pcr_list(mb_str v, uint32_t *ret) {
        uint32_t mask = 0;
        size_t i = 0;
        int last = -1;

        while (i <= v.len) {
                size_t j = i;
                uint64_t n;

                while (j < v.len && v.p[j] != ',')
                        j++;
                if (dec_u64((mb_str) { v.p + i, j - i }, &n) != MB_OK || n >= PCR_MAX || (int) n <= last)
                        return MB_ERR_INVALID;
                mask |= 1u << n;
                last = (int) n;
                i = j + 1;
        }
        *ret = mask;
        return MB_OK;
}

/* "sha256", the only bank; another algorithm mshim knows is unsupported. */
static mb_err bank_name(mb_str v, uint16_t *ret) {
        char name[16];

        if (v.len >= sizeof(name))
                return MB_ERR_INVALID;
        mb_memcpy(name, v.p, v.len);
        name[v.len] = '\0';
        if (mb_hash_alg_by_name(name) == 0)
                return MB_ERR_INVALID;
        if (mb_hash_alg_by_name(name) != MB_ALG_SHA256)
                return MB_ERR_UNSUPPORTED;
        *ret = MB_ALG_SHA256;
        return MB_OK;
}

/* One of two words: 0 for the first, 1 for the second. */
static mb_err choice(mb_str v, const char *a, const char *b, int *ret) {
        if (mb_str_eq(v, a))
                *ret = 0;
        else if (mb_str_eq(v, b))
                *ret = 1;
        else
                return MB_ERR_INVALID;
        return MB_OK;
}

/* "0x01804d53": a handle of type ht (its top octet), 8 lower-case hex
 * digits. */
static mb_err handle_of(mb_str v, uint8_t ht, uint32_t *ret) {
        uint8_t b[4];
        mb_err e;

        if (v.len != 10 || v.p[0] != '0' || v.p[1] != 'x')
                return MB_ERR_INVALID;
        e = hex_exact((mb_str) { v.p + 2, 8 }, b, sizeof(b));
        if (e != MB_OK || b[0] != ht)
                return MB_ERR_INVALID;
        *ret = (uint32_t) b[0] << 24 | (uint32_t) b[1] << 16 | (uint32_t) b[2] << 8 | b[3];
        return MB_OK;
}

/* A label: 1..128 printable ASCII characters, no space at either end. */
static bool label_ok(mb_str v) {
        if (v.len == 0 || v.len > MB_APPROVAL_LABEL_MAX || v.p[0] == ' ' || v.p[v.len - 1] == ' ')
                return false;
        for (size_t i = 0; i < v.len; i++)
                if (!is_print(v.p[i]))
                        return false;
        return true;
}

/* A boot entry id (a BLS entry's file name without .conf): 1..255 of
 * [A-Za-z0-9._+~@:-]. */
static bool entry_id_ok(mb_str v) {
        if (v.len == 0 || v.len > MB_APPROVAL_ID_MAX)
                return false;
        for (size_t i = 0; i < v.len; i++) {
                char c = v.p[i];

                if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                      c == '.' || c == '_' || c == '+' || c == '~' || c == '@' || c == ':' || c == '-'))
                        return false;
        }
        return true;
}

/* The decimal number in v.p[at, at+n), every character a digit. */
static int digits(mb_str v, size_t at, size_t n) {
        int x = 0;

        for (size_t i = at; i < at + n; i++) {
                if (v.p[i] < '0' || v.p[i] > '9')
                        return -1;
                x = x * 10 + (v.p[i] - '0');
        }
        return x;
}

/* ISO 8601 UTC, one form only: "YYYY-MM-DDTHH:MM:SSZ", a real date (leap
 * years) and time (a leap second allowed). */
static bool time_ok(mb_str v) {
        static const char form[] = "dddd-dd-ddTdd:dd:ddZ";
        static const int mdays[12] = { 31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31 };
        int y, mo, d;

        if (v.len != MB_APPROVAL_TIME_LEN)
                return false;
        for (size_t i = 0; i < v.len; i++)
                if (form[i] != 'd' && v.p[i] != form[i])
                        return false;
        y = digits(v, 0, 4);
        mo = digits(v, 5, 2);
        d = digits(v, 8, 2);
        if (y < 1 || mo < 1 || mo > 12 || d < 1 || d > mdays[mo - 1] ||
            (mo == 2 && d == 29 && (y % 4 != 0 || (y % 100 == 0 && y % 400 != 0))))
                return false;
        return digits(v, 11, 2) >= 0 && digits(v, 11, 2) <= 23 && digits(v, 14, 2) >= 0 && digits(v, 14, 2) <= 59 &&
               digits(v, 17, 2) >= 0 && digits(v, 17, 2) <= 60;
}

/* A text value into a NUL-terminated field of cap bytes. */
static mb_err text_copy(mb_str v, bool (*ok)(mb_str), char *out, size_t cap) {
        if (v.len >= cap)
                return MB_ERR_TOOLONG;
        if (!ok(v))
                return MB_ERR_INVALID;
        mb_memcpy(out, v.p, v.len);
        out[v.len] = '\0';
        return MB_OK;
}

static mb_str cstr(const char *s, size_t cap) {
        return (mb_str) { s, mb_strnlen(s, cap) };
}

/* A marshalled TPM2B: a big-endian size, then exactly that many (>= 1) bytes. */
static bool tpm2b_ok(const uint8_t *p, size_t n) {
        return n > 2 && n <= MB_SEAL_BLOB_MAX && (size_t) (p[0] << 8 | p[1]) == n - 2;
}

static uint32_t popcount(uint32_t x) {
        uint32_t n = 0;

        for (; x; x &= x - 1)
                n++;
        return n;
}

size_t mb_sealed_state_size(uint16_t bank, uint32_t pcrs) {
        return popcount(pcrs & ((1u << PCR_MAX) - 1)) * mb_hash_size(bank);
}

static bool selection_ok(uint16_t bank, uint32_t pcrs) {
        return bank == MB_ALG_SHA256 && pcrs != 0 && pcrs >> PCR_MAX == 0;
}

/* ---- the loop over keys, both formats ---------------------------------- */

typedef mb_err (*sf_store)(void *ctx, unsigned key, mb_str value);

typedef struct sf_format {
        const char *magic;
        const char *const *keys;
        unsigned n_keys;
        uint32_t repeatable;    /* bit k: key k may appear more than once */
        uint32_t required;      /* bit k: key k must appear */
        sf_store store;
        mb_err (*check)(const void *ctx);       /* the rules between keys, at the end */
} sf_format;

static mb_err sf_line(const sf_format *f, sf_reader *r, void *ctx, uint32_t *seen) {
        mb_str key, value;
        unsigned k = 0;
        mb_err e = sf_next(r, &key, &value);

        if (e != MB_OK)
                return e;
        while (k < f->n_keys && !mb_str_eq(key, f->keys[k]))
                k++;
        if (k == f->n_keys)
                return MB_ERR_INVALID;          /* unknown key */
        if ((*seen >> k & 1) && !(f->repeatable >> k & 1))
                return MB_ERR_INVALID;          /* repeated key */
        *seen |= 1u << k;
        return f->store(ctx, k, value);
}

/* The version line, then every key; then the required ones must all have
 * been seen and the rules between keys hold (a whole-file error: line 0). */
static mb_err sf_parse(const sf_format *f, const char *buf, size_t size, void *ctx, size_t *err_line) {
        sf_reader r = { buf, size, 0, 0 };
        uint32_t seen = 0;
        mb_str key, value;
        mb_err e = buf ? sf_next(&r, &key, &value) : MB_ERR_INVALID;

        if (e == MB_END)
                e = MB_ERR_TRUNCATED;
        if (e == MB_OK && !mb_str_eq(key, f->magic))
                e = MB_ERR_INVALID;
        if (e == MB_OK && !mb_str_eq(value, FORMAT_VERSION))
                e = MB_ERR_UNSUPPORTED;
        while (e == MB_OK)
                e = sf_line(f, &r, ctx, &seen);
        if (e == MB_END) {
                r.line = 0;
                e = (seen & f->required) == f->required ? f->check(ctx) : MB_ERR_INVALID;
        }
        if (e != MB_OK && err_line)
                *err_line = r.line;
        return e;
}

static void put_key(mb_strbuf *b, const char *key) {
        mb_strbuf_puts(b, key);
        mb_strbuf_put(b, " ", 1);
}

static void put_text(mb_strbuf *b, const char *key, const char *v) {
        put_key(b, key);
        mb_strbuf_puts(b, v);
        mb_strbuf_put(b, "\n", 1);
}

static void put_hex(mb_strbuf *b, const char *key, const uint8_t *p, size_t n) {
        put_key(b, key);
        mb_strbuf_hex(b, p, n);
        mb_strbuf_put(b, "\n", 1);
}

static void put_pcrs(mb_strbuf *b, const char *key, uint32_t pcrs) {
        bool first = true;

        put_key(b, key);
        for (uint32_t i = 0; i < PCR_MAX; i++)
                if (pcrs >> i & 1) {
                        if (!first)
                                mb_strbuf_put(b, ",", 1);
                        mb_strbuf_u64(b, i);
                        first = false;
                }
        mb_strbuf_put(b, "\n", 1);
}

/* The start of both writers: the rules between keys first (a writer never
 * writes what its parser refuses), then the version line. */
static mb_err put_start(mb_err rules, const char *magic, mb_strbuf *b, char *buf, size_t cap) {
        if (rules != MB_OK)
                return rules;
        mb_strbuf_init(b, buf, cap);
        put_text(b, magic, FORMAT_VERSION);
        return MB_OK;
}

static mb_err put_done(const mb_strbuf *b, size_t *ret_len) {
        if (b->truncated)
                return MB_ERR_NOSPACE;
        *ret_len = b->len;
        return MB_OK;
}

/* ---- the sealed file ---------------------------------------------------- */

enum {
        SK_MODE, SK_PIN, SK_BANK, SK_PCRS, SK_SRK_PUBLIC, SK_POLICY_KEY, SK_NV_INDEX, SK_NV_NAME,
        SK_STATE, SK_PUBLIC, SK_PRIVATE, SK_FENCE, SK_COUNT
};
static const char *const sealed_keys[SK_COUNT] = {
        [SK_MODE] = "mode", [SK_PIN] = "pin", [SK_BANK] = "bank", [SK_PCRS] = "pcrs",
        [SK_SRK_PUBLIC] = "srk-public", [SK_POLICY_KEY] = "policy-key", [SK_NV_INDEX] = "nv-index",
        [SK_NV_NAME] = "nv-name", [SK_STATE] = "state", [SK_PUBLIC] = "public", [SK_PRIVATE] = "private",
        [SK_FENCE] = "fence",
};

typedef struct sealed_ctx {
        mb_sealed s;
        uint8_t *state_buf;
        size_t state_cap, state_size;   /* state_size: the first state's, all must match */
} sealed_ctx;

static mb_err blob(mb_str v, uint8_t *out, size_t *ret_size) {
        return hex_decode(v, out, MB_SEAL_BLOB_MAX, ret_size);
}

static mb_err sealed_state(sealed_ctx *c, mb_str v) {
        size_t off = c->s.n_states * c->state_size, n;
        mb_err e;

        if (c->s.n_states == MB_SEAL_STATE_MAX)
                return MB_ERR_TOOLONG;
        if (v.len / 2 > MB_SEAL_VALUES_MAX)
                return MB_ERR_TOOLONG;
        if (mb_out_of_bounds(c->state_cap, off, v.len / 2))
                return MB_ERR_NOSPACE;
        e = hex_decode(v, c->state_buf + off, MB_SEAL_VALUES_MAX, &n);
        if (e != MB_OK)
                return e;
        if (c->s.n_states > 0 && n != c->state_size)
                return MB_ERR_INVALID;
        c->s.states = c->state_buf;
        c->state_size = n;
        c->s.n_states++;
        return MB_OK;
}

static mb_err sealed_store(void *ctx, unsigned key, mb_str v) {
        sealed_ctx *c = ctx;
        mb_sealed *s = &c->s;
        int w;
        mb_err e;

        switch (key) {
        case SK_MODE:
                if ((e = choice(v, "signed", "literal", &w)) == MB_OK)
                        s->mode = w ? MB_SEAL_LITERAL : MB_SEAL_SIGNED;
                return e;
        case SK_PIN:
                if ((e = choice(v, "no", "yes", &w)) == MB_OK)
                        s->pin = w == 1;
                return e;
        case SK_BANK:
                return bank_name(v, &s->bank);
        case SK_PCRS:
                return pcr_list(v, &s->pcrs);
        case SK_SRK_PUBLIC:
                return blob(v, s->srk_public, &s->srk_public_size);
        case SK_POLICY_KEY:
                return blob(v, s->policy_key, &s->policy_key_size);
        case SK_NV_INDEX:
                return handle_of(v, NV_INDEX_HT, &s->nv_index);
        case SK_NV_NAME:
                return hex_decode(v, s->nv_name, MB_SEAL_NAME_MAX, &s->nv_name_size);
        case SK_STATE:
                return sealed_state(c, v);
        case SK_PUBLIC:
                return blob(v, s->public_, &s->public_size);
        case SK_PRIVATE:
                return blob(v, s->private_, &s->private_size);
        case SK_FENCE:
                return pcr_list(v, &s->fence);
        }
        return MB_ERR_INVALID;
}

/* The rules between keys, for the parser and the writer: the mode's keys
 * and only those, each state the size of the selection (policy_check,
 * shared with the TOTP enrolment); TPM2B framing of the TPM blobs. */
static mb_err policy_check(const mb_sealed *s, size_t state_size) {
        bool signed_keys = s->policy_key_size || s->nv_index || s->nv_name_size;

        if (!selection_ok(s->bank, s->pcrs))
                return MB_ERR_INVALID;
        if (s->mode == MB_SEAL_SIGNED)
                return tpm2b_ok(s->policy_key, s->policy_key_size) && s->nv_index >> 24 == NV_INDEX_HT &&
                       mb_policy_is_name(s->nv_name, s->nv_name_size) && s->n_states == 0 ? MB_OK : MB_ERR_INVALID;
        if (s->mode == MB_SEAL_LITERAL)
                return !signed_keys && s->n_states > 0 && s->n_states <= MB_SEAL_STATE_MAX && s->states &&
                       state_size == mb_sealed_state_size(s->bank, s->pcrs) ? MB_OK : MB_ERR_INVALID;
        return MB_ERR_INVALID;
}

static mb_err sealed_check(const mb_sealed *s, size_t state_size) {
        if (!tpm2b_ok(s->srk_public, s->srk_public_size) || !tpm2b_ok(s->public_, s->public_size) ||
            !tpm2b_ok(s->private_, s->private_size))
                return MB_ERR_INVALID;
        /* A fenced PCR is required at zero: it cannot also be selected for
         * approved values (and PCRs 0-23 only). */
        if (s->fence >> PCR_MAX || (s->fence & s->pcrs))
                return MB_ERR_INVALID;
        return policy_check(s, state_size);
}

static mb_err sealed_ctx_check(const void *ctx) {
        const sealed_ctx *c = ctx;

        return sealed_check(&c->s, c->state_size);
}

static const sf_format sealed_format = {
        .magic = SEALED_MAGIC,
        .keys = sealed_keys,
        .n_keys = SK_COUNT,
        .repeatable = 1u << SK_STATE,
        .required = 1u << SK_MODE | 1u << SK_PIN | 1u << SK_BANK | 1u << SK_PCRS | 1u << SK_SRK_PUBLIC |
                    1u << SK_PUBLIC | 1u << SK_PRIVATE,
        .store = sealed_store,
        .check = sealed_ctx_check,
};

mb_err mb_sealed_parse(const char *buf, size_t size, uint8_t *state_buf, size_t state_cap, mb_sealed *ret,
                       size_t *err_line) {
        sealed_ctx c;
        mb_err e;

        mb_memset(&c, 0, sizeof(c));
        c.state_buf = state_buf;
        c.state_cap = state_buf ? state_cap : 0;
        e = sf_parse(&sealed_format, buf, size, &c, err_line);
        if (e == MB_OK)
                *ret = c.s;
        return e;
}

static void put_handle(mb_strbuf *b, const char *key, uint32_t h) {
        put_key(b, key);
        mb_strbuf_put(b, "0x", 2);
        for (int i = 3; i >= 0; i--) {
                uint8_t byte = (uint8_t) (h >> (8 * i));
                mb_strbuf_hex(b, &byte, 1);
        }
        mb_strbuf_put(b, "\n", 1);
}

/* The mode's keys: the policy key and the counter, or the states. */
static void put_policy(mb_strbuf *b, const mb_sealed *s, size_t state_size) {
        if (s->mode == MB_SEAL_SIGNED) {
                put_hex(b, sealed_keys[SK_POLICY_KEY], s->policy_key, s->policy_key_size);
                put_handle(b, sealed_keys[SK_NV_INDEX], s->nv_index);
                put_hex(b, sealed_keys[SK_NV_NAME], s->nv_name, s->nv_name_size);
        }
        for (size_t i = 0; i < s->n_states; i++)
                put_hex(b, sealed_keys[SK_STATE], s->states + i * state_size, state_size);
}

mb_err mb_sealed_write(const mb_sealed *s, char *buf, size_t cap, size_t *ret_len) {
        size_t state_size = mb_sealed_state_size(s->bank, s->pcrs);
        mb_strbuf b;
        mb_err e = put_start(sealed_check(s, state_size), SEALED_MAGIC, &b, buf, cap);

        if (e != MB_OK)
                return e;
        put_text(&b, sealed_keys[SK_MODE], s->mode == MB_SEAL_SIGNED ? "signed" : "literal");
        put_text(&b, sealed_keys[SK_PIN], s->pin ? "yes" : "no");
        put_text(&b, sealed_keys[SK_BANK], mb_hash_name(s->bank));
        put_pcrs(&b, sealed_keys[SK_PCRS], s->pcrs);
        if (s->fence)
                put_pcrs(&b, sealed_keys[SK_FENCE], s->fence);
        put_hex(&b, sealed_keys[SK_SRK_PUBLIC], s->srk_public, s->srk_public_size);
        put_policy(&b, s, state_size);
        put_hex(&b, sealed_keys[SK_PUBLIC], s->public_, s->public_size);
        put_hex(&b, sealed_keys[SK_PRIVATE], s->private_, s->private_size);
        return put_done(&b, ret_len);
}

/* ---- the TOTP enrolment ----------------------------------------------------- */

#define TOTP_MAGIC "mshim-totp"

/* Its own keys, then the sealed file's policy keys, read by sealed_store. */
enum {
        TK_HANDLE, TK_NAME, TK_POLICY,
        TK_MODE, TK_BANK, TK_PCRS, TK_POLICY_KEY, TK_NV_INDEX, TK_NV_NAME, TK_STATE, TK_COUNT
};
static const char *const totp_keys[TK_COUNT] = {
        [TK_HANDLE] = "handle", [TK_NAME] = "name", [TK_POLICY] = "policy",
        [TK_MODE] = "mode", [TK_BANK] = "bank", [TK_PCRS] = "pcrs", [TK_POLICY_KEY] = "policy-key",
        [TK_NV_INDEX] = "nv-index", [TK_NV_NAME] = "nv-name", [TK_STATE] = "state",
};
static const unsigned totp_sealed_key[TK_COUNT] = {
        [TK_MODE] = SK_MODE, [TK_BANK] = SK_BANK, [TK_PCRS] = SK_PCRS, [TK_POLICY_KEY] = SK_POLICY_KEY,
        [TK_NV_INDEX] = SK_NV_INDEX, [TK_NV_NAME] = SK_NV_NAME, [TK_STATE] = SK_STATE,
};

typedef struct totp_ctx {
        sealed_ctx sc;          /* the policy's keys, as a sealed file's */
        mb_totp_enrolment t;
} totp_ctx;

static mb_err totp_store(void *ctx, unsigned key, mb_str v) {
        totp_ctx *c = ctx;

        switch (key) {
        case TK_HANDLE:
                return handle_of(v, PERSISTENT_HT, &c->t.handle);
        case TK_NAME:
                return hex_decode(v, c->t.name, MB_SEAL_NAME_MAX, &c->t.name_size);
        case TK_POLICY:
                return hex_exact(v, c->t.policy, MB_POLICY_SIZE);
        }
        return key < TK_COUNT ? sealed_store(&c->sc, totp_sealed_key[key], v) : MB_ERR_INVALID;
}

/* The policy's part as a sealed file's, for policy_check and put_policy. */
static void totp_as_sealed(const mb_totp_enrolment *t, mb_sealed *ret) {
        mb_memset(ret, 0, sizeof(*ret));
        ret->mode = t->mode;
        ret->bank = t->bank;
        ret->pcrs = t->pcrs;
        ret->policy_key_size = t->policy_key_size;
        mb_memcpy(ret->policy_key, t->policy_key, sizeof(ret->policy_key));
        ret->nv_index = t->nv_index;
        ret->nv_name_size = t->nv_name_size;
        mb_memcpy(ret->nv_name, t->nv_name, sizeof(ret->nv_name));
        ret->n_states = t->n_states;
        ret->states = t->states;
}

static mb_err totp_check(const mb_totp_enrolment *t, const mb_sealed *policy, size_t state_size) {
        if (t->handle >> 24 != PERSISTENT_HT || !mb_policy_is_name(t->name, t->name_size))
                return MB_ERR_INVALID;
        return policy_check(policy, state_size);
}

static mb_err totp_ctx_check(const void *ctx) {
        const totp_ctx *c = ctx;

        return totp_check(&c->t, &c->sc.s, c->sc.state_size);
}

static const sf_format totp_format = {
        .magic = TOTP_MAGIC,
        .keys = totp_keys,
        .n_keys = TK_COUNT,
        .repeatable = 1u << TK_STATE,
        .required = 1u << TK_HANDLE | 1u << TK_NAME | 1u << TK_POLICY | 1u << TK_MODE | 1u << TK_BANK |
                    1u << TK_PCRS,
        .store = totp_store,
        .check = totp_ctx_check,
};

mb_err mb_totp_enrolment_parse(const char *buf, size_t size, uint8_t *state_buf, size_t state_cap,
                               mb_totp_enrolment *ret, size_t *err_line) {
        totp_ctx *c = &(totp_ctx) { 0 };
        const mb_sealed *s = &c->sc.s;
        mb_err e;

        c->sc.state_buf = state_buf;
        c->sc.state_cap = state_buf ? state_cap : 0;
        e = sf_parse(&totp_format, buf, size, c, err_line);
        if (e != MB_OK)
                return e;
        c->t.mode = s->mode;
        c->t.bank = s->bank;
        c->t.pcrs = s->pcrs;
        c->t.policy_key_size = s->policy_key_size;
        mb_memcpy(c->t.policy_key, s->policy_key, sizeof(c->t.policy_key));
        c->t.nv_index = s->nv_index;
        c->t.nv_name_size = s->nv_name_size;
        mb_memcpy(c->t.nv_name, s->nv_name, sizeof(c->t.nv_name));
        c->t.n_states = s->n_states;
        c->t.states = s->states;
        *ret = c->t;
        return MB_OK;
}

mb_err mb_totp_enrolment_write(const mb_totp_enrolment *t, char *buf, size_t cap, size_t *ret_len) {
        size_t state_size = mb_sealed_state_size(t->bank, t->pcrs);
        mb_sealed *policy = &(mb_sealed) { 0 };
        mb_strbuf b;
        mb_err e;

        totp_as_sealed(t, policy);
        e = put_start(totp_check(t, policy, state_size), TOTP_MAGIC, &b, buf, cap);
        if (e != MB_OK)
                return e;
        put_handle(&b, totp_keys[TK_HANDLE], t->handle);
        put_hex(&b, totp_keys[TK_NAME], t->name, t->name_size);
        put_hex(&b, totp_keys[TK_POLICY], t->policy, MB_POLICY_SIZE);
        put_text(&b, totp_keys[TK_MODE], t->mode == MB_SEAL_SIGNED ? "signed" : "literal");
        put_text(&b, totp_keys[TK_BANK], mb_hash_name(t->bank));
        put_pcrs(&b, totp_keys[TK_PCRS], t->pcrs);
        put_policy(&b, policy, state_size);
        return put_done(&b, ret_len);
}

/* ---- approvals ------------------------------------------------------------ */

enum {
        AK_EPOCH, AK_BANK, AK_PCRS, AK_VALUES, AK_POLICY, AK_SIGNATURE, AK_LABEL, AK_ENTRY_ID, AK_CREATED, AK_COUNT
};
static const char *const approval_keys[AK_COUNT] = {
        [AK_EPOCH] = "epoch", [AK_BANK] = "bank", [AK_PCRS] = "pcrs", [AK_VALUES] = "values",
        [AK_POLICY] = "policy", [AK_SIGNATURE] = "signature", [AK_LABEL] = "label",
        [AK_ENTRY_ID] = "entry-id", [AK_CREATED] = "created",
};

typedef struct approval_ctx {
        mb_approval a;
        size_t values_size;
} approval_ctx;

static mb_err approval_store(void *ctx, unsigned key, mb_str v) {
        approval_ctx *c = ctx;
        mb_approval *a = &c->a;

        switch (key) {
        case AK_EPOCH:
                return dec_u64(v, &a->epoch);
        case AK_BANK:
                return bank_name(v, &a->bank);
        case AK_PCRS:
                return pcr_list(v, &a->pcrs);
        case AK_VALUES:
                return hex_decode(v, a->values, sizeof(a->values), &c->values_size);
        case AK_POLICY:
                return hex_exact(v, a->policy, sizeof(a->policy));
        case AK_SIGNATURE:
                return hex_decode(v, a->signature, sizeof(a->signature), &a->signature_size);
        case AK_LABEL:
                return text_copy(v, label_ok, a->label, sizeof(a->label));
        case AK_ENTRY_ID:
                return text_copy(v, entry_id_ok, a->entry_id, sizeof(a->entry_id));
        case AK_CREATED:
                return text_copy(v, time_ok, a->created, sizeof(a->created));
        }
        return MB_ERR_INVALID;
}

/* The rules the parser checks at the end and the writer first: the values
 * fill the selection, the signature is a DER ECDSA signature, the text
 * fields are well formed (or empty, for the optional ones). */
static mb_err approval_check(const mb_approval *a, size_t values_size) {
        uint8_t r[32], s[32];
        mb_str label = cstr(a->label, sizeof(a->label)), id = cstr(a->entry_id, sizeof(a->entry_id));

        if (!selection_ok(a->bank, a->pcrs) || values_size != mb_sealed_state_size(a->bank, a->pcrs) ||
            a->signature_size > sizeof(a->signature) ||
            mb_approval_sig_rs(a->signature, a->signature_size, r, s) != MB_OK ||
            (label.len && !label_ok(label)) || (id.len && !entry_id_ok(id)) ||
            !time_ok(cstr(a->created, sizeof(a->created))))
                return MB_ERR_INVALID;
        return MB_OK;
}

static mb_err approval_ctx_check(const void *ctx) {
        const approval_ctx *c = ctx;

        return approval_check(&c->a, c->values_size);
}

static const sf_format approval_format = {
        .magic = APPROVAL_MAGIC,
        .keys = approval_keys,
        .n_keys = AK_COUNT,
        .repeatable = 0,
        .required = 1u << AK_EPOCH | 1u << AK_BANK | 1u << AK_PCRS | 1u << AK_VALUES | 1u << AK_POLICY |
                    1u << AK_SIGNATURE | 1u << AK_CREATED,
        .store = approval_store,
        .check = approval_ctx_check,
};

mb_err mb_approval_parse(const char *buf, size_t size, mb_approval *ret, size_t *err_line) {
        approval_ctx c;
        mb_err e;

        mb_memset(&c, 0, sizeof(c));
        e = sf_parse(&approval_format, buf, size, &c, err_line);
        if (e == MB_OK)
                *ret = c.a;
        return e;
}

mb_err mb_approval_write(const mb_approval *a, char *buf, size_t cap, size_t *ret_len) {
        size_t values_size = mb_sealed_state_size(a->bank, a->pcrs);
        mb_strbuf b;
        mb_err e = put_start(approval_check(a, values_size), APPROVAL_MAGIC, &b, buf, cap);

        if (e != MB_OK)
                return e;
        put_key(&b, approval_keys[AK_EPOCH]);
        mb_strbuf_u64(&b, a->epoch);
        mb_strbuf_put(&b, "\n", 1);
        put_text(&b, approval_keys[AK_BANK], mb_hash_name(a->bank));
        put_pcrs(&b, approval_keys[AK_PCRS], a->pcrs);
        put_hex(&b, approval_keys[AK_VALUES], a->values, values_size);
        put_hex(&b, approval_keys[AK_POLICY], a->policy, sizeof(a->policy));
        put_hex(&b, approval_keys[AK_SIGNATURE], a->signature, a->signature_size);
        if (a->label[0])
                put_text(&b, approval_keys[AK_LABEL], a->label);
        if (a->entry_id[0])
                put_text(&b, approval_keys[AK_ENTRY_ID], a->entry_id);
        put_text(&b, approval_keys[AK_CREATED], a->created);
        return put_done(&b, ret_len);
}

/* ---- the signature --------------------------------------------------------- */

/* One DER INTEGER (X.690 §8.3) at *off: positive, minimal, non-zero, at most
 * 32 bytes of value; into out left-padded. */
static mb_err der_uint(const uint8_t *p, size_t size, size_t *off, uint8_t out[32]) {
        size_t n, o = *off;

        if (mb_out_of_bounds(size, o, 2) || p[o] != 0x02)
                return MB_ERR_INVALID;
        n = p[o + 1];
        o += 2;
        if (n == 0 || n > 33 || mb_out_of_bounds(size, o, n) || (p[o] & 0x80))
                return MB_ERR_INVALID;
        if (p[o] == 0 && (n == 1 || !(p[o + 1] & 0x80)))
                return MB_ERR_INVALID;          /* zero, or a needless leading zero */
        if (p[o] == 0) {
                o++;
                n--;
        }
        if (n > 32)
                return MB_ERR_INVALID;
        mb_memset(out, 0, 32 - n);
        mb_memcpy(out + 32 - n, p + o, n);
        *off = o + n;
        return MB_OK;
}

/* ECDSA-Sig-Value ::= SEQUENCE { r INTEGER, s INTEGER } (RFC 3279 §2.2.3),
 * short-form lengths only (a P-256 signature is at most 72 bytes). */
mb_err mb_approval_sig_rs(const uint8_t *sig, size_t size, uint8_t ret_r[32], uint8_t ret_s[32]) {
        uint8_t r[32], s[32];
        size_t off = 2;

        if (!sig || size < 2 || size > MB_APPROVAL_SIG_MAX || sig[0] != 0x30 || sig[1] != size - 2)
                return MB_ERR_INVALID;
        if (der_uint(sig, size, &off, r) != MB_OK || der_uint(sig, size, &off, s) != MB_OK || off != size)
                return MB_ERR_INVALID;
        mb_memcpy(ret_r, r, 32);
        mb_memcpy(ret_s, s, 32);
        return MB_OK;
}
