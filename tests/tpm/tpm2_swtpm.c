/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * src/tpm2.c against a real TPM: the bytes its builders write go to the TPM
 * unchanged through a tpm2-tss TCTI (Tss2_Tcti_Transmit/Receive, nothing
 * of tpm2-tss marshals or parses them), and its parsers read the TPM's
 * answers. tests/cli/test_tpm2_swtpm.sh starts swtpm, sets up the keys with
 * tpm2-tools, runs this program and checks what it prints against values
 * computed in Python. Output: one "key value" line per result; a TPM
 * refusal is "refused STEP 0xRC NAME". Exit 0 when the sequence ran to its
 * end or to a TPM refusal, 2 when the TPM could not be reached or answered
 * something the parsers refused (which the test reports as a failure).
 *
 *   tpm2_swtpm TCTI totp KEY BANK PCRMASK COUNTER [PCRDIGEST]
 *       StartAuthSession, PolicyPCR (with PCRDIGEST if given, else empty),
 *       HMAC-SHA1 of COUNTER as 8 bytes big-endian with the session closing
 *       on success, FlushContext only when something failed.
 *   tpm2_swtpm TCTI totp-or KEY BANK PCRMASK COUNTER BRANCHES
 *       The same with a PolicyOR of BRANCHES (2 to 8 SHA-256 digests,
 *       concatenated) after PolicyPCR.
 *   tpm2_swtpm TCTI signed KEY HIER NVINDEX EPOCH BANK PCRMASK X Y R S APPROVED COUNTER [REF]
 *       StartAuthSession, PolicyNV (index <= EPOCH), PolicyPCR, then
 *       LoadExternal (HIER o or n) of the P-256 key (X, Y), VerifySignature
 *       of (R, S) over SHA-256(APPROVED || REF), FlushContext of the key,
 *       PolicyAuthorize, PolicyGetDigest, HMAC, FlushContext on failure.
 *       With REF (make bench) no PolicyGetDigest, and PolicyPCR of PCR 13
 *       (SHA-256, all zeros: the TOTP key's lock) after PolicyAuthorize:
 *       the loader's commands.
 *   tpm2_swtpm TCTI totp-log LOG KEY COUNTER
 *       Root's own way to the enrolled state: LOG (this boot's event log)
 *       replayed in SHA-256 up to the TOTP fence, PCRs 4, 5, 7, 12 give the
 *       state ("state HEX", its digest), then the loader's literal sequence
 *       with that state: PolicyPCR, PolicyOR of the leaf with itself, HMAC.
 *   tpm2_swtpm TCTI readpublic HANDLE
 *   tpm2_swtpm TCTI raw COMMAND
 *       COMMAND (hex, a whole command) sent as is: its response code and,
 *       for make bench, the time (below). A handle it returns is flushed.
 *
 * Last lines: "commands N" and "tpm_us N", the microseconds spent in the
 * TPM's round trips (transmit to receive), so that make bench can time the
 * TPM's work apart from this process's start.
 * Built with -DTPM2_DEV (tpm2_dev, static, for the test guest's
 * initramfs: tests/integration/test_totp.sh), TCTI is a TPM character
 * device (/dev/tpm0) written and read directly: the same sequences from
 * inside a booted system, with no tpm2-tss there.
 *
 * Numbers are hex (0x optional); byte strings are hex. TPM2_SWTPM_DUMP:
 * see dump().
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#ifdef TPM2_DEV
#include <errno.h>
#include <fcntl.h>
#include <unistd.h>
#else
#include <tss2/tss2_tctildr.h>
#endif

#include "mb/tpm2.h"
#include "mb/policy.h"
#include "mb/sha.h"
#include "mb/tcglog.h"
#include "mb/totp.h"

#ifdef TPM2_DEV
static int dev = -1;
#else
static TSS2_TCTI_CONTEXT *tcti;
#endif
static unsigned n_commands;
static unsigned long long tpm_ns;
static uint8_t cmd[MB_TPM2_MAX_COMMAND], rsp[MB_TPM2_MAX_COMMAND];

static void die(const char *what, long code) {
        printf("error %s 0x%lx\n", what, code);
        exit(2);
}

static unsigned long num(const char *s) {
        char *end;
        unsigned long v = strtoul(s, &end, 16);
        if (!*s || *end)
                die("bad number argument", 0);
        return v;
}

static size_t hex(const char *s, uint8_t *out, size_t max) {
        size_t n = strlen(s) / 2;
        if (strlen(s) % 2 || n > max)
                die("bad hex argument", (long) strlen(s));
        for (size_t i = 0; i < n; i++) {
                unsigned v;
                if (sscanf(s + 2 * i, "%2x", &v) != 1)
                        die("bad hex argument", (long) i);
                out[i] = (uint8_t) v;
        }
        return n;
}

static void print_hex(const char *key, const uint8_t *p, size_t n) {
        printf("%s ", key);
        for (size_t i = 0; i < n; i++)
                printf("%02x", p[i]);
        printf("\n");
}

/* With TPM2_SWTPM_DUMP=FILE, every command and response is appended to
 * FILE as two hex lines ("> ..." and "< ..."): the fuzz seeds of
 * tests/fuzz/corpus/tpm2_response are responses captured this way. */
static void dump(const uint8_t *c, size_t cn, const uint8_t *r, size_t rn) {
        const char *path = getenv("TPM2_SWTPM_DUMP");
        FILE *f = path ? fopen(path, "a") : NULL;

        if (!f)
                return;
        fputs(">", f);
        for (size_t i = 0; i < cn; i++)
                fprintf(f, "%02x", c[i]);
        fputs("\n<", f);
        for (size_t i = 0; i < rn; i++)
                fprintf(f, "%02x", r[i]);
        fputs("\n", f);
        fclose(f);
}

/* Sends cmd[0..*n) and returns the response's length in rsp. n is a
 * pointer because the builder call in the same argument list sets it. */
static size_t transact(mb_err built, const size_t *n) {
        size_t len = sizeof(rsp);
#ifndef TPM2_DEV
        TSS2_RC r;
#endif

        if (built != MB_OK)
                die("builder", built);
        n_commands++;
        struct timespec t0, t1;
        clock_gettime(CLOCK_MONOTONIC, &t0);
#ifdef TPM2_DEV
        /* The kernel's TPM device takes one whole command per write and
         * gives its whole response to the next read. */
        if (write(dev, cmd, *n) != (ssize_t) *n)
                die("transmit", errno);
        ssize_t got = read(dev, rsp, sizeof(rsp));
        if (got <= 0)
                die("receive", errno);
        len = (size_t) got;
#else
        if ((r = Tss2_Tcti_Transmit(tcti, *n, cmd)) != TSS2_RC_SUCCESS)
                die("transmit", (long) r);
        if ((r = Tss2_Tcti_Receive(tcti, &len, rsp, TSS2_TCTI_TIMEOUT_BLOCK)) != TSS2_RC_SUCCESS)
                die("receive", (long) r);
#endif
        clock_gettime(CLOCK_MONOTONIC, &t1);
        tpm_ns += (unsigned long long) (t1.tv_sec - t0.tv_sec) * 1000000000ull + (unsigned long long) t1.tv_nsec -
                  (unsigned long long) t0.tv_nsec;
        dump(cmd, *n, rsp, len);
        return len;
}

/* A parser's verdict: malformed is fatal; a TPM refusal is reported and
 * returns false. rc is a pointer: the parser in the same argument list
 * sets it. */
static bool ok(const char *step, mb_err parsed, const uint32_t *rcp) {
        uint32_t rc = *rcp;
        const char *name;

        if (parsed != MB_OK)
                die(step, parsed);
        if (rc == MB_TPM2_RC_SUCCESS)
                return true;
        name = mb_tpm2_rc_name(rc);
        printf("refused %s 0x%x %s\n", step, (unsigned) rc, name ? name : "?");
        return false;
}

static void flush(uint32_t handle) {
        size_t n = 0, len;
        uint32_t rc;

        len = transact(mb_tpm2_build_flush_context(cmd, sizeof(cmd), handle, &n), &n);
        if (ok("FlushContext", mb_tpm2_parse_empty(rsp, len, &rc), &rc))
                printf("flushed 0x%08x\n", (unsigned) handle);
}

static bool start_session(uint32_t *ret_session) {
        static const uint8_t nonce[16] = "mshim tpm2 test";
        mb_tpm2_digest nonce_tpm;
        size_t n = 0, len;
        uint32_t rc;

        len = transact(mb_tpm2_build_start_auth_session(cmd, sizeof(cmd), nonce, sizeof(nonce), &n), &n);
        if (!ok("StartAuthSession", mb_tpm2_parse_start_auth_session(rsp, len, &rc, ret_session, &nonce_tpm), &rc))
                return false;
        printf("session 0x%08x\n", (unsigned) *ret_session);
        return true;
}

static bool policy_pcr(uint32_t session, uint16_t bank, uint32_t mask, const uint8_t *digest, size_t digest_size) {
        size_t n = 0, len;
        uint32_t rc;

        len = transact(mb_tpm2_build_policy_pcr(cmd, sizeof(cmd), session, bank, mask, digest, digest_size, &n), &n);
        return ok("PolicyPCR", mb_tpm2_parse_empty(rsp, len, &rc), &rc);
}

/* HMAC-SHA1 of the 8-byte big-endian counter; the session closes on success. */
static bool hmac(uint32_t key, uint32_t session, uint64_t counter) {
        uint8_t step[8];
        mb_tpm2_digest out;
        size_t n = 0, len;
        uint32_t rc;

        for (int i = 0; i < 8; i++)
                step[i] = (uint8_t) (counter >> (56 - 8 * i));
        len = transact(mb_tpm2_build_hmac(cmd, sizeof(cmd), key, session, 0, step, sizeof(step), MB_ALG_SHA1, &n), &n);
        if (!ok("HMAC", mb_tpm2_parse_hmac(rsp, len, MB_ALG_SHA1, &rc, &out), &rc))
                return false;
        print_hex("hmac", out.b, out.size);
        return true;
}

static void get_digest(const char *key, uint32_t session) {
        mb_tpm2_digest d;
        size_t n = 0, len;
        uint32_t rc;

        len = transact(mb_tpm2_build_policy_get_digest(cmd, sizeof(cmd), session, &n), &n);
        if (ok("PolicyGetDigest", mb_tpm2_parse_policy_get_digest(rsp, len, &rc, &d), &rc))
                print_hex(key, d.b, d.size);
}

static bool policy_or(uint32_t session, const char *branches) {
        uint8_t list[8 * 32];
        size_t size = hex(branches, list, sizeof(list)), n = 0, len;
        uint32_t rc;

        len = transact(mb_tpm2_build_policy_or(cmd, sizeof(cmd), session, list, size / 32, 32, &n), &n);
        return ok("PolicyOR", mb_tpm2_parse_empty(rsp, len, &rc), &rc);
}

/* totp: KEY BANK PCRMASK COUNTER [PCRDIGEST [BRANCHES]]; totp-or: KEY BANK
 * PCRMASK COUNTER BRANCHES, a PolicyOR of the 32-byte digests BRANCHES after
 * PolicyPCR (empty pcrDigest). With PCRDIGEST and BRANCHES: the loader's
 * literal sequence, PolicyPCR with the state's digest then PolicyOR. */
static int totp(int argc, char **argv, bool with_or) {
        uint8_t digest[MB_TPM2_DIGEST_MAX];
        size_t digest_size = 0;
        const char *branches = with_or ? (argc == 5 ? argv[4] : NULL) : (argc == 6 ? argv[5] : NULL);
        uint32_t session;

        if (with_or ? argc != 5 : argc < 4 || argc > 6)
                die("usage", argc);
        if (argc >= 5 && !with_or)
                digest_size = hex(argv[4], digest, sizeof(digest));
        if (!start_session(&session))
                return 0;
        if (policy_pcr(session, (uint16_t) num(argv[1]), (uint32_t) num(argv[2]), digest, digest_size) &&
            (!branches || policy_or(session, branches)) && hmac((uint32_t) num(argv[0]), session, num(argv[3])))
                return 0;
        flush(session);
        return 0;
}

/* The log up to the fence (the TOTP point) replayed: the SHA-256 values of
 * PCRs 4, 5, 7, 12 concatenated, as an enrolment's state. */
static bool log_state(const char *path, uint8_t state[4 * 32]) {
        static uint8_t buf[1 << 20];
        static const unsigned pcrs[4] = { 4, 5, 7, 12 };
        uint8_t fence[MB_TOTP_FENCE_EVENT_SIZE];
        static mb_replay r;
        mb_tcglog log;
        mb_tcglog_event ev;
        mb_pcr_bank *b;
        FILE *f = fopen(path, "rb");
        size_t size = f ? fread(buf, 1, sizeof(buf), f) : 0;

        if (f)
                fclose(f);
        mb_totp_fence_event(fence);
        if (mb_tcglog_open(&log, buf, size) != MB_OK)
                return false;
        mb_replay_init(&r, &log);
        while (mb_tcglog_next(&log, &ev) == MB_OK) {
                if (ev.pcr == MB_TOTP_FENCE_PCR && ev.data_size == sizeof(fence) &&
                    memcmp(ev.data, fence, sizeof(fence)) == 0)
                        break;
                mb_replay_event(&r, &ev);
        }
        if (!(b = mb_replay_bank(&r, MB_ALG_SHA256)))
                return false;
        for (int i = 0; i < 4; i++)
                memcpy(state + 32 * i, b->pcr[pcrs[i]], 32);
        return true;
}

/* totp-log: LOG KEY COUNTER. */
static int totp_log(int argc, char **argv) {
        uint8_t state[4 * 32], digest[MB_POLICY_SIZE], st_digest[32];
        char branches[4 * MB_POLICY_SIZE + 1];
        mb_policy leaf;
        uint32_t session, mask = (1u << 4) | (1u << 5) | (1u << 7) | (1u << 12);

        if (argc != 3)
                die("usage", argc);
        if (!log_state(argv[0], state))
                die("cannot replay the event log", 0);
        mb_hash_buf(MB_ALG_SHA256, state, sizeof(state), st_digest);
        print_hex("state", st_digest, sizeof(st_digest));
        mb_policy_reset(&leaf);
        if (mb_policy_pcr_digest(state, 4, 32, digest) != MB_OK ||
            mb_policy_pcr(&leaf, MB_ALG_SHA256, mask, digest) != MB_OK)
                die("policy", 0);
        for (unsigned k = 0; k < 2; k++)
                for (unsigned i = 0; i < MB_POLICY_SIZE; i++)
                        sprintf(branches + 2 * (k * MB_POLICY_SIZE + i), "%02x", leaf.d[i]);
        if (!start_session(&session))
                return 0;
        if (policy_pcr(session, MB_ALG_SHA256, mask, digest, sizeof(digest)) && policy_or(session, branches) &&
            hmac((uint32_t) num(argv[1]), session, num(argv[2])))
                return 0;
        flush(session);
        return 0;
}

static bool policy_nv(uint32_t session, uint32_t index, uint64_t epoch) {
        uint8_t operand[8];
        size_t n = 0, len;
        uint32_t rc;

        for (int i = 0; i < 8; i++)
                operand[i] = (uint8_t) (epoch >> (56 - 8 * i));
        len = transact(mb_tpm2_build_policy_nv(cmd, sizeof(cmd), session, index, NULL, 0, operand, sizeof(operand), 0,
                                               MB_TPM_EO_UNSIGNED_LE, &n), &n);
        return ok("PolicyNV", mb_tpm2_parse_policy_nv(rsp, len, &rc), &rc);
}

/* LoadExternal, VerifySignature and the key flushed again: the ticket. */
static uint8_t ref[64];
static size_t ref_size;

static bool verify(uint32_t hierarchy, const uint8_t *x, const uint8_t *y, const uint8_t *approved,
                   size_t approved_size, char **sig, mb_tpm2_ticket *ret_ticket, uint8_t *ret_name) {
        uint8_t pub[MB_TPM2_ECC_PUBLIC_SIZE], ahash[32], r[32], s[32];
        size_t rn = hex(sig[0], r, sizeof(r)), sn = hex(sig[1], s, sizeof(s)), n = 0, len;
        mb_tpm2_name name;
        uint32_t rc, key;
        bool good;

        mb_tpm2_ecc_public(x, y, pub);
        mb_tpm2_ecc_name(x, y, ret_name);
        print_hex("ecc_name", ret_name, MB_TPM2_ECC_NAME_SIZE);
        len = transact(mb_tpm2_build_load_external(cmd, sizeof(cmd), pub, sizeof(pub), hierarchy, &n), &n);
        if (!ok("LoadExternal", mb_tpm2_parse_load_external(rsp, len, &rc, &key, &name), &rc))
                return false;
        print_hex("tpm_name", name.b, name.size);
        /* aHash = SHA-256(approvedPolicy || policyRef) (Part 3 §23.16). */
        {
                mb_policy a;
                if (approved_size != sizeof(a.d))
                        die("approved policy size", (long) approved_size);
                memcpy(a.d, approved, sizeof(a.d));
                mb_policy_authorize_ahash(&a, ref, ref_size, ahash);
        }
        len = transact(mb_tpm2_build_verify_signature(cmd, sizeof(cmd), key, ahash, sizeof(ahash), r, rn, s, sn, &n), &n);
        good = ok("VerifySignature", mb_tpm2_parse_verify_signature(rsp, len, &rc, ret_ticket), &rc);
        if (good)
                printf("ticket 0x%08x %u\n", (unsigned) ret_ticket->hierarchy, (unsigned) ret_ticket->digest.size);
        flush(key);
        return good;
}

static int signed_policy(int argc, char **argv) {
        uint8_t x[32], y[32], approved[MB_TPM2_DIGEST_MAX], key_name[MB_TPM2_ECC_NAME_SIZE];
        size_t approved_size, n = 0, len;
        mb_tpm2_ticket ticket;
        uint32_t session, rc, key, hier;

        if (argc != 12 && argc != 13)
                die("usage", argc);
        if (argc == 13)
                ref_size = hex(argv[12], ref, sizeof(ref));
        key = (uint32_t) num(argv[0]);
        hier = argv[1][0] == 'n' ? MB_TPM2_RH_NULL : MB_TPM2_RH_OWNER;
        if (hex(argv[6], x, sizeof(x)) != 32 || hex(argv[7], y, sizeof(y)) != 32)
                die("P-256 coordinates", 0);
        approved_size = hex(argv[10], approved, sizeof(approved));
        if (!start_session(&session))
                return 0;
        if (!policy_nv(session, (uint32_t) num(argv[2]), num(argv[3])) ||
            !policy_pcr(session, (uint16_t) num(argv[4]), (uint32_t) num(argv[5]), NULL, 0))
                goto fail;
        /* With REF (make bench), the loader's nine commands only. */
        if (!ref_size)
                get_digest("approved", session);
        if (!verify(hier, x, y, approved, approved_size, argv + 8, &ticket, key_name))
                goto fail;
        len = transact(mb_tpm2_build_policy_authorize(cmd, sizeof(cmd), session, approved, approved_size, ref, ref_size,
                                                      key_name, sizeof(key_name), &ticket, &n), &n);
        if (!ok("PolicyAuthorize", mb_tpm2_parse_empty(rsp, len, &rc), &rc))
                goto fail;
        if (!ref_size)
                get_digest("policy", session);
        else {
                uint8_t lock[MB_POLICY_SIZE];

                mb_totp_lock_digest(lock);
                if (!policy_pcr(session, MB_ALG_SHA256, 1u << MB_TOTP_LOCK_PCR, lock, sizeof(lock)))
                        goto fail;
        }
        if (hmac(key, session, num(argv[11])))
                return 0;
fail:
        flush(session);
        return 0;
}

/* raw COMMAND: sent unchanged; a handle in the answer (CreatePrimary's,
 * say: the first 4 bytes after the header, Part 3) is flushed, untimed. */
static int raw(int argc, char **argv) {
        size_t n, len;
        uint32_t rc, handle;

        if (argc != 1)
                die("usage", argc);
        n = hex(argv[0], cmd, sizeof(cmd));
        len = transact(MB_OK, &n);
        if (len < 10)
                die("short response", (long) len);
        rc = (uint32_t) rsp[6] << 24 | (uint32_t) rsp[7] << 16 | (uint32_t) rsp[8] << 8 | rsp[9];
        printf("rc 0x%x\n", (unsigned) rc);
        if (rc == 0 && len >= 14) {
                unsigned long long keep = tpm_ns;
                handle = (uint32_t) rsp[10] << 24 | (uint32_t) rsp[11] << 16 | (uint32_t) rsp[12] << 8 | rsp[13];
                flush(handle);
                n_commands--;
                tpm_ns = keep;
        }
        return 0;
}

static int read_public(int argc, char **argv) {
        const uint8_t *pub, *name;
        size_t pub_size, name_size, n = 0, len;
        mb_tpm2_name computed;
        uint32_t rc;

        if (argc != 1)
                die("usage", argc);
        len = transact(mb_tpm2_build_read_public(cmd, sizeof(cmd), (uint32_t) num(argv[0]), &n), &n);
        if (!ok("ReadPublic", mb_tpm2_parse_read_public(rsp, len, &rc, &pub, &pub_size, &name, &name_size), &rc))
                return 0;
        print_hex("public", pub, pub_size);
        print_hex("tpm_name", name, name_size);
        if (mb_tpm2_object_name(pub, pub_size, &computed) == MB_OK)
                print_hex("computed_name", computed.b, computed.size);
        return 0;
}

int main(int argc, char **argv) {
        int r;

        if (argc < 3) {
                fprintf(stderr, "usage: %s TCTI totp|totp-or|signed|readpublic ARGS...\n", argv[0]);
                return 2;
        }
#ifdef TPM2_DEV
        if ((dev = open(argv[1], O_RDWR)) < 0)
                die("cannot open the TPM device", errno);
#else
        if (Tss2_TctiLdr_Initialize(argv[1], &tcti) != TSS2_RC_SUCCESS)
                die("cannot open the TCTI", 0);
#endif
        if (strcmp(argv[2], "totp") == 0)
                r = totp(argc - 3, argv + 3, false);
        else if (strcmp(argv[2], "totp-or") == 0)
                r = totp(argc - 3, argv + 3, true);
        else if (strcmp(argv[2], "totp-log") == 0)
                r = totp_log(argc - 3, argv + 3);
        else if (strcmp(argv[2], "signed") == 0)
                r = signed_policy(argc - 3, argv + 3);
        else if (strcmp(argv[2], "readpublic") == 0)
                r = read_public(argc - 3, argv + 3);
        else if (strcmp(argv[2], "raw") == 0)
                r = raw(argc - 3, argv + 3);
        else
                die("unknown sequence", 0);
        printf("commands %u\ntpm_us %llu\n", n_commands, tpm_ns / 1000);
#ifdef TPM2_DEV
        close(dev);
#else
        Tss2_TctiLdr_Finalize(&tcti);
#endif
        return r;
}
