/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The fake EFI_TCG2_PROTOCOL (TCG EFI Protocol Specification, section 6):
 * GetCapability reports a TPM 2.0 with SHA-256 active; HashLogExtendEvent
 * checks the event structure, records every call and keeps a simulated
 * SHA-256 bank. Faults: a given status on the Nth call, or on every call.
 */
#include <openssl/evp.h>
#include <stdlib.h>
#include <string.h>
#include "fh_internal.h"

#define FH_TPM_ALG_SHA256_BIT 0x2       /* EFI_TCG2_BOOT_HASH_ALG_SHA256 */
#define FH_EV_EFI_BOOT_SERVICES_APPLICATION 0x80000003

static bool absent;
static unsigned fail_nth, calls;
static EFI_STATUS fail_st;
static fh_event *events;
static size_t n_events, cap_events;
static uint8_t pcrs[24][32];

void fh_tpm_absent(void) {
        absent = true;
}

void fh_tpm_fail(unsigned nth, EFI_STATUS st) {
        fail_nth = nth;
        fail_st = st;
        if (nth == 0)
                fail_nth = UINT32_MAX;  /* every call */
}

size_t fh_n_events(void) {
        return n_events;
}

const fh_event *fh_event_at(size_t i) {
        return i < n_events ? &events[i] : NULL;
}

size_t fh_count_events(uint32_t pcr, uint32_t type) {
        size_t n = 0;

        for (size_t i = 0; i < n_events; i++)
                n += events[i].pcr == pcr && (type == 0 || events[i].type == type) && !events[i].by_firmware &&
                     !EFI_ERROR(events[i].status);
        return n;
}

void fh_pcr_sha256(uint32_t pcr, uint8_t out[32]) {
        memcpy(out, pcrs[pcr < 24 ? pcr : 0], 32);
}

static void extend(uint32_t pcr, const void *data, size_t size) {
        uint8_t d[32], buf[64];
        unsigned len;

        EVP_Digest(data, size, d, &len, EVP_sha256(), NULL);
        memcpy(buf, pcrs[pcr], 32);
        memcpy(buf + 32, d, 32);
        EVP_Digest(buf, 64, pcrs[pcr], &len, EVP_sha256(), NULL);
}

static void record(uint32_t pcr, uint32_t type, uint64_t flags, const void *ev, size_t ev_size,
                   const void *data, size_t size, EFI_STATUS st, bool fw) {
        fh_event *e;

        if (n_events == cap_events) {
                cap_events = cap_events ? 2 * cap_events : 32;
                events = realloc(events, cap_events * sizeof(*events));
                if (!events)
                        abort();
        }
        e = &events[n_events++];
        *e = (fh_event) { .pcr = pcr, .type = type, .flags = flags, .status = st, .by_firmware = fw,
                          .event_size = ev_size, .data_size = size };
        e->event = memcpy(fh_xmalloc(ev_size), ev, ev_size);
        e->data = memcpy(fh_xmalloc(size), data, size);
}

static EFI_STATUS EFIAPI tcg2_get_capability(MSHIM_TCG2_PROTOCOL *this, MSHIM_TCG2_BOOT_SERVICE_CAPABILITY *cap) {
        fh_record_call("TCG2.GetCapability");
        if (!cap)
                return EFI_INVALID_PARAMETER;
        if (cap->Size < sizeof(*cap))
                return EFI_BUFFER_TOO_SMALL;
        memset(cap, 0, sizeof(*cap));
        cap->Size = sizeof(*cap);
        cap->StructureVersion = (MSHIM_TCG2_VERSION) { 1, 1 };
        cap->ProtocolVersion = (MSHIM_TCG2_VERSION) { 1, 1 };
        cap->HashAlgorithmBitmap = FH_TPM_ALG_SHA256_BIT;
        cap->SupportedEventLogs = 0x2;  /* EFI_TCG2_EVENT_LOG_FORMAT_TCG_2 */
        cap->TPMPresentFlag = 1;
        cap->NumberOfPCRBanks = 1;
        cap->ActivePcrBanks = FH_TPM_ALG_SHA256_BIT;
        return EFI_SUCCESS;
}

/* TCG EFI Protocol Spec 6.6.5: Size covers the whole structure, the header
 * is 14 bytes of version 1, PCR 0-23. */
static EFI_STATUS EFIAPI tcg2_hash_log_extend(MSHIM_TCG2_PROTOCOL *this, UINT64 flags, EFI_PHYSICAL_ADDRESS data,
                                              UINT64 len, MSHIM_TCG2_EVENT *ev) {
        EFI_STATUS st = EFI_SUCCESS;
        uint32_t pcr, type;
        size_t ev_size;

        fh_record_call("TCG2.HashLogExtendEvent");
        calls++;
        if (!ev || (!data && len)) {
                fh_error("HashLogExtendEvent: NULL event or data");
                return EFI_INVALID_PARAMETER;
        }
        if (ev->Size < sizeof(*ev) || ev->Header.HeaderSize != sizeof(ev->Header) ||
            ev->Header.HeaderVersion != MSHIM_TCG2_EVENT_HEADER_VERSION || ev->Header.PCRIndex > 23) {
                fh_error("HashLogExtendEvent: malformed EFI_TCG2_EVENT (Size %u, HeaderSize %u, version %u, PCR %u)",
                         ev->Size, ev->Header.HeaderSize, ev->Header.HeaderVersion, ev->Header.PCRIndex);
                return EFI_INVALID_PARAMETER;
        }
        pcr = ev->Header.PCRIndex;
        type = ev->Header.EventType;
        ev_size = ev->Size - sizeof(*ev);
        if (calls == fail_nth || fail_nth == UINT32_MAX)
                st = fail_st;
        /* EFI_VOLUME_FULL: extended, not logged. */
        if (!EFI_ERROR(st) || st == EFI_VOLUME_FULL)
                extend(pcr, (const void *) (uintptr_t) data, len);
        record(pcr, type, flags, ev->Event, ev_size, (const void *) (uintptr_t) data, len, st, false);
        return st;
}

static MSHIM_TCG2_PROTOCOL tcg2 = {
        .GetCapability = tcg2_get_capability,
        .HashLogExtendEvent = tcg2_hash_log_extend,
};

void fh_tpm_install(void) {
        if (!absent)
                fh_install(fh_handle_new(), &fh_tcg2_guid, &tcg2);
}

/* The firmware's own PCR 4 event for an image LoadImage accepted (EDK2's
 * DxeTpm2MeasureBootLib; the digest there is the Authenticode hash, here
 * the file bytes, which is enough to count and tell images apart). */
void fh_tpm_measure_image(const void *buf, size_t size) {
        if (absent)
                return;
        extend(4, buf, size);
        record(4, FH_EV_EFI_BOOT_SERVICES_APPLICATION, 0, "", 0, buf, size, EFI_SUCCESS, true);
}
