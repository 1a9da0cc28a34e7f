/* SPDX-License-Identifier: BSD-2-Clause */
/* The install record (instrec.h). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "cli.h"
#include "instrec.h"
#include "safeio.h"
#include "mb/plan.h"
#include "mb/sha.h"

/* The record is small: a few dozen lines. */
#define INSTREC_MAX ((size_t) 1 << 20)

int instrec_set(char **slot, const char *value) {
        char *v = NULL;

        if (value && (strchr(value, '\n') || !(v = strdup(value)))) {
                cli_error("%s", strchr(value, '\n') ? "a path with a newline cannot be recorded" : "out of memory");
                return -1;
        }
        free(*slot);
        *slot = v;
        return 0;
}

int instrec_add(instrec *r, instrec_kind kind, const char *path, const uint8_t sha256[32]) {
        instrec_item *n;

        if (strchr(path, '\n')) {
                cli_error("%s: a path with a newline cannot be recorded", path);
                return -1;
        }
        n = realloc(r->items, (r->n_items + 1) * sizeof(*n));
        if (!n) {
                cli_error("out of memory");
                return -1;
        }
        r->items = n;
        n = &r->items[r->n_items];
        memset(n, 0, sizeof(*n));
        n->kind = kind;
        if (sha256)
                memcpy(n->sha256, sha256, 32);
        if (!(n->path = strdup(path))) {
                cli_error("out of memory");
                return -1;
        }
        r->n_items++;
        return 0;
}

void instrec_free(instrec *r) {
        free(r->esp);
        free(r->layout);
        free(r->loader);
        free(r->key);
        free(r->cert);
        free(r->mshim);
        free(r->boot_entry);
        free(r->boot_order);
        for (size_t i = 0; i < r->n_items; i++)
                free(r->items[i].path);
        free(r->items);
        memset(r, 0, sizeof(*r));
}

void instrec_hex(const uint8_t d[32], char out[65]) {
        for (int i = 0; i < 32; i++)
                snprintf(out + 2 * i, 3, "%02x", d[i]);
}

static int unhex(const char *s, uint8_t out[32]) {
        for (int i = 0; i < 32; i++) {
                unsigned v;
                if (sscanf(s + 2 * i, "%2x", &v) != 1 || !strchr("0123456789abcdef", s[2 * i]) ||
                    !strchr("0123456789abcdef", s[2 * i + 1]))
                        return -1;
                out[i] = (uint8_t) v;
        }
        return s[64] == ' ' ? 0 : -1;
}

int instrec_sha256_file(const char *path, uint8_t ret[32]) {
        uint8_t buf[64 << 10];
        mb_hash h;
        ssize_t n;
        int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);

        if (fd < 0)
                return -1;
        mb_hash_init(&h, MB_ALG_SHA256);
        while ((n = read(fd, buf, sizeof(buf))) > 0 || (n < 0 && errno == EINTR))
                if (n > 0)
                        mb_hash_update(&h, buf, (size_t) n);
        close(fd);
        if (n < 0)
                return -1;
        mb_hash_final(&h, ret);
        return 0;
}

int instrec_renamed_entry(const char *path, const uint8_t sha[32], char *ret_path, size_t size) {
        const char *slash = strrchr(path, '/');
        char want[MB_PLAN_NAME_MAX + 1], have[MB_PLAN_NAME_MAX + 1], dir[4096], p[4096];
        mb_str want_id, have_id;
        int found = -1;
        DIR *d;

        if (!slash || !strstr(path, "/loader/entries/") || (size_t) (slash - path) >= sizeof(dir) ||
            mb_plan_entry_id((mb_str) { slash + 1, strlen(slash + 1) }, want, sizeof(want), &want_id) != MB_OK)
                return -1;
        snprintf(dir, sizeof(dir), "%.*s", (int) (slash - path), path);
        if (!(d = opendir(dir)))
                return -1;
        for (struct dirent *de; found < 0 && (de = readdir(d));) {
                uint8_t got[32];
                if (mb_plan_entry_id((mb_str) { de->d_name, strlen(de->d_name) }, have, sizeof(have), &have_id) !=
                            MB_OK ||
                    have_id.len != want_id.len || memcmp(have_id.p, want_id.p, want_id.len) != 0 ||
                    snprintf(p, sizeof(p), "%s/%s", dir, de->d_name) >= (int) sizeof(p) ||
                    instrec_sha256_file(p, got) < 0 || memcmp(got, sha, 32) != 0 ||
                    snprintf(ret_path, size, "%s", p) >= (int) size)
                        continue;
                found = 0;
        }
        closedir(d);
        return found;
}

/* One line KEY VALUE into r: 0, or -1 (malformed). */
static int parse_line(instrec *r, char *line) {
        static const struct { const char *key; size_t off; } strs[] = {
                { "esp", offsetof(instrec, esp) },       { "layout", offsetof(instrec, layout) },
                { "loader", offsetof(instrec, loader) }, { "key", offsetof(instrec, key) },
                { "cert", offsetof(instrec, cert) },     { "mshim", offsetof(instrec, mshim) },
                { "boot-entry", offsetof(instrec, boot_entry) },
                { "boot-order", offsetof(instrec, boot_order) },
        };
        char *val = strchr(line, ' ');
        uint8_t d[32];

        if (!val || !val[1])
                return -1;
        *val++ = '\0';
        for (size_t i = 0; i < MB_ARRAY_SIZE(strs); i++)
                if (!strcmp(line, strs[i].key)) {
                        char **slot = (char **) ((char *) r + strs[i].off);
                        return *slot ? -1 : instrec_set(slot, val);
                }
        if (!strcmp(line, "confirmed")) {
                if (strcmp(val, "yes") && strcmp(val, "no"))
                        return -1;
                r->confirmed = !strcmp(val, "yes");
                return 0;
        }
        if (!strcmp(line, "dir"))
                return instrec_add(r, INSTREC_DIR, val, NULL);
        if (!strcmp(line, "file") || !strcmp(line, "host-file")) {
                if (strlen(val) < 66 || unhex(val, d) < 0)
                        return -1;
                return instrec_add(r, line[0] == 'f' ? INSTREC_FILE : INSTREC_HOST_FILE, val + 65, d);
        }
        return -1;
}

int instrec_load(const char *path, instrec *ret) {
        cli_file f;
        instrec r = { 0 };
        char *text, *line, *save = NULL;
        size_t n = 0;
        int rc = -1;

        memset(ret, 0, sizeof(*ret));
        if (access(path, F_OK) < 0 && errno == ENOENT)
                return 1;
        if (cli_file_load_max(path, INSTREC_MAX, "an install record", &f) < 0)
                return -1;
        text = malloc(f.size + 1);
        if (!text) {
                cli_error("out of memory");
                cli_file_free(&f);
                return -1;
        }
        memcpy(text, f.data, f.size);
        text[f.size] = '\0';
        n = f.size;
        cli_file_free(&f);
        if (strlen(text) != n) {
                cli_error("%s: not an install record (a NUL byte)", path);
                goto out;
        }
        n = 0;
        for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
                n++;
                if (n == 1 ? strcmp(line, "mshim-install 1") != 0 : parse_line(&r, line) < 0) {
                        cli_error("%s:%zu: not an install record line mshim writes: %.80s", path, n, line);
                        goto out;
                }
        }
        if (!r.esp || !r.layout || !r.mshim) {
                cli_error("%s: an install record without its %s", path, !r.esp ? "esp" : !r.layout ? "layout" : "mshim");
                goto out;
        }
        *ret = r;
        memset(&r, 0, sizeof(r));
        rc = 0;
out:
        instrec_free(&r);
        free(text);
        return rc;
}

int instrec_save(const char *path, const instrec *r) {
        char *buf = NULL, hex[65];
        size_t len = 0;
        FILE *m = open_memstream(&buf, &len);
        const struct { const char *key, *val; } strs[] = {
                { "esp", r->esp },   { "layout", r->layout }, { "loader", r->loader },
                { "key", r->key },   { "cert", r->cert },     { "mshim", r->mshim },
                { "boot-entry", r->boot_entry }, { "boot-order", r->boot_order },
        };
        int rc;

        if (!m) {
                cli_error("out of memory");
                return -1;
        }
        fputs("mshim-install 1\n", m);
        for (size_t i = 0; i < MB_ARRAY_SIZE(strs); i++)
                if (strs[i].val)
                        fprintf(m, "%s %s\n", strs[i].key, strs[i].val);
        fprintf(m, "confirmed %s\n", r->confirmed ? "yes" : "no");
        for (size_t i = 0; i < r->n_items; i++) {
                const instrec_item *it = &r->items[i];
                if (it->kind == INSTREC_DIR) {
                        fprintf(m, "dir %s\n", it->path);
                        continue;
                }
                instrec_hex(it->sha256, hex);
                fprintf(m, "%s %s %s\n", it->kind == INSTREC_FILE ? "file" : "host-file", hex, it->path);
        }
        if (fclose(m) != 0) {
                cli_error("out of memory");
                free(buf);
                return -1;
        }
        rc = cli_write_file(path, CLI_MODE_SECRET, buf, len);
        free(buf);
        return rc;
}
