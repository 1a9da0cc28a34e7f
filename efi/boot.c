/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Booting one entry: measure its file, load its image with the firmware's
 * LoadImage (which measures the image into PCR 4 itself), hand over the
 * command line and the initrd, measure the command line, start it.
 */
#include "mshim.h"
#include "mb/tcglog.h"

/* The entry's options, joined, or the menu's edited line in their place
 * (edited non-NULL), converted to the UTF-16LE string that becomes
 * LoadOptions, NUL included. Empty options give L"" (2 bytes). */
static EFI_STATUS entry_options(const mshim_entry *e, const mb_str *edited, void **ret_buf, UINTN *ret_size) {
        size_t need = 1, len = 0, bytes = 0;
        char *utf8 = NULL;
        void *utf16 = NULL;
        EFI_STATUS st;
        mb_err r;

        /* Each line plus one separator (or the NUL): bounded by the entry
         * file's size, which is capped, so this sum cannot overflow; an
         * edited line is at most MB_PLAN_CMDLINE_MAX (mb_plan_choose). */
        if (edited)
                need += edited->len;
        else
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
        if (edited) {
                if (edited->len)
                        mb_memcpy(utf8, edited->p, edited->len);
                utf8[edited->len] = 0;
                len = edited->len;
                r = MB_OK;
        } else {
                r = mb_bls_options_join(&e->plan.bls, utf8, need, &len);
        }
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

/* The entry's linux (or efi) file's path on the volume. */
static EFI_STATUS entry_image_path(const mshim_entry *e, CHAR16 path[MSHIM_PATH_UNITS]) {
        mb_str src = e->plan.bls.linux.len ? e->plan.bls.linux : e->plan.bls.efi;
        EFI_STATUS st = mshim_path_from_bls(src, path, MSHIM_PATH_UNITS);

        if (EFI_ERROR(st))
                return mshim_log(st, L"entry %s: bad image path (%r)", mshim_entry_name(e), st);
        return EFI_SUCCESS;
}

/* Read and check the entry's image. SBAT: an EFI program needs a .sbat
 * section once a policy is set, as shim requires of what it loads itself;
 * a Linux kernel does not (Debian's and most distributions' have none;
 * shim's chain verifies them through SHIM_LOCK, where none is needed
 * either). */
static EFI_STATUS entry_read_image(mshim_ctx *c, const mshim_entry *e, const CHAR16 *path, mshim_image *ret) {
        EFI_STATUS st = mshim_image_read(c, path, e->plan.bls.linux.len == 0, ret);

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

/* What the steps of one try hold between them: the plan's steps, the
 * image read and loaded, its options and initrd. */
typedef struct entry_try {
        const mb_plan_step *steps;
        UINTN n_steps;
        mshim_image image;
        mshim_initrd *initrd;
        EFI_HANDLE child;
        void *opts;
        UINTN opts_size;
} entry_try;

/* Whether a step needs the initrd's bytes in mshim's hands: the TOTP
 * code's PCR 12 event, or the PCR 9 event when the image's stub does not
 * make it. Otherwise LoadFile2 reads the files when the stub asks
 * (efi/initrd.c says why). */
static bool entry_needs_initrd_bytes(const entry_try *t) {
        for (UINTN k = 0; k < t->n_steps; k++)
                if (t->steps[k].src == MB_PLAN_SRC_TOTP_INITRD ||
                    (t->steps[k].src == MB_PLAN_SRC_INITRD && !t->image.stub_measures_initrd))
                        return true;
        return false;
}

/* Everything before the command line's measurement: its options, the
 * image read and checked, the initrd published (read now when a step
 * needs its bytes, which depends on the image's stub), the image loaded
 * (the firmware's PCR 4 event). Everything that can fail without starting
 * the image should fail before that event exists; an initrd read when the
 * stub asks can fail only after it, and the stub then boots nothing. */
static EFI_STATUS entry_prepare(mshim_ctx *c, const mshim_entry *e, const mb_str *edited, entry_try *t) {
        CHAR16 path[MSHIM_PATH_UNITS];
        EFI_STATUS st;

        st = entry_options(e, edited, &t->opts, &t->opts_size);
        MSHIM_BENCH_MARK(L"options");
        if (!EFI_ERROR(st))
                st = entry_image_path(e, path);
        if (!EFI_ERROR(st))
                st = entry_read_image(c, e, path, &t->image);
        if (!EFI_ERROR(st))
                st = mshim_initrd_install(c->root, &e->plan.bls, mshim_entry_name(e), entry_needs_initrd_bytes(t),
                                          &t->initrd);
        MSHIM_BENCH_MARK(L"initrd published (read when pinned)");
        if (!EFI_ERROR(st))
                st = mshim_image_load(c, path, &t->image, &t->child);
        if (!EFI_ERROR(st))
                st = set_load_options(t->child, e, t->opts, t->opts_size);
        return st;
}

/* One step of the plan's try of e (include/mb/plan.h). */
static EFI_STATUS entry_step(mshim_ctx *c, const mshim_entry *e, const mb_plan_step *s, entry_try *t) {
        EFI_STATUS st;

        switch (s->src) {
        case MB_PLAN_SRC_ENTRY:
                /* Before anything it names is read: what the PCR says was
                 * considered, even if it then fails. */
                return mshim_tpm_measure_file(&c->tpm, s->tag, e->mpath, e->plan.buf, e->plan.size);
        case MB_PLAN_SRC_COUNTER:
                mshim_entry_count_try(c->root, e);
                return EFI_SUCCESS;
        case MB_PLAN_SRC_CMDLINE:
        case MB_PLAN_SRC_CMDLINE_EDITED:
                /* The edited line is measured and booted exactly as the
                 * entry's own would be: PCR 12 tells them apart. */
                st = entry_prepare(c, e, s->src == MB_PLAN_SRC_CMDLINE_EDITED ? &c->plan->edited : NULL, t);
                /* Nothing is read or changed after it but the TOTP point. */
                return EFI_ERROR(st) ? st : mshim_tpm_measure_cmdline(&c->tpm, t->opts, t->opts_size);
        case MB_PLAN_SRC_INITRD:
                /* The initrd reaches PCR 9 exactly once: from the Linux stub
                 * when it measures (5.17+), else from us, with the stub's own
                 * event so a prediction need not care which. */
                return t->image.stub_measures_initrd ? EFI_SUCCESS : mshim_initrd_measure(&c->tpm, t->initrd);
        case MB_PLAN_SRC_TOTP_INITRD:
                /* The stub measures the initrd into PCR 9 only after
                 * StartImage, and PCR 9 is in no TOTP policy: the very
                 * buffer it will be served from goes into PCR 12 first
                 * (docs/MEASUREMENTS.md). */
                return mshim_initrd_measure_totp(&c->tpm, t->initrd);
        case MB_PLAN_SRC_TOTP_FENCE:
                /* Everything the code vouches for (PCRs 4, 5, 7, 12) is
                 * final, and nothing of the entry has run yet. An EFI
                 * program would load more after the code: no code for it. */
                return mshim_totp_run(c, e->plan.bls.efi.len ? mshim_entry_name(e) : NULL);
        case MB_PLAN_SRC_TOTP_LOCK:
                return mshim_tpm_lock_totp(&c->tpm);
        default:
                return mshim_log(EFI_INVALID_PARAMETER, L"entry %s: the plan has a step mshim does not know",
                                 mshim_entry_name(e));
        }
}

#ifdef MB_BENCH
/* The benchmark build's name for the phase a step ends (docs/BENCHMARK.md). */
static const CHAR16 *bench_phase(const mb_plan_step *s) {
        switch (s->src) {
        case MB_PLAN_SRC_ENTRY: return L"entry measured (PCR 5)";
        case MB_PLAN_SRC_COUNTER: return L"boot counter";
        case MB_PLAN_SRC_CMDLINE:
        case MB_PLAN_SRC_CMDLINE_EDITED: return L"command line measured (PCR 12)";
        case MB_PLAN_SRC_INITRD: return L"initrd measured (PCR 9, when the stub does not)";
        case MB_PLAN_SRC_TOTP_INITRD: return L"initrd hashed for TOTP (PCR 12)";
        case MB_PLAN_SRC_TOTP_FENCE: return L"TOTP code and fence";
        default: return L"plan step";
        }
}
#endif

EFI_STATUS mshim_boot_entry(mshim_ctx *c, const mshim_entry *e, const mb_plan_step *steps, UINTN n) {
        entry_try t = { .steps = steps, .n_steps = n };
        EFI_STATUS st = EFI_SUCCESS;

        print_title(e);
        for (UINTN k = 0; k < n && !EFI_ERROR(st); k++) {
                st = entry_step(c, e, &steps[k], &t);
                MSHIM_BENCH_MARK(bench_phase(&steps[k]));
        }
        if (EFI_ERROR(st))
                goto out;
        if (!t.child) {
                st = mshim_log(EFI_INVALID_PARAMETER, L"entry %s: the plan loads no image", mshim_entry_name(e));
                goto out;
        }
        /* SHIM_LOCK only for EFI programs: a Linux kernel never asks for
         * it, and offering it would only widen what could call Verify. */
        st = mshim_image_start(c, t.child, mshim_entry_name(e), e->plan.bls.efi.len > 0, t.opts);
        t.child = NULL;   /* mshim_image_start took it, and opts */
        t.opts = NULL;
out:
        mshim_initrd_uninstall(t.initrd);
        /* Only now: mshim_image says why. */
        mshim_image_release(&t.image);
        if (t.child)
                BS->UnloadImage(t.child);
        if (t.opts)
                FreePool(t.opts);
        return st;
}
