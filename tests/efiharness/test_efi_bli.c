/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * LoaderDevicePartUUID (efi/bli.c): set, volatile, to the ESP's GPT
 * partition GUID when mshim's volume has one; not set otherwise; a
 * firmware refusal does not stop the boot. Expected values are written
 * out by hand (the GUID's text and its on-disk bytes).
 */
#include <string.h>
#include "harness.h"
#include "mshim.h"

static EFI_GUID loader_guid = { 0x4a67b082, 0x0a4c, 0x41cf, { 0xb6, 0xc7, 0x44, 0x0b, 0x29, 0xbb, 0x8c, 0x4f } };

/* 9E1CCA14-2C4A-4B6F-9D3A-0123456789AB as stored in a GPT entry. */
static const uint8_t part[16] = { 0x14, 0xca, 0x1c, 0x9e, 0x4a, 0x2c, 0x6f, 0x4b,
                                  0x9d, 0x3a, 0x01, 0x23, 0x45, 0x67, 0x89, 0xab };
static const char part_text[] = "9E1CCA14-2C4A-4B6F-9D3A-0123456789AB";

/* Whether the variable was there when the kernel started (it reads it). */
static bool seen_by_kernel;

static EFI_STATUS kernel_entry(EFI_HANDLE image, EFI_SYSTEM_TABLE *st) {
        seen_by_kernel = fh_var_get(L"LoaderDevicePartUUID", &loader_guid) != NULL;
        return EFI_SUCCESS;
}

/* One bootable entry, so efi_main goes as far as starting a kernel. */
static void one_entry(void) {
        static const fh_image_spec kernel = { .entry = kernel_entry };

        fh_file_str("loader/entries/a.conf", "title a\nlinux /vmlinuz\noptions ro\n");
        fh_image("vmlinuz", &kernel);
}

FH_CASE(set_from_gpt_node) {
        const fh_var_value *v;
        uint8_t want[sizeof(part_text) * 2];

        for (size_t i = 0; i < sizeof(part_text); i++)
                want[2 * i] = (uint8_t) part_text[i], want[2 * i + 1] = 0;
        fh_volume_partition(2, 2, part);
        one_entry();
        fh_boot();
        v = fh_var_get(L"LoaderDevicePartUUID", &loader_guid);
        FH_CHECK(v != NULL);
        if (v) {
                FH_CHECK_EQ(v->size, sizeof(want));
                FH_CHECK(v->size == sizeof(want) && memcmp(v->data, want, sizeof(want)) == 0);
                /* Volatile: boot and runtime access, never NV. */
                FH_CHECK_EQ(v->attrs, EFI_VARIABLE_BOOTSERVICE_ACCESS | EFI_VARIABLE_RUNTIME_ACCESS);
        }
        /* Set before the kernel ran, which reads it. */
        FH_CHECK(seen_by_kernel);
        FH_CHECK_CLEAN();
}

FH_CASE(not_set_without_gpt_node) {
        one_entry();
        fh_boot();
        FH_CHECK(fh_var_get(L"LoaderDevicePartUUID", &loader_guid) == NULL);
        FH_CHECK_EQ(fh_calls("SetVariable"), 1);      /* LoaderEntrySelected only */
        FH_CHECK(fh_last_image() && fh_last_image()->started && !seen_by_kernel);
        FH_CHECK_CLEAN();
}

FH_CASE(not_set_from_mbr_partition) {
        fh_volume_partition(1, 1, part);
        one_entry();
        fh_boot();
        FH_CHECK(fh_var_get(L"LoaderDevicePartUUID", &loader_guid) == NULL);
        FH_CHECK_EQ(fh_calls("SetVariable"), 1);      /* LoaderEntrySelected only */
        FH_CHECK_CLEAN();
}

FH_CASE(refusal_is_a_warning) {
        fh_volume_partition(2, 2, part);
        fh_set_variable_status(EFI_OUT_OF_RESOURCES);
        one_entry();
        fh_boot();
        FH_CHECK(fh_var_get(L"LoaderDevicePartUUID", &loader_guid) == NULL);
        FH_CHECK(fh_console_has("warning: cannot set LoaderDevicePartUUID"));
        FH_CHECK(fh_last_image() && fh_last_image()->started);
        FH_CHECK_CLEAN();
}

/* LoaderEntrySelected: the entry id tried, UTF-16LE with its NUL,
 * volatile (BS|RT); the entry id has no boot counter (BLS "Boot
 * counting"). */
FH_CASE(entry_selected_is_the_id_without_counter) {
        static const fh_image_spec kernel = { .entry = kernel_entry };
        static const uint8_t want[] = { 'a', 0, '.', 0, 'c', 0, 'o', 0, 'n', 0, 'f', 0, 0, 0 };
        const fh_var_value *v;

        fh_file_str("loader/entries/a+2-1.conf", "title a\nlinux /vmlinuz\noptions ro\n");
        fh_image("vmlinuz", &kernel);
        fh_boot();
        v = fh_var_get(L"LoaderEntrySelected", &loader_guid);
        FH_CHECK(v && v->size == sizeof(want) && memcmp(v->data, want, sizeof(want)) == 0);
        FH_CHECK(v && v->attrs == (EFI_VARIABLE_BOOTSERVICE_ACCESS | EFI_VARIABLE_RUNTIME_ACCESS));
        /* The volume is write-protected: not renamed, booted all the same. */
        FH_CHECK(fh_file_bytes("loader/entries/a+2-1.conf") != NULL);
        FH_CHECK(fh_last_image() && fh_last_image()->started);
        FH_CHECK_CLEAN();
}

/* The counter step renames the file before the image is loaded: one try
 * less, one more done. */
FH_CASE(counted_entry_is_renamed_before_it_boots) {
        static const fh_image_spec kernel = { .entry = kernel_entry };

        fh_volume_writable(true);
        fh_file_str("loader/entries/a+1-0.conf", "title a\nlinux /vmlinuz\noptions ro\n");
        fh_image("vmlinuz", &kernel);
        fh_boot();
        FH_CHECK(fh_file_bytes("loader/entries/a+0-1.conf") != NULL);
        FH_CHECK(fh_file_bytes("loader/entries/a+1-0.conf") == NULL);
        FH_CHECK(fh_last_image() && fh_last_image()->started);
        FH_CHECK_CLEAN();
}

int main(void) {
        FH_RUN(entry_selected_is_the_id_without_counter);
        FH_RUN(counted_entry_is_renamed_before_it_boots);
        FH_RUN(set_from_gpt_node);
        FH_RUN(not_set_without_gpt_node);
        FH_RUN(not_set_from_mbr_partition);
        FH_RUN(refusal_is_a_warning);
        return fh_exit_status();
}
