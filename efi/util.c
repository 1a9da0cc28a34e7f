/* SPDX-License-Identifier: BSD-2-Clause */
/* Small helpers shared by the loader modules: status conversion, console
 * messages, strings from the core made printable or usable as paths, bulk
 * copies. */
#include "mshim.h"

void mshim_copy(void *dst, const void *src, UINTN n) {
        /* UEFI 2.10, 7.5.3 EFI_BOOT_SERVICES.CopyMem: any length, overlapping
         * buffers allowed, as gnu-efi's CopyMem (a byte loop) allows. */
        if (n)
                BS->CopyMem(dst, (void *) src, n);
}

void *mshim_pages_alloc(UINTN size) {
        EFI_PHYSICAL_ADDRESS a = 0;

        /* The pool's memory type (gnu-efi's PoolAllocationType): the OS
         * gets it back after ExitBootServices. */
        if (size == 0 || EFI_ERROR(BS->AllocatePages(AllocateAnyPages, EfiBootServicesData, EFI_SIZE_TO_PAGES(size), &a)))
                return NULL;
        return (void *) (UINTN) a;
}

void mshim_pages_free(void *p, UINTN size) {
        if (p)
                BS->FreePages((EFI_PHYSICAL_ADDRESS) (UINTN) p, EFI_SIZE_TO_PAGES(size));
}

EFI_STATUS mb_efi_status(mb_err e) {
        switch (e) {
        case MB_OK:
        case MB_END:
                return EFI_SUCCESS;
        case MB_ERR_TRUNCATED:
        case MB_ERR_INVALID:
                return EFI_LOAD_ERROR;  /* a file we read is malformed */
        case MB_ERR_UNSUPPORTED:
                return EFI_UNSUPPORTED;
        case MB_ERR_NOSPACE:
                return EFI_BUFFER_TOO_SMALL;
        case MB_ERR_NOTFOUND:
                return EFI_NOT_FOUND;
        case MB_ERR_TOOLONG:
        case MB_ERR_OVERFLOW:
                return EFI_BAD_BUFFER_SIZE;
        }
        return EFI_LOAD_ERROR;
}

void mshim_fatal_stuck(const CHAR16 *what, EFI_STATUS st) {
        /* What could not be taken back points into mshim's image (code or
         * data), which the firmware frees as soon as mshim returns; the
         * next loader or boot option would then run or read freed memory,
         * and going on to another entry would hand it the stale state (a
         * second kernel finding the first one's initrd). Neither is safe,
         * so, as shim does when it cannot continue, say why, leave the
         * message time to be read, and power off: a reset would come back
         * to the same failure in a loop. */
        mshim_log(st, L"cannot remove %s (%r), which points into mshim; it can neither return nor go on: powering off in %d seconds",
                  what, st, MSHIM_FATAL_DELAY_S);
        BS->Stall(MSHIM_FATAL_DELAY_S * 1000000ull);
        RT->ResetSystem(EfiResetShutdown, EFI_SECURITY_VIOLATION, 0, NULL);
        for (;;)        /* ResetSystem does not return (UEFI 2.10, 8.5.1) */
                ;
}

EFI_STATUS mshim_log(EFI_STATUS status, const CHAR16 *fmt, ...) {
        va_list ap;

        Print(L"mshim: ");
        va_start(ap, fmt);
        VPrint(fmt, ap);
        va_end(ap);
        Print(L"\n");
        return status;
}

const CHAR16 *mshim_text_of(mb_str s, mshim_text *t) {
        static const CHAR16 unprintable[] = L"(unprintable)";
        /* Each UTF-8 byte yields at most one UTF-16 unit, so cutting the
         * input to the buffer's units (less the NUL) always fits; a cut in
         * the middle of a sequence shows as unprintable, which is rare. */
        size_t max = MB_ARRAY_SIZE(t->s) - 1, n;

        if (s.len > max)
                s.len = max;
        /* x86 is little endian: UTF-16LE bytes are CHAR16 units. */
        if (mb_utf8_to_utf16le(s.p, s.len, (uint8_t *) t->s, sizeof(t->s), &n) != MB_OK)
                CopyMem(t->s, (void *) unprintable, sizeof(unprintable));
        return t->s;
}

EFI_STATUS mshim_path_from_bls(mb_str path, CHAR16 *dst, UINTN dst_units) {
        size_t n, i;
        mb_err r;

        if (dst_units < 2)
                return EFI_BUFFER_TOO_SMALL;
        /* BLS: paths are relative to the root of the partition, written with
         * '/'; UEFI file paths use '\' (UEFI 2.10, 13.5 EFI_FILE_PROTOCOL.Open).
         * Keep one unit for a leading '\' in case the entry omitted the '/'. */
        r = mb_utf8_to_utf16le(path.p, path.len, (uint8_t *) (dst + 1), (dst_units - 1) * sizeof(CHAR16), &n);
        if (r != MB_OK)
                return mb_efi_status(r);
        dst[0] = L'\\';
        n /= sizeof(CHAR16);    /* units, NUL included */
        for (i = 1; i < n + 1; i++)
                if (dst[i] == L'/')
                        dst[i] = L'\\';
        /* "/vmlinuz" became "\\vmlinuz": drop the extra separator. */
        if (dst[1] == L'\\')
                CopyMem(dst, dst + 1, n * sizeof(CHAR16));
        return dst[1] == 0 ? EFI_INVALID_PARAMETER : EFI_SUCCESS;
}

/* UEFI 2.10, 3.3: SecureBoot is 1 when the platform enforces Secure Boot.
 * A missing or malformed variable means off, as shim treats it. */
bool mshim_secure_boot_enabled(void) {
        EFI_GUID global = EFI_GLOBAL_VARIABLE;
        UINT8 v = 0;
        UINTN size = sizeof(v);
        EFI_STATUS st;

        st = RT->GetVariable(L"SecureBoot", &global, NULL, &size, &v);
        return !EFI_ERROR(st) && size == 1 && v == 1;
}
