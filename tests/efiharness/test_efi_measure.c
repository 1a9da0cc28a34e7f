/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * efi/measure.c called directly (fh_start_lib instead of fh_boot): what
 * reaches EFI_TCG2_PROTOCOL, byte for byte, and the cap on one event; and
 * efi/initrd.c's refusal to measure an initrd it never read.
 */
#include <string.h>
#include "harness.h"
#include "mshim.h"

#define EV_IPL 0x0000000d

FH_CASE(cmdline_event_is_the_utf16_line_itself) {
        static const uint8_t line[] = { 'r', 0, 'o', 0, 0, 0 };
        mshim_tpm t;
        const fh_event *e;

        fh_start_lib();
        FH_CHECK_EQ(mshim_tpm_init(&t, true, false), EFI_SUCCESS);
        FH_CHECK_EQ(mshim_tpm_measure_cmdline(&t, line, sizeof(line)), EFI_SUCCESS);
        FH_CHECK_EQ(fh_n_events(), 1);
        e = fh_event_at(0);
        FH_CHECK(e && e->pcr == 12 && e->type == EV_IPL && e->flags == 0);
        FH_CHECK(e && e->event_size == sizeof(line) && memcmp(e->event, line, sizeof(line)) == 0);
        FH_CHECK(e && e->data_size == sizeof(line) && memcmp(e->data, line, sizeof(line)) == 0);
        FH_CHECK_CLEAN();
}

/* One byte over MSHIM_EVENT_MAX is never handed to the TPM, and with a
 * TPM required that is an error. */
FH_CASE(event_over_the_cap_is_not_logged) {
        static uint8_t big[MSHIM_EVENT_MAX + 2];
        mshim_tpm t;

        fh_start_lib();
        FH_CHECK_EQ(mshim_tpm_init(&t, true, false), EFI_SUCCESS);
        FH_CHECK(EFI_ERROR(mshim_tpm_measure_cmdline(&t, big, sizeof(big))));
        FH_CHECK_EQ(fh_calls("TCG2.HashLogExtendEvent"), 0);
        /* A measurement that cannot be made stops the boot (fail closed). */
        FH_CHECK(fh_console_has("failed to measure the command line into PCR 12"));
        FH_CHECK(mshim_tpm_refuses(&t));
        FH_CHECK_CLEAN();
}

FH_CASE(event_at_the_cap_is_logged) {
        static uint8_t big[MSHIM_EVENT_MAX];
        mshim_tpm t;

        fh_start_lib();
        FH_CHECK_EQ(mshim_tpm_init(&t, true, false), EFI_SUCCESS);
        FH_CHECK_EQ(mshim_tpm_measure_cmdline(&t, big, sizeof(big)), EFI_SUCCESS);
        FH_CHECK_EQ(fh_count_events(12, EV_IPL), 1);
        FH_CHECK_CLEAN();
}

/* The volume mshim was loaded from (gnu-efi's LibOpenRoot, as efi/main.c
 * opens it). */
static EFI_FILE_HANDLE volume_root(EFI_HANDLE self) {
        EFI_LOADED_IMAGE *li = NULL;

        if (BS->HandleProtocol(self, &LoadedImageProtocol, (void **) &li) != EFI_SUCCESS)
                return NULL;
        return LibOpenRoot(li->DeviceHandle);
}

/* An initrd published to be read when the stub asks holds no bytes of
 * mshim's: asked to measure it anyway (PCR 9 or the TOTP event: a step the
 * pinning rule of efi/boot.c missed), mshim refuses, measures nothing and
 * lets nothing start, rather than measure something else. */
FH_CASE(unread_initrd_is_never_measured) {
        mb_bls_entry e = { .initrd = { { "/initrd.img", 11 } }, .n_initrd = 1 };
        EFI_FILE_HANDLE root;
        mshim_initrd *r = NULL;
        mshim_tpm t;

        fh_file_str("/initrd.img", "an initramfs");
        root = volume_root(fh_start_lib());
        FH_CHECK(root != NULL);
        FH_CHECK_EQ(mshim_tpm_init(&t, true, false), EFI_SUCCESS);
        FH_CHECK_EQ(mshim_initrd_install(root, &e, L"test.conf", false, &r), EFI_SUCCESS);
        FH_CHECK(r != NULL);
        FH_CHECK(EFI_ERROR(mshim_initrd_measure(&t, r)));
        FH_CHECK(mshim_tpm_refuses(&t));
        FH_CHECK_EQ(mshim_tpm_init(&t, true, false), EFI_SUCCESS);
        FH_CHECK(EFI_ERROR(mshim_initrd_measure_totp(&t, r)));
        FH_CHECK(mshim_tpm_refuses(&t));
        FH_CHECK(fh_console_has("the initrd was not read before it was to be measured"));
        FH_CHECK_EQ(fh_calls("TCG2.HashLogExtendEvent"), 0);
        mshim_initrd_uninstall(r);
        root->Close(root);
        FH_CHECK_CLEAN();
}

int main(void) {
        FH_RUN(cmdline_event_is_the_utf16_line_itself);
        FH_RUN(event_over_the_cap_is_not_logged);
        FH_RUN(event_at_the_cap_is_logged);
        FH_RUN(unread_initrd_is_never_measured);
        return fh_exit_status();
}
