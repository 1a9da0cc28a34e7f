/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * mshim: a measured-boot loader for Boot Loader Specification Type #1
 * entries. Reads its configuration from the volume it was loaded from,
 * measures it (docs/MEASUREMENTS.md), shows the boot menu when loader.conf
 * asks for one (efi/menu.c), and boots the default entry or the one chosen,
 * falling back to the next ones in sort order.
 */
#include "mshim.h"
#include "mb/menu.h"
#include "mb/tcglog.h"

/* Read loader.conf; *ret_buf stays NULL unless MB_PLAN_CONF_READ. What it
 * says, and the defaults when it cannot be read or parsed, are the plan's
 * (src/plan.c). */
static mb_plan_conf_state load_loader_conf(EFI_FILE_HANDLE root, void **ret_buf, UINTN *ret_size) {
        void *buf = NULL;
        UINTN size = 0;
        EFI_STATUS st;

        st = mshim_file_load(root, MSHIM_LOADER_CONF_PATH, MSHIM_CONF_MAX, &buf, &size);
        if (st == EFI_NOT_FOUND)
                return MB_PLAN_CONF_ABSENT;
        if (EFI_ERROR(st)) {
                mshim_log(st, L"warning: cannot read %s; using defaults with tpm-required yes and totp show",
                          MSHIM_LOADER_CONF_PATH);
                return MB_PLAN_CONF_UNREADABLE;
        }
        *ret_buf = buf;
        *ret_size = size;
        return MB_PLAN_CONF_READ;
}

/* PCR 5's first mshim event, whatever became of loader.conf: its bytes,
 * or that it is absent, or that it could not be read (the plan's
 * conf_tag). A missing file is thus never the same PCR 5 as any file, and
 * the tag and path in the digest keep loader.conf apart from an entry
 * with the same bytes. */
static EFI_STATUS measure_loader_conf(mshim_tpm *t, const mb_plan_step *s, const void *buf, UINTN size) {
        bool read = s->tag == MB_TAG_LOADER_CONF;

        return mshim_tpm_measure_file(t, s->tag, MSHIM_LOADER_CONF_PATH, read ? buf : NULL, read ? size : 0);
}

/* The plan's steps before anything is tried: loader.conf, whatever became
 * of it, then (unless the listing failed: nothing is booted then) the
 * unusable entries. */
static EFI_STATUS run_start(mshim_ctx *c, mshim_entry **v, const void *conf_buf, UINTN conf_size, EFI_STATUS listed) {
        const mb_plan *plan = c->plan;
        EFI_STATUS st = EFI_SUCCESS;

        for (UINTN k = 0; k < plan->n_start && !EFI_ERROR(st); k++) {
                const mb_plan_step *s = &plan->start[k];

                if (s->src == MB_PLAN_SRC_LOADER_CONF)
                        st = measure_loader_conf(&c->tpm, s, conf_buf, conf_size);
                else if (s->src == MB_PLAN_SRC_UNUSABLE)
                        st = mshim_entry_measure_unusable(&c->tpm, s, v[s->entry]);
                else
                        st = mshim_log(EFI_INVALID_PARAMETER, L"the plan has a step mshim does not know");
                if (!EFI_ERROR(st) && s->src == MB_PLAN_SRC_LOADER_CONF)
                        st = listed;
        }
        return st;
}

/* Try the entries in the plan's order: the default, then the others in
 * sort order after it (wrapping around). Returns only if none booted. */
static EFI_STATUS boot_entries(mshim_ctx *c, mshim_entry **v) {
        const mb_plan *plan = c->plan;

        /* As shim: with nothing to boot, start the next loader. */
        if (plan->chainload)
                return mshim_chainload(c, c->conf);
        for (UINTN k = 0; k < plan->n_boot; k++) {
                const mshim_entry *e = v[plan->boot[k]];

                /* For the running system (`mshim bless`): the entry tried. */
                mshim_bli_set_selected(e->plan.bls.id);

                /* Any failure has been reported where it happened; the
                 * only one that ends the loop is a TPM we must not do
                 * without. */
                mshim_boot_entry(c, e, plan->tries[k], plan->n_tries[k]);
                if (mshim_tpm_refuses(&c->tpm))
                        return EFI_SECURITY_VIOLATION;  /* already said why */
                if (k + 1 < plan->n_boot)
                        mshim_log(EFI_SUCCESS, L"entry %s failed; trying the next one", mshim_entry_name(e));
        }
        return mshim_log(EFI_NOT_FOUND, L"no entry could be booted; returning to the firmware");
}

/* The plan for this ESP (src/plan.c), from loader.conf's bytes and the
 * entries read; says what the plan found wrong with loader.conf. */
static EFI_STATUS make_plan(const mb_boot_policy *policy, mb_plan_conf_state conf_st, const void *conf_buf,
                            UINTN conf_size, mshim_entry **v, UINTN n, mb_plan *ret) {
        mb_plan_entry *pv[MB_PLAN_MAX_ENTRIES];
        mshim_bli_ids ids;
        mb_plan_vars vars;
        mb_err r;

        for (UINTN i = 0; i < n; i++)
                pv[i] = &v[i]->plan;
        mshim_bli_read_vars(&ids, &vars);
        r = mb_plan_build(policy, &vars, conf_st, conf_buf, conf_size, pv, n, ret);
        if (r != MB_OK)
                return mshim_log(mb_efi_status(r), L"cannot plan the boot: %a", mb_strerror(r));
        /* Still measured: the PCR records these bytes whether or not we
         * understood them. */
        if (conf_st == MB_PLAN_CONF_READ && ret->conf_defaulted)
                mshim_log(EFI_SUCCESS, L"warning: %s: not understood at line %ld; using defaults with "
                          L"tpm-required yes and totp show", MSHIM_LOADER_CONF_PATH, (UINT64) ret->conf.err_line);
        return EFI_SUCCESS;
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
        mb_plan plan;
        mb_menu menu;           /* the plan borrows its edited line until the boot is over */
        mshim_entry **entries = NULL;
        UINTN n = 0, conf_size = 0;
        void *conf_buf = NULL;
        bool tpm_ready = false;
        mb_plan_conf_state conf_st;
        EFI_STATUS st, listed;

        InitializeLib(image, systab);
        MSHIM_BENCH_MARK(L"start");
        mshim_log(EFI_SUCCESS, L"version " MB_VERSION L", measured boot loader");

        st = mshim_boot_policy(&policy);
        if (EFI_ERROR(st))
                goto out;
        st = open_boot_volume(image, &c.loaded, &c.device, &c.root);
        if (EFI_ERROR(st))
                goto out;
        /* Before anything can be booted: the initramfs reads it. */
        mshim_bli_set_partuuid(c.device);
        MSHIM_BENCH_MARK(L"policy, volume, LoaderDevicePartUUID");
        /* Read everything the plan decides from, then decide once. A
         * listing that failed (said why) plans with the entries read. */
        conf_st = load_loader_conf(c.root, &conf_buf, &conf_size);
        MSHIM_BENCH_MARK(L"loader.conf read");
        listed = mshim_entries_load(c.root, &entries, &n);
        MSHIM_BENCH_MARK(L"entries listed and read");
        st = make_plan(&policy, conf_st, conf_buf, conf_size, entries, n, &plan);
        if (EFI_ERROR(st))
                goto out;
        MSHIM_BENCH_MARK(L"boot plan");
        c.plan = &plan;
        c.conf = &plan.conf;
        /* Read once, as systemd-boot does: deleted before anything is
         * tried, so a boot that fails does not follow it again. */
        if (plan.delete_oneshot)
                mshim_bli_delete_oneshot();
        /* Known only now: whether a missing TPM may be tolerated (the
         * built-in policy's floor, raised by loader.conf). */
        st = mshim_tpm_init(&c.tpm, plan.tpm_required, plan.tpm_failure_boot);
        if (EFI_ERROR(st))
                goto out;
        tpm_ready = true;
        MSHIM_BENCH_MARK(L"TPM found");
        st = run_start(&c, entries, conf_buf, conf_size, listed);
        if (EFI_ERROR(st))
                goto out;
        MSHIM_BENCH_MARK(L"loader.conf and unusable entries measured (PCR 5)");
        /* After everything the plan measures before a try, so the menu
         * changes no measurement but the try it chooses (and its command
         * line, when edited). */
        mshim_menu_run(&plan, entries, n, &menu);
        MSHIM_BENCH_MARK(L"boot menu");
        st = boot_entries(&c, entries);
out:
        /* Every way back to the firmware leaves a mark in PCRs 5 and 12. */
        if (tpm_ready)
                mshim_tpm_measure_exit(&c.tpm, &plan);
        mshim_entries_free(entries, n);
        if (conf_buf)
                FreePool(conf_buf);
        if (c.root)
                c.root->Close(c.root);
        return st;
}
