/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * mshim's efi_main booted on the fake firmware (tests/efiharness): the
 * direct kernel path and the chainload path, what is measured, what the
 * started image gets, and what mshim leaves behind on every way out.
 * Expected values are spelled out here (UTF-16LE command lines, the
 * TCG_PCClientTaggedEvent layout of docs/MEASUREMENTS.md), never read back
 * from the loader.
 */
#include <stdlib.h>
#include <string.h>
#include "harness.h"

#define EV_IPL       0x0000000d
#define EV_EVENT_TAG 0x00000006

static const char entry_conf[] =
        "title Debian\n"
        "linux /vmlinuz\n"
        "initrd /initrd.img\n"
        "options root=/dev/sda1 quiet\n";
static const char initrd_bytes[] = "initrd: a cpio archive";

/* UTF-16LE of s with its NUL, as the loader must hand it on. */
static size_t utf16le(const char *s, uint8_t *out) {
        size_t n = 0;

        for (; *s; s++) {
                out[n++] = (uint8_t) *s;
                out[n++] = 0;
        }
        out[n++] = 0;
        out[n++] = 0;
        return n;
}

/* ---- what the fake kernel checks when started --------------------------------------- */

static struct {
        bool initrd_ok, options_ok;
} seen;

/* The Linux stub's view (drivers/firmware/efi/libstub/efi-stub-helper.c):
 * LocateDevicePath on the initrd media path, then LoadFile2. */
static EFI_STATUS kernel_reads_initrd(void) {
        struct {
                VENDOR_DEVICE_PATH vendor;
                EFI_DEVICE_PATH end;
        } __attribute__((packed)) dp = {
                .vendor = { .Header = { MEDIA_DEVICE_PATH, MEDIA_VENDOR_DP, { sizeof(VENDOR_DEVICE_PATH), 0 } },
                            .Guid = fh_initrd_media_guid },
                .end = { END_DEVICE_PATH_TYPE, END_ENTIRE_DEVICE_PATH_SUBTYPE, { sizeof(EFI_DEVICE_PATH), 0 } },
        };
        EFI_DEVICE_PATH *p = (EFI_DEVICE_PATH *) &dp;
        EFI_LOAD_FILE_PROTOCOL *lf = NULL;
        EFI_HANDLE h = NULL;
        char buf[64];
        UINTN size = 0;

        if (BS->LocateDevicePath(&fh_load_file2_guid, &p, &h) != EFI_SUCCESS ||
            BS->HandleProtocol(h, &fh_load_file2_guid, (void **) &lf) != EFI_SUCCESS)
                return EFI_NOT_FOUND;
        if (lf->LoadFile(lf, p, FALSE, &size, NULL) != EFI_BUFFER_TOO_SMALL || size != sizeof(initrd_bytes) - 1)
                return EFI_BAD_BUFFER_SIZE;
        if (lf->LoadFile(lf, p, FALSE, &size, buf) != EFI_SUCCESS)
                return EFI_DEVICE_ERROR;
        return memcmp(buf, initrd_bytes, size) == 0 ? EFI_SUCCESS : EFI_CRC_ERROR;
}

static EFI_STATUS kernel_entry(EFI_HANDLE image, EFI_SYSTEM_TABLE *st) {
        EFI_LOADED_IMAGE *li = NULL;
        uint8_t want[128];
        size_t n = utf16le("root=/dev/sda1 quiet", want);

        seen.initrd_ok = kernel_reads_initrd() == EFI_SUCCESS;
        if (st->BootServices->HandleProtocol(image, &LoadedImageProtocol, (void **) &li) == EFI_SUCCESS)
                seen.options_ok = li->LoadOptionsSize == n && memcmp(li->LoadOptions, want, n) == 0;
        return EFI_LOAD_ERROR;  /* a kernel that fails: mshim gets control back */
}

static void esp_one_entry(void) {
        static const fh_image_spec kernel = { .entry = kernel_entry };

        fh_file_str("/loader/entries/debian.conf", entry_conf);
        fh_image("/vmlinuz", &kernel);
        fh_file("/initrd.img", initrd_bytes, sizeof(initrd_bytes) - 1);
}

FH_CASE(direct_boot_measures_entry_and_cmdline) {
        static const char path[] = "\\loader\\entries\\debian.conf";
        uint8_t tagged[8 + 2 * sizeof(path)], cmdline[128];
        size_t plen = utf16le(path, tagged + 8), clen = utf16le("root=/dev/sda1 quiet", cmdline);
        const fh_event *e5 = NULL, *e12 = NULL;
        fh_result r;

        esp_one_entry();
        r = fh_boot();
        FH_CHECK(r.returned);
        FH_CHECK_EQ(fh_calls("StartImage"), 1);
        FH_CHECK(seen.initrd_ok);
        FH_CHECK(seen.options_ok);
        for (size_t i = 0; i < fh_n_events(); i++) {
                const fh_event *e = fh_event_at(i);
                if (e->pcr == 5 && !e->by_firmware)
                        e5 = e;
                if (e->pcr == 12)
                        e12 = e;
        }
        /* PCR 5: TCG_PCClientTaggedEvent {tag, size, path UTF-16LE + NUL}
         * over the file bytes (docs/MEASUREMENTS.md). */
        FH_CHECK(e5 != NULL);
        if (e5) {
                FH_CHECK_EQ(e5->type, EV_EVENT_TAG);
                FH_CHECK_EQ(e5->event_size, 8 + plen);
                FH_CHECK_EQ(e5->event[4] | e5->event[5] << 8, plen);
                FH_CHECK(memcmp(e5->event + 8, tagged + 8, plen) == 0);
                FH_CHECK(e5->data_size == strlen(entry_conf) && memcmp(e5->data, entry_conf, e5->data_size) == 0);
        }
        /* PCR 12: EV_IPL, event and digest both the UTF-16LE command line. */
        FH_CHECK(e12 != NULL);
        if (e12) {
                FH_CHECK_EQ(e12->type, EV_IPL);
                FH_CHECK(e12->event_size == clen && memcmp(e12->event, cmdline, clen) == 0);
                FH_CHECK(e12->data_size == clen && memcmp(e12->data, cmdline, clen) == 0);
        }
        FH_CHECK_EQ(r.leaked, 0);
        FH_CHECK_CLEAN();
}

int main(void) {
        FH_RUN(direct_boot_measures_entry_and_cmdline);
        return fh_exit_status();
}
