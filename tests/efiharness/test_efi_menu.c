/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The boot menu on the console (efi/menu.c) with scripted keys: which
 * entry boots and with which command line (the kernel's LoadOptions, the
 * PCR 12 event, LoaderEntrySelected) after the countdown, a number key,
 * arrows and Enter, the editor; the editor off by the built-in policy;
 * menu-hidden and menu-disabled. Expected lines are written out by hand.
 */
#include <string.h>
#include "harness.h"
#include "mshim.h"
#include "mb/tcglog.h"

static EFI_GUID loader_guid = { 0x4a67b082, 0x0a4c, 0x41cf, { 0xb6, 0xc7, 0x44, 0x0b, 0x29, 0xbb, 0x8c, 0x4f } };

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

/* What the first kernel started saw: its path, LoadOptions and
 * LoaderEntrySelected (each kernel here returns, so mshim tries the
 * others after it: only the first counts). */
static struct {
        bool started;
        char path[256];
        uint8_t options[256], selected[64];
        size_t options_size, selected_size;
} first;

static EFI_STATUS kernel_entry(EFI_HANDLE image, EFI_SYSTEM_TABLE *st) {
        const fh_loaded *img = fh_image_of(image);
        const fh_var_value *v = fh_var_get(L"LoaderEntrySelected", &loader_guid);

        if (first.started || !img)
                return EFI_SUCCESS;
        first.started = true;
        snprintf(first.path, sizeof(first.path), "%s", img->path);
        if (img->li && img->li->LoadOptionsSize <= sizeof(first.options)) {
                memcpy(first.options, img->li->LoadOptions, img->li->LoadOptionsSize);
                first.options_size = img->li->LoadOptionsSize;
        }
        if (v && v->size <= sizeof(first.selected)) {
                memcpy(first.selected, v->data, v->size);
                first.selected_size = v->size;
        }
        return EFI_SUCCESS;
}

static const fh_image_spec kernel = { .entry = kernel_entry };

/* Three entries; sort order (newest version first): c, b, a, numbered 1,
 * 2, 3 in the menu. */
static void three_entries(const char *conf) {
        if (conf)
                fh_file_str("loader/loader.conf", conf);
        fh_file_str("loader/entries/a.conf", "title A\nversion 1\nlinux /vmlinuz-a\noptions root=/dev/a\n");
        fh_file_str("loader/entries/b.conf", "title B\nversion 2\nlinux /vmlinuz-b\noptions root=/dev/b\n");
        fh_file_str("loader/entries/c.conf", "title C\nversion 3\nlinux /vmlinuz-c\noptions root=/dev/c\n");
        fh_image("vmlinuz-a", &kernel);
        fh_image("vmlinuz-b", &kernel);
        fh_image("vmlinuz-c", &kernel);
}

/* The first image started: from kernel path, with options line; the
 * first PCR 12 command line event holds the same line; LoaderEntrySelected
 * named id. */
static void check_booted(const char *kernel_path, const char *line, const char *id) {
        uint8_t want[256], want_id[64];
        size_t n = utf16le(line, want), n_id = utf16le(id, want_id);

        FH_CHECK(first.started && strstr(first.path, kernel_path));
        if (!strstr(first.path, kernel_path))
                fprintf(stderr, "  booted %s, expected %s\n", first.path, kernel_path);
        FH_CHECK(first.options_size == n && memcmp(first.options, want, n) == 0);
        for (size_t i = 0; i < fh_n_events(); i++) {
                const fh_event *e = fh_event_at(i);

                if (e->pcr != 12 || e->type != MB_EV_IPL)
                        continue;
                FH_CHECK(e->data_size == n && memcmp(e->data, want, n) == 0);
                FH_CHECK(e->event_size == n && memcmp(e->event, want, n) == 0);
                break;
        }
        FH_CHECK(first.selected_size == n_id && memcmp(first.selected, want_id, n_id) == 0);
}

FH_CASE(countdown_boots_the_default) {
        three_entries("timeout 2\ndefault b*\n");
        fh_boot();
        check_booted("vmlinuz-b", "root=/dev/b", "b.conf");
        FH_CHECK(fh_console_has("mshim boot menu"));
        FH_CHECK(fh_console_has("> 2) B (b.conf)"));
        FH_CHECK(fh_console_has("booting the default in 2 s"));
        FH_CHECK(fh_console_has("booting the default in 1 s"));
        /* Two seconds of polls, no more. */
        FH_CHECK(fh_clock_stalled_us() >= 2000000 && fh_clock_stalled_us() < 2100000);
        FH_CHECK_CLEAN();
}

FH_CASE(number_key_boots_that_entry) {
        static const EFI_INPUT_KEY pause = { 0, 0 };

        three_entries("timeout 5\n");
        for (int i = 0; i < 30; i++)
                fh_keys(&pause, 1);     /* a second and a half, then */
        fh_keys_str("3");
        fh_boot();
        check_booted("vmlinuz-a", "root=/dev/a", "a.conf");
        FH_CHECK_EQ(fh_keys_left(), 0);
        FH_CHECK_CLEAN();
}

FH_CASE(arrows_and_enter) {
        static const EFI_INPUT_KEY keys[] = { { SCAN_DOWN, 0 }, { SCAN_DOWN, 0 }, { SCAN_UP, 0 },
                                              { 0, CHAR_CARRIAGE_RETURN } };

        three_entries("timeout menu-force\n");
        fh_keys(keys, 4);
        fh_boot();
        check_booted("vmlinuz-b", "root=/dev/b", "b.conf");
        FH_CHECK_CLEAN();
}

FH_CASE(edit_then_enter_boots_the_edited_line) {
        static const EFI_INPUT_KEY keys[] = { { SCAN_END, 0 }, { 0, 'e' }, { 0, CHAR_BACKSPACE }, { 0, 0x7f } };

        three_entries("timeout 5\n");
        fh_keys(keys, 4);               /* a, "e", then Backspace and DEL: "root=/dev" */
        fh_keys_str("/x single\n");
        fh_boot();
        check_booted("vmlinuz-a", "root=/dev/x single", "a.conf");
        FH_CHECK(fh_console_has("> root=/dev/x single"));
        FH_CHECK(fh_console_has("edited command line"));
        FH_CHECK_CLEAN();
}

FH_CASE(edit_dropped_with_esc) {
        static const EFI_INPUT_KEY esc = { SCAN_ESC, 0 };

        three_entries("timeout 5\n");
        fh_keys_str("e init=/bin/sh");
        fh_keys(&esc, 1);
        fh_keys_str("\n");
        fh_boot();
        check_booted("vmlinuz-c", "root=/dev/c", "c.conf");
        FH_CHECK_CLEAN();
}

FH_CASE(editor_off_by_policy) {
        three_entries("timeout 5\neditor yes\n");
        fh_boot_policy("editor no\n");
        fh_keys_str("e init=/bin/sh\n");
        fh_boot();
        check_booted("vmlinuz-c", "root=/dev/c", "c.conf");
        FH_CHECK(fh_console_has("the command line editor is off"));
        FH_CHECK(!fh_console_has("e edits its command line"));
        FH_CHECK_CLEAN();
}

FH_CASE(editor_off_by_loader_conf) {
        three_entries("timeout 5\neditor no\n");
        fh_keys_str("e init=/bin/sh\n");
        fh_boot();
        check_booted("vmlinuz-c", "root=/dev/c", "c.conf");
        FH_CHECK(fh_console_has("the command line editor is off"));
        FH_CHECK_CLEAN();
}

/* No timeout (menu-hidden): one look at the keyboard, no menu. */
FH_CASE(hidden_without_a_key) {
        three_entries(NULL);
        fh_boot();
        check_booted("vmlinuz-c", "root=/dev/c", "c.conf");
        FH_CHECK(!fh_console_has("mshim boot menu"));
        FH_CHECK_EQ(fh_calls("ReadKeyStroke"), 1);
        FH_CHECK_EQ(fh_clock_stalled_us(), 0);
        FH_CHECK_CLEAN();
}

FH_CASE(hidden_with_a_key_pressed) {
        three_entries("timeout menu-hidden\n");
        fh_keys_str(" 2");
        fh_boot();
        check_booted("vmlinuz-b", "root=/dev/b", "b.conf");
        FH_CHECK(fh_console_has("mshim boot menu"));
        /* Reached by a key: no countdown. */
        FH_CHECK(!fh_console_has("booting the default in"));
        FH_CHECK_CLEAN();
}

FH_CASE(disabled_ignores_keys) {
        three_entries("timeout menu-disabled\n");
        fh_keys_str("2");
        fh_boot();
        check_booted("vmlinuz-c", "root=/dev/c", "c.conf");
        FH_CHECK(!fh_console_has("mshim boot menu"));
        FH_CHECK_EQ(fh_calls("ReadKeyStroke"), 0);
        FH_CHECK_EQ(fh_keys_left(), 1);
        FH_CHECK_CLEAN();
}

/* A keyboard that fails under menu-force: the default, not a hang. */
FH_CASE(broken_keyboard_boots_the_default) {
        three_entries("timeout menu-force\ndefault a*\n");
        fh_keys_str("D");               /* a key the model ignores, then the failure */
        fh_key_status(EFI_DEVICE_ERROR);
        fh_boot();
        check_booted("vmlinuz-a", "root=/dev/a", "a.conf");
        FH_CHECK(fh_console_has("cannot read the keyboard"));
        FH_CHECK_CLEAN();
}

/* The chosen (and edited) entry fails: the others follow in sort order
 * after it, each with its own line. */
FH_CASE(chosen_entry_fails_next_boots_unedited) {
        static const fh_image_spec refused = { .load_status = EFI_SECURITY_VIOLATION };

        fh_file_str("loader/loader.conf", "timeout 5\n");
        fh_file_str("loader/entries/a.conf", "title A\nversion 1\nlinux /vmlinuz-a\noptions root=/dev/a\n");
        fh_file_str("loader/entries/b.conf", "title B\nversion 2\nlinux /vmlinuz-b\noptions root=/dev/b\n");
        fh_file_str("loader/entries/c.conf", "title C\nversion 3\nlinux /vmlinuz-c\noptions root=/dev/c\n");
        fh_image("vmlinuz-a", &kernel);
        fh_image("vmlinuz-b", &refused);
        fh_image("vmlinuz-c", &kernel);
        fh_keys_str("2");
        fh_keys_str("e single\n");
        fh_boot();
        /* b is refused; a follows it in sort order (c, b, a), not c, and
         * boots its own line. */
        check_booted("vmlinuz-a", "root=/dev/a", "a.conf");
        FH_CHECK_CLEAN();
}

int main(void) {
        FH_RUN(countdown_boots_the_default);
        FH_RUN(number_key_boots_that_entry);
        FH_RUN(arrows_and_enter);
        FH_RUN(edit_then_enter_boots_the_edited_line);
        FH_RUN(edit_dropped_with_esc);
        FH_RUN(editor_off_by_policy);
        FH_RUN(editor_off_by_loader_conf);
        FH_RUN(hidden_without_a_key);
        FH_RUN(hidden_with_a_key_pressed);
        FH_RUN(disabled_ignores_keys);
        FH_RUN(broken_keyboard_boots_the_default);
        FH_RUN(chosen_entry_fails_next_boots_unedited);
        return fh_exit_status();
}
