/* SPDX-License-Identifier: BSD-2-Clause */
/* An IMA measurement list judged against PCR 10 and an allowlist:
 * tools/lib/ima.h. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "cli.h"
#include "ima.h"

/* ---- the allowlist --------------------------------------------------------- */

/* The kinds of rule (tools/lib/ima.h): each is looked up by its own key. */
enum { IMA_RULE_PAIR = 1, IMA_RULE_DIGEST, IMA_RULE_PATH };

#define IMA_HEAD 32

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

/* n bytes from 2n hex digits; -1 at the first byte that is not hex. */
static int unhex(const char *h, size_t n, uint8_t *ret) {
        for (size_t i = 0; i < n; i++) {
                int hi = hexval[(uint8_t) h[2 * i]], lo = hexval[(uint8_t) h[2 * i + 1]];
                if ((hi | lo) < 0)
                        return -1;
                ret[i] = (uint8_t) (hi << 4 | lo);
        }
        return 0;
}

/* murmur3's finaliser: every bit of h reaches the high bits, which pick
 * the slot. */
static uint64_t mix(uint64_t h) {
        h ^= h >> 33;
        h *= 0xff51afd7ed558ccdull;
        h ^= h >> 33;
        h *= 0xc4ceb33fa3b1e5f7ull;
        return h ^ (h >> 33);
}

/* A path's key: eight bytes at a time, then mixed. Not collision-resistant
 * (a path is always compared byte for byte): it only spreads the slots. */
static uint64_t path_key(const char *p, size_t n) {
        uint64_t h = 0x9e3779b97f4a7c15ull ^ n, w;

        for (; n >= 8; p += 8, n -= 8) {
                memcpy(&w, p, 8);
                h = (h ^ w) * 0x100000001b3ull;
                h ^= h >> 29;
        }
        w = 0;
        if (n)
                memcpy(&w, p, n);
        return mix(h ^ w);
}

/* A digest is uniformly distributed already: its first eight bytes. */
static uint64_t digest_key(const uint8_t *d) {
        uint64_t h;

        memcpy(&h, d, sizeof(h));
        return h;
}

static uint64_t rule_key(int kind, const uint8_t *digest, uint64_t pkey) {
        return kind == IMA_RULE_PATH ? pkey : kind == IMA_RULE_DIGEST ? digest_key(digest) : digest_key(digest) ^ pkey;
}

/* The slot a key starts probing at: the key's high bits scaled to n_slots
 * (no power of two needed, so no more than 3/2 slots a rule). */
static size_t slot_of(const ima_allow *a, uint64_t key) {
        return (size_t) (((unsigned __int128) key * a->n_slots) >> 64);
}

/* A rule as parsed, before it has a slot: digest and path still in the
 * file's line. */
typedef struct rule {
        uint64_t key;
        int kind;
        uint16_t alg;
        uint8_t digest[MB_HASH_MAX];
        const char *path;
        size_t path_len;
} rule;

/* A digest word: "ALG:hex" or hex whose length names the algorithm. */
static int parse_digest(const char *w, size_t len, rule *r) {
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
        return unhex(w, size, r->digest);
}

/* One line (len bytes, no newline) into r; -1 when malformed. */
static int parse_rule(const char *line, size_t len, rule *r) {
        const char *sp = memchr(line, ' ', len), *end = line + len;

        *r = (rule) { 0 };
        if (line[0] == '/') {
                *r = (rule) { .kind = IMA_RULE_PATH, .path = line, .path_len = len };
                return memchr(line, 0, len) ? -1 : 0;
        }
        if (parse_digest(line, sp ? (size_t) (sp - line) : len, r) < 0)
                return -1;
        r->kind = IMA_RULE_DIGEST;
        if (!sp)
                return 0;
        /* sha256sum writes two spaces (or " *" for binary mode). */
        sp += end - sp >= 2 && (sp[1] == ' ' || sp[1] == '*') ? 2 : 1;
        if (sp == end || *sp != '/' || memchr(sp, 0, (size_t) (end - sp)))
                return -1;
        r->kind = IMA_RULE_PAIR;
        r->path = sp;
        r->path_len = (size_t) (end - sp);
        return 0;
}

/* The path of a slot: its record in the arena (u32 length, bytes). */
static bool slot_path_is(const ima_allow *a, const ima_slot *s, const char *p, size_t n) {
        uint32_t len;

        memcpy(&len, a->arena + s->path - 1, sizeof(len));
        return len == n && memcmp(a->arena + s->path - 1 + sizeof(len), p, n) == 0;
}

static bool slot_is(const ima_allow *a, const ima_slot *s, int kind, uint32_t check, uint16_t alg,
                    const uint8_t *digest, const char *path, size_t path_len) {
        size_t size = mb_hash_size(alg);

        if (s->kind != kind || s->check != check || s->alg != alg)
                return false;
        if (kind != IMA_RULE_PATH &&
            (memcmp(s->head, digest, size < IMA_HEAD ? size : IMA_HEAD) != 0 ||
             (size > IMA_HEAD && memcmp(a->arena + s->tail, digest + IMA_HEAD, size - IMA_HEAD) != 0)))
                return false;
        return kind == IMA_RULE_DIGEST || slot_path_is(a, s, path, path_len);
}

/* The slot holding that rule, or the empty slot ending its probe. */
static ima_slot *probe(const ima_allow *a, int kind, uint64_t key, uint16_t alg, const uint8_t *digest,
                       const char *path, size_t path_len) {
        size_t i = slot_of(a, key);

        for (;; i = i + 1 == a->n_slots ? 0 : i + 1) {
                ima_slot *s = &a->slots[i];
                if (!s->kind || slot_is(a, s, kind, (uint32_t) key, alg, digest, path, path_len))
                        return s;
        }
}

/* Appends n bytes to the arena (sized at load for every line's). */
static uint32_t arena_put(ima_allow *a, const void *p, size_t n) {
        uint32_t off = (uint32_t) a->arena_used;

        memcpy(a->arena + a->arena_used, p, n);
        a->arena_used += n;
        return off;
}

/* r into its slot; a rule given twice is kept once. */
static void insert(ima_allow *a, const rule *r) {
        ima_slot *s = probe(a, r->kind, r->key, r->alg, r->digest, r->path, r->path_len);
        size_t size = mb_hash_size(r->alg);
        uint32_t len = (uint32_t) r->path_len;

        if (s->kind)
                return;
        *s = (ima_slot) { .kind = (uint8_t) r->kind, .alg = r->alg, .check = (uint32_t) r->key };
        if (r->kind != IMA_RULE_PATH)
                memcpy(s->head, r->digest, size < IMA_HEAD ? size : IMA_HEAD);
        if (size > IMA_HEAD)
                s->tail = arena_put(a, r->digest + IMA_HEAD, size - IMA_HEAD);
        if (r->path) {
                s->path = arena_put(a, &len, sizeof(len)) + 1;
                arena_put(a, r->path, r->path_len);
        }
        a->n_kind[r->kind]++;
}

/* Rules are inserted IMA_BATCH at a time, their first slots fetched
 * together: the table is far larger than the caches, and one miss at a
 * time would cost most of the load. */
#define IMA_BATCH 32

static void insert_batch(ima_allow *a, rule *batch, size_t n) {
        for (size_t i = 0; i < n; i++) {
                rule *r = &batch[i];
                r->key = rule_key(r->kind, r->digest, r->path ? path_key(r->path, r->path_len) : 0);
                __builtin_prefetch(&a->slots[slot_of(a, r->key)], 1);
        }
        for (size_t i = 0; i < n; i++)
                insert(a, &batch[i]);
}

/* Each line of the file: comments and blank lines skipped, a CR before the
 * newline dropped. */
static int parse_rules(const char *path, const char *p, size_t size, ima_allow *a) {
        const char *end = p + size, *nl;
        size_t no = 0, len, n = 0;
        rule batch[IMA_BATCH];

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
                if (parse_rule(p, len, &batch[n]) < 0) {
                        cli_error("%s:%zu: not DIGEST, DIGEST PATH or /PATH: '%.*s'", path, no, (int) (len < 80 ? len : 80),
                                  p);
                        return -1;
                }
                if (++n == IMA_BATCH) {
                        insert_batch(a, batch, n);
                        n = 0;
                }
        }
        insert_batch(a, batch, n);
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

/* The table's bytes, whole huge pages. */
static size_t slots_bytes(size_t n) {
        return (n * sizeof(ima_slot) + (2u << 20) - 1) & ~(size_t) ((2u << 20) - 1);
}

/* n empty slots, in huge pages where the kernel gives them (transparent
 * huge pages, "madvise" mode): probes land anywhere in tens of MiB, and
 * 4 KiB pages would make each a TLB miss, a page walk, and at first a
 * page fault. */
static ima_slot *slots_alloc(size_t n) {
        size_t size = slots_bytes(n);
        void *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

        if (p == MAP_FAILED)
                return NULL;
        (void) madvise(p, size, MADV_HUGEPAGE);  /* a hint: without it, only slower */
        return p;
}

/* The file's size is bounded (256 MiB), so are the sums below: a line of
 * n bytes puts at most n + 4 bytes in the arena (a path and its length;
 * a digest's tail is shorter than its hex), and takes at most 3/2 slots. */
int ima_allow_load(const char *path, ima_allow *ret) {
        ima_allow a = { 0 };
        cli_file f;
        size_t lines;
        int r = -1;

        if (cli_file_load_max(path, (size_t) 256 << 20, "an IMA allowlist", &f) < 0)
                return -1;
        lines = count_lines(f.data, f.size);
        a.n_slots = lines + lines / 2 + 16;
        a.slots = slots_alloc(a.n_slots);
        a.arena = malloc(f.size + 4 * lines);
        if (!a.slots || !a.arena)
                cli_error("out of memory");
        else
                r = parse_rules(path, (const char *) f.data, f.size, &a);
        cli_file_free(&f);
        if (r < 0) {
                ima_allow_free(&a);
                return -1;
        }
        *ret = a;
        return 0;
}

void ima_allow_free(ima_allow *a) {
        if (a->slots)
                munmap(a->slots, slots_bytes(a->n_slots));
        free(a->arena);
        *a = (ima_allow) { 0 };
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

/* What an entry is looked up by: computed, and its first slot fetched,
 * before the entry is hashed into the banks, so that memory latency and
 * the hashing overlap. */
typedef struct lookup {
        uint16_t alg;           /* 0: a digest mshim cannot look up (by path only) */
        uint64_t pkey;
} lookup;

static void lookup_begin(const ima_allow *a, const mb_ima_entry *e, lookup *l) {
        uint16_t alg = entry_alg(e);

        l->alg = alg && alg != MB_ALG_SM3_256 && mb_hash_size(alg) == e->digest_size ? alg : 0;
        l->pkey = path_key(e->path.p, e->path.len);
        if (l->alg && a->n_kind[IMA_RULE_PAIR])
                __builtin_prefetch(&a->slots[slot_of(a, rule_key(IMA_RULE_PAIR, e->digest, l->pkey))]);
}

static bool has(const ima_allow *a, int kind, const lookup *l, const mb_ima_entry *e) {
        uint64_t key = rule_key(kind, e->digest, l->pkey);

        if (!a->n_kind[kind] || (kind != IMA_RULE_PATH && !l->alg))
                return false;
        return probe(a, kind, key, kind == IMA_RULE_PATH ? 0 : l->alg, e->digest, e->path.p, e->path.len)->kind != 0;
}

/* e's file, by its digest and path, its digest alone or its path alone.
 * The list's algorithm name and digest are in the template data, which
 * PCR 10 binds. */
static bool allowed(const ima_allow *a, const lookup *l, const mb_ima_entry *e) {
        return has(a, IMA_RULE_PAIR, l, e) || has(a, IMA_RULE_DIGEST, l, e) || has(a, IMA_RULE_PATH, l, e);
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

static void judge_entry(const mb_ima_entry *e, const ima_allow *allow, const lookup *l, ima_verdict *v) {
        if (e->pcr != MB_IMA_PCR)
                refuse(v, e, "extends another PCR than 10, which is all mshim verifies");
        else if (e->violation)
                refuse(v, e, "a measurement violation (a file measured while open for writing, or "
                             "written while open for reading): its data is bound by no PCR");
        else if (e->kind == MB_IMA_OTHER)
                refuse(v, e, "a template mshim does not read (ima-ng and ima-sig are)");
        else if (!(e->number == 1 && mb_str_eq(e->path, "boot_aggregate")) && !allowed(allow, l, e))
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

/* The next entry of the list and, when it will be judged, its lookup
 * begun. */
static mb_err ahead(mb_ima_log *log, const ima_allow *allow, bool judged, mb_ima_entry *e, lookup *l) {
        mb_err r = mb_ima_next(log, e);

        if (r == MB_OK && judged)
                lookup_begin(allow, e, l);
        return r;
}

int ima_judge(const char *name, const void *list, size_t size, ima_bank *banks, size_t n, const ima_allow *allow,
              ima_verdict *v) {
        mb_ima_log log;
        mb_ima_entry ents[2], *e, *next = &ents[0];
        lookup looks[2], *l, *next_l = &looks[0];
        bool matched = false;
        mb_err r;

        *v = (ima_verdict) { 0 };
        for (size_t b = 0; b < n; b++)
                memset(banks[b].pcr, 0, sizeof(banks[b].pcr));
        matched = all_match(banks, n);
        mb_ima_begin(&log, list, size);
        r = ahead(&log, allow, allow && !matched, next, next_l);
        while (r == MB_OK) {
                e = next;
                l = next_l;
                next = e == &ents[0] ? &ents[1] : &ents[0];
                next_l = l == &looks[0] ? &looks[1] : &looks[0];
                /* The next entry parsed, its slot on its way, while this
                 * one is hashed. */
                r = ahead(&log, allow, allow && !matched && !v->refused, next, next_l);
                v->entries++;
                if (e->number == 1 && mb_str_eq(e->path, "boot_aggregate"))
                        keep_aggregate(v, e);
                for (size_t b = 0; e->pcr == MB_IMA_PCR && b < n; b++)
                        if (extend(&banks[b], e) < 0) {
                                cli_error("%s: cannot hash IMA entry %u for the bank", name, e->number);
                                return EXIT_BAD_INPUT;
                        }
                if (matched)
                        continue;
                /* Still inside what the quote covers: judge it. */
                v->violations += e->violation;
                if (allow && !v->refused)
                        judge_entry(e, allow, l, v);
                if (all_match(banks, n)) {
                        matched = true;
                        v->covered = e->number;
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
