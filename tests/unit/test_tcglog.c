/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The event-log codec against the real logs in the corpus: every file must
 * decode to exactly the event count, format and replayed PCRs that
 * EXPECTED.json gives (values computed by other tools, see its README), and
 * the malformed ones must be rejected with an offset. Then truncations,
 * corruptions and hand-built records for the rules the corpus does not reach.
 */
#include "testlib.h"
#include "mb/tcglog.h"

/* ---- a small reader for EXPECTED.json (test-only) ------------------------ */

typedef struct expect {
        char file[128];
        bool error;
        char format[32];
        long events;
        int n;                       /* number of (bank, pcr, hex) triples */
        struct { char bank[16]; int pcr; char hex[129]; } v[256];
} expect;

static const char *js_ws(const char *p) {
        while (*p == ' ' || *p == '\n' || *p == '\r' || *p == '\t')
                p++;
        return p;
}

/* A JSON string without escapes (EXPECTED.json has none) into out. */
static const char *js_str(const char *p, char *out, size_t cap) {
        size_t n = 0;
        p = js_ws(p);
        if (*p++ != '"')
                return NULL;
        while (*p && *p != '"') {
                if (n + 1 < cap)
                        out[n++] = *p;
                p++;
        }
        out[n] = 0;
        return *p == '"' ? p + 1 : NULL;
}

static const char *js_skip_value(const char *p) {
        char tmp[512];
        int depth = 0;
        p = js_ws(p);
        if (*p == '"')
                return js_str(p, tmp, sizeof(tmp));
        do {
                if (*p == '{' || *p == '[')
                        depth++;
                else if (*p == '}' || *p == ']')
                        depth--;
                else if (*p == '"') {
                        p = js_str(p, tmp, sizeof(tmp)) - 1;
                }
                p++;
        } while (*p && (depth > 0 || (*p != ',' && *p != '}' && *p != ']')));
        return p;
}

static const char *parse_pcrs(const char *p, expect *e) {
        char bank[16], idx[8];
        p = js_ws(p);
        if (*p++ != '{')
                return NULL;
        while ((p = js_ws(p)) && *p == '"') {
                p = js_str(p, bank, sizeof(bank));
                p = js_ws(p) + 1; /* ':' */
                p = js_ws(p) + 1; /* '{' */
                while ((p = js_ws(p)) && *p == '"') {
                        p = js_str(p, idx, sizeof(idx));
                        p = js_ws(p) + 1;
                        strcpy(e->v[e->n].bank, bank);
                        e->v[e->n].pcr = atoi(idx);
                        p = js_str(p, e->v[e->n].hex, sizeof(e->v[e->n].hex));
                        e->n++;
                        p = js_ws(p);
                        if (*p == ',')
                                p++;
                }
                p = js_ws(p) + 1; /* '}' */
                p = js_ws(p);
                if (*p == ',')
                        p++;
        }
        return js_ws(p) + 1;
}

static const char *parse_entry(const char *p, expect *e) {
        char key[32];
        p = js_ws(p);
        if (*p++ != '{')
                return NULL;
        while ((p = js_ws(p)) && *p == '"') {
                p = js_str(p, key, sizeof(key));
                p = js_ws(p) + 1;
                if (!strcmp(key, "error")) {
                        e->error = true;
                        p = js_skip_value(p);
                } else if (!strcmp(key, "format"))
                        p = js_str(p, e->format, sizeof(e->format));
                else if (!strcmp(key, "events"))
                        e->events = strtol(js_ws(p), (char **) &p, 10);
                else if (!strcmp(key, "pcrs"))
                        p = parse_pcrs(p, e);
                else
                        p = js_skip_value(p);
                p = js_ws(p);
                if (*p == ',')
                        p++;
        }
        return js_ws(p) + 1;
}


static expect expects[64];
static int n_expects;

static void load_expected(void) {
        char path[512];
        size_t size;
        char *json, *p;

        snprintf(path, sizeof(path), "%s/eventlogs/EXPECTED.json", tl_corpus_dir());
        json = tl_read_file(path, &size);
        if (!json) {
                fprintf(stderr, "cannot read %s\n", path);
                exit(1);
        }
        p = (char *) js_ws(json) + 1;
        while ((p = (char *) js_ws(p)) && *p == '"' && n_expects < 64) {
                expect *e = &expects[n_expects++];
                p = (char *) js_str(p, e->file, sizeof(e->file));
                p = (char *) js_ws(p) + 1;
                p = (char *) parse_entry(p, e);
                p = (char *) js_ws(p);
                if (*p == ',')
                        p++;
        }
        free(json);
}

/* ---- helpers ---------------------------------------------------------------- */

static void to_hex(const uint8_t *p, size_t n, char *out) {
        for (size_t i = 0; i < n; i++)
                sprintf(out + 2 * i, "%02x", p[i]);
}

/* Decode a whole buffer; returns the final status (MB_END when clean). */
static mb_err decode(const uint8_t *buf, size_t size, mb_tcglog *log, mb_replay *rp, uint32_t *ret_count) {
        mb_tcglog_event ev;
        mb_err r = mb_tcglog_open(log, buf, size);
        uint32_t count = 0;

        if (r != MB_OK)
                return r;
        mb_replay_init(rp, log);
        while ((r = mb_tcglog_next(log, &ev)) == MB_OK) {
                /* every record must lie inside the buffer */
                CHECK(ev.offset + ev.record_size <= size);
                CHECK(ev.data >= buf && ev.data + ev.data_size <= buf + size);
                mb_replay_event(rp, &ev);
                count++;
        }
        *ret_count = count;
        return r;
}

/* ---- tests -------------------------------------------------------------------- */

static void check_file(const expect *e) {
        char path[512], hex[2 * MB_HASH_MAX + 1];
        size_t size;
        uint8_t *buf;
        mb_tcglog log;
        static mb_replay rp;
        uint32_t count = 0;
        mb_err r;

        snprintf(path, sizeof(path), "%s/eventlogs/%s", tl_corpus_dir(), e->file);
        buf = (uint8_t *) tl_read_file(path, &size);
        CHECK(buf != NULL);
        if (!buf)
                return;
        r = decode(buf, size, &log, &rp, &count);
        if (e->error) {
                CHECK(r != MB_OK && r != MB_END);
                CHECK(log.err_reason != NULL);
                free(buf);
                return;
        }
        CHECK_EQ_INT(r, MB_END);
        CHECK_EQ_INT(count, e->events);
        CHECK(strcmp(e->format, log.format == MB_TCGLOG_CRYPTO_AGILE ? "crypto-agile" : "sha1-legacy") == 0);
        /* Every expected value is reproduced ... */
        for (int i = 0; i < e->n; i++) {
                mb_pcr_bank *b = mb_replay_bank(&rp, mb_hash_alg_by_name(e->v[i].bank));
                CHECK(b != NULL);
                if (!b)
                        continue;
                CHECK(b->extended & (1u << e->v[i].pcr));
                to_hex(b->pcr[e->v[i].pcr], b->size, hex);
                if (strcmp(hex, e->v[i].hex) != 0) {
                        fprintf(stderr, "  %s %s PCR %d: got %s want %s\n", e->file, e->v[i].bank, e->v[i].pcr, hex, e->v[i].hex);
                        tl_case_failed = 1;
                }
        }
        /* ... and no PCR is extended that EXPECTED.json does not list. */
        for (uint32_t b = 0; b < rp.n_banks; b++)
                for (int pcr = 0; pcr < MB_PCR_COUNT; pcr++) {
                        bool listed = false;
                        if (!(rp.banks[b].extended & (1u << pcr)))
                                continue;
                        for (int i = 0; i < e->n; i++)
                                listed |= mb_hash_alg_by_name(e->v[i].bank) == rp.banks[b].alg && e->v[i].pcr == pcr;
                        CHECK(listed);
                }
        free(buf);
}

TEST(corpus_matches_expected) {
        CHECK(n_expects >= 17);
        for (int i = 0; i < n_expects; i++) {
                int before = tl_case_failed;
                tl_case_failed = 0;
                check_file(&expects[i]);
                if (tl_case_failed)
                        fprintf(stderr, "  ^ in %s\n", expects[i].file);
                tl_case_failed |= before;
        }
}

/* Every prefix and many corruptions of real logs: never out of bounds (ASan
 * watches), always either a clean end or an error that names an offset
 * inside the buffer. */
TEST(truncations_and_corruptions_fail_cleanly) {
        static const char *files[] = { "tpm2-tools-event-gce-ubuntu-2104-log.bin", "tpm2-tools-event-uefi-sha1-log.bin",
                                       "keylime-binary_bios_measurements.bin" };
        static mb_replay rp;
        srand(7);
        for (size_t f = 0; f < sizeof(files) / sizeof(files[0]); f++) {
                char path[512];
                size_t size;
                uint8_t *orig;
                snprintf(path, sizeof(path), "%s/eventlogs/%s", tl_corpus_dir(), files[f]);
                orig = (uint8_t *) tl_read_file(path, &size);
                CHECK(orig != NULL);
                if (!orig)
                        continue;
                /* A cut ends the log cleanly exactly when it falls on a
                 * record boundary (or at 0, which open refuses as empty). */
                bool *boundary = calloc(size + 1, 1);
                {
                        mb_tcglog log;
                        mb_tcglog_event ev;
                        CHECK_EQ_INT(mb_tcglog_open(&log, orig, size), MB_OK);
                        while (mb_tcglog_next(&log, &ev) == MB_OK)
                                boundary[ev.offset + ev.record_size] = true;
                }
                for (size_t cut = 0; cut < size; cut += cut > 4096 ? 1 + cut / 64 : 1) {
                        uint8_t *b = malloc(cut ? cut : 1);
                        mb_tcglog log;
                        uint32_t n;
                        mb_err r;
                        memcpy(b, orig, cut);
                        r = decode(b, cut, &log, &rp, &n);
                        CHECK((r == MB_END) == boundary[cut]);
                        if (r != MB_END)
                                CHECK(log.err_offset <= cut && log.err_reason != NULL);
                        free(b);
                }
                free(boundary);
                for (int k = 0; k < 2000; k++) {
                        uint8_t *b = malloc(size);
                        mb_tcglog log;
                        uint32_t n;
                        memcpy(b, orig, size);
                        for (int flips = 1 + rand() % 4; flips; flips--)
                                b[rand() % size] = (uint8_t) rand();
                        if (decode(b, size, &log, &rp, &n) != MB_END)
                                CHECK(log.err_reason != NULL);
                        free(b);
                }
                free(orig);
        }
}

/* Hand-built crypto-agile log: Spec ID header with sha256 only, then the given records. */
static size_t build_header(uint8_t *p, uint16_t alg, uint16_t size) {
        size_t o = 0;
        memset(p, 0, 32);
        mb_put_le32(p + 4, MB_EV_NO_ACTION);
        mb_put_le32(p + 28, 33);
        o = 32;
        memcpy(p + o, "Spec ID Event03", 16);
        memset(p + o + 16, 0, 8);
        p[o + 22] = 2;  /* spec major */
        p[o + 23] = 2;  /* uintn size */
        mb_put_le32(p + o + 24, 1);
        mb_put_le16(p + o + 28, alg);
        mb_put_le16(p + o + 30, size);
        p[o + 32] = 0;
        return o + 33;
}

static size_t add_record(uint8_t *p, uint32_t pcr, uint32_t type, uint32_t count, uint16_t alg, uint8_t fill, uint32_t data_size) {
        size_t o = 0;
        mb_put_le32(p, pcr);
        mb_put_le32(p + 4, type);
        mb_put_le32(p + 8, count);
        o = 12;
        for (uint32_t i = 0; i < count; i++) {
                mb_put_le16(p + o, alg);
                memset(p + o + 2, fill, 32);
                o += 34;
        }
        mb_put_le32(p + o, data_size);
        memset(p + o + 4, 'x', data_size);
        return o + 4 + data_size;
}

TEST(digest_count_and_algorithm_must_match_header) {
        uint8_t buf[512];
        mb_tcglog log;
        mb_tcglog_event ev;
        size_t n = build_header(buf, MB_ALG_SHA256, 32);

        add_record(buf + n, 0, MB_EV_SEPARATOR, 2, MB_ALG_SHA256, 1, 4); /* more digests than algorithms */
        CHECK_EQ_INT(mb_tcglog_open(&log, buf, sizeof(buf)), MB_OK);
        CHECK_EQ_INT(mb_tcglog_next(&log, &ev), MB_OK);
        CHECK_EQ_INT(mb_tcglog_next(&log, &ev), MB_ERR_INVALID);
        CHECK_EQ_INT(log.err_offset, n);
        CHECK_EQ_INT(log.err_number, 1);
        /* The message names the values that disagree. */
        CHECK(log.err_reason && strstr(log.err_reason, ": 2 digests, the header declares 1 algorithms"));

        add_record(buf + n, 0, MB_EV_SEPARATOR, 1, MB_ALG_SHA1, 1, 4);
        CHECK_EQ_INT(mb_tcglog_open(&log, buf, sizeof(buf)), MB_OK);
        CHECK_EQ_INT(mb_tcglog_next(&log, &ev), MB_OK);
        CHECK_EQ_INT(mb_tcglog_next(&log, &ev), MB_ERR_INVALID);
        CHECK(log.err_reason && strstr(log.err_reason, "TPM_ALG_ID 0x4"));
}

TEST(absurd_sizes_are_truncation_errors) {
        uint8_t buf[512];
        mb_tcglog log;
        mb_tcglog_event ev;
        size_t n = build_header(buf, MB_ALG_SHA256, 32), m;

        m = add_record(buf + n, 0, MB_EV_SEPARATOR, 1, MB_ALG_SHA256, 1, 4);
        mb_put_le32(buf + n + m - 8, 0xFFFFFFF0u);  /* event size */
        CHECK_EQ_INT(mb_tcglog_open(&log, buf, n + m), MB_OK);
        CHECK_EQ_INT(mb_tcglog_next(&log, &ev), MB_OK);
        CHECK_EQ_INT(mb_tcglog_next(&log, &ev), MB_ERR_TRUNCATED);
        CHECK(log.err_reason && strstr(log.err_reason, ": 4294967280 bytes declared, 4 left"));
        /* A header that declares a 65535-byte digest is refused up front. */
        build_header(buf, 0x0099, 0xFFFF);
        CHECK(mb_tcglog_open(&log, buf, sizeof(buf)) != MB_OK);
        CHECK(log.err_reason != NULL);
}

TEST(unknown_algorithm_kept_but_not_replayed) {
        uint8_t buf[512];
        mb_tcglog log;
        mb_tcglog_event ev;
        static mb_replay rp;
        size_t n = build_header(buf, 0x0027, 32);   /* SHA3-256 */

        n += add_record(buf + n, 4, MB_EV_SEPARATOR, 1, 0x0027, 1, 4);
        CHECK_EQ_INT(mb_tcglog_open(&log, buf, n), MB_OK);
        mb_replay_init(&rp, &log);
        while (mb_tcglog_next(&log, &ev) == MB_OK)
                mb_replay_event(&rp, &ev);
        CHECK_EQ_INT(rp.n_banks, 1);
        CHECK(!rp.banks[0].computable);
        CHECK(rp.banks[0].extended & (1u << 4));
}

/* A StartupLocality EV_NO_ACTION record (PFP 10.4.5.3): the signature, then
 * the locality byte. */
static size_t add_locality(uint8_t *p, uint32_t pcr, uint8_t locality) {
        size_t o = add_record(p, pcr, MB_EV_NO_ACTION, 1, MB_ALG_SHA256, 0, 17);
        memcpy(p + o - 17, "StartupLocality", 16);
        p[o - 1] = locality;
        return o;
}

/* Replay a synthetic sha256 log; PCR 0's hex and the extended mask. */
static void replay_pcr0(const uint8_t *buf, size_t n, char out[65], uint32_t *ret_extended) {
        static mb_replay rp;
        mb_tcglog log;
        mb_tcglog_event ev;

        CHECK_EQ_INT(mb_tcglog_open(&log, buf, n), MB_OK);
        mb_replay_init(&rp, &log);
        while (mb_tcglog_next(&log, &ev) == MB_OK)
                mb_replay_event(&rp, &ev);
        to_hex(rp.banks[0].pcr[0], 32, out);
        *ret_extended = rp.banks[0].extended;
}

/* PFP 3.3.4.2 and 10.4.5.3: PCR 0 starts at 0...04 after an H-CRTM event and
 * at 0...0L after StartupLocality L, each only before PCR 0's first extend;
 * PCRs 24 and above are never replayed. Expected values by hand with
 * Python's hashlib: sha256(start || 0xaa * 32), and so on. */
TEST(pcr0_start_and_high_pcr_rules) {
        uint8_t buf[1024];
        char got[65];
        uint32_t ext;
        size_t n;

        /* H-CRTM first; a later StartupLocality and PCRs 24 and
         * 0xFFFFFFFF change nothing. */
        n = build_header(buf, MB_ALG_SHA256, 32);
        n += add_record(buf + n, 0, MB_EV_EFI_HCRTM_EVENT, 1, MB_ALG_SHA256, 0xaa, 5);
        n += add_locality(buf + n, 0, 3);
        n += add_record(buf + n, 24, MB_EV_EFI_ACTION, 1, MB_ALG_SHA256, 0xbb, 3);
        n += add_record(buf + n, 0xFFFFFFFFu, MB_EV_EFI_ACTION, 1, MB_ALG_SHA256, 0xbb, 3);
        replay_pcr0(buf, n, got, &ext);
        CHECK(strcmp(got, "46adef7ba9f9875b2daa1dcd9ae40a5b85c4052eca39a3da3cb71ca09545a078") == 0);
        CHECK_EQ_INT(ext, 1);
        /* StartupLocality 3, then PCR 0's first extend. */
        n = build_header(buf, MB_ALG_SHA256, 32);
        n += add_locality(buf + n, 0, 3);
        n += add_record(buf + n, 0, MB_EV_S_CRTM_VERSION, 1, MB_ALG_SHA256, 0xaa, 2);
        replay_pcr0(buf, n, got, &ext);
        CHECK(strcmp(got, "864ceb27529792a58558fbc114476ded3b06ed18f3de1eeea9d522c308e1f7a7") == 0);
        /* StartupLocality after PCR 0's first extend is ignored. */
        n = build_header(buf, MB_ALG_SHA256, 32);
        n += add_record(buf + n, 0, MB_EV_S_CRTM_VERSION, 1, MB_ALG_SHA256, 0xaa, 2);
        n += add_locality(buf + n, 0, 3);
        replay_pcr0(buf, n, got, &ext);
        CHECK(strcmp(got, "9ef814b42fa0be12d197c44d3e8e03441a4b1118237658368ba1351090e556ed") == 0);
        /* StartupLocality belongs in PCR 0 (PFP 10.4.5.3); elsewhere it is
         * ignored. */
        n = build_header(buf, MB_ALG_SHA256, 32);
        n += add_locality(buf + n, 5, 3);
        n += add_record(buf + n, 0, MB_EV_S_CRTM_VERSION, 1, MB_ALG_SHA256, 0xaa, 2);
        replay_pcr0(buf, n, got, &ext);
        CHECK(strcmp(got, "9ef814b42fa0be12d197c44d3e8e03441a4b1118237658368ba1351090e556ed") == 0);
        /* An H-CRTM event that is not PCR 0's first is an ordinary extend. */
        n = build_header(buf, MB_ALG_SHA256, 32);
        n += add_record(buf + n, 0, MB_EV_S_CRTM_VERSION, 1, MB_ALG_SHA256, 0xaa, 2);
        n += add_record(buf + n, 0, MB_EV_EFI_HCRTM_EVENT, 1, MB_ALG_SHA256, 0xbb, 5);
        replay_pcr0(buf, n, got, &ext);
        CHECK(strcmp(got, "aaf51febf5ed5e45e5bcd62d127a21328f3b78b943377466fb57cf303b814b9a") == 0);
}

/* 1 to 31 bytes of junk after a real log's last record: an error at the
 * junk's offset, naming the record after the last real one. */
TEST(trailing_junk_rejected) {
        char path[512];
        size_t size;
        uint8_t *orig, *b;
        uint32_t n_clean = 0;
        static mb_replay rp;
        mb_tcglog log;

        snprintf(path, sizeof(path), "%s/eventlogs/qemu-ovmf-systemd-boot-linux61.bin", tl_corpus_dir());
        orig = tl_read_file(path, &size);
        CHECK(orig != NULL);
        if (!orig)
                return;
        CHECK_EQ_INT(decode(orig, size, &log, &rp, &n_clean), MB_END);
        b = malloc(size + 31);
        memcpy(b, orig, size);
        for (size_t junk = 1; junk <= 31; junk++) {
                uint32_t n;
                memset(b + size, (int) junk, junk);
                CHECK(decode(b, size + junk, &log, &rp, &n) != MB_END);
                CHECK_EQ_INT(log.err_offset, size);
                CHECK_EQ_INT(log.err_number, n_clean);
                CHECK_EQ_INT(n, n_clean);
        }
        free(b);
        free(orig);
}

TEST(empty_and_tiny_inputs) {
        mb_tcglog log;
        uint8_t b[40] = { 0 };
        CHECK_EQ_INT(mb_tcglog_open(&log, b, 0), MB_ERR_TRUNCATED);
        CHECK(log.err_reason && strstr(log.err_reason, "empty"));
        CHECK_EQ_INT(mb_tcglog_open(&log, b, 31), MB_ERR_TRUNCATED);
}

TEST(type_names) {
        CHECK(strcmp(mb_tcglog_type_name(MB_EV_IPL), "EV_IPL") == 0);
        CHECK(strcmp(mb_tcglog_type_name(MB_EV_EFI_VARIABLE_AUTHORITY), "EV_EFI_VARIABLE_AUTHORITY") == 0);
        CHECK(mb_tcglog_type_name(0x12345678) == NULL);
}

int main(void) {
        load_expected();
        RUN(corpus_matches_expected);
        RUN(truncations_and_corruptions_fail_cleanly);
        RUN(digest_count_and_algorithm_must_match_header);
        RUN(absurd_sizes_are_truncation_errors);
        RUN(unknown_algorithm_kept_but_not_replayed);
        RUN(pcr0_start_and_high_pcr_rules);
        RUN(trailing_junk_rejected);
        RUN(empty_and_tiny_inputs);
        RUN(type_names);
        TL_EXIT();
}
