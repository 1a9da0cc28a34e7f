/* SPDX-License-Identifier: BSD-2-Clause */
/* Reading whole files from the boot volume, trusting no size the file
 * system reports beyond the caller's cap. */
#include "mshim.h"

EFI_STATUS mshim_file_size(EFI_FILE_HANDLE f, const CHAR16 *path, UINTN max, UINTN *ret_size) {
        EFI_FILE_INFO *info;
        EFI_STATUS st = EFI_SUCCESS;

        info = LibFileInfo(f);
        if (!info)
                return mshim_log(EFI_DEVICE_ERROR, L"cannot query %s", path);
        if (info->Attribute & EFI_FILE_DIRECTORY)
                st = mshim_log(EFI_INVALID_PARAMETER, L"%s is a directory", path);
        else if (info->FileSize > max)
                st = mshim_log(EFI_BAD_BUFFER_SIZE, L"%s is too big (%ld bytes, limit %ld)",
                               path, info->FileSize, (UINT64) max);
        else
                *ret_size = (UINTN) info->FileSize;
        FreePool(info);
        return st;
}

EFI_STATUS mshim_file_read_exact(EFI_FILE_HANDLE f, const CHAR16 *path, void *buf, UINTN size) {
        UINTN done = 0;

        /* EFI_FILE_PROTOCOL.Read may return fewer bytes than asked (UEFI
         * 2.10, 13.5); a zero-byte read before the end means the file
         * shrank under us. */
        while (done < size) {
                UINTN n = size - done;
                EFI_STATUS st = f->Read(f, &n, (UINT8 *) buf + done);

                if (EFI_ERROR(st))
                        return mshim_log(st, L"cannot read %s: %r", path, st);
                if (n == 0 || n > size - done)
                        return mshim_log(EFI_END_OF_FILE, L"%s: short read", path);
                done += n;
        }
        return EFI_SUCCESS;
}

/* mshim_file_load and mshim_file_load_pages: pages picks the allocator. */
static EFI_STATUS file_load(EFI_FILE_HANDLE root, const CHAR16 *path, UINTN max, bool pages,
                            void **ret_buf, UINTN *ret_size) {
        EFI_FILE_HANDLE f = NULL;
        void *buf = NULL;
        UINTN size = 0;
        EFI_STATUS st;

        st = root->Open(root, &f, (CHAR16 *) path, EFI_FILE_MODE_READ, 0);
        if (st == EFI_NOT_FOUND)
                return st;
        if (EFI_ERROR(st))
                return mshim_log(st, L"cannot open %s: %r", path, st);

        st = mshim_file_size(f, path, max, &size);
        if (EFI_ERROR(st))
                goto out;
        /* One spare byte so an empty file still gets a valid pointer. */
        buf = pages ? mshim_pages_alloc(size + 1) : AllocatePool(size + 1);
        if (!buf) {
                st = mshim_log(EFI_OUT_OF_RESOURCES, L"out of memory reading %s", path);
                goto out;
        }
        st = mshim_file_read_exact(f, path, buf, size);
        if (EFI_ERROR(st))
                goto out;

        *ret_buf = buf;
        *ret_size = size;
        buf = NULL;
out:
        if (buf && pages)
                mshim_pages_free(buf, size + 1);
        else if (buf)
                FreePool(buf);
        f->Close(f);
        return st;
}

EFI_STATUS mshim_file_load(EFI_FILE_HANDLE root, const CHAR16 *path, UINTN max,
                           void **ret_buf, UINTN *ret_size) {
        return file_load(root, path, max, false, ret_buf, ret_size);
}

EFI_STATUS mshim_file_load_pages(EFI_FILE_HANDLE root, const CHAR16 *path, UINTN max,
                                 void **ret_buf, UINTN *ret_size) {
        return file_load(root, path, max, true, ret_buf, ret_size);
}

/* name ends in suffix, ignoring the case of ASCII letters. */
static bool has_suffix(const CHAR16 *name, const CHAR16 *suffix) {
        UINTN n = StrLen((CHAR16 *) name), s = StrLen((CHAR16 *) suffix);

        if (n <= s)
                return false;
        for (UINTN i = 0; i < s; i++) {
                CHAR16 ch = name[n - s + i];
                if (ch >= L'A' && ch <= L'Z')
                        ch = (CHAR16) (ch - L'A' + L'a');
                if (ch != suffix[i])
                        return false;
        }
        return true;
}

EFI_STATUS mshim_dir_next(EFI_FILE_HANDLE dir, const CHAR16 *path, const CHAR16 *suffix, EFI_FILE_INFO *info,
                          UINTN info_size) {
        for (;;) {
                UINTN n = info_size;
                EFI_STATUS st = dir->Read(dir, &n, info);

                if (EFI_ERROR(st))
                        return mshim_log(st, L"cannot list %s: %r", path, st);
                if (n == 0)
                        return EFI_NOT_FOUND;
                /* The firmware's record must fit what it said it wrote and
                 * hold at least the name's NUL. */
                if (n < SIZE_OF_EFI_FILE_INFO + sizeof(CHAR16) || n > info_size || info->Size > n)
                        return mshim_log(EFI_VOLUME_CORRUPTED, L"bad directory record in %s", path);
                /* FileName is NUL-terminated inside the record (UEFI 2.10,
                 * 13.5.16): force that on its last whole CHAR16, which a
                 * well-formed record already has as NUL. Zeroing the last
                 * two bytes would not do for an odd size: they straddle two
                 * units and the name would run on past the record. */
                info->FileName[(n - SIZE_OF_EFI_FILE_INFO) / sizeof(CHAR16) - 1] = 0;
                if (!(info->Attribute & EFI_FILE_DIRECTORY) && has_suffix(info->FileName, suffix))
                        return EFI_SUCCESS;
        }
}
