/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * TCG event log codec (TCG PC Client Platform Firmware Profile, "PFP",
 * version 1.05, section 10). Every length read from the log is checked
 * against what is left of the buffer before it is used.
 */
#include "mb/tcglog.h"
#include "mb/emit.h"

/* TCG_PCR_EVENT (PFP 10.2.1): pcr, type, SHA-1 digest, data size. */
#define LEGACY_HEADER_SIZE (4 + 4 + 20 + 4)
/* TCG_EfiSpecIDEventStruct (PFP 10.4.5.1) up to numberOfAlgorithms. */
#define SPEC_ID_FIXED_SIZE (16 + 4 + 1 + 1 + 1 + 1 + 4)

static const uint8_t spec_id_sig[16] = "Spec ID Event03";
static const uint8_t locality_sig[16] = "StartupLocality";

static mb_err fail(mb_tcglog *log, size_t off, mb_err err, const char *reason) {
        log->err_offset = off;
        log->err_number = log->next_number;
        log->err_reason = reason;
        return err;
}

/* fail() with the values that disagree: "<what> <a><mid><b><end>", kept in
 * log->err_detail. */
static mb_err fail_values(mb_tcglog *log, size_t off, mb_err err, const char *what, uint64_t a, const char *mid,
                          uint64_t b, const char *end) {
        mb_strbuf sb;

        mb_strbuf_init(&sb, log->err_detail, sizeof(log->err_detail));
        mb_strbuf_puts(&sb, what);
        mb_strbuf_u64(&sb, a);
        mb_strbuf_puts(&sb, mid);
        mb_strbuf_u64(&sb, b);
        mb_strbuf_puts(&sb, end);
        return fail(log, off, err, log->err_detail);
}

/* The Spec ID Event03 data names the digest algorithms every later record
 * carries, with their sizes (PFP 10.4.5.1). */
static mb_err parse_spec_id(mb_tcglog *log, const uint8_t *d, uint32_t n, size_t rec_off) {
        uint32_t count;
        size_t need;

        if (n < SPEC_ID_FIXED_SIZE)
                return fail(log, rec_off, MB_ERR_TRUNCATED, "Spec ID event too short");
        count = mb_le32(d + 24);
        if (count == 0 || count > MB_TCGLOG_MAX_ALGS)
                return fail(log, rec_off, MB_ERR_INVALID, "Spec ID event declares an absurd number of algorithms");
        need = SPEC_ID_FIXED_SIZE + (size_t) count * 4 + 1; /* + vendorInfoSize */
        if (n < need)
                return fail(log, rec_off, MB_ERR_TRUNCATED, "Spec ID event shorter than its algorithm list");
        for (uint32_t i = 0; i < count; i++) {
                const uint8_t *a = d + SPEC_ID_FIXED_SIZE + (size_t) i * 4;
                uint16_t alg = mb_le16(a), size = mb_le16(a + 2);
                size_t known = mb_hash_size(alg);

                if (size == 0 || size > MB_HASH_MAX || (known && known != size))
                        return fail(log, rec_off, MB_ERR_INVALID, "Spec ID event gives a wrong digest size");
                for (uint32_t j = 0; j < i; j++)
                        if (log->algs[j].alg == alg)
                                return fail(log, rec_off, MB_ERR_INVALID, "Spec ID event lists an algorithm twice");
                log->algs[i].alg = alg;
                log->algs[i].size = size;
        }
        if (n - need < d[need - 1])
                return fail(log, rec_off, MB_ERR_TRUNCATED, "Spec ID vendor info runs past the event");
        log->n_algs = count;
        return MB_OK;
}

/* Recognise the format from the first record. On failure the log is still
 * filled in so that err_offset/err_reason can be reported. */
static mb_err open_log(mb_tcglog *l) {
        const uint8_t *p = l->buf;
        uint32_t data_size;

        if (l->size == 0)
                return fail(l, 0, MB_ERR_TRUNCATED, "empty file");
        if (l->size < LEGACY_HEADER_SIZE)
                return fail(l, 0, MB_ERR_TRUNCATED, "shorter than one event record");
        data_size = mb_le32(p + 28);
        if (mb_out_of_bounds(l->size, LEGACY_HEADER_SIZE, data_size))
                return fail(l, 0, MB_ERR_TRUNCATED, "first record's event data runs past the end of the file");

        /* A crypto-agile log announces itself with an EV_NO_ACTION record in
         * the old SHA-1 format whose data is the Spec ID Event03 structure
         * (PFP 10.4.5.1); anything else is a SHA-1-only legacy log. */
        if (mb_le32(p) == 0 && mb_le32(p + 4) == MB_EV_NO_ACTION && data_size >= 16 &&
            mb_memcmp(p + LEGACY_HEADER_SIZE, spec_id_sig, 16) == 0) {
                l->format = MB_TCGLOG_CRYPTO_AGILE;
                return parse_spec_id(l, p + LEGACY_HEADER_SIZE, data_size, 0);
        }
        l->format = MB_TCGLOG_SHA1_LEGACY;
        l->n_algs = 1;
        l->algs[0].alg = MB_ALG_SHA1;
        l->algs[0].size = 20;
        return MB_OK;
}

mb_err mb_tcglog_open(mb_tcglog *log, const void *buf, size_t size) {
        mb_tcglog l = { .buf = buf, .size = size };
        mb_err r = open_log(&l);

        *log = l;
        return r;
}

static mb_err next_legacy(mb_tcglog *log, size_t off, mb_tcglog_event *ev) {
        const uint8_t *p = log->buf + off;
        uint32_t n;

        if (mb_out_of_bounds(log->size, off, LEGACY_HEADER_SIZE))
                return fail(log, off, MB_ERR_TRUNCATED, "record header truncated");
        n = mb_le32(p + 28);
        if (mb_out_of_bounds(log->size, off + LEGACY_HEADER_SIZE, n))
                return fail_values(log, off, MB_ERR_TRUNCATED, "event data runs past the end of the log: ", n,
                                   " bytes declared, ", log->size - off - LEGACY_HEADER_SIZE, " left");
        ev->pcr = mb_le32(p);
        ev->type = mb_le32(p + 4);
        ev->n_digests = 1;
        ev->digests[0] = (mb_tcglog_digest) { MB_ALG_SHA1, 20, p + 8 };
        ev->data = p + LEGACY_HEADER_SIZE;
        ev->data_size = n;
        ev->record_size = LEGACY_HEADER_SIZE + (size_t) n;
        return MB_OK;
}

static const mb_tcglog_alg *find_alg(const mb_tcglog *log, uint16_t alg) {
        for (uint32_t i = 0; i < log->n_algs; i++)
                if (log->algs[i].alg == alg)
                        return &log->algs[i];
        return NULL;
}

/* TPML_DIGEST_VALUES (PFP 10.2.2 TCG_PCR_EVENT2): each digest's algorithm
 * must be one the header declares, at most once per record; digest sizes
 * come from the header because the reader may not know the algorithm. A
 * record may carry fewer digests than the header declares (tpm2-tools'
 * test logs do): the banks it omits are simply not extended by it. */
static mb_err parse_digests(mb_tcglog *log, size_t rec_off, size_t *pos, mb_tcglog_event *ev) {
        size_t o = *pos;
        uint32_t count;

        if (mb_out_of_bounds(log->size, o, 4))
                return fail(log, rec_off, MB_ERR_TRUNCATED, "digest count truncated");
        count = mb_le32(log->buf + o);
        o += 4;
        if (count == 0 || count > log->n_algs)
                return fail_values(log, rec_off, MB_ERR_INVALID, "digest count disagrees with the Spec ID header: ", count,
                                   " digests, the header declares ", log->n_algs, " algorithms");
        for (uint32_t i = 0; i < count; i++) {
                const mb_tcglog_alg *a;
                uint16_t alg;

                if (mb_out_of_bounds(log->size, o, 2))
                        return fail(log, rec_off, MB_ERR_TRUNCATED, "digest algorithm truncated");
                alg = mb_le16(log->buf + o);
                a = find_alg(log, alg);
                if (!a) {
                        mb_strbuf sb;
                        mb_strbuf_init(&sb, log->err_detail, sizeof(log->err_detail));
                        mb_strbuf_puts(&sb, "digest algorithm not declared in the Spec ID header: TPM_ALG_ID ");
                        mb_strbuf_hexnum(&sb, alg);
                        return fail(log, rec_off, MB_ERR_INVALID, log->err_detail);
                }
                for (uint32_t j = 0; j < i; j++)
                        if (ev->digests[j].alg == alg)
                                return fail(log, rec_off, MB_ERR_INVALID, "digest algorithm repeated in one record");
                if (mb_out_of_bounds(log->size, o + 2, a->size))
                        return fail(log, rec_off, MB_ERR_TRUNCATED, "digest truncated");
                ev->digests[i] = (mb_tcglog_digest) { alg, a->size, log->buf + o + 2 };
                o += 2 + (size_t) a->size;
        }
        ev->n_digests = count;
        *pos = o;
        return MB_OK;
}

static mb_err next_agile(mb_tcglog *log, size_t off, mb_tcglog_event *ev) {
        size_t o = off + 8;
        uint32_t n;
        mb_err r;

        if (mb_out_of_bounds(log->size, off, 8))
                return fail(log, off, MB_ERR_TRUNCATED, "record header truncated");
        ev->pcr = mb_le32(log->buf + off);
        ev->type = mb_le32(log->buf + off + 4);
        r = parse_digests(log, off, &o, ev);
        if (r != MB_OK)
                return r;
        if (mb_out_of_bounds(log->size, o, 4))
                return fail(log, off, MB_ERR_TRUNCATED, "event size truncated");
        n = mb_le32(log->buf + o);
        o += 4;
        if (mb_out_of_bounds(log->size, o, n))
                return fail_values(log, off, MB_ERR_TRUNCATED, "event data runs past the end of the log: ", n,
                                   " bytes declared, ", log->size - o, " left");
        ev->data = log->buf + o;
        ev->data_size = n;
        ev->record_size = o + n - off;
        return MB_OK;
}

mb_err mb_tcglog_next(mb_tcglog *log, mb_tcglog_event *ret_ev) {
        mb_tcglog_event ev = { .offset = log->off, .number = log->next_number };
        mb_err r;

        if (log->off == log->size)
                return MB_END;
        /* The header record always has the legacy layout (PFP 10.4.5.1). */
        if (log->format == MB_TCGLOG_SHA1_LEGACY || log->next_number == 0)
                r = next_legacy(log, log->off, &ev);
        else
                r = next_agile(log, log->off, &ev);
        if (r != MB_OK)
                return r;
        log->off += ev.record_size;
        log->next_number++;
        *ret_ev = ev;
        return MB_OK;
}

const mb_tcglog_digest *mb_tcglog_event_digest(const mb_tcglog_event *ev, uint16_t alg) {
        for (uint32_t i = 0; i < ev->n_digests; i++)
                if (ev->digests[i].alg == alg)
                        return &ev->digests[i];
        return NULL;
}

/* StartupLocality event data (PFP 10.4.5.3): signature + one locality byte. */
bool mb_tcglog_startup_locality(const mb_tcglog_event *ev, uint8_t *ret_locality) {
        /* PFP 10.4.5.3: logged in PCR 0; anywhere else it says nothing. */
        if (ev->type != MB_EV_NO_ACTION || ev->pcr != 0 || ev->data_size != 17 ||
            mb_memcmp(ev->data, locality_sig, 16) != 0)
                return false;
        *ret_locality = ev->data[16];
        return true;
}

const char *mb_tcglog_type_name(uint32_t type) {
        static const struct { uint32_t type; const char *name; } names[] = {
                { MB_EV_PREBOOT_CERT, "EV_PREBOOT_CERT" },
                { MB_EV_POST_CODE, "EV_POST_CODE" },
                { MB_EV_UNUSED, "EV_UNUSED" },
                { MB_EV_NO_ACTION, "EV_NO_ACTION" },
                { MB_EV_SEPARATOR, "EV_SEPARATOR" },
                { MB_EV_ACTION, "EV_ACTION" },
                { MB_EV_EVENT_TAG, "EV_EVENT_TAG" },
                { MB_EV_S_CRTM_CONTENTS, "EV_S_CRTM_CONTENTS" },
                { MB_EV_S_CRTM_VERSION, "EV_S_CRTM_VERSION" },
                { MB_EV_CPU_MICROCODE, "EV_CPU_MICROCODE" },
                { MB_EV_PLATFORM_CONFIG_FLAGS, "EV_PLATFORM_CONFIG_FLAGS" },
                { MB_EV_TABLE_OF_DEVICES, "EV_TABLE_OF_DEVICES" },
                { MB_EV_COMPACT_HASH, "EV_COMPACT_HASH" },
                { MB_EV_IPL, "EV_IPL" },
                { MB_EV_IPL_PARTITION_DATA, "EV_IPL_PARTITION_DATA" },
                { MB_EV_NONHOST_CODE, "EV_NONHOST_CODE" },
                { MB_EV_NONHOST_CONFIG, "EV_NONHOST_CONFIG" },
                { MB_EV_NONHOST_INFO, "EV_NONHOST_INFO" },
                { MB_EV_OMIT_BOOT_DEVICE_EVENTS, "EV_OMIT_BOOT_DEVICE_EVENTS" },
                { MB_EV_EFI_EVENT_BASE, "EV_EFI_EVENT_BASE" },
                { MB_EV_EFI_VARIABLE_DRIVER_CONFIG, "EV_EFI_VARIABLE_DRIVER_CONFIG" },
                { MB_EV_EFI_VARIABLE_BOOT, "EV_EFI_VARIABLE_BOOT" },
                { MB_EV_EFI_BOOT_SERVICES_APPLICATION, "EV_EFI_BOOT_SERVICES_APPLICATION" },
                { MB_EV_EFI_BOOT_SERVICES_DRIVER, "EV_EFI_BOOT_SERVICES_DRIVER" },
                { MB_EV_EFI_RUNTIME_SERVICES_DRIVER, "EV_EFI_RUNTIME_SERVICES_DRIVER" },
                { MB_EV_EFI_GPT_EVENT, "EV_EFI_GPT_EVENT" },
                { MB_EV_EFI_ACTION, "EV_EFI_ACTION" },
                { MB_EV_EFI_PLATFORM_FIRMWARE_BLOB, "EV_EFI_PLATFORM_FIRMWARE_BLOB" },
                { MB_EV_EFI_HANDOFF_TABLES, "EV_EFI_HANDOFF_TABLES" },
                { MB_EV_EFI_PLATFORM_FIRMWARE_BLOB2, "EV_EFI_PLATFORM_FIRMWARE_BLOB2" },
                { MB_EV_EFI_HANDOFF_TABLES2, "EV_EFI_HANDOFF_TABLES2" },
                { MB_EV_EFI_VARIABLE_BOOT2, "EV_EFI_VARIABLE_BOOT2" },
                { MB_EV_EFI_GPT_EVENT2, "EV_EFI_GPT_EVENT2" },
                { MB_EV_EFI_HCRTM_EVENT, "EV_EFI_HCRTM_EVENT" },
                { MB_EV_EFI_VARIABLE_AUTHORITY, "EV_EFI_VARIABLE_AUTHORITY" },
                { MB_EV_EFI_SPDM_FIRMWARE_BLOB, "EV_EFI_SPDM_FIRMWARE_BLOB" },
                { MB_EV_EFI_SPDM_FIRMWARE_CONFIG, "EV_EFI_SPDM_FIRMWARE_CONFIG" },
        };
        for (size_t i = 0; i < MB_ARRAY_SIZE(names); i++)
                if (names[i].type == type)
                        return names[i].name;
        return NULL;
}

void mb_replay_init(mb_replay *r, const mb_tcglog *log) {
        mb_memset(r, 0, sizeof(*r));
        r->n_banks = log->n_algs;
        for (uint32_t i = 0; i < log->n_algs; i++) {
                r->banks[i].alg = log->algs[i].alg;
                r->banks[i].size = log->algs[i].size;
                r->banks[i].computable = mb_hash_size(log->algs[i].alg) == log->algs[i].size;
        }
}

mb_pcr_bank *mb_replay_bank(mb_replay *r, uint16_t alg) {
        for (uint32_t i = 0; i < r->n_banks; i++)
                if (r->banks[i].alg == alg)
                        return &r->banks[i];
        return NULL;
}

mb_err mb_pcr_extend(uint16_t alg, uint8_t *pcr, const uint8_t *digest) {
        size_t n = mb_hash_size(alg);
        mb_hash h;
        mb_err r = mb_hash_init(&h, alg);

        if (r != MB_OK)
                return r;
        mb_hash_update(&h, pcr, n);
        mb_hash_update(&h, digest, n);
        mb_hash_final(&h, pcr);
        return MB_OK;
}

/* PCR 0's value before its first extend: the locality the TPM was started
 * from (PFP 10.4.5.3), or 4 for an H-CRTM sequence (PFP 3.3.4.2). */
static void set_pcr0_start(mb_replay *r, uint8_t value) {
        for (uint32_t i = 0; i < r->n_banks; i++) {
                mb_memset(r->banks[i].pcr[0], 0, MB_HASH_MAX);
                r->banks[i].pcr[0][r->banks[i].size - 1] = value;
        }
        r->pcr0_started = true;
}

void mb_replay_event(mb_replay *r, const mb_tcglog_event *ev) {
        uint8_t locality;

        if (ev->type == MB_EV_NO_ACTION) {
                if (!r->pcr0_started && mb_tcglog_startup_locality(ev, &locality))
                        set_pcr0_start(r, locality);
                return;
        }
        if (ev->pcr >= MB_PCR_COUNT)
                return;
        if (ev->pcr == 0 && !r->pcr0_started && ev->type == MB_EV_EFI_HCRTM_EVENT)
                set_pcr0_start(r, 4);
        if (ev->pcr == 0)
                r->pcr0_started = true;
        for (uint32_t i = 0; i < r->n_banks; i++) {
                mb_pcr_bank *b = &r->banks[i];
                const mb_tcglog_digest *d = mb_tcglog_event_digest(ev, b->alg);

                if (!d)
                        continue;
                b->extended |= 1u << ev->pcr;
                if (!b->computable)
                        continue;
                if (r->extend)
                        r->extend(r->extend_ctx, b, ev->pcr, d->bytes);
                else
                        mb_pcr_extend(b->alg, b->pcr[ev->pcr], d->bytes);
        }
}
