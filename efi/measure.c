/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Measurements through EFI_TCG2_PROTOCOL (TCG EFI Protocol Specification).
 * What is measured where is documented in docs/MEASUREMENTS.md.
 *
 * Fail closed: once a TPM has been found, a measurement that fails (an
 * error from HashLogExtendEvent other than EFI_VOLUME_FULL, or no memory
 * to build the event) marks the boot as failed, and nothing may be started
 * after that (mshim_tpm_refuses). A PCR left unextended is a PCR the next
 * stage could extend to the expected value itself. Only the built-in
 * policy's "tpm-failure boot", which the image's signature covers, lets
 * the boot go on without measurements.
 */
#include "mshim.h"
#include "mb/mboot.h"
#include "mb/tcglog.h"
#include "mb/totp.h"

static EFI_GUID tcg2_guid = MSHIM_TCG2_PROTOCOL_GUID;

/* No usable TPM at start-up: say so once, and refuse only when required. */
static EFI_STATUS tpm_unusable(mshim_tpm *t, const CHAR16 *why, EFI_STATUS st) {
        t->tcg2 = NULL;
        if (t->required)
                return mshim_log(EFI_SECURITY_VIOLATION,
                                 L"tpm-required is set but %s (%r); refusing to boot", why, st);
        return mshim_log(EFI_SUCCESS, L"warning: %s (%r); booting without measurements", why, st);
}

/* A TPM was found and a measurement failed. */
static EFI_STATUS measure_failed(mshim_tpm *t, const CHAR16 *what, UINT32 pcr, EFI_STATUS st) {
        if (t->failure_boots) {
                t->tcg2 = NULL;
                return mshim_log(EFI_SUCCESS, L"warning: the TPM failed to measure %s into PCR %d (%r); "
                                 L"the built-in policy says tpm-failure boot: booting without measurements",
                                 what, pcr, st);
        }
        t->failed = true;
        return mshim_log(EFI_SECURITY_VIOLATION, L"the TPM failed to measure %s into PCR %d (%r); "
                         L"refusing to start anything", what, pcr, st);
}

EFI_STATUS mshim_tpm_init(mshim_tpm *t, bool required, bool failure_boots) {
        MSHIM_TCG2_BOOT_SERVICE_CAPABILITY cap;
        MSHIM_TCG2_PROTOCOL *tcg2 = NULL;
        EFI_STATUS st;

        t->tcg2 = NULL;
        t->required = required;
        t->failure_boots = failure_boots;
        t->failed = false;
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
        /* SubmitCommand refuses (EFI_INVALID_PARAMETER) a command or an
         * answer buffer larger than the TPM's own maximum (TCG EFI Protocol
         * Spec 6.7; EDK2's Tcg2Dxe checks both against these fields, which
         * a CRB TPM under QEMU reports as 3968 and many discrete TPMs as
         * less than 4096). A firmware whose structure ends before them
         * left them 0 (ZeroMem above): not reported. */
        t->max_command = cap.MaxCommandSize;
        t->max_response = cap.MaxResponseSize;
        return mshim_log(EFI_SUCCESS, L"TPM 2.0 found, active PCR banks 0x%x", cap.ActivePcrBanks);
}

/* One HashLogExtendEvent with flags (0: hash the buffer as is;
 * MSHIM_TCG2_PE_COFF_IMAGE: its Authenticode ranges): digest over data,
 * event data as given; `what` names the measurement in a failure message. */
static EFI_STATUS tpm_extend_flags(mshim_tpm *t, const CHAR16 *what, uint32_t pcr, uint32_t type, UINT64 flags,
                                   const void *data, UINTN size, const void *event, UINTN event_size) {
        MSHIM_TCG2_EVENT *ev;
        EFI_STATUS st;

        if (!t->tcg2)
                return EFI_SUCCESS;     /* no TPM, and the policy allowed that */
        /* No event may fill the log (mshim.h, MSHIM_EVENT_MAX); the cap
         * also keeps Size, a UINT32, from wrapping. */
        if (event_size > MSHIM_EVENT_MAX)
                return measure_failed(t, what, pcr, EFI_BAD_BUFFER_SIZE);
        ev = AllocatePool(sizeof(*ev) + event_size);
        if (!ev)
                return measure_failed(t, what, pcr, EFI_OUT_OF_RESOURCES);

        ev->Size = (UINT32) (sizeof(*ev) + event_size);
        ev->Header.HeaderSize = sizeof(ev->Header);
        ev->Header.HeaderVersion = MSHIM_TCG2_EVENT_HEADER_VERSION;
        ev->Header.PCRIndex = pcr;
        ev->Header.EventType = type;
        mshim_copy(ev->Event, event, event_size);

        st = t->tcg2->HashLogExtendEvent(t->tcg2, flags, (EFI_PHYSICAL_ADDRESS) (UINTN) data, size, ev);
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
                return measure_failed(t, what, pcr, st);
        return EFI_SUCCESS;
}

static EFI_STATUS tpm_extend(mshim_tpm *t, const CHAR16 *what, uint32_t pcr, uint32_t type,
                             const void *data, UINTN size, const void *event, UINTN event_size) {
        return tpm_extend_flags(t, what, pcr, type, 0, data, size, event, event_size);
}

EFI_STATUS mshim_tpm_measure_file(mshim_tpm *t, uint32_t tag, const CHAR16 *path,
                                  const void *data, UINTN size) {
        UINTN path_bytes = (StrLen((CHAR16 *) path) + 1) * sizeof(CHAR16);
        UINTN event_size, input_size;
        UINT8 *input = NULL;
        EFI_STATUS st;

        if (!t->tcg2)
                return EFI_SUCCESS;
        /* The digest input is the event data followed by the file
         * (mb_pcr5_input_build); its first 8 + path_bytes bytes are the
         * event data itself, so one buffer serves both. */
        if (mb_pcr5_input_size(path_bytes, size, &input_size) != MB_OK)
                return measure_failed(t, path, MSHIM_PCR_CONFIG, EFI_BAD_BUFFER_SIZE);
        input = AllocatePool(input_size);
        if (!input)
                return measure_failed(t, path, MSHIM_PCR_CONFIG, EFI_OUT_OF_RESOURCES);
        if (mb_pcr5_input_build(tag, (const uint8_t *) path, path_bytes, data, size,
                                input, input_size, &input_size) != MB_OK) {
                FreePool(input);
                return measure_failed(t, path, MSHIM_PCR_CONFIG, EFI_BAD_BUFFER_SIZE);
        }
        event_size = 8 + path_bytes;
        st = tpm_extend(t, path, MSHIM_PCR_CONFIG, MB_EV_EVENT_TAG, input, input_size, input, event_size);
        FreePool(input);
        return st;
}

EFI_STATUS mshim_tpm_measure_cmdline(mshim_tpm *t, const void *utf16, UINTN size) {
        /* systemd-boot's convention (its TPM2_PCR_MEASUREMENTS.md, PCR 12):
         * EV_IPL, event data = the UTF-16LE command line with its NUL, and
         * the digest over exactly those bytes. */
        return tpm_extend(t, L"the command line", MSHIM_PCR_CMDLINE, MB_EV_IPL, utf16, size, utf16, size);
}

/* A tagged event whose digest covers the event data itself. */
static EFI_STATUS measure_tag(mshim_tpm *t, const CHAR16 *what, uint32_t pcr, uint32_t tag,
                              const void *data, UINTN size) {
        UINT8 *event;
        UINTN event_size;
        EFI_STATUS st;

        if (!t->tcg2)
                return EFI_SUCCESS;
        if (size > UINT32_MAX - 8)
                return measure_failed(t, what, pcr, EFI_BAD_BUFFER_SIZE);
        event = AllocatePool(8 + size);
        if (!event)
                return measure_failed(t, what, pcr, EFI_OUT_OF_RESOURCES);
        if (mb_tagged_event_build(tag, data, size, event, 8 + size, &event_size) != MB_OK) {
                FreePool(event);
                return measure_failed(t, what, pcr, EFI_BAD_BUFFER_SIZE);
        }
        st = tpm_extend(t, what, pcr, MB_EV_EVENT_TAG, event, event_size, event, event_size);
        FreePool(event);
        return st;
}

EFI_STATUS mshim_tpm_measure_chainload(mshim_tpm *t, const void *options, UINTN size) {
        return measure_tag(t, L"the chainloaded program's load options", MSHIM_PCR_CMDLINE,
                           MB_TAG_CHAINLOAD, options, size);
}

void mshim_tpm_measure_exit(mshim_tpm *t, const mb_plan *plan) {
        /* The plan's exit steps: both PCRs mshim owns, so neither is left
         * at a value a later stage could extend to a successful boot's,
         * then the lock (the firmware may start another loader next,
         * without a TPM reset). A failure here changes nothing: mshim is
         * already returning an error. */
        for (UINTN k = 0; k < plan->n_exit; k++) {
                const mb_plan_step *s = &plan->exit[k];

                if (s->src == MB_PLAN_SRC_EXIT)
                        measure_tag(t, L"the exit marker", s->pcr, s->tag, NULL, 0);
                else if (s->src == MB_PLAN_SRC_TOTP_LOCK)
                        mshim_tpm_lock_totp(t);
        }
}

EFI_STATUS mshim_tpm_measure_totp_fence(mshim_tpm *t) {
        uint8_t event[MB_TOTP_FENCE_EVENT_SIZE];

        /* The very bytes the predictor adds (mb_totp_fence_event). */
        mb_totp_fence_event(event);
        return tpm_extend(t, L"the TOTP fence", MB_TOTP_FENCE_PCR, MB_EV_EVENT_TAG, event, sizeof(event), event,
                          sizeof(event));
}

EFI_STATUS mshim_tpm_measure_totp_initrd(mshim_tpm *t, UINT64 size, const uint8_t sha256[MB_TOTP_INITRD_SHA256_SIZE]) {
        uint8_t event[MB_TOTP_INITRD_EVENT_SIZE];

        /* The very bytes the predictor adds (mb_totp_initrd_event). */
        mb_totp_initrd_event(size, sha256, event);
        return tpm_extend(t, L"the initrd for the TOTP code", MSHIM_PCR_CMDLINE, MB_EV_EVENT_TAG, event, sizeof(event),
                          event, sizeof(event));
}

EFI_STATUS mshim_tpm_lock_totp(mshim_tpm *t) {
        uint8_t event[MB_TOTP_FENCE_EVENT_SIZE];
        EFI_STATUS st;

        /* Once: a boot that falls back to another entry keeps one lock,
         * so a prediction has one value for PCR 13. Not tied to "totp" in
         * loader.conf: "totp no" written there must not leave the signed
         * key usable after mshim (docs/SECURITY.md "Root and the TOTP
         * code"). */
        if (t->totp_locked)
                return EFI_SUCCESS;
        mb_totp_fence_event(event);
        st = tpm_extend(t, L"the TOTP lock", MB_TOTP_LOCK_PCR, MB_EV_EVENT_TAG, event, sizeof(event), event,
                        sizeof(event));
        t->totp_locked = !EFI_ERROR(st);
        return st;
}

EFI_STATUS mshim_tpm_measure_initrd(mshim_tpm *t, const void *initrd, UINTN size) {
        /* Exactly the Linux stub's event (drivers/firmware/efi/libstub,
         * efi_measure_initrd): PCR 9, EV_EVENT_TAG, tag 0x8F3B22EC, data
         * "Linux initrd" with its NUL, digest over the initrd bytes. */
        static const char desc[] = "Linux initrd";
        UINT8 event[8 + sizeof(desc)];
        UINTN event_size;

        if (mb_tagged_event_build(MB_TAG_LINUX_INITRD, desc, sizeof(desc), event, sizeof(event),
                                  &event_size) != MB_OK)
                return measure_failed(t, L"the initrd", MSHIM_PCR_INITRD, EFI_BAD_BUFFER_SIZE);
        return tpm_extend(t, L"the initrd", MSHIM_PCR_INITRD, MB_EV_EVENT_TAG, initrd, size, event, event_size);
}

/* UEFI_IMAGE_LOAD_EVENT (PC Client PFP 10.4.3; UINTN fields, x86_64)
 * without a device path: what shim's tpm_log_pe logs for the buffer its
 * SHIM_LOCK Verify is given (LengthOfDevicePath 0). */
#define MSHIM_IMAGE_LOAD_EVENT_SIZE 32

EFI_STATUS mshim_tpm_measure_pe(mshim_tpm *t, const void *image, UINTN size) {
        UINT8 load[MSHIM_IMAGE_LOAD_EVENT_SIZE];
        EFI_STATUS st;

        if (!t->tcg2)
                return EFI_SUCCESS;     /* no TPM, and the policy allowed that */
        /* ImageLocationInMemory, ImageLengthInMemory, ImageLinkTimeAddress
         * (0, as shim), LengthOfDevicePath (0). */
        mb_memset(load, 0, sizeof(load));
        mb_put_le32(load, (uint32_t) (UINTN) image);
        mb_put_le32(load + 4, (uint32_t) ((uint64_t) (UINTN) image >> 32));
        mb_put_le32(load + 8, (uint32_t) size);
        mb_put_le32(load + 12, (uint32_t) ((uint64_t) size >> 32));
        /* PE_COFF_IMAGE: the firmware hashes the Authenticode ranges, so the
         * digest is the image's Authenticode digest, as in LoadImage's event.
         * No fallback to hashing the raw bytes (shim has one): that digest
         * would predict nothing. */
        st = tpm_extend_flags(t, L"an image given to SHIM_LOCK Verify", 4, MB_EV_EFI_BOOT_SERVICES_APPLICATION,
                              MSHIM_TCG2_PE_COFF_IMAGE, image, size, load, sizeof(load));
        /* Even under "tpm-failure boot" (measuring switched off) this image
         * was not measured, and Verify must not accept it. */
        if (!EFI_ERROR(st) && !t->tcg2)
                return EFI_SECURITY_VIOLATION;
        return st;
}
