/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Test only: a fault-injection stage between the firmware and mshim, for
 * the TPM failures swtpm cannot produce (tests/integration/test_tcg2_faults.sh).
 *
 * Started by the firmware as \EFI\BOOT\BOOTX64.EFI, it reads a mode from
 * \fault.txt on its own volume, replaces HashLogExtendEvent in the
 * firmware's EFI_TCG2_PROTOCOL by a wrapper, then loads and starts
 * \EFI\mshim\mshimx64.efi from the same volume:
 *
 *   full  the real HashLogExtendEvent runs (PCR extended, event logged),
 *         then the wrapper reports EFI_VOLUME_FULL ("PCR extended, log full");
 *   fail  the wrapper reports EFI_DEVICE_ERROR and extends nothing, except
 *         for the firmware's own PE/COFF image measurements (LoadImage's
 *         PCR 4 events), which pass: OVMF would refuse to load the kernel
 *         otherwise, a firmware policy outside what mshim decides;
 *   fail-from N  the first N-1 other calls pass to the real function, the
 *         N-th and later fail as in "fail": a TPM that fails mid-boot.
 *
 * The wrapper stays in place until ExitBootServices, so the Linux EFI stub
 * sees it too. The firmware's own measurements (PCR 4 for LoadImage, PCR 5
 * for ExitBootServices) do not go through the protocol and are unaffected.
 */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wstrict-prototypes"   /* gnu-efi's headers */
#include <efi.h>
#include <efilib.h>
#pragma GCC diagnostic pop
#include "tcg2.h"

#define FAULT_MODE_PATH L"\\fault.txt"
#define FAULT_NEXT_PATH L"\\EFI\\mshim\\mshimx64.efi"

#define FAULT_PE_COFF_IMAGE 0x10 /* HashLogExtendEvent flag: hash a PE image's Authenticode ranges */

enum fault_mode { FAULT_NONE, FAULT_FULL, FAULT_FAIL };

static EFI_GUID tcg2_guid = MSHIM_TCG2_PROTOCOL_GUID;
static MSHIM_TCG2_HASH_LOG_EXTEND_EVENT real_hash_log_extend_event;
static enum fault_mode mode = FAULT_NONE;
static UINTN calls, fail_from = 1, own_calls;

static EFI_STATUS EFIAPI fault_hash_log_extend_event(MSHIM_TCG2_PROTOCOL *This, UINT64 Flags,
                                                     EFI_PHYSICAL_ADDRESS DataToHash, UINT64 DataToHashLen,
                                                     MSHIM_TCG2_EVENT *EfiTcgEvent) {
        UINT32 pcr = EfiTcgEvent ? EfiTcgEvent->Header.PCRIndex : 0;
        EFI_STATUS st;

        calls++;
        /* The firmware's own image measurements (PCR 4, made by its
         * LoadImage through this very protocol, with PE_COFF_IMAGE) pass:
         * OVMF refuses to load an image it could not measure, and the test
         * is about what mshim does, not about that firmware policy. */
        if (mode == FAULT_FAIL && (Flags & FAULT_PE_COFF_IMAGE)) {
                st = real_hash_log_extend_event(This, Flags, DataToHash, DataToHashLen, EfiTcgEvent);
                Print(L"tcg2_fault: call %ld (PCR %ld, firmware image measurement): passed through, %r\n",
                      (UINT64) calls, (UINT64) pcr, st);
                return st;
        }
        if (mode == FAULT_FAIL && ++own_calls >= fail_from) {
                Print(L"tcg2_fault: call %ld (PCR %ld): not extended, returning EFI_DEVICE_ERROR\n",
                      (UINT64) calls, (UINT64) pcr);
                return EFI_DEVICE_ERROR;
        }
        if (mode == FAULT_FAIL) {
                st = real_hash_log_extend_event(This, Flags, DataToHash, DataToHashLen, EfiTcgEvent);
                Print(L"tcg2_fault: call %ld (PCR %ld): passed through (before fail-from), %r\n",
                      (UINT64) calls, (UINT64) pcr, st);
                return st;
        }
        st = real_hash_log_extend_event(This, Flags, DataToHash, DataToHashLen, EfiTcgEvent);
        Print(L"tcg2_fault: call %ld (PCR %ld): real HashLogExtendEvent %r, returning %r\n",
              (UINT64) calls, (UINT64) pcr, st, EFI_ERROR(st) ? st : EFI_VOLUME_FULL);
        return EFI_ERROR(st) ? st : EFI_VOLUME_FULL;
}

/* The first word of \fault.txt: "full", "fail" or "fail-from N" (N a
 * decimal 1-99: the first mshim call to fail). */
static EFI_STATUS read_mode(EFI_FILE_HANDLE root, enum fault_mode *ret) {
        EFI_FILE_HANDLE f;
        CHAR8 buf[16];
        UINTN n = sizeof(buf) - 1;
        EFI_STATUS st;

        st = root->Open(root, &f, FAULT_MODE_PATH, EFI_FILE_MODE_READ, 0);
        if (EFI_ERROR(st))
                return st;
        st = f->Read(f, &n, buf);
        f->Close(f);
        if (EFI_ERROR(st))
                return st;
        buf[n] = 0;
        if (n >= 4 && CompareMem(buf, "full", 4) == 0)
                *ret = FAULT_FULL;
        else if (n >= 4 && CompareMem(buf, "fail", 4) == 0) {
                *ret = FAULT_FAIL;
                if (n >= 11 && CompareMem(buf + 4, "-from ", 6) == 0 && buf[10] >= '1' && buf[10] <= '9') {
                        fail_from = (UINTN) (buf[10] - '0');
                        if (n >= 12 && buf[11] >= '0' && buf[11] <= '9')
                                fail_from = fail_from * 10 + (UINTN) (buf[11] - '0');
                }
        }
        else
                return EFI_INVALID_PARAMETER;
        return EFI_SUCCESS;
}

/* Patch the function pointer in the protocol structure the firmware
 * installed (OVMF's Tcg2Dxe keeps it in its writable data), then check the
 * firmware hands out the patched structure. */
static EFI_STATUS hook_tcg2(void) {
        MSHIM_TCG2_PROTOCOL *tcg2 = NULL, *again = NULL;
        EFI_STATUS st;

        st = LibLocateProtocol(&tcg2_guid, (void **) &tcg2);
        if (EFI_ERROR(st) || !tcg2)
                return EFI_ERROR(st) ? st : EFI_NOT_FOUND;
        real_hash_log_extend_event = tcg2->HashLogExtendEvent;
        tcg2->HashLogExtendEvent = fault_hash_log_extend_event;
        st = LibLocateProtocol(&tcg2_guid, (void **) &again);
        if (EFI_ERROR(st) || again != tcg2 || again->HashLogExtendEvent != fault_hash_log_extend_event)
                return EFI_WRITE_PROTECTED;
        return EFI_SUCCESS;
}

static void unhook_tcg2(void) {
        MSHIM_TCG2_PROTOCOL *tcg2 = NULL;

        if (!EFI_ERROR(LibLocateProtocol(&tcg2_guid, (void **) &tcg2)) && tcg2 &&
            tcg2->HashLogExtendEvent == fault_hash_log_extend_event)
                tcg2->HashLogExtendEvent = real_hash_log_extend_event;
}

EFI_STATUS efi_main(EFI_HANDLE image, EFI_SYSTEM_TABLE *systab) {
        EFI_LOADED_IMAGE *li = NULL;
        EFI_FILE_HANDLE root;
        EFI_DEVICE_PATH *dp;
        EFI_HANDLE child = NULL;
        EFI_STATUS st;

        InitializeLib(image, systab);
        st = uefi_call_wrapper(BS->HandleProtocol, 3, image, &LoadedImageProtocol, (void **) &li);
        if (EFI_ERROR(st) || !li) {
                Print(L"tcg2_fault: no LoadedImage protocol: %r\n", st);
                return EFI_ERROR(st) ? st : EFI_NOT_FOUND;
        }
        root = LibOpenRoot(li->DeviceHandle);
        if (!root) {
                Print(L"tcg2_fault: cannot open the boot volume\n");
                return EFI_NOT_FOUND;
        }
        st = read_mode(root, &mode);
        root->Close(root);
        if (EFI_ERROR(st)) {
                Print(L"tcg2_fault: cannot read a mode (full or fail) from %s: %r\n", FAULT_MODE_PATH, st);
                return st;
        }
        st = hook_tcg2();
        if (EFI_ERROR(st)) {
                Print(L"tcg2_fault: cannot hook EFI_TCG2_PROTOCOL.HashLogExtendEvent: %r\n", st);
                return st;
        }
        Print(L"tcg2_fault: HashLogExtendEvent hooked, mode %s, failing from call %ld\n",
              mode == FAULT_FULL ? L"full" : L"fail", (UINT64) fail_from);

        dp = FileDevicePath(li->DeviceHandle, FAULT_NEXT_PATH);
        if (!dp)
                return EFI_OUT_OF_RESOURCES;
        st = uefi_call_wrapper(BS->LoadImage, 6, FALSE, image, dp, NULL, 0, &child);
        FreePool(dp);
        if (EFI_ERROR(st)) {
                unhook_tcg2();
                Print(L"tcg2_fault: LoadImage %s: %r\n", FAULT_NEXT_PATH, st);
                return st;
        }
        st = uefi_call_wrapper(BS->StartImage, 3, child, NULL, NULL);
        /* Back in the firmware's hands: this image is about to go away. */
        unhook_tcg2();
        Print(L"tcg2_fault: %s returned %r after %ld hooked calls\n", FAULT_NEXT_PATH, st, (UINT64) calls);
        return st;
}
