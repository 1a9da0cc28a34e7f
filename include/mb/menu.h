/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The boot menu's model: what the menu shows and what a key does to it,
 * with no firmware in it (efi/menu.c draws it and reads the keys). Its
 * state is the plan's usable entries in sort order, the highlighted one,
 * the countdown and the editor's line; its input is one key (or one
 * second passing) at a time; its output is a decision the plan takes
 * (mb_menu_apply, mb_plan_choose), so what is measured still comes from
 * the plan alone (docs/DESIGN.md "The boot menu").
 *
 * Keys (docs/CONFIG.md "The boot menu"): up/down/Home/End move the
 * highlight; Enter boots it; 1-9 boot the entry of that number; "e" edits
 * its command line (when the plan's editor allows it): printable ASCII
 * characters are added at the end, Backspace deletes the last character,
 * Enter boots the edited line, Esc drops the edit. Any key stops the
 * countdown.
 */
#ifndef MB_MENU_H
#define MB_MENU_H

#include "mb/plan.h"

#define MB_MENU_EDIT_MAX MB_PLAN_CMDLINE_MAX

typedef enum mb_menu_key {
        MB_MENU_TICK = 1,       /* a second passed with no key */
        MB_MENU_UP,
        MB_MENU_DOWN,
        MB_MENU_HOME,
        MB_MENU_END,
        MB_MENU_ENTER,
        MB_MENU_ESC,
        MB_MENU_BACKSPACE,
        MB_MENU_CHAR,           /* a character key: its Unicode code point in ch */
        MB_MENU_OTHER,          /* any other key (a function key, ...): it only stops the countdown */
} mb_menu_key;

/* What the menu has to tell the user after the last key. */
typedef enum mb_menu_notice {
        MB_MENU_NOTICE_NONE = 0,
        MB_MENU_NOTICE_EDITOR_OFF,      /* "e", and the plan's editor is off */
        MB_MENU_NOTICE_TOO_LONG,        /* the line is (or would be) over MB_MENU_EDIT_MAX bytes */
} mb_menu_notice;

typedef struct mb_menu {
        const mb_plan *plan;            /* borrowed, as are the entries */
        mb_plan_entry *const *entries;
        size_t n;                       /* entries listed: the plan's n_boot */
        size_t sel;                     /* the highlighted one: a position in sort order */
        bool counting;                  /* the countdown runs */
        uint32_t remain;                /* its seconds left */
        bool editing;
        char edit[MB_MENU_EDIT_MAX + 1];        /* the line being edited, UTF-8, NUL-terminated */
        size_t edit_len;
        mb_menu_notice notice;
        /* Out: the decision. choice is a position in sort order
         * (mb_plan_sorted); edited: boot it with edit[] as its line. */
        bool done, edited;
        size_t choice;
} mb_menu;

/* A menu over plan's usable entries (plan->n_boot > 0, else
 * MB_ERR_INVALID), the default highlighted, the countdown running when
 * plan->menu is MB_PLAN_MENU_TIMEOUT. */
mb_err mb_menu_init(mb_menu *m, const mb_plan *plan, mb_plan_entry *const *entries);

/* One key (ch: the character for MB_MENU_CHAR, else ignored). Returns
 * m->done: a decision is made (then every later key is ignored). The
 * countdown reaching 0 decides for the default. */
bool mb_menu_input(mb_menu *m, mb_menu_key key, uint32_t ch);

/* Hand the decision (m->done) to the plan m was made from, p:
 * mb_plan_choose with the chosen entry and, when edited, the line (p then
 * borrows m->edit: keep m until the boot is over). MB_ERR_INVALID when no
 * decision is made, else mb_plan_choose's result. */
mb_err mb_menu_apply(const mb_menu *m, mb_plan *p);

#endif
