/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * mshim: a measured-boot loader for Boot Loader Specification Type #1
 * entries. Reads its configuration from the volume it was loaded from,
 * measures it (docs/MEASUREMENTS.md) and boots the default entry, falling
 * back to the next ones in sort order. Never waits for a key.
 */
#include "mshim.h"
#include "mb/tcglog.h"

/* What became of loader.conf: it decides which PCR 5 event records it. */
typedef enum conf_state { CONF_ABSENT, CONF_UNREADABLE, CONF_READ } conf_state;

/* Defaults when loader.conf is absent: no default pattern, no timeout, TPM
 * not required. When it is present but cannot be read or parsed, we cannot
 * know whether it asked for a TPM, so it is assumed to have asked: fail
 * closed on the one setting that guards measurements. Nor whether it asked
 * for a TOTP code: "totp show", so the user sees a code or the warning
 * rather than a silent boot (not "require": a typo must not brick the
 * machine; src/predict.c's next_fence follows this). */
static void loader_conf_defaults(mb_loader_conf *conf, bool present) {
        mb_memset(conf, 0, sizeof(*conf));
        conf->timeout = MB_TIMEOUT_UNSET;
        conf->tpm_required = present ? MB_YES : MB_UNSET;
        conf->totp = present ? MB_TOTP_SHOW : MB_TOTP_NO;
        conf->totp_timeout = MB_TOTP_TIMEOUT_DEFAULT;
}

/* Read and parse loader.conf; *ret_buf stays NULL unless CONF_READ. Never
 * fails: problems are reported and defaults apply. */
static conf_state load_loader_conf(EFI_FILE_HANDLE root, void **ret_buf, UINTN *ret_size,
                                   mb_loader_conf *ret_conf) {
        void *buf = NULL;
        UINTN size = 0;
        EFI_STATUS st;
        mb_err r;

        st = mshim_file_load(root, MSHIM_LOADER_CONF_PATH, MSHIM_CONF_MAX, &buf, &size);
        if (st == EFI_NOT_FOUND) {
                loader_conf_defaults(ret_conf, false);
                return CONF_ABSENT;
        }
        if (EFI_ERROR(st)) {
                mshim_log(st, L"warning: cannot read %s; using defaults with tpm-required yes and totp show",
                          MSHIM_LOADER_CONF_PATH);
                loader_conf_defaults(ret_conf, true);
                return CONF_UNREADABLE;
        }
        r = mb_loader_conf_parse(buf, size, ret_conf);
        if (r != MB_OK) {
                /* Still measured by the caller: the PCR records these bytes
                 * whether or not we understood them. */
                mshim_log(mb_efi_status(r), L"warning: %s: %a at line %ld; using defaults with tpm-required yes and totp show",
                          MSHIM_LOADER_CONF_PATH, mb_strerror(r), (UINT64) ret_conf->err_line);
                loader_conf_defaults(ret_conf, true);
        }
        *ret_buf = buf;
        *ret_size = size;
        return CONF_READ;
}

/* PCR 5's first mshim event, whatever became of loader.conf: its bytes,
 * or that it is absent, or that it could not be read. A missing file is
 * thus never the same PCR 5 as any file, and the tag and path in the
 * digest keep loader.conf apart from an entry with the same bytes. */
static EFI_STATUS measure_loader_conf(mshim_tpm *t, conf_state state, const void *buf, UINTN size) {
        static const uint32_t tags[] = {
                [CONF_ABSENT] = MB_TAG_FILE_ABSENT,
                [CONF_UNREADABLE] = MB_TAG_FILE_UNREADABLE,
                [CONF_READ] = MB_TAG_LOADER_CONF,
        };

        return mshim_tpm_measure_file(t, tags[state], MSHIM_LOADER_CONF_PATH, buf, state == CONF_READ ? size : 0);
}

/* The entry loader.conf's "default" glob selects, else the first. */
static UINTN default_entry(const mb_loader_conf *conf, mshim_entry **v, UINTN n) {
        if (conf->default_glob.len == 0)
                return 0;
        for (UINTN i = 0; i < n; i++)
                if (mb_bls_is_default(conf->default_glob, &v[i]->bls))
                        return i;
        return 0;
}

/* Try the default entry, then the others in sort order starting after it
 * (wrapping around). Returns only if none booted. */
static EFI_STATUS boot_entries(mshim_ctx *c, const mb_loader_conf *conf, mshim_entry **v, UINTN n) {
        UINTN first = default_entry(conf, v, n);

        /* As shim: with nothing to boot, start the next loader. */
        if (n == 0)
                return mshim_chainload(c, conf);
        for (UINTN k = 0; k < n; k++) {
                const mshim_entry *e = v[(first + k) % n];

                /* Any failure has been reported where it happened; the
                 * only one that ends the loop is a TPM we must not do
                 * without. */
                mshim_boot_entry(c, e);
                if (mshim_tpm_refuses(&c->tpm))
                        return EFI_SECURITY_VIOLATION;  /* already said why */
                if (k + 1 < n)
                        mshim_log(EFI_SUCCESS, L"entry %s failed; trying the next one", mshim_entry_name(e));
        }
        return mshim_log(EFI_NOT_FOUND, L"no entry could be booted; returning to the firmware");
}

/* The volume this image was loaded from, as a root directory. */
static EFI_STATUS open_boot_volume(EFI_HANDLE image, EFI_LOADED_IMAGE **ret_li, EFI_HANDLE *ret_device,
                                   EFI_FILE_HANDLE *ret_root) {
        EFI_LOADED_IMAGE *li = NULL;
        EFI_FILE_HANDLE root;
        EFI_STATUS st;

        st = BS->HandleProtocol(image, &LoadedImageProtocol, (void **) &li);
        if (EFI_ERROR(st) || !li)
                return mshim_log(EFI_ERROR(st) ? st : EFI_NOT_FOUND, L"no LoadedImage protocol: %r", st);
        root = LibOpenRoot(li->DeviceHandle);
        if (!root)
                return mshim_log(EFI_NOT_FOUND, L"cannot open the volume mshim was loaded from");
        *ret_li = li;
        *ret_device = li->DeviceHandle;
        *ret_root = root;
        return EFI_SUCCESS;
}

EFI_STATUS efi_main(EFI_HANDLE image, EFI_SYSTEM_TABLE *systab) {
        mshim_ctx c = { .image = image };
        mb_boot_policy policy;
        mb_loader_conf conf;
        mshim_entry **entries = NULL;
        UINTN n = 0, conf_size = 0;
        void *conf_buf = NULL;
        bool tpm_ready = false;
        conf_state conf_st;
        EFI_STATUS st;

        InitializeLib(image, systab);
        mshim_log(EFI_SUCCESS, L"version " MB_VERSION L", measured boot loader");

        st = mshim_boot_policy(&policy);
        if (EFI_ERROR(st))
                goto out;
        st = open_boot_volume(image, &c.loaded, &c.device, &c.root);
        if (EFI_ERROR(st))
                goto out;
        /* Before anything can be booted: the initramfs reads it. */
        mshim_bli_set_partuuid(c.device);
        conf_st = load_loader_conf(c.root, &conf_buf, &conf_size, &conf);
        /* The built-in policy's TOTP floor: loader.conf can only raise it
         * (a "totp no" there must not switch off a signed "totp require"). */
        conf.totp = mb_boot_totp_mode(&policy, conf.totp);
        c.conf = &conf;
        /* Known only now: whether a missing TPM may be tolerated. The
         * built-in policy sets the floor; loader.conf can only raise it. */
        st = mshim_tpm_init(&c.tpm, policy.tpm_required || conf.tpm_required == MB_YES, policy.tpm_failure_boot);
        if (EFI_ERROR(st))
                goto out;
        tpm_ready = true;
        st = measure_loader_conf(&c.tpm, conf_st, conf_buf, conf_size);
        if (EFI_ERROR(st))
                goto out;
        /* "timeout" is accepted but there is no menu yet: nothing to wait for. */

        st = mshim_entries_load(c.root, &c.tpm, &entries, &n);
        if (EFI_ERROR(st))
                goto out;
        st = boot_entries(&c, &conf, entries, n);
out:
        /* Every way back to the firmware leaves a mark in PCRs 5 and 12. */
        if (tpm_ready)
                mshim_tpm_measure_exit(&c.tpm);
        mshim_entries_free(entries, n);
        if (conf_buf)
                FreePool(conf_buf);
        if (c.root)
                c.root->Close(c.root);
        return st;
}
