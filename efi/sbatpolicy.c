/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * SBAT revocations (shim's SBAT.md) for the images mshim loads and the
 * ones it verifies through SHIM_LOCK: the firmware variables are read
 * here, the decisions are the core's (mb_sbat_policy_select,
 * mb_sbat_image_verdict). docs/SIGNING.md, "SBAT revocations", has the
 * rules and why.
 */
#include "mshim.h"
#include "mb/pe.h"
#include "mb/sbat.h"

/* shim's policies are a few hundred bytes; anything this big is not one. */
#define SBAT_VAR_MAX (64u * 1024)

static const CHAR16 *const sbat_var_names[MB_SBAT_N_SOURCES] = {
        [MB_SBAT_LEVEL] = L"SbatLevel",
        [MB_SBAT_LEVEL_RT] = L"SbatLevelRT",
};

/* One policy variable in shim's vendor GUID, with its attributes.
 * EFI_NOT_FOUND is not an error: v->present stays false. */
static EFI_STATUS sbat_var_read(mb_sbat_source s, mb_sbat_var *v) {
        EFI_GUID guid = MSHIM_SHIM_LOCK_GUID;
        UINT32 attrs = 0;
        UINT8 probe;
        UINTN size = 0;
        void *buf;
        EFI_STATUS st;

        /* Size 0 with a real pointer: the size comes back with
         * EFI_BUFFER_TOO_SMALL on every firmware (a NULL Data pointer is
         * EFI_INVALID_PARAMETER on some). */
        st = RT->GetVariable((CHAR16 *) sbat_var_names[s], &guid, &attrs, &size, &probe);
        if (st == EFI_NOT_FOUND)
                return EFI_SUCCESS;
        if (st != EFI_BUFFER_TOO_SMALL)
                return EFI_ERROR(st) ? st : EFI_INVALID_PARAMETER;     /* a 0-byte variable */
        if (size == 0 || size > SBAT_VAR_MAX)
                return EFI_BAD_BUFFER_SIZE;
        buf = AllocatePool(size);
        if (!buf)
                return EFI_OUT_OF_RESOURCES;
        st = RT->GetVariable((CHAR16 *) sbat_var_names[s], &guid, &attrs, &size, buf);
        if (EFI_ERROR(st)) {
                FreePool(buf);
                return st;
        }
        *v = (mb_sbat_var) { .present = true, .attributes = attrs, .data = buf, .size = size };
        return EFI_SUCCESS;
}

/* Say why the image is refused; returns EFI_SECURITY_VIOLATION. */
static EFI_STATUS sbat_refuse(const mb_sbat_verdict *v, const CHAR16 *label) {
        mshim_text t;

        switch (v->outcome) {
        case MB_SBAT_REVOKED:
                return mshim_log(EFI_SECURITY_VIOLATION,
                                 L"%s: revoked by SBAT (%a): component %s is generation %d, the policy requires %d or later",
                                 label, mb_sbat_source_name(v->source), mshim_text_of(v->entry.component, &t),
                                 (UINT64) v->entry.generation, (UINT64) v->min_generation);
        case MB_SBAT_MISSING:
                return mshim_log(EFI_SECURITY_VIOLATION,
                                 L"%s: refused: no .sbat section, and an SBAT policy is set (EFI programs mshim starts itself need one)",
                                 label);
        default:
                return mshim_log(EFI_SECURITY_VIOLATION, L"%s: refused: malformed .sbat section (line %ld) or not a PE image",
                                 label, (UINT64) v->lineno);
        }
}

/* Read both variables and decide which policy applies; a message naming
 * label and the variable when that fails (every image is then refused). */
static EFI_STATUS sbat_policy_load(mb_sbat_var vars[MB_SBAT_N_SOURCES], mb_sbat_policy *pol, const CHAR16 *label) {
        mb_sbat_source bad = MB_SBAT_LEVEL;

        for (int s = 0; s < MB_SBAT_N_SOURCES; s++) {
                EFI_STATUS st = sbat_var_read((mb_sbat_source) s, &vars[s]);

                if (EFI_ERROR(st))
                        return mshim_log(EFI_SECURITY_VIOLATION, L"%s: refused: cannot read %s (%r)",
                                         label, sbat_var_names[s], st);
        }
        /* A variable with the wrong attributes may have been written by
         * the OS to lift a revocation: no image passes until it is fixed. */
        if (mb_sbat_policy_select(vars, pol, &bad) != MB_OK)
                return mshim_log(EFI_SECURITY_VIOLATION,
                                 L"%s: refused: %s has attributes 0x%x (want %s) or does not parse; it may have been forged, so SBAT fails closed",
                                 label, sbat_var_names[bad], vars[bad].attributes,
                                 bad == MB_SBAT_LEVEL ? L"NV+BS" : L"BS+RT");
        return EFI_SUCCESS;
}

EFI_STATUS mshim_sbat_check(const void *buf, UINTN size, const CHAR16 *label, bool section_required) {
        mb_sbat_var vars[MB_SBAT_N_SOURCES] = { { 0 } };
        mb_sbat_verdict v = { .outcome = MB_SBAT_MALFORMED };
        mb_sbat_policy pol = { 0 };
        mb_pe pe;
        EFI_STATUS st;

        /* shim reads its SbatLevel only in secure mode: without Secure
         * Boot nothing is refused, so there is nothing to revoke. */
        if (!mshim_secure_boot_enabled())
                return EFI_SUCCESS;
        st = sbat_policy_load(vars, &pol, label);
        if (EFI_ERROR(st) || pol.n == 0)        /* no policy: nothing is revoked */
                goto out;
        if (!buf) {
                st = mshim_log(EFI_SECURITY_VIOLATION,
                               L"%s: refused: an SBAT policy is set, and an image loaded by device path alone cannot be checked",
                               label);
                goto out;
        }
        /* Not a PE image: stays MB_SBAT_MALFORMED. */
        if (mb_pe_parse(buf, size, &pe) == MB_OK)
                mb_sbat_image_verdict(&pol, &pe, section_required, &v);
        if (v.outcome != MB_SBAT_ALLOWED)
                st = sbat_refuse(&v, label);
out:
        for (int s = 0; s < MB_SBAT_N_SOURCES; s++)
                if (vars[s].present)
                        FreePool((void *) vars[s].data);
        return st;
}
