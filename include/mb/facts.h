/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * What booted, from an event log whose replay a verifier has tied to a
 * quote (docs/ATTESTATION.md "What booted: the facts"). Replay binds each
 * event's PCR, its place among that PCR's events and its digests, not its
 * type nor its data; so an event's data is decoded only when every digest
 * it carries is the hash of that data (go-attestation's event-log-
 * disclosure rule), and an event whose digest covers bytes outside the
 * log is known by its digest alone. Only the PCRs in `quoted` count.
 * Parsed from (buffer, length); every pointer out is a slice of the log.
 */
#ifndef MB_FACTS_H
#define MB_FACTS_H

#include "mb/evdata.h"
#include "mb/tcglog.h"

/* The PCRs whose events are listed one by one: the boot path (PC Client
 * PFP §3.3.4: 4 images, 5 configuration, 9 and 12 the kernel's and
 * mshim's). */
#define MB_FACTS_LISTED_PCRS ((1u << 4) | (1u << 5) | (1u << 9) | (1u << 12))
#define MB_FACTS_EVENTS_MAX 256u
#define MB_FACTS_AUTH_MAX 32u

/* Secure Boot's variables PCR 7 measures before its separator, in this
 * order in keys[]. */
enum { MB_FACTS_PK, MB_FACTS_KEK, MB_FACTS_DB, MB_FACTS_DBX, MB_FACTS_KEYS };

typedef struct mb_facts_bytes {
        const uint8_t *p;
        size_t size;
} mb_facts_bytes;

typedef struct mb_facts_event {
        uint32_t pcr, type;
        uint16_t alg;                   /* the digest shown: SHA-256 when the event has it */
        mb_facts_bytes digest;
        bool bound;                     /* every digest is the hash of the data */
        mb_facts_bytes data;            /* bound only: the event data */
        bool tagged;                    /* bound EV_EVENT_TAG whose size field fits the data */
        uint32_t tag;
        mb_facts_bytes tag_data;
        bool variable;                  /* bound UEFI_VARIABLE_DATA (EV_EFI_VARIABLE_*) that parses */
        mb_uefi_variable var;
} mb_facts_event;

typedef struct mb_facts_auth {
        mb_uefi_variable var;           /* its VariableName is the authority's variable (db, MokList...) */
        mb_facts_bytes owner;           /* EFI_SIGNATURE_DATA's SignatureOwner, 16 bytes */
        mb_facts_bytes sig;             /* the signature: a certificate's DER, or a hash */
} mb_facts_auth;

typedef struct mb_facts {
        int secure_boot;                /* -1 no bound SecureBoot byte in PCR 7, 0 off, 1 on */
        bool have_key[MB_FACTS_KEYS];
        mb_facts_bytes key[MB_FACTS_KEYS];      /* the variables' contents */
        mb_facts_auth auth[MB_FACTS_AUTH_MAX];
        size_t n_auth;
        mb_facts_event ev[MB_FACTS_EVENTS_MAX];
        size_t n_ev;
        bool more;                      /* events past MB_FACTS_EVENTS_MAX, not listed */
        bool totp_fence;                /* a bound MB_TAG_TOTP_FENCE event of the fence's bytes in PCR 12 */
        bool have_initrd;               /* a bound MB_TAG_TOTP_INITRD event in PCR 12 */
        uint64_t initrd_size;
        mb_facts_bytes initrd_sha256;
} mb_facts;

/* Every digest of ev is the hash of its data (and it has one). */
bool mb_facts_bound(const mb_tcglog_event *ev);
/* The facts of the log for the PCRs in quoted (bit i: PCR i). MB_OK, or
 * the log's open error (the records after a record that does not parse
 * are not read: the verifier has already refused such a log). */
mb_err mb_facts_collect(const void *log, size_t size, uint32_t quoted, mb_facts *ret);

#endif
