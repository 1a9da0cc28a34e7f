/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Serving the initrd to the Linux EFI stub (5.8+): the stub looks for a
 * handle whose device path is exactly one vendor media node with
 * LINUX_EFI_INITRD_MEDIA_GUID, and calls EFI_LOAD_FILE2_PROTOCOL.LoadFile
 * on it. The stub measures what it gets into PCR 9 itself from 5.17; for
 * any other image mshim measures the initrd the same way
 * (mshim_initrd_measure, called from efi/boot.c).
 *
 * When no step of mshim's needs the initrd's bytes (its PCR 9 event, the
 * TOTP code's PCR 12 event), the files are read only when the stub asks,
 * straight into the stub's buffer: the firmware's disk driver writes them
 * there by DMA, where a copy from mshim's own buffer would be a second
 * pass over the whole initrd by the CPU (under emulation the larger part
 * of serving it; docs/BENCHMARK.md). What the stub gets is what it
 * measures either way. When a step needs the bytes, they are read once,
 * before LoadImage, and that very buffer is served (pinned).
 */
#include "mshim.h"
#include "mb/sha.h"
#include "mb/totp.h"

#define MSHIM_LOAD_FILE2_PROTOCOL_GUID \
        { 0x4006c0c1, 0xfcb3, 0x403e, { 0x99, 0x6d, 0x4a, 0x6c, 0x87, 0x24, 0xe0, 0x6d } }
#define MSHIM_LINUX_INITRD_MEDIA_GUID \
        { 0x5568e427, 0x68fc, 0x4f3d, { 0xac, 0x74, 0xca, 0x55, 0x52, 0x31, 0xcc, 0x68 } }

static EFI_GUID load_file2_guid = MSHIM_LOAD_FILE2_PROTOCOL_GUID;

/* Vendor media node + end node (UEFI 2.10, 10.3.5.6 and 10.3.1). */
typedef struct {
        VENDOR_DEVICE_PATH vendor;
        EFI_DEVICE_PATH end;
} __attribute__((packed)) initrd_device_path;

static initrd_device_path initrd_dp = {
        .vendor = {
                .Header = {
                        .Type = MEDIA_DEVICE_PATH,
                        .SubType = MEDIA_VENDOR_DP,
                        .Length = { sizeof(VENDOR_DEVICE_PATH), 0 },
                },
                .Guid = MSHIM_LINUX_INITRD_MEDIA_GUID,
        },
        .end = {
                .Type = END_DEVICE_PATH_TYPE,
                .SubType = END_ENTIRE_DEVICE_PATH_SUBTYPE,
                .Length = { sizeof(EFI_DEVICE_PATH), 0 },
        },
};

/* The protocol comes first so LoadFile's This is the whole object. LoadFile2
 * has the same signature as LoadFile (UEFI 2.10, 13.2). */
struct mshim_initrd {
        EFI_LOAD_FILE_PROTOCOL proto;
        EFI_HANDLE handle;
        UINTN size;                     /* the files' total when published */
        void *buf;                      /* pinned: their bytes; NULL: read when asked */
        /* Where to read them from when asked (borrowed: they outlive the
         * protocol, which is uninstalled before mshim returns). */
        EFI_FILE_HANDLE root;
        const mb_bls_entry *entry;
        const CHAR16 *label;
};

static EFI_STATUS initrd_read_all(EFI_FILE_HANDLE root, const mb_bls_entry *e, const CHAR16 *label,
                                  UINT8 *buf, UINTN total);

static EFI_STATUS EFIAPI initrd_load_file(EFI_LOAD_FILE_PROTOCOL *This, EFI_DEVICE_PATH *FilePath,
                                          BOOLEAN BootPolicy, UINTN *BufferSize, VOID *Buffer) {
        mshim_initrd *r = (mshim_initrd *) This;

        /* UEFI 2.10, 13.2: LoadFile2 must refuse BootPolicy = TRUE. */
        if (BootPolicy)
                return EFI_UNSUPPORTED;
        if (!This || !BufferSize)
                return EFI_INVALID_PARAMETER;
        if (!Buffer || *BufferSize < r->size) {
                *BufferSize = r->size;
                return EFI_BUFFER_TOO_SMALL;
        }
        if (r->buf) {
                mshim_copy(Buffer, r->buf, r->size);
        } else {
                /* Exactly the size the stub was told: a file that changed
                 * since is refused (said on the console), and the stub
                 * then boots nothing. */
                EFI_STATUS st = initrd_read_all(r->root, r->entry, r->label, Buffer, r->size);

                if (EFI_ERROR(st))
                        return st;
        }
        *BufferSize = r->size;
        return EFI_SUCCESS;
}

/* Open the entry's i-th initrd; path receives its ESP path for messages. */
static EFI_STATUS initrd_open(EFI_FILE_HANDLE root, const mb_bls_entry *e, size_t i, const CHAR16 *label,
                              CHAR16 path[MSHIM_PATH_UNITS], EFI_FILE_HANDLE *ret_f) {
        EFI_STATUS st = mshim_path_from_bls(e->initrd[i], path, MSHIM_PATH_UNITS);

        if (EFI_ERROR(st))
                return mshim_log(st, L"entry %s: bad initrd path (%r)", label, st);
        st = root->Open(root, ret_f, path, EFI_FILE_MODE_READ, 0);
        if (EFI_ERROR(st))
                return mshim_log(st, L"entry %s: cannot open initrd %s: %r", label, path, st);
        return EFI_SUCCESS;
}

/* Total size of the entry's initrds, each opened once to ask. */
static EFI_STATUS initrd_total_size(EFI_FILE_HANDLE root, const mb_bls_entry *e, const CHAR16 *label,
                                    UINTN *ret_total) {
        UINTN total = 0;

        for (size_t i = 0; i < e->n_initrd; i++) {
                CHAR16 path[MSHIM_PATH_UNITS];
                EFI_FILE_HANDLE f;
                UINTN size = 0;
                EFI_STATUS st = initrd_open(root, e, i, label, path, &f);

                if (EFI_ERROR(st))
                        return st;
                /* The cap is on the sum, so each file may use what is left. */
                st = mshim_file_size(f, path, MSHIM_IMAGE_MAX - total, &size);
                f->Close(f);
                if (EFI_ERROR(st))
                        return mshim_log(st, L"entry %s: initrd %s unusable", label, path);
                total += size;
        }
        *ret_total = total;
        return EFI_SUCCESS;
}

/* Read the initrds back to back into buf, which holds exactly total bytes. */
static EFI_STATUS initrd_read_all(EFI_FILE_HANDLE root, const mb_bls_entry *e, const CHAR16 *label,
                                  UINT8 *buf, UINTN total) {
        UINTN off = 0;

        for (size_t i = 0; i < e->n_initrd; i++) {
                CHAR16 path[MSHIM_PATH_UNITS];
                EFI_FILE_HANDLE f;
                UINTN size = 0;
                EFI_STATUS st = initrd_open(root, e, i, label, path, &f);

                if (EFI_ERROR(st))
                        return st;
                /* Ask again: the file may have changed since we summed. */
                st = mshim_file_size(f, path, total - off, &size);
                if (!EFI_ERROR(st))
                        st = mshim_file_read_exact(f, path, buf + off, size);
                f->Close(f);
                if (EFI_ERROR(st))
                        return mshim_log(st, L"entry %s: cannot read initrd %s", label, path);
                off += size;
        }
        if (off != total)
                return mshim_log(EFI_VOLUME_CORRUPTED, L"entry %s: initrds changed size while read", label);
        return EFI_SUCCESS;
}

/* Refuse to shadow another loader's initrd: the stub would take whichever
 * handle LocateDevicePath finds first. */
static bool initrd_already_served(void) {
        EFI_DEVICE_PATH *dp = (EFI_DEVICE_PATH *) &initrd_dp;
        EFI_HANDLE h;

        return !EFI_ERROR(BS->LocateDevicePath(&load_file2_guid, &dp, &h)) && IsDevicePathEnd(dp);
}

EFI_STATUS mshim_initrd_install(EFI_FILE_HANDLE root, const mb_bls_entry *e, const CHAR16 *label,
                                bool pin, mshim_initrd **ret) {
        mshim_initrd *r = NULL;
        UINTN total = 0;
        EFI_STATUS st;

        if (e->n_initrd == 0) {
                *ret = NULL;
                return EFI_SUCCESS;
        }
        if (initrd_already_served())
                return mshim_log(EFI_ALREADY_STARTED, L"entry %s: another initrd provider is installed", label);
        st = initrd_total_size(root, e, label, &total);
        if (EFI_ERROR(st))
                return st;

        r = AllocateZeroPool(sizeof(*r));
        if (!r)
                return mshim_log(EFI_OUT_OF_RESOURCES, L"entry %s: out of memory", label);
        r->size = total;
        r->root = root;
        r->entry = e;
        r->label = label;
        if (pin) {
                /* + 1: valid even when all initrds are empty. Pages, not
                 * pool: mshim_pages_alloc says why. */
                r->buf = mshim_pages_alloc(total + 1);
                if (!r->buf) {
                        st = mshim_log(EFI_OUT_OF_RESOURCES, L"entry %s: out of memory for %ld bytes of initrd",
                                       label, (UINT64) total);
                        goto fail;
                }
                st = initrd_read_all(root, e, label, r->buf, total);
                if (EFI_ERROR(st))
                        goto fail;
        }

        r->proto.LoadFile = initrd_load_file;
        st = BS->InstallMultipleProtocolInterfaces(&r->handle, &DevicePathProtocol, &initrd_dp,
                                                   &load_file2_guid, &r->proto, NULL);
        if (EFI_ERROR(st)) {
                st = mshim_log(st, L"entry %s: cannot install the initrd protocol: %r", label, st);
                goto fail;
        }
        *ret = r;
        return EFI_SUCCESS;
fail:
        if (r->buf)
                mshim_pages_free(r->buf, total + 1);
        FreePool(r);
        return st;
}

void mshim_initrd_uninstall(mshim_initrd *r) {
        EFI_STATUS st;

        if (!r)
                return;
        st = BS->UninstallMultipleProtocolInterfaces(r->handle, &DevicePathProtocol, &initrd_dp,
                                                     &load_file2_guid, &r->proto, NULL);
        /* Someone still holds the protocol, whose LoadFile and device path
         * live in mshim's image: see mshim_fatal_stuck. */
        if (EFI_ERROR(st))
                mshim_fatal_stuck(L"the initrd's LoadFile2 protocol", st);
        if (r->buf)
                mshim_pages_free(r->buf, r->size + 1);
        FreePool(r);
}

/* A step that needs the bytes of an initrd that was published unpinned:
 * mshim_boot_entry decides the pinning from the same steps, so this is a
 * bug; refused rather than measured as anything. */
static EFI_STATUS initrd_not_pinned(mshim_tpm *t) {
        t->failed = true;
        return mshim_log(EFI_NOT_READY, L"the initrd was not read before it was to be measured; refusing to start anything");
}

EFI_STATUS mshim_initrd_measure_totp(mshim_tpm *t, const mshim_initrd *r) {
        static const uint8_t none[1];
        uint8_t sha256[MB_TOTP_INITRD_SHA256_SIZE];
        UINTN size = r ? r->size : 0;

        if (!t->tcg2)
                return EFI_SUCCESS;     /* no TPM, no code: nothing to bind */
        if (r && !r->buf)
                return initrd_not_pinned(t);
        /* The core's SHA-256 once, not HashLogExtendEvent over the initrd,
         * which would hash it in every bank. */
        if (mb_hash_buf(MB_ALG_SHA256, r ? r->buf : none, size, sha256) != MB_OK) {
                t->failed = true;
                return mshim_log(EFI_SECURITY_VIOLATION, L"TOTP: no SHA-256 for the initrd; refusing to start anything");
        }
        mshim_log(EFI_SUCCESS, L"TOTP: the code vouches for the initrd too (%ld bytes, PCR 12)", (UINT64) size);
        return mshim_tpm_measure_totp_initrd(t, size, sha256);
}

EFI_STATUS mshim_initrd_measure(mshim_tpm *t, const mshim_initrd *r) {
        if (!r)
                return EFI_SUCCESS;
        if (!r->buf)
                return initrd_not_pinned(t);
        return mshim_tpm_measure_initrd(t, r->buf, r->size);
}
