/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * SHIM_LOCK as a next stage sees it: a chainloaded image locates the
 * protocol and calls it with shim's calling convention (System V on
 * x86_64, efi/shimlock.c). This file is also the pattern for Verify and
 * Hash cases: put the calls in the image's entry function.
 */
#include <string.h>
#include "harness.h"
#include "mb/base.h"

#define SHIMAPI __attribute__((sysv_abi))

/* shim's PE_COFF_LOADER_IMAGE_CONTEXT (its include/peimage.h), spelled out
 * here again on purpose: the test must not share the loader's declaration. */
typedef struct {
        UINT64 ImageAddress, ImageSize, EntryPoint;
        UINTN SizeOfHeaders;
        UINT16 ImageType, NumberOfSections;
        UINT32 SectionAlignment;
        void *FirstSection, *RelocDir, *SecDir;
        UINT64 NumberOfRvaAndSizes;
        void *PEHdr;
} pe_context;

typedef struct {
        EFI_STATUS SHIMAPI (*Verify)(void *buffer, UINT32 size);
        EFI_STATUS SHIMAPI (*Hash)(char *data, int size, pe_context *ctx, UINT8 *sha256, UINT8 *sha1);
        EFI_STATUS SHIMAPI (*Context)(void *data, unsigned int size, pe_context *ctx);
} shim_lock;

/* A PE32+ image: headers 0x200, one section .text (file 0x200-0x400,
 * memory 0x1000 + 0x200), SizeOfImage 0x2000, entry 0x1000. */
#define P_LFANEW 0x40
#define P_OPT    (P_LFANEW + 24)
#define P_SECT   (P_OPT + 240)
#define P_SIZE   0x400

static void build_pe(uint8_t *b) {
        memset(b, 0, P_SIZE);
        b[0] = 'M';
        b[1] = 'Z';
        mb_put_le32(b + 0x3c, P_LFANEW);
        memcpy(b + P_LFANEW, "PE\0\0", 4);
        mb_put_le16(b + P_LFANEW + 4, 0x8664);
        mb_put_le16(b + P_LFANEW + 6, 1);                      /* NumberOfSections */
        mb_put_le16(b + P_LFANEW + 20, 240);                   /* SizeOfOptionalHeader */
        mb_put_le16(b + P_OPT, 0x20b);
        mb_put_le32(b + P_OPT + 16, 0x1000);                   /* AddressOfEntryPoint */
        mb_put_le32(b + P_OPT + 28, 0x1);                      /* ImageBase 0x140000000 */
        mb_put_le32(b + P_OPT + 24, 0x40000000);
        mb_put_le32(b + P_OPT + 32, 0x1000);                   /* SectionAlignment */
        mb_put_le32(b + P_OPT + 36, 0x200);                    /* FileAlignment */
        mb_put_le32(b + P_OPT + 56, 0x2000);                   /* SizeOfImage */
        mb_put_le32(b + P_OPT + 60, 0x200);                    /* SizeOfHeaders */
        mb_put_le16(b + P_OPT + 68, 10);                       /* Subsystem */
        mb_put_le32(b + P_OPT + 108, 16);                      /* NumberOfRvaAndSizes */
        memcpy(b + P_SECT, ".text", 5);
        mb_put_le32(b + P_SECT + 8, 0x200);                    /* VirtualSize */
        mb_put_le32(b + P_SECT + 12, 0x1000);                  /* VirtualAddress */
        mb_put_le32(b + P_SECT + 16, 0x200);                   /* SizeOfRawData */
        mb_put_le32(b + P_SECT + 20, 0x200);                   /* PointerToRawData */
}

static struct {
        bool found;
        EFI_STATUS good, entry_outside, headers_over_image, section_outside;
        pe_context ctx;
} got;

static EFI_STATUS calls_context(EFI_HANDLE image, EFI_SYSTEM_TABLE *st) {
        static uint8_t b[P_SIZE];
        shim_lock *sl = NULL;
        pe_context ctx;

        if (st->BootServices->LocateProtocol(&fh_shim_lock_guid, NULL, (void **) &sl) != EFI_SUCCESS || !sl)
                return EFI_NOT_FOUND;
        got.found = true;
        build_pe(b);
        got.good = sl->Context(b, P_SIZE, &got.ctx);
        mb_put_le32(b + P_OPT + 16, 0x2000);                   /* entry point at SizeOfImage */
        got.entry_outside = sl->Context(b, P_SIZE, &ctx);
        build_pe(b);
        mb_put_le32(b + P_OPT + 56, 0x1ff);                    /* SizeOfImage < SizeOfHeaders */
        mb_put_le32(b + P_OPT + 16, 0x100);
        got.headers_over_image = sl->Context(b, P_SIZE, &ctx);
        build_pe(b);
        mb_put_le32(b + P_SECT + 8, 0x1001);                   /* .text ends at 0x2001 */
        got.section_outside = sl->Context(b, P_SIZE, &ctx);
        return EFI_LOAD_ERROR;
}

FH_CASE(shim_lock_context_refuses_what_shim_refuses) {
        fh_result r;

        fh_image("/EFI/BOOT/grubx64.efi", &(fh_image_spec) { .entry = calls_context });
        r = fh_boot();
        FH_CHECK(r.returned);
        FH_CHECK(got.found);
        FH_CHECK_EQ(got.good, EFI_SUCCESS);
        FH_CHECK_EQ(got.ctx.ImageSize, 0x2000);
        FH_CHECK_EQ(got.ctx.EntryPoint, 0x1000);
        FH_CHECK_EQ(got.ctx.SizeOfHeaders, 0x200);
        FH_CHECK_EQ(got.ctx.NumberOfSections, 1);
        FH_CHECK_EQ(got.ctx.ImageAddress, 0x140000000ull);
        FH_CHECK_EQ(got.entry_outside, EFI_UNSUPPORTED);
        FH_CHECK_EQ(got.headers_over_image, EFI_UNSUPPORTED);
        FH_CHECK_EQ(got.section_outside, EFI_UNSUPPORTED);
        FH_CHECK_CLEAN();
}

/* ---- Verify, as Debian's GRUB uses it under Secure Boot --------------------------- */

static struct {
        EFI_STATUS verify_good, verify_again, verify_bad, load;
} ver;

/* The bytes of an ESP file the test declared (the fake's image files). */
static const uint8_t *esp_bytes(EFI_FILE_HANDLE root, const CHAR16 *path, UINTN *size, uint8_t *buf) {
        EFI_FILE_HANDLE f;

        if (root->Open(root, &f, (CHAR16 *) path, EFI_FILE_MODE_READ, 0) != EFI_SUCCESS)
                return NULL;
        f->Read(f, size, buf);
        f->Close(f);
        return buf;
}

/* What a next stage verifying two ESP files has: SHIM_LOCK and the bytes
 * of the files at pa and pb (each at most 2048 bytes). */
static shim_lock *two_files(EFI_HANDLE image, EFI_BOOT_SERVICES *bs, const CHAR16 *pa, uint8_t *a, UINTN *asize,
                            const CHAR16 *pb, uint8_t *b, UINTN *bsize) {
        EFI_SIMPLE_FILE_SYSTEM_PROTOCOL *fs = NULL;
        EFI_LOADED_IMAGE *li = NULL;
        EFI_FILE_HANDLE root = NULL;
        shim_lock *sl = NULL;
        bool ok;

        if (bs->LocateProtocol(&fh_shim_lock_guid, NULL, (void **) &sl) != EFI_SUCCESS ||
            bs->HandleProtocol(image, &LoadedImageProtocol, (void **) &li) != EFI_SUCCESS ||
            bs->HandleProtocol(li->DeviceHandle, &FileSystemProtocol, (void **) &fs) != EFI_SUCCESS ||
            fs->OpenVolume(fs, &root) != EFI_SUCCESS)
                return NULL;
        ok = esp_bytes(root, pa, asize, a) && esp_bytes(root, pb, bsize, b);
        root->Close(root);
        return ok ? sl : NULL;
}

static EFI_STATUS grub_verifies(EFI_HANDLE image, EFI_SYSTEM_TABLE *st) {
        EFI_BOOT_SERVICES *bs = st->BootServices;
        static uint8_t kernel[2048], bad[2048];
        UINTN ksize = sizeof(kernel), bsize = sizeof(bad);
        EFI_HANDLE h = NULL;
        shim_lock *sl = two_files(image, bs, L"\\vmlinuz", kernel, &ksize, L"\\unsigned.efi", bad, &bsize);

        if (!sl)
                return EFI_NOT_FOUND;
        ver.verify_good = sl->Verify(kernel, (UINT32) ksize);
        /* GRUB 2.06 verifies the kernel twice, from two copies. */
        ver.verify_again = sl->Verify(kernel, (UINT32) ksize);
        ver.verify_bad = sl->Verify(bad, (UINT32) bsize);
        ver.load = bs->LoadImage(FALSE, image, NULL, kernel, ksize, &h);
        if (ver.load == EFI_SUCCESS)
                bs->UnloadImage(h);
        return EFI_LOAD_ERROR;
}

/* The firmware's verdict is Verify's, and the kernel is measured into
 * PCR 4 once however often it is verified and loaded. */
FH_CASE(shim_lock_verify_asks_the_firmware_once) {
        static const fh_image_spec kernel = { 0 }, unsigned_pe = { .load_status = EFI_ACCESS_DENIED };
        size_t kernel_events = 0;
        const fh_node_bytes *k;
        fh_result r;

        fh_secure_boot(true);
        fh_image("/vmlinuz", &kernel);
        fh_image("/unsigned.efi", &unsigned_pe);
        fh_image("/EFI/BOOT/grubx64.efi", &(fh_image_spec) { .entry = grub_verifies });
        r = fh_boot();
        FH_CHECK(r.returned);
        FH_CHECK_EQ(ver.verify_good, EFI_SUCCESS);
        FH_CHECK_EQ(ver.verify_again, EFI_SUCCESS);
        FH_CHECK_EQ(ver.verify_bad, EFI_SECURITY_VIOLATION);
        FH_CHECK_EQ(ver.load, EFI_SUCCESS);
        k = fh_file_bytes("/vmlinuz");
        for (size_t i = 0; k && i < fh_n_events(); i++) {
                const fh_event *e = fh_event_at(i);
                kernel_events += e->pcr == 4 && e->data_size == k->size && memcmp(e->data, k->data, k->size) == 0;
        }
        FH_CHECK_EQ(kernel_events, 1);
        FH_CHECK_CLEAN();
}

/* A firmware that does not refuse mshim's unsigned self-test image cannot
 * be trusted to verify: Verify refuses everything for the rest of the boot
 * (issue 9, point 6). OVMF cannot produce this; the fake can. */
FH_CASE(firmware_accepting_the_unsigned_self_test_fails_closed) {
        static const fh_image_spec kernel = { 0 }, unsigned_pe = { .load_status = EFI_ACCESS_DENIED };

        fh_secure_boot(true);
        fh_selftest_verdict(EFI_SUCCESS);
        fh_image("/vmlinuz", &kernel);
        fh_image("/unsigned.efi", &unsigned_pe);
        fh_image("/EFI/BOOT/grubx64.efi", &(fh_image_spec) { .entry = grub_verifies });
        fh_boot();
        FH_CHECK(fh_console_has("SHIM_LOCK self-test FAILED"));
        FH_CHECK_EQ(ver.verify_good, EFI_SECURITY_VIOLATION);
        FH_CHECK_EQ(ver.verify_again, EFI_SECURITY_VIOLATION);
        FH_CHECK_EQ(ver.verify_bad, EFI_SECURITY_VIOLATION);
        FH_CHECK(ver.load != EFI_SUCCESS);
        FH_CHECK_CLEAN();
}

/* Secure Boot off: Verify measures what it is given into PCR 4 itself
 * (PE_COFF_IMAGE, as shim), once for the same bytes, and a TPM that fails
 * there makes Verify refuse. */
FH_CASE(verify_with_secure_boot_off_measures_once) {
        static const fh_image_spec kernel = { 0 }, other = { 0 };
        size_t pe_events = 0;

        fh_image("/vmlinuz", &kernel);
        fh_image("/unsigned.efi", &other);
        fh_image("/EFI/BOOT/grubx64.efi", &(fh_image_spec) { .entry = grub_verifies });
        fh_boot();
        FH_CHECK_EQ(ver.verify_good, EFI_SUCCESS);
        FH_CHECK_EQ(ver.verify_again, EFI_SUCCESS);
        for (size_t i = 0; i < fh_n_events(); i++) {
                const fh_event *e = fh_event_at(i);
                pe_events += e->pcr == 4 && !e->by_firmware && (e->flags & 0x10);
        }
        FH_CHECK_EQ(pe_events, 2);      /* the kernel once, the other image once */
        FH_CHECK_CLEAN();
}

/* A next stage that verifies two images, then the first again, then
 * loads both (GRUB with a kernel and another entry's). */
static struct {
        EFI_STATUS verify[3], load[2];
} two;

static EFI_STATUS grub_verifies_two(EFI_HANDLE image, EFI_SYSTEM_TABLE *st) {
        EFI_BOOT_SERVICES *bs = st->BootServices;
        static uint8_t a[2048], b[2048];
        UINTN asize = sizeof(a), bsize = sizeof(b);
        EFI_HANDLE h = NULL;
        shim_lock *sl = two_files(image, bs, L"\\vmlinuz", a, &asize, L"\\other.efi", b, &bsize);

        if (!sl)
                return EFI_NOT_FOUND;
        two.verify[0] = sl->Verify(a, (UINT32) asize);
        two.verify[1] = sl->Verify(b, (UINT32) bsize);
        two.verify[2] = sl->Verify(a, (UINT32) asize);
        two.load[0] = bs->LoadImage(FALSE, image, NULL, a, asize, &h);
        if (two.load[0] == EFI_SUCCESS)
                bs->UnloadImage(h);
        two.load[1] = bs->LoadImage(FALSE, image, NULL, b, bsize, &h);
        if (two.load[1] == EFI_SUCCESS)
                bs->UnloadImage(h);
        return EFI_LOAD_ERROR;
}

/* PCR 4 events whose data is the ESP file at path (the fake firmware
 * logs an image's bytes; Verify's own events with Secure Boot off too). */
static size_t events_of(const char *path) {
        const fh_node_bytes *k = fh_file_bytes(path);
        size_t n = 0;

        for (size_t i = 0; k && i < fh_n_events(); i++) {
                const fh_event *e = fh_event_at(i);
                n += e->pcr == 4 && e->data_size == k->size && memcmp(e->data, k->data, k->size) == 0;
        }
        return n;
}

/* Verifying A, B, then A again loads (Secure Boot on) or measures (off)
 * each once: the cache holds more than one image. */
static void verify_a_b_a(bool secure_boot) {
        static const fh_image_spec plain = { 0 };

        fh_secure_boot(secure_boot);
        fh_image("/vmlinuz", &plain);
        fh_image("/other.efi", &plain);
        fh_image("/EFI/BOOT/grubx64.efi", &(fh_image_spec) { .entry = grub_verifies_two });
        fh_boot();
        for (int i = 0; i < 3; i++)
                FH_CHECK_EQ(two.verify[i], EFI_SUCCESS);
        FH_CHECK_EQ(two.load[0], EFI_SUCCESS);
        FH_CHECK_EQ(two.load[1], EFI_SUCCESS);
}

FH_CASE(verify_a_b_a_loads_each_once) {
        verify_a_b_a(true);
        FH_CHECK_EQ(events_of("/vmlinuz"), 1);
        FH_CHECK_EQ(events_of("/other.efi"), 1);
        FH_CHECK_CLEAN();
}

/* Secure Boot off: Verify measures A and B once each; the LoadImages then
 * go to the firmware, which measures again (no hook without Secure Boot:
 * docs/SHIM_LOCK.md, "Not done"). */
FH_CASE(verify_a_b_a_measures_each_once) {
        size_t verify_events = 0;

        verify_a_b_a(false);
        for (size_t i = 0; i < fh_n_events(); i++) {
                const fh_event *e = fh_event_at(i);
                verify_events += e->pcr == 4 && !e->by_firmware && (e->flags & 0x10);
        }
        FH_CHECK_EQ(verify_events, 2);
        FH_CHECK_CLEAN();
}

FH_CASE(verify_refuses_an_image_it_could_not_measure) {
        static const fh_image_spec kernel = { 0 }, other = { 0 };

        fh_image("/vmlinuz", &kernel);
        fh_image("/unsigned.efi", &other);
        fh_image("/EFI/BOOT/grubx64.efi", &(fh_image_spec) { .entry = grub_verifies });
        fh_tpm_fail(4, EFI_DEVICE_ERROR);       /* loader.conf, the chainload options, the TOTP lock, then Verify's */
        fh_boot();
        FH_CHECK(ver.verify_good != EFI_SUCCESS);
        FH_CHECK(fh_console_has("failed to measure an image given to SHIM_LOCK Verify"));
        FH_CHECK_CLEAN();
}

int main(void) {
        FH_RUN(shim_lock_context_refuses_what_shim_refuses);
        FH_RUN(shim_lock_verify_asks_the_firmware_once);
        FH_RUN(firmware_accepting_the_unsigned_self_test_fails_closed);
        FH_RUN(verify_with_secure_boot_off_measures_once);
        FH_RUN(verify_a_b_a_loads_each_once);
        FH_RUN(verify_a_b_a_measures_each_once);
        FH_RUN(verify_refuses_an_image_it_could_not_measure);
        return fh_exit_status();
}
