/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The Boot Loader Interface's LoaderDevicePartUUID (systemd's
 * docs/BOOT_LOADER_INTERFACE.md): the GPT partition GUID of the ESP mshim
 * was loaded from, so the initramfs finds the ESP (sealed secrets and
 * approvals live there: docs/SEALING.md) without being told where.
 * Volatile and not measured: docs/MEASUREMENTS.md says why that is safe.
 */
#include "mshim.h"
#include "mb/devpath.h"

void mshim_bli_set_partuuid(EFI_HANDLE device) {
        static EFI_GUID loader = MSHIM_LOADER_GUID;
        uint8_t guid[16], value[MB_PARTUUID_VAR_SIZE];
        EFI_DEVICE_PATH *dp = DevicePathFromHandle(device);
        EFI_STATUS st;

        /* Not on a GPT partition (a bare FAT image, an MBR disk, the
         * network): nothing to say, as systemd-boot says nothing. */
        if (!dp || mb_devpath_gpt_partuuid((const uint8_t *) dp, DevicePathSize(dp), guid) != MB_OK)
                return;
        mb_devpath_partuuid_var(guid, value);
        /* UEFI 2.10, 8.2.3: BS|RT without NV is volatile; it is gone at the
         * next reset, so it always describes this boot. */
        st = RT->SetVariable(L"LoaderDevicePartUUID", &loader,
                             EFI_VARIABLE_BOOTSERVICE_ACCESS | EFI_VARIABLE_RUNTIME_ACCESS, sizeof(value), value);
        if (EFI_ERROR(st))
                mshim_log(st, L"warning: cannot set LoaderDevicePartUUID: %r; the initramfs will not find the ESP by it", st);
}
