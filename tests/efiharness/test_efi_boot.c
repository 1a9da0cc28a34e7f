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
#include <unistd.h>
#include <sys/wait.h>
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

static EFI_STATUS kernel_reads_initrd(void) {
        char buf[64];
        size_t size = 0;
        EFI_STATUS st = fh_stub_load_initrd(buf, sizeof(buf), &size);

        if (st != EFI_SUCCESS)
                return st;
        if (size != sizeof(initrd_bytes) - 1)
                return EFI_BAD_BUFFER_SIZE;
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

/* TCG_PCClientTaggedEvent {tag, size, data} (PC Client PFP 10.4.2), LE. */
static size_t tagged_event(uint32_t tag, const uint8_t *data, size_t n, uint8_t *out) {
        for (int i = 0; i < 4; i++) {
                out[i] = (uint8_t) (tag >> (8 * i));
                out[4 + i] = (uint8_t) (n >> (8 * i));
        }
        if (n)
                memcpy(out + 8, data, n);
        return 8 + n;
}

/* mshim's events in one PCR, in order (the fake firmware's own excluded). */
static size_t mshim_events(uint32_t pcr, const fh_event **out, size_t max) {
        size_t n = 0;

        for (size_t i = 0; i < fh_n_events(); i++) {
                const fh_event *e = fh_event_at(i);
                if (e->pcr == pcr && !e->by_firmware && n < max)
                        out[n++] = e;
        }
        return n;
}

static void check_event(const fh_event *e, uint32_t type, const uint8_t *ev, size_t ev_size,
                        const uint8_t *data, size_t data_size) {
        FH_CHECK_EQ(e->type, type);
        FH_CHECK(e->event_size == ev_size && memcmp(e->event, ev, ev_size) == 0);
        FH_CHECK(e->data_size == data_size && memcmp(e->data, data, data_size) == 0);
}

/* No loader.conf, one entry whose kernel returns: docs/MEASUREMENTS.md's
 * sequence, byte for byte. PCR 5: loader.conf absent (digest over the
 * event data), the entry (digest over the event data then the file), the
 * exit marker; PCR 12: the command line, the exit marker. */
FH_CASE(direct_boot_measures_entry_and_cmdline) {
        uint8_t conf_path[128], entry_path[128], absent[256], entry_ev[256], entry_in[512], exit_ev[8];
        uint8_t cmdline[128];
        size_t lc = utf16le("\\loader\\loader.conf", conf_path);
        size_t le = utf16le("\\loader\\entries\\debian.conf", entry_path);
        size_t na = tagged_event(0x6d736803, conf_path, lc, absent);
        size_t ne = tagged_event(0x6d736802, entry_path, le, entry_ev);
        size_t nx = tagged_event(0x6d736807, NULL, 0, exit_ev);
        size_t clen = utf16le("root=/dev/sda1 quiet", cmdline);
        const fh_event *e5[8], *e12[8];
        fh_result r;

        memcpy(entry_in, entry_ev, ne);
        memcpy(entry_in + ne, entry_conf, strlen(entry_conf));
        esp_one_entry();
        r = fh_boot();
        FH_CHECK(r.returned);
        FH_CHECK_EQ(fh_calls("StartImage"), 1);
        FH_CHECK(seen.initrd_ok);
        FH_CHECK(seen.options_ok);
        FH_CHECK_EQ(mshim_events(5, e5, 8), 3);
        FH_CHECK_EQ(mshim_events(12, e12, 8), 2);
        if (mshim_events(5, e5, 8) == 3) {
                check_event(e5[0], EV_EVENT_TAG, absent, na, absent, na);
                check_event(e5[1], EV_EVENT_TAG, entry_ev, ne, entry_in, ne + strlen(entry_conf));
                check_event(e5[2], EV_EVENT_TAG, exit_ev, nx, exit_ev, nx);
        }
        if (mshim_events(12, e12, 8) == 2) {
                check_event(e12[0], EV_IPL, cmdline, clen, cmdline, clen);
                check_event(e12[1], EV_EVENT_TAG, exit_ev, nx, exit_ev, nx);
        }
        FH_CHECK_EQ(r.leaked, 0);
        FH_CHECK_CLEAN();
}

/* An entry that does not parse is measured (tag 0x6d736805, its bytes in
 * the digest) before the good one is tried; a loader.conf that exists is
 * measured with its bytes. */
FH_CASE(unparseable_entry_is_measured_before_it_is_skipped) {
        static const char broken[] = "title broken\noptions init=/bin/sh\n";
        static const char conf[] = "timeout 0\n";
        uint8_t path[128], ev[256], in[512];
        const fh_event *e5[8];
        size_t n, k;

        esp_one_entry();
        fh_file_str("/loader/entries/0-broken.conf", broken);
        fh_file_str("/loader/loader.conf", conf);
        fh_boot();
        FH_CHECK_EQ(fh_calls("StartImage"), 1);
        k = mshim_events(5, e5, 8);
        FH_CHECK_EQ(k, 4);      /* loader.conf, the broken entry, debian.conf, exit */
        if (k == 4) {
                n = tagged_event(0x6d736801, path, utf16le("\\loader\\loader.conf", path), ev);
                memcpy(in, ev, n);
                memcpy(in + n, conf, strlen(conf));
                check_event(e5[0], EV_EVENT_TAG, ev, n, in, n + strlen(conf));
                n = tagged_event(0x6d736805, path, utf16le("\\loader\\entries\\0-broken.conf", path), ev);
                memcpy(in, ev, n);
                memcpy(in + n, broken, strlen(broken));
                check_event(e5[1], EV_EVENT_TAG, ev, n, in, n + strlen(broken));
        }
        FH_CHECK_CLEAN();
}

/* Issue 20, finding 8: an entry whose options hold "initrd=" (the Linux
 * stub would load that file itself, measured by nobody) is skipped with a
 * message naming it and measured as unusable (tag 0x6d736805, its bytes);
 * the good entry boots. */
FH_CASE(entry_with_initrd_option_is_skipped) {
        static const char evil[] = "title evil\nlinux /vmlinuz\noptions quiet initrd=\\evil.img\n";
        uint8_t path[128], ev[256], in[512];
        const fh_event *e5[8];
        size_t n, k;

        esp_one_entry();
        fh_file_str("/loader/entries/0-evil.conf", evil);
        fh_boot();
        FH_CHECK(fh_console_has("skipping entry 0-evil.conf: its options (line 3) hold initrd="));
        FH_CHECK_EQ(fh_calls("StartImage"), 1);
        k = mshim_events(5, e5, 8);
        FH_CHECK_EQ(k, 4);      /* loader.conf (absent), the evil entry, debian.conf, exit */
        if (k == 4) {
                n = tagged_event(0x6d736805, path, utf16le("\\loader\\entries\\0-evil.conf", path), ev);
                memcpy(in, ev, n);
                memcpy(in + n, evil, strlen(evil));
                check_event(e5[1], EV_EVENT_TAG, ev, n, in, n + strlen(evil));
        }
        FH_CHECK_CLEAN();
}

/* The chainload path extends PCR 12 with the options it hands on. */
FH_CASE(chainload_measures_the_options_it_passes_on) {
        static const uint8_t opts[] = { 'x', 0, 'y', 0, 0, 0 };
        static const fh_image_spec grub = { .entry = NULL };
        uint8_t ev[64];
        size_t n = tagged_event(0x6d736806, opts, sizeof(opts), ev);
        const fh_event *e12[8];

        fh_mshim_options(opts, sizeof(opts));
        fh_image("/EFI/BOOT/grubx64.efi", &grub);
        fh_boot();
        FH_CHECK_EQ(fh_calls("StartImage"), 1);
        FH_CHECK(mshim_events(12, e12, 8) >= 1);
        if (mshim_events(12, e12, 8) >= 1)
                check_event(e12[0], EV_EVENT_TAG, ev, n, ev, n);
        FH_CHECK_CLEAN();
}

/* ---- StartImage's failure path (efi/image.c) ------------------------------------------ */

static EFI_STATUS refuses_itself(EFI_HANDLE image, EFI_SYSTEM_TABLE *st) {
        /* GRUB or a kernel stub refusing what it was asked to boot: the
         * status is the image's own, and the firmware unloads it on return
         * (UEFI 2.10, 7.4.2). */
        return EFI_SECURITY_VIOLATION;
}

FH_CASE(image_returning_security_violation_is_not_unloaded_again) {
        static const fh_image_spec kernel = { .entry = refuses_itself };
        fh_result r;

        fh_file_str("/loader/entries/debian.conf", "linux /vmlinuz\noptions quiet\n");
        fh_image("/vmlinuz", &kernel);
        r = fh_boot();
        FH_CHECK(r.returned);
        FH_CHECK_EQ(fh_calls("StartImage"), 1);
        /* The firmware unloaded it: an UnloadImage now would hit a freed
         * handle (the fake counts it as an error). */
        FH_CHECK_EQ(fh_calls("UnloadImage"), 0);
        FH_CHECK_EQ(r.leaked, 0);
        FH_CHECK_CLEAN();
}

FH_CASE(chainloaded_image_returning_security_violation_is_not_unloaded_again) {
        static const fh_image_spec grub = { .entry = refuses_itself };
        fh_result r;

        fh_image("/EFI/BOOT/grubx64.efi", &grub);
        r = fh_boot();
        FH_CHECK(r.returned);
        FH_CHECK_EQ(fh_calls("StartImage"), 1);
        FH_CHECK_EQ(fh_calls("UnloadImage"), 0);
        FH_CHECK_CLEAN();
}

/* A Secure Boot refusal by LoadImage itself: the handle it returns was
 * never started and is mshim's to unload (UEFI 2.10, 7.4.1). */
FH_CASE(image_refused_by_load_image_is_unloaded_once) {
        static const fh_image_spec unsigned_kernel = { .load_status = EFI_SECURITY_VIOLATION };
        fh_result r;

        fh_file_str("/loader/entries/debian.conf", "linux /vmlinuz\n");
        fh_image("/vmlinuz", &unsigned_kernel);
        r = fh_boot();
        FH_CHECK(r.returned);
        FH_CHECK_EQ(fh_calls("StartImage"), 0);
        FH_CHECK_EQ(fh_calls("UnloadImage"), 1);
        FH_CHECK(fh_last_image() && fh_last_image()->unloaded);
        FH_CHECK(fh_console_has("refused by Secure Boot"));
        FH_CHECK_CLEAN();
}

/* ---- LoadOptions under a resident image (efi/boot.c, efi/chain.c) -------------------- */

/* A boot services driver that returns EFI_SUCCESS stays resident (UEFI
 * 2.10, 2.1.4 and 7.4.2) and may keep reading its LoadOptions. */
FH_CASE(resident_driver_keeps_its_entry_options) {
        static const fh_image_spec driver = { .subsystem = 11 };
        fh_loaded *img;
        fh_result r;

        fh_file_str("/loader/entries/driver.conf", "efi /EFI/tools/driver.efi\noptions verbose=1\n");
        fh_image("/EFI/tools/driver.efi", &driver);
        r = fh_boot();
        img = fh_last_image();
        FH_CHECK(r.returned);
        FH_CHECK(img && img->started && !img->unloaded);
        FH_CHECK(img && fh_options_alive(img));
        FH_CHECK_CLEAN();
}

FH_CASE(resident_driver_keeps_chainload_options) {
        static const fh_image_spec driver = { .subsystem = 11 };
        static const uint8_t opts[] = { 'a', 0, 'b', 0, 0, 0 };
        fh_loaded *img;
        fh_result r;

        fh_mshim_options(opts, sizeof(opts));
        fh_image("/EFI/BOOT/grubx64.efi", &driver);
        r = fh_boot();
        img = fh_last_image();
        FH_CHECK(r.returned);
        FH_CHECK(img && img->started && !img->unloaded);
        /* mshim's own options are the boot manager's, freed once mshim
         * returns: the driver must have been given a copy that lives on. */
        FH_CHECK(img && fh_options_alive(img));
        FH_CHECK(img && img->options_size == sizeof(opts) && memcmp(img->options, opts, sizeof(opts)) == 0);
        FH_CHECK_CLEAN();
}

FH_CASE(chainloaded_application_gets_mshims_options) {
        static const uint8_t opts[] = { 'x', 0, '=', 0, '1', 0, 0, 0 };
        fh_loaded *img;
        fh_result r;

        fh_mshim_options(opts, sizeof(opts));
        fh_image("/EFI/BOOT/grubx64.efi", &(fh_image_spec) { .entry = refuses_itself });
        r = fh_boot();
        img = fh_last_image();
        FH_CHECK(r.returned);
        FH_CHECK(img && img->options_size == sizeof(opts) && memcmp(img->options, opts, sizeof(opts)) == 0);
        FH_CHECK_EQ(r.leaked, 0);
        FH_CHECK_CLEAN();
}

/* ---- directory records (efi/entries.c) ----------------------------------------------- */

/* A record whose size is odd and whose name has no NUL inside it: the
 * name must still end inside the buffer (ASan reports the read past it). */
FH_CASE(odd_length_directory_record_stays_terminated) {
        static const fh_image_spec kernel = { .entry = refuses_itself };
        fh_result r;

        /* Listed first, so the bytes after it are the pool's, not an
         * earlier record's NUL. */
        fh_file_str("/loader/entries/odd.conf", "linux /vmlinuz\n");
        fh_file_odd_record("/loader/entries/odd.conf");
        fh_file_str("/loader/entries/good.conf", "linux /vmlinuz\n");
        fh_image("/vmlinuz", &kernel);
        r = fh_boot();
        FH_CHECK(r.returned);
        /* good.conf still boots; nothing is opened under a garbled name. */
        FH_CHECK_EQ(fh_calls("StartImage"), 1);
        for (size_t i = 0; i < fh_n_opened(); i++) {
                const char *p = fh_opened_at(i);
                FH_CHECK(strcmp(p, "\\loader\\entries\\good.conf") == 0 || strncmp(p, "\\loader\\entries\\odd.con", 22) == 0 ||
                         strcmp(p, "\\loader\\loader.conf") == 0 || strcmp(p, "\\loader\\entries") == 0 ||
                         strcmp(p, "\\vmlinuz") == 0);
        }
        FH_CHECK_CLEAN();
}

/* ---- one event stays small (docs/MEASUREMENTS.md, "Limits") ------------------------- */

/* An entry whose joined options are n bytes long: several "options"
 * lines of at most 1000 bytes (one line may hold 4096, MB_CONF_MAX_LINE),
 * which mshim joins with one space each (docs/CONFIG.md). */
static void entry_with_options_of(size_t n) {
        static const fh_image_spec kernel = { .entry = refuses_itself };
        size_t k = (n + 1 + 1000) / 1001, chars = n - (k - 1);
        char *conf = malloc(n + 32 * k + 64), *p = conf;

        p += sprintf(p, "linux /vmlinuz\n");
        for (size_t i = 0; i < k; i++) {
                size_t len = chars / k + (i < chars % k);

                p += sprintf(p, "options ");
                memset(p, 'a', len);
                p += len;
                *p++ = '\n';
        }
        *p = 0;
        fh_file_str("/loader/entries/long.conf", conf);
        fh_image("/vmlinuz", &kernel);
        free(conf);
}

FH_CASE(cmdline_at_the_cap_is_measured_and_booted) {
        fh_result r;

        entry_with_options_of(4096);
        r = fh_boot();
        FH_CHECK(r.returned);
        FH_CHECK_EQ(fh_count_events(12, EV_IPL), 1);
        for (size_t i = 0; i < fh_n_events(); i++)
                if (fh_event_at(i)->pcr == 12 && fh_event_at(i)->type == EV_IPL)
                        FH_CHECK_EQ(fh_event_at(i)->event_size, 2 * 4097);
        FH_CHECK_EQ(fh_calls("StartImage"), 1);
        FH_CHECK_CLEAN();
}

FH_CASE(cmdline_over_the_cap_refuses_the_entry) {
        fh_result r;

        entry_with_options_of(4097);
        r = fh_boot();
        FH_CHECK(r.returned);
        /* Refused, not truncated: no command line in PCR 12 (only the
         * exit marker), nothing loaded. */
        FH_CHECK_EQ(fh_count_events(12, EV_IPL), 0);
        FH_CHECK_EQ(fh_count_events(12, EV_EVENT_TAG), 1);
        FH_CHECK_EQ(fh_calls("LoadImage"), 0);
        FH_CHECK_EQ(fh_calls("StartImage"), 0);
        FH_CHECK(fh_console_has("long.conf: options are 4097 bytes"));
        FH_CHECK_EQ(r.leaked, 0);
        FH_CHECK_CLEAN();
}

/* ---- the initrd: read when the stub asks, or pinned ------------------------------- */

/* What the stub kernel below does: the initrd file is replaced (by these
 * bytes, when set) after mshim published it and before the stub asks,
 * then the stub asks; what it got, and how many files mshim opened while
 * it asked. */
static struct {
        const char *swap;
        EFI_STATUS status;
        char got[64];
        size_t got_size, opened_while_asking;
} stub;

static EFI_STATUS stub_entry(EFI_HANDLE image, EFI_SYSTEM_TABLE *st) {
        size_t before;

        (void) image;
        (void) st;
        if (stub.swap)
                fh_file_str("/initrd.img", stub.swap);
        before = fh_n_opened();
        stub.status = fh_stub_load_initrd(stub.got, sizeof(stub.got), &stub.got_size);
        stub.opened_while_asking = fh_n_opened() - before;
        return EFI_LOAD_ERROR;
}

/* One entry whose kernel's stub says version; the initrd as above. */
static void esp_stub_kernel(const char *version, const char *swap) {
        static const fh_image_spec spec = { .entry = stub_entry };
        static uint8_t img[FH_LINUX_IMAGE_MIN + 64];

        memset(&stub, 0, sizeof(stub));
        stub.swap = swap;
        fh_file_str("/loader/entries/debian.conf", entry_conf);
        fh_image_bytes("/vmlinuz", img, fh_linux_image(img, sizeof(img), version), &spec);
        fh_file("/initrd.img", initrd_bytes, sizeof(initrd_bytes) - 1);
}

/* A 5.17+ stub measures the initrd itself, so mshim needs none of its
 * bytes: the file is read when the stub asks, into the stub's buffer
 * (one file opened then), and no PCR 9 event is mshim's. The stub gets
 * the file as it is at that moment, which is what it measures. */
FH_CASE(initrd_is_read_when_the_stub_asks) {
        static const char later[] = "INITRD: a CPIO ARCHIVE";   /* the same size */
        fh_result r;

        esp_stub_kernel("6.1.0-28-amd64 (debian-kernel@lists.debian.org) #1 SMP", later);
        r = fh_boot();
        FH_CHECK(r.returned);
        FH_CHECK_EQ(fh_calls("StartImage"), 1);
        FH_CHECK_EQ(stub.status, EFI_SUCCESS);
        FH_CHECK_EQ(stub.opened_while_asking, 1);
        FH_CHECK(stub.got_size == strlen(later) && memcmp(stub.got, later, stub.got_size) == 0);
        FH_CHECK_EQ(fh_count_events(9, 0), 0);
        FH_CHECK_EQ(r.leaked, 0);
        FH_CHECK_CLEAN();
}

/* The file changed size between its publication (the size the stub was
 * told) and the stub's request: refused, with a message, and the stub
 * gets nothing. Longer and shorter. */
FH_CASE(initrd_that_changed_size_is_refused_when_the_stub_asks) {
        /* Longer: more than the size told; shorter: the files end early. */
        static const char *const swaps[] = { "initrd: a cpio archive, now longer", "initrd" };
        static const char *const says[] = { "debian.conf: cannot read initrd \\initrd.img",
                                            "debian.conf: initrds changed size while read" };

        for (size_t i = 0; i < 2; i++) {
                pid_t pid = fork();
                int ws = 0;

                if (pid == 0) {
                        fh_result r;

                        esp_stub_kernel("6.1.0", swaps[i]);
                        r = fh_boot();
                        FH_CHECK(r.returned);
                        FH_CHECK(stub.status != EFI_SUCCESS && stub.status != EFI_BUFFER_TOO_SMALL);
                        FH_CHECK(fh_console_has(says[i]));
                        FH_CHECK_EQ(r.leaked, 0);
                        FH_CHECK_CLEAN();
                        fflush(stderr);
                        _exit(fh_case_ok() ? 0 : 1);
                }
                FH_CHECK(pid > 0 && waitpid(pid, &ws, 0) == pid && WIFEXITED(ws) && WEXITSTATUS(ws) == 0);
        }
}

/* A stub older than 5.17 does not measure the initrd: mshim does, so it
 * reads the file before LoadImage and serves exactly the bytes it
 * measured into PCR 9, whatever the file holds when the stub asks. */
FH_CASE(initrd_is_pinned_when_mshim_measures_it) {
        fh_result r;
        size_t n9 = 0;

        esp_stub_kernel("5.10.0-28-amd64", "an evil maid's swap: 1");
        r = fh_boot();
        FH_CHECK(r.returned);
        FH_CHECK_EQ(stub.status, EFI_SUCCESS);
        FH_CHECK_EQ(stub.opened_while_asking, 0);
        FH_CHECK(stub.got_size == sizeof(initrd_bytes) - 1 && memcmp(stub.got, initrd_bytes, stub.got_size) == 0);
        for (size_t i = 0; i < fh_n_events(); i++) {
                const fh_event *e = fh_event_at(i);

                if (e->pcr != 9 || e->by_firmware)
                        continue;
                n9++;
                FH_CHECK(e->data_size == stub.got_size && memcmp(e->data, stub.got, stub.got_size) == 0);
        }
        FH_CHECK_EQ(n9, 1);
        FH_CHECK_EQ(r.leaked, 0);
        FH_CHECK_CLEAN();
}

int main(void) {
        FH_RUN(direct_boot_measures_entry_and_cmdline);
        FH_RUN(unparseable_entry_is_measured_before_it_is_skipped);
        FH_RUN(entry_with_initrd_option_is_skipped);
        FH_RUN(chainload_measures_the_options_it_passes_on);
        FH_RUN(image_returning_security_violation_is_not_unloaded_again);
        FH_RUN(chainloaded_image_returning_security_violation_is_not_unloaded_again);
        FH_RUN(image_refused_by_load_image_is_unloaded_once);
        FH_RUN(resident_driver_keeps_its_entry_options);
        FH_RUN(resident_driver_keeps_chainload_options);
        FH_RUN(chainloaded_application_gets_mshims_options);
        FH_RUN(odd_length_directory_record_stays_terminated);
        FH_RUN(cmdline_at_the_cap_is_measured_and_booted);
        FH_RUN(cmdline_over_the_cap_refuses_the_entry);
        FH_RUN(initrd_is_read_when_the_stub_asks);
        FH_RUN(initrd_that_changed_size_is_refused_when_the_stub_asks);
        FH_RUN(initrd_is_pinned_when_mshim_measures_it);
        return fh_exit_status();
}
