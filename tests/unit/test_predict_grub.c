/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * GRUB's command words (src/predict_grub.c): the text GRUB 2.06 measures
 * after "grub_cmd: " is the words after quote removal joined by one space
 * (grub-core/script/execute.c; observed in test_chainload.sh's boot, e.g.
 * `echo "a b"` is measured as "echo a b"), and everything outside the
 * predicted subset is refused with a reason.
 */
#include "testlib.h"
#include "mb/predict_grub.h"

static char BUF[512];

static mb_err words(const char *line, mb_grub_words *w, const char **why) {
        return mb_grub_line_words(line, strlen(line), false, BUF, sizeof(BUF), w, why);
}

static void check_text(const char *line, const char *want) {
        mb_grub_words w;
        const char *why = NULL;
        CHECK_EQ_INT(words(line, &w, &why), MB_OK);
        CHECK_EQ_INT(w.text_len, strlen(want));
        CHECK(memcmp(BUF, want, strlen(want)) == 0);
}

TEST(text_as_grub_measures_it) {
        check_text("set timeout=0", "set timeout=0");
        check_text("  echo   \"mshim-test: GRUB is loading\"  ", "echo mshim-test: GRUB is loading");
        check_text("echo 'a \"b\"' c\"d e\"f", "echo a \"b\" cd ef");
        check_text("linuxefi /vmlinuz quiet # a comment", "linuxefi /vmlinuz quiet");
        check_text("echo a#b", "echo a#b");
        check_text("search --set=root (hd0,gpt1)/x", "search --set=root (hd0,gpt1)/x");
}

TEST(word_offsets) {
        mb_grub_words w;
        const char *why;
        CHECK_EQ_INT(words("initrd /a 'b c'", &w, &why), MB_OK);
        CHECK_EQ_INT(w.n, 3);
        CHECK(w.len[1] == 2 && memcmp(BUF + w.off[1], "/a", 2) == 0);
        CHECK(w.len[2] == 3 && memcmp(BUF + w.off[2], "b c", 3) == 0);
}

TEST(blank_and_comment_lines) {
        mb_grub_words w;
        const char *why;
        CHECK_EQ_INT(words("", &w, &why), MB_END);
        CHECK_EQ_INT(words("   \t", &w, &why), MB_END);
        CHECK_EQ_INT(words("# set x=1", &w, &why), MB_END);
}

TEST(outside_the_subset) {
        static const char *bad[] = {
                "linux $prefix/vmlinuz", "echo \"$x\"", "echo a\\ b", "echo a; boot", "echo a | b",
                "menuentry x {", "}", "echo 'unterminated", "echo \"\"", "echo a > b",
        };
        for (size_t i = 0; i < MB_ARRAY_SIZE(bad); i++) {
                mb_grub_words w = { .n = 99 };
                const char *why = NULL;
                CHECK_EQ_INT(words(bad[i], &w, &why), MB_ERR_UNSUPPORTED);
                CHECK(why != NULL);
                CHECK_EQ_INT(w.n, 99);  /* untouched */
        }
        /* Menus and conditionals are named as such, before their { or ;. */
        static const char *blocks[] = { "menuentry 'Debian' {", "  if true; then", "submenu x{", "function f {" };
        for (size_t i = 0; i < MB_ARRAY_SIZE(blocks); i++) {
                mb_grub_words w;
                const char *why = NULL;
                CHECK_EQ_INT(words(blocks[i], &w, &why), MB_ERR_UNSUPPORTED);
                CHECK(why && strstr(why, "menu, conditional"));
        }
        /* A reserved word later on the line is an argument. */
        check_text("echo if for", "echo if for");
        /* '$' inside single quotes is literal. */
        check_text("echo '$x'", "echo $x");
}

TEST(buffer_too_small) {
        mb_grub_words w;
        const char *why;
        CHECK_EQ_INT(mb_grub_line_words("echo abc", 8, false, BUF, 7, &w, &why), MB_ERR_NOSPACE);
}

static mb_err classify(const char *line, mb_grub_cmd_kind *kind, size_t *fw, const char **why) {
        mb_grub_words w;
        mb_err r = words(line, &w, why);
        return r == MB_OK ? mb_grub_cmd_classify(BUF, &w, kind, fw, why) : r;
}

TEST(classify_commands) {
        static const struct {
                const char *line;
                mb_grub_cmd_kind kind;
                size_t fw;
        } good[] = {
                { "set timeout=0", MB_GRUB_CMD_PLAIN, 0 },
                { "echo", MB_GRUB_CMD_PLAIN, 0 },
                { "search --no-floppy --fs-uuid --set=root 1234-ABCD", MB_GRUB_CMD_PLAIN, 0 },
                { "search --no-floppy --file --set=root /vmlinuz", MB_GRUB_CMD_SEARCH_FILE, 4 },
                { "search -f --set /vmlinuz --hint=hd0", MB_GRUB_CMD_SEARCH_FILE, 3 },
                { "linuxefi /vmlinuz root=/dev/sda1 quiet", MB_GRUB_CMD_LINUX, 1 },
                { "linux /vmlinuz", MB_GRUB_CMD_LINUX, 1 },
                { "initrdefi /a /b", MB_GRUB_CMD_INITRD, 1 },
                { "boot", MB_GRUB_CMD_BOOT, 0 },
        };
        static const char *bad[] = {
                "set", "set =x", "set x", "set a=1 b=2", "search --file /vmlinuz", "search --set=root",
                "search --set=root a b", "search --label --set=root -x a", "linux", "linux /v 'a b'",
                "linux /v \"a\\\"\"", "linux /v 'a\"b'", "initrd", "boot now", "insmod tpm", "menuentry", "if", "configfile /x",
                "source /x", "chainloader /x",
        };
        for (size_t i = 0; i < MB_ARRAY_SIZE(good); i++) {
                mb_grub_cmd_kind kind = 99;
                size_t fw = 99;
                const char *why = NULL;
                CHECK_EQ_INT(classify(good[i].line, &kind, &fw, &why), MB_OK);
                CHECK_EQ_INT(kind, good[i].kind);
                if (kind != MB_GRUB_CMD_PLAIN && kind != MB_GRUB_CMD_BOOT)
                        CHECK_EQ_INT(fw, good[i].fw);
        }
        for (size_t i = 0; i < MB_ARRAY_SIZE(bad); i++) {
                mb_grub_cmd_kind kind = 99;
                size_t fw = 99;
                const char *why = NULL;
                CHECK_EQ_INT(classify(bad[i], &kind, &fw, &why), MB_ERR_UNSUPPORTED);
                CHECK(why != NULL);
                CHECK(kind == 99 && fw == 99);
        }
}

/* A text GRUB logged: split at each space, quotes and $ kept as they are. */
TEST(measured_text) {
        static const char *good = "echo 'a' $x #b \\\\";
        static const char *bad[] = { "echo a  b", " echo", "echo ", "echo  " };
        mb_grub_words w;
        const char *why = NULL;

        CHECK_EQ_INT(mb_grub_line_words(good, strlen(good), true, BUF, sizeof(BUF), &w, &why), MB_OK);
        CHECK_EQ_INT(w.n, 5);
        CHECK_EQ_INT(w.text_len, strlen(good));
        CHECK(w.len[1] == 3 && memcmp(BUF + w.off[1], "'a'", 3) == 0);
        CHECK(w.len[4] == 2 && memcmp(BUF + w.off[4], "\\\\", 2) == 0);
        CHECK_EQ_INT(mb_grub_line_words("", 0, true, BUF, sizeof(BUF), &w, &why), MB_END);
        for (size_t i = 0; i < MB_ARRAY_SIZE(bad); i++) {
                mb_grub_words u = { .n = 99 };
                CHECK_EQ_INT(mb_grub_line_words(bad[i], strlen(bad[i]), true, BUF, sizeof(BUF), &u, &why),
                             MB_ERR_UNSUPPORTED);
                CHECK_EQ_INT(u.n, 99);
        }
}

int main(void) {
        RUN(text_as_grub_measures_it);
        RUN(word_offsets);
        RUN(blank_and_comment_lines);
        RUN(outside_the_subset);
        RUN(buffer_too_small);
        RUN(classify_commands);
        RUN(measured_text);
        TL_EXIT();
}
