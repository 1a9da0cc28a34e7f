/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * What mshim installs for a next stage (the initrd's LoadFile2, SHIM_LOCK,
 * the LoadImage hook) points into mshim's own image, which the firmware
 * frees when mshim returns. When one of them cannot be taken back, mshim
 * must neither return nor go on to another entry: it powers the machine
 * off after saying why (efi/util.c, mshim_fatal_stuck). The fake checks,
 * whenever mshim returns, that nothing of its is left installed.
 */
#include <string.h>
#include "harness.h"

static EFI_STATUS fails(EFI_HANDLE image, EFI_SYSTEM_TABLE *st) {
        return EFI_LOAD_ERROR;
}

static void expect_power_off(fh_result r) {
        FH_CHECK(!r.returned);
        FH_CHECK(r.reset);
        FH_CHECK_EQ(r.reset_type, EfiResetShutdown);
        FH_CHECK(fh_console_has("powering off"));
}

FH_CASE(initrd_protocol_that_cannot_be_uninstalled_powers_off) {
        static const fh_image_spec kernel = { .entry = fails };
        fh_result r;

        /* Entries sort newest first (mb_bls_compare): b.conf, then a.conf. */
        fh_file_str("/loader/entries/b.conf", "linux /vmlinuz\ninitrd /initrd.img\n");
        fh_file_str("/loader/entries/a.conf", "linux /vmlinuz\n");
        fh_file_str("/initrd.img", "cpio");
        fh_image("/vmlinuz", &kernel);
        fh_uninstall_fail(&fh_load_file2_guid, EFI_ACCESS_DENIED);
        r = fh_boot();
        expect_power_off(r);
        /* a.conf is not tried: its kernel would find b.conf's initrd. */
        FH_CHECK_EQ(fh_calls("StartImage"), 1);
        FH_CHECK(fh_console_has("initrd"));
        FH_CHECK_CLEAN();
}

FH_CASE(shim_lock_that_cannot_be_uninstalled_powers_off) {
        fh_result r;

        fh_image("/EFI/BOOT/grubx64.efi", &(fh_image_spec) { .entry = fails });
        fh_uninstall_fail(&fh_shim_lock_guid, EFI_ACCESS_DENIED);
        r = fh_boot();
        expect_power_off(r);
        FH_CHECK(fh_console_has("SHIM_LOCK"));
        FH_CHECK_CLEAN();
}

/* A next stage that removed mshim's SHIM_LOCK itself (shim does this to
 * an earlier instance's) leaves nothing behind: mshim returns normally. */
static EFI_STATUS removes_shim_lock(EFI_HANDLE image, EFI_SYSTEM_TABLE *st) {
        EFI_LOADED_IMAGE *li = NULL;
        void *iface = NULL;

        if (st->BootServices->HandleProtocol(image, &LoadedImageProtocol, (void **) &li) != EFI_SUCCESS ||
            st->BootServices->HandleProtocol(li->ParentHandle, &fh_shim_lock_guid, &iface) != EFI_SUCCESS ||
            st->BootServices->UninstallProtocolInterface(li->ParentHandle, &fh_shim_lock_guid, iface) != EFI_SUCCESS)
                fh_fail(__FILE__, __LINE__, "could not remove mshim's SHIM_LOCK");
        return EFI_LOAD_ERROR;
}

FH_CASE(shim_lock_removed_by_the_next_stage_is_fine) {
        fh_result r;

        fh_image("/EFI/BOOT/grubx64.efi", &(fh_image_spec) { .entry = removes_shim_lock });
        r = fh_boot();
        FH_CHECK(r.returned);
        FH_CHECK(!r.reset);
        FH_CHECK_CLEAN();
}

/* A next stage that hooks LoadImage on top of mshim's hook and returns
 * without undoing it: mshim's hook stays in the chain. */
static EFI_IMAGE_LOAD saved_load_image;

static EFI_STATUS EFIAPI stage_hook(BOOLEAN bp, EFI_HANDLE parent, EFI_DEVICE_PATH *dp, VOID *src, UINTN size,
                                    EFI_HANDLE *ret) {
        return saved_load_image(bp, parent, dp, src, size, ret);
}

static EFI_STATUS hooks_load_image(EFI_HANDLE image, EFI_SYSTEM_TABLE *st) {
        saved_load_image = st->BootServices->LoadImage;
        /* mshim's hook is in place while it runs, with Secure Boot on. */
        if (saved_load_image == fh_firmware_load_image())
                fh_fail(__FILE__, __LINE__, "mshim's LoadImage hook is not installed");
        st->BootServices->LoadImage = stage_hook;
        return EFI_LOAD_ERROR;
}

FH_CASE(load_image_hooked_over_mshims_hook_powers_off) {
        fh_result r;

        fh_secure_boot(true);
        fh_image("/EFI/BOOT/grubx64.efi", &(fh_image_spec) { .entry = hooks_load_image });
        r = fh_boot();
        expect_power_off(r);
        FH_CHECK(fh_console_has("LoadImage"));
        FH_CHECK_CLEAN();
}

/* The ordinary case: the hook is there while the next stage runs and
 * gone (with a valid table CRC, checked by the fake) when mshim returns. */
static EFI_STATUS sees_hook(EFI_HANDLE image, EFI_SYSTEM_TABLE *st) {
        if (st->BootServices->LoadImage == fh_firmware_load_image())
                fh_fail(__FILE__, __LINE__, "mshim's LoadImage hook is not installed");
        if (!fh_protocol_installed(&fh_shim_lock_guid))
                fh_fail(__FILE__, __LINE__, "SHIM_LOCK is not installed");
        return EFI_LOAD_ERROR;
}

FH_CASE(hook_and_shim_lock_are_undone_when_the_next_stage_returns) {
        fh_result r;

        fh_secure_boot(true);
        fh_image("/EFI/BOOT/grubx64.efi", &(fh_image_spec) { .entry = sees_hook });
        r = fh_boot();
        FH_CHECK(r.returned);
        FH_CHECK(!r.reset);
        FH_CHECK_EQ(r.leaked, 0);
        FH_CHECK_CLEAN();
}

int main(void) {
        FH_RUN(initrd_protocol_that_cannot_be_uninstalled_powers_off);
        FH_RUN(shim_lock_that_cannot_be_uninstalled_powers_off);
        FH_RUN(shim_lock_removed_by_the_next_stage_is_fine);
        FH_RUN(load_image_hooked_over_mshims_hook_powers_off);
        FH_RUN(hook_and_shim_lock_are_undone_when_the_next_stage_returns);
        return fh_exit_status();
}
