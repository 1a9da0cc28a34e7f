/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The prediction engine (src/predict.c). On the corpus logs, no change
 * predicts the log's own replay as EXPECTED.json gives it (computed by
 * other tools), and a change to a boot mshim did not run is unpredictable,
 * never guessed. On a hand-built log of a boot through mshim (digests from
 * OpenSSL over bytes written out here from docs/MEASUREMENTS.md), each
 * change gives the PCR values computed independently here, and each case
 * the rules do not cover is reported unpredictable.
 */
#include <openssl/evp.h>
#include "testlib.h"
#include "expected.h"
#include "mb/pe.h"
#include "mb/predict.h"

static mb_predict P;    /* large: static, not on the stack */

static void to_hex(const uint8_t *p, size_t n, char *out) {
        for (size_t i = 0; i < n; i++)
                sprintf(out + 2 * i, "%02x", p[i]);
}

/* ---- the corpus -------------------------------------------------------------- */

static uint8_t *corpus_log(const char *file, size_t *size) {
        char path[512];
        snprintf(path, sizeof(path), "%s/eventlogs/%s", tl_corpus_dir(), file);
        return (uint8_t *) tl_read_file(path, size);
}

static void check_expected(const expect *e, const mb_predict *p, uint32_t skip) {
        char hex[2 * MB_HASH_MAX + 1];
        for (int i = 0; i < e->n; i++) {
                const mb_pcr_bank *b = NULL;
                for (uint32_t k = 0; k < p->pcrs.n_banks; k++)
                        if (p->pcrs.banks[k].alg == mb_hash_alg_by_name(e->v[i].bank))
                                b = &p->pcrs.banks[k];
                CHECK(b != NULL);
                if (!b || (skip & (1u << e->v[i].pcr)))
                        continue;
                to_hex(b->pcr[e->v[i].pcr], b->size, hex);
                if (strcmp(hex, e->v[i].hex) != 0) {
                        fprintf(stderr, "  %s %s PCR %d: predicted %s, replay %s\n", e->file, e->v[i].bank,
                                e->v[i].pcr, hex, e->v[i].hex);
                        tl_case_failed = 1;
                }
        }
}

/* Nothing changes: every PCR is the log's replay, none changed or unpredictable. */
TEST(corpus_unchanged_predicts_replay) {
        int checked = 0;
        for (int i = 0; i < n_expects; i++) {
                const expect *e = &expects[i];
                mb_predict_input in = { 0 };
                size_t size;
                uint8_t *buf = corpus_log(e->file, &size);
                mb_err r;

                CHECK(buf != NULL);
                if (!buf)
                        continue;
                in.log = buf;
                in.log_size = size;
                r = mb_predict_run(&in, &P);
                if (e->error) {
                        CHECK(r != MB_OK);
                        CHECK_EQ_INT(P.err_what, MB_PREDICT_LOG);
                } else {
                        CHECK_EQ_INT(r, MB_OK);
                        CHECK_EQ_INT(P.changed, 0);
                        CHECK_EQ_INT(P.unpredictable, 0);
                        check_expected(e, &P, 0);
                        checked++;
                }
                free(buf);
        }
        CHECK(checked >= 15);
}

/* Predict each corpus boot that parses (none of them ran mshim) with only
 * the options "quiet" given, first_boot as asked: it succeeds with exactly
 * the PCRs in want unpredictable, and every other PCR keeps its replay. */
static void corpus_options_only(bool first_boot, uint32_t want) {
        for (int i = 0; i < n_expects; i++) {
                const expect *e = &expects[i];
                mb_predict_input in = { .options = "quiet", .options_len = 5, .first_boot = first_boot };
                uint8_t scratch[64];
                size_t size;
                uint8_t *buf;

                if (e->error)
                        continue;
                buf = corpus_log(e->file, &size);
                in.log = buf;
                in.log_size = size;
                in.scratch = scratch;
                in.scratch_size = sizeof(scratch);
                CHECK_EQ_INT(mb_predict_run(&in, &P), MB_OK);
                CHECK(P.first_boot == first_boot);
                CHECK_EQ_INT(P.unpredictable, want);
                if (first_boot) {
                        CHECK(P.reason[4] != NULL && strstr(P.reason[4], "--loader and --esp") != NULL);
                        CHECK(P.reason[1] != NULL && strstr(P.reason[1], "boot variables") != NULL);
                } else {
                        CHECK(P.reason[9] != NULL && strstr(P.reason[9], "mshim") != NULL);
                        CHECK_EQ_INT(P.changed, 0);
                }
                check_expected(e, &P, want);
                free(buf);
        }
}

/* None of these boots ran mshim: a new command line touches PCRs 9 and 12,
 * which become unpredictable with a reason; the others keep their replay. */
TEST(corpus_foreign_boots_are_unpredictable) {
        corpus_options_only(false, (1u << 9) | (1u << 12));
}

/* The first boot through mshim (docs/predict.md "The first boot") from a
 * boot that did not run it, with only the options given: every PCR the
 * chain after the firmware extends, and PCR 1, is unpredictable with a
 * reason naming what to give; the firmware's PCRs keep their replay. */
TEST(corpus_first_boot_needs_every_file) {
        corpus_options_only(true, (1u << 1) | (1u << 4) | (1u << 5) | (1u << 7) | (1u << 8) | (1u << 9) |
                                          (1u << 12) | (1u << 13) | (1u << 14));
}

/* ---- a hand-built boot through mshim ------------------------------------------- */

#define MAXLOG 8192
typedef struct hlog {
        uint8_t b[MAXLOG];
        size_t n;
} hlog;

static const char *BANKS[] = { "SHA1", "SHA256" };
static const uint16_t ALGS[] = { MB_ALG_SHA1, MB_ALG_SHA256 };
static const uint16_t SIZES[] = { 20, 32 };

static void H(int bank, const void *data, size_t n, uint8_t *out) {
        unsigned len = 0;
        EVP_Digest(data, n, out, &len, EVP_get_digestbyname(BANKS[bank]), NULL);
}

static void put32(hlog *l, uint32_t v) { mb_put_le32(l->b + l->n, v); l->n += 4; }
static void put16(hlog *l, uint16_t v) { mb_put_le16(l->b + l->n, v); l->n += 2; }
static void put(hlog *l, const void *p, size_t n) { memcpy(l->b + l->n, p, n); l->n += n; }

/* TCG_PCR_EVENT with the Spec ID Event03 (PFP 10.4.5.1): sha1, sha256. */
static void spec_header(hlog *l) {
        uint8_t z[20] = { 0 };
        l->n = 0;
        put32(l, 0);
        put32(l, MB_EV_NO_ACTION);
        put(l, z, 20);
        put32(l, 16 + 4 + 4 + 4 + 2 * 4 + 1);
        put(l, "Spec ID Event03", 16);
        put32(l, 0);                            /* platformClass */
        put(l, "\0\2\0\2", 4);                  /* minor, major 2, errata, uintnSize 2 */
        put32(l, 2);
        for (int b = 0; b < 2; b++) {
                put16(l, ALGS[b]);
                put16(l, SIZES[b]);
        }
        put(l, "", 1);                          /* vendorInfoSize 0 */
}

/* TCG_PCR_EVENT2 whose digests are H(input) in both banks. */
static void event(hlog *l, uint32_t pcr, uint32_t type, const void *data, size_t size,
                  const void *input, size_t input_size) {
        uint8_t d[32];
        put32(l, pcr);
        put32(l, type);
        put32(l, 2);
        for (int b = 0; b < 2; b++) {
                H(b, input, input_size, d);
                put16(l, ALGS[b]);
                put(l, d, SIZES[b]);
        }
        put32(l, (uint32_t) size);
        put(l, data, size);
}

static void event_self(hlog *l, uint32_t pcr, uint32_t type, const void *data, size_t size) {
        event(l, pcr, type, data, size, data, size);
}

/* The tagged event of PFP 10.4.2: u32 id, u32 size, data. */
static size_t tagged(uint32_t tag, const void *data, size_t size, uint8_t *out) {
        mb_put_le32(out, tag);
        mb_put_le32(out + 4, (uint32_t) size);
        memcpy(out + 8, data, size);
        return 8 + size;
}

/* ASCII to UTF-16LE with the 2-byte NUL. */
static size_t u16(const char *s, uint8_t *out) {
        size_t n = strlen(s);
        for (size_t i = 0; i < n; i++) {
                out[2 * i] = (uint8_t) s[i];
                out[2 * i + 1] = 0;
        }
        out[2 * n] = out[2 * n + 1] = 0;
        return 2 * n + 2;
}

/* mshim's PCR 5 event for a file: data = tagged(path), digest input = data ‖ file. */
static void mshim_file(hlog *l, uint32_t tag, const char *path, const char *file) {
        uint8_t p16[256], data[300], input[1024];
        size_t pn = u16(path, p16), dn = tagged(tag, p16, pn, data), fn = file ? strlen(file) : 0;
        memcpy(input, data, dn);
        if (fn)
                memcpy(input + dn, file, fn);
        event(l, 5, MB_EV_EVENT_TAG, data, dn, input, dn + fn);
}

static const char CONF_TEXT[] = "timeout 0\ndefault a\n";
static const char ENTRY[] = "title A\nlinux /vmlinuz\ninitrd /initrd.img\noptions quiet\n";
static const char INITRD[] = "an initrd";
static const uint8_t MSHIM_DIGEST_INPUT[] = "stands for mshim's Authenticode";
static const uint8_t KERNEL_DIGEST_INPUT[] = "stands for the kernel's Authenticode";

/* What OVMF, mshim and a 6.1 stub log for a boot of entry a.conf
 * (docs/MEASUREMENTS.md "The events, in the order they happen"); extra()
 * adds a case's events before ExitBootServices. */
static void (*BEFORE_MSHIM)(hlog *l);  /* a case's events before mshim's image event */

/* OVMF up to mshim's loader.conf event. */
static void firmware_to_mshim(hlog *l) {
        static const char call[] = "Calling EFI Application from Boot Option";
        static const uint8_t sep[4] = { 0 };

        spec_header(l);
        event_self(l, 0, MB_EV_S_CRTM_VERSION, "\0\0", 2);
        event_self(l, 4, MB_EV_EFI_ACTION, call, sizeof(call) - 1);
        for (uint32_t pcr = 0; pcr <= 7; pcr++)
                event_self(l, pcr, MB_EV_SEPARATOR, sep, 4);
        event_self(l, 5, MB_EV_EFI_GPT_EVENT, "a GPT header", 12);
        if (BEFORE_MSHIM)
                BEFORE_MSHIM(l);
        event(l, 4, MB_EV_EFI_BOOT_SERVICES_APPLICATION, "dp", 2, MSHIM_DIGEST_INPUT, sizeof(MSHIM_DIGEST_INPUT));
        mshim_file(l, MB_TAG_LOADER_CONF, "\\loader\\loader.conf", CONF_TEXT);
}

static void mshim_boot(hlog *l, void (*extra)(hlog *l)) {
        uint8_t o16[64], t[64];
        size_t on = u16("quiet", o16);
        static const char ebs1[] = "Exit Boot Services Invocation";
        static const char ebs2[] = "Exit Boot Services Returned with Success";

        firmware_to_mshim(l);
        mshim_file(l, MB_TAG_BLS_ENTRY, "\\loader\\entries\\a.conf", ENTRY);
        event(l, 4, MB_EV_EFI_BOOT_SERVICES_APPLICATION, "dp", 2, KERNEL_DIGEST_INPUT, sizeof(KERNEL_DIGEST_INPUT));
        event(l, 12, MB_EV_IPL, o16, on, o16, on);
        event(l, 9, MB_EV_EVENT_TAG, t, tagged(MB_TAG_LINUX_LOAD_OPTIONS, "LOADED_IMAGE::LoadOptions", 26, t), o16, on);
        event(l, 9, MB_EV_EVENT_TAG, t, tagged(MB_TAG_LINUX_INITRD, "Linux initrd", 13, t), INITRD, strlen(INITRD));
        if (extra)
                extra(l);
        event_self(l, 5, MB_EV_EFI_ACTION, ebs1, sizeof(ebs1) - 1);
        event_self(l, 5, MB_EV_EFI_ACTION, ebs2, sizeof(ebs2) - 1);
}

static hlog L;
static uint8_t SCRATCH[65536];    /* the new db and dbx need up to twice the log */

static mb_err run(mb_predict_input *in, hlog *l) {
        in->log = l->b;
        in->log_size = l->n;
        in->scratch = SCRATCH;
        in->scratch_size = sizeof(SCRATCH);
        return mb_predict_run(in, &P);
}

/* PCR value after extending with H(input_i) for each input, in bank b. */
static void expect_chain(int b, uint8_t *pcr, const void *const *inputs, const size_t *sizes, size_t n) {
        uint8_t d[32], buf[64];
        memset(pcr, 0, SIZES[b]);
        for (size_t i = 0; i < n; i++) {
                H(b, inputs[i], sizes[i], d);
                memcpy(buf, pcr, SIZES[b]);
                memcpy(buf + SIZES[b], d, SIZES[b]);
                H(b, buf, 2 * SIZES[b], pcr);
        }
}

static void check_pcr(uint32_t pcr, const void *const *inputs, const size_t *sizes, size_t n) {
        uint8_t want[32];
        for (int b = 0; b < 2; b++) {
                expect_chain(b, want, inputs, sizes, n);
                CHECK(memcmp(P.pcrs.banks[b].pcr[pcr], want, SIZES[b]) == 0);
        }
}

static void check_baseline_kept(uint32_t except) {
        for (uint32_t b = 0; b < P.pcrs.n_banks; b++)
                for (uint32_t i = 0; i < MB_PCR_COUNT; i++)
                        if (!(except & (1u << i)))
                                CHECK(memcmp(P.pcrs.banks[b].pcr[i], P.baseline.banks[b].pcr[i], SIZES[b]) == 0);
}

TEST(mshim_boot_unchanged) {
        mb_predict_input in = { 0 };
        static const char opts[] = "quiet";
        uint8_t c16[64], e16[64];
        mb_predict_file conf = { MB_TAG_LOADER_CONF, c16, u16("\\loader\\loader.conf", c16), CONF_TEXT, strlen(CONF_TEXT) };
        mb_predict_file entry = { MB_TAG_BLS_ENTRY, e16, u16("\\loader\\entries\\a.conf", e16), ENTRY, strlen(ENTRY) };
        mb_predict_chunk ch[2] = { { INITRD, 3 }, { INITRD + 3, strlen(INITRD) - 3 } };

        mshim_boot(&L, NULL);
        /* The same files given explicitly: still the baseline, nothing changed. */
        in.loader_conf = &conf;
        in.entry = &entry;
        in.bad_entries_given = true;
        in.options = opts;
        in.options_len = strlen(opts);
        in.initrd_given = true;
        in.initrd = ch;
        in.n_initrd = 2;
        CHECK_EQ_INT(run(&in, &L), MB_OK);
        CHECK_EQ_INT(P.unpredictable, 0);
        CHECK_EQ_INT(P.changed, 0);
        CHECK_EQ_INT(P.touched, (1u << 5) | (1u << 9) | (1u << 12));
        check_baseline_kept(0);
        /* first_boot is for a baseline without mshim: here it changes nothing. */
        in.first_boot = true;
        CHECK_EQ_INT(run(&in, &L), MB_OK);
        CHECK(!P.first_boot);
        CHECK_EQ_INT(P.unpredictable, 0);
        CHECK_EQ_INT(P.changed, 0);
}

TEST(new_options_change_9_and_12) {
        mb_predict_input in = { .options = "quiet mshim.x=1", .options_len = 15 };
        uint8_t o16[64];
        size_t on = u16("quiet mshim.x=1", o16);
        const void *in12[] = { o16 }, *in9[] = { o16, INITRD };
        size_t sz12[] = { on }, sz9[] = { on, strlen(INITRD) };

        mshim_boot(&L, NULL);
        CHECK_EQ_INT(run(&in, &L), MB_OK);
        CHECK_EQ_INT(P.unpredictable, 0);
        CHECK_EQ_INT(P.changed, (1u << 9) | (1u << 12));
        check_pcr(12, in12, sz12, 1);
        check_pcr(9, in9, sz9, 2);
        check_baseline_kept((1u << 9) | (1u << 12));
}

TEST(new_initrd_and_no_initrd) {
        static const char nw[] = "another initrd";
        mb_predict_chunk ch = { nw, strlen(nw) };
        mb_predict_input in = { .initrd_given = true, .initrd = &ch, .n_initrd = 1 };
        uint8_t o16[64];
        size_t on = u16("quiet", o16);
        const void *in9[] = { o16, nw };
        size_t sz9[] = { on, strlen(nw) };

        mshim_boot(&L, NULL);
        CHECK_EQ_INT(run(&in, &L), MB_OK);
        CHECK_EQ_INT(P.changed, 1u << 9);
        check_pcr(9, in9, sz9, 2);
        /* No initrd at all: only the stub's LoadOptions. */
        in.n_initrd = 0;
        CHECK_EQ_INT(run(&in, &L), MB_OK);
        check_pcr(9, in9, sz9, 1);
        check_baseline_kept(1u << 9);
}

TEST(new_config_rebuilds_pcr5_in_place) {
        static const char conf2[] = "timeout 0\ndefault b\n", entry2[] = "linux /v2\noptions quiet\n",
                          bad[] = "title broken\n";
        uint8_t c16[64], e16[64], b16[64];
        size_t cn = u16("\\loader\\loader.conf", c16), en = u16("\\loader\\entries\\b.conf", e16),
               bn = u16("\\loader\\entries\\zz.conf", b16);
        mb_predict_file conf = { MB_TAG_LOADER_CONF, c16, cn, conf2, strlen(conf2) };
        mb_predict_file entry = { MB_TAG_BLS_ENTRY, e16, en, entry2, strlen(entry2) };
        mb_predict_file bads[1] = { { MB_TAG_BLS_ENTRY_BAD, b16, bn, bad, strlen(bad) } };
        mb_predict_input in = { .loader_conf = &conf, .entry = &entry, .bad_entries_given = true,
                                .bad_entries = bads, .n_bad_entries = 1 };
        /* PCR 5 written out: separator, GPT, conf, bad entry, entry, EBS x2. */
        uint8_t sep[4] = { 0 }, dc[128], db[128], de[128], ic[256], ib[256], ie[256];
        size_t nc = tagged(MB_TAG_LOADER_CONF, c16, cn, dc), nb = tagged(MB_TAG_BLS_ENTRY_BAD, b16, bn, db),
               ne = tagged(MB_TAG_BLS_ENTRY, e16, en, de);
        memcpy(ic, dc, nc); memcpy(ic + nc, conf2, strlen(conf2));
        memcpy(ib, db, nb); memcpy(ib + nb, bad, strlen(bad));
        memcpy(ie, de, ne); memcpy(ie + ne, entry2, strlen(entry2));
        const void *in5[] = { sep, "a GPT header", ic, ib, ie, "Exit Boot Services Invocation",
                              "Exit Boot Services Returned with Success" };
        size_t sz5[] = { 4, 12, nc + strlen(conf2), nb + strlen(bad), ne + strlen(entry2), 29, 40 };

        mshim_boot(&L, NULL);
        CHECK_EQ_INT(run(&in, &L), MB_OK);
        CHECK_EQ_INT(P.unpredictable, 0);
        CHECK_EQ_INT(P.changed, 1u << 5);
        check_pcr(5, in5, sz5, 7);
        check_baseline_kept(1u << 5);
        /* The scratch buffer must hold the largest digest input. */
        in.log = L.b;
        in.log_size = L.n;
        in.scratch = SCRATCH;
        in.scratch_size = 10;
        CHECK(mb_predict_run(&in, &P) != MB_OK);
        CHECK_EQ_INT(P.err_what, MB_PREDICT_SCRATCH);
}

/* The TOTP fence as docs/MEASUREMENTS.md spells it, byte by byte. */
static const uint8_t FENCE[] = { 0x08, 0x68, 0x73, 0x6d, 17, 0, 0, 0, 'm', 's', 'h', 'i', 'm', ' ', 'T', 'O', 'T',
                                 'P', ' ', 'f', 'e', 'n', 'c', 'e', 0 };

/* The fence as the loader extends it: PCR 12, then the lock in PCR 13
 * (docs/MEASUREMENTS.md). */
static void add_fence(hlog *l) {
        event_self(l, 12, MB_EV_EVENT_TAG, FENCE, sizeof(FENCE));
        event_self(l, 13, MB_EV_EVENT_TAG, FENCE, sizeof(FENCE));
}

/* The TOTP initrd event (docs/MEASUREMENTS.md "The TOTP initrd event"),
 * spelled here from the document: tag "msh" 9, 40 bytes of data: the
 * size as u64 LE, then SHA-256 of the initrd bytes (OpenSSL's). */
static size_t totp_initrd_event(const void *initrd, size_t size, uint8_t out[48]) {
        static const uint8_t head[8] = { 0x09, 0x68, 0x73, 0x6d, 40, 0, 0, 0 };
        unsigned len = 0;

        memcpy(out, head, 8);
        for (int i = 0; i < 8; i++)
                out[8 + i] = (uint8_t) ((uint64_t) size >> (8 * i));
        EVP_Digest(initrd, size, out + 16, &len, EVP_sha256(), NULL);
        return 48;
}

/* What this loader logs with TOTP on: the initrd event, then the fence. */
static void add_totp(hlog *l) {
        uint8_t ti[48];

        event_self(l, 12, MB_EV_EVENT_TAG, ti, totp_initrd_event(INITRD, strlen(INITRD), ti));
        add_fence(l);
}

/* The fence and the initrd event follow the next boot's loader.conf:
 * added when it enables totp, dropped when it does not (or does not
 * parse), kept when it is unchanged; the TOTP point is PCR 12 without the
 * fence, PCR 9 unknown; PCR 13's lock stays whatever loader.conf says,
 * all zeros at the TOTP point. */
TEST(totp_fence) {
        static const char show[] = "timeout 0\ntotp show\n", off[] = "totp no\n", bad[] = "totp maybe\n";
        static const char evil[] = "another initrd";
        uint8_t c16[64], o16[64], n16[64], ti[48], ti_evil[48], ti_none[48];
        size_t cn = u16("\\loader\\loader.conf", c16), on = u16("quiet", o16), nn = u16("quiet x", n16);
        size_t tn = totp_initrd_event(INITRD, strlen(INITRD), ti), te = totp_initrd_event(evil, strlen(evil), ti_evil),
               t0 = totp_initrd_event("", 0, ti_none);
        mb_predict_file conf = { MB_TAG_LOADER_CONF, c16, cn, show, strlen(show) };
        mb_predict_chunk same = { INITRD, strlen(INITRD) }, other = { evil, strlen(evil) };
        const void *fenced[] = { o16, ti, FENCE }, *plain[] = { o16 }, *fenced_new[] = { n16, ti, FENCE },
                   *fenced_evil[] = { o16, ti_evil, FENCE }, *fenced_none[] = { o16, ti_none, FENCE },
                   *point[] = { o16, ti };
        size_t szf[] = { on, tn, sizeof(FENCE) }, szp[] = { on }, szn[] = { nn, tn, sizeof(FENCE) },
               sze[] = { on, te, sizeof(FENCE) }, sz0[] = { on, t0, sizeof(FENCE) }, szt[] = { on, tn };
        const void *lock[] = { FENCE };
        size_t szl[] = { sizeof(FENCE) };

        /* Switched on by a new loader.conf: the initrd must be given (the
         * baseline has no initrd event), then it is bound before the fence. */
        mshim_boot(&L, NULL);
        {
                mb_predict_input in = { .loader_conf = &conf };
                CHECK_EQ_INT(run(&in, &L), MB_OK);
                CHECK_EQ_INT(P.unpredictable, 1u << 12);
                CHECK(P.reason[12] && strstr(P.reason[12], "give the initrd"));
        }
        {
                mb_predict_input in = { .loader_conf = &conf, .initrd_given = true, .initrd = &same, .n_initrd = 1 };
                CHECK_EQ_INT(run(&in, &L), MB_OK);
                CHECK_EQ_INT(P.unpredictable, 0);
                CHECK_EQ_INT(P.changed, (1u << 5) | (1u << 12));
                check_pcr(12, fenced, szf, 3);
        }
        /* A baseline with TOTP on: unchanged, new options keep it. */
        mshim_boot(&L, add_totp);
        {
                mb_predict_input in = { 0 };
                CHECK_EQ_INT(run(&in, &L), MB_OK);
                CHECK_EQ_INT(P.unpredictable, 0);
                CHECK_EQ_INT(P.changed, 0);
                check_pcr(12, fenced, szf, 3);
                check_pcr(13, lock, szl, 1);
        }
        {
                mb_predict_input in = { .options = "quiet x", .options_len = 7 };
                CHECK_EQ_INT(run(&in, &L), MB_OK);
                CHECK_EQ_INT(P.unpredictable, 0);
                check_pcr(12, fenced_new, szn, 3);
        }
        /* Another initrd (issue 20's evil maid): PCR 12 changes, and so
         * does the TOTP point; no initrd at all is the event over nothing. */
        {
                mb_predict_input in = { .initrd_given = true, .initrd = &other, .n_initrd = 1 };
                CHECK_EQ_INT(run(&in, &L), MB_OK);
                CHECK_EQ_INT(P.unpredictable, 0);
                CHECK(P.changed & (1u << 12));
                check_pcr(12, fenced_evil, sze, 3);
        }
        {
                const void *point_none[] = { o16, ti_none };
                size_t szpn[] = { on, t0 };
                mb_predict_input in = { .initrd_given = true, .n_initrd = 0, .totp_point = true };
                CHECK_EQ_INT(run(&in, &L), MB_OK);
                check_pcr(12, point_none, szpn, 2);
                mb_predict_input in2 = { .initrd_given = true, .n_initrd = 0 };
                CHECK_EQ_INT(run(&in2, &L), MB_OK);
                check_pcr(12, fenced_none, sz0, 3);
        }
        /* An older mshim's baseline (the fence without the initrd event):
         * the initrd must be given. */
        mshim_boot(&L, add_fence);
        {
                mb_predict_input in = { 0 };
                in.options = "quiet x";
                in.options_len = 7;
                CHECK_EQ_INT(run(&in, &L), MB_OK);
                CHECK(P.unpredictable & (1u << 12));
                mb_predict_input in2 = { .initrd_given = true, .initrd = &same, .n_initrd = 1 };
                CHECK_EQ_INT(run(&in2, &L), MB_OK);
                CHECK_EQ_INT(P.unpredictable, 0);
                check_pcr(12, fenced, szf, 3);
        }
        /* Switched off by loader.conf while the baseline had TOTP on: the
         * loader not given may hold a built-in floor (mb_boot_totp_mode):
         * unknown, said so. From a baseline with TOTP off: off. */
        mshim_boot(&L, add_totp);
        conf.data = off;
        conf.size = strlen(off);
        {
                mb_predict_input in = { .loader_conf = &conf };
                CHECK_EQ_INT(run(&in, &L), MB_OK);
                CHECK_EQ_INT(P.unpredictable, 1u << 12);
                CHECK(P.reason[12] && strstr(P.reason[12], "--loader"));
        }
        /* The baseline's own loader.conf (it says nothing of totp: the
         * baseline's TOTP came from its loader's floor, which stays). */
        {
                mb_predict_file as_before = { MB_TAG_LOADER_CONF, c16, cn, CONF_TEXT, strlen(CONF_TEXT) };
                mb_predict_input in = { .loader_conf = &as_before };
                CHECK_EQ_INT(run(&in, &L), MB_OK);
                CHECK_EQ_INT(P.unpredictable, 0);
                CHECK_EQ_INT(P.changed, 0);
                check_pcr(12, fenced, szf, 3);
        }
        mshim_boot(&L, NULL);
        {
                mb_predict_input in = { .loader_conf = &conf };
                CHECK_EQ_INT(run(&in, &L), MB_OK);
                CHECK_EQ_INT(P.unpredictable, 0);
                check_pcr(12, plain, szp, 1);
                check_pcr(13, NULL, NULL, 0);     /* the baseline's: an mshim without the lock */
        }
        {
                mb_predict_file absent = { MB_TAG_FILE_ABSENT, c16, cn, NULL, 0 };
                mb_predict_input in = { .loader_conf = &absent };
                CHECK_EQ_INT(run(&in, &L), MB_OK);
                check_pcr(12, plain, szp, 1);
        }
        /* A loader.conf the loader cannot parse or read: it assumes totp show. */
        conf.data = bad;
        conf.size = strlen(bad);
        {
                mb_predict_input in = { .loader_conf = &conf, .initrd_given = true, .initrd = &same, .n_initrd = 1 };
                CHECK_EQ_INT(run(&in, &L), MB_OK);
                check_pcr(12, fenced, szf, 3);
        }
        {
                mb_predict_file unreadable = { MB_TAG_FILE_UNREADABLE, c16, cn, NULL, 0 };
                mb_predict_input in = { .loader_conf = &unreadable, .initrd_given = true, .initrd = &same,
                                        .n_initrd = 1 };
                CHECK_EQ_INT(run(&in, &L), MB_OK);
                check_pcr(12, fenced, szf, 3);
                check_pcr(13, NULL, NULL, 0);
        }
        /* The TOTP point: the initrd event, no fence yet, PCR 5 before
         * ExitBootServices, PCR 9 not final. */
        mshim_boot(&L, add_totp);
        {
                mb_predict_input in = { .totp_point = true };
                uint8_t e16[64], dc[128], de[128], ic[256], ie[256], sep[4] = { 0 };
                size_t en = u16("\\loader\\entries\\a.conf", e16), nc = tagged(MB_TAG_LOADER_CONF, c16, cn, dc),
                       ne = tagged(MB_TAG_BLS_ENTRY, e16, en, de);
                memcpy(ic, dc, nc); memcpy(ic + nc, CONF_TEXT, strlen(CONF_TEXT));
                memcpy(ie, de, ne); memcpy(ie + ne, ENTRY, strlen(ENTRY));
                const void *in5[] = { sep, "a GPT header", ic, ie };
                size_t sz5[] = { 4, 12, nc + strlen(CONF_TEXT), ne + strlen(ENTRY) };

                CHECK_EQ_INT(run(&in, &L), MB_OK);
                CHECK_EQ_INT(P.unpredictable, 1u << 9);
                CHECK(P.reason[9] != NULL);
                check_pcr(12, point, szt, 2);
                check_pcr(13, NULL, NULL, 0);
                check_pcr(5, in5, sz5, 4);
                check_baseline_kept((1u << 5) | (1u << 9) | (1u << 12) | (1u << 13));
        }
        /* Two fences, or the fence first: not mshim's order. */
        mshim_boot(&L, add_totp);
        add_fence(&L);
        {
                mb_predict_input in = { .options = "quiet x", .options_len = 7 };
                CHECK_EQ_INT(run(&in, &L), MB_OK);
                CHECK(P.unpredictable & (1u << 12));
        }
        /* PCR 13 with two locks, or with an event that is not mshim's:
         * rebuilt from nothing it would be wrong, so unpredictable. */
        {
                mb_predict_input in = { .totp_point = true };
                CHECK_EQ_INT(run(&in, &L), MB_OK);
                CHECK((P.unpredictable & (1u << 13)) && P.reason[13] != NULL);
        }
        mshim_boot(&L, NULL);
        event_self(&L, 13, MB_EV_EVENT_TAG, "\1\2\3\4\0\0\0\0", 8);
        {
                mb_predict_input in = { .totp_point = true };
                CHECK_EQ_INT(run(&in, &L), MB_OK);
                CHECK((P.unpredictable & (1u << 13)) && P.reason[13] != NULL);
                CHECK(!(P.unpredictable & (1u << 12)));
        }
        /* A baseline of an older mshim (no lock) and a new loader: the
         * lock is predicted in PCR 13 (the loader: any PE, the kernel's
         * bytes here). */
        {
                size_t ksize = 0;
                uint8_t *k = tl_read_file(getenv("MB_KERNEL") ? getenv("MB_KERNEL") : "build/kernel/vmlinuz", &ksize);
                mb_predict_input in = { .loader = k, .loader_size = ksize };

                CHECK(k != NULL);
                mshim_boot(&L, NULL);
                CHECK_EQ_INT(k ? run(&in, &L) : MB_ERR_INVALID, MB_OK);
                CHECK(!(P.unpredictable & (1u << 13)));
                check_pcr(13, lock, szl, 1);
                free(k);
        }
}

static void add_grub(hlog *l) {
        event_self(l, 8, MB_EV_IPL, "grub_cmd: linux", 15);
}
static void add_exit(hlog *l) {
        uint8_t t[8];
        event_self(l, 5, MB_EV_EVENT_TAG, t, tagged(MB_TAG_EXIT, "", 0, t));
}
static void add_authority(hlog *l) {
        event_self(l, 7, MB_EV_EFI_VARIABLE_AUTHORITY, "db entry", 8);
}
static void add_pcr12(hlog *l) {
        event_self(l, 12, MB_EV_EVENT_TAG, "\1\2\3\4\0\0\0\0", 8);
}
static void add_pcr5_unknown(hlog *l) {
        event_self(l, 5, MB_EV_EFI_HANDOFF_TABLES, "x", 1);
}

/* Each case the rules do not cover: the touched PCR is unpredictable (with
 * a reason), the untouched ones keep the baseline. */
TEST(uncovered_cases_are_unpredictable) {
        static const struct {
                void (*extra)(hlog *l);
                uint32_t want, changed;
        } cases[] = {
                { add_grub, (1u << 9) | (1u << 12), 0 },
                { add_exit, (1u << 9) | (1u << 12), 0 },
                /* PCR 9's own events are still known: rebuilt. */
                { add_pcr12, 1u << 12, 1u << 9 },
        };
        mb_predict_input in = { .options = "x", .options_len = 1 };

        for (size_t i = 0; i < MB_ARRAY_SIZE(cases); i++) {
                mshim_boot(&L, cases[i].extra);
                CHECK_EQ_INT(run(&in, &L), MB_OK);
                CHECK_EQ_INT(P.unpredictable, cases[i].want);
                CHECK_EQ_INT(P.changed, cases[i].changed);
                for (uint32_t k = 0; k < MB_PCR_COUNT; k++)
                        CHECK(!(P.unpredictable & (1u << k)) || P.reason[k] != NULL);
                check_baseline_kept(cases[i].want | cases[i].changed);
        }
        /* An event PCR 5's rules do not know, with a config change. */
        mshim_boot(&L, add_pcr5_unknown);
        {
                uint8_t c16[64];
                mb_predict_file conf = { MB_TAG_FILE_ABSENT, c16, u16("\\loader\\loader.conf", c16), NULL, 0 };
                mb_predict_input in5 = { .loader_conf = &conf };
                CHECK_EQ_INT(run(&in5, &L), MB_OK);
                CHECK_EQ_INT(P.unpredictable, 1u << 5);
        }
        /* Secure Boot authority events and a new kernel: PCR 7. The
         * kernel must still be a PE image: a text file is an error. */
        mshim_boot(&L, add_authority);
        {
                mb_predict_input ink = { .kernel = "not a PE", .kernel_size = 8 };
                CHECK(run(&ink, &L) != MB_OK);
                CHECK_EQ_INT(P.err_what, MB_PREDICT_KERNEL);
        }
        /* A new initrd after a boot without one, kernel unknown: PCR 9. */
        {
                mb_predict_chunk ch = { "x", 1 };
                mb_predict_input ini = { .initrd_given = true, .initrd = &ch, .n_initrd = 1 };
                hlog *l = &L;
                uint8_t o16[64], t[64];
                size_t on = u16("quiet", o16);
                spec_header(l);
                event(l, 4, MB_EV_EFI_BOOT_SERVICES_APPLICATION, "dp", 2, "m", 1);
                mshim_file(l, MB_TAG_FILE_ABSENT, "\\loader\\loader.conf", NULL);
                mshim_file(l, MB_TAG_BLS_ENTRY, "\\loader\\entries\\a.conf", ENTRY);
                event(l, 12, MB_EV_IPL, o16, on, o16, on);
                (void) t;
                CHECK_EQ_INT(run(&ini, &L), MB_OK);
                CHECK_EQ_INT(P.unpredictable, 1u << 9);
        }
        /* Options that are not UTF-8. */
        mshim_boot(&L, NULL);
        {
                mb_predict_input ino = { .options = "\xff", .options_len = 1 };
                CHECK(run(&ino, &L) != MB_OK);
                CHECK_EQ_INT(P.err_what, MB_PREDICT_OPTIONS);
        }
}

/* ---- behind shim 16 (mok.c, verify.c, tpm.c) --------------------------------- */

/* A PE32 shim: one section "/4" whose name, ".vendor_cert", is in the COFF
 * string table right after it; the section holds cert.S's cert_table and
 * a stand-in DER certificate (a SEQUENCE of VENDOR_LEN bytes). */
#define S_LFANEW   0x40
#define S_OPT      (S_LFANEW + 24)
#define S_SECT     (S_OPT + 224)
#define S_SIZE     0x400
#define VENDOR_LEN 40
static uint8_t SHIM_PE[S_SIZE], SHIM_PE2[S_SIZE];
static const uint8_t MOK_CERT[] = { 0x30, 0x82, 0x00, 0x06, 'm', 'o', 'k', 'c', 'r', 't' };
static const uint8_t OTHER_CERT[] = { 0x30, 0x82, 0x00, 0x06, 'o', 't', 'h', 'e', 'r', '!' };
static const uint8_t SHIM_GUID[16] = { 0x50, 0xab, 0x5d, 0x60, 0x46, 0xe0, 0x00, 0x43,
                                       0xab, 0xb6, 0x3d, 0xd8, 0x10, 0xdd, 0x8b, 0x23 };
static const uint8_t X509_GUID[16] = { 0xa1, 0x59, 0xc0, 0xa5, 0xe4, 0x94, 0xa7, 0x4a,
                                       0x87, 0xb5, 0xab, 0x15, 0x5c, 0x2b, 0xf0, 0x72 };
static const uint8_t SHA256_GUID[16] = { 0x26, 0x16, 0xc4, 0xc1, 0x4c, 0x50, 0x92, 0x40,
                                         0xac, 0xa9, 0x41, 0xf9, 0x36, 0x93, 0x43, 0x28 };

static void build_shim(uint8_t *b, uint8_t flavour) {
        uint8_t *sec = b + 0x200, *v = sec + 16;

        memset(b, 0, S_SIZE);
        b[0] = 'M'; b[1] = 'Z';
        mb_put_le32(b + 0x3c, S_LFANEW);
        memcpy(b + S_LFANEW, "PE\0\0", 4);
        mb_put_le16(b + S_LFANEW + 4, 0x14c);
        mb_put_le16(b + S_LFANEW + 6, 1);
        mb_put_le32(b + S_LFANEW + 12, 0x300);          /* PointerToSymbolTable */
        mb_put_le32(b + S_LFANEW + 16, 0);              /* no symbols: the string table is at 0x300 */
        mb_put_le16(b + S_LFANEW + 20, 224);
        mb_put_le16(b + S_OPT, MB_PE_MAGIC_PE32);
        mb_put_le32(b + S_OPT + 60, 0x200);             /* SizeOfHeaders */
        mb_put_le32(b + S_OPT + 92, 16);
        memcpy(b + S_SECT, "/4", 2);
        mb_put_le32(b + S_SECT + 8, 0x100);
        mb_put_le32(b + S_SECT + 12, 0x1000);
        mb_put_le32(b + S_SECT + 16, 0x100);
        mb_put_le32(b + S_SECT + 20, 0x200);
        mb_put_le32(sec, VENDOR_LEN);                   /* cert_table: sizes, offsets */
        mb_put_le32(sec + 4, 0);
        mb_put_le32(sec + 8, 16);
        mb_put_le32(sec + 12, 16 + VENDOR_LEN);
        v[0] = 0x30; v[1] = 0x82; v[2] = 0; v[3] = VENDOR_LEN - 4;
        memset(v + 4, flavour, VENDOR_LEN - 4);
        mb_put_le32(b + 0x300, 4 + 13);
        memcpy(b + 0x304, ".vendor_cert", 13);
}

/* The Authenticode input of an unsigned image whose sections follow the
 * headers in file order (PE Format, "Calculating the PE Image Hash"):
 * every byte but the CheckSum and certificate directory entry. */
static size_t shim_authenticode_input(const uint8_t *b, uint8_t *out) {
        size_t cks = S_OPT + 64, dir4 = S_OPT + 96 + 32, n = 0;
        memcpy(out, b, cks); n += cks;
        memcpy(out + n, b + cks + 4, dir4 - cks - 4); n += dir4 - cks - 4;
        memcpy(out + n, b + dir4 + 8, S_SIZE - dir4 - 8); n += S_SIZE - dir4 - 8;
        return n;
}

/* One EFI_SIGNATURE_LIST of one entry (UEFI 2.10 32.4.1), owner shim's. */
static size_t esl(const uint8_t type[16], const void *sig, size_t n, uint8_t *out) {
        memcpy(out, type, 16);
        mb_put_le32(out + 16, (uint32_t) (28 + 16 + n));
        mb_put_le32(out + 20, 0);
        mb_put_le32(out + 24, (uint32_t) (16 + n));
        memcpy(out + 28, SHIM_GUID, 16);
        memcpy(out + 44, sig, n);
        return 44 + n;
}

static uint8_t MOKLIST_A[128];
static size_t MOKLIST_A_N;

/* What shim 16 logs before mshim's image event, as observed (docs/MOK.md):
 * its own image (firmware), PCR 14 MokList (vendor ESL || MokList) and
 * MokListX, PCR 7 the MokListRT authority (owner + MOK) for mshim. */
static void add_shim(hlog *l) {
        uint8_t auth[128], in[S_SIZE], full[256], vendor_esl[128];
        static const uint8_t name[18] = { 'M', 0, 'o', 0, 'k', 0, 'L', 0, 'i', 0, 's', 0, 't', 0, 'R', 0, 'T', 0 };
        size_t n = shim_authenticode_input(SHIM_PE, in), vn = esl(X509_GUID, SHIM_PE + 0x210, VENDOR_LEN, vendor_esl);

        event(l, 4, MB_EV_EFI_BOOT_SERVICES_APPLICATION, "shim", 4, in, n);
        memcpy(full, vendor_esl, vn);
        memcpy(full + vn, MOKLIST_A, MOKLIST_A_N);
        event(l, 14, MB_EV_IPL, "MokList", 8, full, vn + MOKLIST_A_N);
        event(l, 14, MB_EV_IPL, "MokListX", 9, "vendor dbx", 10);
        memcpy(auth, SHIM_GUID, 16);
        mb_put_le32(auth + 16, 9); mb_put_le32(auth + 20, 0);
        mb_put_le32(auth + 24, 16 + sizeof(MOK_CERT)); mb_put_le32(auth + 28, 0);
        memcpy(auth + 32, name, 18);
        memcpy(auth + 50, SHIM_GUID, 16);
        memcpy(auth + 66, MOK_CERT, sizeof(MOK_CERT));
        event_self(l, 7, MB_EV_EFI_VARIABLE_AUTHORITY, auth, 66 + sizeof(MOK_CERT));
}

static void shim_boot(void) {
        build_shim(SHIM_PE, 'v');
        MOKLIST_A_N = esl(X509_GUID, MOK_CERT, sizeof(MOK_CERT), MOKLIST_A);
        BEFORE_MSHIM = add_shim;
        mshim_boot(&L, NULL);
        BEFORE_MSHIM = NULL;
}

/* The same shim and MokList predict the baseline; MokList with a second
 * certificate after mshim's: PCR 14's MokList event is H(vendor ESL ||
 * new MokList), PCR 7 keeps the MOK's authority. */
TEST(shim_new_moklist) {
        uint8_t ml[256], vendor_esl[128], full[512];
        size_t n, vn;
        mb_predict_input in = { .shim = SHIM_PE, .shim_size = S_SIZE, .mok_list_given = true };
        const void *in14[2];
        size_t sz14[2];

        shim_boot();
        in.mok_list = MOKLIST_A;
        in.mok_list_size = MOKLIST_A_N;
        CHECK_EQ_INT(run(&in, &L), MB_OK);
        CHECK_EQ_INT(P.unpredictable, 0);
        CHECK_EQ_INT(P.changed, 0);
        CHECK_EQ_INT(P.touched, (1u << 7) | (1u << 14));
        n = MOKLIST_A_N;
        memcpy(ml, MOKLIST_A, n);
        n += esl(X509_GUID, OTHER_CERT, sizeof(OTHER_CERT), ml + n);
        in.mok_list = ml;
        in.mok_list_size = n;
        CHECK_EQ_INT(run(&in, &L), MB_OK);
        CHECK_EQ_INT(P.unpredictable, 0);
        CHECK_EQ_INT(P.changed, 1u << 14);
        vn = esl(X509_GUID, SHIM_PE + 0x210, VENDOR_LEN, vendor_esl);
        memcpy(full, vendor_esl, vn);
        memcpy(full + vn, ml, n);
        in14[0] = full; sz14[0] = vn + n;
        in14[1] = "vendor dbx"; sz14[1] = 10;
        check_pcr(14, in14, sz14, 2);
        check_baseline_kept(1u << 14);
}

/* MokList without mshim's MOK: shim would refuse mshim, nothing of its
 * boot is predicted; another certificate before it, or mshim's hash in
 * it: PCR 7 unpredictable. */
TEST(shim_moklist_unpredictable_cases) {
        uint8_t ml[256], h[32];
        size_t n;
        mb_predict_input in = { .shim = SHIM_PE, .shim_size = S_SIZE, .mok_list_given = true, .mok_list = ml };
        const uint32_t boot = (1u << 4) | (1u << 5) | (1u << 7) | (1u << 8) | (1u << 9) | (1u << 12) |
                              (1u << 13) | (1u << 14);

        shim_boot();
        in.mok_list_size = esl(X509_GUID, OTHER_CERT, sizeof(OTHER_CERT), ml);
        CHECK_EQ_INT(run(&in, &L), MB_OK);
        CHECK_EQ_INT(P.unpredictable, boot);
        CHECK(strstr(P.reason[7], "refuse mshim") != NULL);
        CHECK(strstr(P.reason[4], "refuse mshim") != NULL);
        /* The other certificate first, mshim's after it. */
        n = esl(X509_GUID, OTHER_CERT, sizeof(OTHER_CERT), ml);
        memcpy(ml + n, MOKLIST_A, MOKLIST_A_N);
        in.mok_list_size = n + MOKLIST_A_N;
        CHECK_EQ_INT(run(&in, &L), MB_OK);
        CHECK_EQ_INT(P.unpredictable, 1u << 7);
        CHECK(strstr(P.reason[7], "before") != NULL);
        CHECK_EQ_INT(P.changed, 1u << 14);
        /* mshim's SHA-256 (its PCR 4 event's digest) listed. */
        memcpy(ml, MOKLIST_A, MOKLIST_A_N);
        H(1, MSHIM_DIGEST_INPUT, sizeof(MSHIM_DIGEST_INPUT), h);
        in.mok_list_size = MOKLIST_A_N + esl(SHA256_GUID, h, 32, ml + MOKLIST_A_N);
        CHECK_EQ_INT(run(&in, &L), MB_OK);
        CHECK_EQ_INT(P.unpredictable, 1u << 7);
        CHECK(strstr(P.reason[7], "SHA-256") != NULL);
        /* --mok without the shim: its built-in certificate is unknown. */
        in.shim = NULL;
        in.mok_list_size = MOKLIST_A_N;
        memcpy(ml, MOKLIST_A, MOKLIST_A_N);
        CHECK_EQ_INT(run(&in, &L), MB_OK);
        CHECK(P.unpredictable & (1u << 14));
        /* A boot without shim. */
        mshim_boot(&L, NULL);
        in.shim = SHIM_PE;
        CHECK_EQ_INT(run(&in, &L), MB_OK);
        CHECK_EQ_INT(P.unpredictable, (1u << 4) | (1u << 7) | (1u << 14));
        CHECK(strstr(P.reason[14], "did not run shim") != NULL);
}

/* A new shim: PCR 4's first image event is its Authenticode digest; PCR 7
 * (db authority, SbatLevel) and 14 (its built-in certificate and dbx) are
 * unpredictable. Bad inputs: errors naming them. */
TEST(shim_new_image_and_bad_input) {
        uint8_t in4[S_SIZE], ml[64];
        size_t n4;
        mb_predict_input in = { .shim = SHIM_PE2, .shim_size = S_SIZE };
        const void *inputs[3];
        size_t sizes[3];
        static const char call[] = "Calling EFI Application from Boot Option";
        static const uint8_t sep[4] = { 0 };

        shim_boot();
        build_shim(SHIM_PE2, 'w');
        n4 = shim_authenticode_input(SHIM_PE2, in4);
        CHECK_EQ_INT(run(&in, &L), MB_OK);
        CHECK_EQ_INT(P.unpredictable, (1u << 7) | (1u << 14));
        CHECK_EQ_INT(P.changed, 1u << 4);
        inputs[0] = call; sizes[0] = sizeof(call) - 1;
        inputs[1] = sep; sizes[1] = 4;
        inputs[2] = in4; sizes[2] = n4;
        {
                const void *all[5] = { inputs[0], inputs[1], inputs[2], MSHIM_DIGEST_INPUT, KERNEL_DIGEST_INPUT };
                size_t szs[5] = { sizes[0], sizes[1], sizes[2], sizeof(MSHIM_DIGEST_INPUT), sizeof(KERNEL_DIGEST_INPUT) };
                check_pcr(4, all, szs, 5);
        }
        /* Not a PE; a truncated EFI_SIGNATURE_LIST. */
        in.shim = "MZ, not really";
        in.shim_size = 14;
        CHECK(run(&in, &L) != MB_OK);
        CHECK_EQ_INT(P.err_what, MB_PREDICT_SHIM);
        in.shim = SHIM_PE;
        in.shim_size = S_SIZE;
        in.mok_list_given = true;
        in.mok_list = ml;
        in.mok_list_size = esl(X509_GUID, MOK_CERT, sizeof(MOK_CERT), ml) - 1;
        CHECK(run(&in, &L) != MB_OK);
        CHECK_EQ_INT(P.err_what, MB_PREDICT_MOK);
}

/* Behind shim the other changes are predicted as without it: new options
 * change PCRs 9 and 12 only (shim's PCR 4, 7 and 14 events stay). */
TEST(shim_boot_new_options) {
        mb_predict_input in = { .options = "quiet mshim.x=1", .options_len = 15 };
        uint8_t o16[64];
        size_t on = u16("quiet mshim.x=1", o16);
        const void *in12[] = { o16 };
        size_t sz12[] = { on };

        shim_boot();
        CHECK_EQ_INT(run(&in, &L), MB_OK);
        CHECK_EQ_INT(P.unpredictable, 0);
        CHECK_EQ_INT(P.changed, (1u << 9) | (1u << 12));
        check_pcr(12, in12, sz12, 1);
        check_baseline_kept((1u << 9) | (1u << 12));
}

/* ---- GRUB as next stage (the chainload path) ------------------------------------ */

static const char GKERNEL[] = "the kernel file GRUB opens";
static const uint8_t GRUB_DIGEST_INPUT[] = "stands for GRUB's Authenticode";
/* GRUB 2.06's events (docs/MEASUREMENTS.md): PCR 8 EV_IPL, data the
 * prefix, the text and a NUL, digest over the text alone. */
static void grub_text(hlog *l, const char *prefix, const char *text) {
        char data[300];
        snprintf(data, sizeof(data), "%s%s", prefix, text);
        event(l, 8, MB_EV_IPL, data, strlen(data) + 1, text, strlen(text));
}
/* PCR 9 EV_IPL: data the path, digest over the file's bytes. */
static void grub_file(hlog *l, const char *path, const char *bytes) {
        event(l, 9, MB_EV_IPL, path, strlen(path) + 1, bytes, strlen(bytes));
}

static const char GRUB_CFG_A[] = "set timeout=0\nsearch --no-floppy --file --set=root /vmlinuz\n"
                                 "echo \"hello world\"\nlinuxefi /vmlinuz quiet\ninitrdefi /initrd.img\nboot\n";

/* OVMF, mshim's chainload path (no entries), GRUB running GRUB_CFG_A. */
static void grub_boot(hlog *l, void (*extra)(hlog *l)) {
        uint8_t t[16];
        static const char ebs1[] = "Exit Boot Services Invocation";

        firmware_to_mshim(l);
        event(l, 4, MB_EV_EFI_BOOT_SERVICES_APPLICATION, "dp", 2, GRUB_DIGEST_INPUT, sizeof(GRUB_DIGEST_INPUT));
        event_self(l, 12, MB_EV_EVENT_TAG, t, tagged(MB_TAG_CHAINLOAD, "\0\0", 2, t));
        grub_text(l, "grub_cmd: ", "set timeout=0");
        grub_text(l, "grub_cmd: ", "search --no-floppy --file --set=root /vmlinuz");
        grub_file(l, "(hd0)/vmlinuz", GKERNEL);
        grub_text(l, "grub_cmd: ", "echo hello world");
        grub_text(l, "grub_cmd: ", "linuxefi /vmlinuz quiet");
        grub_file(l, "/vmlinuz", GKERNEL);
        grub_text(l, "kernel_cmdline: ", "/vmlinuz quiet");
        grub_text(l, "grub_cmd: ", "initrdefi /initrd.img");
        grub_file(l, "/initrd.img", INITRD);
        grub_text(l, "grub_cmd: ", "boot");
        if (extra)
                extra(l);
        event_self(l, 5, MB_EV_EFI_ACTION, ebs1, sizeof(ebs1) - 1);
}

static mb_err run_cfg(mb_predict_input *in, const char *cfg) {
        in->grub_cfg = cfg;
        in->grub_cfg_size = cfg ? strlen(cfg) : 0;
        return run(in, &L);
}

TEST(grub_unchanged_cfg_predicts_baseline) {
        mb_predict_input in = { 0 };
        grub_boot(&L, NULL);
        CHECK_EQ_INT(run_cfg(&in, GRUB_CFG_A), MB_OK);
        CHECK_EQ_INT(P.touched, (1u << 8) | (1u << 9));
        CHECK_EQ_INT(P.unpredictable, 0);
        CHECK_EQ_INT(P.changed, 0);
        check_baseline_kept(0);
}

/* A new grub.cfg (another echo text and command line, linux and initrd
 * without "efi"), a new kernel and initrd: PCR 8 is each command's text,
 * with kernel_cmdline after linux's; PCR 9 the kernel twice (search, linux)
 * and the initrd. */
TEST(grub_new_cfg_kernel_initrd) {
        static const char cfg[] = "# new\n\nset timeout=0\nsearch --no-floppy --file --set=root /vmlinuz\n"
                                  "echo 'new text'\nlinux /vmlinuz quiet splash\ninitrd /initrd.img\nboot\n";
        static const char kernel[] = "another kernel", initrd[] = "another initrd";
        const void *in8[] = { "set timeout=0", "search --no-floppy --file --set=root /vmlinuz", "echo new text",
                              "linux /vmlinuz quiet splash", "/vmlinuz quiet splash", "initrd /initrd.img", "boot" };
        size_t sz8[7];
        const void *in9[] = { kernel, kernel, initrd };
        size_t sz9[] = { strlen(kernel), strlen(kernel), strlen(initrd) };
        mb_predict_chunk ch = { initrd, strlen(initrd) };
        mb_predict_input in = { .kernel = kernel, .kernel_size = strlen(kernel), .initrd_given = true,
                                .initrd = &ch, .n_initrd = 1 };

        for (int i = 0; i < 7; i++)
                sz8[i] = strlen(in8[i]);
        grub_boot(&L, NULL);
        CHECK_EQ_INT(run_cfg(&in, cfg), MB_OK);
        CHECK_EQ_INT(P.unpredictable, 0);
        CHECK_EQ_INT(P.changed, (1u << 8) | (1u << 9));
        check_pcr(8, in8, sz8, 7);
        check_pcr(9, in9, sz9, 3);
        check_baseline_kept((1u << 8) | (1u << 9));
        /* No grub.cfg: the baseline's commands; the new kernel in both of
         * the events that opened /vmlinuz, the initrd kept. */
        {
                const void *k9[] = { kernel, kernel, INITRD };
                size_t ks9[] = { strlen(kernel), strlen(kernel), strlen(INITRD) };
                mb_predict_input ink = { .kernel = kernel, .kernel_size = strlen(kernel) };
                CHECK_EQ_INT(run_cfg(&ink, NULL), MB_OK);
                CHECK_EQ_INT(P.unpredictable, 0);
                CHECK_EQ_INT(P.changed, 1u << 9);
                check_pcr(9, k9, ks9, 3);
        }
}

static void add_module_file(hlog *l) {
        grub_file(l, "(memdisk)/boot/grub/x86_64-efi/ext2.mod", "a module");
}
static void add_blank_word(hlog *l) {
        grub_text(l, "grub_cmd: ", "echo two  spaces");
}
static void add_grub_other(hlog *l) {
        event_self(l, 8, MB_EV_IPL, "module_cmdline: x", 18);
}

TEST(grub_uncovered_cases_are_unpredictable) {
        static const struct {
                const char *cfg;
                void (*extra)(hlog *l);
                uint32_t want;
        } cases[] = {
                { "menuentry 'Debian' {\nlinux /vmlinuz\n}\n", NULL, (1u << 8) | (1u << 9) },
                { "if true; then boot; fi\n", NULL, (1u << 8) | (1u << 9) },
                { "linux /vmlinuz $cmdline\ninitrd /initrd.img\nboot\n", NULL, (1u << 8) | (1u << 9) },
                { "linux /vmlinuz quiet\ninitrd /initrd.img\n", NULL, (1u << 8) | (1u << 9) },   /* no boot */
                { "insmod ext2\nlinux /vmlinuz\nboot\n", NULL, (1u << 8) | (1u << 9) },
                { "search --file --set=root /grub/marker\nlinux /vmlinuz\nboot\n", NULL, (1u << 8) | (1u << 9) },
                { "linux /vmlinuz\nboot\necho after\n", NULL, (1u << 8) | (1u << 9) },
                { "initrd /initrd.img\nlinux /vmlinuz\nboot\n", NULL, (1u << 8) | (1u << 9) },
                /* Another kernel path, its bytes not given: PCR 8 is still known. */
                { "linux /vmlinuz-new quiet\nboot\n", NULL, 1u << 9 },
                /* The baseline GRUB opened a file its commands do not explain,
                 * or logged another kind of PCR 8 event. */
                { GRUB_CFG_A, add_module_file, (1u << 8) | (1u << 9) },
                { GRUB_CFG_A, add_grub_other, (1u << 8) | (1u << 9) },
                /* A logged word held blanks: the command is not known again. */
                { GRUB_CFG_A, add_blank_word, (1u << 8) | (1u << 9) },
        };
        for (size_t i = 0; i < MB_ARRAY_SIZE(cases); i++) {
                mb_predict_input in = { 0 };
                grub_boot(&L, cases[i].extra);
                CHECK_EQ_INT(run_cfg(&in, cases[i].cfg), MB_OK);
                if (P.unpredictable != cases[i].want)
                        fprintf(stderr, "  case %zu: unpredictable %#x (%s)\n", i, P.unpredictable,
                                P.reason[8] ? P.reason[8] : P.reason[9] ? P.reason[9] : "-");
                CHECK_EQ_INT(P.unpredictable, cases[i].want);
                for (uint32_t k = 8; k <= 9; k++)
                        CHECK(!(P.unpredictable & (1u << k)) || P.reason[k] != NULL);
                check_baseline_kept((1u << 8) | (1u << 9));
        }
        /* --initrd with another count than grub.cfg's initrd line. */
        {
                mb_predict_chunk ch[2] = { { "a", 1 }, { "b", 1 } };
                mb_predict_input in = { .initrd_given = true, .initrd = ch, .n_initrd = 2 };
                grub_boot(&L, NULL);
                CHECK_EQ_INT(run_cfg(&in, GRUB_CFG_A), MB_OK);
                CHECK_EQ_INT(P.unpredictable, 1u << 9);
        }
        /* Options (or an entry) with GRUB as next stage: every PCR they touch. */
        {
                mb_predict_input in = { .options = "quiet", .options_len = 5 };
                grub_boot(&L, NULL);
                CHECK_EQ_INT(run_cfg(&in, NULL), MB_OK);
                CHECK_EQ_INT(P.unpredictable, (1u << 9) | (1u << 12));
        }
        /* A grub.cfg for a boot that did not chainload GRUB. */
        {
                mb_predict_input in = { 0 };
                mshim_boot(&L, NULL);
                CHECK_EQ_INT(run_cfg(&in, GRUB_CFG_A), MB_OK);
                CHECK_EQ_INT(P.unpredictable, (1u << 8) | (1u << 9));
        }
        /* A next stage that is not a PE image is an error. */
        {
                mb_predict_input in = { .next_stage = "not a PE", .next_stage_size = 8 };
                grub_boot(&L, NULL);
                CHECK(run_cfg(&in, NULL) != MB_OK);
                CHECK_EQ_INT(P.err_what, MB_PREDICT_NEXT_STAGE);
        }
}

/* ---- Secure Boot: db/dbx updates (docs/predict.md "Secure Boot") ----------
 * The UEFI spec's layouts, written out here: EFI_SIGNATURE_LIST (UEFI 2.10
 * 32.4.1), UEFI_VARIABLE_DATA (PC Client PFP 10.4.4), EFI_VARIABLE_
 * AUTHENTICATION_2 (UEFI 2.10 8.2.2). GUIDs in their on-disk byte order. */
static const uint8_t G_SECDB[16] = { 0xcb, 0xb2, 0x19, 0xd7, 0x3a, 0x3d, 0x96, 0x45,
                                     0xa3, 0xbc, 0xda, 0xd0, 0x0e, 0x67, 0x65, 0x6f };
static const uint8_t G_GLOBAL[16] = { 0x61, 0xdf, 0xe4, 0x8b, 0xca, 0x93, 0xd2, 0x11,
                                      0xaa, 0x0d, 0x00, 0xe0, 0x98, 0x03, 0x2b, 0x8c };
static const uint8_t G_PKCS7[16] = { 0x9d, 0xd2, 0xaf, 0x4a, 0xdf, 0x68, 0xee, 0x49,
                                     0x8a, 0xa9, 0x34, 0x7d, 0x37, 0x56, 0x65, 0xa7 };
static const uint8_t OWNER[16] = "an owner guid...";
/* Stand-ins for DER certificates (a SEQUENCE tag, then anything). */
static const uint8_t CERT_DB[40] = "\x30 the db certificate that verifies all";
static const uint8_t CERT_NEW[40] = "\x30 a second certificate for db, 40 byte";

/* One EFI_SIGNATURE_LIST: type, ListSize, HeaderSize 0, SignatureSize, then
 * n entries of owner + data (each sig bytes). */
static size_t esl_n(uint8_t *out, const uint8_t type[16], const uint8_t *const *data, size_t n, size_t sig) {
        memcpy(out, type, 16);
        mb_put_le32(out + 16, (uint32_t) (28 + n * (16 + sig)));
        mb_put_le32(out + 20, 0);
        mb_put_le32(out + 24, (uint32_t) (16 + sig));
        for (size_t i = 0; i < n; i++) {
                memcpy(out + 28 + i * (16 + sig), OWNER, 16);
                memcpy(out + 28 + i * (16 + sig) + 16, data[i], sig);
        }
        return 28 + n * (16 + sig);
}

/* UEFI_VARIABLE_DATA: VariableName GUID, UnicodeNameLength and
 * VariableDataLength (UINT64), the name (no NUL), the data. */
static size_t uefi_var(uint8_t *out, const uint8_t guid[16], const char *name, const void *data, size_t n) {
        size_t k = strlen(name);
        memcpy(out, guid, 16);
        memset(out + 16, 0, 16);
        mb_put_le32(out + 16, (uint32_t) k);
        mb_put_le32(out + 24, (uint32_t) n);
        for (size_t i = 0; i < k; i++) {
                out[32 + 2 * i] = (uint8_t) name[i];
                out[33 + 2 * i] = 0;
        }
        if (n)
                memcpy(out + 32 + 2 * k, data, n);
        return 32 + 2 * k + n;
}

/* The baseline's Secure Boot state: db holds CERT_DB, dbx DBX0 (DBX0_N
 * bytes; 0: dbx empty), SecureBoot = SB_ON. PCR 7's events in order. */
static uint8_t DB0[128], DBX0[256], SB_ON = 1, WITH_AUTH = 1;
static size_t DB0_N, DBX0_N;
static uint8_t EV7[6][512];
static size_t EV7_N[6];

static void add_sb(hlog *l) {
        static const uint8_t pk[] = "PK's lists", kek[] = "KEK's lists";
        uint8_t auth[64];
        const uint8_t *c[1] = { CERT_DB };
        DB0_N = esl_n(DB0, X509_GUID, c, 1, sizeof(CERT_DB));
        EV7_N[0] = uefi_var(EV7[0], G_GLOBAL, "SecureBoot", &SB_ON, 1);
        EV7_N[1] = uefi_var(EV7[1], G_GLOBAL, "PK", pk, sizeof(pk));
        EV7_N[2] = uefi_var(EV7[2], G_GLOBAL, "KEK", kek, sizeof(kek));
        EV7_N[3] = uefi_var(EV7[3], G_SECDB, "db", DB0, DB0_N);
        EV7_N[4] = uefi_var(EV7[4], G_SECDB, "dbx", DBX0, DBX0_N);
        memcpy(auth, OWNER, 16);
        memcpy(auth + 16, CERT_DB, sizeof(CERT_DB));
        EV7_N[5] = uefi_var(EV7[5], G_SECDB, "db", auth, 16 + sizeof(CERT_DB));
        for (int i = 0; i < 5; i++)
                event_self(l, 7, MB_EV_EFI_VARIABLE_DRIVER_CONFIG, EV7[i], EV7_N[i]);
        if (WITH_AUTH)
                event_self(l, 7, MB_EV_EFI_VARIABLE_AUTHORITY, EV7[5], EV7_N[5]);
}

/* PCR 7 must be [separator, SecureBoot, PK, KEK, db(db), dbx(dbx), authority]. */
static void check_pcr7(const uint8_t *db, size_t db_n, const uint8_t *dbx, size_t dbx_n) {
        static uint8_t e3[1024], e4[1024];
        static const uint8_t sep[4] = { 0 };
        const void *in7[] = { sep, EV7[0], EV7[1], EV7[2], e3, e4, EV7[5] };
        size_t sz7[] = { 4, EV7_N[0], EV7_N[1], EV7_N[2], uefi_var(e3, G_SECDB, "db", db, db_n),
                         uefi_var(e4, G_SECDB, "dbx", dbx, dbx_n), EV7_N[5] };
        check_pcr(7, in7, sz7, 7);
}

static mb_err run_sb(mb_predict_input *in) {
        mshim_boot(&L, add_sb);
        return run(in, &L);
}

TEST(sb_db_append_rebuilds_pcr7) {
        uint8_t add[256], want[512];
        const uint8_t *both[2] = { CERT_DB, CERT_NEW }, *one[1] = { CERT_NEW };
        size_t n = esl_n(add, X509_GUID, one, 1, sizeof(CERT_NEW));
        mb_predict_input in = { .db_append = add, .db_append_size = n };

        DBX0_N = 0;
        CHECK_EQ_INT(run_sb(&in), MB_OK);
        CHECK_EQ_INT(P.unpredictable, 0);
        CHECK_EQ_INT(P.changed, 1u << 7);
        CHECK(P.refused == NULL);
        memcpy(want, DB0, DB0_N);
        memcpy(want + DB0_N, add, n);
        check_pcr7(want, DB0_N + n, NULL, 0);
        check_baseline_kept(1u << 7);
        /* The entry already in db is dropped (UEFI 2.10 8.2.1), the new one
         * kept: the list that reaches db holds CERT_NEW only. */
        in.db_append_size = esl_n(add, X509_GUID, both, 2, sizeof(CERT_DB));
        CHECK_EQ_INT(run_sb(&in), MB_OK);
        CHECK_EQ_INT(P.changed, 1u << 7);
        check_pcr7(want, DB0_N + n, NULL, 0);
        /* Only entries already there: db and PCR 7 as they were. */
        in.db_append_size = esl_n(add, X509_GUID, both, 1, sizeof(CERT_DB));
        CHECK_EQ_INT(run_sb(&in), MB_OK);
        CHECK_EQ_INT(P.changed, 0);
        CHECK_EQ_INT(P.unpredictable, 0);
        check_pcr7(DB0, DB0_N, NULL, 0);
}

/* EFI_VARIABLE_AUTHENTICATION_2 around lists: EFI_TIME, dwLength,
 * wRevision 0x0200, wCertificateType 0x0EF1, CertType, a "signature". */
static size_t auth2(uint8_t *out, const uint8_t *lists, size_t n) {
        static const uint8_t p7[] = "\x30 stands for a PKCS#7 SignedData";
        memset(out, 0, 16);
        mb_put_le16(out, 2026);
        out[2] = 1;
        out[3] = 2;
        mb_put_le32(out + 16, (uint32_t) (24 + sizeof(p7)));
        mb_put_le16(out + 20, 0x0200);
        mb_put_le16(out + 22, 0x0EF1);
        memcpy(out + 24, G_PKCS7, 16);
        memcpy(out + 40, p7, sizeof(p7));
        memcpy(out + 40 + sizeof(p7), lists, n);
        return 40 + sizeof(p7) + n;
}

TEST(sb_dbx_append_auth2_and_revocations) {
        uint8_t h[32], lists[256], pay[512], kh[32];
        const uint8_t *one[1] = { h }, *kone[1] = { kh }, *cone[1] = { CERT_DB }, *other[1] = { CERT_NEW };
        size_t n;
        mb_predict_input in = { 0 };

        memset(h, 0x5a, sizeof(h));     /* no image has this SHA-256 */
        n = esl_n(lists, SHA256_GUID, one, 1, 32);
        in.dbx_append = pay;
        in.dbx_append_size = auth2(pay, lists, n);
        DBX0_N = 0;
        CHECK_EQ_INT(run_sb(&in), MB_OK);
        CHECK_EQ_INT(P.unpredictable, 0);
        CHECK_EQ_INT(P.changed, 1u << 7);
        check_pcr7(DB0, DB0_N, lists, n);
        check_baseline_kept(1u << 7);
        /* The kernel's Authenticode SHA-256 (its PCR 4 digest): no boot. */
        H(1, KERNEL_DIGEST_INPUT, sizeof(KERNEL_DIGEST_INPUT), kh);
        in.dbx_append_size = esl_n(pay, SHA256_GUID, kone, 1, 32);
        CHECK_EQ_INT(run_sb(&in), MB_OK);
        CHECK(P.refused != NULL);
        CHECK((P.unpredictable & ((1u << 4) | (1u << 5) | (1u << 7) | (1u << 9) | (1u << 12))) ==
              ((1u << 4) | (1u << 5) | (1u << 7) | (1u << 9) | (1u << 12)));
        CHECK(P.reason[0] == P.refused);
        /* ... but not with Secure Boot off: the firmware checks nothing
         * (and logs no authority). */
        SB_ON = WITH_AUTH = 0;
        CHECK_EQ_INT(run_sb(&in), MB_OK);
        SB_ON = WITH_AUTH = 1;
        CHECK(P.refused == NULL);
        CHECK_EQ_INT(P.unpredictable, 0);
        CHECK_EQ_INT(P.changed, 1u << 7);
        /* The authority's db certificate in dbx: no boot. */
        in.dbx_append_size = esl_n(pay, X509_GUID, cone, 1, sizeof(CERT_DB));
        CHECK_EQ_INT(run_sb(&in), MB_OK);
        CHECK(P.refused != NULL);
        /* Another certificate: it may revoke a chain the log does not show. */
        in.dbx_append_size = esl_n(pay, X509_GUID, other, 1, sizeof(CERT_NEW));
        CHECK_EQ_INT(run_sb(&in), MB_OK);
        CHECK(P.refused == NULL);
        CHECK_EQ_INT(P.unpredictable, 1u << 7);
}

TEST(sb_bad_update_files) {
        uint8_t h[32] = { 0 }, lists[128], pay[512];
        const uint8_t *one[1] = { h };
        size_t n = esl_n(lists, SHA256_GUID, one, 1, 32), pn;
        mb_predict_input in = { .dbx_append = pay };

        memcpy(pay, lists, n);
        in.dbx_append_size = n - 1;                     /* truncated list */
        CHECK(run_sb(&in) != MB_OK);
        CHECK_EQ_INT(P.err_what, MB_PREDICT_DBX_APPEND);
        CHECK(P.err_why != NULL);
        in.dbx_append_size = 0;                         /* empty */
        CHECK(run_sb(&in) != MB_OK);
        mb_put_le32(pay + 24, 16 + 31);                 /* a SHA-256 entry of 31 bytes */
        mb_put_le32(pay + 16, 28 + 47);
        in.dbx_append_size = 28 + 47;
        CHECK(run_sb(&in) != MB_OK);
        pn = auth2(pay, lists, n);
        in.dbx_append_size = pn;
        CHECK_EQ_INT(run_sb(&in), MB_OK);
        pay[8] = 1;                                     /* Nanosecond set */
        CHECK(run_sb(&in) != MB_OK);
        pay[8] = 0;
        pay[24] ^= 1;                                   /* CertType not PKCS7 */
        CHECK(run_sb(&in) != MB_OK);
        pay[24] ^= 1;
        in.dbx_append_size = 60;                        /* dwLength past the end */
        CHECK(run_sb(&in) != MB_OK);
        CHECK_EQ_INT(P.err_what, MB_PREDICT_DBX_APPEND);
        /* A db append to a log with no db event: PCR 7 unpredictable. */
        {
                mb_predict_input ind = { .db_append = lists, .db_append_size = n };
                mshim_boot(&L, NULL);
                CHECK_EQ_INT(run(&ind, &L), MB_OK);
                CHECK_EQ_INT(P.unpredictable, 1u << 7);
        }
}

/* A stand-in for OpenSSL's check (tools/cmd/sigs.c): the image's signature
 * "verifies" with the certificates VERIFIER_CERTS lists. */
static const uint8_t *VERIFIER_CERTS[2];
static int fake_verify(void *ctx, const void *image, size_t image_size, const uint8_t *pkcs7, size_t pkcs7_len,
                       const uint8_t *cert, size_t cert_len) {
        (void) ctx, (void) image, (void) image_size, (void) pkcs7, (void) pkcs7_len;
        for (int i = 0; i < 2; i++)
                if (VERIFIER_CERTS[i] && cert_len == 40 && memcmp(cert, VERIFIER_CERTS[i], 40) == 0)
                        return 1;
        return 0;
}

/* A new kernel (Debian's, signed: one WIN_CERTIFICATE) with Secure Boot on:
 * the db entry whose certificate verifies it decides PCR 7. */
TEST(sb_new_kernel_signer) {
        size_t ksize = 0, n;
        uint8_t *k = tl_read_file(getenv("MB_KERNEL") ? getenv("MB_KERNEL") : "build/kernel/vmlinuz", &ksize);
        uint8_t add[256];
        const uint8_t *one[1] = { CERT_NEW };
        mb_predict_input in = { .sb_verify = fake_verify };

        CHECK(k != NULL);
        if (!k)
                return;
        in.kernel = k;
        in.kernel_size = ksize;
        DBX0_N = 0;
        /* Verified by the baseline's authority: PCR 7 kept. */
        VERIFIER_CERTS[0] = CERT_DB;
        VERIFIER_CERTS[1] = NULL;
        CHECK_EQ_INT(run_sb(&in), MB_OK);
        CHECK(!(P.unpredictable & (1u << 7)));
        CHECK(!(P.changed & (1u << 7)));
        check_pcr7(DB0, DB0_N, NULL, 0);
        /* By a certificate appended to db only: another authority. */
        VERIFIER_CERTS[0] = CERT_NEW;
        n = esl_n(add, X509_GUID, one, 1, sizeof(CERT_NEW));
        in.db_append = add;
        in.db_append_size = n;
        CHECK_EQ_INT(run_sb(&in), MB_OK);
        CHECK(P.refused == NULL);
        CHECK(P.unpredictable & (1u << 7));
        /* By both: db's order decides, CERT_DB comes first. */
        VERIFIER_CERTS[1] = CERT_DB;
        CHECK_EQ_INT(run_sb(&in), MB_OK);
        CHECK(!(P.unpredictable & (1u << 7)));
        CHECK_EQ_INT(P.changed & (1u << 7), 1u << 7);   /* db's event changed, the authority kept */
        /* By nothing in db: the firmware refuses it. */
        VERIFIER_CERTS[0] = VERIFIER_CERTS[1] = NULL;
        CHECK_EQ_INT(run_sb(&in), MB_OK);
        CHECK(P.refused != NULL);
        /* Its signer's certificate in dbx: refused though db verifies it. */
        VERIFIER_CERTS[0] = CERT_DB;
        VERIFIER_CERTS[1] = CERT_NEW;
        in.db_append = NULL;
        in.dbx_append = add;
        in.dbx_append_size = n;
        CHECK_EQ_INT(run_sb(&in), MB_OK);
        CHECK(P.refused != NULL);
        /* Without a verifier: PCR 7 unpredictable, never guessed. */
        in.sb_verify = NULL;
        in.dbx_append = NULL;
        CHECK_EQ_INT(run_sb(&in), MB_OK);
        CHECK(P.unpredictable & (1u << 7));
        free(k);
}

int main(void) {
        load_expected();
        RUN(corpus_unchanged_predicts_replay);
        RUN(corpus_foreign_boots_are_unpredictable);
        RUN(corpus_first_boot_needs_every_file);
        RUN(mshim_boot_unchanged);
        RUN(new_options_change_9_and_12);
        RUN(new_initrd_and_no_initrd);
        RUN(new_config_rebuilds_pcr5_in_place);
        RUN(totp_fence);
        RUN(uncovered_cases_are_unpredictable);
        RUN(sb_db_append_rebuilds_pcr7);
        RUN(sb_dbx_append_auth2_and_revocations);
        RUN(sb_bad_update_files);
        RUN(sb_new_kernel_signer);
        RUN(shim_new_moklist);
        RUN(shim_moklist_unpredictable_cases);
        RUN(shim_new_image_and_bad_input);
        RUN(shim_boot_new_options);
        RUN(grub_unchanged_cfg_predicts_baseline);
        RUN(grub_new_cfg_kernel_initrd);
        RUN(grub_uncovered_cases_are_unpredictable);
        TL_EXIT();
}
