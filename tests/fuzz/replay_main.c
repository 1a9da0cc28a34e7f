/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Corpus replay without libFuzzer: link a fuzz target with this main() and
 * the sanitized core (gcc, -fsanitize=address,undefined) and it feeds every
 * file named on the command line (directories: every regular file in them)
 * to LLVMFuzzerTestOneInput. Sanitizer findings abort the process, so
 * reaching the end means every input went through; then it prints
 * "PASS: fuzz-replay <target> (N inputs)".
 * Usage: replay-<target> NAME FILE|DIR...
 */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char *name;

static int run_file(const char *path) {
        FILE *f = fopen(path, "rb");
        uint8_t *buf = NULL;
        size_t len = 0, cap = 0, n;

        if (!f) {
                printf("FAIL: fuzz-replay %s: cannot open %s\n", name, path);
                return -1;
        }
        for (;;) {
                if (len == cap) {
                        uint8_t *nb = realloc(buf, cap = cap ? cap * 2 : 65536);
                        if (!nb) {
                                printf("FAIL: fuzz-replay %s: out of memory on %s\n", name, path);
                                free(buf);
                                fclose(f);
                                return -1;
                        }
                        buf = nb;
                }
                n = fread(buf + len, 1, cap - len, f);
                if (n == 0)
                        break;
                len += n;
        }
        if (ferror(f)) {
                printf("FAIL: fuzz-replay %s: read error on %s\n", name, path);
                free(buf);
                fclose(f);
                return -1;
        }
        fclose(f);
        fprintf(stderr, "replay %s\n", path);  /* names the input if a sanitizer aborts */
        LLVMFuzzerTestOneInput(buf, len);
        free(buf);
        return 0;
}

static int cmp(const void *a, const void *b) {
        return strcmp(*(char *const *) a, *(char *const *) b);
}

static int run_path(const char *path, int *count) {
        struct stat st;

        if (stat(path, &st) != 0) {
                printf("FAIL: fuzz-replay %s: no such input %s\n", name, path);
                return -1;
        }
        if (!S_ISDIR(st.st_mode)) {
                ++*count;
                return run_file(path);
        }
        DIR *d = opendir(path);
        struct dirent *de;
        char **names = NULL;
        size_t n = 0;
        int rc = 0;

        if (!d) {
                printf("FAIL: fuzz-replay %s: cannot open directory %s\n", name, path);
                return -1;
        }
        while ((de = readdir(d))) {
                if (de->d_name[0] == '.')
                        continue;
                char **nn = realloc(names, (n + 1) * sizeof(*names));
                if (!nn)
                        abort();
                names = nn;
                size_t l = strlen(path) + strlen(de->d_name) + 2;
                names[n] = malloc(l);
                if (!names[n])
                        abort();
                snprintf(names[n++], l, "%s/%s", path, de->d_name);
        }
        closedir(d);
        qsort(names, n, sizeof(*names), cmp);
        for (size_t i = 0; i < n; i++) {
                struct stat fs;
                if (stat(names[i], &fs) == 0 && S_ISREG(fs.st_mode)) {
                        ++*count;
                        if (run_file(names[i]) != 0)
                                rc = -1;
                }
                free(names[i]);
        }
        free(names);
        return rc;
}

int main(int argc, char **argv) {
        int rc = 0, count = 0;

        if (argc < 3) {
                fprintf(stderr, "usage: %s NAME FILE|DIR...\n", argv[0]);
                return 2;
        }
        name = argv[1];
        for (int i = 2; i < argc; i++)
                if (run_path(argv[i], &count) != 0)
                        rc = 1;
        if (rc == 0 && count == 0) {
                printf("FAIL: fuzz-replay %s: no inputs\n", name);
                return 1;
        }
        if (rc == 0)
                printf("PASS: fuzz-replay %s (%d inputs)\n", name, count);
        return rc;
}
