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

/* Sizes in limits are whole MiB (CLI_STREAM_MAX, the vars limits). */
static void too_large(const char *path, size_t max, const char *what) {
        cli_error("%s: more than %zu MiB; not %s", path, max >> 20, what);
}

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
 * such as binary_bios_measurements) are read in a loop instead of mapped,
 * up to max bytes: an endless stream (/dev/zero) must not eat all memory. */
static int read_stream(int fd, const char *path, size_t max, const char *what, cli_file *ret) {
        size_t cap = 1 << 16, len = 0;
        uint8_t *buf = malloc(cap);

        if (!buf)
                goto nomem;
        for (;;) {
                ssize_t n;

                if (len == cap) {
                        uint8_t *nb;
                        if (cap > max) {
                                too_large(path, max, what);
                                free(buf);
                                return -1;
                        }
                        /* One byte past max tells a stream of exactly max
                         * bytes from a longer one. */
                        cap = cap > max / 2 ? max + 1 : cap * 2;
                        nb = realloc(buf, cap);
                        if (!nb)
                                goto nomem;
                        buf = nb;
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

/* fd is the caller's to close; path names it in messages. max_file bounds
 * a regular file (mapped, so only its size is checked), max_stream what is
 * read into memory from anything else (a pipe, a sysfs file). */
static int load_fd(int fd, const char *path, size_t max_file, size_t max_stream, const char *what,
                   cli_file *ret) {
        struct stat st;

        if (fstat(fd, &st) < 0) {
                cli_error("cannot stat %s: %s", path, strerror(errno));
                return -1;
        }
        if (S_ISDIR(st.st_mode)) {
                cli_error("%s is a directory", path);
                return -1;
        }
        if (S_ISREG(st.st_mode) && (uintmax_t) st.st_size > max_file) {
                too_large(path, max_file, what);
                return -1;
        }
        if (S_ISREG(st.st_mode) && st.st_size > 0 && lseek(fd, 0, SEEK_CUR) == 0) {
                /* No MAP_POPULATE: the pages are faulted in (several per
                 * fault, by the kernel's fault-around) by whichever thread
                 * reads them first, while the other threads work, instead of
                 * all up front on one. A regular file as standard input
                 * (`mshim log - < FILE`) is mapped too, unless something
                 * already read part of it: then the rest is read. */
                void *m = mmap(NULL, (size_t) st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
                if (m != MAP_FAILED) {
                        *ret = (cli_file) { .data = m, .size = (size_t) st.st_size, .map = m };
                        return 0;
                }
        }
        return read_stream(fd, path, max_stream, what, ret);
}

static int file_load(const char *path, size_t max_file, size_t max_stream, const char *what, cli_file *ret) {
        int fd = open(path, O_RDONLY | O_CLOEXEC), r;

        if (fd < 0) {
                cli_error("cannot open %s: %s", path, strerror(errno));
                return -1;
        }
        r = load_fd(fd, path, max_file, max_stream, what, ret);
        close(fd);
        return r;
}

#define CLI_LOG_WHAT "an event log or a PCR file"

int cli_file_load(const char *path, cli_file *ret) {
        return file_load(path, SIZE_MAX, CLI_STREAM_MAX, CLI_LOG_WHAT, ret);
}

int cli_input_load(const char *path, cli_file *ret) {
        if (strcmp(path, "-") == 0)
                return load_fd(STDIN_FILENO, CLI_STDIN_NAME, SIZE_MAX, CLI_STREAM_MAX, CLI_LOG_WHAT, ret);
        return cli_file_load(path, ret);
}

int cli_file_load_max(const char *path, size_t max, const char *what, cli_file *ret) {
        return file_load(path, max, max < CLI_STREAM_MAX ? max : CLI_STREAM_MAX, what, ret);
}

int cli_opt_once(const char **slot, const char *name, const char *value) {
        if (*slot) {
                cli_error("%s given twice ('%s' and '%s'); give it once", name, *slot, value);
                return -1;
        }
        *slot = value;
        return 0;
}

int cli_opt_once_for(const struct option *longopts, int c, const char **slot, const char *value) {
        for (const struct option *lo = longopts; lo->name; lo++)
                if (lo->val == c)
                        return cli_opt_once(slot, c == 'o' ? "-o" : lo->name, value);
        return cli_opt_once(slot, "-o", value);
}

const char *cli_alg_label(uint16_t alg, char buf[16]) {
        static const char digits[] = "0123456789abcdef";
        const char *n = mb_hash_name(alg);

        if (n)
                return n;
        memcpy(buf, "alg_0x", 6);
        for (int i = 0; i < 4; i++)
                buf[6 + i] = digits[(alg >> (12 - 4 * i)) & 15];
        buf[10] = 0;
        return buf;
}

void cli_file_release(cli_file *f, size_t upto) {
        size_t page = (size_t) sysconf(_SC_PAGESIZE), end;

        if (!f->map || upto > f->size)
                return;
        end = upto / page * page;
        if (end <= f->released)
                return;
        /* MADV_DONTNEED on a private read-only file mapping only unmaps:
         * the next access reads the page from the file again. */
        if (madvise((uint8_t *) f->map + f->released, end - f->released, MADV_DONTNEED) == 0)
                f->released = end;
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

int out_finish(void) {
        out_flush();
        if (ferror(stdout)) {
                cli_error("cannot write the output: %s", strerror(errno ? errno : EIO));
                return -1;
        }
        return 0;
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

/* "00".."99": two decimal digits per division. Built before main() runs,
 * like hex_pairs, so the formatting threads only ever read it. */
static char dec_pairs[100][2];

__attribute__((constructor)) static void dec_pairs_init(void) {
        for (int i = 0; i < 100; i++) {
                dec_pairs[i][0] = (char) ('0' + i / 10);
                dec_pairs[i][1] = (char) ('0' + i % 10);
        }
}

void out_u64(uint64_t v) {
        char b[24];
        size_t i = sizeof(b);

        while (v >= 100) {
                i -= 2;
                memcpy(b + i, dec_pairs[v % 100], 2);
                v /= 100;
        }
        if (v >= 10) {
                i -= 2;
                memcpy(b + i, dec_pairs[v], 2);
        } else
                b[--i] = (char) ('0' + v);
        out_put(b + i, sizeof(b) - i);
}

/* Sixteen hex digits for eight bytes with word arithmetic (SWAR): each
 * nibble goes to its own byte, then '0' is added, and 'a' - '0' - 10 more
 * where the nibble is 10 or above (nibble + 6 carries into bit 4 exactly
 * then). No byte can carry into the next: 15 + 6 < 256 and 15 + 0x57 < 256. */
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
static inline void hex8(char *out, const uint8_t *p) {
        uint64_t x;

        memcpy(&x, p, 8);
        for (int half = 0; half < 2; half++, x >>= 32) {
                /* Bytes b0..b3 of this half into 16-bit lanes: hi nibble in the
                 * lane's first (lower-addressed) byte, lo nibble in its second. */
                uint64_t v = (x & 0xff) | (x & 0xff00) << 8 | (x & 0xff0000) << 16 | (x & 0xff000000) << 24;
                v = (v & 0x00f000f000f000f0ULL) >> 4 | (v & 0x000f000f000f000fULL) << 8;
                v += 0x3030303030303030ULL + (((v + 0x0606060606060606ULL) >> 4) & 0x0101010101010101ULL) * 0x27;
                memcpy(out + 8 * half, &v, 8);
        }
}
#endif

/* Hex for n bytes into out (2n characters). */
static void hex_to(char *out, const uint8_t *p, size_t n) {
        size_t i = 0;

#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
        for (; i + 8 <= n; i += 8)
                hex8(out + 2 * i, p + i);
#endif
        for (; i < n; i++)
                memcpy(out + 2 * i, hex_pairs[p[i]], 2);
}

void out_hex(const uint8_t *p, size_t n) {
        if (n == 0)
                return;
        /* Straight into the output buffer when it has room (nearly always),
         * else through a bounce buffer a piece at a time. */
        if (n <= (out_cap - out_len) / 2) {
                hex_to(out_buf + out_len, p, n);
                out_len += 2 * n;
                return;
        }
        while (n) {
                char b[256];
                size_t k = n > sizeof(b) / 2 ? sizeof(b) / 2 : n;
                hex_to(b, p, k);
                out_put(b, 2 * k);
                p += k;
                n -= k;
        }
}

/* A PCR number 0-23 at *p, advancing p past it. */
static int parse_index(const char **p, uint32_t *ret) {
        char *end;
        unsigned long v;

        if (**p < '0' || **p > '9')
                return -1;
        errno = 0;
        v = strtoul(*p, &end, 10);
        if (errno || v >= MB_PCR_COUNT)
                return -1;
        *p = end;
        *ret = (uint32_t) v;
        return 0;
}

int cli_pcr_select_parse(const char *arg, uint32_t *ret) {
        uint32_t mask = 0, a, b;
        const char *p = arg;

        for (;;) {
                if (parse_index(&p, &a) < 0)
                        return -1;
                b = a;
                if (*p == '-') {
                        p++;
                        if (parse_index(&p, &b) < 0 || b < a)
                                return -1;
                }
                for (uint32_t i = a; i <= b; i++)
                        mask |= 1u << i;
                if (!*p)
                        break;
                if (*p++ != ',')
                        return -1;
        }
        *ret = mask;
        return 0;
}

void cli_pcr_select_print(uint32_t mask, char buf[CLI_PCR_LIST_MAX]) {
        size_t len = 0;

        buf[0] = 0;
        for (uint32_t i = 0; i < MB_PCR_COUNT; i++)
                if (mask & (1u << i))
                        len += (size_t) snprintf(buf + len, CLI_PCR_LIST_MAX - len, "%s%u", len ? "," : "", i);
}
