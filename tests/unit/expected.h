/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * EXPECTED.json of the event-log corpus (tests/data/eventlogs/README.md),
 * read by the unit tests that check replays against it: the codec's
 * (test_tcglog.c) and the predictor's (test_predict.c).
 */
#ifndef MB_TEST_EXPECTED_H
#define MB_TEST_EXPECTED_H
#include <stdbool.h>
#include "testlib.h"

/* ---- a small reader for EXPECTED.json (test-only) ------------------------ */

typedef struct expect {
        char file[128];
        bool error;
        char format[32];
        long events;
        int n;                       /* number of (bank, pcr, hex) triples */
        struct { char bank[16]; int pcr; char hex[129]; } v[256];
} expect;

static const char *js_ws(const char *p) {
        while (*p == ' ' || *p == '\n' || *p == '\r' || *p == '\t')
                p++;
        return p;
}

/* A JSON string without escapes (EXPECTED.json has none) into out. */
static const char *js_str(const char *p, char *out, size_t cap) {
        size_t n = 0;
        p = js_ws(p);
        if (*p++ != '"')
                return NULL;
        while (*p && *p != '"') {
                if (n + 1 < cap)
                        out[n++] = *p;
                p++;
        }
        out[n] = 0;
        return *p == '"' ? p + 1 : NULL;
}

static const char *js_skip_value(const char *p) {
        char tmp[512];
        int depth = 0;
        p = js_ws(p);
        if (*p == '"')
                return js_str(p, tmp, sizeof(tmp));
        do {
                if (*p == '{' || *p == '[')
                        depth++;
                else if (*p == '}' || *p == ']')
                        depth--;
                else if (*p == '"') {
                        p = js_str(p, tmp, sizeof(tmp)) - 1;
                }
                p++;
        } while (*p && (depth > 0 || (*p != ',' && *p != '}' && *p != ']')));
        return p;
}

static const char *parse_pcrs(const char *p, expect *e) {
        char bank[16], idx[8];
        p = js_ws(p);
        if (*p++ != '{')
                return NULL;
        while ((p = js_ws(p)) && *p == '"') {
                p = js_str(p, bank, sizeof(bank));
                p = js_ws(p) + 1; /* ':' */
                p = js_ws(p) + 1; /* '{' */
                while ((p = js_ws(p)) && *p == '"') {
                        p = js_str(p, idx, sizeof(idx));
                        p = js_ws(p) + 1;
                        strcpy(e->v[e->n].bank, bank);
                        e->v[e->n].pcr = atoi(idx);
                        p = js_str(p, e->v[e->n].hex, sizeof(e->v[e->n].hex));
                        e->n++;
                        p = js_ws(p);
                        if (*p == ',')
                                p++;
                }
                p = js_ws(p) + 1; /* '}' */
                p = js_ws(p);
                if (*p == ',')
                        p++;
        }
        return js_ws(p) + 1;
}

static const char *parse_entry(const char *p, expect *e) {
        char key[32];
        p = js_ws(p);
        if (*p++ != '{')
                return NULL;
        while ((p = js_ws(p)) && *p == '"') {
                p = js_str(p, key, sizeof(key));
                p = js_ws(p) + 1;
                if (!strcmp(key, "error")) {
                        e->error = true;
                        p = js_skip_value(p);
                } else if (!strcmp(key, "format"))
                        p = js_str(p, e->format, sizeof(e->format));
                else if (!strcmp(key, "events"))
                        e->events = strtol(js_ws(p), (char **) &p, 10);
                else if (!strcmp(key, "pcrs"))
                        p = parse_pcrs(p, e);
                else
                        p = js_skip_value(p);
                p = js_ws(p);
                if (*p == ',')
                        p++;
        }
        return js_ws(p) + 1;
}


static expect expects[64];
static int n_expects;

static void load_expected(void) {
        char path[512];
        size_t size;
        char *json, *p;

        snprintf(path, sizeof(path), "%s/eventlogs/EXPECTED.json", tl_corpus_dir());
        json = tl_read_file(path, &size);
        if (!json) {
                fprintf(stderr, "cannot read %s\n", path);
                exit(1);
        }
        p = (char *) js_ws(json) + 1;
        while ((p = (char *) js_ws(p)) && *p == '"' && n_expects < 64) {
                expect *e = &expects[n_expects++];
                p = (char *) js_str(p, e->file, sizeof(e->file));
                p = (char *) js_ws(p) + 1;
                p = (char *) parse_entry(p, e);
                p = (char *) js_ws(p);
                if (*p == ',')
                        p++;
        }
        free(json);
}

#endif
