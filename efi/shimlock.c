/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The SHIM_LOCK protocol for loaders built to run behind shim (Debian's
 * signed GRUB refuses to boot a kernel under Secure Boot without it), and
 * the LoadImage hook that keeps each verified image measured once.
 * docs/SHIM_LOCK.md explains the design; docs/MEASUREMENTS.md the events.
 *
 * Verify refuses what is not a PE image, and what the SBAT policy revokes.
 * With Secure Boot on it then asks the firmware: it calls the firmware's
 * LoadImage on the buffer, with a file device path on mshim's volume, so
 * db, dbx and every other check the firmware applies decide. That
 * LoadImage also measures an accepted image into PCR 4 (EDK2
 * DxeTpm2MeasureBootLib measures every image its Security2 handlers pass),
 * so the loaded handle is kept, and when the next stage then calls
 * LoadImage on the same bytes it gets that handle instead of a second load
 * and a second PCR 4 event. With Secure Boot off nothing is checked, but
 * Verify measures the image itself, as shim does.
 */
#include "mshim.h"
#include "mb/pe.h"
#include "mb/sha.h"

/* The file device paths (on mshim's own volume) Verify and the start-up
 * self-test give LoadImage. No such file exists: the image comes from the
 * caller's buffer; the path only gives the firmware's policy an origin
 * (EDK2: fixed or removable media, never "firmware volume") and shows up
 * in the PCR 4 event. */
#define MSHIM_VERIFY_PATH   L"\\mshim\\shim-lock-verify"
#define MSHIM_SELFTEST_PATH L"\\mshim\\shim-lock-selftest"

/* efi/selftest.S: a small unsigned EFI application (efi/selftest/unsigned.c). */
extern const UINT8 mshim_selftest_unsigned[];
extern const UINT64 mshim_selftest_unsigned_size;   /* efi/selftest.S */

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

/* Which bytes Verify saw: size and SHA-256 (size 0: an empty slot, since
 * Verify refuses an empty buffer). */
typedef struct shim_lock_bytes {
        UINTN size;
        uint8_t sha256[32];
} shim_lock_bytes;

/* Images Verify loaded (Secure Boot on) and not yet claimed by LoadImage:
 * a next stage may verify several before it starts one (GRUB: a kernel,
 * then another entry's; verifying A, B, then A again must not load A
 * twice). Each holds an image's pages, so the slots are few; the oldest
 * is unloaded when a fifth arrives. */
#define SHIM_LOCK_CACHED 4
/* Images Verify measured (Secure Boot off): a digest each, so more of
 * them; past 16 distinct images the oldest would be measured again. */
#define SHIM_LOCK_MEASURED 16

/* The protocol functions get no This pointer: the state has to be global. */
static struct {
        bool installed;
        EFI_HANDLE image;               /* mshim's image handle: protocol home, LoadImage parent */
        EFI_HANDLE device;              /* mshim's volume: where Verify's device path points */
        mshim_tpm *tpm;                 /* for Verify's own PCR 4 event (Secure Boot off) */
        EFI_IMAGE_LOAD firmware_load;   /* the LoadImage we replaced; NULL when not hooked */
        struct {
                EFI_HANDLE handle;      /* NULL: free */
                shim_lock_bytes bytes;
        } cached[SHIM_LOCK_CACHED];     /* Secure Boot on: loaded by Verify, not yet claimed */
        size_t cached_next;             /* the slot to use (and evict) next */
        shim_lock_bytes measured[SHIM_LOCK_MEASURED];   /* Secure Boot off */
        size_t measured_next;
        /* For the rest of the boot, once set (a protocol may outlive a
         * next stage that returned, and the firmware does not change). */
        bool selftest_done;
        bool fail_closed;               /* the firmware accepted the unsigned self-test image */
} shim_lock;

/* ---- which bytes were seen ------------------------------------------------- */

static EFI_STATUS bytes_of(const void *buf, UINTN size, shim_lock_bytes *ret) {
        if (!buf || size == 0 || mb_hash_buf(MB_ALG_SHA256, buf, size, ret->sha256) != MB_OK)
                return EFI_SECURITY_VIOLATION;
        ret->size = size;
        return EFI_SUCCESS;
}

static bool bytes_equal(const shim_lock_bytes *a, const shim_lock_bytes *b) {
        return a->size != 0 && a->size == b->size && CompareMem((void *) a->sha256, (void *) b->sha256, 32) == 0;
}

static bool measured_has(const shim_lock_bytes *b) {
        for (size_t i = 0; i < SHIM_LOCK_MEASURED; i++)
                if (bytes_equal(&shim_lock.measured[i], b))
                        return true;
        return false;
}

static void measured_add(const shim_lock_bytes *b) {
        shim_lock.measured[shim_lock.measured_next] = *b;
        shim_lock.measured_next = (shim_lock.measured_next + 1) % SHIM_LOCK_MEASURED;
}

/* ---- the cache of the image Verify loaded --------------------------------- */

static void cache_free(size_t i) {
        if (shim_lock.cached[i].handle)
                BS->UnloadImage(shim_lock.cached[i].handle);
        shim_lock.cached[i].handle = NULL;
        shim_lock.cached[i].bytes.size = 0;
}

static void cache_drop(void) {
        for (size_t i = 0; i < SHIM_LOCK_CACHED; i++)
                cache_free(i);
}

/* The slot holding an image of these bytes, or SHIM_LOCK_CACHED. */
static size_t cache_find(const shim_lock_bytes *b) {
        size_t i;

        for (i = 0; i < SHIM_LOCK_CACHED; i++)
                if (shim_lock.cached[i].handle && bytes_equal(&shim_lock.cached[i].bytes, b))
                        break;
        return i;
}

static bool cache_has_size(UINTN size) {
        for (size_t i = 0; i < SHIM_LOCK_CACHED; i++)
                if (shim_lock.cached[i].handle && shim_lock.cached[i].bytes.size == size)
                        return true;
        return false;
}

/* Keep h for the LoadImage (or the second Verify) that normally follows,
 * in a free slot, else in place of the oldest. */
static void cache_put(EFI_HANDLE h, const shim_lock_bytes *b) {
        size_t i = shim_lock.cached_next;

        cache_free(i);
        shim_lock.cached[i].handle = h;
        shim_lock.cached[i].bytes = *b;
        shim_lock.cached_next = (i + 1) % SHIM_LOCK_CACHED;
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

/* gBS->LoadImage while a next stage runs (Secure Boot on): the image
 * Verify just loaded is handed out instead of being loaded (and measured)
 * again; anything else is checked against the SBAT policy, as Verify
 * checks, and then goes to the firmware unchanged. */
static EFI_STATUS EFIAPI hooked_load_image(BOOLEAN boot_policy, EFI_HANDLE parent, EFI_DEVICE_PATH *dp,
                                           VOID *src, UINTN size, EFI_HANDLE *ret) {
        shim_lock_bytes b;
        size_t i;

        /* Hash only what could be in the cache: LoadImage also loads
         * large images mshim never verified. */
        if (ret && cache_has_size(size) && !EFI_ERROR(bytes_of(src, size, &b)) &&
            (i = cache_find(&b)) < SHIM_LOCK_CACHED) {
                EFI_HANDLE h = shim_lock.cached[i].handle;

                shim_lock.cached[i].handle = NULL;      /* claimed: now the caller's */
                shim_lock.cached[i].bytes.size = 0;
                cache_adopt(h, parent, dp);
                *ret = h;
                return EFI_SUCCESS;
        }
        if (shim_lock.fail_closed)
                return mshim_log(EFI_SECURITY_VIOLATION,
                                 L"LoadImage: refused: the firmware failed mshim's Secure Boot self-test");
        /* A NULL src (load by device path alone) is refused here when a
         * policy is set: mshim does not read the file itself. */
        if (EFI_ERROR(mshim_sbat_check(src, src ? size : 0, L"LoadImage", false)))
                return EFI_SECURITY_VIOLATION;
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

/* LoadImage from a buffer, with a file device path on mshim's volume:
 * EDK2's DxeCore runs the legacy Security Arch check only when a path is
 * given (a firmware verifying through that alone would pass any image
 * loaded with a NULL path), and DxeImageVerificationLib picks its policy
 * from the path's origin. */
static EFI_STATUS firmware_load_as(const CHAR16 *path, void *buffer, UINTN size, EFI_HANDLE *ret) {
        EFI_DEVICE_PATH *dp;
        EFI_STATUS st;

        dp = FileDevicePath(shim_lock.device, (CHAR16 *) path);
        if (!dp)
                return EFI_OUT_OF_RESOURCES;
        st = shim_lock.firmware_load(FALSE, shim_lock.image, dp, buffer, size, ret);
        FreePool(dp);
        return st;
}

/* Secure Boot off: nothing to check, but shim's Verify measures what it
 * is given (tpm_log_pe, PCR 4), and so does this, once: the same bytes
 * again (Debian's GRUB 2.06 verifies the kernel twice) are not measured
 * again. An image that could not be measured is refused. */
static EFI_STATUS verify_measure(void *buffer, UINTN size) {
        shim_lock_bytes b;
        EFI_STATUS st;

        if (EFI_ERROR(bytes_of(buffer, size, &b)))
                return EFI_SECURITY_VIOLATION;
        if (measured_has(&b))
                return EFI_SUCCESS;
        st = mshim_tpm_measure_pe(shim_lock.tpm, buffer, size);
        if (EFI_ERROR(st))
                return mshim_log(EFI_SECURITY_VIOLATION,
                                 L"SHIM_LOCK Verify: image of %ld bytes refused: it could not be measured (%r)",
                                 (UINT64) size, st);
        measured_add(&b);
        return EFI_SUCCESS;
}

/* Secure Boot on: SBAT, then the firmware's own verification (and its
 * PCR 4 event) through LoadImage; the loaded image is kept. */
static EFI_STATUS verify_secure_boot(void *buffer, UINTN size) {
        shim_lock_bytes b;
        EFI_HANDLE h = NULL;
        EFI_STATUS st;

        if (shim_lock.fail_closed)
                return mshim_log(EFI_SECURITY_VIOLATION,
                                 L"SHIM_LOCK Verify: refused: the firmware failed mshim's Secure Boot self-test");
        if (!shim_lock.firmware_load)
                return EFI_SECURITY_VIOLATION;  /* cannot happen: installed with the hook */
        /* The same bytes again (Debian's GRUB 2.06 verifies the kernel
         * twice, from two copies: its verifier framework, then linuxefi):
         * the firmware already accepted them, and asking again would
         * load and measure them a second time. */
        if (EFI_ERROR(bytes_of(buffer, size, &b)))
                return EFI_SECURITY_VIOLATION;
        if (cache_find(&b) < SHIM_LOCK_CACHED)
                return EFI_SUCCESS;
        /* Before LoadImage: a revoked image gets no PCR 4 event. As shim,
         * an image verified through the protocol may lack .sbat. */
        if (EFI_ERROR(mshim_sbat_check(buffer, size, L"SHIM_LOCK Verify", false)))
                return EFI_SECURITY_VIOLATION;

        st = firmware_load_as(MSHIM_VERIFY_PATH, buffer, size, &h);
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
        cache_put(h, &b);
        return EFI_SUCCESS;
}

static EFI_STATUS SHIMAPI shim_lock_verify(void *buffer, UINT32 size) {
        mb_pe pe;

        if (!buffer || size == 0)
                return EFI_INVALID_PARAMETER;
        /* As shim's read_header, with Secure Boot on or off: only a PE
         * image can be verified (or measured as one). */
        if (mb_pe_parse(buffer, size, &pe) != MB_OK)
                return mshim_log(EFI_UNSUPPORTED, L"SHIM_LOCK Verify: %ld bytes refused: not a PE image", (UINT64) size);
        if (!mshim_secure_boot_enabled())
                return verify_measure(buffer, size);
        return verify_secure_boot(buffer, size);
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

/* Once a boot, with Secure Boot on: the firmware must refuse an unsigned
 * image that Verify would hand it, loaded the way Verify loads. If it
 * does not, Verify (and the hook) refuse every image from now on. */
static void shim_lock_selftest(void) {
        UINTN size = (UINTN) mshim_selftest_unsigned_size;
        EFI_HANDLE h = NULL;
        EFI_STATUS st;

        if (shim_lock.selftest_done)
                return;
        shim_lock.selftest_done = true;
        st = firmware_load_as(MSHIM_SELFTEST_PATH, (void *) mshim_selftest_unsigned, size, &h);
        /* Loaded (or loaded but not startable): unload it either way. */
        if (h && (!EFI_ERROR(st) || st == EFI_SECURITY_VIOLATION))
                BS->UnloadImage(h);
        if (st == EFI_ACCESS_DENIED || st == EFI_SECURITY_VIOLATION) {
                mshim_log(EFI_SUCCESS, L"SHIM_LOCK self-test: the firmware refused an unsigned image (%r)", st);
                return;
        }
        shim_lock.fail_closed = true;
        mshim_log(EFI_SECURITY_VIOLATION,
                  L"SHIM_LOCK self-test FAILED: the firmware did not refuse an unsigned image (%r); Verify refuses every image in this boot",
                  st);
}

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
        shim_lock.device = c->device;
        shim_lock.tpm = &c->tpm;
        mb_memset(shim_lock.measured, 0, sizeof(shim_lock.measured));
        /* The hook only matters when Verify loads images, i.e. with
         * Secure Boot on. */
        if (mshim_secure_boot_enabled() && !shim_lock.firmware_load) {
                shim_lock.firmware_load = BS->LoadImage;
                shim_lock_selftest();
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
