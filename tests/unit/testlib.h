/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Minimal test harness: each test program prints "PASS: name" or
 * "FAIL: name" per case; tests/run-all.sh counts those lines.
 */
#ifndef MB_TESTLIB_H
#define MB_TESTLIB_H
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int tl_failed_cases, tl_case_failed;
static const char *tl_case;

#define CHECK(cond) do { if (!(cond)) { \
        fprintf(stderr, "  %s:%d: check failed: %s\n", __FILE__, __LINE__, #cond); \
        tl_case_failed = 1; } } while (0)
#define CHECK_EQ_INT(a, b) do { long long _a = (long long) (a), _b = (long long) (b); if (_a != _b) { \
        fprintf(stderr, "  %s:%d: %s == %lld, expected %lld\n", __FILE__, __LINE__, #a, _a, _b); \
        tl_case_failed = 1; } } while (0)

static inline void tl_begin(const char *name) { tl_case = name; tl_case_failed = 0; }
static inline void tl_end(void) {
        printf("%s: %s\n", tl_case_failed ? "FAIL" : "PASS", tl_case);
        if (tl_case_failed) tl_failed_cases++;
}
#define TEST(name) static void name(void)
#define RUN(name) do { tl_begin(#name); name(); tl_end(); } while (0)
#define TL_EXIT() return tl_failed_cases ? 1 : 0

/* Directory holding eventlogs/: $MB_CORPUS, else the copy in tests/data. */
static inline const char *tl_corpus_dir(void) {
        const char *d = getenv("MB_CORPUS");
        return d ? d : "tests/data";
}
/* Debian's signed EFI images are unpacked under $MB_EFIROOT (default
 * build/debian-efi) by scripts/fetch-efi.sh, never installed: tests name
 * them "efi:usr/lib/...", and every file access goes through tl_path(). */
static inline const char *tl_path(const char *p) {
        static char buf[4][4096];
        static int k;
        const char *root = getenv("MB_EFIROOT");
        char *b;

        if (strncmp(p, "efi:", 4) != 0)
                return p;
        b = buf[k++ % 4];
        snprintf(b, sizeof(buf[0]), "%s/%s", root ? root : "build/debian-efi", p + 4);
        return b;
}

/* A whole file on the heap, NUL-terminated one byte past *ret_size (so text
 * files can be used as C strings); NULL when it cannot be read. The path
 * goes through tl_path(). */
static inline void *tl_read_file(const char *path, size_t *ret_size) {
        FILE *f = fopen(tl_path(path), "rb");
        uint8_t *buf = NULL;
        long n;

        if (!f)
                return NULL;
        if (fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) >= 0 && fseek(f, 0, SEEK_SET) == 0 &&
            (buf = malloc((size_t) n + 1)) != NULL) {
                if (fread(buf, 1, (size_t) n, f) == (size_t) n) {
                        buf[n] = 0;
                        *ret_size = (size_t) n;
                } else {
                        free(buf);
                        buf = NULL;
                }
        }
        fclose(f);
        return buf;
}
#endif
