/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The CLI's only way to write a user's file, and its guards around it:
 * never over one of the command's inputs, through symlinks to their target,
 * keeping an edited file's owner, group and mode, atomically (a temporary
 * file in the same directory, fsync, rename, fsync of the directory), and
 * with no temporary file left behind, not even on SIGINT/SIGTERM/SIGHUP/
 * SIGQUIT while a helper program runs. docs/FILES.md describes the rules.
 */
#ifndef MB_SAFEIO_H
#define MB_SAFEIO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>

/* Modes of new files (less the umask, as cp and sbsign do): images and
 * other public data 0666 (0644 under the usual umask 022); variable
 * stores and variable data, which may hold a MOK password hash, 0600. */
#define CLI_MODE_PUBLIC 0666
#define CLI_MODE_SECRET 0600

/* Same file by identity (device and inode, following symlinks), so that
 * "./a", "a", a symlink to a and a hard link of a all count. Paths that
 * cannot be stat()ed are the same only if spelled the same. */
bool cli_same_file(const char *a, const char *b);

/* One input of a command: what it is, for messages ("the key"), and the
 * path given. NULL paths are skipped. */
typedef struct cli_input {
        const char *what, *path;
} cli_input;

/* Refuse OUT when it is one of the inputs: 0, or -1 with a message. */
int cli_out_not_input(const char *out, const cli_input *in, size_t n);

/* A file being written: a temporary file next to the target, renamed over
 * it by cli_out_commit. Messages name `path`, never the temporary file. */
typedef struct cli_out {
        const char *path;       /* as the user gave it */
        char *target;           /* path with symlinks resolved: the file replaced */
        char *tmp;              /* the temporary file, in target's directory */
        int fd;                 /* open on tmp, for cli_out_write */
        int slot;               /* its entry in the signal-time clean-up list */
        bool exists;            /* target exists: keep its owner, group and mode */
        uid_t uid;
        gid_t gid;
        mode_t mode;            /* target's mode, or the new file's before the umask */
} cli_out;

/* Start writing PATH (new_mode for a new file: CLI_MODE_*). Refuses a
 * dangling symlink, a target that is not a regular file, and one with
 * several hard links (a rename would split them). 0, or -1 with a message. */
int cli_out_open(cli_out *o, const char *path, mode_t new_mode);
int cli_out_write(cli_out *o, const void *p, size_t n);
/* Give the temporary file (which a helper program may have rewritten)
 * the target's owner, group and mode or the new mode less the umask, sync
 * it, rename it over the target and sync both (cli_sync_renamed). Frees o. */
int cli_out_commit(cli_out *o);
/* Remove the temporary file and free o; safe after commit or abort. */
void cli_out_abort(cli_out *o);
/* open + write + commit. */
int cli_write_file(const char *path, mode_t new_mode, const void *p, size_t n);

/* After renaming NAME in the directory DFD: NAME and then the directory
 * to disk. Syncing the directory alone is not enough on FAT (every ESP):
 * Linux's vfat writes a renamed file's new directory entry with size 0 and
 * no first cluster and fills them in only when the file's inode is written
 * back, so a power cut before that leaves an empty file
 * (tests/integration/test_bless.sh). 0, or -1 with errno set. */
int cli_sync_renamed(int dfd, const char *name);
/* The same for PATH, in the directory its name gives. */
int cli_sync_renamed_path(const char *path);

/* Run argv[0] (from PATH) and wait for it. Its standard error is shown as
 * "mshim: NAME: line", with `hide` (a temporary file's name) replaced by
 * `shown`. A fatal signal meanwhile stops the child before mshim's
 * temporary files are removed. Returns the child's exit status, 127 when
 * it cannot be run, or -1 when it died of a signal or could not start. */
int cli_run(char *const argv[], const char *hide, const char *shown);

/* cli_run with more plumbing: each feed's bytes readable on the child's
 * descriptor fd (a pipe: a secret never touches a file; name it to the
 * program as /dev/fd/N, or N = 0 for standard input), and, with ret_out
 * non-NULL, the child's standard output collected (at most out_max bytes:
 * more is an error) into a malloc()ed, NUL-terminated buffer. quiet: the
 * child's standard error is dropped (the caller says what went wrong).
 * Same return values as cli_run; on -1 or 127 *ret_out is untouched. */
typedef struct cli_feed {
        int fd;                 /* in the child: 0, or 3 and up */
        const void *data;
        size_t size;
} cli_feed;
typedef struct cli_run_io_opts {
        const cli_feed *feeds;
        size_t n_feeds;
        char **ret_out;
        size_t *ret_out_size;
        size_t out_max;
        bool quiet;
} cli_run_io_opts;
int cli_run_io(char *const argv[], const cli_run_io_opts *o);

/* A secret read from the terminal on fd without echo, after `prompt` on
 * standard error; the terminal is restored even on a fatal signal. A
 * malloc()ed string without its newline, or NULL with a message. */
char *cli_tty_secret(int fd, const char *prompt);
/* Overwrite and free a secret. */
void cli_secret_free(char *s);
/* A new secret (a password being set): asked twice on fd, refused when
 * the two differ. */
char *cli_tty_new_secret(int fd, const char *prompt, const char *again);
/* The first line of data, without its line end (LF or CRLF), malloc()ed. */
char *cli_first_line(const uint8_t *data, size_t n);
/* The first line of the file at path (a --password-file), at most 1 MiB;
 * what names it in messages ("a password file"). */
char *cli_secret_file(const char *path, const char *what);

#endif
