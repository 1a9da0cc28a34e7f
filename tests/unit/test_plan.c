/* SPDX-License-Identifier: BSD-2-Clause */
/* The boot plan (src/plan.c) on a table of ESPs: which settings are in
 * force, the order entries are tried in, which are measured as unusable
 * and in what order, and when mshim chainloads. Expected orders are
 * written by hand from the Boot Loader Specification's sort rules and
 * loader.conf(5)'s default, not computed. */
#include "mb/plan.h"
#include "mb/tcglog.h"
#include "testlib.h"

#define LINUX(ver) "title Debian\nversion " ver "\nlinux /vmlinuz-" ver "\noptions root=/dev/vda2\n"

typedef struct esp_file {
        const char *name;
        const char *text;       /* NULL: cannot be read */
} esp_file;

typedef struct esp_case {
        const char *what;
        const char *conf;       /* NULL: no loader.conf */
        const char *policy;     /* the built-in policy's text; NULL: defaults */
        esp_file files[8];
        const char *boot;       /* names tried, in order, joined by ' ' */
        const char *unusable;   /* names measured as unusable, in order */
        bool tpm_required;
        mb_totp_mode totp;
} esp_case;

static const esp_case cases[] = {
        { "no entries: chainload", NULL, NULL, { { NULL, NULL } }, "", "", false, MB_TOTP_NO },
        { "newest version first", NULL, NULL,
          { { "a.conf", LINUX("6.1.0-9") }, { "b.conf", LINUX("6.1.0-10") }, { NULL, NULL } },
          "b.conf a.conf", "", false, MB_TOTP_NO },
        { "the default glob first, the rest in order after it, wrapping",
          "default a*\n", NULL,
          { { "c.conf", LINUX("6.1.0-8") }, { "a.conf", LINUX("6.1.0-9") }, { "b.conf", LINUX("6.1.0-10") },
            { NULL, NULL } },
          "a.conf c.conf b.conf", "", false, MB_TOTP_NO },
        { "a default that matches nothing: the first", "default zz\n", NULL,
          { { "a.conf", LINUX("6.1.0-9") }, { "b.conf", LINUX("6.1.0-10") }, { NULL, NULL } },
          "b.conf a.conf", "", false, MB_TOTP_NO },
        { "unusable entries by name, whatever the listing order", NULL, NULL,
          { { "z.conf", "nonsense\n" }, { "m.conf", NULL }, { "k.conf", LINUX("6.1.0-9") },
            { "b.conf", "title no kernel\n" }, { NULL, NULL } },
          "k.conf", "b.conf m.conf z.conf", false, MB_TOTP_NO },
        { "initrd= in options makes an entry unusable", NULL, NULL,
          { { "a.conf", "linux /vmlinuz\noptions root=/dev/vda2 initrd=\\evil.img\n" },
            { "b.conf", LINUX("6.1.0-9") }, { NULL, NULL } },
          "b.conf", "a.conf", false, MB_TOTP_NO },
        { "only unusable entries: chainload, still measured", NULL, NULL,
          { { "a.conf", "x\n" }, { NULL, NULL } }, "", "a.conf", false, MB_TOTP_NO },
        { "loader.conf that does not parse: tpm-required yes, totp show", "timeout soon\n", NULL,
          { { "a.conf", LINUX("6.1.0-9") }, { NULL, NULL } }, "a.conf", "", true, MB_TOTP_SHOW },
        { "loader.conf asks for the TPM and TOTP", "tpm-required yes\ntotp require\n", NULL,
          { { NULL, NULL } }, "", "", true, MB_TOTP_REQUIRE },
        { "the built-in floor beats loader.conf's no", "tpm-required no\ntotp no\n",
          "tpm-required yes\ntotp require\n", { { NULL, NULL } }, "", "", true, MB_TOTP_REQUIRE },
        { "loader.conf raises the built-in show to require", "totp require\n", "totp show\n",
          { { NULL, NULL } }, "", "", false, MB_TOTP_REQUIRE },
};

/* The names at the plan's indices, joined by ' '. */
static void names(const esp_case *c, const size_t *idx, size_t n, char *out, size_t cap) {
        out[0] = 0;
        for (size_t i = 0; i < n; i++) {
                if (i)
                        strncat(out, " ", cap - strlen(out) - 1);
                strncat(out, c->files[idx[i]].name, cap - strlen(out) - 1);
        }
}

static void run_case(const esp_case *c) {
        mb_plan_entry e[8], *pv[8];
        mb_boot_policy policy = { 0 };
        mb_plan plan;
        char got[256];
        size_t n = 0;

        if (c->policy)
                CHECK_EQ_INT(mb_boot_policy_parse(c->policy, strlen(c->policy), &policy), MB_OK);
        for (; c->files[n].name; n++) {
                e[n] = (mb_plan_entry) { .id = { c->files[n].name, strlen(c->files[n].name) },
                                         .buf = c->files[n].text, .size = c->files[n].text ? strlen(c->files[n].text) : 0 };
                pv[n] = &e[n];
        }
        CHECK_EQ_INT(mb_plan_build(&policy, NULL, c->conf ? MB_PLAN_CONF_READ : MB_PLAN_CONF_ABSENT, c->conf,
                                   c->conf ? strlen(c->conf) : 0, pv, n, &plan), MB_OK);
        names(c, plan.boot, plan.n_boot, got, sizeof(got));
        if (strcmp(got, c->boot))
                printf("  %s: tried \"%s\", expected \"%s\"\n", c->what, got, c->boot);
        CHECK(strcmp(got, c->boot) == 0);
        names(c, plan.unusable, plan.n_unusable, got, sizeof(got));
        if (strcmp(got, c->unusable))
                printf("  %s: unusable \"%s\", expected \"%s\"\n", c->what, got, c->unusable);
        CHECK(strcmp(got, c->unusable) == 0);
        CHECK_EQ_INT(plan.chainload, plan.n_boot == 0);
        CHECK_EQ_INT(plan.tpm_required, c->tpm_required);
        CHECK_EQ_INT(plan.totp, c->totp);
        CHECK_EQ_INT(plan.conf_tag, c->conf ? MB_TAG_LOADER_CONF : MB_TAG_FILE_ABSENT);
        for (size_t i = 0; i < n; i++)
                CHECK_EQ_INT(e[i].bad_tag != 0, strstr(c->unusable, c->files[i].name) != NULL);
}

TEST(table_of_esps) {
        for (size_t i = 0; i < MB_ARRAY_SIZE(cases); i++)
                run_case(&cases[i]);
}

/* What mshim cannot read is measured as such, whatever the host read. */
TEST(unreadable_files) {
        static char big[MB_CONF_FILE_MAX + 1];
        mb_plan_entry e = { .id = { "big.conf", 8 }, .buf = big, .size = sizeof(big) }, *pv[1] = { &e };
        mb_boot_policy policy = { 0 };
        mb_plan plan;

        memset(big, '#', sizeof(big));
        CHECK_EQ_INT(mb_plan_build(&policy, NULL, MB_PLAN_CONF_READ, big, sizeof(big), pv, 1, &plan), MB_OK);
        CHECK_EQ_INT(e.bad_tag, MB_TAG_FILE_UNREADABLE);
        CHECK_EQ_INT(plan.conf_tag, MB_TAG_FILE_UNREADABLE);
        CHECK(plan.conf_defaulted && plan.tpm_required && plan.totp == MB_TOTP_SHOW);
        CHECK_EQ_INT(mb_plan_build(&policy, NULL, MB_PLAN_CONF_UNREADABLE, NULL, 0, pv, 0, &plan), MB_OK);
        CHECK(plan.conf_defaulted && plan.chainload && plan.conf_tag == MB_TAG_FILE_UNREADABLE);
}

/* Bad arguments write nothing. */
TEST(refusals) {
        mb_plan_entry e = { .id = { "a.conf", 6 }, .buf = LINUX("1"), .size = strlen(LINUX("1")) };
        mb_plan_entry *pv[MB_PLAN_MAX_ENTRIES + 1];
        mb_boot_policy policy = { 0 };
        mb_plan plan, ref;

        for (size_t i = 0; i < MB_ARRAY_SIZE(pv); i++)
                pv[i] = &e;
        memset(&plan, 0xA5, sizeof(plan));
        ref = plan;
        CHECK_EQ_INT(mb_plan_build(&policy, NULL, MB_PLAN_CONF_ABSENT, NULL, 0, pv, MB_PLAN_MAX_ENTRIES + 1, &plan), MB_ERR_INVALID);
        CHECK_EQ_INT(mb_plan_build(NULL, NULL, MB_PLAN_CONF_ABSENT, NULL, 0, pv, 1, &plan), MB_ERR_INVALID);
        CHECK_EQ_INT(mb_plan_build(&policy, NULL, MB_PLAN_CONF_ABSENT, NULL, 0, NULL, 1, &plan), MB_ERR_INVALID);
        pv[0] = NULL;
        CHECK_EQ_INT(mb_plan_build(&policy, NULL, MB_PLAN_CONF_ABSENT, NULL, 0, pv, 1, &plan), MB_ERR_INVALID);
        CHECK(memcmp(&plan, &ref, sizeof(plan)) == 0);
}

/* The steps rendered "PCR:what", one a word. */
static void render(const mb_plan_step *v, size_t n, char *out, size_t cap) {
        static const char *const what[] = { "?", "conf", "unusable", "entry", "cmdline", "initrd", "totp-initrd",
                                            "fence", "lock", "chainload", "exit", "counter" };

        out[0] = 0;
        for (size_t i = 0; i < n; i++) {
                char w[32];

                snprintf(w, sizeof(w), "%s%u:%s", i ? " " : "", v[i].pcr,
                         v[i].src < MB_ARRAY_SIZE(what) ? what[v[i].src] : "?");
                strncat(out, w, cap - strlen(out) - 1);
        }
}

#define CHECK_STEPS(v, n, want) do { char _g[256]; render(v, n, _g, sizeof(_g)); \
        if (strcmp(_g, want)) printf("  steps \"%s\", expected \"%s\"\n", _g, want); \
        CHECK(strcmp(_g, want) == 0); } while (0)

/* The sequence of mshim's own measurements, as docs/MEASUREMENTS.md's
 * table "The events, in the order they happen" lists them (events 2, 2b,
 * 3, 5, 5b, 5i, 5c, 5d; the chainload and exit rows). */
TEST(measurement_steps) {
        mb_plan_entry e[3] = {
                { .id = { "b.conf", 6 }, .buf = "x\n", .size = 2 },
                { .id = { "k.conf", 6 }, .buf = LINUX("6.1"), .size = strlen(LINUX("6.1")) },
                { .id = { "e.conf", 6 }, .buf = "efi /shell.efi\n", .size = strlen("efi /shell.efi\n") },
        }, *pv[3] = { &e[0], &e[1], &e[2] };
        mb_boot_policy policy = { 0 };
        mb_plan_step v[MB_PLAN_TRY_STEPS];
        mb_plan plan;

        CHECK_EQ_INT(mb_plan_build(&policy, NULL, MB_PLAN_CONF_ABSENT, NULL, 0, pv, 3, &plan), MB_OK);
        CHECK_STEPS(plan.start, plan.n_start, "5:conf 5:unusable");
        CHECK_EQ_INT(plan.start[0].tag, MB_TAG_FILE_ABSENT);
        CHECK_EQ_INT(plan.start[1].tag, MB_TAG_BLS_ENTRY_BAD);
        CHECK_EQ_INT(plan.start[1].entry, 0);
        /* k.conf (a version) sorts before e.conf: BLS order by id. */
        CHECK_EQ_INT(plan.n_boot, 2);
        CHECK_STEPS(plan.tries[0], plan.n_tries[0], "5:entry 12:cmdline 9:initrd 13:lock");
        CHECK_EQ_INT(plan.tries[0][0].entry, plan.boot[0]);
        CHECK_EQ_INT(plan.tries[0][1].type, MB_EV_IPL);
        CHECK_STEPS(plan.chain, plan.n_chain, "12:chainload 13:lock");
        CHECK_STEPS(plan.exit, plan.n_exit, "5:exit 12:exit 13:lock");

        CHECK_EQ_INT(mb_plan_build(&policy, NULL, MB_PLAN_CONF_READ, "totp show\n", 10, pv, 3, &plan), MB_OK);
        CHECK_EQ_INT(plan.start[0].tag, MB_TAG_LOADER_CONF);
        for (size_t k = 0; k < plan.n_boot; k++) {
                if (e[plan.boot[k]].bls.linux.len)
                        CHECK_STEPS(plan.tries[k], plan.n_tries[k],
                                    "5:entry 12:cmdline 9:initrd 12:totp-initrd 12:fence 13:lock");
                else    /* an EFI program: no initrd event to vouch for */
                        CHECK_STEPS(plan.tries[k], plan.n_tries[k], "5:entry 12:cmdline 9:initrd 12:fence 13:lock");
        }
        CHECK_STEPS(plan.chain, plan.n_chain, "12:chainload 12:fence 13:lock");
        CHECK_EQ_INT(mb_plan_try_steps(MB_TOTP_REQUIRE, true, false, 7, v), 6);
        CHECK_EQ_INT(v[5].tag, MB_TAG_TOTP_FENCE);
        CHECK_EQ_INT(v[0].entry, 7);
        /* A counted entry: renamed after its file is measured, before its
         * image is loaded; the rename is no measurement (PCR 0). */
        CHECK_STEPS(v, mb_plan_try_steps(MB_TOTP_NO, true, true, 1, v), "5:entry 0:counter 12:cmdline 9:initrd 13:lock");
}

/* Which entry is tried first: LoaderEntryOneShot, LoaderEntryDefault,
 * loader.conf's default glob, the first in BLS order (systemd-boot's
 * precedence, its Boot Loader Interface); the rest follow in sort
 * order, wrapping. */
typedef struct default_case {
        const char *what, *conf, *oneshot, *def;        /* NULL: not set */
        const char *boot;
        mb_plan_default_from from;
} default_case;

static const default_case default_cases[] = {
        { "nothing set: the first in BLS order", NULL, NULL, NULL, "c.conf b.conf a.conf", MB_PLAN_DEFAULT_FIRST },
        { "loader.conf's glob", "default a*\n", NULL, NULL, "a.conf c.conf b.conf", MB_PLAN_DEFAULT_CONF },
        { "LoaderEntryDefault beats loader.conf", "default a*\n", NULL, "b", "b.conf a.conf c.conf", MB_PLAN_DEFAULT_VAR },
        { "LoaderEntryDefault with .conf", NULL, NULL, "a.conf", "a.conf c.conf b.conf", MB_PLAN_DEFAULT_VAR },
        { "LoaderEntryDefault is not a glob", "default c*\n", NULL, "a*", "c.conf b.conf a.conf", MB_PLAN_DEFAULT_CONF },
        { "LoaderEntryOneShot beats both", "default a*\n", "b.conf", "a", "b.conf a.conf c.conf", MB_PLAN_DEFAULT_ONESHOT },
        { "a OneShot naming nothing: LoaderEntryDefault", NULL, "zz", "a", "a.conf c.conf b.conf", MB_PLAN_DEFAULT_VAR },
        { "a OneShot naming an unusable entry: loader.conf", "default b*\n", "x", NULL, "b.conf a.conf c.conf",
          MB_PLAN_DEFAULT_CONF },
        { "an empty OneShot names nothing", NULL, "", NULL, "c.conf b.conf a.conf", MB_PLAN_DEFAULT_FIRST },
};

TEST(default_precedence) {
        static const char *const names[] = { "a.conf", "b.conf", "c.conf", "x.conf" };
        static const char *const texts[] = { LINUX("6.1.0-1"), LINUX("6.1.0-2"), LINUX("6.1.0-3"), "nonsense\n" };

        for (size_t i = 0; i < MB_ARRAY_SIZE(default_cases); i++) {
                const default_case *c = &default_cases[i];
                mb_plan_entry e[4], *pv[4];
                mb_plan_vars vars = { 0 };
                mb_boot_policy policy = { 0 };
                mb_plan plan;
                char got[64] = "";

                for (size_t k = 0; k < 4; k++) {
                        e[k] = (mb_plan_entry) { .id = { names[k], 6 }, .buf = texts[k], .size = strlen(texts[k]) };
                        pv[k] = &e[k];
                }
                vars.oneshot_set = c->oneshot != NULL;
                vars.oneshot = (mb_str) { c->oneshot ? c->oneshot : "", c->oneshot ? strlen(c->oneshot) : 0 };
                vars.entry_default = (mb_str) { c->def ? c->def : "", c->def ? strlen(c->def) : 0 };
                CHECK_EQ_INT(mb_plan_build(&policy, &vars, c->conf ? MB_PLAN_CONF_READ : MB_PLAN_CONF_ABSENT, c->conf,
                                           c->conf ? strlen(c->conf) : 0, pv, 4, &plan), MB_OK);
                for (size_t k = 0; k < plan.n_boot; k++) {
                        if (k)
                                strcat(got, " ");
                        strcat(got, names[plan.boot[k]]);
                }
                if (strcmp(got, c->boot) || plan.default_from != c->from)
                        printf("  %s: tried \"%s\" (rule %d), expected \"%s\" (rule %d)\n", c->what, got,
                               plan.default_from, c->boot, c->from);
                CHECK(strcmp(got, c->boot) == 0);
                CHECK_EQ_INT(plan.default_from, c->from);
                /* Deleted whenever it exists, whatever it names. */
                CHECK_EQ_INT(plan.delete_oneshot, c->oneshot != NULL);
        }
}

/* Boot counting (BLS "Boot counting"): names, the next name, the id. */
TEST(boot_counters) {
        static const struct {
                const char *name;
                bool counted;
                uint32_t left, done;
                const char *id, *next;
        } v[] = {
                { "a+3-1.conf", true, 3, 1, "a.conf", "a+2-2.conf" },
                { "a+3.conf", true, 3, 0, "a.conf", "a+2-1.conf" },
                { "debian-6.1+1-0.conf", true, 1, 0, "debian-6.1.conf", "debian-6.1+0-1.conf" },
                { "x+0-4.conf", true, 0, 4, "x.conf", "x+0-5.conf" },       /* LEFT stays 0 */
                { "a+b+2-0.CONF", true, 2, 0, "a+b.CONF", "a+b+1-1.CONF" }, /* the last '+' */
                { "a.conf", false, 0, 0, "a.conf", "" },
                { "a+.conf", false, 0, 0, "a+.conf", "" },
                { "+3.conf", false, 0, 0, "+3.conf", "" },
                { "a+3-.conf", false, 0, 0, "a+3-.conf", "" },
                { "a+x.conf", false, 0, 0, "a+x.conf", "" },
                { "a+1-2-3.conf", false, 0, 0, "a+1-2-3.conf", "" },
                { "a+1000000.conf", false, 0, 0, "a+1000000.conf", "" },    /* over MB_PLAN_COUNTER_MAX */
                { "a+3.txt", false, 0, 0, "a+3.txt", "" },
        };

        for (size_t i = 0; i < MB_ARRAY_SIZE(v); i++) {
                mb_plan_entry e = { .id = { v[i].name, strlen(v[i].name) }, .buf = LINUX("1"), .size = strlen(LINUX("1")) };
                mb_plan_entry *pv[1] = { &e };
                mb_boot_policy policy = { 0 };
                mb_plan plan;

                CHECK_EQ_INT(mb_plan_build(&policy, NULL, MB_PLAN_CONF_ABSENT, NULL, 0, pv, 1, &plan), MB_OK);
                if (e.counter.counted != v[i].counted || strncmp(e.bls.id.p, v[i].id, e.bls.id.len) ||
                    e.bls.id.len != strlen(v[i].id) || strcmp(e.next_name, v[i].next))
                        printf("  %s: counted %d id %.*s next \"%s\"\n", v[i].name, e.counter.counted,
                               (int) e.bls.id.len, e.bls.id.p, e.next_name);
                CHECK_EQ_INT(e.counter.counted, v[i].counted);
                CHECK_EQ_INT(e.counter.left, v[i].left);
                CHECK_EQ_INT(e.counter.done, v[i].done);
                CHECK(e.bls.id.len == strlen(v[i].id) && memcmp(e.bls.id.p, v[i].id, e.bls.id.len) == 0);
                CHECK(strcmp(e.next_name, v[i].next) == 0);
                CHECK_EQ_INT(plan.n_tries[0], v[i].counted ? 5 : 4);
        }
}

/* systemd-boot's order with counters: no tries left after everything
 * else; otherwise by the id (without counter), then more tries left,
 * then fewer done; the default matches the id without counter. */
TEST(boot_counter_order) {
        static const struct {
                const char *what, *def;
                esp_file files[4];
                const char *boot;
        } v[] = {
                /* Without sort-key, ids sort newest version first: b before a. */
                { "no tries left: after all others", NULL,
                  { { "b+0-3.conf", LINUX("6.1.0-10") }, { "a.conf", LINUX("6.1.0-9") }, { NULL, NULL } },
                  "a.conf b+0-3.conf" },
                { "tries left: sorted as without counter", NULL,
                  { { "b+2-1.conf", LINUX("6.1.0-10") }, { "a.conf", LINUX("6.1.0-9") }, { NULL, NULL } },
                  "b+2-1.conf a.conf" },
                { "same id: more tries left first, then fewer done", NULL,
                  { { "a+1-0.conf", LINUX("1") }, { "a+2-5.conf", LINUX("1") }, { "a+2-1.conf", LINUX("1") }, { NULL, NULL } },
                  "a+2-1.conf a+2-5.conf a+1-0.conf" },
                { "the default matches the id without counter", "default a\n",
                  { { "b.conf", LINUX("6.1.0-10") }, { "a+1-0.conf", LINUX("6.1.0-9") }, { NULL, NULL } },
                  "a+1-0.conf b.conf" },
                { "a default on an entry with no tries left still boots it first", "default b.conf\n",
                  { { "b+0-3.conf", LINUX("6.1.0-10") }, { "a.conf", LINUX("6.1.0-9") }, { NULL, NULL } },
                  "b+0-3.conf a.conf" },
        };

        for (size_t i = 0; i < MB_ARRAY_SIZE(v); i++) {
                mb_plan_entry e[4], *pv[4];
                mb_boot_policy policy = { 0 };
                mb_plan plan;
                char got[128] = "";
                size_t n = 0;

                for (; v[i].files[n].name; n++) {
                        e[n] = (mb_plan_entry) { .id = { v[i].files[n].name, strlen(v[i].files[n].name) },
                                                 .buf = v[i].files[n].text, .size = strlen(v[i].files[n].text) };
                        pv[n] = &e[n];
                }
                CHECK_EQ_INT(mb_plan_build(&policy, NULL, v[i].def ? MB_PLAN_CONF_READ : MB_PLAN_CONF_ABSENT, v[i].def,
                                           v[i].def ? strlen(v[i].def) : 0, pv, n, &plan), MB_OK);
                for (size_t k = 0; k < plan.n_boot; k++) {
                        if (k)
                                strcat(got, " ");
                        strcat(got, v[i].files[plan.boot[k]].name);
                }
                if (strcmp(got, v[i].boot))
                        printf("  %s: tried \"%s\", expected \"%s\"\n", v[i].what, got, v[i].boot);
                CHECK(strcmp(got, v[i].boot) == 0);
        }
}

int main(void) {
        RUN(table_of_esps);
        RUN(boot_counters);
        RUN(boot_counter_order);
        RUN(default_precedence);
        RUN(measurement_steps);
        RUN(unreadable_files);
        RUN(refusals);
        TL_EXIT();
}
