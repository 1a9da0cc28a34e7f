/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The built-in boot policy: read from mshim's own .mpolicy section
 * (efi/mpolicy.S), which the image's Authenticode signature covers. It
 * decides what loader.conf, which anyone with ESP write access can edit,
 * may only make stricter: whether a TPM is required and whether a TPM
 * that fails to measure stops the boot (docs/CONFIG.md).
 */
#include "mshim.h"

extern const UINT8 mshim_boot_policy_text[MB_BOOT_POLICY_SIZE];

EFI_STATUS mshim_boot_policy(mb_boot_policy *ret) {
        mb_boot_policy p;
        mb_err r;

        r = mb_boot_policy_parse(mshim_boot_policy_text, MB_BOOT_POLICY_SIZE, &p);
        if (r != MB_OK)
                return mshim_log(EFI_SECURITY_VIOLATION, L"the built-in boot policy is invalid (%a at line %ld); "
                                 L"refusing to boot", mb_strerror(r), (UINT64) p.err_line);
        *ret = p;
        return EFI_SUCCESS;
}
