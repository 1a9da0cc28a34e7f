/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * mshim log diff A B: event-level differences between two boots' logs, per
 * PCR. Events are aligned with a longest-common-subsequence over (type,
 * data, and the digests of the banks both logs declare); a removal and an
 * addition of the same event type at the same place are reported as one
 * change. Every event shown is checked against its own data (tools/cmd/log.c's
 * rules, src/evdata.c), so a payload edited without its digest stands out.
 */
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include "cli.h"
#include "mb/evdata.h"

/* LCS needs n*m cells; past this, events are paired by position instead. */
#define LCS_MAX_CELLS (16u << 20)

typedef struct side {
        const char *path;
        cli_file file;
        mb_tcglog_event *ev;
        size_t n;
        uint16_t algs[MB_TCGLOG_MAX_ALGS];      /* the banks its header declares */
        uint32_t n_algs;
} side;

/* The banks both logs declare: only their digests are compared, so logs
 * of platforms with different bank sets can be diffed. */
typedef struct bankset {
        uint16_t alg[MB_TCGLOG_MAX_ALGS];
        uint32_t n;
} bankset;

typedef enum change { SAME, REMOVED, ADDED, CHANGED } change;

static bool same_event(const bankset *k, const mb_tcglog_event *a, const mb_tcglog_event *b) {
        if (a->type != b->type || a->data_size != b->data_size)
                return false;
        for (uint32_t i = 0; i < k->n; i++) {
                const mb_tcglog_digest *da = mb_tcglog_event_digest(a, k->alg[i]);
                const mb_tcglog_digest *db = mb_tcglog_event_digest(b, k->alg[i]);
                /* A record missing a shared bank's digest matches only
                 * another that misses it too. */
                if (!da || !db) {
                        if (da || db)
                                return false;
                        continue;
                }
                if (da->size != db->size || memcmp(da->bytes, db->bytes, da->size))
                        return false;
        }
        return memcmp(a->data, b->data, a->data_size) == 0;
}

/* A header lists each bank once (src/tcglog.c refuses repeats), so the
 * intersection fits in MB_TCGLOG_MAX_ALGS. */
static void shared_banks(const side *A, const side *B, bankset *ret) {
        ret->n = 0;
        for (uint32_t i = 0; i < A->n_algs; i++)
                for (uint32_t j = 0; j < B->n_algs; j++)
                        if (A->algs[i] == B->algs[j])
                                ret->alg[ret->n++] = A->algs[i];
}

static int load_side(side *s) {
        mb_tcglog log;
        mb_tcglog_event ev;
        size_t cap = 0;
        mb_err err;

        if (cli_input_load(s->path, &s->file) < 0)
                return -1;
        err = mb_tcglog_open(&log, s->file.data, s->file.size);
        if (err == MB_OK) {
                s->n_algs = log.n_algs;
                for (uint32_t i = 0; i < log.n_algs; i++)
                        s->algs[i] = log.algs[i].alg;
        }
        while (err == MB_OK && (err = mb_tcglog_next(&log, &ev)) == MB_OK) {
                if (ev.type == MB_EV_NO_ACTION)
                        continue;       /* never extended: not a difference in any PCR */
                if (s->n == cap) {
                        mb_tcglog_event *nv = realloc(s->ev, (cap = cap ? cap * 2 : 256) * sizeof(*nv));
                        if (!nv) {
                                cli_error("out of memory");
                                return -1;
                        }
                        s->ev = nv;
                }
                s->ev[s->n++] = ev;
        }
        if (err != MB_END) {
                cli_error("%s: malformed event log at byte offset %zu (record %u): %s", cli_input_name(s->path),
                          log.err_offset, log.err_number, log.err_reason ? log.err_reason : mb_strerror(err));
                return -1;
        }
        return 0;
}

/* Indices of the events of one PCR. */
static size_t pick(const side *s, uint32_t pcr, size_t *out) {
        size_t k = 0;
        for (size_t i = 0; i < s->n; i++)
                if (s->ev[i].pcr == pcr)
                        out[k++] = i;
        return k;
}

typedef struct diff_out {
        bool json;
        bankset banks;
        json_sink js;
        bool any;
        bool pcr_open;
        uint32_t pcr;
} diff_out;

static void print_event(diff_out *d, const char *key, const mb_tcglog_event *ev) {
        const char *name = mb_tcglog_type_name(ev->type), *conv = NULL;
        mb_integrity integ = mb_evdata_check(ev, &conv);
        mb_emit *e = &d->js.emit;

        if (d->json) {
                mb_emit_begin_obj(e, key);
                mb_emit_u64(e, "number", ev->number);
                if (name)
                        mb_emit_cstr(e, "type", name);
                mb_emit_u64(e, "type_id", ev->type);
                mb_emit_begin_obj(e, "digests");
                for (uint32_t i = 0; i < ev->n_digests; i++) {
                        char lb[16];
                        mb_emit_hex(e, cli_alg_label(ev->digests[i].alg, lb), ev->digests[i].bytes, ev->digests[i].size);
                }
                mb_emit_end_obj(e);
                /* As in mshim-log/1: absent when the digest covers bytes
                 * that are not in the log. */
                if (integ != MB_INTEGRITY_NOT_APPLICABLE) {
                        mb_emit_cstr(e, "integrity", integ == MB_INTEGRITY_OK ? "ok" : "mismatch");
                        if (conv)
                                mb_emit_cstr(e, "convention", conv);
                }
                mb_evdata_decode(ev, e);
                mb_emit_end_obj(e);
                return;
        }
        {
                char line[96];
                text_sink ts;
                snprintf(line, sizeof(line), "#%u %s ", ev->number, name ? name : "unknown-type");
                out_puts(line);
                if (ev->n_digests) {
                        out_hex(ev->digests[0].bytes, ev->digests[0].size < 8 ? ev->digests[0].size : 8);
                        out_puts(".. ");
                }
                if (integ == MB_INTEGRITY_MISMATCH)
                        out_puts("[DIGEST MISMATCH] ");
                text_sink_init(&ts);
                mb_evdata_decode(ev, &ts.emit);
                out_putc('\n');
        }
}

static void report(diff_out *d, uint32_t pcr, change c, const mb_tcglog_event *a, const mb_tcglog_event *b) {
        static const char *names[] = { "same", "removed", "added", "changed" };
        mb_emit *e = &d->js.emit;
        char line[32];

        d->any = true;
        if (!d->pcr_open || d->pcr != pcr) {
                if (d->json) {
                        if (d->pcr_open)
                                mb_emit_end_arr(e);
                        snprintf(line, sizeof(line), "%u", pcr);
                        mb_emit_begin_arr(e, line);
                } else {
                        snprintf(line, sizeof(line), "PCR %u:\n", pcr);
                        out_puts(line);
                }
                d->pcr_open = true;
                d->pcr = pcr;
        }
        if (d->json) {
                mb_emit_begin_obj(e, NULL);
                mb_emit_cstr(e, "change", names[c]);
                if (a)
                        print_event(d, "a", a);
                if (b)
                        print_event(d, "b", b);
                mb_emit_end_obj(e);
                return;
        }
        if (a) {
                out_puts(c == CHANGED ? "  ~ A " : "  - A ");
                print_event(d, NULL, a);
        }
        if (b) {
                out_puts(c == CHANGED ? "  ~ B " : "  + B ");
                print_event(d, NULL, b);
        }
}

/* Fill the LCS length table over the suffixes of ia[] and ib[]. */
static void lcs_table(const bankset *k, const side *A, const size_t *ia, size_t n, const side *B, const size_t *ib,
                      size_t m, uint32_t *t) {
        for (size_t i = n + 1; i-- > 0;)
                for (size_t j = m + 1; j-- > 0;) {
                        uint32_t *c = &t[i * (m + 1) + j];
                        if (i == n || j == m)
                                *c = 0;
                        else if (same_event(k, &A->ev[ia[i]], &B->ev[ib[j]]))
                                *c = t[(i + 1) * (m + 1) + j + 1] + 1;
                        else {
                                uint32_t down = t[(i + 1) * (m + 1) + j], right = t[i * (m + 1) + j + 1];
                                *c = down > right ? down : right;
                        }
                }
}

/* One step of the walk; a removal is held back so that an addition of the
 * same type right after it can be reported as a change instead. */
static void emit_step(diff_out *d, uint32_t pcr, const mb_tcglog_event **pending, change c,
                      const mb_tcglog_event *a, const mb_tcglog_event *b) {
        if (c == ADDED && *pending && (*pending)->type == b->type) {
                report(d, pcr, CHANGED, *pending, b);
                *pending = NULL;
                return;
        }
        if (*pending)
                report(d, pcr, REMOVED, *pending, NULL);
        *pending = c == REMOVED ? a : NULL;
        if (c == ADDED)
                report(d, pcr, ADDED, NULL, b);
}

/* Walk the alignment given by the LCS table t, or pair events by position
 * when the table would have been too large (t == NULL). */
static void diff_pcr(diff_out *d, uint32_t pcr, const side *A, const size_t *ia, size_t n,
                     const side *B, const size_t *ib, size_t m, const uint32_t *t) {
        const mb_tcglog_event *pending = NULL;
        size_t i = 0, j = 0;

        while (i < n || j < m) {
                const mb_tcglog_event *a = i < n ? &A->ev[ia[i]] : NULL, *b = j < m ? &B->ev[ib[j]] : NULL;

                if (a && b && same_event(&d->banks, a, b)) {
                        emit_step(d, pcr, &pending, SAME, NULL, NULL);
                        i++, j++;
                } else if (a && b && !t) {
                        /* No table: pair by position (a change if the types agree). */
                        emit_step(d, pcr, &pending, REMOVED, a, NULL);
                        emit_step(d, pcr, &pending, ADDED, NULL, b);
                        i++, j++;
                } else if (a && (!b || t[(i + 1) * (m + 1) + j] >= t[i * (m + 1) + j + 1])) {
                        emit_step(d, pcr, &pending, REMOVED, a, NULL);
                        i++;
                } else {
                        emit_step(d, pcr, &pending, ADDED, NULL, b);
                        j++;
                }
        }
        emit_step(d, pcr, &pending, SAME, NULL, NULL);
}

static int cmp_u32(const void *x, const void *y) {
        uint32_t a = *(const uint32_t *) x, b = *(const uint32_t *) y;
        return a < b ? -1 : a > b;
}

/* The distinct PCR indices either log uses, sorted. */
static size_t pcr_set(const side *A, const side *B, uint32_t *out) {
        size_t k = 0, u = 0;

        for (size_t i = 0; i < A->n; i++)
                out[k++] = A->ev[i].pcr;
        for (size_t i = 0; i < B->n; i++)
                out[k++] = B->ev[i].pcr;
        qsort(out, k, sizeof(*out), cmp_u32);
        for (size_t i = 0; i < k; i++)
                if (u == 0 || out[u - 1] != out[i])
                        out[u++] = out[i];
        return u;
}

static int diff_all(diff_out *d, const side *A, const side *B) {
        size_t *ia = malloc((A->n + 1) * sizeof(size_t)), *ib = malloc((B->n + 1) * sizeof(size_t));
        uint32_t *pcrs = malloc((A->n + B->n + 1) * sizeof(uint32_t));
        size_t np;
        int r = -1;

        if (!ia || !ib || !pcrs)
                goto out;
        np = pcr_set(A, B, pcrs);
        for (size_t p = 0; p < np; p++) {
                size_t n = pick(A, pcrs[p], ia), m = pick(B, pcrs[p], ib), k = 0, s = 0;
                uint32_t *t = NULL;

                /* Events the two share at the start and the end need no
                 * table: the LCS is only over what lies between. */
                while (k < n && k < m && same_event(&d->banks, &A->ev[ia[k]], &B->ev[ib[k]]))
                        k++;
                while (s < n - k && s < m - k && same_event(&d->banks, &A->ev[ia[n - 1 - s]], &B->ev[ib[m - 1 - s]]))
                        s++;
                n -= k + s;
                m -= k + s;
                /* Both factors are bounded by the event counts, so the
                 * product only overflows for logs far past LCS_MAX_CELLS. */
                if (n < LCS_MAX_CELLS && m < LCS_MAX_CELLS && (n + 1) * (m + 1) <= LCS_MAX_CELLS &&
                    (t = malloc((n + 1) * (m + 1) * sizeof(*t))))
                        lcs_table(&d->banks, A, ia + k, n, B, ib + k, m, t);
                diff_pcr(d, pcrs[p], A, ia + k, n, B, ib + k, m, t);
                free(t);
        }
        r = 0;
out:
        if (r < 0)
                cli_error("out of memory");
        free(ia);
        free(ib);
        free(pcrs);
        return r;
}

/* Say which of a log's banks the diff leaves out. */
static void note_unshared(const side *s, const bankset *k) {
        char lb[16];

        for (uint32_t i = 0; i < s->n_algs; i++) {
                bool shared = false;

                for (uint32_t j = 0; j < k->n; j++)
                        shared |= k->alg[j] == s->algs[i];
                if (!shared)
                        cli_error("note: the %s bank is only in %s; it is not compared", cli_alg_label(s->algs[i], lb),
                                  cli_input_name(s->path));
        }
}

/* The shared banks, or an error when there are none: without a common
 * digest, events that measure something outside the log (images) could not
 * be told apart. */
static int check_banks(const side *A, const side *B, bankset *ret) {
        bankset k;

        shared_banks(A, B, &k);
        if (k.n == 0) {
                cli_error("log diff: %s and %s share no PCR bank; nothing to compare", cli_input_name(A->path),
                          cli_input_name(B->path));
                return -1;
        }
        note_unshared(A, &k);
        note_unshared(B, &k);
        *ret = k;
        return 0;
}

static void json_head(diff_out *d, const side *A, const side *B) {
        mb_emit *e = &d->js.emit;
        char lb[16];

        mb_emit_begin_obj(e, NULL);
        mb_emit_cstr(e, "schema", "mshim-log-diff/1");
        mb_emit_cstr(e, "mshim_version", MB_VERSION);
        mb_emit_cstr(e, "file_a", A->path);
        mb_emit_cstr(e, "file_b", B->path);
        mb_emit_begin_arr(e, "banks");
        for (uint32_t i = 0; i < d->banks.n; i++)
                mb_emit_cstr(e, NULL, cli_alg_label(d->banks.alg[i], lb));
        mb_emit_end_arr(e);
        mb_emit_begin_obj(e, "pcrs");
}

int cmd_log_diff(int argc, char **argv) {
        static const struct option longopts[] = {
                { "json", no_argument, NULL, 'j' }, { "help", no_argument, NULL, 'h' }, { 0 },
        };
        side A = { 0 }, B = { 0 };
        diff_out d = { 0 };
        int c, ret = EXIT_BAD_INPUT;

        optind = 1;
        while ((c = cli_getopt(argc, argv, "h", longopts, "log diff")) != -1) {
                if (c == 'j')
                        d.json = true;
                else if (c == 'h') {
                        cli_help(stdout, "log diff");
                        return 0;
                } else
                        return EXIT_BAD_INPUT;
        }
        if (argc - optind != 2)
                return cli_usage_error("log diff", "log diff takes two files");
        A.path = argv[optind];
        B.path = argv[optind + 1];
        if (strcmp(A.path, "-") == 0 && strcmp(B.path, "-") == 0)
                return cli_usage_error("log diff", "only one of A and B can be standard input");
        if (load_side(&A) < 0 || load_side(&B) < 0 || check_banks(&A, &B, &d.banks) < 0)
                goto out;
        json_sink_init(&d.js);
        if (d.json)
                json_head(&d, &A, &B);
        if (diff_all(&d, &A, &B) < 0)
                goto out;
        if (d.json) {
                if (d.pcr_open)
                        mb_emit_end_arr(&d.js.emit);
                mb_emit_end_obj(&d.js.emit);
                mb_emit_bool(&d.js.emit, "identical", !d.any);
                mb_emit_end_obj(&d.js.emit);
                out_putc('\n');
        } else if (!d.any)
                out_puts("The logs extend the same events into every PCR.\n");
        ret = d.any ? EXIT_CHECK_FAILED : 0;
out:
        if (out_finish() < 0)
                ret = EXIT_BAD_INPUT;
        cli_file_free(&A.file);
        cli_file_free(&B.file);
        free(A.ev);
        free(B.ev);
        return ret;
}
