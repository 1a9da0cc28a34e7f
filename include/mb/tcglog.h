/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * TCG event log codec: the one parser of binary_bios_measurements shared by
 * the loader, the host CLI, the predictor and the tests.
 *
 * Formats (TCG PC Client Platform Firmware Profile, section 10):
 *  - crypto-agile: a TCG_PCR_EVENT header whose data is the "Spec ID Event03"
 *    structure (TCG_EfiSpecIDEventStruct, 10.4.5.1), then TCG_PCR_EVENT2
 *    records whose digest list must agree with the header's algorithms;
 *  - sha1-legacy: TCG_PCR_EVENT records only (10.2.1).
 * The parser walks a (buffer, size) pair and trusts no length it reads.
 */
#ifndef MB_TCGLOG_H
#define MB_TCGLOG_H

#include "mb/base.h"
#include "mb/sha.h"

/* Event types (PC Client PFP, section 10.4.1). */
#define MB_EV_PREBOOT_CERT                  0x00000000
#define MB_EV_POST_CODE                     0x00000001
#define MB_EV_UNUSED                        0x00000002
#define MB_EV_NO_ACTION                     0x00000003
#define MB_EV_SEPARATOR                     0x00000004
#define MB_EV_ACTION                        0x00000005
#define MB_EV_EVENT_TAG                     0x00000006
#define MB_EV_S_CRTM_CONTENTS               0x00000007
#define MB_EV_S_CRTM_VERSION                0x00000008
#define MB_EV_CPU_MICROCODE                 0x00000009
#define MB_EV_PLATFORM_CONFIG_FLAGS         0x0000000A
#define MB_EV_TABLE_OF_DEVICES              0x0000000B
#define MB_EV_COMPACT_HASH                  0x0000000C
#define MB_EV_IPL                           0x0000000D
#define MB_EV_IPL_PARTITION_DATA            0x0000000E
#define MB_EV_NONHOST_CODE                  0x0000000F
#define MB_EV_NONHOST_CONFIG                0x00000010
#define MB_EV_NONHOST_INFO                  0x00000011
#define MB_EV_OMIT_BOOT_DEVICE_EVENTS       0x00000012
#define MB_EV_EFI_EVENT_BASE                0x80000000
#define MB_EV_EFI_VARIABLE_DRIVER_CONFIG    0x80000001
#define MB_EV_EFI_VARIABLE_BOOT             0x80000002
#define MB_EV_EFI_BOOT_SERVICES_APPLICATION 0x80000003
#define MB_EV_EFI_BOOT_SERVICES_DRIVER      0x80000004
#define MB_EV_EFI_RUNTIME_SERVICES_DRIVER   0x80000005
#define MB_EV_EFI_GPT_EVENT                 0x80000006
#define MB_EV_EFI_ACTION                    0x80000007
#define MB_EV_EFI_PLATFORM_FIRMWARE_BLOB    0x80000008
#define MB_EV_EFI_HANDOFF_TABLES            0x80000009
#define MB_EV_EFI_PLATFORM_FIRMWARE_BLOB2   0x8000000A
#define MB_EV_EFI_HANDOFF_TABLES2           0x8000000B
#define MB_EV_EFI_VARIABLE_BOOT2            0x8000000C
#define MB_EV_EFI_GPT_EVENT2                0x8000000D
#define MB_EV_EFI_HCRTM_EVENT               0x80000010
#define MB_EV_EFI_VARIABLE_AUTHORITY        0x800000E0
#define MB_EV_EFI_SPDM_FIRMWARE_BLOB        0x800000E1
#define MB_EV_EFI_SPDM_FIRMWARE_CONFIG      0x800000E2

/* mshim's own EV_EVENT_TAG ids (docs/MEASUREMENTS.md). "msh" + n. The
 * PCR 5 ones carry a path; their digest covers the event data and then the
 * file (mb/mboot.h, mb_pcr5_input_build). */
#define MB_TAG_LOADER_CONF     0x6d736801u  /* PCR 5: loader.conf as read */
#define MB_TAG_BLS_ENTRY       0x6d736802u  /* PCR 5: an entry file, before it is tried */
#define MB_TAG_FILE_ABSENT     0x6d736803u  /* PCR 5: loader.conf does not exist */
#define MB_TAG_FILE_UNREADABLE 0x6d736804u  /* PCR 5: a file exists but could not be read */
#define MB_TAG_BLS_ENTRY_BAD   0x6d736805u  /* PCR 5: an entry file that does not parse, skipped */
#define MB_TAG_CHAINLOAD       0x6d736806u  /* PCR 12: the chainload path's LoadOptions */
#define MB_TAG_EXIT            0x6d736807u  /* PCR 5 and 12: mshim returns to the firmware */
#define MB_TAG_TOTP_FENCE      0x6d736808u  /* PCR 12: the TOTP code can no longer be made (mb/totp.h) */
#define MB_TAG_TOTP_INITRD     0x6d736809u  /* PCR 12: the initrd the TOTP code vouches for (mb/totp.h) */
/* Linux EFI stub tags in PCR 9 (drivers/firmware/efi/libstub). */
#define MB_TAG_LINUX_INITRD       0x8F3B22ECu
#define MB_TAG_LINUX_LOAD_OPTIONS 0x8F3B22EDu

#define MB_TCGLOG_MAX_ALGS 8   /* the Spec ID event may declare at most this many */
#define MB_PCR_COUNT       24  /* PCR indices >= 24 are shown but never replayed */

typedef enum mb_tcglog_format {
        MB_TCGLOG_CRYPTO_AGILE = 1,
        MB_TCGLOG_SHA1_LEGACY = 2,
} mb_tcglog_format;

typedef struct mb_tcglog_alg {
        uint16_t alg;   /* TPM_ALG_ID */
        uint16_t size;  /* digest size in bytes, as the header declares it */
} mb_tcglog_alg;

typedef struct mb_tcglog_digest {
        uint16_t alg;
        uint16_t size;
        const uint8_t *bytes;   /* points into the log buffer */
} mb_tcglog_digest;

typedef struct mb_tcglog_event {
        size_t offset;          /* byte offset of the record in the log */
        size_t record_size;     /* bytes the record occupies */
        uint32_t number;        /* 0 = the first record in the file (the header in crypto-agile logs) */
        uint32_t pcr;
        uint32_t type;
        uint32_t n_digests;
        mb_tcglog_digest digests[MB_TCGLOG_MAX_ALGS];
        const uint8_t *data;    /* event data, points into the log buffer */
        uint32_t data_size;
} mb_tcglog_event;

typedef struct mb_tcglog {
        const uint8_t *buf;
        size_t size;
        size_t off;             /* offset of the next record */
        uint32_t next_number;
        mb_tcglog_format format;
        uint32_t n_algs;
        mb_tcglog_alg algs[MB_TCGLOG_MAX_ALGS];
        /* Where and why decoding stopped, for messages that name the offset. */
        size_t err_offset;
        uint32_t err_number;
        const char *err_reason; /* a constant, or err_detail (valid while this struct is) */
        char err_detail[112];
} mb_tcglog;

/* Recognise the format and, for crypto-agile logs, parse the Spec ID header.
 * The header record itself is returned by the first mb_tcglog_next() too. */
mb_err mb_tcglog_open(mb_tcglog *log, const void *buf, size_t size);
/* Next record; MB_END after the last one. On error, log->err_* say where. */
mb_err mb_tcglog_next(mb_tcglog *log, mb_tcglog_event *ret_ev);
/* The digest for alg in ev, or NULL. */
const mb_tcglog_digest *mb_tcglog_event_digest(const mb_tcglog_event *ev, uint16_t alg);
/* If ev is a StartupLocality EV_NO_ACTION event, its locality. */
bool mb_tcglog_startup_locality(const mb_tcglog_event *ev, uint8_t *ret_locality);
/* Symbolic name of an event type ("EV_IPL"), or NULL when unknown. */
const char *mb_tcglog_type_name(uint32_t type);

/* Replay: the PCR values a TPM should hold after the extends in the log. */
typedef struct mb_pcr_bank {
        uint16_t alg;
        uint16_t size;
        bool computable;        /* false for algorithms we cannot hash (e.g. SM3_256) */
        uint32_t extended;      /* bit i set: PCR i was extended at least once */
        uint8_t pcr[MB_PCR_COUNT][MB_HASH_MAX];
} mb_pcr_bank;

typedef struct mb_replay mb_replay;
struct mb_replay {
        uint32_t n_banks;
        mb_pcr_bank banks[MB_TCGLOG_MAX_ALGS];
        bool pcr0_started;      /* PCR 0 was extended or given its locality start value */
        /* How extends are applied: NULL (what mb_replay_init sets) means at
         * once, with mb_pcr_extend. The host CLI sets a function that queues
         * SHA-384/512 extends and runs them eight at a time
         * (tools/lib/replay_batch.c); it then owns bringing bank->pcr up to date. */
        void (*extend)(void *ctx, mb_pcr_bank *bank, uint32_t pcr, const uint8_t *digest);
        void *extend_ctx;
};

/* Set up one bank per algorithm the log declares; all PCRs zero. */
void mb_replay_init(mb_replay *r, const mb_tcglog *log);
/* Apply one record: EV_NO_ACTION and PCR >= 24 are never extended; a
 * StartupLocality EV_NO_ACTION before any PCR 0 extend, or a first PCR 0
 * event of type EV_EFI_HCRTM_EVENT, sets PCR 0's starting value (PC Client
 * PFP 10.4.5.3 "Startup Locality Event" and 3.3.4.2 "H-CRTM"). */
void mb_replay_event(mb_replay *r, const mb_tcglog_event *ev);
/* Extend helper: pcr = H(pcr || digest). */
mb_err mb_pcr_extend(uint16_t alg, uint8_t *pcr, const uint8_t *digest);
mb_pcr_bank *mb_replay_bank(mb_replay *r, uint16_t alg);

#endif
