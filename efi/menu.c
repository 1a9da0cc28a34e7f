/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The boot menu on the console: draws the model of include/mb/menu.h on
 * ConOut (text only, one line per entry, so it reads the same on a
 * serial console, where OVMF copies ConOut) and feeds it ConIn's keys and
 * the seconds of its countdown. What it decides goes into the plan
 * (mb_menu_apply); nothing here measures anything.
 */
#include "mshim.h"
#include "mb/menu.h"

/* Keys are polled, as the TOTP screen does (efi/totp.c): ReadKeyStroke,
 * then a Stall, so the countdown is the Stalls' sum and needs no timer
 * event. */
#define MENU_POLL_US       50000u
#define MENU_POLLS_PER_S   (1000000u / MENU_POLL_US)

_Static_assert(MB_MENU_EDIT_MAX == MSHIM_CMDLINE_MAX, "the editor makes lines the loader boots");

/* The line being edited, as CHAR16 for Print. */
static CHAR16 menu_line[MB_MENU_EDIT_MAX + 1];

typedef enum menu_read {
        MENU_NO_KEY,
        MENU_KEY,
        MENU_BROKEN,            /* ConIn failed: no key can come */
} menu_read;

/* One key from ConIn, as the model's input. */
static menu_read menu_key(mb_menu_key *ret_key, uint32_t *ret_ch) {
        EFI_INPUT_KEY k;
        EFI_STATUS st = ST->ConIn->ReadKeyStroke(ST->ConIn, &k);

        if (st == EFI_NOT_READY)
                return MENU_NO_KEY;
        if (EFI_ERROR(st)) {
                mshim_log(st, L"warning: cannot read the keyboard (%r); booting the default", st);
                return MENU_BROKEN;
        }
        *ret_ch = k.UnicodeChar;
        switch (k.ScanCode) {
        case SCAN_UP: *ret_key = MB_MENU_UP; return MENU_KEY;
        case SCAN_DOWN: *ret_key = MB_MENU_DOWN; return MENU_KEY;
        case SCAN_HOME: *ret_key = MB_MENU_HOME; return MENU_KEY;
        case SCAN_END: *ret_key = MB_MENU_END; return MENU_KEY;
        case SCAN_ESC: *ret_key = MB_MENU_ESC; return MENU_KEY;
        case SCAN_NULL: break;
        default: *ret_key = MB_MENU_OTHER; return MENU_KEY;
        }
        /* A serial terminal sends CR or LF for Enter, BS or DEL for
         * Backspace. */
        if (k.UnicodeChar == CHAR_CARRIAGE_RETURN || k.UnicodeChar == CHAR_LINEFEED)
                *ret_key = MB_MENU_ENTER;
        else if (k.UnicodeChar == CHAR_BACKSPACE || k.UnicodeChar == 0x7f)
                *ret_key = MB_MENU_BACKSPACE;
        else
                *ret_key = MB_MENU_CHAR;
        return MENU_KEY;
}

static void menu_draw_entry(const mb_menu *m, size_t k) {
        const mb_plan_entry *e = m->entries[mb_plan_sorted(m->plan, k)];
        mshim_text t, id;

        Print(L"%s %ld) %s (%s)\n", k == m->sel ? L">" : L" ", (UINT64) (k + 1),
              mshim_text_of(e->bls.title.len ? e->bls.title : e->bls.id, &t), mshim_text_of(e->bls.id, &id));
}

static void menu_draw_edit(const mb_menu *m) {
        size_t bytes = 0;

        if (mb_utf8_to_utf16le(m->edit, m->edit_len, (uint8_t *) menu_line, sizeof(menu_line), &bytes) != MB_OK)
                StrCpy(menu_line, L"(unprintable)");
        Print(L"edit the command line; Enter boots it, Esc drops the edit:\n> %s\n", menu_line);
}

/* The whole menu, after each key: plain lines, so a serial console shows
 * each state in turn. */
static void menu_draw(const mb_menu *m) {
        Print(L"\nmshim boot menu: up/down and Enter, or 1-9, boot an entry%s\n",
              m->plan->editor ? L"; e edits its command line" : L"");
        for (size_t k = 0; k < m->n; k++)
                menu_draw_entry(m, k);
        if (m->editing)
                menu_draw_edit(m);
        if (m->notice == MB_MENU_NOTICE_EDITOR_OFF)
                Print(L"the command line editor is off (editor no)\n");
        else if (m->notice == MB_MENU_NOTICE_TOO_LONG)
                Print(L"the command line would be over %d bytes\n", MB_MENU_EDIT_MAX);
        if (m->counting)
                Print(L"booting the default in %ld s; press a key to stop\n", (UINT64) m->remain);
}

/* Keys and ticks until the model decides; false when the keyboard broke
 * (then nothing was decided). */
static bool menu_loop(mb_menu *m) {
        mb_menu_key key;
        uint32_t ch = 0;
        UINTN polls = 0;

        for (;;) {
                switch (menu_key(&key, &ch)) {
                case MENU_BROKEN:
                        return false;
                case MENU_KEY:
                        if (mb_menu_input(m, key, ch))
                                return true;
                        menu_draw(m);
                        continue;
                case MENU_NO_KEY:
                        break;
                }
                BS->Stall(MENU_POLL_US);
                if (++polls < MENU_POLLS_PER_S)
                        continue;
                polls = 0;
                if (mb_menu_input(m, MB_MENU_TICK, 0))
                        return true;
                if (m->counting)
                        Print(L"booting the default in %ld s\n", (UINT64) m->remain);
        }
}

/* Open the menu (with first, a key already read, as its first input when
 * has_first) and take its decision into the plan. */
static void menu_show(mb_plan *plan, mb_plan_entry *const *pv, mb_menu *m, bool has_first, mb_menu_key first,
                      uint32_t ch) {
        mb_err r = mb_menu_init(m, plan, pv);

        bool decided;

        if (r != MB_OK) {
                mshim_log(mb_efi_status(r), L"warning: no menu: %a", mb_strerror(r));
                return;
        }
        menu_draw(m);
        decided = has_first && mb_menu_input(m, first, ch);
        if (!decided && has_first)
                menu_draw(m);
        if (!decided && !menu_loop(m))
                return;
        /* p is untouched when the plan refuses: the default then boots. */
        r = mb_menu_apply(m, plan);
        if (r != MB_OK)
                mshim_log(mb_efi_status(r), L"warning: the menu's choice was refused (%a); booting the default",
                          mb_strerror(r));
        else if (m->edited)
                mshim_log(EFI_SUCCESS, L"booting entry %ld with an edited command line (measured into PCR 12)",
                          (UINT64) (m->choice + 1));
}

void mshim_menu_run(mb_plan *plan, mshim_entry **v, UINTN n, mb_menu *m) {
        mb_plan_entry *pv[MB_PLAN_MAX_ENTRIES];
        mb_menu_key key = MB_MENU_OTHER;
        uint32_t ch = 0;
        menu_read got = MENU_NO_KEY;

        if (plan->n_boot == 0 || plan->menu == MB_PLAN_MENU_DISABLED || n > MB_PLAN_MAX_ENTRIES)
                return;
        if (!ST->ConIn) {
                if (plan->menu != MB_PLAN_MENU_HIDDEN)
                        mshim_log(EFI_UNSUPPORTED, L"warning: no console input for the menu; booting the default");
                return;
        }
        /* Hidden: one look at the keyboard; a key already pressed opens
         * the menu (and is its first key), as with systemd-boot. */
        if (plan->menu == MB_PLAN_MENU_HIDDEN) {
                got = menu_key(&key, &ch);
                if (got != MENU_KEY)
                        return;
        }
        for (UINTN i = 0; i < n; i++)
                pv[i] = &v[i]->plan;
        menu_show(plan, pv, m, got == MENU_KEY, key, ch);
}
