/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Loading and starting the next program with the firmware's LoadImage and
 * StartImage: the firmware verifies it against db/dbx when Secure Boot is
 * on and measures it into PCR 4 (docs/MEASUREMENTS.md), so mshim does
 * neither itself. This file turns LoadImage's refusals into messages that
 * say which file failed and why.
 */
#include "mshim.h"

/* Why LoadImage refused an image, in words a user can act on. The meanings
 * are the UEFI spec's (2.10, 7.4.1 LoadImage) and EDK2's
 * DxeImageVerificationLib, which is what OVMF and most firmware run. */
static const CHAR16 *load_refusal_reason(EFI_STATUS st) {
        switch (st) {
        /* EDK2 answers an image that fails db/dbx with Access Denied
         * under its "deny" policy (OVMF's default for disks) and Security
         * Violation under "defer"; the cause is the same. */
        case EFI_SECURITY_VIOLATION:
        case EFI_ACCESS_DENIED:
                /* Behind shim the trusted keys also include its MokList
                 * and vendor certificate; the wording covers both. */
                return L"not signed by a trusted key (db, or shim's MokList/vendor key), or revoked (dbx)";
        case EFI_LOAD_ERROR:
        case EFI_UNSUPPORTED:
        case EFI_INVALID_PARAMETER:
                return L"not a PE/COFF image this firmware can start (wrong file, corrupt, or another architecture)";
        case EFI_OUT_OF_RESOURCES:
                return L"not enough memory to load it";
        default:
                return L"the firmware could not load it";
        }
}

EFI_STATUS mshim_image_read(mshim_ctx *c, const CHAR16 *path, bool sbat_required, mshim_image *ret) {
        void *buf = NULL;
        UINTN size = 0;
        EFI_STATUS st;

        st = mshim_file_load_pages(c->root, path, MSHIM_IMAGE_MAX, &buf, &size);
        /* A missing file is the caller's to report: it knows what was
         * expected there. Other failures mshim_file_load_pages has reported. */
        if (EFI_ERROR(st))
                return st;
        MSHIM_BENCH_MARK(L"image read");
        /* Before LoadImage: a revoked image gets no PCR 4 event. */
        st = mshim_sbat_check(buf, size, path, sbat_required);
        if (EFI_ERROR(st)) {
                mshim_pages_free(buf, size + 1);
                return st;
        }
        MSHIM_BENCH_MARK(L"stub and SBAT checks");
        ret->buf = buf;
        ret->size = size;
        /* From the bytes LoadImage gets, so the answer is about the very
         * image that runs. */
        ret->stub_measures_initrd = mb_linux_stub_measures_initrd(buf, size);
        return EFI_SUCCESS;
}

EFI_STATUS mshim_image_load(mshim_ctx *c, const CHAR16 *path, const mshim_image *img, EFI_HANDLE *ret_child) {
        EFI_DEVICE_PATH *dp = NULL;
        EFI_HANDLE child = NULL;
        EFI_STATUS st;

        /* The file's device path, so the firmware's PCR 4 event says where
         * the image came from. */
        dp = FileDevicePath(c->device, (CHAR16 *) path);
        if (!dp)
                return mshim_log(EFI_OUT_OF_RESOURCES, L"%s: out of memory", path);
        st = BS->LoadImage(FALSE, c->image, dp, img->buf, img->size, &child);
        FreePool(dp);
        if (EFI_ERROR(st)) {
                /* UEFI 2.10, 7.4.1: on EFI_SECURITY_VIOLATION the image
                 * was loaded all the same and a handle returned, which the
                 * caller must unload; other errors return no handle. */
                if (st == EFI_SECURITY_VIOLATION && child)
                        BS->UnloadImage(child);
                if (st == EFI_SECURITY_VIOLATION || st == EFI_ACCESS_DENIED)
                        return mshim_log(st, L"%s: refused by Secure Boot (%r): %s", path, st, load_refusal_reason(st));
                return mshim_log(st, L"%s: %s (%r)", path, load_refusal_reason(st), st);
        }
        MSHIM_BENCH_MARK(L"LoadImage (firmware: PE load, PCR 4)");
        *ret_child = child;
        return EFI_SUCCESS;
}

void mshim_image_release(mshim_image *img) {
        if (img->buf)
                mshim_pages_free(img->buf, img->size + 1);
        img->buf = NULL;
        img->size = 0;
}

EFI_STATUS mshim_image_start(mshim_ctx *c, EFI_HANDLE child, const CHAR16 *label, bool shim_lock, void *options) {
        EFI_STATUS st;

        /* Nothing mshim starts may find PCR 13 at zero (the signed TOTP
         * key's lock): the plan's lock step made it; a path that skipped
         * it starts nothing (fail closed). */
        if (!c->tpm.totp_locked) {
                BS->UnloadImage(child);
                if (options)
                        FreePool(options);
                return mshim_log(EFI_SECURITY_VIOLATION, L"%s: PCR 13 holds no TOTP lock; refusing to start it", label);
        }
        MSHIM_BENCH_MARK(L"PCR 13 lock");
        MSHIM_BENCH_REPORT();
        /* Loaders built to run behind shim (GRUB, ...) verify what they
         * load through SHIM_LOCK (docs/SHIM_LOCK.md). */
        if (shim_lock)
                mshim_shim_lock_install(c);
        st = BS->StartImage(child, NULL, NULL);
        if (shim_lock)
                mshim_shim_lock_uninstall(c);
        /* Once StartImage was called the handle is no longer mshim's, for
         * every status (UEFI 2.10, 7.4.2, as EDK2's CoreStartImage does it):
         * an image that ran is unloaded by the firmware when it returns or
         * calls Exit(), unless it is a driver that returned EFI_SUCCESS and
         * stays resident. The only image StartImage refuses and leaves
         * loaded is one LoadImage answered with EFI_SECURITY_VIOLATION, and
         * mshim_image_load unloads those instead of starting them: an
         * EFI_SECURITY_VIOLATION here is the image's own exit status (GRUB
         * or a stub refusing what it was asked to boot), and unloading it
         * again would hit a freed handle. */
        /* A resident driver may go on reading its LoadOptions; only an
         * image that failed is surely gone (a few bytes lost otherwise). */
        if (options && EFI_ERROR(st))
                FreePool(options);
        return mshim_log(EFI_ERROR(st) ? st : EFI_LOAD_ERROR, L"%s: StartImage returned: %r", label, st);
}
