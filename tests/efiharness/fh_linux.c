/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * A Linux kernel as mshim sees it: the x86 boot header it reads the
 * kernel's version from (Documentation/arch/x86/boot.rst), and what the
 * kernel's EFI stub does to get its initrd (drivers/firmware/efi/libstub/
 * efi-stub-helper.c, efi_load_initrd_dev_path): LocateDevicePath on the
 * initrd media device path, then LoadFile2, first for the size, then into
 * a buffer of that size.
 */
#include <string.h>
#include "fh_internal.h"

size_t fh_linux_image(uint8_t *out, size_t cap, const char *version) {
        size_t n = strlen(version) + 1;

        if (cap < FH_LINUX_IMAGE_MIN + n)
                return 0;
        memset(out, 0, FH_LINUX_IMAGE_MIN + n);
        memcpy(out, "MZ", 2);
        memcpy(out + 0x202, "HdrS", 4);           /* the header's magic */
        out[0x206] = 0x0f;                       /* boot protocol 2.15 */
        out[0x207] = 0x02;
        out[0x20e] = 0x00;                       /* kernel_version: 0x300, + 0x200 */
        out[0x20f] = 0x03;
        memcpy(out + 0x500, version, n);
        return FH_LINUX_IMAGE_MIN + n;
}

EFI_STATUS fh_stub_load_initrd(void *buf, size_t cap, size_t *ret_size) {
        struct {
                VENDOR_DEVICE_PATH vendor;
                EFI_DEVICE_PATH end;
        } __attribute__((packed)) dp = {
                .vendor = { .Header = { MEDIA_DEVICE_PATH, MEDIA_VENDOR_DP, { sizeof(VENDOR_DEVICE_PATH), 0 } },
                            .Guid = fh_initrd_media_guid },
                .end = { END_DEVICE_PATH_TYPE, END_ENTIRE_DEVICE_PATH_SUBTYPE, { sizeof(EFI_DEVICE_PATH), 0 } },
        };
        EFI_DEVICE_PATH *p = (EFI_DEVICE_PATH *) &dp;
        EFI_LOAD_FILE_PROTOCOL *lf = NULL;
        EFI_HANDLE h = NULL;
        UINTN size = 0;
        EFI_STATUS st;

        if (BS->LocateDevicePath(&fh_load_file2_guid, &p, &h) != EFI_SUCCESS ||
            BS->HandleProtocol(h, &fh_load_file2_guid, (void **) &lf) != EFI_SUCCESS)
                return EFI_NOT_FOUND;
        st = lf->LoadFile(lf, p, FALSE, &size, NULL);
        if (st != EFI_BUFFER_TOO_SMALL)
                return st == EFI_SUCCESS ? EFI_PROTOCOL_ERROR : st;
        if (size > cap)
                return EFI_BAD_BUFFER_SIZE;
        st = lf->LoadFile(lf, p, FALSE, &size, buf);
        if (st == EFI_SUCCESS)
                *ret_size = size;
        return st;
}
