/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * mshim log: decode a TCG event log, replay it, check each event's digest
 * against its payload, and compare the replay with PCR values from a file or
 * the TPM. All parsing is the core's (src/tcglog.c, src/evdata.c); this file
 * only drives it and prints. The JSON shape is docs/log-json.md.
 */
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include "cli.h"
#include "logwork.h"
#include "pcrtable.h"
#include "mb/evdata.h"
#include "mb/pcrs.h"

#define DEFAULT_LOG "/sys/kernel/security/tpm0/binary_bios_measurements"
#define JSON_SCHEMA "mshim-log/1"

typedef struct log_opts {
        const char *path;
        const char *pcrs_file;
        bool json, tpm, check, verbose, no_payload;
} log_opts;

typedef struct log_run {
        const log_opts *o;
        cli_file file;
        mb_tcglog log;
        mb_replay replay;
        json_sink js;
        uint32_t n_events, n_integrity_bad, n_short;
        mb_err err;             /* MB_OK or the decode error that stopped us */
        mb_pcr_values actual;
        bool have_actual;
        uint32_t n_pcr_bad;
        uint32_t n_compared;
} log_run;

static const char *format_name(const mb_tcglog *log) {
        switch (log->format) {
        case MB_TCGLOG_CRYPTO_AGILE: return "crypto-agile";
        case MB_TCGLOG_SHA1_LEGACY: return "sha1-legacy";
        }
        return NULL;
}

static const char *integrity_name(mb_integrity i) {
        return i == MB_INTEGRITY_OK ? "ok" : i == MB_INTEGRITY_MISMATCH ? "mismatch" : NULL;
}

/* ---- per-event output ---------------------------------------------------- */

/* The print callbacks of logwork_run: they run on several threads at once,
 * each event on its own sink, and only read r. Each event is a complete
 * JSON value; every one but the first (record 0) follows a comma. The
 * fixed members are written directly, as they are most of the output: their
 * keys are constants and their values numbers, hex, or names from our own
 * tables, none of which needs escaping. */
#define OUT_LIT(s) out_put(s, sizeof(s) - 1)

static void json_event(const void *ctx, const mb_tcglog_event *ev, mb_integrity integ, const char *conv) {
        const log_run *r = ctx;
        const char *name = mb_tcglog_type_name(ev->type);
        json_sink js;
        char lb[16];

        if (ev->number > 0)
                out_putc(',');
        OUT_LIT("{\"number\":");
        out_u64(ev->number);
        OUT_LIT(",\"offset\":");
        out_u64(ev->offset);
        OUT_LIT(",\"pcr\":");
        out_u64(ev->pcr);
        if (name) {
                OUT_LIT(",\"type\":\"");
                out_puts(name);
                out_putc('"');
        }
        OUT_LIT(",\"type_id\":");
        out_u64(ev->type);
        OUT_LIT(",\"digests\":{");
        for (uint32_t i = 0; i < ev->n_digests; i++) {
                if (i)
                        out_putc(',');
                out_putc('"');
                out_puts(cli_alg_label(ev->digests[i].alg, lb));
                OUT_LIT("\":\"");
                out_hex(ev->digests[i].bytes, ev->digests[i].size);
                out_putc('"');
        }
        OUT_LIT("},\"data_size\":");
        out_u64(ev->data_size);
        if (integ != MB_INTEGRITY_NOT_APPLICABLE) {
                OUT_LIT(",\"integrity\":\"");
                out_puts(integrity_name(integ));
                if (conv) {
                        OUT_LIT("\",\"convention\":\"");
                        out_puts(conv);
                }
                out_putc('"');
        }
        if (!r->o->no_payload) {
                json_sink_init_member(&js);
                mb_evdata_decode(ev, &js.emit);
        }
        out_putc('}');
}

static void text_event(const void *ctx, const mb_tcglog_event *ev, mb_integrity integ, const char *conv) {
        const log_run *r = ctx;
        const char *name = mb_tcglog_type_name(ev->type);
        char num[32];
        text_sink ts;

        snprintf(num, sizeof(num), "%5u  PCR %2u  ", ev->number, ev->pcr);
        out_puts(num);
        if (name)
                out_puts(name);
        else {
                snprintf(num, sizeof(num), "0x%08x", ev->type);
                out_puts(num);
        }
        for (size_t n = name ? strlen(name) : 10; n < 34; n++)
                out_putc(' ');
        /* One digest is enough to tell events apart in the table; -v shows all. */
        for (uint32_t i = 0; i < (r->o->verbose ? ev->n_digests : (ev->n_digests ? 1 : 0)); i++) {
                char lb[16];
                out_puts(cli_alg_label(ev->digests[i].alg, lb));
                out_putc(':');
                out_hex(ev->digests[i].bytes, r->o->verbose || ev->digests[i].size < 8 ? ev->digests[i].size : 8);
                out_puts(r->o->verbose ? " " : "..  ");
        }
        if (integ == MB_INTEGRITY_MISMATCH)
                out_puts("[DIGEST MISMATCH] ");
        if (!r->o->no_payload) {
                text_sink_init(&ts);
                mb_evdata_decode(ev, &ts.emit);
        }
        out_putc('\n');
}

/* ---- the decode/replay pass ---------------------------------------------- */

static void report_decode_error(log_run *r) {
        if (r->o->json) {
                mb_emit *e = &r->js.emit;
                mb_emit_begin_obj(e, "error");
                mb_emit_u64(e, "offset", r->log.err_offset);
                mb_emit_u64(e, "record", r->log.err_number);
                mb_emit_cstr(e, "message", r->log.err_reason ? r->log.err_reason : mb_strerror(r->err));
                mb_emit_end_obj(e);
        }
        cli_error("%s: malformed event log at byte offset %zu (record %u): %s", cli_input_name(r->o->path),
                  r->log.err_offset, r->log.err_number, r->log.err_reason ? r->log.err_reason : mb_strerror(r->err));
}

static void decode_all(log_run *r) {
        logwork_result res;

        if (r->o->json)
                mb_emit_begin_arr(&r->js.emit, "events");
        logwork_run(&r->log, &r->replay, r->o->json ? json_event : text_event, r, &r->file, &res);
        if (r->o->json)
                mb_emit_end_arr(&r->js.emit);
        r->n_events = res.n_events;
        r->n_integrity_bad = res.n_integrity_bad;
        r->n_short = res.n_short;
        r->err = res.err;
        /* Accepted (tpm2-tools' own test logs do it), but never silently. */
        if (res.n_short)
                cli_error("warning: %u record(s), the first #%u, carry fewer digests than the Spec ID header "
                          "declares; the banks they omit are replayed without them",
                          res.n_short, res.first_short);
}

/* ---- replayed PCRs ------------------------------------------------------- */

/* The replay's values of the PCRs the log extends. */
static void replay_table(const log_run *r, pcrtab *t) {
        for (uint32_t b = 0; b < r->replay.n_banks; b++) {
                const mb_pcr_bank *bank = &r->replay.banks[b];
                pcrtab_add(t, bank->alg, bank->size, bank->computable, bank->extended, bank->pcr);
        }
}

static void json_pcrs(log_run *r) {
        pcrtab t = { 0 };

        replay_table(r, &t);
        pcrtab_json(&t, &r->js.emit);
}

static void text_pcrs(log_run *r) {
        pcrtab t = { 0 };

        replay_table(r, &t);
        pcrtab_text(&t, PCRTAB_LIST, "\nReplayed PCRs, ");
}

/* ---- comparison with real PCR values ------------------------------------ */

/* Which PCRs a comparison covers: every PCR the log extends, and the static
 * PCRs 0-15 except 10 (IMA's, never in the firmware log), which must then
 * still hold their reset value. Dynamic PCRs 16-23 reset to other values and
 * are only compared when the log extends them. */
static bool compared_pcr(const mb_pcr_bank *bank, uint32_t i) {
        return (bank->extended & (1u << i)) || (i <= 15 && i != 10);
}

static void compare_bank(log_run *r, const mb_pcr_bank *bank) {
        char lb[16], line[64];
        mb_emit *e = &r->js.emit;

        for (uint32_t i = 0; i < MB_PCR_COUNT; i++) {
                const uint8_t *actual = mb_pcrs_get(&r->actual, bank->alg, i);
                bool ok;

                if (!actual || !compared_pcr(bank, i))
                        continue;
                ok = memcmp(bank->pcr[i], actual, bank->size) == 0;
                r->n_compared++;
                if (!ok)
                        r->n_pcr_bad++;
                if (r->o->json) {
                        mb_emit_begin_obj(e, NULL);
                        mb_emit_cstr(e, "bank", cli_alg_label(bank->alg, lb));
                        mb_emit_u64(e, "pcr", i);
                        mb_emit_hex(e, "replayed", bank->pcr[i], bank->size);
                        mb_emit_hex(e, "actual", actual, bank->size);
                        mb_emit_bool(e, "match", ok);
                        mb_emit_end_obj(e);
                        continue;
                }
                snprintf(line, sizeof(line), "  %-7s PCR %2u  %s\n", cli_alg_label(bank->alg, lb), i, ok ? "match" : "MISMATCH");
                out_puts(line);
                if (!ok) {
                        out_puts("    replayed: ");
                        out_hex(bank->pcr[i], bank->size);
                        out_puts("\n    actual:   ");
                        out_hex(actual, bank->size);
                        out_putc('\n');
                        cli_log_pcr_events(r->file.data, r->file.size, i, bank->alg);
                }
        }
}

static int load_actual(log_run *r) {
        if (cli_pcr_values_load(r->o->pcrs_file, &r->replay, &r->actual) < 0)
                return -1;
        r->have_actual = true;
        return 0;
}

static void compare_all(log_run *r) {
        if (r->o->json)
                mb_emit_begin_arr(&r->js.emit, "comparison");
        else
                out_puts(r->o->tpm ? "\nComparison with the TPM's PCRs:\n" : "\nComparison with the given PCR values:\n");
        for (uint32_t b = 0; b < r->replay.n_banks; b++)
                if (r->replay.banks[b].computable)
                        compare_bank(r, &r->replay.banks[b]);
        if (r->o->json)
                mb_emit_end_arr(&r->js.emit);
}

/* ---- driver -------------------------------------------------------------- */

static int finish(log_run *r) {
        if (r->err != MB_OK)
                return EXIT_BAD_INPUT;
        if (r->have_actual && r->n_compared == 0)
                cli_error("no PCR value to compare: %s has none for the log's banks",
                          r->o->tpm ? "the TPM" : r->o->pcrs_file);
        if (r->have_actual && (r->n_pcr_bad || r->n_compared == 0))
                return EXIT_CHECK_FAILED;
        if (r->o->check && r->n_integrity_bad)
                return EXIT_CHECK_FAILED;
        return 0;
}

static void text_summary(log_run *r) {
        char line[160];

        snprintf(line, sizeof(line), "\n%u events, format %s", r->n_events, format_name(&r->log));
        out_puts(line);
        if (r->n_integrity_bad) {
                snprintf(line, sizeof(line), "; %u event(s) whose digest does not cover their data", r->n_integrity_bad);
                out_puts(line);
        }
        if (r->have_actual) {
                snprintf(line, sizeof(line), "; %u of %u compared PCRs match", r->n_compared - r->n_pcr_bad, r->n_compared);
                out_puts(line);
        }
        out_putc('\n');
}

/* The members every mshim-log/1 object starts with. */
static void json_head(log_run *r) {
        mb_emit *e = &r->js.emit;

        mb_emit_begin_obj(e, NULL);
        mb_emit_cstr(e, "schema", JSON_SCHEMA);
        mb_emit_cstr(e, "mshim_version", MB_VERSION);
        mb_emit_cstr(e, "file", r->o->path);
}

/* The header's facts, once it was read. */
static void json_format(log_run *r) {
        mb_emit *e = &r->js.emit;
        char lb[16];

        mb_emit_cstr(e, "format", format_name(&r->log));
        mb_emit_begin_arr(e, "algorithms");
        for (uint32_t i = 0; i < r->log.n_algs; i++)
                mb_emit_cstr(e, NULL, cli_alg_label(r->log.algs[i].alg, lb));
        mb_emit_end_arr(e);
}

/* The members every object ends with, whatever went wrong before: a log
 * malformed at its first record still has (empty) events and PCRs. */
static void json_tail(log_run *r) {
        mb_emit *e = &r->js.emit;

        mb_emit_u64(e, "event_count", r->n_events);
        mb_emit_u64(e, "integrity_mismatches", r->n_integrity_bad);
        mb_emit_u64(e, "records_missing_digests", r->n_short);
        json_pcrs(r);
}

/* The values to compare with come first, so a missing file or TPM is
 * reported before the log is printed, not after. */
static int prepare_compare(log_run *r) {
        if (!r->o->pcrs_file && !r->o->tpm)
                return 0;
        if (load_actual(r) == 0)
                return 0;
        if (r->o->json) {
                mb_emit_begin_obj(&r->js.emit, "error");
                mb_emit_cstr(&r->js.emit, "message",
                             r->o->tpm ? "cannot read the TPM's PCRs" : "cannot read the PCR values file");
                mb_emit_end_obj(&r->js.emit);
        }
        return -1;
}

static int run_log(const log_opts *o) {
        log_run *r = calloc(1, sizeof(*r));
        int ret = EXIT_BAD_INPUT;
        bool decoded = false;

        if (!r) {
                cli_error("out of memory");
                return EXIT_BAD_INPUT;
        }
        r->o = o;
        if (cli_input_load(o->path, &r->file) < 0)
                goto out;
        json_sink_init(&r->js);
        if (o->json)
                json_head(r);
        r->err = mb_tcglog_open(&r->log, r->file.data, r->file.size);
        if (r->err == MB_OK) {
                mb_replay_init(&r->replay, &r->log);
                if (o->json)
                        json_format(r);
                if (prepare_compare(r) == 0) {
                        decode_all(r);
                        decoded = true;
                }
        }
        if (!decoded && o->json) {
                mb_emit_begin_arr(&r->js.emit, "events");
                mb_emit_end_arr(&r->js.emit);
        }
        if (r->err != MB_OK)
                report_decode_error(r);
        if (o->json)
                json_tail(r);
        else if (decoded)
                text_pcrs(r);
        if (decoded && r->err == MB_OK && r->have_actual)
                compare_all(r);
        if (decoded && !o->json)
                text_summary(r);
        ret = decoded ? finish(r) : EXIT_BAD_INPUT;
        if (o->json) {
                mb_emit_end_obj(&r->js.emit);
                out_putc('\n');
        }
        if (out_finish() < 0)
                ret = EXIT_BAD_INPUT;
        cli_file_free(&r->file);
out:
        free(r);
        return ret;
}

int cmd_log(int argc, char **argv) {
        static const struct option longopts[] = {
                { "json", no_argument, NULL, 'j' },
                { "pcrs", required_argument, NULL, 'p' },
                { "tpm", no_argument, NULL, 't' },
                { "check", no_argument, NULL, 'c' },
                { "verbose", no_argument, NULL, 'v' },
                { "no-payload", no_argument, NULL, 'n' },
                { "help", no_argument, NULL, 'h' },
                { 0 },
        };
        log_opts o = { 0 };
        int c;

        if (argc > 1 && strcmp(argv[1], "diff") == 0)
                return cmd_log_diff(argc - 1, argv + 1);
        while ((c = cli_getopt(argc, argv, "vh", longopts, "log")) != -1) {
                switch (c) {
                case 'j': o.json = true; break;
                case 'p':
                        if (cli_opt_once(&o.pcrs_file, "--pcrs", optarg) < 0)
                                return EXIT_BAD_INPUT;
                        break;
                case 't': o.tpm = true; break;
                case 'c': o.check = true; break;
                case 'v': o.verbose = true; break;
                case 'n': o.no_payload = true; break;
                case 'h': cli_help(stdout, "log"); return 0;
                default: return EXIT_BAD_INPUT;
                }
        }
        if (o.pcrs_file && o.tpm)
                return cli_usage_error("log", "--pcrs and --tpm cannot be used together");
        if (argc - optind > 1)
                return cli_usage_error("log", "log takes one FILE");
        o.path = optind < argc ? argv[optind] : DEFAULT_LOG;
        return run_log(&o);
}
