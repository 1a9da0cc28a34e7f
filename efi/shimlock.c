/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The SHIM_LOCK protocol for loaders built to run behind shim (Debian's
 * signed GRUB refuses to boot a kernel under Secure Boot without it), and
 * the LoadImage hook that keeps each verified image measured once.
 * docs/SHIM_LOCK.md explains the design; docs/MEASUREMENTS.md the events.
 *
 * Verify asks the firmware: with Secure Boot on it calls the firmware's
 * LoadImage on the buffer, so db, dbx and every other check the firmware
 * applies decide. That LoadImage also measures an accepted image into
 * PCR 4 (EDK2 DxeTpm2MeasureBootLib measures every image its Security2
 * handlers pass, with or without a device path), so the loaded handle is kept, and
 * when the next stage then calls LoadImage on the same bytes it gets that
 * handle instead of a second load and a second PCR 4 event.
 */
#include "mshim.h"
#include "mb/pe.h"
#include "mb/sha.h"

#define MSHIM_SHIM_LOCK_GUID \
        { 0x605dab50, 0xe046, 0x4300, { 0xab, 0xb6, 0x3d, 0xd8, 0x10, 0xdd, 0x8b, 0x23 } }

/* shim's calling convention on x86_64: its three functions are plain C
 * (System V) functions, not EFIAPI. GRUB 2.06 calls verify directly, iPXE
 * declares them __asmcall; gnu-efi's GNU_EFI_USE_MS_ABI must not leak in. */
#define SHIMAPI __attribute__((sysv_abi))

/* shim's PE_COFF_LOADER_IMAGE_CONTEXT (its include/peimage.h): what
 * Context fills and Hash takes. Pointers point into the caller's buffer. */
typedef struct {
        UINT64 ImageAddress;            /* ImageBase from the optional header */
        UINT64 ImageSize;               /* SizeOfImage */
        UINT64 EntryPoint;              /* AddressOfEntryPoint (RVA) */
        UINTN SizeOfHeaders;
        UINT16 ImageType;               /* Subsystem */
        UINT16 NumberOfSections;
        UINT32 SectionAlignment;
        void *FirstSection;             /* EFI_IMAGE_SECTION_HEADER * */
        void *RelocDir;                 /* EFI_IMAGE_DATA_DIRECTORY *, entry 5 */
        void *SecDir;                   /* EFI_IMAGE_DATA_DIRECTORY *, entry 4 */
        UINT64 NumberOfRvaAndSizes;
        void *PEHdr;                    /* the "PE\0\0" signature */
} mshim_pe_context;

_Static_assert(sizeof(mshim_pe_context) == 80, "shim's PE_COFF_LOADER_IMAGE_CONTEXT is 80 bytes on x86_64");

typedef EFI_STATUS SHIMAPI (*mshim_shim_verify)(void *buffer, UINT32 size);
typedef EFI_STATUS SHIMAPI (*mshim_shim_hash)(char *data, int datasize, mshim_pe_context *context,
                                              UINT8 *sha256hash, UINT8 *sha1hash);
typedef EFI_STATUS SHIMAPI (*mshim_shim_context)(void *data, unsigned int datasize, mshim_pe_context *context);

typedef struct {
        mshim_shim_verify Verify;
        mshim_shim_hash Hash;
        mshim_shim_context Context;
} mshim_shim_lock_protocol;

static EFI_GUID shim_lock_guid = MSHIM_SHIM_LOCK_GUID;

/* The protocol functions get no This pointer: the state has to be global.
 * There is one next stage at a time, so one slot is enough. */
static struct {
        bool installed;
        EFI_HANDLE image;               /* mshim's image handle: protocol home, LoadImage parent */
        EFI_IMAGE_LOAD firmware_load;   /* the LoadImage we replaced; NULL when not hooked */
        EFI_HANDLE cached;              /* loaded by Verify, not yet claimed */
        UINTN cached_size;
        uint8_t cached_sha256[32];
} shim_lock;

/* ---- Secure Boot state ---------------------------------------------------- */

/* UEFI 2.10, 3.3: SecureBoot is 1 when the platform enforces Secure Boot.
 * A missing or malformed variable means off, as shim treats it. */
static bool secure_boot_enabled(void) {
        EFI_GUID global = EFI_GLOBAL_VARIABLE;
        UINT8 v = 0;
        UINTN size = sizeof(v);
        EFI_STATUS st;

        st = RT->GetVariable(L"SecureBoot", &global, NULL, &size, &v);
        return !EFI_ERROR(st) && size == 1 && v == 1;
}

/* ---- the cache of the image Verify loaded --------------------------------- */

static void cache_drop(void) {
        if (shim_lock.cached)
                BS->UnloadImage(shim_lock.cached);
        shim_lock.cached = NULL;
}

static bool cache_matches(const void *buf, UINTN size) {
        uint8_t digest[32];

        if (!shim_lock.cached || !buf || size != shim_lock.cached_size)
                return false;
        if (mb_hash_buf(MB_ALG_SHA256, buf, size, digest) != MB_OK)
                return false;
        return CompareMem(digest, shim_lock.cached_sha256, sizeof(digest)) == 0;
}

/* Give the image Verify loaded the identity the caller's LoadImage would
 * have given it: its parent and, where the caller named one, the file it
 * came from (UEFI 2.10, 9.1: DeviceHandle + FilePath relative to it). */
static void cache_adopt(EFI_HANDLE h, EFI_HANDLE parent, EFI_DEVICE_PATH *dp) {
        EFI_LOADED_IMAGE *li = NULL;
        EFI_DEVICE_PATH *rest = dp;
        EFI_HANDLE dev = NULL;

        if (EFI_ERROR(BS->HandleProtocol(h, &LoadedImageProtocol, (void **) &li)) || !li)
                return;
        li->ParentHandle = parent;
        if (!dp || EFI_ERROR(BS->LocateDevicePath(&FileSystemProtocol, &rest, &dev)))
                return;
        li->DeviceHandle = dev;
        /* The copy lives as long as the image; it is never freed, like the
         * path the firmware's own LoadImage would have allocated. */
        li->FilePath = DuplicateDevicePath(rest);
}

/* gBS->LoadImage while a next stage runs: the image Verify just loaded is
 * handed out instead of being loaded (and measured) again; everything else
 * goes to the firmware unchanged. */
static EFI_STATUS EFIAPI hooked_load_image(BOOLEAN boot_policy, EFI_HANDLE parent, EFI_DEVICE_PATH *dp,
                                           VOID *src, UINTN size, EFI_HANDLE *ret) {
        if (ret && cache_matches(src, size)) {
                EFI_HANDLE h = shim_lock.cached;

                shim_lock.cached = NULL;        /* claimed: now the caller's */
                cache_adopt(h, parent, dp);
                *ret = h;
                return EFI_SUCCESS;
        }
        return shim_lock.firmware_load(boot_policy, parent, dp, src, size, ret);
}

/* Replace one boot service and keep the table's CRC valid (UEFI 2.10,
 * 4.2: Hdr.CRC32 is computed over HeaderSize bytes with the field 0). */
static void bs_set_load_image(EFI_IMAGE_LOAD f) {
        UINT32 crc = 0;

        BS->LoadImage = f;
        BS->Hdr.CRC32 = 0;
        if (!EFI_ERROR(BS->CalculateCrc32(BS, BS->Hdr.HeaderSize, &crc)))
                BS->Hdr.CRC32 = crc;
}

/* ---- the protocol ---------------------------------------------------------- */

static EFI_STATUS SHIMAPI shim_lock_verify(void *buffer, UINT32 size) {
        uint8_t digest[32];
        EFI_HANDLE h = NULL;
        EFI_STATUS st;

        /* As shim: without Secure Boot there is no policy to apply. */
        if (!secure_boot_enabled())
                return EFI_SUCCESS;
        if (!buffer || size == 0)
                return EFI_INVALID_PARAMETER;
        if (!shim_lock.firmware_load)
                return EFI_SECURITY_VIOLATION;  /* cannot happen: installed with the hook */
        /* The same bytes again (Debian's GRUB 2.06 verifies the kernel
         * twice, from two copies: its verifier framework, then linuxefi):
         * the firmware already accepted them, and asking again would
         * load and measure them a second time. */
        if (cache_matches(buffer, size))
                return EFI_SUCCESS;

        st = shim_lock.firmware_load(FALSE, shim_lock.image, NULL, buffer, size, &h);
        if (EFI_ERROR(st)) {
                /* UEFI 2.10, 7.4.1: a handle comes back with
                 * EFI_SECURITY_VIOLATION and must be unloaded. */
                if (st == EFI_SECURITY_VIOLATION && h)
                        BS->UnloadImage(h);
                mshim_log(st, L"SHIM_LOCK Verify: image of %ld bytes refused by the firmware: %r", (UINT64) size, st);
                /* shim's Verify says EFI_SECURITY_VIOLATION for an image no
                 * key accepts; the firmware's "denied" means the same here. */
                return (st == EFI_ACCESS_DENIED) ? EFI_SECURITY_VIOLATION : st;
        }
        if (mb_hash_buf(MB_ALG_SHA256, buffer, size, digest) != MB_OK) {
                BS->UnloadImage(h);
                return EFI_SECURITY_VIOLATION;
        }
        /* Keep it for the LoadImage (or the second Verify) that normally
         * follows; a previous unclaimed one will not be asked for again. */
        cache_drop();
        CopyMem(shim_lock.cached_sha256, digest, sizeof(digest));
        shim_lock.cached = h;
        shim_lock.cached_size = size;
        return EFI_SUCCESS;
}

/* Fill shim's context from mb_pe, which checked every offset against the
 * buffer. The PE signature sits 88 bytes before CheckSum in both PE32 and
 * PE32+ (4-byte signature, 20-byte COFF header, CheckSum at optional
 * header offset 64). */
static void context_from_pe(const mb_pe *pe, uint8_t *base, mshim_pe_context *ctx) {
        mb_memset(ctx, 0, sizeof(*ctx));
        ctx->ImageAddress = pe->image_base;
        ctx->ImageSize = pe->size_of_image;
        ctx->EntryPoint = pe->entry_point;
        ctx->SizeOfHeaders = pe->size_of_headers;
        ctx->ImageType = pe->subsystem;
        ctx->NumberOfSections = pe->n_sections;
        ctx->SectionAlignment = pe->section_alignment;
        ctx->FirstSection = base + pe->sections_off;
        ctx->NumberOfRvaAndSizes = pe->n_dirs;
        if (pe->n_dirs > MB_PE_DIR_SECURITY)
                ctx->SecDir = base + pe->dirs_off + 8 * MB_PE_DIR_SECURITY;
        if (pe->n_dirs > MB_PE_DIR_BASERELOC)
                ctx->RelocDir = base + pe->dirs_off + 8 * MB_PE_DIR_BASERELOC;
        ctx->PEHdr = base + pe->checksum_off - 88;
}

static EFI_STATUS SHIMAPI shim_lock_context(void *data, unsigned int datasize, mshim_pe_context *context) {
        mb_pe pe;
        mb_err r;

        if (!data || !context)
                return EFI_INVALID_PARAMETER;
        r = mb_pe_parse(data, datasize, &pe);
        /* What shim's read_header refuses too: an image whose entry point
         * or sections lie outside SizeOfImage, or SizeOfImage smaller than
         * its headers. The caller lays the image out from this context. */
        if (r == MB_OK)
                r = mb_pe_check_loadable(&pe);
        if (r != MB_OK)
                return EFI_UNSUPPORTED;         /* shim: "not a PE image" */
        context_from_pe(&pe, data, context);
        return EFI_SUCCESS;
}

/* The Authenticode digests, computed from the buffer by the core's PE
 * parser: the caller's context is not trusted for any offset. */
static EFI_STATUS SHIMAPI shim_lock_hash(char *data, int datasize, mshim_pe_context *context,
                                         UINT8 *sha256hash, UINT8 *sha1hash) {
        uint8_t d256[32], d1[20];
        mb_pe pe;

        if (!data || datasize <= 0 || !sha256hash || !sha1hash)
                return EFI_INVALID_PARAMETER;
        if (mb_pe_parse(data, (size_t) datasize, &pe) != MB_OK)
                return EFI_UNSUPPORTED;
        if (mb_pe_authenticode_parsed(&pe, MB_ALG_SHA256, d256) != MB_OK ||
            mb_pe_authenticode_parsed(&pe, MB_ALG_SHA1, d1) != MB_OK)
                return EFI_UNSUPPORTED;
        CopyMem(sha256hash, d256, sizeof(d256));
        CopyMem(sha1hash, d1, sizeof(d1));
        return EFI_SUCCESS;
}

static mshim_shim_lock_protocol shim_lock_protocol = {
        .Verify = shim_lock_verify,
        .Hash = shim_lock_hash,
        .Context = shim_lock_context,
};

/* ---- install / uninstall around a next stage ------------------------------- */

void mshim_shim_lock_install(mshim_ctx *c) {
        void *existing = NULL;
        EFI_HANDLE h;

        /* Behind shim, shim's own SHIM_LOCK (and its LoadImage hook) are in
         * charge: shadowing them would bypass MokList. */
        if (!EFI_ERROR(BS->LocateProtocol(&shim_lock_guid, NULL, &existing)) && existing) {
                mshim_log(EFI_SUCCESS, L"SHIM_LOCK already provided (by shim); not installing mshim's");
                return;
        }
        h = c->image;
        if (EFI_ERROR(BS->InstallProtocolInterface(&h, &shim_lock_guid, EFI_NATIVE_INTERFACE, &shim_lock_protocol))) {
                mshim_log(EFI_SUCCESS, L"warning: cannot install SHIM_LOCK; shim-aware loaders may refuse to boot");
                return;
        }
        shim_lock.installed = true;
        shim_lock.image = c->image;
        /* The hook only matters when Verify loads images, i.e. with
         * Secure Boot on. */
        if (secure_boot_enabled() && !shim_lock.firmware_load) {
                shim_lock.firmware_load = BS->LoadImage;
                bs_set_load_image(hooked_load_image);
        }
}

void mshim_shim_lock_uninstall(mshim_ctx *c) {
        EFI_STATUS st;

        if (!shim_lock.installed)
                return;
        /* Only undo our own hook: if a later stage hooked on top of it and
         * left, restoring would cut that one out, and leaving ours would
         * leave BS->LoadImage calling into mshim after it is gone. */
        if (shim_lock.firmware_load && BS->LoadImage != hooked_load_image)
                mshim_fatal_stuck(L"mshim's LoadImage hook, hooked again by the next stage", EFI_ACCESS_DENIED);
        if (shim_lock.firmware_load) {
                bs_set_load_image(shim_lock.firmware_load);
                shim_lock.firmware_load = NULL;
        }
        cache_drop();
        st = BS->UninstallProtocolInterface(c->image, &shim_lock_guid, &shim_lock_protocol);
        /* EFI_NOT_FOUND: the next stage removed it (shim removes an
         * earlier SHIM_LOCK), so nothing points into mshim any more. */
        if (EFI_ERROR(st) && st != EFI_NOT_FOUND)
                mshim_fatal_stuck(L"the SHIM_LOCK protocol", st);
        shim_lock.installed = false;
}
