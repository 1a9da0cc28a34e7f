/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Measurements through EFI_TCG2_PROTOCOL (TCG EFI Protocol Specification).
 * What is measured where is documented in docs/MEASUREMENTS.md.
 */
#include "mshim.h"
#include "mb/tcglog.h"

static EFI_GUID tcg2_guid = MSHIM_TCG2_PROTOCOL_GUID;

/* The TPM is unusable: say so once, and refuse only when it is required. */
static EFI_STATUS tpm_unusable(mshim_tpm *t, const CHAR16 *why, EFI_STATUS st) {
        t->tcg2 = NULL;
        if (t->required)
                return mshim_log(EFI_SECURITY_VIOLATION,
                                 L"tpm-required is set but %s (%r); refusing to boot", why, st);
        return mshim_log(EFI_SUCCESS, L"warning: %s (%r); booting without measurements", why, st);
}

EFI_STATUS mshim_tpm_init(mshim_tpm *t, bool required) {
        MSHIM_TCG2_BOOT_SERVICE_CAPABILITY cap;
        MSHIM_TCG2_PROTOCOL *tcg2 = NULL;
        EFI_STATUS st;

        t->tcg2 = NULL;
        t->required = required;
        t->warned_log_full = false;

        st = LibLocateProtocol(&tcg2_guid, (void **) &tcg2);
        if (EFI_ERROR(st) || !tcg2)
                return tpm_unusable(t, L"no TPM was found", EFI_NOT_FOUND);

        ZeroMem(&cap, sizeof(cap));
        cap.Size = (UINT8) sizeof(cap);
        st = tcg2->GetCapability(tcg2, &cap);
        if (EFI_ERROR(st))
                return tpm_unusable(t, L"the TPM does not answer", st);
        /* Firmware implementing an older, shorter structure reports its own
         * Size: a flag beyond it was never written. */
        if (cap.Size <= __builtin_offsetof(MSHIM_TCG2_BOOT_SERVICE_CAPABILITY, TPMPresentFlag) ||
            !cap.TPMPresentFlag)
                return tpm_unusable(t, L"no TPM was found", EFI_NOT_FOUND);

        t->tcg2 = tcg2;
        return mshim_log(EFI_SUCCESS, L"TPM 2.0 found, active PCR banks 0x%x", cap.ActivePcrBanks);
}

/* One HashLogExtendEvent: digest over data, event data as given. */
static EFI_STATUS tpm_extend(mshim_tpm *t, uint32_t pcr, uint32_t type,
                             const void *data, UINTN size,
                             const void *event, UINTN event_size) {
        MSHIM_TCG2_EVENT *ev;
        EFI_STATUS st;

        if (!t->tcg2)
                return EFI_SUCCESS;     /* already warned in init or on failure */
        /* Size is a UINT32: the event data must leave room for the header. */
        if (event_size > UINT32_MAX - sizeof(*ev))
                return tpm_unusable(t, L"an event is too large to log", EFI_BAD_BUFFER_SIZE);
        ev = AllocatePool(sizeof(*ev) + event_size);
        if (!ev)
                return tpm_unusable(t, L"out of memory for a TPM event", EFI_OUT_OF_RESOURCES);

        ev->Size = (UINT32) (sizeof(*ev) + event_size);
        ev->Header.HeaderSize = sizeof(ev->Header);
        ev->Header.HeaderVersion = MSHIM_TCG2_EVENT_HEADER_VERSION;
        ev->Header.PCRIndex = pcr;
        ev->Header.EventType = type;
        mshim_copy(ev->Event, event, event_size);

        /* Flags 0: hash the buffer as is (not PE_COFF_IMAGE), and log it. */
        st = t->tcg2->HashLogExtendEvent(t->tcg2, 0, (EFI_PHYSICAL_ADDRESS) (UINTN) data, size, ev);
        FreePool(ev);

        /* EFI_VOLUME_FULL: the PCR was extended, only the log entry was
         * dropped (TCG EFI Protocol Spec 6.6.5). The PCR value is what
         * sealing depends on, so this is not a reason to stop booting. */
        if (st == EFI_VOLUME_FULL) {
                if (!t->warned_log_full)
                        mshim_log(EFI_SUCCESS, L"warning: TPM event log is full; PCRs are still extended");
                t->warned_log_full = true;
                return EFI_SUCCESS;
        }
        if (EFI_ERROR(st))
                return tpm_unusable(t, L"the TPM failed to measure", st);
        return EFI_SUCCESS;
}

EFI_STATUS mshim_tpm_measure_file(mshim_tpm *t, uint32_t tag, const CHAR16 *path,
                                  const void *data, UINTN size) {
        /* TCG_PCClientTaggedEvent (PC Client PFP 10.4.2): u32 taggedEventID,
         * u32 taggedEventDataSize, then the data: here the path as UTF-16LE
         * with its NUL. Little endian, whatever CPU this is. */
        UINT8 event[8 + MSHIM_PATH_UNITS * sizeof(CHAR16)];
        UINTN path_bytes = (StrLen((CHAR16 *) path) + 1) * sizeof(CHAR16);

        if (!t->tcg2)
                return EFI_SUCCESS;
        if (path_bytes > sizeof(event) - 8)
                return tpm_unusable(t, L"a path is too long to log", EFI_BAD_BUFFER_SIZE);
        mb_put_le32(event, tag);
        mb_put_le32(event + 4, (uint32_t) path_bytes);
        CopyMem(event + 8, (void *) path, path_bytes);
        return tpm_extend(t, MSHIM_PCR_CONFIG, MB_EV_EVENT_TAG, data, size, event, 8 + path_bytes);
}

EFI_STATUS mshim_tpm_measure_cmdline(mshim_tpm *t, const void *utf16, UINTN size) {
        /* systemd-boot's convention (its TPM2_PCR_MEASUREMENTS.md, PCR 12):
         * EV_IPL, event data = the UTF-16LE command line with its NUL, and
         * the digest over exactly those bytes. */
        return tpm_extend(t, MSHIM_PCR_CMDLINE, MB_EV_IPL, utf16, size, utf16, size);
}
