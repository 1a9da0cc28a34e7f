/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The boot menu's model (include/mb/menu.h): pure, so every key's effect
 * is tested without a firmware (tests/unit/test_menu.c).
 */
#include "mb/menu.h"

mb_err mb_menu_init(mb_menu *m, const mb_plan *plan, mb_plan_entry *const *entries) {
        if (!m || !plan || !entries || plan->n_boot == 0)
                return MB_ERR_INVALID;
        mb_memset(m, 0, sizeof(*m));
        m->plan = plan;
        m->entries = entries;
        m->n = plan->n_boot;
        m->sel = plan->default_pos;
        m->counting = plan->menu == MB_PLAN_MENU_TIMEOUT && plan->menu_timeout > 0;
        m->remain = plan->menu_timeout;
        return MB_OK;
}

static bool decide(mb_menu *m, size_t pos, bool edited) {
        m->done = true;
        m->choice = pos;
        m->edited = edited;
        m->counting = false;
        return true;
}

/* "e": the highlighted entry's options, joined as they would boot, into
 * the editor. */
static void edit_start(mb_menu *m) {
        const mb_plan_entry *e = m->entries[mb_plan_sorted(m->plan, m->sel)];
        size_t len = 0;

        if (!m->plan->editor) {
                m->notice = MB_MENU_NOTICE_EDITOR_OFF;
                return;
        }
        /* A line the loader would refuse is not offered for editing. */
        if (mb_bls_options_join(&e->bls, m->edit, sizeof(m->edit), &len) != MB_OK) {
                m->notice = MB_MENU_NOTICE_TOO_LONG;
                return;
        }
        m->edit_len = len;
        m->editing = true;
}

/* Backspace: the last character, all of its UTF-8 bytes (the entry's own
 * options may hold any). */
static void edit_backspace(mb_menu *m) {
        while (m->edit_len > 0 && ((unsigned char) m->edit[m->edit_len - 1] & 0xc0) == 0x80)
                m->edit_len--;
        if (m->edit_len > 0)
                m->edit_len--;
        m->edit[m->edit_len] = 0;
}

/* Only printable ASCII is typed in: no control character reaches a
 * command line, and each key is one byte. */
static void edit_char(mb_menu *m, uint32_t ch) {
        if (ch < 0x20 || ch > 0x7e)
                return;
        if (m->edit_len >= MB_MENU_EDIT_MAX) {
                m->notice = MB_MENU_NOTICE_TOO_LONG;
                return;
        }
        m->edit[m->edit_len++] = (char) ch;
        m->edit[m->edit_len] = 0;
}

static bool input_edit(mb_menu *m, mb_menu_key key, uint32_t ch) {
        switch (key) {
        case MB_MENU_ENTER:
                return decide(m, m->sel, true);
        case MB_MENU_ESC:
                /* The edit is dropped: the entry boots as written unless
                 * edited again. */
                m->editing = false;
                m->edit_len = 0;
                m->edit[0] = 0;
                return false;
        case MB_MENU_BACKSPACE:
                edit_backspace(m);
                return false;
        case MB_MENU_CHAR:
                edit_char(m, ch);
                return false;
        default:
                return false;
        }
}

static bool input_list(mb_menu *m, mb_menu_key key, uint32_t ch) {
        switch (key) {
        case MB_MENU_UP:
                if (m->sel > 0)
                        m->sel--;
                return false;
        case MB_MENU_DOWN:
                if (m->sel + 1 < m->n)
                        m->sel++;
                return false;
        case MB_MENU_HOME:
                m->sel = 0;
                return false;
        case MB_MENU_END:
                m->sel = m->n - 1;
                return false;
        case MB_MENU_ENTER:
                return decide(m, m->sel, false);
        case MB_MENU_CHAR:
                /* The numbers the menu shows: 1 is the first listed. */
                if (ch >= '1' && ch <= '9' && ch - '1' < m->n)
                        return decide(m, ch - '1', false);
                if (ch == 'e')
                        edit_start(m);
                return false;
        default:
                return false;
        }
}

bool mb_menu_input(mb_menu *m, mb_menu_key key, uint32_t ch) {
        if (m->done)
                return true;
        if (key == MB_MENU_TICK) {
                if (!m->counting)
                        return false;
                if (m->remain > 0)
                        m->remain--;
                /* Time is up: the default, as if there had been no menu. */
                return m->remain == 0 ? decide(m, m->plan->default_pos, false) : false;
        }
        /* A key: the user is here, and the countdown stops for good. */
        m->counting = false;
        m->notice = MB_MENU_NOTICE_NONE;
        return m->editing ? input_edit(m, key, ch) : input_list(m, key, ch);
}

mb_err mb_menu_apply(const mb_menu *m, mb_plan *p) {
        mb_str line;

        if (!m->done || p != m->plan)
                return MB_ERR_INVALID;
        line = (mb_str) { m->edit, m->edit_len };
        return mb_plan_choose(p, mb_plan_sorted(p, m->choice), m->edited ? &line : NULL);
}
