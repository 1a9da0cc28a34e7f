/* SPDX-License-Identifier: BSD-2-Clause */
/* BLS Type #1 entries, loader.conf, version comparison, sort order, glob
 * matching and UTF-8 to UTF-16LE conversion. */
#include "mb/bls.h"
#include "testlib.h"

static mb_str S(const char *s) {
        return (mb_str) { s, strlen(s) };
}

static int str_is(mb_str s, const char *want) {
        return s.p && s.len == strlen(want) && memcmp(s.p, want, s.len) == 0;
}

static mb_err parse(const char *text, mb_bls_entry *e) {
        return mb_bls_parse_entry(text, strlen(text), S("test.conf"), e);
}

/* A filled-in entry whose bytes let us see whether a failing call wrote. */
static void poison(mb_bls_entry *e) {
        memset(e, 0xA5, sizeof(*e));
}

static int untouched_but_err_line(const mb_bls_entry *e) {
        mb_bls_entry ref;

        poison(&ref);
        ref.err_line = e->err_line;
        return memcmp(&ref, e, sizeof(ref)) == 0;
}

TEST(conf_iterator_basics) {
        const char text[] = "# comment\n\n   \t\r\n  key1   value one  \r\n\tkey2\tv2\nonlykey\n  # indented comment\nlast no-newline";
        size_t off = 0, lineno = 0;
        mb_conf_line l;

        CHECK_EQ_INT(mb_conf_next(text, strlen(text), &off, &lineno, &l), MB_OK);
        CHECK(str_is(l.key, "key1") && str_is(l.value, "value one"));
        CHECK_EQ_INT(l.lineno, 4);
        CHECK_EQ_INT(mb_conf_next(text, strlen(text), &off, &lineno, &l), MB_OK);
        CHECK(str_is(l.key, "key2") && str_is(l.value, "v2"));
        CHECK_EQ_INT(l.lineno, 5);
        CHECK_EQ_INT(mb_conf_next(text, strlen(text), &off, &lineno, &l), MB_OK);
        CHECK(str_is(l.key, "onlykey") && l.value.len == 0);
        CHECK_EQ_INT(mb_conf_next(text, strlen(text), &off, &lineno, &l), MB_OK);
        CHECK(str_is(l.key, "last") && str_is(l.value, "no-newline"));
        CHECK_EQ_INT(l.lineno, 8);
        CHECK_EQ_INT(mb_conf_next(text, strlen(text), &off, &lineno, &l), MB_END);
        CHECK_EQ_INT(mb_conf_next(text, strlen(text), &off, &lineno, &l), MB_END);

        off = lineno = 0;
        CHECK_EQ_INT(mb_conf_next("", 0, &off, &lineno, &l), MB_END);
        CHECK_EQ_INT(mb_conf_next("\n\n#x", 4, &off, &lineno, &l), MB_END);
}

TEST(conf_iterator_limits) {
        static char big[MB_CONF_MAX_LINE + 20];
        size_t off = 0, lineno = 0;
        mb_conf_line l;

        /* Exactly MB_CONF_MAX_LINE bytes is fine, with or without '\n'. */
        memset(big, 'x', MB_CONF_MAX_LINE);
        CHECK_EQ_INT(mb_conf_next(big, MB_CONF_MAX_LINE, &off, &lineno, &l), MB_OK);
        CHECK_EQ_INT(l.key.len, MB_CONF_MAX_LINE);
        big[MB_CONF_MAX_LINE] = '\n';
        off = lineno = 0;
        CHECK_EQ_INT(mb_conf_next(big, MB_CONF_MAX_LINE + 1, &off, &lineno, &l), MB_OK);

        /* One more byte is too long; the error names the line. */
        memcpy(big, "a b\n", 4);
        memset(big + 4, 'y', MB_CONF_MAX_LINE + 1);
        off = lineno = 0;
        CHECK_EQ_INT(mb_conf_next(big, MB_CONF_MAX_LINE + 5, &off, &lineno, &l), MB_OK);
        CHECK_EQ_INT(mb_conf_next(big, MB_CONF_MAX_LINE + 5, &off, &lineno, &l), MB_ERR_TOOLONG);
        CHECK_EQ_INT(lineno, 2);
        CHECK_EQ_INT(off, 4);

        /* NUL anywhere, even in a comment. */
        off = lineno = 0;
        CHECK_EQ_INT(mb_conf_next("a b\n# c\0d\n", 10, &off, &lineno, &l), MB_OK);
        CHECK_EQ_INT(mb_conf_next("a b\n# c\0d\n", 10, &off, &lineno, &l), MB_ERR_INVALID);
        CHECK_EQ_INT(lineno, 2);
}

TEST(entry_debian) {
        const char text[] =
                "# Boot Loader Specification type#1 entry\r\n"
                "title      Debian GNU/Linux 12 (bookworm)\r\n"
                "version    6.1.0-26-amd64\r\n"
                "machine-id 0123456789abcdef0123456789abcdef\r\n"
                "sort-key   debian\r\n"
                "architecture x64\r\n"
                "devicetree /dtb/foo.dtb\r\n"
                "options    root=UUID=1234 ro\r\n"
                "options\tquiet\r\n"
                "options\r\n"
                "linux      /0123/6.1.0-26-amd64/linux\r\n"
                "initrd     /0123/6.1.0-26-amd64/initrd.img-6.1.0-26-amd64\r\n";
        mb_bls_entry e;
        char joined[64];
        size_t len = 0;

        CHECK_EQ_INT(parse(text, &e), MB_OK);
        CHECK(str_is(e.id, "test.conf"));
        CHECK(str_is(e.title, "Debian GNU/Linux 12 (bookworm)"));
        CHECK(str_is(e.version, "6.1.0-26-amd64"));
        CHECK(str_is(e.machine_id, "0123456789abcdef0123456789abcdef"));
        CHECK(str_is(e.sort_key, "debian"));
        CHECK(str_is(e.linux, "/0123/6.1.0-26-amd64/linux"));
        CHECK(e.efi.p == NULL);
        CHECK_EQ_INT(e.n_initrd, 1);
        CHECK(str_is(e.initrd[0], "/0123/6.1.0-26-amd64/initrd.img-6.1.0-26-amd64"));
        CHECK_EQ_INT(e.n_options, 2);
        CHECK_EQ_INT(mb_bls_options_join(&e, joined, sizeof(joined), &len), MB_OK);
        CHECK(strcmp(joined, "root=UUID=1234 ro quiet") == 0);
        CHECK_EQ_INT(len, strlen("root=UUID=1234 ro quiet"));
}

TEST(entry_efi_no_trailing_newline) {
        mb_bls_entry e;

        CHECK_EQ_INT(parse("title Shell\nefi /EFI/tools/shell.efi", &e), MB_OK);
        CHECK(str_is(e.efi, "/EFI/tools/shell.efi"));
        CHECK(e.linux.p == NULL);
        CHECK_EQ_INT(e.n_options, 0);
}

TEST(entry_invalid) {
        mb_bls_entry e;
        static char big[MB_CONF_MAX_LINE + 64];

        /* Neither linux nor efi: the file as a whole is wrong. */
        poison(&e);
        CHECK_EQ_INT(parse("title nothing\noptions quiet\n", &e), MB_ERR_INVALID);
        CHECK_EQ_INT(e.err_line, 0);
        CHECK(untouched_but_err_line(&e));

        poison(&e);
        CHECK_EQ_INT(parse("", &e), MB_ERR_INVALID);
        CHECK(untouched_but_err_line(&e));

        /* Both. */
        poison(&e);
        CHECK_EQ_INT(parse("linux /vmlinuz\n\nefi /x.efi\n", &e), MB_ERR_INVALID);
        CHECK_EQ_INT(e.err_line, 3);
        CHECK(untouched_but_err_line(&e));

        /* linux without a path. */
        poison(&e);
        CHECK_EQ_INT(parse("title t\nlinux\n", &e), MB_ERR_INVALID);
        CHECK_EQ_INT(e.err_line, 2);
        CHECK(untouched_but_err_line(&e));

        /* Over-long line. */
        strcpy(big, "linux /vmlinuz\noptions ");
        memset(big + strlen(big), 'o', MB_CONF_MAX_LINE);
        poison(&e);
        CHECK_EQ_INT(mb_bls_parse_entry(big, strlen(big), S("x.conf"), &e), MB_ERR_TOOLONG);
        CHECK_EQ_INT(e.err_line, 2);
        CHECK(untouched_but_err_line(&e));

        /* NUL byte. */
        poison(&e);
        CHECK_EQ_INT(mb_bls_parse_entry("linux /a\ntitle a\0b\n", 19, S("x.conf"), &e), MB_ERR_INVALID);
        CHECK_EQ_INT(e.err_line, 2);
        CHECK(untouched_but_err_line(&e));
}

/* Issue 20, finding 8: "initrd=" in the options would make the Linux stub
 * load that file itself, measured by nobody; its handle_cmdline_files
 * matches it anywhere in the line, so does the refusal: the entry is
 * unusable (MB_ERR_UNSUPPORTED, the options line), whatever else it has. */
TEST(entry_options_initrd_refused) {
        static const struct { const char *text; size_t line; } bad[] = {
                { "linux /vmlinuz\noptions root=/dev/sda1 initrd=\\evil.img\n", 2 },
                { "linux /vmlinuz\ninitrd /initrd.img\noptions quiet\noptions initrd=/evil\n", 4 },
                { "efi /app.efi\noptions x initrd=a\n", 2 },
                { "options \"initrd=a\"\nlinux /vmlinuz\n", 1 },
                { "linux /vmlinuz\noptions rd.xinitrd=y\n", 2 },      /* the stub would find it too */
        };
        mb_bls_entry e;

        for (size_t i = 0; i < MB_ARRAY_SIZE(bad); i++) {
                e.err_line = 99;
                CHECK_EQ_INT(parse(bad[i].text, &e), MB_ERR_UNSUPPORTED);
                CHECK_EQ_INT(e.err_line, bad[i].line);
        }
        /* "initrd" without "=", and the initrd key itself, are fine. */
        CHECK_EQ_INT(parse("linux /vmlinuz\ninitrd /initrd.img\noptions noinitrd initrd quiet\n", &e), MB_OK);
        CHECK_EQ_INT(e.n_initrd, 1);
}

TEST(entry_many_initrds_and_options) {
        char text[2048];
        mb_bls_entry e;
        size_t n = 0;

        n += (size_t) sprintf(text + n, "linux /vmlinuz\n");
        for (int i = 0; i < MB_BLS_MAX_INITRD; i++)
                n += (size_t) sprintf(text + n, "initrd /initrd%d\n", i);
        for (int i = 0; i < MB_BLS_MAX_OPTIONS; i++)
                n += (size_t) sprintf(text + n, "options o%d\n", i);
        CHECK_EQ_INT(mb_bls_parse_entry(text, n, S("x.conf"), &e), MB_OK);
        CHECK_EQ_INT(e.n_initrd, MB_BLS_MAX_INITRD);
        CHECK(str_is(e.initrd[MB_BLS_MAX_INITRD - 1], "/initrd7"));
        CHECK_EQ_INT(e.n_options, MB_BLS_MAX_OPTIONS);

        /* One initrd too many: its line is named. */
        sprintf(text + n, "initrd /one-too-many\n");
        poison(&e);
        CHECK_EQ_INT(mb_bls_parse_entry(text, strlen(text), S("x.conf"), &e), MB_ERR_INVALID);
        CHECK_EQ_INT(e.err_line, 1 + MB_BLS_MAX_INITRD + MB_BLS_MAX_OPTIONS + 1);
        CHECK(untouched_but_err_line(&e));

        /* One options line too many. */
        sprintf(text + n, "options one-too-many\n");
        poison(&e);
        CHECK_EQ_INT(mb_bls_parse_entry(text, strlen(text), S("x.conf"), &e), MB_ERR_INVALID);
        CHECK_EQ_INT(e.err_line, 1 + MB_BLS_MAX_INITRD + MB_BLS_MAX_OPTIONS + 1);
        CHECK(untouched_but_err_line(&e));
}

TEST(options_join) {
        mb_bls_entry e;
        char dst[32];
        size_t len = 99;

        CHECK_EQ_INT(parse("linux /k\noptions a b\noptions  c \noptions d\n", &e), MB_OK);
        /* "a b c d" needs 8 bytes with the NUL. */
        memset(dst, 'Z', sizeof(dst));
        CHECK_EQ_INT(mb_bls_options_join(&e, dst, 7, &len), MB_ERR_NOSPACE);
        CHECK_EQ_INT(len, 99);
        CHECK(dst[0] == 'Z');
        CHECK_EQ_INT(mb_bls_options_join(&e, dst, 8, &len), MB_OK);
        CHECK(strcmp(dst, "a b c d") == 0);
        CHECK_EQ_INT(len, 7);
        CHECK_EQ_INT(mb_bls_options_join(&e, dst, 0, NULL), MB_ERR_NOSPACE);

        /* No options: the empty string. */
        CHECK_EQ_INT(parse("linux /k\n", &e), MB_OK);
        CHECK_EQ_INT(mb_bls_options_join(&e, dst, 1, &len), MB_OK);
        CHECK(dst[0] == '\0' && len == 0);
}

static int sign(int x) {
        return (x > 0) - (x < 0);
}

TEST(vercmp_table) {
        static const struct {
                const char *a, *b;
                int want;
        } cases[] = {
                { "6.1.0-26", "6.1.0-27", -1 },
                { "6.1.0-26-amd64", "6.1.0-27-amd64", -1 },
                { "6.10", "6.9", 1 },
                { "1.0~rc1", "1.0", -1 },
                { "1.0~rc1", "1.0~rc2", -1 },
                { "1.0", "1.0", 0 },
                { "1.0", "1.00", 0 },
                { "001", "1", 0 },
                { "1.0", "1.0.1", -1 },
                { "1.0a", "1.0", 1 },
                { "abc", "abd", -1 },
                { "abc", "abcd", -1 },
                /* Other characters are dropped but still end a segment. */
                { "123_a", "123a", 0 },
                { "1_2", "12", -1 },
                { "1_2", "1.2", 1 },
                { "", "1", -1 },
                { "", "", 0 },
                { "123", "123-1", -1 },
                { "123-a", "123-1", -1 },
                { "123-1", "123^post1", -1 },
                { "123^post1", "123.a-1", -1 },
                { "123.a-1", "123.1-1", -1 },
                { "123.1-1", "123a-1", -1 },
                { "123a-1", "124-1", -1 },
                { "99999999999999999999", "100000000000000000000", -1 },
                { "", "~1", -1 },         /* empty is oldest, even before '~' */
                { "~1", "zz", -1 },
                { "zz", "0", -1 },        /* a number is newer than letters */
                { "2^rc", "2^0", -1 },
                { "5.4-3.el8", "5.4-10.el8", -1 },
        };
        /* systemd's documented ladder, oldest to newest: each must sort
         * before all that follow it. */
        static const char *const ladder[] = {
                "122.1", "123~rc1-1", "123", "123-a", "123-a.1", "123-1", "123-1.1",
                "123^post1", "123.a-1", "123.1-1", "123a-1", "124-1",
        };

        for (size_t i = 0; i < MB_ARRAY_SIZE(cases); i++) {
                int got = sign(mb_vercmp(S(cases[i].a), S(cases[i].b)));
                int rev = sign(mb_vercmp(S(cases[i].b), S(cases[i].a)));

                if (got != cases[i].want || rev != -cases[i].want) {
                        fprintf(stderr, "  vercmp(%s, %s) = %d, reverse %d, want %d\n",
                                cases[i].a, cases[i].b, got, rev, cases[i].want);
                        tl_case_failed = 1;
                }
        }
        for (size_t i = 0; i < MB_ARRAY_SIZE(ladder); i++)
                for (size_t j = 0; j < MB_ARRAY_SIZE(ladder); j++)
                        CHECK(sign(mb_vercmp(S(ladder[i]), S(ladder[j]))) == (i < j ? -1 : i > j));
}

static void entry_init(mb_bls_entry *e, const char *id, const char *sort_key, const char *machine_id,
                       const char *version) {
        memset(e, 0, sizeof(*e));
        e->id = S(id);
        if (sort_key)
                e->sort_key = S(sort_key);
        if (machine_id)
                e->machine_id = S(machine_id);
        if (version)
                e->version = S(version);
}

TEST(sort_order) {
        mb_bls_entry in[7], *list[7];
        static const char *const want[] = {
                "arch.conf",                 /* sort-key "arch" < "debian" */
                "debian-b.conf",             /* same sort-key, machine-id "m1" */
                "debian-a.conf",             /*   version 6.1.0-9 < 6.1.0-10 */
                "debian-c.conf",             /* machine-id "m2" */
                "linux-6.10.conf",           /* no sort-key: ids, newest first */
                "linux-6.9.conf",
                "linux-6.9~rc1.conf",
        };

        entry_init(&in[0], "linux-6.9.conf", NULL, NULL, NULL);
        entry_init(&in[1], "debian-a.conf", "debian", "m1", "6.1.0-9");
        entry_init(&in[2], "linux-6.9~rc1.conf", NULL, NULL, NULL);
        entry_init(&in[3], "debian-c.conf", "debian", "m2", "7.0");
        entry_init(&in[4], "linux-6.10.conf", NULL, NULL, NULL);
        entry_init(&in[5], "debian-b.conf", "debian", "m1", "6.1.0-10");
        entry_init(&in[6], "arch.conf", "arch", "m9", "1");

        /* Insertion sort with mb_bls_compare. */
        for (size_t i = 0; i < MB_ARRAY_SIZE(in); i++) {
                size_t j = i;

                for (; j > 0 && mb_bls_compare(&in[i], list[j - 1]) < 0; j--)
                        list[j] = list[j - 1];
                list[j] = &in[i];
        }
        for (size_t i = 0; i < MB_ARRAY_SIZE(in); i++)
                CHECK(str_is(list[i]->id, want[i]));
        CHECK_EQ_INT(mb_bls_compare(&in[0], &in[0]), 0);
}

TEST(glob) {
        static const struct {
                const char *pat, *s;
                bool want;
        } cases[] = {
                { "debian-*", "debian-6.1.0-26-amd64", true },
                { "debian-*", "arch", false },
                { "*", "", true },
                { "", "", true },
                { "", "a", false },
                { "a", "", false },
                { "*.conf", "x.conf", true },
                { "*.conf", "x.confx", false },
                { "a*b*c", "aXXbYYc", true },
                { "a*b*c", "aXXbYY", false },
                { "a*bc", "abcbc", true },
                { "?", "x", true },
                { "?", "", false },
                { "??", "x", false },
                { "6.1.0-2?", "6.1.0-26", true },
                { "[abc]x", "bx", true },
                { "[abc]x", "dx", false },
                { "[a-z]1", "q1", true },
                { "[a-z]1", "Q1", false },
                { "[!x]y", "ay", true },
                { "[!x]y", "xy", false },
                { "[]]", "]", true },
                { "[!]]", "a", true },
                { "[a-]", "-", true },
                { "[ab", "[ab", true },  /* unterminated: literal '[' */
                { "[ab", "a", false },
                { "**x", "yx", true },
        };

        for (size_t i = 0; i < MB_ARRAY_SIZE(cases); i++)
                if (mb_glob_match(S(cases[i].pat), S(cases[i].s)) != cases[i].want) {
                        fprintf(stderr, "  glob(%s, %s) != %d\n", cases[i].pat, cases[i].s, cases[i].want);
                        tl_case_failed = 1;
                }
}

TEST(is_default) {
        mb_bls_entry e;

        entry_init(&e, "debian-6.1.0-26-amd64.conf", NULL, NULL, NULL);
        CHECK(mb_bls_is_default(S("debian-6.1.0-26-amd64.conf"), &e));
        CHECK(mb_bls_is_default(S("debian-6.1.0-26-amd64"), &e));
        CHECK(mb_bls_is_default(S("debian-*"), &e));
        CHECK(mb_bls_is_default(S("*-amd64"), &e));
        CHECK(!mb_bls_is_default(S("arch-*"), &e));
        CHECK(!mb_bls_is_default(S(""), &e));
        entry_init(&e, ".conf", NULL, NULL, NULL);
        CHECK(!mb_bls_is_default(S("x"), &e));
}

static mb_err lconf(const char *text, mb_loader_conf *c) {
        return mb_loader_conf_parse(text, strlen(text), c);
}

TEST(loader_conf) {
        mb_loader_conf c, ref;

        CHECK_EQ_INT(lconf("# systemd-boot\ndefault debian-*\ntimeout 5\r\neditor no\nconsole-mode max\n"
                           "tpm-required yes\nchainload \\EFI\\debian\\grubx64.efi\n", &c), MB_OK);
        CHECK(str_is(c.default_glob, "debian-*"));
        CHECK_EQ_INT(c.timeout, 5);
        CHECK_EQ_INT(c.tpm_required, MB_YES);
        CHECK(str_is(c.chainload, "\\EFI\\debian\\grubx64.efi"));

        CHECK_EQ_INT(lconf("", &c), MB_OK);
        CHECK_EQ_INT(c.timeout, MB_TIMEOUT_UNSET);
        CHECK_EQ_INT(c.tpm_required, MB_UNSET);
        CHECK(c.default_glob.len == 0 && c.chainload.len == 0);

        CHECK_EQ_INT(lconf("timeout 0", &c), MB_OK);
        CHECK_EQ_INT(c.timeout, 0);
        CHECK_EQ_INT(lconf("timeout menu-force", &c), MB_OK);
        CHECK_EQ_INT(c.timeout, MB_TIMEOUT_MENU_FORCE);
        CHECK_EQ_INT(lconf("timeout menu-hidden", &c), MB_OK);
        CHECK_EQ_INT(c.timeout, 0);
        CHECK_EQ_INT(lconf("timeout menu-disabled", &c), MB_OK);
        CHECK_EQ_INT(c.timeout, MB_TIMEOUT_MENU_DISABLED);
        CHECK_EQ_INT(lconf("editor y", &c), MB_OK);
        CHECK_EQ_INT(c.editor, MB_YES);
        CHECK_EQ_INT(lconf("editor off", &c), MB_OK);
        CHECK_EQ_INT(c.editor, MB_NO);
        CHECK_EQ_INT(lconf("timeout 4294967295", &c), MB_OK);
        CHECK_EQ_INT(c.timeout, MB_TIMEOUT_MAX);

        static const char *const yes[] = { "yes", "true", "on", "1" }, *const no[] = { "no", "false", "off", "0" };
        for (size_t i = 0; i < MB_ARRAY_SIZE(yes); i++) {
                char text[64];

                snprintf(text, sizeof(text), "tpm-required %s", yes[i]);
                CHECK_EQ_INT(lconf(text, &c), MB_OK);
                CHECK_EQ_INT(c.tpm_required, MB_YES);
                snprintf(text, sizeof(text), "tpm-required %s", no[i]);
                CHECK_EQ_INT(lconf(text, &c), MB_OK);
                CHECK_EQ_INT(c.tpm_required, MB_NO);
        }

        /* Failures: only err_line changes. */
        static const struct {
                const char *text;
                size_t line;
        } bad[] = {
                { "timeout -1", 1 },
                { "default x\ntimeout 5s", 2 },
                { "timeout", 1 },
                { "timeout 4294967296", 1 },
                { "timeout 99999999999999999999999", 1 },
                { "\n\ntpm-required maybe", 3 },
                { "tpm-required", 1 },
                { "tpm-required YESS", 1 },
                { "chainload", 1 },
                { "editor maybe", 1 },
                { "timeout menu", 1 },
        };
        for (size_t i = 0; i < MB_ARRAY_SIZE(bad); i++) {
                memset(&c, 0x5A, sizeof(c));
                CHECK_EQ_INT(lconf(bad[i].text, &c), MB_ERR_INVALID);
                CHECK_EQ_INT(c.err_line, bad[i].line);
                memset(&ref, 0x5A, sizeof(ref));
                ref.err_line = c.err_line;
                CHECK(memcmp(&ref, &c, sizeof(c)) == 0);
        }
        memset(&c, 0x5A, sizeof(c));
        CHECK_EQ_INT(mb_loader_conf_parse("timeout 1\0", 10, &c), MB_ERR_INVALID);
        CHECK_EQ_INT(c.err_line, 1);
}

/* The TOTP keys (docs/CONFIG.md "TOTP"): defaults, each value, refusals. */
TEST(loader_conf_totp) {
        static const struct { const char *text; size_t line; } bad[] = {
                { "totp yes\n", 1 }, { "totp\n", 1 }, { "totp Show\n", 1 },
                { "totp-timeout -1\n", 1 }, { "totp-timeout 3601\n", 1 }, { "totp-timeout 1x\n", 1 },
                { "totp-timeout 99999\n", 1 }, { "rtc gmt\n", 1 }, { "rtc-offset 01:00\n", 1 },
                { "rtc-offset +1:00\n", 1 }, { "rtc-offset +01:60\n", 1 }, { "rtc-offset +24:01\n", 1 },
                { "totp show\nrtc-offset +0100\n", 2 },
        };
        mb_loader_conf c;

        CHECK_EQ_INT(lconf("timeout 3\n", &c), MB_OK);
        CHECK_EQ_INT(c.totp, MB_TOTP_NO);
        CHECK_EQ_INT(c.totp_timeout, 30);
        CHECK(!c.rtc_local && !c.rtc_offset_set);
        CHECK_EQ_INT(lconf("totp show\ntotp-timeout 0\n", &c), MB_OK);
        CHECK_EQ_INT(c.totp, MB_TOTP_SHOW);
        CHECK_EQ_INT(c.totp_timeout, 0);
        CHECK_EQ_INT(lconf("totp require\ntotp-timeout 3600\nrtc local\n", &c), MB_OK);
        CHECK_EQ_INT(c.totp, MB_TOTP_REQUIRE);
        CHECK_EQ_INT(c.totp_timeout, 3600);
        CHECK(c.rtc_local && !c.rtc_offset_set);
        CHECK_EQ_INT(lconf("totp no\nrtc-offset -05:30\n", &c), MB_OK);
        CHECK_EQ_INT(c.totp, MB_TOTP_NO);
        CHECK(c.rtc_local && c.rtc_offset_set);
        CHECK_EQ_INT(c.rtc_offset_min, -330);
        CHECK_EQ_INT(lconf("rtc-offset +24:00\nrtc utc\n", &c), MB_OK);
        CHECK(!c.rtc_local && !c.rtc_offset_set);
        for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
                memset(&c, 0x5A, sizeof(c));
                CHECK_EQ_INT(lconf(bad[i].text, &c), MB_ERR_INVALID);
                CHECK_EQ_INT(c.err_line, bad[i].line);
        }
}

static mb_err to16(const char *s, uint8_t *dst, size_t dst_size, size_t *ret) {
        return mb_utf8_to_utf16le(s, strlen(s), dst, dst_size, ret);
}

TEST(utf16_valid) {
        uint8_t dst[64];
        size_t n = 0;

        CHECK_EQ_INT(to16("ro quiet", dst, sizeof(dst), &n), MB_OK);
        CHECK_EQ_INT(n, 18);
        CHECK(memcmp(dst, "r\0o\0 \0q\0u\0i\0e\0t\0\0\0", 18) == 0);

        CHECK_EQ_INT(to16("", dst, sizeof(dst), &n), MB_OK);
        CHECK_EQ_INT(n, 2);
        CHECK(dst[0] == 0 && dst[1] == 0);

        /* U+00E9 (2 bytes), U+20AC (3 bytes), U+1F600 (4 bytes, surrogate pair). */
        CHECK_EQ_INT(to16("\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80", dst, sizeof(dst), &n), MB_OK);
        CHECK_EQ_INT(n, 10);
        CHECK(memcmp(dst, "\xe9\x00\xac\x20\x3d\xd8\x00\xde\x00\x00", 10) == 0);

        /* Largest scalar values at each length. */
        CHECK_EQ_INT(to16("\x7f\xdf\xbf\xef\xbf\xbf\xf4\x8f\xbf\xbf", dst, sizeof(dst), &n), MB_OK);
        CHECK(memcmp(dst, "\x7f\x00\xff\x07\xff\xff\xff\xdb\xff\xdf\x00\x00", 12) == 0);
}

TEST(utf16_invalid_and_nospace) {
        static const char *const bad[] = {
                "\x80",                 /* stray continuation byte */
                "a\xc3",                /* truncated */
                "\xe2\x82",             /* truncated */
                "\xc3\x28",             /* bad continuation */
                "\xc0\xaf",             /* overlong '/' */
                "\xe0\x80\xaf",         /* overlong '/' */
                "\xf0\x80\x80\xaf",     /* overlong '/' */
                "\xed\xa0\x80",         /* U+D800, a surrogate */
                "\xed\xbf\xbf",         /* U+DFFF */
                "\xf4\x90\x80\x80",     /* U+110000 */
                "\xf8\x88\x80\x80\x80", /* 5-byte form */
                "\xff",
        };
        uint8_t dst[32];
        size_t n = 77;

        for (size_t i = 0; i < MB_ARRAY_SIZE(bad); i++) {
                memset(dst, 0xEE, sizeof(dst));
                CHECK_EQ_INT(to16(bad[i], dst, sizeof(dst), &n), MB_ERR_INVALID);
                CHECK_EQ_INT(n, 77);
                CHECK(dst[0] == 0xEE);
        }
        /* Embedded U+0000 would end the string early. */
        CHECK_EQ_INT(mb_utf8_to_utf16le("a\0b", 3, dst, sizeof(dst), &n), MB_ERR_INVALID);

        /* "ab" needs 6 bytes. */
        memset(dst, 0xEE, sizeof(dst));
        CHECK_EQ_INT(to16("ab", dst, 5, &n), MB_ERR_NOSPACE);
        CHECK_EQ_INT(n, 77);
        CHECK(dst[0] == 0xEE);
        CHECK_EQ_INT(to16("ab", dst, 6, &n), MB_OK);
        CHECK_EQ_INT(n, 6);
        CHECK_EQ_INT(to16("", dst, 1, &n), MB_ERR_NOSPACE);
        /* A surrogate pair needs 4 bytes + 2 for the NUL. */
        CHECK_EQ_INT(to16("\xf0\x9f\x98\x80", dst, 5, &n), MB_ERR_NOSPACE);
        /* Invalid input wins over a too-small buffer. */
        CHECK_EQ_INT(to16("\xc0\xaf", dst, 0, &n), MB_ERR_INVALID);
}

int main(void) {
        RUN(conf_iterator_basics);
        RUN(conf_iterator_limits);
        RUN(entry_debian);
        RUN(entry_efi_no_trailing_newline);
        RUN(entry_invalid);
        RUN(entry_many_initrds_and_options);
        RUN(options_join);
        RUN(vercmp_table);
        RUN(sort_order);
        RUN(glob);
        RUN(is_default);
        RUN(loader_conf);
        RUN(loader_conf_totp);
        RUN(entry_options_initrd_refused);
        RUN(utf16_valid);
        RUN(utf16_invalid_and_nospace);
        TL_EXIT();
}
