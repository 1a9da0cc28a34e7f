/* SPDX-License-Identifier: BSD-2-Clause */
/* The sealed file and approval texts (tools/sealdata.h). */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <tss2/tss2_mu.h>
#include "sealdata.h"

#define SEALED_MAGIC "mshim-sealed 1"
#define APPROVAL_MAGIC "mshim-approval 1"
#define MAX_LINE 4096

/* ---- writing --------------------------------------------------------------- */

typedef struct text {
        char *s;
        size_t len, cap;
        bool oom;
} text;

static void put(text *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void put(text *t, const char *fmt, ...) {
        va_list ap;
        int n;

        for (;;) {
                if (t->oom)
                        return;
                va_start(ap, fmt);
                n = vsnprintf(t->s ? t->s + t->len : NULL, t->s ? t->cap - t->len : 0, fmt, ap);
                va_end(ap);
                if (n < 0) {
                        t->oom = true;
                        return;
                }
                if (t->s && (size_t) n < t->cap - t->len) {
                        t->len += (size_t) n;
                        return;
                }
                char *ns = realloc(t->s, t->cap + (size_t) n + 4096);
                if (!ns) {
                        t->oom = true;
                        return;
                }
                t->s = ns;
                t->cap += (size_t) n + 4096;
        }
}

static void put_hex(text *t, const char *key, const uint8_t *p, size_t n) {
        put(t, "%s ", key);
        for (size_t i = 0; i < n; i++)
                put(t, "%02x", p[i]);
        put(t, "\n");
}

static char *done(text *t) {
        if (t->oom) {
                free(t->s);
                return NULL;
        }
        return t->s;
}

/* A TPM2B structure, marshalled (TPM 2.0 Part 2 form), as hex. */
#define PUT_MU(t, key, type, val)                                                          \
        do {                                                                               \
                uint8_t b_[sizeof(*(val))];                                                \
                size_t o_ = 0;                                                             \
                if (Tss2_MU_##type##_Marshal((val), b_, sizeof(b_), &o_) != TSS2_RC_SUCCESS) \
                        (t)->oom = true;                                                   \
                else                                                                       \
                        put_hex((t), (key), b_, o_);                                       \
        } while (0)

char *seal_file_format(const seal_file *f) {
        text t = { 0 };
        char pcrs[CLI_PCR_LIST_MAX];

        cli_pcr_select_print(f->pcrs, pcrs);
        put(&t, "%s\nmode %s\npin %s\npcrs %s\n", SEALED_MAGIC, f->literal ? "literal" : "signed", f->pin ? "yes" : "no",
            pcrs);
        PUT_MU(&t, "srk", TPM2B_PUBLIC, &f->srk);
        PUT_MU(&t, "public", TPM2B_PUBLIC, &f->pub);
        PUT_MU(&t, "private", TPM2B_PRIVATE, &f->priv);
        if (!f->literal) {
                PUT_MU(&t, "policy-key", TPM2B_PUBLIC, &f->policy_key);
                put_hex(&t, "counter", f->counter, f->counter_size);
        }
        for (size_t i = 0; f->literal && i < f->n_states; i++)
                put_hex(&t, "state", f->states[i], seal_pcr_count(f->pcrs) * SEAL_PCR_VALUE);
        return done(&t);
}

char *approval_format(const approval *a) {
        text t = { 0 };
        char pcrs[CLI_PCR_LIST_MAX];

        cli_pcr_select_print(a->pcrs, pcrs);
        put(&t, "%s\nepoch %llu\npcrs %s\n", APPROVAL_MAGIC, (unsigned long long) a->epoch, pcrs);
        put_hex(&t, "values", a->values, seal_pcr_count(a->pcrs) * SEAL_PCR_VALUE);
        put_hex(&t, "policy", a->policy.d, MB_POLICY_SIZE);
        put_hex(&t, "signature-r", a->sig_r, sizeof(a->sig_r));
        put_hex(&t, "signature-s", a->sig_s, sizeof(a->sig_s));
        put(&t, "label %s\nentry-id %s\ncreated %s\n", a->label, a->entry_id, a->created);
        return done(&t);
}

/* ---- reading --------------------------------------------------------------- */

typedef struct reader {
        const char *path;
        const char *s;
        size_t n, off, line;
        char key[32];
        const char *val;
        size_t val_len;
} reader;

static int bad(reader *r, const char *why) {
        cli_error("%s:%zu: %s (damaged, or not a file mshim wrote)", r->path, r->line, why);
        return -1;
}

/* The next "key value" line: 1, 0 at the end, -1 on error. */
static int next_line(reader *r) {
        const char *nl, *sp;
        size_t len;

        if (r->off == r->n)
                return 0;
        r->line++;
        nl = memchr(r->s + r->off, '\n', r->n - r->off);
        if (!nl)
                return bad(r, "the last line has no newline (truncated?)");
        len = (size_t) (nl - (r->s + r->off));
        if (len > MAX_LINE)
                return bad(r, "line too long");
        sp = memchr(r->s + r->off, ' ', len);
        if (!sp || sp == r->s + r->off || (size_t) (sp - (r->s + r->off)) >= sizeof(r->key))
                return bad(r, "not a \"key value\" line");
        memcpy(r->key, r->s + r->off, (size_t) (sp - (r->s + r->off)));
        r->key[sp - (r->s + r->off)] = 0;
        r->val = sp + 1;
        r->val_len = (size_t) (nl - r->val);
        for (size_t i = 0; i < r->val_len; i++)
                if ((unsigned char) r->val[i] < 0x20 || r->val[i] == 0x7f)
                        return bad(r, "control character in a value");
        r->off += len + 1;
        return 1;
}

static int hexdigit(char c) {
        return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

/* Lower-case hex of exactly n bytes (n 0: any length up to max, *ret_n). */
static int hex(reader *r, uint8_t *out, size_t n, size_t max, size_t *ret_n) {
        size_t want = n ? n : r->val_len / 2;

        if (r->val_len != 2 * want || want > (n ? n : max))
                return bad(r, "a hex value of the wrong length");
        for (size_t i = 0; i < want; i++) {
                int hi = hexdigit(r->val[2 * i]), lo = hexdigit(r->val[2 * i + 1]);
                if (hi < 0 || lo < 0)
                        return bad(r, "not lower-case hex");
                out[i] = (uint8_t) (hi << 4 | lo);
        }
        if (ret_n)
                *ret_n = want;
        return 0;
}

static int text_value(reader *r, char *out, size_t max) {
        if (r->val_len > max)
                return bad(r, "value too long");
        memcpy(out, r->val, r->val_len);
        out[r->val_len] = 0;
        return 0;
}

static int pcrs_value(reader *r, uint32_t *ret) {
        char buf[80];

        if (r->val_len >= sizeof(buf))
                return bad(r, "not a PCR list");
        memcpy(buf, r->val, r->val_len);
        buf[r->val_len] = 0;
        return cli_pcr_select_parse(buf, ret) < 0 || !*ret ? bad(r, "not a PCR list") : 0;
}

static int u64_value(reader *r, uint64_t *ret) {
        uint64_t v = 0;

        if (r->val_len == 0 || r->val_len > 20 || (r->val[0] == '0' && r->val_len > 1))
                return bad(r, "not a number");
        for (size_t i = 0; i < r->val_len; i++) {
                if (r->val[i] < '0' || r->val[i] > '9' || v > (UINT64_MAX - 9) / 10)
                        return bad(r, "not a number");
                v = v * 10 + (uint64_t) (r->val[i] - '0');
        }
        *ret = v;
        return 0;
}

static int choice(reader *r, const char *a, const char *b, bool *ret_b) {
        if (r->val_len == strlen(a) && !memcmp(r->val, a, r->val_len))
                *ret_b = false;
        else if (r->val_len == strlen(b) && !memcmp(r->val, b, r->val_len))
                *ret_b = true;
        else
                return bad(r, "unexpected value");
        return 0;
}

/* A marshalled TPM2B structure; the bytes must be exactly one. */
#define GET_MU(r, type, out)                                                                     \
        ({                                                                                       \
                uint8_t b_[sizeof(*(out))];                                                      \
                size_t n_ = 0, o_ = 0;                                                           \
                int rc_ = hex((r), b_, 0, sizeof(b_), &n_);                                      \
                if (rc_ == 0 && (Tss2_MU_##type##_Unmarshal(b_, n_, &o_, (out)) != TSS2_RC_SUCCESS || \
                                 o_ != n_))                                                      \
                        rc_ = bad((r), "not a " #type);                                          \
                rc_;                                                                             \
        })

/* Which key a line is: its index in keys, or -1 (with a message) for an
 * unknown or repeated one. */
static int key_index(reader *r, const char *const *keys, size_t n, uint32_t *seen, uint32_t repeatable) {
        for (size_t i = 0; i < n; i++) {
                if (strcmp(r->key, keys[i]))
                        continue;
                if ((*seen & (1u << i)) && !(repeatable & (1u << i)))
                        return bad(r, "a key given twice");
                *seen |= 1u << i;
                return (int) i;
        }
        return bad(r, "unknown key");
}

static int open_reader(reader *r, const char *path, const char *magic, cli_file *f) {
        size_t m = strlen(magic);

        if (cli_file_load_max(path, SEAL_MAX_FILE, "a file mshim wrote", f) < 0)
                return -1;
        *r = (reader) { .path = path, .s = (const char *) f->data, .n = f->size };
        if (f->size < m + 1 || memcmp(f->data, magic, m) || f->data[m] != '\n') {
                r->line = 1;
                bad(r, f->size ? "wrong first line" : "empty file");
                cli_file_free(f);
                return -1;
        }
        r->off = m + 1;
        r->line = 1;
        return 0;
}

static int missing(reader *r, uint32_t seen, uint32_t required, const char *const *keys) {
        for (size_t i = 0; i < 32; i++)
                if ((required & (1u << i)) && !(seen & (1u << i))) {
                        cli_error("%s: no '%s' line (truncated or damaged)", r->path, keys[i]);
                        return -1;
                }
        return 0;
}

static int add_state(reader *r, seal_file *f) {
        size_t want = seal_pcr_count(f->pcrs) * SEAL_PCR_VALUE;
        void *ns;

        if (!f->pcrs)
                return bad(r, "'state' before 'pcrs'");
        if (f->n_states == SEAL_MAX_STATES)
                return bad(r, "too many states");
        ns = realloc(f->states, (f->n_states + 1) * sizeof(*f->states));
        if (!ns) {
                cli_error("out of memory");
                return -1;
        }
        f->states = ns;
        return hex(r, f->states[f->n_states++], want, want, NULL);
}

int seal_file_load(const char *path, seal_file *ret) {
        static const char *const keys[] = { "mode", "pin", "pcrs", "srk", "public", "private", "policy-key", "state", "counter" };
        seal_file f = { 0 };
        uint32_t seen = 0;
        reader r;
        cli_file cf;
        int k, e = 0;

        if (open_reader(&r, path, SEALED_MAGIC, &cf) < 0)
                return -1;
        while (e == 0 && (e = next_line(&r)) == 1) {
                k = key_index(&r, keys, MB_ARRAY_SIZE(keys), &seen, 1u << 7);
                switch (k) {
                case 0: e = choice(&r, "signed", "literal", &f.literal); break;
                case 1: e = choice(&r, "no", "yes", &f.pin); break;
                case 2: e = pcrs_value(&r, &f.pcrs); break;
                case 3: e = GET_MU(&r, TPM2B_PUBLIC, &f.srk); break;
                case 4: e = GET_MU(&r, TPM2B_PUBLIC, &f.pub); break;
                case 5: e = GET_MU(&r, TPM2B_PRIVATE, &f.priv); break;
                case 6: e = GET_MU(&r, TPM2B_PUBLIC, &f.policy_key); break;
                case 7: e = add_state(&r, &f); break;
                case 8: e = hex(&r, f.counter, 0, sizeof(f.counter), &f.counter_size); break;
                default: e = -1;
                }
        }
        if (e == 0)
                e = missing(&r, seen, 0x3f, keys);
        /* A literal file has states; a signed one the policy key and the
         * counter. */
        if (e == 0 && (f.literal ? (seen & (3u << 7 | 1u << 6)) != (1u << 7) : (seen & (3u << 7 | 1u << 6)) != (5u << 6))) {
                cli_error("%s: a %s sealed file needs %s", path, f.literal ? "literal" : "signed",
                          f.literal ? "'state' lines and no 'policy-key' or 'counter'"
                                    : "'policy-key' and 'counter' and no 'state' lines");
                e = -1;
        }
        cli_file_free(&cf);
        if (e) {
                seal_file_free(&f);
                return -1;
        }
        *ret = f;
        return 0;
}

void seal_file_free(seal_file *f) {
        free(f->states);
        f->states = NULL;
        f->n_states = 0;
}

int approval_load(const char *path, approval *ret) {
        static const char *const keys[] = { "epoch", "pcrs", "values", "policy", "signature-r", "signature-s", "label",
                                            "entry-id", "created" };
        approval a;
        uint32_t seen = 0;
        reader r;
        cli_file cf;
        int k, e = 0;

        memset(&a, 0, sizeof(a));
        if (open_reader(&r, path, APPROVAL_MAGIC, &cf) < 0)
                return -1;
        while (e == 0 && (e = next_line(&r)) == 1) {
                k = key_index(&r, keys, MB_ARRAY_SIZE(keys), &seen, 0);
                switch (k) {
                case 0: e = u64_value(&r, &a.epoch); break;
                case 1: e = pcrs_value(&r, &a.pcrs); break;
                case 2:
                        e = a.pcrs ? hex(&r, a.values, seal_pcr_count(a.pcrs) * SEAL_PCR_VALUE, 0, NULL)
                                   : bad(&r, "'values' before 'pcrs'");
                        break;
                case 3: e = hex(&r, a.policy.d, MB_POLICY_SIZE, 0, NULL); break;
                case 4: e = hex(&r, a.sig_r, sizeof(a.sig_r), 0, NULL); break;
                case 5: e = hex(&r, a.sig_s, sizeof(a.sig_s), 0, NULL); break;
                case 6: e = text_value(&r, a.label, SEAL_TEXT_MAX); break;
                case 7: e = text_value(&r, a.entry_id, SEAL_TEXT_MAX); break;
                case 8: e = text_value(&r, a.created, sizeof(a.created) - 1); break;
                default: e = -1;
                }
        }
        if (e == 0)
                e = missing(&r, seen, 0x1ff, keys);
        cli_file_free(&cf);
        if (e)
                return -1;
        *ret = a;
        return 0;
}
