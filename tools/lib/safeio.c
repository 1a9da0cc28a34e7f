/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Safe writing of a user's file, input identity checks, helper programs
 * and terminal secrets, with the clean-up a fatal signal needs (see
 * safeio.h and docs/FILES.md). The rules come from issue 13: a CLI that
 * edits libvirt's nvram files and /boot's kernels must never destroy one.
 */
#define _GNU_SOURCE /* mkostemp, pipe2 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <poll.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>
#include <sys/wait.h>
#include "cli.h"
#include "safeio.h"

/* ---- what a fatal signal must undo ----------------------------------------- */

/* Everything here is read by the signal handler, so it lives in static
 * storage and changes only with the fatal signals blocked. */
#define CLEANUP_SLOTS 4
static char cleanup_path[CLEANUP_SLOTS][PATH_MAX];
static volatile sig_atomic_t cleanup_used[CLEANUP_SLOTS];
static volatile sig_atomic_t cleanup_child; /* a running helper's pid, or 0 */
static volatile sig_atomic_t tty_fd = -1;   /* a terminal whose echo is off */
static struct termios tty_saved;
static const int fatal_signals[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT };

static void fatal_set(sigset_t *s) {
        sigemptyset(s);
        for (size_t i = 0; i < MB_ARRAY_SIZE(fatal_signals); i++)
                sigaddset(s, fatal_signals[i]);
}

static void block_fatal(sigset_t *old) {
        sigset_t s;

        fatal_set(&s);
        sigprocmask(SIG_BLOCK, &s, old);
}

static void unblock(const sigset_t *old) {
        sigprocmask(SIG_SETMASK, old, NULL);
}

/* Stop the helper before removing the files it may still be writing (it
 * would otherwise create them again): SIGTERM, up to 2 s to exit, then
 * SIGKILL. Only async-signal-safe calls. */
static void stop_child(void) {
        pid_t pid = (pid_t) cleanup_child;
        struct timespec tick = { 0, 20 * 1000 * 1000 };

        if (pid <= 0)
                return;
        kill(pid, SIGTERM);
        for (int i = 0; i < 100; i++) {
                if (waitpid(pid, NULL, WNOHANG) != 0)
                        return;
                nanosleep(&tick, NULL);
        }
        kill(pid, SIGKILL);
        waitpid(pid, NULL, 0);
}

static void on_fatal_signal(int sig) {
        stop_child();
        for (int i = 0; i < CLEANUP_SLOTS; i++)
                if (cleanup_used[i])
                        unlink(cleanup_path[i]);
        if (tty_fd >= 0)
                tcsetattr(tty_fd, TCSAFLUSH, &tty_saved);
        /* Die of the same signal, so that the caller sees what happened:
         * it is delivered, now with the default action, when this
         * handler returns and unblocks it. */
        signal(sig, SIG_DFL);
        raise(sig);
}

/* Catch the fatal signals, once; one ignored when mshim started (nohup)
 * stays ignored. */
static void install_handlers(void) {
        static bool done;
        struct sigaction sa = { .sa_handler = on_fatal_signal }, old;

        if (done)
                return;
        done = true;
        fatal_set(&sa.sa_mask);
        for (size_t i = 0; i < MB_ARRAY_SIZE(fatal_signals); i++)
                if (sigaction(fatal_signals[i], NULL, &old) == 0 && old.sa_handler != SIG_IGN)
                        sigaction(fatal_signals[i], &sa, NULL);
}

/* ---- inputs ------------------------------------------------------------------ */

bool cli_same_file(const char *a, const char *b) {
        struct stat sa, sb;

        if (stat(a, &sa) < 0 || stat(b, &sb) < 0)
                return strcmp(a, b) == 0;
        return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

int cli_out_not_input(const char *out, const cli_input *in, size_t n) {
        for (size_t i = 0; i < n; i++)
                if (in[i].path && cli_same_file(out, in[i].path)) {
                        cli_error("refusing to write %s: it is %s %s; choose another output file", out,
                                  in[i].what, in[i].path);
                        return -1;
                }
        return 0;
}

/* ---- writing a file ------------------------------------------------------------ */

static mode_t current_umask(void) {
        mode_t um = umask(0);

        umask(um);
        return um;
}

/* The file a write to `path` replaces: path itself, or for a symlink the
 * file it leads to, which must exist (cp does not write through a
 * dangling symlink either) and be a writable regular file with one name. */
static int resolve_target(cli_out *o) {
        struct stat st;

        if (lstat(o->path, &st) < 0) {
                if (errno != ENOENT) {
                        cli_error("cannot write %s: %s", o->path, strerror(errno));
                        return -1;
                }
                o->target = strdup(o->path);
                goto done;
        }
        o->target = realpath(o->path, NULL);
        if (!o->target) {
                if (errno == ENOENT)
                        cli_error("not writing through the dangling symlink %s", o->path);
                else
                        cli_error("cannot resolve %s: %s", o->path, strerror(errno));
                return -1;
        }
        if (stat(o->target, &st) < 0 || !S_ISREG(st.st_mode)) {
                cli_error("refusing to write %s: not a regular file", o->path);
                return -1;
        }
        if (st.st_nlink > 1) {
                cli_error("refusing to replace %s: it has %ju hard links, which replacing it would "
                          "split; write to another file and copy that over it", o->path,
                          (uintmax_t) st.st_nlink);
                return -1;
        }
        /* A rename would replace a file its owner made read-only; cp
         * would not write it either. */
        if (access(o->target, W_OK) < 0) {
                cli_error("refusing to replace %s: %s", o->path, strerror(errno));
                return -1;
        }
        o->exists = true;
        o->uid = st.st_uid;
        o->gid = st.st_gid;
        o->mode = st.st_mode & 07777;
done:
        if (!o->target) {
                cli_error("out of memory");
                return -1;
        }
        return 0;
}

/* target's directory + "/.mshim-XXXXXX": a fixed short name, so that a
 * target name near NAME_MAX still leaves room. */
static char *temp_template(const char *target) {
        const char *slash = strrchr(target, '/');
        size_t dlen = slash ? (size_t) (slash - target) + 1 : 0;
        static const char base[] = ".mshim-XXXXXX";
        char *t;

        if (dlen + sizeof(base) > PATH_MAX)
                return NULL;
        t = malloc(dlen + sizeof(base));
        if (t) {
                memcpy(t, target, dlen);
                memcpy(t + dlen, base, sizeof(base));
        }
        return t;
}

/* Create the temporary file and enter it in the clean-up list in one step
 * as far as signals can tell. */
static int create_temp(cli_out *o) {
        sigset_t old;
        int slot = -1, e;

        o->tmp = temp_template(o->target);
        if (!o->tmp) {
                cli_error("cannot write %s: path too long", o->path);
                return -1;
        }
        install_handlers();
        block_fatal(&old);
        for (int i = 0; i < CLEANUP_SLOTS && slot < 0; i++)
                if (!cleanup_used[i])
                        slot = i;
        o->fd = slot < 0 ? -1 : mkostemp(o->tmp, O_CLOEXEC);
        e = errno;
        if (o->fd >= 0) {
                strcpy(cleanup_path[slot], o->tmp);
                cleanup_used[slot] = 1;
                o->slot = slot;
        }
        unblock(&old);
        if (o->fd < 0) {
                cli_error("cannot create a file in the directory of %s: %s", o->path,
                          slot < 0 ? "too many files open for writing" : strerror(e));
                return -1;
        }
        return 0;
}

int cli_out_open(cli_out *o, const char *path, mode_t new_mode) {
        *o = (cli_out) { .path = path, .fd = -1, .slot = -1, .mode = new_mode & ~current_umask() };
        if (resolve_target(o) < 0 || create_temp(o) < 0) {
                cli_out_abort(o);
                return -1;
        }
        return 0;
}

int cli_out_write(cli_out *o, const void *p, size_t n) {
        const uint8_t *b = p;

        while (n) {
                ssize_t w = write(o->fd, b, n);
                if (w < 0 && errno == EINTR)
                        continue;
                if (w < 0) {
                        cli_error("cannot write %s: %s", o->path, strerror(errno));
                        return -1;
                }
                b += w;
                n -= (size_t) w;
        }
        return 0;
}

/* The temporary file's final owner and mode, and its data on disk. It is
 * opened again by name: a helper program may have replaced it. fchown
 * before fchmod, which a chown's clearing of set-id bits would undo. */
static int finish_temp(cli_out *o) {
        struct stat st;
        int fd, r = -1, e;

        if (close(o->fd) < 0) {
                o->fd = -1;
                return -1;
        }
        o->fd = -1;
        fd = open(o->tmp, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0)
                return -1;
        if (fstat(fd, &st) == 0 && (!o->exists || (st.st_uid == o->uid && st.st_gid == o->gid) ||
                                    fchown(fd, o->uid, o->gid) == 0) &&
            fchmod(fd, o->mode) == 0 && fsync(fd) == 0)
                r = 0;
        e = errno;
        close(fd);
        errno = e;      /* the caller's message is about the failure above */
        return r;
}

int cli_sync_renamed(int dfd, const char *name) {
        int fd = openat(dfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC), r = -1, e;

        if (fd < 0)
                return -1;
        if (fsync(fd) == 0 && fsync(dfd) == 0)
                r = 0;
        e = errno;
        close(fd);
        errno = e;
        return r;
}

int cli_sync_renamed_path(const char *target) {
        const char *slash = strrchr(target, '/');
        char *dir = slash ? strndup(target, slash == target ? 1 : (size_t) (slash - target)) : strdup(".");
        int fd = dir ? open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC) : -1, r = -1;

        if (fd >= 0 && cli_sync_renamed(fd, slash ? slash + 1 : target) == 0)
                r = 0;
        if (fd >= 0)
                close(fd);
        free(dir);
        return r;
}

int cli_out_commit(cli_out *o) {
        sigset_t old;
        int r;

        if (finish_temp(o) < 0) {
                cli_error(o->exists && errno == EPERM ?
                          "cannot write %s keeping its owner and group: %s (run as its owner or root)" :
                          "cannot write %s: %s", o->path, strerror(errno));
                cli_out_abort(o);
                return -1;
        }
        block_fatal(&old);
        r = rename(o->tmp, o->target);
        if (r == 0)
                cleanup_used[o->slot] = 0;
        unblock(&old);
        if (r < 0) {
                cli_error("cannot replace %s: %s", o->path, strerror(errno));
                cli_out_abort(o);
                return -1;
        }
        if (cli_sync_renamed_path(o->target) < 0) {
                cli_error("wrote %s, but cannot sync it to disk: %s", o->path, strerror(errno));
                r = -1;
        }
        cli_out_abort(o);
        return r;
}

void cli_out_abort(cli_out *o) {
        sigset_t old;

        if (o->fd >= 0)
                close(o->fd);
        block_fatal(&old);
        if (o->slot >= 0 && cleanup_used[o->slot]) {
                unlink(o->tmp);
                cleanup_used[o->slot] = 0;
        }
        unblock(&old);
        free(o->tmp);
        free(o->target);
        *o = (cli_out) { .path = o->path, .fd = -1, .slot = -1 };
}

int cli_write_file(const char *path, mode_t new_mode, const void *p, size_t n) {
        cli_out o;

        if (cli_out_open(&o, path, new_mode) < 0)
                return -1;
        if (cli_out_write(&o, p, n) < 0) {
                cli_out_abort(&o);
                return -1;
        }
        return cli_out_commit(&o);
}

/* ---- helper programs --------------------------------------------------------------- */

/* Print a helper's standard error (collected in buf) as mshim messages,
 * naming the user's file where the helper named a temporary one. */
static void relay_stderr(const char *name, char *buf, size_t len, const char *hide, const char *shown) {
        size_t hl = hide ? strlen(hide) : 0;

        buf[len] = 0;
        for (char *line = buf, *nl; *line; line = nl ? nl + 1 : line + strlen(line)) {
                nl = strchr(line, '\n');
                if (nl)
                        *nl = 0;
                if (!*line)
                        continue;
                out_flush();
                fprintf(stderr, "%s: %s: ", mb_prog, name);
                for (char *p = line, *hit; *p; p = hit + hl) {
                        hit = hl ? strstr(p, hide) : NULL;
                        if (!hit) {
                                fputs(p, stderr);
                                break;
                        }
                        fprintf(stderr, "%.*s%s", (int) (hit - p), p, shown);
                }
                fputc('\n', stderr);
        }
}

/* In the child: default signal handling back, standard error to the pipe,
 * then the program. */
static void exec_child(char *const argv[], int err_fd, const sigset_t *mask) {
        for (size_t i = 0; i < MB_ARRAY_SIZE(fatal_signals); i++) {
                struct sigaction old;
                if (sigaction(fatal_signals[i], NULL, &old) == 0 && old.sa_handler == on_fatal_signal)
                        signal(fatal_signals[i], SIG_DFL);
        }
        sigprocmask(SIG_SETMASK, mask, NULL);
        dup2(err_fd, STDERR_FILENO);
        execvp(argv[0], argv);
        dprintf(STDERR_FILENO, "cannot run %s: %s%s\n", argv[0], strerror(errno),
                errno == ENOENT ? " (is it installed?)" : "");
        _exit(127);
}

/* Read the child's standard error to its end, keeping up to 16 KiB. */
static size_t collect(int fd, char *buf, size_t cap) {
        size_t len = 0;
        char skip[512];

        for (;;) {
                ssize_t n = len < cap ? read(fd, buf + len, cap - len) : read(fd, skip, sizeof(skip));
                if (n < 0 && errno == EINTR)
                        continue;
                if (n <= 0)
                        return len;
                if (len < cap)
                        len += (size_t) n;
        }
}

int cli_run(char *const argv[], const char *hide, const char *shown) {
        char buf[16 << 10];
        int pipefd[2], status = 0;
        sigset_t old;
        pid_t pid;
        size_t len;

        out_flush();
        fflush(stderr);
        if (pipe2(pipefd, O_CLOEXEC) < 0) {
                cli_error("cannot start %s: %s", argv[0], strerror(errno));
                return -1;
        }
        install_handlers();
        block_fatal(&old);
        pid = fork();
        if (pid == 0)
                exec_child(argv, pipefd[1], &old);
        if (pid > 0)
                cleanup_child = pid;
        unblock(&old);
        close(pipefd[1]);
        if (pid < 0) {
                close(pipefd[0]);
                cli_error("cannot start %s: %s", argv[0], strerror(errno));
                return -1;
        }
        len = collect(pipefd[0], buf, sizeof(buf) - 1);
        close(pipefd[0]);
        while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
                ;
        cleanup_child = 0;
        relay_stderr(argv[0], buf, len, hide, shown);
        return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/* ---- helper programs with inputs and output ---------------------------------------------- */

#define FEEDS_MAX 4

/* In the child: each feed's pipe on its descriptor (moved out of the way
 * first, so that no dup2 overwrites a pipe still to be placed), standard
 * output to its pipe. */
static void io_child(char *const argv[], const cli_run_io_opts *o, int (*feed)[2], int out_fd, int err_fd,
                     const sigset_t *mask) {
        int tmp[FEEDS_MAX];

        for (size_t i = 0; i < o->n_feeds; i++)
                if ((tmp[i] = fcntl(feed[i][0], F_DUPFD, 64)) < 0)
                        _exit(127);
        for (size_t i = 0; i < o->n_feeds; i++)
                if (dup2(tmp[i], o->feeds[i].fd) < 0)
                        _exit(127);
        if (out_fd >= 0 && dup2(out_fd, STDOUT_FILENO) < 0)
                _exit(127);
        exec_child(argv, err_fd, mask);
}

typedef struct io_buf {
        char *p;
        size_t len, cap;
        bool over;
} io_buf;

/* Read what is there into b (grown up to cap bytes; more is counted as
 * over and dropped). false at the end of the stream. */
static bool io_read(int fd, io_buf *b) {
        char skip[512];
        ssize_t n;

        if (b->len < b->cap) {
                if (!b->p && !(b->p = malloc(b->cap + 1)))
                        return false;
                n = read(fd, b->p + b->len, b->cap - b->len);
        } else
                n = read(fd, skip, sizeof(skip));
        if (n < 0 && errno == EINTR)
                return true;
        if (n <= 0)
                return false;
        if (b->len < b->cap)
                b->len += (size_t) n;
        else
                b->over = true;
        return true;
}

/* Feed, collect and wait: one poll loop, so that neither side waits on a
 * full pipe. */
static int io_loop(const cli_run_io_opts *o, int *feed_w, size_t *fed, int out_r, int err_r, io_buf *out, io_buf *err) {
        for (;;) {
                struct pollfd pf[FEEDS_MAX + 2];
                size_t n = 0;

                for (size_t i = 0; i < o->n_feeds; i++)
                        if (feed_w[i] >= 0)
                                pf[n++] = (struct pollfd) { .fd = feed_w[i], .events = POLLOUT };
                if (out_r >= 0)
                        pf[n++] = (struct pollfd) { .fd = out_r, .events = POLLIN };
                if (err_r >= 0)
                        pf[n++] = (struct pollfd) { .fd = err_r, .events = POLLIN };
                if (!n)
                        return 0;
                if (poll(pf, n, -1) < 0) {
                        if (errno == EINTR)
                                continue;
                        /* Closed, the child sees the end of its input
                         * and output: it cannot wait on mshim. */
                        for (size_t i = 0; i < n; i++)
                                close(pf[i].fd);
                        return -1;
                }
                for (size_t i = 0; i < o->n_feeds; i++) {
                        const char *d = o->feeds[i].data;
                        ssize_t w;
                        if (feed_w[i] < 0)
                                continue;
                        w = fed[i] < o->feeds[i].size ? write(feed_w[i], d + fed[i], o->feeds[i].size - fed[i]) : 0;
                        if (w < 0 && (errno == EINTR || errno == EAGAIN))
                                continue;
                        /* Written, or the child closed it: either way done. */
                        if (w > 0)
                                fed[i] += (size_t) w;
                        if (w <= 0 || fed[i] == o->feeds[i].size) {
                                close(feed_w[i]);
                                feed_w[i] = -1;
                        }
                }
                if (out_r >= 0 && !io_read(out_r, out)) {
                        close(out_r);
                        out_r = -1;
                }
                if (err_r >= 0 && !io_read(err_r, err)) {
                        close(err_r);
                        err_r = -1;
                }
        }
}

int cli_run_io(char *const argv[], const cli_run_io_opts *o) {
        int feed[FEEDS_MAX][2], outp[2] = { -1, -1 }, errp[2] = { -1, -1 }, feed_w[FEEDS_MAX], status = 0;
        size_t fed[FEEDS_MAX] = { 0 }, made = 0;
        io_buf out = { .cap = o->out_max }, err = { .cap = 16 << 10 };
        void (*old_pipe)(int);
        sigset_t old;
        pid_t pid = -1;
        int r = -1;

        if (o->n_feeds > FEEDS_MAX || (o->ret_out && !o->out_max))
                return -1;
        out_flush();
        fflush(stderr);
        for (; made < o->n_feeds; made++)
                if (pipe2(feed[made], O_CLOEXEC) < 0)
                        goto fail;
        if (pipe2(errp, O_CLOEXEC) < 0 || (o->ret_out && pipe2(outp, O_CLOEXEC) < 0))
                goto fail;
        install_handlers();
        block_fatal(&old);
        pid = fork();
        if (pid == 0)
                io_child(argv, o, feed, outp[1], errp[1], &old);
        if (pid > 0)
                cleanup_child = pid;
        unblock(&old);
        if (pid < 0)
                goto fail;
        /* A child that exits without reading its input must not kill mshim. */
        old_pipe = signal(SIGPIPE, SIG_IGN);
        for (size_t i = 0; i < made; i++) {
                close(feed[i][0]);
                feed_w[i] = feed[i][1];
                fcntl(feed_w[i], F_SETFL, O_NONBLOCK);
        }
        made = 0;
        close(errp[1]);
        if (outp[1] >= 0)
                close(outp[1]);
        io_loop(o, feed_w, fed, outp[0], errp[0], &out, &err);
        while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
                ;
        signal(SIGPIPE, old_pipe);
        cleanup_child = 0;
        if (!o->quiet)
                relay_stderr(argv[0], err.p ? err.p : (char[1]) { 0 }, err.len, NULL, NULL);
        free(err.p);
        r = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
        if (o->ret_out && r != -1 && r != 127) {
                if (out.over || !out.p) {
                        cli_error("%s: %s", argv[0], out.over ? "more output than expected" : "out of memory");
                        r = -1;
                } else {
                        out.p[out.len] = 0;
                        *o->ret_out = out.p;
                        if (o->ret_out_size)
                                *o->ret_out_size = out.len;
                        out.p = NULL;
                }
        }
        free(out.p);
        return r;
fail:
        cli_error("cannot start %s: %s", argv[0], strerror(errno));
        for (size_t i = 0; i < made; i++) {
                close(feed[i][0]);
                close(feed[i][1]);
        }
        for (int i = 0; i < 2; i++) {
                if (outp[i] >= 0)
                        close(outp[i]);
                if (errp[i] >= 0)
                        close(errp[i]);
        }
        return -1;
}

/* ---- terminal secrets ---------------------------------------------------------------- */

void cli_secret_free(char *s) {
        if (s) {
                explicit_bzero(s, strlen(s));
                free(s);
        }
}

/* One line from fd, byte by byte: no stdio buffer keeps a copy. */
static char *read_line(int fd) {
        size_t cap = 1024, len = 0;
        char *s = malloc(cap);

        while (s) {
                char c;
                ssize_t n = read(fd, &c, 1);
                if (n < 0 && errno == EINTR)
                        continue;
                if (n <= 0 || c == '\n')
                        break;
                if (len + 1 == cap) {
                        /* No password is this long; do not grow for one. */
                        s[len] = 0;
                        cli_secret_free(s);
                        cli_error("the password is longer than %zu characters", cap - 1);
                        return NULL;
                }
                s[len++] = c;
        }
        if (s)
                s[len] = 0;
        else
                cli_error("out of memory");
        return s;
}

/* All of text to the terminal; a short write (a hung-up terminal) is not
 * an error here: read_line then fails and says so. */
static void tty_write(int fd, const char *text) {
        size_t n = strlen(text);

        while (n) {
                ssize_t w = write(fd, text, n);

                if (w < 0 && errno == EINTR)
                        continue;
                if (w <= 0)
                        return;
                text += w;
                n -= (size_t) w;
        }
}

char *cli_tty_secret(int fd, const char *prompt) {
        struct termios quiet;
        sigset_t old;
        char *s;

        if (tcgetattr(fd, &tty_saved) < 0) {
                cli_error("cannot read the terminal's settings: %s", strerror(errno));
                return NULL;
        }
        quiet = tty_saved;
        /* No echo, but the newline, as passwd and mokutil do. */
        quiet.c_lflag = (quiet.c_lflag & ~(tcflag_t) ECHO) | ECHONL;
        install_handlers();
        block_fatal(&old);
        tty_fd = fd;
        if (tcsetattr(fd, TCSAFLUSH, &quiet) < 0)
                tty_fd = -1;
        unblock(&old);
        if (tty_fd < 0) {
                cli_error("cannot turn the terminal's echo off: %s", strerror(errno));
                return NULL;
        }
        /* The prompt goes where the answer comes from, as passwd and
         * cryptsetup do: with standard error redirected to a log the user
         * still sees what is asked. */
        out_flush();
        fflush(stderr);
        tty_write(fd, prompt);
        s = read_line(fd);
        block_fatal(&old);
        tcsetattr(fd, TCSAFLUSH, &tty_saved);
        tty_fd = -1;
        unblock(&old);
        return s;
}

/* Password files are one line; a wrong, huge file costs no memory. */
#define SECRET_FILE_MAX ((size_t) 1 << 20)

char *cli_first_line(const uint8_t *data, size_t n) {
        const uint8_t *nl = memchr(data, '\n', n);
        size_t len = nl ? (size_t) (nl - data) : n;
        char *s;

        if (len && data[len - 1] == '\r')
                len--;
        s = malloc(len + 1);
        if (!s) {
                cli_error("out of memory");
                return NULL;
        }
        memcpy(s, data, len);
        s[len] = 0;
        return s;
}

char *cli_secret_file(const char *path, const char *what) {
        cli_file f;
        char *s;

        if (cli_file_load_max(path, SECRET_FILE_MAX, what, &f) < 0)
                return NULL;
        s = cli_first_line(f.data, f.size);
        cli_file_free(&f);
        return s;
}

/* Asked twice without echo, as mokutil and passwd do. */
char *cli_tty_new_secret(int fd, const char *prompt, const char *again) {
        char *a = cli_tty_secret(fd, prompt), *b = NULL;

        if (a)
                b = cli_tty_secret(fd, again);
        if (a && b && strcmp(a, b) != 0) {
                cli_error("the passwords do not match; nothing written");
                cli_secret_free(a);
                a = NULL;
        }
        if (!b) {
                cli_secret_free(a);
                a = NULL;
        }
        cli_secret_free(b);
        return a;
}
