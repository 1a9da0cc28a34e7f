/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Not part of mshim's code: the smallest EFI application gnu-efi builds,
 * left unsigned on purpose. efi/selftest.S embeds it in mshimx64.efi, and
 * with Secure Boot on mshim asks the firmware to load it (efi/shimlock.c):
 * a firmware that accepts it does not apply Secure Boot to what
 * SHIM_LOCK Verify hands it, and Verify then refuses everything.
 * It never runs; if it did, it would only say no.
 */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wstrict-prototypes"   /* gnu-efi's headers */
#include <efi.h>
#pragma GCC diagnostic pop

EFI_STATUS efi_main(EFI_HANDLE image, EFI_SYSTEM_TABLE *systab);

EFI_STATUS efi_main(EFI_HANDLE image, EFI_SYSTEM_TABLE *systab) {
        return EFI_SECURITY_VIOLATION;
}
