/* SPDX-License-Identifier: BSD-2-Clause */
/* Reading PCRs from a TPM through tpm2-tss ESAPI (TCG TSS 2.0 ESAPI spec). */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <tss2/tss2_esys.h>
#include <tss2/tss2_rc.h>
#include <tss2/tss2_tctildr.h>
#include "cli.h"
#include "tpmseal.h"

/* The environment variables tpm2-tools users already set, in its order. */
static const char *tcti_conf(void) {
        static const char *vars[] = { "TPM2TOOLS_TCTI", "TCTI", "TSS2_TCTI" };
        for (size_t i = 0; i < MB_ARRAY_SIZE(vars); i++) {
                const char *v = getenv(vars[i]);
                if (v && *v)
                        return v;
        }
        return NULL;    /* tpm2-tss picks its default (tabrmd, /dev/tpmrm0, ...) */
}

/* PCRs 0-23 are pcrSelect's three bytes, bit i of byte i / 8 (TPM 2.0
 * Part 2, 10.6.2 TPMS_PCR_SELECTION). */
static void select_pcrs(TPML_PCR_SELECTION *sel, const uint16_t *algs, uint32_t n, uint32_t mask) {
        memset(sel, 0, sizeof(*sel));
        sel->count = n;
        for (uint32_t i = 0; i < n; i++) {
                sel->pcrSelections[i].hash = algs[i];
                sel->pcrSelections[i].sizeofSelect = 3;
                for (int k = 0; k < 3; k++)
                        sel->pcrSelections[i].pcrSelect[k] = (uint8_t) (mask >> (8 * k));
        }
}

static bool selection_empty(const TPML_PCR_SELECTION *sel) {
        for (uint32_t i = 0; i < sel->count; i++)
                for (int k = 0; k < 3; k++)
                        if (sel->pcrSelections[i].pcrSelect[k])
                                return false;
        return true;
}

/* TPM2_PCR_Read returns at most TPML_DIGEST's 8 values per call (TPM 2.0
 * Part 3, 22.4): take what came, drop it from the request, ask again. */
static int store(TPML_PCR_SELECTION *want, const TPML_PCR_SELECTION *got, const TPML_DIGEST *vals, mb_pcr_values *ret) {
        uint32_t k = 0;

        for (uint32_t s = 0; s < got->count; s++) {
                const TPMS_PCR_SELECTION *g = &got->pcrSelections[s];
                for (uint32_t pcr = 0; pcr < MB_PCR_COUNT; pcr++) {
                        if (!(g->pcrSelect[pcr / 8] & (1u << (pcr % 8))))
                                continue;
                        if (k >= vals->count ||
                            mb_pcrs_set(ret, g->hash, pcr, vals->digests[k].buffer, vals->digests[k].size) != MB_OK)
                                return -1;
                        k++;
                        for (uint32_t w = 0; w < want->count; w++)
                                if (want->pcrSelections[w].hash == g->hash)
                                        want->pcrSelections[w].pcrSelect[pcr / 8] &= (uint8_t) ~(1u << (pcr % 8));
                }
        }
        return k ? 0 : -1;
}

static int read_loop(ESYS_CONTEXT *ctx, const uint16_t *algs, uint32_t n_algs, uint32_t mask, mb_pcr_values *ret) {
        TPML_PCR_SELECTION want;

        select_pcrs(&want, algs, n_algs, mask);
        while (!selection_empty(&want)) {
                TPML_PCR_SELECTION *got = NULL;
                TPML_DIGEST *vals = NULL;
                TSS2_RC rc = Esys_PCR_Read(ctx, ESYS_TR_NONE, ESYS_TR_NONE, ESYS_TR_NONE, &want, NULL, &got, &vals);
                int r = rc == TSS2_RC_SUCCESS ? store(&want, got, vals, ret) : -1;

                Esys_Free(got);
                Esys_Free(vals);
                if (rc != TSS2_RC_SUCCESS) {
                        cli_error("reading PCRs from the TPM failed: %s", Tss2_RC_Decode(rc));
                        return -1;
                }
                if (r < 0) {
                        /* The TPM has no such bank active, or answered nonsense. */
                        cli_error("the TPM returned no values for the requested PCRs");
                        return -1;
                }
        }
        return 0;
}

/* A TCTI that connects but never answers (a stuck simulator, a wedged
 * resource manager) would block tpm2-tss forever: a watchdog ends the
 * process with a message instead. MSHIM_TPM_TIMEOUT sets it in seconds. */
#define TPM_TIMEOUT_DEFAULT 30
static char timeout_msg[96];

static void tpm_timed_out(int sig) {
        ssize_t n;
        (void) sig;
        n = write(STDERR_FILENO, timeout_msg, strlen(timeout_msg));
        (void) n;
        _exit(EXIT_BAD_INPUT);
}

static void watchdog_start(void) {
        const char *env = getenv("MSHIM_TPM_TIMEOUT");
        long secs = env && *env ? strtol(env, NULL, 10) : TPM_TIMEOUT_DEFAULT;

        if (secs <= 0)
                secs = TPM_TIMEOUT_DEFAULT;
        snprintf(timeout_msg, sizeof(timeout_msg), "%s: the TPM did not answer within %ld s (MSHIM_TPM_TIMEOUT)\n",
                 mb_prog, secs);
        signal(SIGALRM, tpm_timed_out);
        alarm((unsigned) secs);
}

/* The banks the TPM has PCRs allocated in (TPM2_CAP_PCRS, TPM 2.0 Part 3,
 * 30.2): a bank with no PCR selected is implemented but inactive. */
static int active_banks(ESYS_CONTEXT *ctx, uint16_t *algs, uint32_t *n) {
        TPMS_CAPABILITY_DATA *cap = NULL;
        TPMI_YES_NO more;
        TSS2_RC rc = Esys_GetCapability(ctx, ESYS_TR_NONE, ESYS_TR_NONE, ESYS_TR_NONE, TPM2_CAP_PCRS, 0, 1, &more, &cap);

        if (rc != TSS2_RC_SUCCESS) {
                cli_error("asking the TPM for its PCR banks failed: %s", Tss2_RC_Decode(rc));
                return -1;
        }
        *n = 0;
        for (uint32_t i = 0; i < cap->data.assignedPCR.count && *n < MB_TCGLOG_MAX_ALGS; i++) {
                const TPMS_PCR_SELECTION *s = &cap->data.assignedPCR.pcrSelections[i];
                bool any = false;
                for (uint32_t k = 0; k < s->sizeofSelect && k < sizeof(s->pcrSelect); k++)
                        any |= s->pcrSelect[k] != 0;
                if (any)
                        algs[(*n)++] = s->hash;
        }
        Esys_Free(cap);
        return 0;
}

/* With no banks asked for, every active bank mshim knows the digest size
 * of; a bank asked for must be active. */
static int choose_banks(ESYS_CONTEXT *ctx, const uint16_t *want, uint32_t n_want, uint16_t *algs, uint32_t *n) {
        uint16_t active[MB_TCGLOG_MAX_ALGS];
        uint32_t n_active;
        char lb[16];

        if (active_banks(ctx, active, &n_active) < 0)
                return -1;
        *n = 0;
        for (uint32_t i = 0; !n_want && i < n_active; i++)
                if (mb_hash_size(active[i]))
                        algs[(*n)++] = active[i];
        for (uint32_t i = 0; i < n_want; i++) {
                bool found = false;
                for (uint32_t k = 0; k < n_active; k++)
                        found |= active[k] == want[i];
                if (!found) {
                        cli_error("the TPM has no active %s bank", cli_alg_label(want[i], lb));
                        return -1;
                }
                algs[(*n)++] = want[i];
        }
        if (!*n)
                cli_error("the TPM has no active PCR bank mshim can read");
        return *n ? 0 : -1;
}

int cli_tpm_connect(cli_tpm *t) {
        const char *conf = tcti_conf();
        TSS2_RC rc;

        t->tcti = NULL;
        t->esys = NULL;
        /* tpm2-tss logs its own errors to stderr; ours say the same once. */
        setenv("TSS2_LOG", "all+none", 0);
        watchdog_start();
        rc = Tss2_TctiLdr_Initialize(conf, &t->tcti);
        if (rc != TSS2_RC_SUCCESS) {
                alarm(0);
                cli_error("cannot reach a TPM%s%s: %s", conf ? " through TCTI " : "", conf ? conf : "", Tss2_RC_Decode(rc));
                return -1;
        }
        rc = Esys_Initialize(&t->esys, t->tcti, NULL);
        if (rc != TSS2_RC_SUCCESS) {
                cli_error("cannot initialise ESAPI: %s", Tss2_RC_Decode(rc));
                cli_tpm_disconnect(t);
                return -1;
        }
        return 0;
}

void cli_tpm_disconnect(cli_tpm *t) {
        Esys_Finalize(&t->esys);
        Tss2_TctiLdr_Finalize(&t->tcti);
        alarm(0);
}

int cli_tpm_pcr_read(cli_tpm *t, const uint16_t *want, uint32_t n_want, uint32_t mask, mb_pcr_values *ret) {
        mb_pcr_values v = { 0 };
        uint16_t algs[MB_TCGLOG_MAX_ALGS];
        uint32_t n_algs;

        if (choose_banks(t->esys, want, n_want, algs, &n_algs) < 0 || read_loop(t->esys, algs, n_algs, mask, &v) < 0)
                return -1;
        *ret = v;
        return 0;
}

int cli_tpm_pcr_read_bank(cli_tpm *t, uint16_t alg, uint32_t mask, mb_pcr_values *ret) {
        mb_pcr_values v = { 0 };

        /* No GetCapability first: unseal counts its commands. An inactive
         * bank returns no values, which read_loop reports. */
        if (read_loop(t->esys, &alg, 1, mask, &v) < 0)
                return -1;
        *ret = v;
        return 0;
}

int cli_tpm_read_pcrs(const uint16_t *algs, uint32_t n_algs, uint32_t mask, mb_pcr_values *ret) {
        cli_tpm t;
        int r;

        if (cli_tpm_connect(&t) < 0)
                return -1;
        r = cli_tpm_pcr_read(&t, algs, n_algs, mask, ret);
        cli_tpm_disconnect(&t);
        return r;
}

int cli_pcr_values_load(const char *pcrs_file, const mb_replay *replay, mb_pcr_values *ret) {
        uint16_t algs[MB_TCGLOG_MAX_ALGS];
        uint32_t n = 0;
        cli_file f;
        mb_err err;

        if (!pcrs_file) {
                for (uint32_t b = 0; b < replay->n_banks; b++)
                        if (replay->banks[b].computable)
                                algs[n++] = replay->banks[b].alg;
                return cli_tpm_read_pcrs(algs, n, MB_PCR_ALL, ret);
        }
        if (cli_file_load(pcrs_file, &f) < 0)
                return -1;
        err = mb_pcrs_parse((const char *) f.data, f.size, ret);
        cli_file_free(&f);
        if (err == MB_OK)
                return 0;
        if (ret->err_line)
                cli_error("%s:%zu: not a PCR value line (expected tpm2_pcrread YAML or \"sha256:0=<hex>\")",
                          pcrs_file, ret->err_line);
        else
                cli_error("%s: no PCR values found", pcrs_file);
        return -1;
}
