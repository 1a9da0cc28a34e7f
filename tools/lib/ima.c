/* SPDX-License-Identifier: BSD-2-Clause */
/* An IMA measurement list judged against PCR 10 and an allowlist:
 * tools/lib/ima.h. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "ima.h"

/* ---- the allowlist --------------------------------------------------------- */

/* FNV-1a: the bucket of a digest or a path. */
static uint64_t fnv(const void *p, size_t n) {
        const uint8_t *b = p;
        uint64_t h = 0xcbf29ce484222325ull;

        for (size_t i = 0; i < n; i++)
                h = (h ^ b[i]) * 0x100000001b3ull;
        return h;
}

/* Hex digits' values, -1 for other bytes: an allowlist has 10^6 lines of
 * 64 digits, so a table rather than comparisons. */
static signed char hexval[256];

__attribute__((constructor)) static void hexval_init(void) {
        memset(hexval, -1, sizeof(hexval));
        for (int i = 0; i < 10; i++)
                hexval['0' + i] = (signed char) i;
        for (int i = 0; i < 6; i++)
                hexval['a' + i] = hexval['A' + i] = (signed char) (10 + i);
}

/* The byte of hex digits h[2i], h[2i+1] (checked at load). */
static inline uint8_t hex_byte(const char *h, size_t i) {
        return (uint8_t) (hexval[(uint8_t) h[2 * i]] << 4 | hexval[(uint8_t) h[2 * i + 1]]);
}

/* A digest is uniformly distributed already: its first eight bytes are its
 * bucket (every digest is at least 20 bytes). */
static uint64_t digest_key(const uint8_t *d) {
        uint64_t h;

        memcpy(&h, d, sizeof(h));
        return h;
}

static uint64_t rule_key(const ima_rule *r) {
        uint8_t d[8];

        if (!r->hex)
                return fnv(r->path, r->path_len);
        for (size_t i = 0; i < sizeof(d); i++)
                d[i] = hex_byte(r->hex, i);
        return digest_key(d);
}

/* A digest word: "ALG:hex" or hex whose length names the algorithm. The
 * digits are checked here and decoded only when compared. */
static int parse_digest(const char *w, size_t len, ima_rule *r) {
        const char *colon = memchr(w, ':', len);
        size_t hex = len, size;
        char name[16];

        if (colon) {
                snprintf(name, sizeof(name), "%.*s", (int) (colon - w), w);
                r->alg = mb_hash_alg_by_name(name);
                hex = len - (size_t) (colon - w) - 1;
                w = colon + 1;
        } else {
                r->alg = hex == 40 ? MB_ALG_SHA1 : hex == 96 ? MB_ALG_SHA384 : hex == 128 ? MB_ALG_SHA512 : MB_ALG_SHA256;
        }
        size = mb_hash_size(r->alg);
        if (!size || r->alg == MB_ALG_SM3_256 || hex != 2 * size)
                return -1;
        for (size_t i = 0; i < hex; i++)
                if (hexval[(uint8_t) w[i]] < 0)
                        return -1;
        r->hex = w;
        return 0;
}

/* One line (len bytes, no newline) into r; -1 when malformed. */
static int parse_rule(const char *line, size_t len, ima_rule *r) {
        const char *sp = memchr(line, ' ', len), *end = line + len;

        *r = (ima_rule) { 0 };
        if (len > UINT32_MAX)
                return -1;
        if (line[0] == '/') {
                r->path = line;
                r->path_len = (uint32_t) len;
                return memchr(line, 0, len) ? -1 : 0;
        }
        if (parse_digest(line, sp ? (size_t) (sp - line) : len, r) < 0)
                return -1;
        if (!sp)
                return 0;
        /* sha256sum writes two spaces (or " *" for binary mode). */
        sp += end - sp >= 2 && (sp[1] == ' ' || sp[1] == '*') ? 2 : 1;
        if (sp == end || *sp != '/' || memchr(sp, 0, (size_t) (end - sp)))
                return -1;
        r->path = sp;
        r->path_len = (uint32_t) (end - sp);
        return 0;
}

/* Each line of the file, where it is mapped: comments and blank lines
 * skipped, a CR before the newline dropped. */
static int parse_rules(const char *path, ima_allow *a) {
        const char *p = (const char *) a->file.data, *end = p + a->file.size, *nl;
        size_t no = 0, len;

        for (; p < end; p = nl + 1) {
                nl = memchr(p, '\n', (size_t) (end - p));
                if (!nl)
                        nl = end;
                len = (size_t) (nl - p);
                no++;
                if (len && p[len - 1] == '\r')
                        len--;
                if (!len || p[0] == '#')
                        continue;
                if (parse_rule(p, len, &a->rules[a->n_rules]) < 0) {
                        cli_error("%s:%zu: not DIGEST, DIGEST PATH or /PATH: '%.*s'", path, no, (int) (len < 80 ? len : 80),
                                  p);
                        return -1;
                }
                a->n_rules++;
        }
        return 0;
}

static size_t count_lines(const uint8_t *p, size_t n) {
        size_t lines = 1;
        const uint8_t *q, *end = p + n;

        while (p < end && (q = memchr(p, '\n', (size_t) (end - p)))) {
                lines++;
                p = q + 1;
        }
        return lines;
}

int ima_allow_load(const char *path, ima_allow *ret) {
        ima_allow a = { 0 };
        size_t lines;

        if (cli_file_load_max(path, (size_t) 256 << 20, "an IMA allowlist", &a.file) < 0)
                return -1;
        a.loaded = true;
        lines = count_lines(a.file.data, a.file.size);
        for (a.n_buckets = 16; a.n_buckets < 2 * lines; a.n_buckets *= 2)
                ;
        a.rules = malloc(lines * sizeof(*a.rules));
        a.buckets = calloc(a.n_buckets, sizeof(*a.buckets));
        if (!a.rules || !a.buckets) {
                cli_error("out of memory");
                ima_allow_free(&a);
                return -1;
        }
        if (parse_rules(path, &a) < 0) {
                ima_allow_free(&a);
                return -1;
        }
        for (size_t i = 0; i < a.n_rules; i++) {
                uint32_t *b = &a.buckets[rule_key(&a.rules[i]) & (a.n_buckets - 1)];
                a.rules[i].next = *b;
                *b = (uint32_t) i + 1;
        }
        *ret = a;
        return 0;
}

void ima_allow_free(ima_allow *a) {
        if (a->loaded)
                cli_file_free(&a->file);
        free(a->rules);
        free(a->buckets);
        *a = (ima_allow) { 0 };
}

static bool path_is(const ima_rule *r, mb_str path) {
        return r->path_len == path.len && memcmp(r->path, path.p, path.len) == 0;
}

static bool digest_is(const ima_rule *r, const uint8_t *d, size_t size) {
        for (size_t i = 0; i < size; i++)
                if (hex_byte(r->hex, i) != d[i])
                        return false;
        return true;
}

static uint16_t entry_alg(const mb_ima_entry *e) {
        char name[16];

        if (mb_str_eq(e->digest_alg, "sha256"))
                return MB_ALG_SHA256;   /* nearly every entry: no name lookup */
        if (e->digest_alg.len >= sizeof(name))
                return 0;
        memcpy(name, e->digest_alg.p, e->digest_alg.len);
        name[e->digest_alg.len] = 0;
        return mb_hash_alg_by_name(name);
}

/* e's file, by its digest (and path) or by its path alone. The list's
 * algorithm name and digest are in the template data, which PCR 10 binds. */
static bool allowed(const ima_allow *a, const mb_ima_entry *e) {
        uint16_t alg = entry_alg(e);
        uint32_t k;

        if (alg && alg != MB_ALG_SM3_256 && mb_hash_size(alg) == e->digest_size) {
                for (k = a->buckets[digest_key(e->digest) & (a->n_buckets - 1)]; k; k = a->rules[k - 1].next) {
                        const ima_rule *r = &a->rules[k - 1];
                        if (r->hex && r->alg == alg && digest_is(r, e->digest, e->digest_size) &&
                            (!r->path || path_is(r, e->path)))
                                return true;
                }
        }
        for (k = a->buckets[fnv(e->path.p, e->path.len) & (a->n_buckets - 1)]; k; k = a->rules[k - 1].next) {
                const ima_rule *r = &a->rules[k - 1];
                if (!r->hex && path_is(r, e->path))
                        return true;
        }
        return false;
}

/* ---- the replay -------------------------------------------------------------- */

static bool all_match(const ima_bank *banks, size_t n) {
        for (size_t b = 0; b < n; b++)
                if (memcmp(banks[b].pcr, banks[b].want, mb_hash_size(banks[b].alg)) != 0)
                        return false;
        return true;
}

/* Why the allowlist refuses e (the first such entry only). */
static void refuse(ima_verdict *v, const mb_ima_entry *e, const char *why) {
        if (v->refused)
                return;
        v->refused = e->number;
        snprintf(v->why, sizeof(v->why), "IMA entry %u (%.*s, %.*s): %s", e->number, (int) e->path.len,
                 e->path.p ? e->path.p : "", (int) e->name.len, e->name.p, why);
}

static void judge_entry(const mb_ima_entry *e, const ima_allow *allow, ima_verdict *v) {
        if (e->pcr != MB_IMA_PCR)
                refuse(v, e, "extends another PCR than 10, which is all mshim verifies");
        else if (e->violation)
                refuse(v, e, "a measurement violation (a file measured while open for writing, or "
                             "written while open for reading): its data is bound by no PCR");
        else if (e->kind == MB_IMA_OTHER)
                refuse(v, e, "a template mshim does not read (ima-ng and ima-sig are)");
        else if (!(e->number == 1 && mb_str_eq(e->path, "boot_aggregate")) && !allowed(allow, e))
                refuse(v, e, "its file is not in the allowlist");
}

static int extend(ima_bank *bank, const mb_ima_entry *e) {
        uint8_t d[MB_HASH_MAX], buf[2 * MB_HASH_MAX];
        size_t size = mb_hash_size(bank->alg);

        if (mb_ima_extend_digest(e, bank->alg, d) != MB_OK)
                return -1;
        memcpy(buf, bank->pcr, size);
        memcpy(buf + size, d, size);
        return mb_hash_buf(bank->alg, buf, 2 * size, bank->pcr) == MB_OK ? 0 : -1;
}

static void keep_aggregate(ima_verdict *v, const mb_ima_entry *e) {
        if (e->digest_alg.len >= sizeof(v->aggregate_alg) || e->digest_size > sizeof(v->aggregate))
                return;
        memcpy(v->aggregate_alg, e->digest_alg.p, e->digest_alg.len);
        v->aggregate_alg[e->digest_alg.len] = 0;
        memcpy(v->aggregate, e->digest, e->digest_size);
        v->aggregate_size = e->digest_size;
        v->has_aggregate = true;
}

int ima_judge(const char *name, const void *list, size_t size, ima_bank *banks, size_t n, const ima_allow *allow,
              ima_verdict *v) {
        mb_ima_log log;
        mb_ima_entry e;
        bool matched = false;
        mb_err r;

        *v = (ima_verdict) { 0 };
        for (size_t b = 0; b < n; b++)
                memset(banks[b].pcr, 0, sizeof(banks[b].pcr));
        matched = all_match(banks, n);
        mb_ima_begin(&log, list, size);
        while ((r = mb_ima_next(&log, &e)) == MB_OK) {
                v->entries++;
                if (e.number == 1 && mb_str_eq(e.path, "boot_aggregate"))
                        keep_aggregate(v, &e);
                for (size_t b = 0; e.pcr == MB_IMA_PCR && b < n; b++)
                        if (extend(&banks[b], &e) < 0) {
                                cli_error("%s: cannot hash IMA entry %u for the bank", name, e.number);
                                return EXIT_BAD_INPUT;
                        }
                if (matched)
                        continue;
                /* Still inside what the quote covers: judge it. */
                v->violations += e.violation;
                if (allow)
                        judge_entry(&e, allow, v);
                if (all_match(banks, n)) {
                        matched = true;
                        v->covered = e.number;
                }
        }
        if (r != MB_END) {
                cli_error("%s: IMA entry %u (at byte %zu): %s", name, log.next_number, log.off,
                          r == MB_ERR_UNSUPPORTED ? "the legacy 'ima' template, which mshim does not read" :
                          mb_strerror(r));
                return EXIT_BAD_INPUT;
        }
        if (!matched)
                v->covered = 0;
        if (v->refused > v->covered)
                v->refused = 0;
        return matched ? 0 : EXIT_CHECK_FAILED;
}

int ima_boot_aggregate(uint16_t alg, const uint8_t *const pcrs[10], uint8_t *ret) {
        size_t size = mb_hash_size(alg);
        mb_hash h;

        if (!size || alg == MB_ALG_SM3_256 || mb_hash_init(&h, alg) != MB_OK)
                return -1;
        for (int i = 0; i < (alg == MB_ALG_SHA1 ? 8 : 10); i++)
                mb_hash_update(&h, pcrs[i], size);
        mb_hash_final(&h, ret);
        return 0;
}
