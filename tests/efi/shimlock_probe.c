/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Test only: an EFI program mshim starts as an `efi` entry, which calls
 * the SHIM_LOCK protocol's Verify the way a shim-aware loader does and
 * prints each answer on the console (tests/integration/test_shimlock_verify.sh).
 * gnu-efi only: no src/ code, so it tests mshim from the outside.
 *
 * The calls, in order:
 *   non-pe    a 1 KiB buffer of text: must be refused, Secure Boot on or off;
 *   target-1, target-2
 *             \probe\target.efi read twice into two separate buffers (as
 *             Debian's GRUB reads the kernel twice): the same bytes twice;
 *   unsigned  \probe\unsigned.efi (a "cannot read" line when it is absent);
 *   revoked   \probe\revoked.efi (likewise).
 * Each result line reads "mshim-probe: verify NAME (N bytes): STATUS (0xHEX)";
 * the last line is "mshim-probe: done". It then returns, and mshim goes on
 * to its next entry.
 */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wstrict-prototypes"   /* gnu-efi's headers */
#include <efi.h>
#include <efilib.h>
#pragma GCC diagnostic pop

#define PROBE_TARGET   L"\\probe\\target.efi"
#define PROBE_UNSIGNED L"\\probe\\unsigned.efi"
#define PROBE_REVOKED  L"\\probe\\revoked.efi"
#define PROBE_MAX      (64u * 1024 * 1024)

/* A .sbat section (shim's SBAT.md), so that mshim starts the probe while an
 * SBAT policy is set: efi entries need one then. The literal's NUL is the
 * section's padding. */
static const char probe_sbat[] __attribute__((section(".sbat"), used)) =
        "sbat,1,SBAT Version,sbat,1,https://github.com/rhboot/shim/blob/main/SBAT.md\n"
        "mshim-probe,1,mshim,mshim-probe,0,https://mshim.invalid\n";

static EFI_GUID shim_lock_guid = { 0x605dab50, 0xe046, 0x4300, { 0xab, 0xb6, 0x3d, 0xd8, 0x10, 0xdd, 0x8b, 0x23 } };

/* shim's protocol: plain C (System V) functions on x86_64, not EFIAPI. */
typedef EFI_STATUS __attribute__((sysv_abi)) (*probe_verify_fn)(void *buffer, UINT32 size);
typedef struct {
        probe_verify_fn Verify;
        void *Hash;
        void *Context;
} probe_shim_lock;

/* A whole file from the probe's own volume into a new pool buffer. */
static EFI_STATUS read_file(EFI_FILE_HANDLE root, const CHAR16 *path, void **ret_buf, UINTN *ret_size) {
        EFI_FILE_HANDLE f = NULL;
        EFI_FILE_INFO *info;
        void *buf = NULL;
        UINTN size, n;
        EFI_STATUS st;

        st = root->Open(root, &f, (CHAR16 *) path, EFI_FILE_MODE_READ, 0);
        if (EFI_ERROR(st))
                return st;
        info = LibFileInfo(f);
        if (!info || info->FileSize == 0 || info->FileSize > PROBE_MAX) {
                st = EFI_BAD_BUFFER_SIZE;
                goto out;
        }
        size = n = info->FileSize;
        buf = AllocatePool(size);
        st = buf ? f->Read(f, &n, buf) : EFI_OUT_OF_RESOURCES;
        if (!EFI_ERROR(st) && n != size)
                st = EFI_END_OF_FILE;
        if (!EFI_ERROR(st)) {
                *ret_buf = buf;
                *ret_size = size;
                buf = NULL;
        }
out:
        if (info)
                FreePool(info);
        if (buf)
                FreePool(buf);
        f->Close(f);
        return st;
}

static void verify(probe_shim_lock *sl, const CHAR16 *name, void *buf, UINTN size) {
        EFI_STATUS st = sl->Verify(buf, (UINT32) size);

        Print(L"mshim-probe: verify %s (%ld bytes): %r (0x%lx)\n", name, (UINT64) size, st, (UINT64) st);
}

/* Read path and verify it; say so when it cannot be read. */
static void verify_file(probe_shim_lock *sl, EFI_FILE_HANDLE root, const CHAR16 *name, const CHAR16 *path) {
        void *buf = NULL;
        UINTN size = 0;
        EFI_STATUS st;

        st = read_file(root, path, &buf, &size);
        if (EFI_ERROR(st)) {
                Print(L"mshim-probe: %s: cannot read %s: %r\n", name, path, st);
                return;
        }
        verify(sl, name, buf, size);
        FreePool(buf);
}

EFI_STATUS efi_main(EFI_HANDLE image, EFI_SYSTEM_TABLE *systab) {
        static CHAR8 text[1024];
        probe_shim_lock *sl = NULL;
        EFI_LOADED_IMAGE *li = NULL;
        EFI_FILE_HANDLE root;
        EFI_STATUS st;

        InitializeLib(image, systab);
        st = LibLocateProtocol(&shim_lock_guid, (void **) &sl);
        if (EFI_ERROR(st) || !sl) {
                Print(L"mshim-probe: no SHIM_LOCK protocol: %r\nmshim-probe: done\n", st);
                return EFI_NOT_FOUND;
        }
        st = uefi_call_wrapper(BS->HandleProtocol, 3, image, &LoadedImageProtocol, (void **) &li);
        root = (!EFI_ERROR(st) && li) ? LibOpenRoot(li->DeviceHandle) : NULL;
        if (!root) {
                Print(L"mshim-probe: cannot open the boot volume\nmshim-probe: done\n");
                return EFI_NOT_FOUND;
        }

        for (UINTN i = 0; i < sizeof(text); i++)
                text[i] = "not a PE image\n"[i % 15];
        verify(sl, L"non-pe", text, sizeof(text));
        verify_file(sl, root, L"target-1", PROBE_TARGET);
        verify_file(sl, root, L"target-2", PROBE_TARGET);
        verify_file(sl, root, L"unsigned", PROBE_UNSIGNED);     /* "cannot read" when absent */
        verify_file(sl, root, L"revoked", PROBE_REVOKED);
        root->Close(root);
        Print(L"mshim-probe: done\n");
        return EFI_SUCCESS;
}
