/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Boot Loader Specification Type #1: every \loader\entries\*.conf on the
 * volume mshim came from is one entry. Parsing and ordering are the core's
 * (mb_bls_parse_entry, mb_bls_compare); this file only fetches the bytes.
 */
#include "mshim.h"
#include "mb/emit.h"

/* Room for the longest FAT long name (255 units) and its NUL. */
#define DIR_INFO_SIZE (SIZE_OF_EFI_FILE_INFO + 256 * sizeof(CHAR16))

const CHAR16 *mshim_entry_name(const mshim_entry *e) {
        /* path is MSHIM_ENTRIES_DIR "\" name: the directory's NUL slot
         * counts the separator. */
        return e->path + MB_ARRAY_SIZE(MSHIM_ENTRIES_DIR);
}

/* BLS: entry files are "*.conf"; FAT compares names without case. */
static bool is_conf_name(const CHAR16 *name) {
        static const CHAR16 suffix[] = L".conf";
        UINTN n = StrLen((CHAR16 *) name), s = MB_ARRAY_SIZE(suffix) - 1;

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

/* Fill id (UTF-8) and path from the directory entry's name. */
static EFI_STATUS entry_names(mshim_entry *e, const CHAR16 *name) {
        UINTN dir = MB_ARRAY_SIZE(MSHIM_ENTRIES_DIR) - 1, n = StrLen((CHAR16 *) name);
        mb_strbuf b;

        if (n > MB_ARRAY_SIZE(e->path) - dir - 2)
                return EFI_BAD_BUFFER_SIZE;
        CopyMem(e->path, MSHIM_ENTRIES_DIR, dir * sizeof(CHAR16));
        e->path[dir] = L'\\';
        CopyMem(e->path + dir + 1, (void *) name, (n + 1) * sizeof(CHAR16));

        mb_strbuf_init(&b, e->id, sizeof(e->id));
        mb_strbuf_utf16le(&b, (const uint8_t *) name, n);
        return b.truncated ? EFI_BAD_BUFFER_SIZE : EFI_SUCCESS;
}

/* Read and parse one entry file; NULL (after a message) when unusable. */
static mshim_entry *entry_load(EFI_FILE_HANDLE root, const CHAR16 *name) {
        mshim_entry *e = AllocateZeroPool(sizeof(*e));
        void *buf = NULL;
        EFI_STATUS st;
        mb_err r;

        if (!e) {
                mshim_log(EFI_OUT_OF_RESOURCES, L"out of memory for entry %s", name);
                return NULL;
        }
        if (EFI_ERROR(entry_names(e, name))) {
                mshim_log(EFI_BAD_BUFFER_SIZE, L"skipping entry %s: name too long", name);
                goto fail;
        }
        st = mshim_file_load(root, e->path, MSHIM_CONF_MAX, &buf, &e->size);
        if (EFI_ERROR(st)) {
                mshim_log(st, L"skipping entry %s: cannot read it (%r)", name, st);
                goto fail;
        }
        e->buf = buf;
        r = mb_bls_parse_entry(e->buf, e->size, (mb_str) { e->id, mb_strnlen(e->id, sizeof(e->id)) }, &e->bls);
        if (r != MB_OK) {
                /* err_line 0: the file as a whole is wrong (e.g. it names
                 * neither linux nor efi), not one line of it. */
                if (e->bls.err_line)
                        mshim_log(mb_efi_status(r), L"skipping entry %s: %a at line %ld",
                                  name, mb_strerror(r), (UINT64) e->bls.err_line);
                else
                        mshim_log(mb_efi_status(r), L"skipping entry %s: %a (the file as a whole, e.g. neither linux nor efi)",
                                  name, mb_strerror(r));
                goto fail;
        }
        return e;
fail:
        if (e->buf)
                FreePool(e->buf);
        FreePool(e);
        return NULL;
}

/* Next regular file in dir, validated: EFI_NOT_FOUND at the end. */
static EFI_STATUS dir_next(EFI_FILE_HANDLE dir, EFI_FILE_INFO *info, UINTN info_size) {
        for (;;) {
                UINTN n = info_size;
                EFI_STATUS st = dir->Read(dir, &n, info);

                if (EFI_ERROR(st))
                        return mshim_log(st, L"cannot list %s: %r", MSHIM_ENTRIES_DIR, st);
                if (n == 0)
                        return EFI_NOT_FOUND;
                /* The firmware's record must fit what it said it wrote, and
                 * the name must end inside it. */
                if (n < SIZE_OF_EFI_FILE_INFO || n > info_size || info->Size > n)
                        return mshim_log(EFI_VOLUME_CORRUPTED, L"bad directory record in %s", MSHIM_ENTRIES_DIR);
                ((UINT8 *) info)[n - 1] = 0;
                ((UINT8 *) info)[n - 2] = 0;
                if (!(info->Attribute & EFI_FILE_DIRECTORY) && is_conf_name(info->FileName))
                        return EFI_SUCCESS;
        }
}

/* Insertion sort: a few dozen entries at most, and mb_bls_compare is the
 * whole of the ordering rule. */
static void entries_sort(mshim_entry **v, UINTN n) {
        for (UINTN i = 1; i < n; i++) {
                mshim_entry *x = v[i];
                UINTN j = i;

                for (; j > 0 && mb_bls_compare(&x->bls, &v[j - 1]->bls) < 0; j--)
                        v[j] = v[j - 1];
                v[j] = x;
        }
}

EFI_STATUS mshim_entries_load(EFI_FILE_HANDLE root, mshim_entry ***ret_entries, UINTN *ret_n) {
        EFI_FILE_HANDLE dir = NULL;
        EFI_FILE_INFO *info = NULL;
        mshim_entry **v = NULL;
        UINTN n = 0;
        EFI_STATUS st;

        v = AllocateZeroPool(MSHIM_MAX_ENTRIES * sizeof(*v));
        info = AllocatePool(DIR_INFO_SIZE);
        if (!v || !info) {
                st = mshim_log(EFI_OUT_OF_RESOURCES, L"out of memory listing entries");
                goto out;
        }
        st = root->Open(root, &dir, MSHIM_ENTRIES_DIR, EFI_FILE_MODE_READ, 0);
        if (st == EFI_NOT_FOUND) {
                st = EFI_SUCCESS;       /* no entries: the caller says so */
                goto done;
        }
        if (EFI_ERROR(st)) {
                st = mshim_log(st, L"cannot open %s: %r", MSHIM_ENTRIES_DIR, st);
                goto out;
        }
        while (dir_next(dir, info, DIR_INFO_SIZE) == EFI_SUCCESS) {
                if (n == MSHIM_MAX_ENTRIES) {
                        mshim_log(EFI_SUCCESS, L"more than %d entries; ignoring %s and the rest",
                                  MSHIM_MAX_ENTRIES, info->FileName);
                        break;
                }
                v[n] = entry_load(root, info->FileName);
                if (v[n])
                        n++;
        }
        /* A listing error after some entries were read still leaves those
         * bootable: it has been reported, go on with what we have. */
        st = EFI_SUCCESS;
done:
        entries_sort(v, n);
        *ret_entries = v;
        *ret_n = n;
        v = NULL;
out:
        if (dir)
                dir->Close(dir);
        if (info)
                FreePool(info);
        if (v)
                FreePool(v);
        return st;
}

void mshim_entries_free(mshim_entry **entries, UINTN n) {
        if (!entries)
                return;
        for (UINTN i = 0; i < n; i++) {
                FreePool(entries[i]->buf);
                FreePool(entries[i]);
        }
        FreePool(entries);
}
