/* SPDX-License-Identifier: BSD-2-Clause */
/* File loading, error reporting and a buffered stdout writer for the CLI. */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include "cli.h"

const char *mb_prog = "mshim";

void cli_error(const char *fmt, ...) {
        va_list ap;

        out_flush();
        fprintf(stderr, "%s: ", mb_prog);
        va_start(ap, fmt);
        vfprintf(stderr, fmt, ap);
        va_end(ap);
        fputc('\n', stderr);
}

/* Files whose st_size is 0 or not meaningful (pipes, sysfs/securityfs files
 * such as binary_bios_measurements) are read in a loop instead of mapped. */
static int read_stream(int fd, const char *path, cli_file *ret) {
        size_t cap = 1 << 16, len = 0;
        uint8_t *buf = malloc(cap);

        if (!buf)
                goto nomem;
        for (;;) {
                ssize_t n;

                if (len == cap) {
                        uint8_t *nb = cap > SIZE_MAX / 2 ? NULL : realloc(buf, cap * 2);
                        if (!nb)
                                goto nomem;
                        buf = nb;
                        cap *= 2;
                }
                n = read(fd, buf + len, cap - len);
                if (n < 0 && errno == EINTR)
                        continue;
                if (n < 0) {
                        cli_error("cannot read %s: %s", path, strerror(errno));
                        free(buf);
                        return -1;
                }
                if (n == 0)
                        break;
                len += (size_t) n;
        }
        *ret = (cli_file) { .data = buf, .size = len, .heap = buf };
        return 0;
nomem:
        free(buf);
        cli_error("out of memory reading %s", path);
        return -1;
}

int cli_file_load(const char *path, cli_file *ret) {
        struct stat st;
        int fd = open(path, O_RDONLY | O_CLOEXEC), r = -1;

        if (fd < 0) {
                cli_error("cannot open %s: %s", path, strerror(errno));
                return -1;
        }
        if (fstat(fd, &st) < 0) {
                cli_error("cannot stat %s: %s", path, strerror(errno));
                goto out;
        }
        if (S_ISDIR(st.st_mode)) {
                cli_error("%s is a directory", path);
                goto out;
        }
        if (S_ISREG(st.st_mode) && st.st_size > 0) {
                /* No MAP_POPULATE: the pages are faulted in (several per
                 * fault, by the kernel's fault-around) by whichever thread
                 * reads them first, while the other threads work, instead of
                 * all up front on one. */
                void *m = mmap(NULL, (size_t) st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
                if (m != MAP_FAILED) {
                        *ret = (cli_file) { .data = m, .size = (size_t) st.st_size, .map = m };
                        r = 0;
                        goto out;
                }
        }
        r = read_stream(fd, path, ret);
out:
        close(fd);
        return r;
}

void cli_file_free(cli_file *f) {
        if (f->map)
                munmap(f->map, f->size);
        free(f->heap);
        *f = (cli_file) { 0 };
}

/* stdio's per-call locking and formatting dominate when printing 100,000
 * events; a plain buffer flushed with fwrite keeps `mshim log` fast. Only
 * the main thread writes to stdout; it gets this buffer on first use. */
static char stdout_buf[OUT_BUF_SIZE];
__thread char *out_buf;
__thread size_t out_len, out_cap;
static __thread out_capture *capturing;
static __thread struct { char *buf; size_t len, cap; } saved;

/* Make room for n more bytes in the capture buffer. */
static void capture_grow(size_t n) {
        size_t cap = out_cap ? out_cap : OUT_BUF_SIZE;
        char *p;

        while (cap - out_len < n) {
                if (cap > SIZE_MAX / 2)
                        goto nomem;
                cap *= 2;
        }
        p = realloc(out_buf, cap);
        if (!p)
                goto nomem;
        out_buf = p;
        out_cap = cap;
        return;
nomem:
        /* Nothing sensible can be printed without memory for it. */
        fputs("mshim: out of memory\n", stderr);
        exit(EXIT_BAD_INPUT);
}

void out_flush(void) {
        if (capturing) {
                capture_grow(1);
                return;
        }
        if (!out_buf) {
                out_buf = stdout_buf;
                out_cap = sizeof(stdout_buf);
        }
        if (out_len)
                fwrite(out_buf, 1, out_len, stdout);
        out_len = 0;
        fflush(stdout);
}

void out_put_slow(const char *s, size_t n) {
        if (capturing) {
                capture_grow(n);
        } else {
                out_flush();
                if (n > out_cap) {
                        fwrite(s, 1, n, stdout);
                        return;
                }
        }
        memcpy(out_buf + out_len, s, n);
        out_len += n;
}

void out_capture_begin(out_capture *c) {
        saved.buf = out_buf;
        saved.len = out_len;
        saved.cap = out_cap;
        capturing = c;
        out_buf = c->buf;
        out_len = 0;
        out_cap = c->cap;
}

void out_capture_end(out_capture *c) {
        c->buf = out_buf;
        c->len = out_len;
        c->cap = out_cap;
        capturing = NULL;
        out_buf = saved.buf;
        out_len = saved.len;
        out_cap = saved.cap;
}

void out_capture_free(out_capture *c) {
        free(c->buf);
        *c = (out_capture) { 0 };
}

void out_u64(uint64_t v) {
        char b[24];
        int i = sizeof(b);

        do {
                b[--i] = (char) ('0' + v % 10);
                v /= 10;
        } while (v);
        out_put(b + i, sizeof(b) - (size_t) i);
}

/* Two output characters per byte from one table look-up. Built before
 * main() runs, so the formatting threads only ever read it. */
static char hex_pairs[256][2];

__attribute__((constructor)) static void hex_pairs_init(void) {
        static const char digits[] = "0123456789abcdef";
        for (int i = 0; i < 256; i++) {
                hex_pairs[i][0] = digits[i >> 4];
                hex_pairs[i][1] = digits[i & 15];
        }
}

void out_hex(const uint8_t *p, size_t n) {
        char b[256];

        while (n) {
                size_t k = n > sizeof(b) / 2 ? sizeof(b) / 2 : n;
                for (size_t i = 0; i < k; i++)
                        memcpy(b + 2 * i, hex_pairs[p[i]], 2);
                out_put(b, 2 * k);
                p += k;
                n -= k;
        }
}
