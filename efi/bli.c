/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The Boot Loader Interface (systemd's docs/BOOT_LOADER_INTERFACE.md):
 * LoaderDevicePartUUID, the GPT partition GUID of the ESP mshim was loaded
 * from, so the initramfs finds the ESP (sealed secrets and approvals live
 * there: docs/SEALING.md) without being told where; LoaderEntrySelected,
 * the entry tried; and the variables the boot plan reads,
 * LoaderEntryOneShot (deleted once read) and LoaderEntryDefault. None is
 * measured: docs/MEASUREMENTS.md says why that is safe.
 */
#include "mshim.h"
#include "mb/devpath.h"
#include "mb/emit.h"

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

/* An entry id variable (UTF-16LE, the NUL optional) as UTF-8 in buf.
 * Returns whether it exists; *ret stays empty when its value is not
 * usable (too long, an odd size), so it names no entry. */
static bool bli_get_id(const CHAR16 *name, char *buf, UINTN cap, mb_str *ret) {
        static EFI_GUID loader = MSHIM_LOADER_GUID;
        uint8_t value[MSHIM_BLI_ID_MAX * 2];
        UINTN size = sizeof(value);
        mb_strbuf b;
        EFI_STATUS st;

        *ret = (mb_str) { buf, 0 };
        st = RT->GetVariable((CHAR16 *) name, &loader, NULL, &size, value);
        if (st == EFI_NOT_FOUND)
                return false;
        if (EFI_ERROR(st) || size % 2 || size > sizeof(value)) {
                mshim_log(st, L"warning: %s cannot be read (%r); it names no entry", name, st);
                return st != EFI_NOT_FOUND;
        }
        mb_strbuf_init(&b, buf, cap);
        mb_strbuf_utf16le(&b, value, size / 2);
        if (!b.truncated)
                ret->len = b.len;
        return true;
}

void mshim_bli_read_vars(mshim_bli_ids *ids, mb_plan_vars *ret) {
        mb_memset(ret, 0, sizeof(*ret));
        ret->oneshot_set = bli_get_id(L"LoaderEntryOneShot", ids->oneshot, sizeof(ids->oneshot), &ret->oneshot);
        bli_get_id(L"LoaderEntryDefault", ids->entry_default, sizeof(ids->entry_default), &ret->entry_default);
}

void mshim_bli_delete_oneshot(void) {
        static EFI_GUID loader = MSHIM_LOADER_GUID;
        EFI_STATUS st;

        /* UEFI 2.10, 8.2.3: size 0 (and no access attributes) deletes. */
        st = RT->SetVariable(L"LoaderEntryOneShot", &loader, 0, 0, NULL);
        if (EFI_ERROR(st) && st != EFI_NOT_FOUND)
                mshim_log(st, L"warning: cannot delete LoaderEntryOneShot (%r): the next boot will follow it again", st);
}

void mshim_bli_set_selected(mb_str id) {
        static EFI_GUID loader = MSHIM_LOADER_GUID;
        uint8_t value[MSHIM_BLI_ID_MAX * 2];
        size_t size = 0;
        EFI_STATUS st;

        if (mb_utf8_to_utf16le(id.p, id.len, value, sizeof(value), &size) != MB_OK)
                return;         /* entry ids come from FAT names: they fit */
        /* Volatile (BS|RT, no NV): it always describes this boot. */
        st = RT->SetVariable(L"LoaderEntrySelected", &loader, EFI_VARIABLE_BOOTSERVICE_ACCESS | EFI_VARIABLE_RUNTIME_ACCESS,
                             size, value);
        if (EFI_ERROR(st))
                mshim_log(st, L"warning: cannot set LoaderEntrySelected: %r; `mshim bless` will not find this entry", st);
}
