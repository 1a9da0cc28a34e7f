/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Boot Loader Specification Type #1: every \loader\entries\*.conf on the
 * volume mshim came from is one entry. Parsing, ordering and which are
 * usable are the boot plan's (src/plan.c); this file fetches the bytes and
 * measures the unusable ones in the plan's order.
 */
#include "mshim.h"
#include "mb/emit.h"
#include "mb/tcglog.h"

const CHAR16 *mshim_entry_name(const mshim_entry *e) {
        /* path is MSHIM_ENTRIES_DIR "\" name: the directory's NUL slot
         * counts the separator. */
        return e->path + MB_ARRAY_SIZE(MSHIM_ENTRIES_DIR);
}

/* The path measured: path without the boot counter (the entry id's
 * name, docs/MEASUREMENTS.md), so a count does not change PCR 5. The
 * counter ("+LEFT-DONE" before ".conf") is ASCII: as many UTF-16 units as
 * UTF-8 bytes, right before the last five units. */
static void entry_measured_path(mshim_entry *e, size_t id_len) {
        mb_plan_counter c;
        UINTN n = StrLen(e->path), cut;

        mb_plan_counter_parse((mb_str) { e->id, id_len }, &c);
        cut = c.counted ? id_len - 5 - c.stem : 0;
        CopyMem(e->mpath, e->path, (n - 5 - cut) * sizeof(CHAR16));
        CopyMem(e->mpath + n - 5 - cut, e->path + n - 5, 6 * sizeof(CHAR16));
}

/* Fill id (UTF-8), path and the measured path from the directory entry's
 * name. */
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
        if (b.truncated)
                return EFI_BAD_BUFFER_SIZE;
        entry_measured_path(e, b.len);
        return EFI_SUCCESS;
}

/* Read one entry file. NULL (after a message) only when it has no usable
 * name or memory ran out; a file that cannot be read comes back without
 * bytes (plan.buf NULL), for the plan to measure as unreadable. */
static mshim_entry *entry_load(EFI_FILE_HANDLE root, const CHAR16 *name) {
        mshim_entry *e = AllocateZeroPool(sizeof(*e));
        void *buf = NULL;
        UINTN size = 0;
        EFI_STATUS st;

        if (!e) {
                mshim_log(EFI_OUT_OF_RESOURCES, L"out of memory for entry %s", name);
                return NULL;
        }
        if (EFI_ERROR(entry_names(e, name))) {
                mshim_log(EFI_BAD_BUFFER_SIZE, L"skipping entry %s: name too long", name);
                FreePool(e);
                return NULL;
        }
        e->plan.id = (mb_str) { e->id, mb_strnlen(e->id, sizeof(e->id)) };
        st = mshim_file_load(root, e->path, MSHIM_CONF_MAX, &buf, &size);
        if (EFI_ERROR(st)) {
                mshim_log(st, L"skipping entry %s: cannot read it (%r)", name, st);
                return e;
        }
        e->plan.buf = buf;
        e->plan.size = size;
        return e;
}

static void entry_free(mshim_entry *e) {
        if (e->plan.buf)
                FreePool((void *) e->plan.buf);
        FreePool(e);
}

/* Why the plan found an entry unusable (an unreadable one was reported
 * when it was read). */
static void entry_say_why(const mshim_entry *e) {
        const CHAR16 *name = mshim_entry_name(e);
        mb_err r = e->plan.err;

        if (e->plan.bad_tag != MB_TAG_BLS_ENTRY_BAD)
                return;
        if (r == MB_ERR_UNSUPPORTED)
                mshim_log(mb_efi_status(r), L"skipping entry %s: its options (line %ld) hold initrd=, "
                          L"a file the kernel would load unmeasured; name initrds with initrd lines",
                          name, (UINT64) e->plan.bls.err_line);
        /* err_line 0: the file as a whole is wrong (e.g. it names neither
         * linux nor efi), not one line of it. */
        else if (e->plan.bls.err_line)
                mshim_log(mb_efi_status(r), L"skipping entry %s: %a at line %ld",
                          name, mb_strerror(r), (UINT64) e->plan.bls.err_line);
        else
                mshim_log(mb_efi_status(r), L"skipping entry %s: %a (the file as a whole, e.g. neither linux nor efi)",
                          name, mb_strerror(r));
}

/* The PCR records every entry file mshim saw and could not use, so a
 * broken entry is never the same PCR 5 as no entry. */
EFI_STATUS mshim_entry_measure_unusable(mshim_tpm *tpm, const mb_plan_step *s, const mshim_entry *e) {
        entry_say_why(e);
        return mshim_tpm_measure_file(tpm, s->tag, e->mpath, e->plan.buf,
                                      s->tag == MB_TAG_FILE_UNREADABLE ? 0 : e->plan.size);
}

void mshim_entry_count_try(EFI_FILE_HANDLE root, const mshim_entry *e) {
        EFI_FILE_HANDLE f = NULL;
        EFI_FILE_INFO *info = NULL;
        UINTN size = MSHIM_DIR_INFO_SIZE, n = 0;
        EFI_STATUS st;

        info = AllocatePool(MSHIM_DIR_INFO_SIZE);
        st = info ? root->Open(root, &f, (CHAR16 *) e->path, EFI_FILE_MODE_READ | EFI_FILE_MODE_WRITE, 0)
                  : EFI_OUT_OF_RESOURCES;
        if (!EFI_ERROR(st))
                st = f->GetInfo(f, &GenericFileInfo, &size, info);
        if (!EFI_ERROR(st) && (size < SIZE_OF_EFI_FILE_INFO || size > MSHIM_DIR_INFO_SIZE))
                st = EFI_BAD_BUFFER_SIZE;
        /* The new name replaces FileName (same directory); the record is
         * resized to it. */
        if (!EFI_ERROR(st)) {
                mb_err r = mb_utf8_to_utf16le(e->plan.next_name, mb_strnlen(e->plan.next_name, sizeof(e->plan.next_name)),
                                       (uint8_t *) info->FileName, MSHIM_DIR_INFO_SIZE - SIZE_OF_EFI_FILE_INFO, &n);
                st = r == MB_OK ? EFI_SUCCESS : mb_efi_status(r);
        }
        if (!EFI_ERROR(st)) {
                info->Size = SIZE_OF_EFI_FILE_INFO + n;
                st = f->SetInfo(f, &GenericFileInfo, info->Size, info);
        }
        if (!EFI_ERROR(st))
                st = f->Flush(f);
        /* As systemd-boot: a volume that cannot be written (or a name
         * taken) still boots the entry; it only is not counted. */
        if (EFI_ERROR(st))
                mshim_log(st, L"warning: cannot rename entry %s for its boot counter (%r); booting it uncounted",
                          mshim_entry_name(e), st);
        if (f)
                f->Close(f);
        if (info)
                FreePool(info);
}

EFI_STATUS mshim_entries_load(EFI_FILE_HANDLE root, mshim_entry ***ret_entries, UINTN *ret_n) {
        EFI_FILE_HANDLE dir = NULL;
        EFI_FILE_INFO *info = NULL;
        mshim_entry **v = NULL;
        UINTN n = 0;
        EFI_STATUS st;

        v = AllocateZeroPool(MB_PLAN_MAX_ENTRIES * sizeof(*v));
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
                if (n == MB_PLAN_MAX_ENTRIES) {
                        mshim_log(EFI_SUCCESS, L"more than %d entries; ignoring %s and the rest",
                                  MB_PLAN_MAX_ENTRIES, info->FileName);
                        break;
                }
                v[n] = entry_load(root, info->FileName);
                if (v[n])
                        n++;
        }
        /* A listing error after some entries were read still leaves those
         * bootable: it has been reported, go on with what we have. */
done:
        st = EFI_SUCCESS;
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
