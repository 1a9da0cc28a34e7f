/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Fault injection on the fake firmware: a TPM that fails, allocations
 * that fail. The rule (issue 9, point 1): once a TPM was found, no next
 * stage may start unless what mshim measures for it was measured.
 *
 * Every case here failed (XFAIL) before mshim measured fail-closed; they
 * now pass and guard the fix.
 */
#include <string.h>
#include "harness.h"

#define EV_IPL 0x0000000d

/* Set by the fake kernel when it starts: was its command line in PCR 12,
 * and had any measurement failed before (EFI_VOLUME_FULL still extends)? */
static bool started, started_unmeasured, started_after_tpm_error;

static EFI_STATUS kernel_entry(EFI_HANDLE image, EFI_SYSTEM_TABLE *st) {
        started = true;
        started_unmeasured = fh_count_events(12, EV_IPL) == 0;
        for (size_t i = 0; i < fh_n_events(); i++)
                if (EFI_ERROR(fh_event_at(i)->status) && fh_event_at(i)->status != EFI_VOLUME_FULL)
                        started_after_tpm_error = true;
        return EFI_LOAD_ERROR;
}

static void esp_one_entry(void) {
        static const fh_image_spec kernel = { .entry = kernel_entry };

        fh_file_str("/loader/entries/debian.conf", "linux /vmlinuz\ninitrd /initrd.img\noptions quiet\n");
        fh_file_str("/initrd.img", "cpio");
        fh_image("/vmlinuz", &kernel);
}

/* Events without a loader.conf: 1 = the entry file (PCR 5), 2 = the
 * command line (PCR 12). The second one fails: the kernel must not start. */
FH_CASE(tpm_failing_mid_boot_stops_the_boot) {
        fh_result r;

        esp_one_entry();
        fh_tpm_fail(2, EFI_DEVICE_ERROR);
        r = fh_boot();
        FH_CHECK(r.returned || r.reset);
        FH_CHECK(!started);
        FH_CHECK_EQ(fh_calls("StartImage"), 0);
        FH_CHECK_CLEAN();
}

/* EFI_VOLUME_FULL: the PCR was extended, only the log entry is missing
 * (TCG EFI Protocol Spec 6.6.5): booting on is right. */
FH_CASE(tpm_log_full_still_boots) {
        uint8_t zero[32] = { 0 }, pcr12[32];
        fh_result r;

        esp_one_entry();
        fh_tpm_fail(0, EFI_VOLUME_FULL);
        r = fh_boot();
        fh_pcr_sha256(12, pcr12);
        FH_CHECK(r.returned);
        FH_CHECK(started);
        FH_CHECK(memcmp(pcr12, zero, 32) != 0);
        FH_CHECK(fh_console_has("event log is full"));
        FH_CHECK_CLEAN();
}

/* One boot, any one allocation failing: no sanitizer report, no misuse,
 * nothing leaked when mshim returns, and a kernel that starts had its
 * command line measured first. */
static void boot_checked(void) {
        fh_result r;

        esp_one_entry();
        r = fh_boot();
        FH_CHECK(r.returned || r.reset);
        FH_CHECK(!started_unmeasured);
        FH_CHECK_EQ(r.leaked, 0);
        FH_CHECK_CLEAN();
}

FH_CASE(every_allocation_failure_fails_closed) {
        fh_each_alloc_failure(boot_checked);
}

/* Each of mshim's measurements failing in turn: no kernel starts after a
 * measurement failed. */
static void boot_with_a_failing_tpm(void) {
        fh_result r;

        esp_one_entry();
        r = fh_boot();
        FH_CHECK(r.returned || r.reset);
        FH_CHECK(!started_after_tpm_error);
        FH_CHECK_CLEAN();
}

FH_CASE(every_tpm_failure_stops_the_boot) {
        fh_each_tpm_failure(boot_with_a_failing_tpm, EFI_DEVICE_ERROR);
}

/* The chainload path with Secure Boot on (SHIM_LOCK, the LoadImage hook,
 * mshim's own options copied for the next stage). */
static void chainload_checked(void) {
        static const uint8_t opts[] = { 'q', 0, 0, 0 };
        fh_result r;

        fh_secure_boot(true);
        fh_mshim_options(opts, sizeof(opts));
        fh_image("/EFI/BOOT/grubx64.efi", &(fh_image_spec) { .entry = kernel_entry });
        r = fh_boot();
        FH_CHECK(r.returned);
        FH_CHECK_EQ(r.leaked, 0);
        FH_CHECK_CLEAN();
}

FH_CASE(chainload_survives_every_allocation_failure) {
        fh_each_alloc_failure(chainload_checked);
}

int main(void) {
        FH_RUN(tpm_failing_mid_boot_stops_the_boot);
        FH_RUN(tpm_log_full_still_boots);
        FH_RUN(every_allocation_failure_fails_closed);
        FH_RUN(every_tpm_failure_stops_the_boot);
        FH_RUN(chainload_survives_every_allocation_failure);
        return fh_exit_status();
}
