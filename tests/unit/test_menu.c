/* SPDX-License-Identifier: BSD-2-Clause */
/* The boot menu: loader.conf's timeout and editor as the plan reads them
 * (src/plan.c), the menu's decision taken into the plan (mb_plan_choose),
 * and the menu model (src/menu.c) key by key, then on random key
 * sequences. Expected values are written by hand from loader.conf(5)'s
 * timeout words and the keys docs/CONFIG.md documents. */
#include "mb/menu.h"
#include "mb/tcglog.h"
#include "testlib.h"

#define LINUX(ver) "title Debian " ver "\nversion " ver "\nlinux /vmlinuz-" ver "\noptions root=/dev/vda2 quiet\n"

/* Three entries: sort order (newest version first) is c, b, a. */
typedef struct esp {
        mb_plan_entry e[3], *pv[3];
        mb_boot_policy policy;
        mb_plan plan;
} esp;

static mb_err esp_build(esp *s, const char *conf, const char *policy) {
        static const char *const names[] = { "a.conf", "b.conf", "c.conf" };
        static const char *const texts[] = { LINUX("6.1.0-1"), LINUX("6.1.0-2"), LINUX("6.1.0-3") };

        memset(s, 0, sizeof(*s));
        if (mb_boot_policy_parse(policy ? policy : "", policy ? strlen(policy) : 0, &s->policy) != MB_OK)
                return MB_ERR_INVALID;
        for (size_t i = 0; i < 3; i++) {
                s->e[i] = (mb_plan_entry) { .id = { names[i], 6 }, .buf = texts[i], .size = strlen(texts[i]) };
                s->pv[i] = &s->e[i];
        }
        return mb_plan_build(&s->policy, NULL, conf ? MB_PLAN_CONF_READ : MB_PLAN_CONF_ABSENT, conf,
                             conf ? strlen(conf) : 0, s->pv, 3, &s->plan);
}

static const char *name_of(const esp *s, size_t idx) {
        return s->e[idx].id.p;
}

typedef struct timeout_case {
        const char *conf;
        mb_plan_menu menu;
        uint32_t seconds;
} timeout_case;

TEST(timeout_words) {
        static const timeout_case cases[] = {
                { NULL, MB_PLAN_MENU_HIDDEN, 0 },
                { "default a*\n", MB_PLAN_MENU_HIDDEN, 0 },
                { "timeout 0\n", MB_PLAN_MENU_HIDDEN, 0 },
                { "timeout menu-hidden\n", MB_PLAN_MENU_HIDDEN, 0 },
                { "timeout menu-disabled\n", MB_PLAN_MENU_DISABLED, 0 },
                { "timeout menu-force\n", MB_PLAN_MENU_FORCE, 0 },
                { "timeout 5\n", MB_PLAN_MENU_TIMEOUT, 5 },
                { "timeout 1\n", MB_PLAN_MENU_TIMEOUT, 1 },
                { "timeout 4294967295\n", MB_PLAN_MENU_TIMEOUT, 4294967295u },
                { "timeout 5\ntimeout menu-disabled\n", MB_PLAN_MENU_DISABLED, 0 },   /* the last line wins */
                /* Not parsed: the defaults, which show no menu. */
                { "timeout menu-shown\n", MB_PLAN_MENU_HIDDEN, 0 },
                { "timeout -1\n", MB_PLAN_MENU_HIDDEN, 0 },
        };
        esp s;

        for (size_t i = 0; i < MB_ARRAY_SIZE(cases); i++) {
                CHECK_EQ_INT(esp_build(&s, cases[i].conf, NULL), MB_OK);
                CHECK_EQ_INT(s.plan.menu, cases[i].menu);
                CHECK_EQ_INT(s.plan.menu_timeout, cases[i].seconds);
        }
}

TEST(editor_setting) {
        static const struct {
                const char *conf, *policy;
                bool editor, defaulted;
        } cases[] = {
                { NULL, NULL, true, false },                    /* systemd-boot's default: on */
                { "editor yes\n", NULL, true, false },
                { "editor no\n", NULL, false, false },
                { "editor n\n", NULL, false, false },          /* systemd-boot's short words */
                { "editor f\n", NULL, false, false },
                { "editor 0\n", NULL, false, false },
                { "editor t\n", NULL, true, false },
                { "editor maybe\n", NULL, true, true },        /* not parsed: defaults */
                { NULL, "editor no\n", false, false },
                { "editor yes\n", "editor no\n", false, false },  /* loader.conf cannot turn it on */
                { "editor no\n", "editor yes\n", false, false },  /* but off */
        };
        esp s;

        for (size_t i = 0; i < MB_ARRAY_SIZE(cases); i++) {
                CHECK_EQ_INT(esp_build(&s, cases[i].conf, cases[i].policy), MB_OK);
                CHECK_EQ_INT(s.plan.editor, cases[i].editor);
                CHECK_EQ_INT(s.plan.conf_defaulted, cases[i].defaulted);
        }
}

TEST(policy_editor_key) {
        mb_boot_policy p;
        char text[128];

        CHECK_EQ_INT(mb_boot_policy_parse("", 0, &p), MB_OK);
        CHECK_EQ_INT(p.editor_off, false);
        CHECK_EQ_INT(mb_boot_policy_parse("editor no\n", 10, &p), MB_OK);
        CHECK_EQ_INT(p.editor_off, true);
        CHECK_EQ_INT(mb_boot_policy_format(&p, text, sizeof(text), NULL), MB_OK);
        CHECK(strcmp(text, "tpm-required no\ntpm-failure refuse\ntotp no\neditor no\n") == 0);
        CHECK_EQ_INT(mb_boot_policy_parse("editor yes\n", 11, &p), MB_OK);
        CHECK_EQ_INT(p.editor_off, false);
        /* A policy from before the key reads and prints as it did. */
        CHECK_EQ_INT(mb_boot_policy_format(&p, text, sizeof(text), NULL), MB_OK);
        CHECK(strcmp(text, "tpm-required no\ntpm-failure refuse\ntotp no\n") == 0);
        /* One reading only: no synonyms, no repeats. */
        CHECK_EQ_INT(mb_boot_policy_parse("editor n\n", 9, &p), MB_ERR_INVALID);
        CHECK_EQ_INT(mb_boot_policy_parse("editor no\neditor no\n", 20, &p), MB_ERR_INVALID);
        CHECK_EQ_INT(p.err_line, 2);
}

TEST(sorted_and_default_pos) {
        esp s;

        CHECK_EQ_INT(esp_build(&s, "default b*\n", NULL), MB_OK);
        CHECK(strcmp(name_of(&s, s.plan.boot[0]), "b.conf") == 0);
        CHECK_EQ_INT(s.plan.default_pos, 1);
        CHECK(strcmp(name_of(&s, mb_plan_sorted(&s.plan, 0)), "c.conf") == 0);
        CHECK(strcmp(name_of(&s, mb_plan_sorted(&s.plan, 1)), "b.conf") == 0);
        CHECK(strcmp(name_of(&s, mb_plan_sorted(&s.plan, 2)), "a.conf") == 0);
        CHECK_EQ_INT(esp_build(&s, NULL, NULL), MB_OK);
        CHECK_EQ_INT(s.plan.default_pos, 0);
        CHECK(strcmp(name_of(&s, mb_plan_sorted(&s.plan, 2)), "a.conf") == 0);
}

TEST(choose) {
        mb_str line = { "root=/dev/vda2 single", 21 };
        esp s;
        mb_plan before;
        size_t a = 0, b = 1, c = 2;

        CHECK_EQ_INT(esp_build(&s, NULL, NULL), MB_OK);
        before = s.plan;
        /* a: tried first, then the rest in sort order after it, wrapping. */
        CHECK_EQ_INT(mb_plan_choose(&s.plan, a, NULL), MB_OK);
        CHECK_EQ_INT(s.plan.boot[0], a);
        CHECK_EQ_INT(s.plan.boot[1], c);
        CHECK_EQ_INT(s.plan.boot[2], b);
        CHECK_EQ_INT(s.plan.chosen, true);
        CHECK_EQ_INT(s.plan.edited_set, false);
        CHECK_EQ_INT(s.plan.default_pos, 2);
        CHECK_EQ_INT(mb_plan_sorted(&s.plan, 0), c);
        /* Each try keeps its steps: the same as before, for the same entry. */
        for (size_t k = 0; k < 3; k++) {
                size_t was = 0;

                while (before.boot[was] != s.plan.boot[k])
                        was++;
                CHECK_EQ_INT(s.plan.n_tries[k], before.n_tries[was]);
                CHECK(memcmp(s.plan.tries[k], before.tries[was], sizeof(s.plan.tries[k])) == 0);
                CHECK_EQ_INT(s.plan.tries[k][0].entry, s.plan.boot[k]);
        }
        /* The start and the ends are no menu's business. */
        CHECK(memcmp(s.plan.start, before.start, sizeof(before.start)) == 0);
        CHECK(memcmp(s.plan.exit, before.exit, sizeof(before.exit)) == 0);

        /* Edited: only the first try's command line step changes. */
        CHECK_EQ_INT(esp_build(&s, NULL, NULL), MB_OK);
        CHECK_EQ_INT(mb_plan_choose(&s.plan, b, &line), MB_OK);
        CHECK_EQ_INT(s.plan.boot[0], b);
        CHECK_EQ_INT(s.plan.edited_set, true);
        CHECK(s.plan.edited.p == line.p && s.plan.edited.len == line.len);
        for (size_t k = 0; k < 3; k++)
                for (size_t i = 0; i < s.plan.n_tries[k]; i++) {
                        uint8_t src = s.plan.tries[k][i].src;

                        CHECK(src != (k == 0 ? MB_PLAN_SRC_CMDLINE : MB_PLAN_SRC_CMDLINE_EDITED));
                        if (src == MB_PLAN_SRC_CMDLINE_EDITED) {
                                CHECK_EQ_INT(s.plan.tries[k][i].pcr, 12);
                                CHECK_EQ_INT(s.plan.tries[k][i].type, MB_EV_IPL);
                        }
                }
}

TEST(choose_refusals) {
        char big[MB_PLAN_CMDLINE_MAX + 1];
        mb_str line = { "x", 1 }, too_long = { big, sizeof(big) }, null_line = { NULL, 3 };
        mb_str max = { big, MB_PLAN_CMDLINE_MAX }, empty = { NULL, 0 };
        esp s;
        mb_plan before;

        memset(big, 'x', sizeof(big));
        CHECK_EQ_INT(esp_build(&s, "editor no\n", NULL), MB_OK);
        before = s.plan;
        CHECK_EQ_INT(mb_plan_choose(&s.plan, 0, &line), MB_ERR_UNSUPPORTED);
        CHECK_EQ_INT(mb_plan_choose(&s.plan, 3, NULL), MB_ERR_NOTFOUND);
        CHECK_EQ_INT(mb_plan_choose(&s.plan, 99, NULL), MB_ERR_NOTFOUND);
        CHECK(memcmp(&s.plan, &before, sizeof(before)) == 0);
        CHECK_EQ_INT(esp_build(&s, NULL, NULL), MB_OK);
        before = s.plan;
        CHECK_EQ_INT(mb_plan_choose(&s.plan, 0, &too_long), MB_ERR_TOOLONG);
        CHECK_EQ_INT(mb_plan_choose(&s.plan, 0, &null_line), MB_ERR_INVALID);
        CHECK(memcmp(&s.plan, &before, sizeof(before)) == 0);
        CHECK_EQ_INT(mb_plan_choose(&s.plan, 0, &max), MB_OK);
        CHECK_EQ_INT(esp_build(&s, NULL, NULL), MB_OK);
        CHECK_EQ_INT(mb_plan_choose(&s.plan, 0, &empty), MB_OK);         /* an empty line is a line */
        CHECK_EQ_INT(s.plan.edited_set, true);
}

/* Feed a string of keys: 'U' up, 'D' down, 'H' home, 'N' end, '\n' Enter,
 * 'X' Esc, 'B' Backspace, 'T' a tick, 'O' another key, anything else
 * that character. Returns whether the menu decided. */
static bool keys(mb_menu *m, const char *k) {
        bool done = false;

        for (; *k; k++) {
                switch (*k) {
                case 'U': done = mb_menu_input(m, MB_MENU_UP, 0); break;
                case 'D': done = mb_menu_input(m, MB_MENU_DOWN, 0); break;
                case 'H': done = mb_menu_input(m, MB_MENU_HOME, 0); break;
                case 'N': done = mb_menu_input(m, MB_MENU_END, 0); break;
                case '\n': done = mb_menu_input(m, MB_MENU_ENTER, 0); break;
                case 'X': done = mb_menu_input(m, MB_MENU_ESC, 0); break;
                case 'B': done = mb_menu_input(m, MB_MENU_BACKSPACE, 0); break;
                case 'T': done = mb_menu_input(m, MB_MENU_TICK, 0); break;
                case 'O': done = mb_menu_input(m, MB_MENU_OTHER, 0); break;
                default: done = mb_menu_input(m, MB_MENU_CHAR, (unsigned char) *k); break;
                }
        }
        return done;
}

/* The entry the menu decided for, by name, after it went into the plan. */
static const char *decided(esp *s, mb_menu *m) {
        if (!m->done || mb_menu_apply(m, &s->plan) != MB_OK)
                return "(none)";
        return name_of(s, s->plan.boot[0]);
}

typedef struct key_case {
        const char *what, *conf, *keys;
        const char *boots;      /* NULL: no decision yet */
        const char *line;       /* the edited line; NULL: not edited */
} key_case;

static const key_case key_cases[] = {
        { "the countdown runs out: the default", "timeout 3\ndefault b*\n", "TTT", "b.conf", NULL },
        { "not before it runs out", "timeout 3\n", "TT", NULL, NULL },
        { "a key stops the countdown for good", "timeout 2\n", "OTTTTT", NULL, NULL },
        { "menu-force: no countdown", "timeout menu-force\n", "TTTTTTTTTT", NULL, NULL },
        { "hidden (reached by a key): no countdown", NULL, "TTTT", NULL, NULL },
        { "Enter boots the highlighted default", "timeout 5\ndefault a*\n", "\n", "a.conf", NULL },
        { "down, Enter: the next in sort order", "timeout 5\n", "D\n", "b.conf", NULL },
        { "down stops at the last", "timeout 5\n", "DDDDD\n", "a.conf", NULL },
        { "up stops at the first", "timeout 5\ndefault a*\n", "UUUU\n", "c.conf", NULL },
        { "Home and End", "timeout 5\n", "NUH\n", "c.conf", NULL },
        { "End", "timeout 5\n", "N\n", "a.conf", NULL },
        { "number 2: the second listed", "timeout 5\n", "2", "b.conf", NULL },
        { "number 3, whatever is highlighted", "timeout 5\ndefault b*\n", "U3", "a.conf", NULL },
        { "number 1", "timeout 5\ndefault a*\n", "1", "c.conf", NULL },
        { "no entry 4 or 0: nothing", "timeout 5\n", "40", NULL, NULL },
        { "other characters: nothing", "timeout 5\n", "qz ", NULL, NULL },
        { "e, type, Enter: the edited line", "timeout 5\n", "D" "e single\n", "b.conf",
          "root=/dev/vda2 quiet single" },
        { "e, Backspace twice, Enter", "timeout 5\n", "eBBBBBB\n", "c.conf", "root=/dev/vda2" },
        { "Backspace past the start: empty", "timeout 5\n", "e" "BBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBB\n", "c.conf", "" },
        { "e, Esc: the edit is dropped", "timeout 5\n", "e xX\n", "c.conf", NULL },
        { "e, Esc, e again: from the entry's line", "timeout 5\n", "e xXe\n", "c.conf", "root=/dev/vda2 quiet" },
        { "in the editor, numbers are text", "timeout 5\n", "e 2\n", "c.conf", "root=/dev/vda2 quiet 2" },
        { "in the editor, arrows and ticks do nothing", "timeout 5\n", "eUDHNTTTTTTTO\n", "c.conf",
          "root=/dev/vda2 quiet" },
        { "editor off: e does nothing, Enter boots unedited", "timeout 5\neditor no\n", "e x\n", "c.conf", NULL },
        { "editor off: the typed 2 boots entry 2", "timeout 5\neditor no\n", "e2", "b.conf", NULL },
        { "keys after the decision are ignored", "timeout 5\n", "1D\n3", "c.conf", NULL },
};

TEST(keys_table) {
        for (size_t i = 0; i < MB_ARRAY_SIZE(key_cases); i++) {
                const key_case *c = &key_cases[i];
                esp s;
                mb_menu m;
                bool done;

                CHECK_EQ_INT(esp_build(&s, c->conf, NULL), MB_OK);
                CHECK_EQ_INT(mb_menu_init(&m, &s.plan, s.pv), MB_OK);
                done = keys(&m, c->keys);
                CHECK_EQ_INT(done, c->boots != NULL);
                if (!c->boots)
                        continue;
                if (strcmp(decided(&s, &m), c->boots))
                        printf("  %s: booted %s, expected %s\n", c->what, decided(&s, &m), c->boots);
                CHECK(strcmp(decided(&s, &m), c->boots) == 0);
                CHECK_EQ_INT(s.plan.edited_set, c->line != NULL);
                if (c->line && (s.plan.edited.len != strlen(c->line) ||
                                memcmp(s.plan.edited.p, c->line, s.plan.edited.len)))
                        printf("  %s: line \"%.*s\", expected \"%s\"\n", c->what, (int) s.plan.edited.len,
                               s.plan.edited.p, c->line);
                CHECK(!c->line || (s.plan.edited.len == strlen(c->line) &&
                                   memcmp(s.plan.edited.p, c->line, s.plan.edited.len) == 0));
        }
}

TEST(notices) {
        esp s;
        mb_menu m;

        CHECK_EQ_INT(esp_build(&s, "timeout 5\neditor no\n", NULL), MB_OK);
        CHECK_EQ_INT(mb_menu_init(&m, &s.plan, s.pv), MB_OK);
        keys(&m, "e");
        CHECK_EQ_INT(m.notice, MB_MENU_NOTICE_EDITOR_OFF);
        CHECK_EQ_INT(m.editing, false);
        keys(&m, "D");
        CHECK_EQ_INT(m.notice, MB_MENU_NOTICE_NONE);    /* the next key clears it */
        /* Typing past the limit: refused and said, the line kept. */
        CHECK_EQ_INT(esp_build(&s, "timeout 5\n", NULL), MB_OK);
        CHECK_EQ_INT(mb_menu_init(&m, &s.plan, s.pv), MB_OK);
        keys(&m, "e");
        while (m.edit_len < MB_MENU_EDIT_MAX)
                keys(&m, "x");
        CHECK_EQ_INT(m.notice, MB_MENU_NOTICE_NONE);
        keys(&m, "y");
        CHECK_EQ_INT(m.notice, MB_MENU_NOTICE_TOO_LONG);
        CHECK_EQ_INT(m.edit_len, MB_MENU_EDIT_MAX);
        CHECK_EQ_INT(m.edit[MB_MENU_EDIT_MAX - 1], 'x');
        CHECK_EQ_INT(keys(&m, "\n"), true);
        CHECK_EQ_INT(mb_menu_apply(&m, &s.plan), MB_OK);
        CHECK_EQ_INT(s.plan.edited.len, MB_MENU_EDIT_MAX);
        /* Control characters and non-ASCII are never typed in. */
        CHECK_EQ_INT(esp_build(&s, "timeout 5\n", NULL), MB_OK);
        CHECK_EQ_INT(mb_menu_init(&m, &s.plan, s.pv), MB_OK);
        keys(&m, "e");
        mb_menu_input(&m, MB_MENU_CHAR, 0x1b);
        mb_menu_input(&m, MB_MENU_CHAR, 0x7f);
        mb_menu_input(&m, MB_MENU_CHAR, 0xe9);
        mb_menu_input(&m, MB_MENU_CHAR, 0);
        mb_menu_input(&m, MB_MENU_CHAR, 0x10000);
        CHECK(strcmp(m.edit, "root=/dev/vda2 quiet") == 0);
}

/* An entry whose options hold non-ASCII UTF-8: Backspace takes a whole
 * character; options too long for the editor are not offered. */
TEST(edit_utf8_and_long_options) {
        static char longopts[MB_MENU_EDIT_MAX + 512];
        const char *utf8 = "linux /vmlinuz\noptions a=\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80\n";
        mb_plan_entry e = { .id = { "u.conf", 6 }, .buf = utf8, .size = strlen(utf8) }, *pv[1] = { &e };
        mb_boot_policy policy;
        mb_plan plan;
        mb_menu m;
        size_t n;

        CHECK_EQ_INT(mb_boot_policy_parse("", 0, &policy), MB_OK);
        CHECK_EQ_INT(mb_plan_build(&policy, NULL, MB_PLAN_CONF_ABSENT, NULL, 0, pv, 1, &plan), MB_OK);
        CHECK_EQ_INT(mb_menu_init(&m, &plan, pv), MB_OK);
        keys(&m, "eB");
        CHECK(strcmp(m.edit, "a=\xc3\xa9\xe2\x82\xac") == 0);
        keys(&m, "B");
        CHECK(strcmp(m.edit, "a=\xc3\xa9") == 0);
        keys(&m, "B");
        CHECK(strcmp(m.edit, "a=") == 0);

        n = (size_t) snprintf(longopts, sizeof(longopts), "linux /vmlinuz\noptions ");
        memset(longopts + n, 'o', 4000);
        n += 4000;
        n += (size_t) snprintf(longopts + n, sizeof(longopts) - n, "\noptions ");
        memset(longopts + n, 'p', 200);
        n += 200;
        longopts[n++] = '\n';
        e = (mb_plan_entry) { .id = { "l.conf", 6 }, .buf = longopts, .size = n };
        CHECK_EQ_INT(mb_plan_build(&policy, NULL, MB_PLAN_CONF_ABSENT, NULL, 0, pv, 1, &plan), MB_OK);
        CHECK_EQ_INT(plan.n_boot, 1);
        CHECK_EQ_INT(mb_menu_init(&m, &plan, pv), MB_OK);
        keys(&m, "e");
        CHECK_EQ_INT(m.editing, false);
        CHECK_EQ_INT(m.notice, MB_MENU_NOTICE_TOO_LONG);
}

TEST(refusals) {
        esp s;
        mb_menu m;
        mb_plan other;

        CHECK_EQ_INT(mb_menu_init(NULL, NULL, NULL), MB_ERR_INVALID);
        CHECK_EQ_INT(esp_build(&s, "timeout 5\n", NULL), MB_OK);
        CHECK_EQ_INT(mb_menu_init(&m, &s.plan, s.pv), MB_OK);
        CHECK_EQ_INT(mb_menu_apply(&m, &s.plan), MB_ERR_INVALID);       /* nothing decided */
        keys(&m, "1");
        other = s.plan;
        CHECK_EQ_INT(mb_menu_apply(&m, &other), MB_ERR_INVALID);        /* not its plan */
        s.plan.n_boot = 0;
        CHECK_EQ_INT(mb_menu_init(&m, &s.plan, s.pv), MB_ERR_INVALID);  /* nothing to list */
}

/* Random keys on plans of each timeout: the state stays in bounds, a
 * decision always goes into the plan, the editor never edits when off,
 * and a menu nobody touches boots the plan as built (what predict
 * assumes). */
TEST(random_keys) {
        static const char *const confs[] = { "timeout 3\n", "timeout menu-force\n", "timeout 2\neditor no\n",
                                             "timeout 1\ndefault a*\n", NULL };
        static const char alphabet[] = "UDHN\nXBTTTO12349e ab\x01";
        uint64_t x = 0x9e3779b97f4a7c15ull;

        for (size_t round = 0; round < 20000; round++) {
                const char *conf = confs[round % MB_ARRAY_SIZE(confs)];
                esp s;
                mb_menu m;
                mb_plan built;
                char seq[64];
                size_t len;

                x ^= x << 13, x ^= x >> 7, x ^= x << 17;
                len = (size_t) (x % 40);
                for (size_t i = 0; i < len; i++) {
                        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
                        seq[i] = alphabet[x % (sizeof(alphabet) - 1)];
                }
                seq[len] = 0;
                CHECK_EQ_INT(esp_build(&s, conf, NULL), MB_OK);
                built = s.plan;
                CHECK_EQ_INT(mb_menu_init(&m, &s.plan, s.pv), MB_OK);
                keys(&m, seq);
                CHECK(m.sel < m.n);
                CHECK(m.edit_len <= MB_MENU_EDIT_MAX && m.edit[m.edit_len] == 0);
                CHECK(!m.editing || s.plan.editor);
                if (!m.done)
                        continue;
                CHECK(m.choice < m.n);
                CHECK(!m.edited || s.plan.editor);
                CHECK_EQ_INT(mb_menu_apply(&m, &s.plan), MB_OK);
                CHECK_EQ_INT(s.plan.boot[0], mb_plan_sorted(&built, m.choice));
                /* Only ticks: the countdown's decision is the plan as built. */
                if (strspn(seq, "T") == len)
                        CHECK(memcmp(s.plan.boot, built.boot, sizeof(built.boot)) == 0 && !s.plan.edited_set);
        }
}

int main(void) {
        RUN(timeout_words);
        RUN(editor_setting);
        RUN(policy_editor_key);
        RUN(sorted_and_default_pos);
        RUN(choose);
        RUN(choose_refusals);
        RUN(keys_table);
        RUN(notices);
        RUN(edit_utf8_and_long_options);
        RUN(refusals);
        RUN(random_keys);
        TL_EXIT();
}
