/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The fake EFI_TCG2_PROTOCOL (TCG EFI Protocol Specification, section 6):
 * GetCapability reports a TPM 2.0 with SHA-256 active; HashLogExtendEvent
 * checks the event structure, records every call and keeps a simulated
 * SHA-256 bank. Faults: a given status on the Nth call, or on every call.
 */
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <stdlib.h>
#include <string.h>
#include "fh_internal.h"

#define FH_TPM_ALG_SHA256_BIT 0x2       /* EFI_TCG2_BOOT_HASH_ALG_SHA256 */
#define FH_EV_EFI_BOOT_SERVICES_APPLICATION 0x80000003

static bool absent;
/* GetCapability's MaxCommandSize and MaxResponseSize; SubmitCommand
 * refuses larger buffers, as EDK2's Tcg2Dxe does. */
static uint16_t max_command = 4096, max_response = 4096;
static unsigned fail_nth, calls;
static EFI_STATUS fail_st;
static fh_event *events;
static size_t n_events, cap_events;
static uint8_t pcrs[24][32];

void fh_tpm_absent(void) {
        absent = true;
}

void fh_tpm_max_sizes(uint16_t command, uint16_t response) {
        max_command = command;
        max_response = response;
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
        cap->MaxCommandSize = max_command;
        cap->MaxResponseSize = max_response;
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

/* ---- SubmitCommand: a small TPM for the TOTP sequence ---------------------------- */

#define CC_HMAC 0x155u
#define CC_FLUSH_CONTEXT 0x165u
#define CC_POLICY_OR 0x171u
#define CC_START_AUTH_SESSION 0x176u
#define CC_POLICY_PCR 0x17Fu
/* Part 2 §6.6: format-one codes with their parameter, session or handle. */
#define RC_VALUE_P1 (0x084u | 0x040u | 0x100u)
#define RC_POLICY_FAIL_S1 (0x09Du | 0x800u | 0x100u)
#define RC_HANDLE_H1 (0x08Bu | 0x100u)
#define RC_COMMAND_CODE 0x143u
#define RC_COMMAND_SIZE 0x142u
#define MAX_SESSIONS 3

const uint8_t fh_tpm_hmac_key[20] = "12345678901234567890";  /* RFC 6238's SHA-1 secret */

static fh_tpm_cmd *cmds;
static size_t n_cmds, cap_cmds;
static struct { bool open, pcr_ok; } sessions[MAX_SESSIONS];
static bool policy_pcr_seen;
static uint8_t policy_pcr_snapshot[24][32];
static uint32_t tamper_cc;
static fh_tpm_tamper_fn tamper_fn;

size_t fh_tpm_n_commands(void) {
        return n_cmds;
}

const fh_tpm_cmd *fh_tpm_command_at(size_t i) {
        return i < n_cmds ? &cmds[i] : NULL;
}

size_t fh_tpm_open_sessions(void) {
        size_t n = 0;

        for (size_t i = 0; i < MAX_SESSIONS; i++)
                n += sessions[i].open;
        return n;
}

bool fh_tpm_policy_pcr_values(uint32_t mask, uint8_t *out) {
        size_t k = 0;

        for (uint32_t i = 0; i < 24; i++)
                if (mask & (1u << i))
                        memcpy(out + 32 * k++, policy_pcr_snapshot[i], 32);
        return policy_pcr_seen;
}

void fh_tpm_tamper(uint32_t cc, fh_tpm_tamper_fn fn) {
        tamper_cc = cc;
        tamper_fn = fn;
}

static uint32_t be32at(const uint8_t *p) {
        return (uint32_t) p[0] << 24 | (uint32_t) p[1] << 16 | (uint32_t) p[2] << 8 | p[3];
}

static uint16_t be16at(const uint8_t *p) {
        return (uint16_t) (p[0] << 8 | p[1]);
}

static void put_be32(uint8_t *p, uint32_t v) {
        p[0] = (uint8_t) (v >> 24); p[1] = (uint8_t) (v >> 16); p[2] = (uint8_t) (v >> 8); p[3] = (uint8_t) v;
}

static void put_be16(uint8_t *p, uint16_t v) {
        p[0] = (uint8_t) (v >> 8); p[1] = (uint8_t) v;
}

/* A response: header (tag, size, rc) then body. */
static size_t answer(uint8_t *out, uint16_t tag, uint32_t rc, const uint8_t *body, size_t n) {
        put_be16(out, rc ? 0x8001 : tag);
        put_be32(out + 2, (uint32_t) (10 + (rc ? 0 : n)));
        put_be32(out + 6, rc);
        if (!rc && n)
                memcpy(out + 10, body, n);
        return 10 + (rc ? 0 : n);
}

static int session_index(uint32_t h) {
        uint32_t i = h - 0x03000000u;

        return h >= 0x03000000u && i < MAX_SESSIONS && sessions[i].open ? (int) i : -1;
}

static uint32_t tpm_start_session(uint8_t *body, size_t *n) {
        for (uint32_t i = 0; i < MAX_SESSIONS; i++)
                if (!sessions[i].open) {
                        sessions[i].open = true;
                        sessions[i].pcr_ok = false;
                        put_be32(body, 0x03000000u + i);
                        put_be16(body + 4, 16);
                        memset(body + 6, 0xa5, 16);
                        *n = 22;
                        return 0;
                }
        return 0x902u;  /* TPM_RC_SESSION_MEMORY */
}

/* pcrDigest (TPM2B) then one TPMS_PCR_SELECTION of SHA-256, 3 octets. */
static uint32_t tpm_policy_pcr(const uint8_t *c, size_t size) {
        int s = session_index(be32at(c + 10));
        uint16_t dn = be16at(c + 14);
        uint8_t concat[24 * 32], d[32];
        unsigned len, k = 0;
        uint32_t mask;

        if (s < 0)
                return RC_HANDLE_H1;
        if (size != 16u + dn + 10u || dn != 32 || be32at(c + 16 + dn) != 1 || be16at(c + 20 + dn) != 0x000b ||
            c[22 + dn] != 3)
                return RC_VALUE_P1;
        mask = c[23 + dn] | (uint32_t) c[24 + dn] << 8 | (uint32_t) c[25 + dn] << 16;
        for (uint32_t i = 0; i < 24; i++)
                if (mask & (1u << i))
                        memcpy(concat + 32 * k++, pcrs[i], 32);
        if (!policy_pcr_seen)
                memcpy(policy_pcr_snapshot, pcrs, sizeof(pcrs));
        policy_pcr_seen = true;
        EVP_Digest(concat, 32 * k, d, &len, EVP_sha256(), NULL);
        if (memcmp(d, c + 16, 32) != 0)
                return RC_VALUE_P1;
        sessions[s].pcr_ok = true;
        return 0;
}

/* keyHandle, the authorization area (one session: handle, nonce, attrs,
 * hmac), buffer (TPM2B), hashAlg. */
static uint32_t tpm_hmac(const uint8_t *c, size_t size, uint8_t *body, size_t *n) {
        size_t off = 18;
        int s = session_index(be32at(c + off));
        const uint8_t *data;
        uint16_t dn;
        uint8_t attrs;
        unsigned len = 0;

        if (be32at(c + 10) != FH_TPM_HMAC_HANDLE)
                return RC_HANDLE_H1;
        if (s < 0)
                return 0x98Bu;  /* TPM_RC_HANDLE, session 1 */
        off += 4;
        off += 2 + be16at(c + off);
        attrs = c[off++];
        off += 2 + be16at(c + off);
        dn = be16at(c + off);
        data = c + off + 2;
        if (off + 2 + dn + 2 != size)
                return RC_COMMAND_SIZE;
        if (!sessions[s].pcr_ok) {
                sessions[s].open = false;  /* a policy failure ends the session (Part 1 §19.7.1) */
                return RC_POLICY_FAIL_S1;
        }
        put_be32(body, 22);
        put_be16(body + 4, 20);
        HMAC(EVP_sha1(), fh_tpm_hmac_key, sizeof(fh_tpm_hmac_key), data, dn, body + 6, &len);
        /* The session's answer: a new nonceTPM, its attributes, no HMAC. */
        put_be16(body + 26, 16);
        memset(body + 28, 0x5a, 16);
        body[44] = attrs;
        put_be16(body + 45, 0);
        *n = 47;
        if (!(attrs & 1))
                sessions[s].open = false;
        return 0;
}

static EFI_STATUS EFIAPI tcg2_submit(MSHIM_TCG2_PROTOCOL *this, UINT32 in_size, UINT8 *in, UINT32 out_size,
                                     UINT8 *out) {
        uint8_t body[128];
        size_t n = 0;
        uint32_t cc, rc;
        uint16_t tag;
        int s;

        fh_record_call("TCG2.SubmitCommand");
        /* EDK2's Tcg2SubmitCommand: a block larger than the TPM's maximum
         * is an invalid parameter, before anything reaches the TPM. */
        if (in_size > max_command || out_size > max_response)
                return EFI_INVALID_PARAMETER;
        if (!in || !out || in_size < 10 || be32at(in + 2) != in_size || out_size < 64) {
                fh_error("SubmitCommand: bad buffers (in %u bytes, size field %u, out %u)", in_size,
                         in && in_size >= 6 ? be32at(in + 2) : 0, out_size);
                return EFI_INVALID_PARAMETER;
        }
        cc = be32at(in + 6);
        tag = 0x8001;
        switch (cc) {
        case CC_START_AUTH_SESSION: rc = tpm_start_session(body, &n); break;
        case CC_POLICY_PCR: rc = tpm_policy_pcr(in, in_size); break;
        case CC_POLICY_OR: rc = session_index(be32at(in + 10)) < 0 ? RC_HANDLE_H1 : 0; break;
        case CC_HMAC: rc = tpm_hmac(in, in_size, body, &n); tag = 0x8002; break;
        case CC_FLUSH_CONTEXT:
                s = session_index(be32at(in + 10));
                rc = s < 0 ? 0x184u /* TPM_RC_VALUE, parameter 1 */ : 0;
                if (s >= 0)
                        sessions[s].open = false;
                break;
        default: rc = RC_COMMAND_CODE;
        }
        answer(out, tag, rc, body, n);
        if (tamper_fn && (tamper_cc == 0 || tamper_cc == cc))
                tamper_fn(out, out_size);
        if (n_cmds == cap_cmds) {
                cap_cmds = cap_cmds ? 2 * cap_cmds : 16;
                cmds = realloc(cmds, cap_cmds * sizeof(*cmds));
                if (!cmds)
                        abort();
        }
        cmds[n_cmds++] = (fh_tpm_cmd) { cc, rc };
        return EFI_SUCCESS;
}

static MSHIM_TCG2_PROTOCOL tcg2 = {
        .GetCapability = tcg2_get_capability,
        .HashLogExtendEvent = tcg2_hash_log_extend,
        .SubmitCommand = tcg2_submit,
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
