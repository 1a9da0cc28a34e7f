/* SPDX-License-Identifier: BSD-2-Clause */
/* Shared pieces of the host CLI: file loading, output sinks, errors. */
#ifndef MB_CLI_H
#define MB_CLI_H

#include <getopt.h>
#include <stdio.h>
#include "mb/emit.h"
#include "mb/tcglog.h"
#include "mb/pcrs.h"
#include "help.h"

/* Exit statuses, documented in `mshim --help`. */
#define EXIT_CHECK_FAILED 1 /* a verification found a mismatch */
#define EXIT_BAD_INPUT    2 /* usage error, unreadable or malformed input */

extern const char *mb_prog;

/* A bank's name in output: "sha256", or "alg_0x0027" by TPM_ALG_ID for an
 * algorithm without a name here. buf holds the latter. */
const char *cli_alg_label(uint16_t alg, char buf[16]);

/* Print "mshim: <message>" to stderr. */
void cli_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* A whole file, mapped read-only (or read, for pipes and sysfs files). */
typedef struct cli_file {
        const uint8_t *data;
        size_t size;
        void *map;      /* non-NULL when mmap()ed */
        size_t released;        /* bytes of the mapping given back (cli_file_release) */
        uint8_t *heap;  /* non-NULL when read() into memory */
} cli_file;
/* Streams (pipes, sysfs files) are read up to this size. */
#define CLI_STREAM_MAX ((size_t) 256 << 20)
int cli_file_load(const char *path, cli_file *ret);   /* prints its own error; 0 or -1 */
/* The same, where "-" means standard input (an event log piped in); messages
 * then name it CLI_STDIN_NAME. */
#define CLI_STDIN_NAME "standard input"
int cli_input_load(const char *path, cli_file *ret);
static inline const char *cli_input_name(const char *path) {
        return __builtin_strcmp(path, "-") == 0 ? CLI_STDIN_NAME : path;
}
/* The same for an input with a known size bound (whole MiB): a larger file
 * or stream is refused with "PATH: more than N MiB; not WHAT". */
int cli_file_load_max(const char *path, size_t max, const char *what, cli_file *ret);
/* Set a single-valued option once: given twice, it is an error (-1 with a
 * message), not "the last one wins". */
int cli_opt_once(const char **slot, const char *name, const char *value);
/* cli_opt_once for getopt_long's option c, named as the user gave it:
 * its long name in longopts, or "-o" for the short one. */
int cli_opt_once_for(const struct option *longopts, int c, const char **slot, const char *value);
void cli_file_free(cli_file *f);
/* The caller is done with bytes [0, upto) for now: a mapping gives their
 * pages back (they are read from the file again if touched), so a pass over
 * a large file holds only what it is working on. No effect on a file read
 * into memory. Safe to call from any one thread at a time. */
void cli_file_release(cli_file *f, size_t upto);

/* A buffered writer over stdout; the JSON and text sinks write through it.
 * The small writers are inline: `mshim log --json` calls them hundreds of
 * millions of times on a large log. The buffer is per thread: `mshim log`
 * formats events on several threads, each capturing its text in memory
 * (out_capture_begin/end) for the main thread to write in order. */
#define OUT_BUF_SIZE (1 << 16)
extern __thread char *out_buf;
extern __thread size_t out_len, out_cap;
void out_flush(void);
/* Flush and report a failed write (a full disk, a closed pipe): 0 or -1. */
int out_finish(void);
void out_put_slow(const char *s, size_t n);

static inline void out_put(const char *s, size_t n) {
        if (n <= out_cap - out_len) {
                __builtin_memcpy(out_buf + out_len, s, n);
                out_len += n;
        } else
                out_put_slow(s, n);
}
static inline void out_putc(char c) {
        if (out_len == out_cap)
                out_flush();
        out_buf[out_len++] = c;
}
static inline void out_puts(const char *s) { out_put(s, __builtin_strlen(s)); }

/* Text written by this thread between begin and end goes to c->buf (grown
 * as needed; reusable across captures) instead of stdout. */
typedef struct out_capture {
        char *buf;
        size_t len, cap;
} out_capture;
void out_capture_begin(out_capture *c);
void out_capture_end(out_capture *c);
void out_capture_free(out_capture *c);
void out_u64(uint64_t v);
void out_hex(const uint8_t *p, size_t n);

/* JSON sink (RFC 8259 string escaping, UTF-8 passed through). */
typedef struct json_sink {
        mb_emit emit;
        int depth;
        bool need_comma[64];
} json_sink;
void json_sink_init(json_sink *j);
/* A sink for more members of an object the caller has opened and already
 * written members of. */
void json_sink_init_member(json_sink *j);
/* Start the next member of the current container (prints the comma and key). */
void json_key(json_sink *j, const char *key);
void json_string(const char *s, size_t n);

/* One-line "key=value" text sink for the human-readable table. */
typedef struct text_sink {
        mb_emit emit;
        int depth;
        bool need_sep[64];
} text_sink;
void text_sink_init(text_sink *t);

int cmd_log(int argc, char **argv);
int cmd_log_diff(int argc, char **argv);
int cmd_sign(int argc, char **argv);     /* tools/cmd/sign.c */
/* `mshim sign --key KEY --cert CERT [--pass-file F] -o OUT IMAGE`, checks
 * included (tools/cmd/sign.c): 0, or an exit status with a message. */
int cli_sign_image(const char *key, const char *cert, const char *pass_file, const char *image, const char *out);
int cmd_install(int argc, char **argv);   /* tools/cmd/install.c */
int cmd_uninstall(int argc, char **argv); /* tools/cmd/install.c */
int cmd_status(int argc, char **argv);    /* tools/cmd/status.c */
int cmd_sigs(int argc, char **argv);     /* tools/cmd/sigs.c */
int cmd_pe_hash(int argc, char **argv);
int cmd_sbat(int argc, char **argv);
int cmd_vars(int argc, char **argv);
int cmd_boot_policy(int argc, char **argv);  /* tools/cmd/bootpolicy.c */
int cmd_pcrs(int argc, char **argv);     /* tools/cmd/pcrs.c */
int cmd_predict(int argc, char **argv);  /* tools/cmd/predict.c */
int cmd_policy(int argc, char **argv);   /* tools/cmd/policy.c */
int cmd_seal(int argc, char **argv);     /* tools/cmd/seal.c */
int cmd_unseal(int argc, char **argv);   /* tools/cmd/unseal.c */
int cmd_fence(int argc, char **argv);    /* tools/cmd/fence.c */
int cmd_totp(int argc, char **argv);     /* tools/cmd/totp.c */
int cmd_attest(int argc, char **argv);   /* tools/cmd/attest.c */
int cmd_verify(int argc, char **argv);   /* tools/cmd/verify.c */
int cmd_luks(int argc, char **argv);     /* tools/cmd/luks.c */
int cmd_set_default(int argc, char **argv);  /* tools/cmd/bootvars.c */
int cmd_set_oneshot(int argc, char **argv);  /* tools/cmd/bootvars.c */
int cmd_bless(int argc, char **argv);    /* tools/cmd/bless.c */

/* The events of a log (data, size) that extended PCR pcr, with their alg
 * digests, as `mshim log --pcrs` and `mshim unseal` list them under a
 * mismatching PCR (through out_*: capture them to print elsewhere;
 * tools/lib/pcrtable.c). */
void cli_log_pcr_events(const uint8_t *data, size_t size, uint32_t pcr, uint16_t alg);

/* "0-7,9,12": PCR numbers 0-23 and ranges, comma-separated, into a mask
 * (bit i: PCR i): 0, or -1 (no message). And back, ascending, no ranges. */
int cli_pcr_select_parse(const char *arg, uint32_t *ret);
#define CLI_PCR_LIST_MAX 80
void cli_pcr_select_print(uint32_t mask, char buf[CLI_PCR_LIST_MAX]);

/* Read the PCRs in mask (bit i: PCR i) of the given banks, each of which
 * must be active, or of every active bank when n_algs is 0, from the TPM
 * named by the usual TCTI environment (TPM2TOOLS_TCTI, TCTI, TSS2_TCTI;
 * else tpm2-tss's default). Bounded by MSHIM_TPM_TIMEOUT. */
#define MB_PCR_ALL 0xffffffu
int cli_tpm_read_pcrs(const uint16_t *algs, uint32_t n_algs, uint32_t mask, mb_pcr_values *ret);
/* The PCR values to check a replay against: from pcrs_file (the forms
 * mb_pcrs_parse reads), or with pcrs_file NULL from the TPM, for every bank
 * of replay mshim can hash. Prints its own error; 0 or -1. */
int cli_pcr_values_load(const char *pcrs_file, const mb_replay *replay, mb_pcr_values *ret);

#endif
