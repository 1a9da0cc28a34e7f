/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Booting one entry: measure its file, load its image with the firmware's
 * LoadImage (which measures the image into PCR 4 itself), hand over the
 * command line and the initrd, measure the command line, start it.
 */
#include "mshim.h"
#include "mb/tcglog.h"

/* The entry's options, joined and converted to the UTF-16LE string that
 * becomes LoadOptions, NUL included. Empty options give L"" (2 bytes). */
static EFI_STATUS entry_options(const mshim_entry *e, void **ret_buf, UINTN *ret_size) {
        size_t need = 1, len = 0, bytes = 0;
        char *utf8 = NULL;
        void *utf16 = NULL;
        EFI_STATUS st;
        mb_err r;

        /* Each line plus one separator (or the NUL): bounded by the entry
         * file's size, which is capped, so this sum cannot overflow. */
        for (size_t i = 0; i < e->plan.bls.n_options; i++)
                need += e->plan.bls.options[i].len + 1;
        utf8 = AllocatePool(need);
        /* One UTF-16 unit per UTF-8 byte at most (4-byte sequences give a
         * surrogate pair: still 4 bytes), plus the NUL. */
        utf16 = AllocatePool(need * sizeof(CHAR16));
        if (!utf8 || !utf16) {
                st = mshim_log(EFI_OUT_OF_RESOURCES, L"entry %s: out of memory", mshim_entry_name(e));
                goto out;
        }
        r = mb_bls_options_join(&e->plan.bls, utf8, need, &len);
        /* Refused, not cut: a truncated line would boot with options the
         * entry does not say, and be measured as such. */
        if (r == MB_OK && len > MSHIM_CMDLINE_MAX) {
                st = mshim_log(EFI_BAD_BUFFER_SIZE, L"entry %s: options are %ld bytes, more than the %d mshim measures; refusing the entry",
                               mshim_entry_name(e), (UINT64) len, MSHIM_CMDLINE_MAX);
                goto out;
        }
        if (r == MB_OK)
                r = mb_utf8_to_utf16le(utf8, len, utf16, need * sizeof(CHAR16), &bytes);
        if (r != MB_OK) {
                st = mshim_log(mb_efi_status(r), L"entry %s: bad options: %a",
                               mshim_entry_name(e), mb_strerror(r));
                goto out;
        }
        *ret_buf = utf16;
        *ret_size = bytes;
        utf16 = NULL;
        st = EFI_SUCCESS;
out:
        if (utf8)
                FreePool(utf8);
        if (utf16)
                FreePool(utf16);
        return st;
}

/* Load the entry's linux (or efi) file with the firmware's LoadImage. */
static EFI_STATUS entry_load_image(mshim_ctx *c, const mshim_entry *e, EFI_HANDLE *ret_child,
                                   bool *ret_stub_measures_initrd) {
        mb_str src = e->plan.bls.linux.len ? e->plan.bls.linux : e->plan.bls.efi;
        CHAR16 path[MSHIM_PATH_UNITS];
        EFI_STATUS st;

        st = mshim_path_from_bls(src, path, MB_ARRAY_SIZE(path));
        if (EFI_ERROR(st))
                return mshim_log(st, L"entry %s: bad image path (%r)", mshim_entry_name(e), st);
        /* SBAT: an EFI program needs a .sbat section once a policy is set,
         * as shim requires of what it loads itself; a Linux kernel does
         * not (Debian's and most distributions' have none; shim's chain
         * verifies them through SHIM_LOCK, where none is needed either). */
        st = mshim_image_load(c, path, e->plan.bls.linux.len == 0, ret_child, ret_stub_measures_initrd);
        if (st == EFI_NOT_FOUND)
                mshim_log(st, L"entry %s: %s not found", mshim_entry_name(e), path);
        return st;
}

/* LoadOptions point at the very buffer that is measured, and nothing else
 * is added (no "initrd=": the initrd comes through LoadFile2). */
static EFI_STATUS set_load_options(EFI_HANDLE child, const mshim_entry *e, void *opts, UINTN size) {
        EFI_LOADED_IMAGE *li = NULL;
        EFI_STATUS st;

        st = BS->HandleProtocol(child, &LoadedImageProtocol, (void **) &li);
        if (EFI_ERROR(st) || !li)
                return mshim_log(EFI_ERROR(st) ? st : EFI_NOT_FOUND,
                                 L"entry %s: loaded image has no LoadedImage protocol", mshim_entry_name(e));
        if (size > UINT32_MAX)
                return mshim_log(EFI_BAD_BUFFER_SIZE, L"entry %s: options too long", mshim_entry_name(e));
        li->LoadOptions = opts;
        li->LoadOptionsSize = (UINT32) size;
        return EFI_SUCCESS;
}

static void print_title(const mshim_entry *e) {
        mshim_text t;

        if (e->plan.bls.title.len)
                mshim_log(EFI_SUCCESS, L"booting \"%s\" (%s)", mshim_text_of(e->plan.bls.title, &t), mshim_entry_name(e));
        else
                mshim_log(EFI_SUCCESS, L"booting %s", mshim_entry_name(e));
}

EFI_STATUS mshim_boot_entry(mshim_ctx *c, const mshim_entry *e) {
        mshim_initrd *initrd = NULL;
        EFI_HANDLE child = NULL;
        void *opts = NULL;
        UINTN opts_size = 0;
        bool stub_measures_initrd = false;
        EFI_STATUS st;

        print_title(e);
        /* The entry about to be tried, measured before anything it names is
         * read: what the PCR says was considered, even if it then fails. */
        st = mshim_tpm_measure_file(&c->tpm, MB_TAG_BLS_ENTRY, e->path, e->plan.buf, e->plan.size);
        if (EFI_ERROR(st))
                return st;
        MSHIM_BENCH_MARK(L"entry measured (PCR 5)");

        st = entry_options(e, &opts, &opts_size);
        if (EFI_ERROR(st))
                return st;
        MSHIM_BENCH_MARK(L"options");
        /* The initrd before the image: LoadImage adds the image's PCR 4
         * event, so everything that can fail without starting it should
         * fail before that event exists. */
        st = mshim_initrd_install(c->root, &e->plan.bls, mshim_entry_name(e), &initrd);
        if (EFI_ERROR(st))
                goto out;
        MSHIM_BENCH_MARK(L"initrd read");
        st = entry_load_image(c, e, &child, &stub_measures_initrd);
        if (EFI_ERROR(st))
                goto out;
        st = set_load_options(child, e, opts, opts_size);
        if (EFI_ERROR(st))
                goto out;
        /* Last thing before the jump: nothing is read or changed after it. */
        st = mshim_tpm_measure_cmdline(&c->tpm, opts, opts_size);
        if (EFI_ERROR(st))
                goto out;
        MSHIM_BENCH_MARK(L"command line measured (PCR 12)");
        /* The initrd reaches PCR 9 exactly once: from the Linux stub when
         * it measures (5.17+), else from us, with the stub's own event so
         * a prediction need not care which. */
        if (!stub_measures_initrd) {
                st = mshim_initrd_measure(&c->tpm, initrd);
                if (EFI_ERROR(st))
                        goto out;
        }
        MSHIM_BENCH_MARK(L"initrd measured (PCR 9, when the stub does not)");
        /* The initrd the code vouches for: the Linux stub measures it into
         * PCR 9 only after StartImage (5.17+), after the code, and PCR 9 is
         * in no TOTP policy; so with TOTP on, the very buffer it will be
         * served from goes into PCR 12 first (docs/MEASUREMENTS.md). */
        if (mshim_totp_on(c) && e->plan.bls.linux.len) {
                st = mshim_initrd_measure_totp(&c->tpm, initrd);
                if (EFI_ERROR(st))
                        goto out;
        }
        MSHIM_BENCH_MARK(L"initrd hashed for TOTP (PCR 12)");
        /* The TOTP point: everything the code vouches for (PCRs 4, 5, 7,
         * 12) is final, and nothing of the entry has run yet. An EFI
         * program would load more after the code: no code for it. */
        st = mshim_totp_run(c, e->plan.bls.efi.len ? mshim_entry_name(e) : NULL);
        if (EFI_ERROR(st))
                goto out;
        MSHIM_BENCH_MARK(L"TOTP code and fence");

        /* SHIM_LOCK only for EFI programs: a Linux kernel never asks for
         * it, and offering it would only widen what could call Verify. */
        st = mshim_image_start(c, child, mshim_entry_name(e), e->plan.bls.efi.len > 0, opts);
        child = NULL;   /* mshim_image_start took it, and opts */
        opts = NULL;
out:
        mshim_initrd_uninstall(initrd);
        if (child)
                BS->UnloadImage(child);
        if (opts)
                FreePool(opts);
        return st;
}
