/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * No boot entries: behave like shim and start the next stage from mshim's
 * own directory (grubx64.efi unless loader.conf says "chainload PATH"),
 * with mshim's own LoadOptions passed on unchanged.
 */
#include "mshim.h"

#define CHAIN_DEFAULT_NAME L"grubx64.efi"
/* A device path from firmware has an end node; this caps the walk should
 * it not. Real file paths have one node, or one per directory. */
#define CHAIN_MAX_NODES 64

/* Append one file path node's text to dst (units used in *n, NUL kept).
 * The node's length comes from firmware and is checked, not trusted. */
static EFI_STATUS append_path_node(CHAR16 *dst, UINTN cap, UINTN *n, const EFI_DEVICE_PATH *node) {
        UINTN len = DevicePathNodeLength(node), units, i;
        const CHAR16 *name = ((const FILEPATH_DEVICE_PATH *) node)->PathName;

        if (len < sizeof(EFI_DEVICE_PATH))
                return EFI_INVALID_PARAMETER;
        units = (len - sizeof(EFI_DEVICE_PATH)) / sizeof(CHAR16);
        /* UEFI 2.10, 10.3.5.4: consecutive file path nodes are joined with
         * a separator when neither side has one. */
        if (units && name[0] != L'\\' && *n && dst[*n - 1] != L'\\') {
                if (*n + 1 >= cap)
                        return EFI_BUFFER_TOO_SMALL;
                dst[(*n)++] = L'\\';
        }
        for (i = 0; i < units && name[i]; i++) {
                if (*n + 1 >= cap)
                        return EFI_BUFFER_TOO_SMALL;
                dst[(*n)++] = name[i];
        }
        dst[*n] = 0;
        return EFI_SUCCESS;
}

/* The directory mshim was loaded from, e.g. "\EFI\BOOT\" (always ending
 * in '\'), from LoadedImage->FilePath (UEFI 2.10, 9.1). */
static EFI_STATUS own_directory(const EFI_LOADED_IMAGE *li, CHAR16 *dst, UINTN cap) {
        const EFI_DEVICE_PATH *node = li->FilePath;
        UINTN n = 0, k, cut = 0;
        EFI_STATUS st;

        dst[0] = 0;
        for (k = 0; node && k < CHAIN_MAX_NODES && !IsDevicePathEnd(node); k++) {
                if (DevicePathType(node) == MEDIA_DEVICE_PATH && DevicePathSubType(node) == MEDIA_FILEPATH_DP) {
                        st = append_path_node(dst, cap, &n, node);
                        if (EFI_ERROR(st))
                                return st;
                }
                if ((UINTN) DevicePathNodeLength(node) < sizeof(EFI_DEVICE_PATH))
                        return EFI_INVALID_PARAMETER;   /* would never advance */
                node = NextDevicePathNode(node);
        }
        for (k = 0; k < n; k++)
                if (dst[k] == L'\\')
                        cut = k + 1;
        /* No directory at all (e.g. a boot option naming just the file):
         * the root. */
        if (cut == 0) {
                dst[0] = L'\\';
                cut = 1;
        }
        dst[cut] = 0;
        return EFI_SUCCESS;
}

/* The next stage's path: "chainload" from loader.conf (absolute when it
 * starts with '/' or '\', else relative to mshim's directory), or
 * grubx64.efi next to mshim. */
static EFI_STATUS next_stage_path(const mshim_ctx *c, const mb_loader_conf *conf, CHAR16 *dst, UINTN cap) {
        CHAR16 name[MSHIM_PATH_UNITS];
        UINTN dir_len, name_len;
        EFI_STATUS st;

        if (conf->chainload.len && (conf->chainload.p[0] == '/' || conf->chainload.p[0] == '\\'))
                return mshim_path_from_bls(conf->chainload, dst, cap);
        if (conf->chainload.len) {
                st = mshim_path_from_bls(conf->chainload, name, MB_ARRAY_SIZE(name));
                if (EFI_ERROR(st))
                        return st;
        } else {
                CopyMem(name, L"\\" CHAIN_DEFAULT_NAME, sizeof(L"\\" CHAIN_DEFAULT_NAME));
        }
        st = own_directory(c->loaded, dst, cap);
        if (EFI_ERROR(st))
                return st;
        /* dst ends in '\' and name starts with one: join without doubling. */
        dir_len = StrLen(dst);
        name_len = StrLen(name);
        if (dir_len + name_len > cap)   /* (name_len - 1) units + NUL */
                return EFI_BUFFER_TOO_SMALL;
        CopyMem(dst + dir_len, name + 1, name_len * sizeof(CHAR16));
        return EFI_SUCCESS;
}

/* mshim's own LoadOptions belong to the boot manager, which frees them
 * once mshim returns; a next stage that stays resident (a driver that
 * returned EFI_SUCCESS) would be left pointing at freed memory. So it gets
 * a copy of its own (NULL when there are none). */
static EFI_STATUS copy_options(const EFI_LOADED_IMAGE *own, void **ret) {
        void *p;

        if (!own->LoadOptions || own->LoadOptionsSize == 0) {
                *ret = NULL;
                return EFI_SUCCESS;
        }
        p = AllocatePool(own->LoadOptionsSize);
        if (!p)
                return EFI_OUT_OF_RESOURCES;
        CopyMem(p, own->LoadOptions, own->LoadOptionsSize);
        *ret = p;
        return EFI_SUCCESS;
}

static EFI_STATUS chain_step(mshim_ctx *c, const mb_plan_step *s, const void *opts, UINTN size) {
        switch (s->src) {
        case MB_PLAN_SRC_CHAINLOAD:
                return mshim_tpm_measure_chainload(&c->tpm, opts, size);
        case MB_PLAN_SRC_TOTP_FENCE:
                return mshim_totp_run(c, L"the chainload path");
        case MB_PLAN_SRC_TOTP_LOCK:
                return mshim_tpm_lock_totp(&c->tpm);
        default:
                return mshim_log(EFI_INVALID_PARAMETER, L"the chainload path: the plan has a step mshim does not know");
        }
}

EFI_STATUS mshim_chainload(mshim_ctx *c, const mb_loader_conf *conf) {
        CHAR16 path[MSHIM_PATH_UNITS];
        EFI_LOADED_IMAGE *li = NULL;
        mshim_image img = { 0 };
        EFI_HANDLE child = NULL;
        void *opts = NULL;
        EFI_STATUS st;

        st = next_stage_path(c, conf, path, MB_ARRAY_SIZE(path));
        if (EFI_ERROR(st))
                return mshim_log(st, L"no boot entries, and the chainload path is unusable (%r); returning to the firmware", st);
        mshim_log(EFI_SUCCESS, L"no boot entries in %s; chainloading %s", MSHIM_ENTRIES_DIR, path);
        st = mshim_image_read(c, path, true, &img);
        if (st == EFI_NOT_FOUND)
                return mshim_log(st, L"no boot entries and %s not found; returning to the firmware", path);
        if (!EFI_ERROR(st))
                st = mshim_image_load(c, path, &img, &child);
        /* A loader's image is small: no reason to keep it (mshim_image). */
        mshim_image_release(&img);
        if (EFI_ERROR(st))
                return mshim_log(st, L"no boot entries and %s cannot be loaded; returning to the firmware", path);

        st = BS->HandleProtocol(child, &LoadedImageProtocol, (void **) &li);
        if (EFI_ERROR(st) || !li) {
                BS->UnloadImage(child);
                return mshim_log(EFI_ERROR(st) ? st : EFI_NOT_FOUND, L"%s: no LoadedImage protocol", path);
        }
        /* As shim: the firmware's boot option data goes on unchanged (a
         * copy: the boot manager frees the original once mshim returns).
         * The firmware measured the Boot#### variable it came from into
         * PCR 1, but PCR 12 must not stay at its reset value for the next
         * stage to set: the options are measured there, tagged as this
         * path's (docs/MEASUREMENTS.md). */
        st = copy_options(c->loaded, &opts);
        if (EFI_ERROR(st)) {
                BS->UnloadImage(child);
                return mshim_log(st, L"%s: out of memory for its options", path);
        }
        li->LoadOptions = opts;
        li->LoadOptionsSize = opts ? c->loaded->LoadOptionsSize : 0;
        /* The plan's steps of this path: the options, and with TOTP on
         * the TOTP point: no code (the next stage loads a kernel and
         * initrd nobody measured yet, which a code would seem to vouch
         * for), the warning, and the fence ("totp require" boots nothing:
         * it must not be escaped by removing the entries); the lock. */
        st = EFI_SUCCESS;
        for (UINTN k = 0; k < c->plan->n_chain && !EFI_ERROR(st); k++)
                st = chain_step(c, &c->plan->chain[k], opts, li->LoadOptionsSize);
        if (EFI_ERROR(st)) {
                BS->UnloadImage(child);
                if (opts)
                        FreePool(opts);
                return st;
        }
        return mshim_image_start(c, child, path, true, opts);
}
