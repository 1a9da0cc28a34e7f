/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Boot Loader Specification Type #1: every \loader\entries\*.conf on the
 * volume mshim came from is one entry. Parsing and ordering are the core's
 * (mb_bls_parse_entry, mb_bls_compare); this file only fetches the bytes.
 */
#include "mshim.h"
#include "mb/emit.h"
#include "mb/tcglog.h"

const CHAR16 *mshim_entry_name(const mshim_entry *e) {
        /* path is MSHIM_ENTRIES_DIR "\" name: the directory's NUL slot
         * counts the separator. */
        return e->path + MB_ARRAY_SIZE(MSHIM_ENTRIES_DIR);
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

/* Read and parse one entry file. NULL (after a message) only when it has
 * no usable name or memory ran out; an entry that cannot be read or
 * parsed comes back with bad_tag set, to be measured and dropped. */
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
                FreePool(e);
                return NULL;
        }
        st = mshim_file_load(root, e->path, MSHIM_CONF_MAX, &buf, &e->size);
        if (EFI_ERROR(st)) {
                mshim_log(st, L"skipping entry %s: cannot read it (%r)", name, st);
                e->size = 0;
                e->bad_tag = MB_TAG_FILE_UNREADABLE;
                return e;
        }
        e->buf = buf;
        r = mb_bls_parse_entry(e->buf, e->size, (mb_str) { e->id, mb_strnlen(e->id, sizeof(e->id)) }, &e->bls);
        if (r != MB_OK) {
                /* err_line 0: the file as a whole is wrong (e.g. it names
                 * neither linux nor efi), not one line of it. */
                if (r == MB_ERR_UNSUPPORTED)
                        mshim_log(mb_efi_status(r), L"skipping entry %s: its options (line %ld) hold initrd=, "
                                  L"a file the kernel would load unmeasured; name initrds with initrd lines",
                                  name, (UINT64) e->bls.err_line);
                else if (e->bls.err_line)
                        mshim_log(mb_efi_status(r), L"skipping entry %s: %a at line %ld",
                                  name, mb_strerror(r), (UINT64) e->bls.err_line);
                else
                        mshim_log(mb_efi_status(r), L"skipping entry %s: %a (the file as a whole, e.g. neither linux nor efi)",
                                  name, mb_strerror(r));
                e->bad_tag = MB_TAG_BLS_ENTRY_BAD;
        }
        return e;
}

static void entry_free(mshim_entry *e) {
        if (e->buf)
                FreePool(e->buf);
        FreePool(e);
}

/* Byte order of the UTF-8 file names: the order a host tool predicting
 * PCR 5 gets from sorting the names, whatever order the firmware lists. */
static int id_compare(const mshim_entry *a, const mshim_entry *b) {
        UINTN la = mb_strnlen(a->id, sizeof(a->id)), lb = mb_strnlen(b->id, sizeof(b->id));
        int c = mb_memcmp(a->id, b->id, la < lb ? la : lb);

        return c ? c : (la > lb) - (la < lb);
}

/* Bootable entries first, in mb_bls_compare order; then the unusable
 * ones, by file name. Insertion sort: a few dozen entries at most. */
static int entry_order(const mshim_entry *a, const mshim_entry *b) {
        if (!a->bad_tag != !b->bad_tag)
                return a->bad_tag ? 1 : -1;
        return a->bad_tag ? id_compare(a, b) : mb_bls_compare(&a->bls, &b->bls);
}

static void entries_sort(mshim_entry **v, UINTN n) {
        for (UINTN i = 1; i < n; i++) {
                mshim_entry *x = v[i];
                UINTN j = i;

                for (; j > 0 && entry_order(x, v[j - 1]) < 0; j--)
                        v[j] = v[j - 1];
                v[j] = x;
        }
}

/* Measure and drop the unusable entries at the end of the sorted v: the
 * PCR records every entry file mshim saw and could not use, so a broken
 * entry is never the same PCR 5 as no entry. */
static EFI_STATUS entries_drop_bad(mshim_tpm *tpm, mshim_entry **v, UINTN *n) {
        EFI_STATUS st = EFI_SUCCESS;
        UINTN good = 0;

        while (good < *n && !v[good]->bad_tag)
                good++;
        for (UINTN i = good; i < *n; i++) {
                if (!EFI_ERROR(st))
                        st = mshim_tpm_measure_file(tpm, v[i]->bad_tag, v[i]->path, v[i]->buf, v[i]->size);
                entry_free(v[i]);
                v[i] = NULL;
        }
        *n = good;
        return st;
}

EFI_STATUS mshim_entries_load(EFI_FILE_HANDLE root, mshim_tpm *tpm, mshim_entry ***ret_entries, UINTN *ret_n) {
        EFI_FILE_HANDLE dir = NULL;
        EFI_FILE_INFO *info = NULL;
        mshim_entry **v = NULL;
        UINTN n = 0;
        EFI_STATUS st;

        v = AllocateZeroPool(MSHIM_MAX_ENTRIES * sizeof(*v));
        info = AllocatePool(MSHIM_DIR_INFO_SIZE);
        if (!v || !info) {
                st = mshim_log(EFI_OUT_OF_RESOURCES, L"out of memory listing entries");
                goto out;
        }
        st = root->Open(root, &dir, MSHIM_ENTRIES_DIR, EFI_FILE_MODE_READ, 0);
        if (st == EFI_NOT_FOUND)
                goto done;              /* no entries: the caller says so */
        if (EFI_ERROR(st)) {
                st = mshim_log(st, L"cannot open %s: %r", MSHIM_ENTRIES_DIR, st);
                goto out;
        }
        while (mshim_dir_next(dir, MSHIM_ENTRIES_DIR, L".conf", info, MSHIM_DIR_INFO_SIZE) == EFI_SUCCESS) {
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
done:
        entries_sort(v, n);
        st = entries_drop_bad(tpm, v, &n);
        if (EFI_ERROR(st)) {
                mshim_entries_free(v, n);
                v = NULL;
                goto out;
        }
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
        for (UINTN i = 0; i < n; i++)
                entry_free(entries[i]);
        FreePool(entries);
}
