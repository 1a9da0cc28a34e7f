/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * GRUB 2.06's command words and what each command of the predicted subset
 * measures (include/mb/predict_grub.h). The lexer follows GRUB's script
 * syntax (grub-core/script/yylex.l) only as far as the subset goes; every
 * other construct is refused, so a prediction never rests on a guess about
 * how GRUB would expand it.
 */
#include "mb/predict_grub.h"

static bool blank(char c) {
        return c == ' ' || c == '\t' || c == '\r';
}

/* Characters GRUB's lexer gives a meaning outside quotes (variables,
 * escapes, separators, redirections, blocks); inside double quotes $ and \
 * keep theirs. */
static const char *special(char c, char quote) {
        if (quote == '\'')
                return NULL;
        if (c == '$')
                return "a $ variable or expansion: its value at boot is not predicted";
        if (c == '\\')
                return "a \\ escape or line continuation: not in the predicted subset";
        if (quote)
                return NULL;
        if (c == ';' || c == '|' || c == '&' || c == '<' || c == '>' || c == '{' || c == '}')
                return "a ; | & < > { or } (several commands, a pipe or a block): not in the predicted subset";
        return NULL;
}

/* GRUB script's reserved words (grub-core/script/yylex.l): a line that
 * starts with one opens a menu, a conditional, a loop or a function. */
static bool reserved(const char *s, size_t len) {
        static const char *const words[] = { "menuentry", "submenu", "if", "then", "elif", "else", "fi", "for",
                                             "while", "until", "do", "done", "function", "case", "esac", "in",
                                             "select", "!", "[[", "]]", "time" };
        size_t n = 0;

        while (n < len && !blank(s[n]) && s[n] != '{' && s[n] != ';')
                n++;
        for (size_t i = 0; i < MB_ARRAY_SIZE(words); i++) {
                size_t k = 0;
                while (words[i][k])
                        k++;
                if (k == n && mb_memcmp(s, words[i], n) == 0)
                        return true;
        }
        return false;
}

/* A text GRUB measured: its words joined by one space, nothing quoted. */
static mb_err measured_words(const char *line, size_t len, char *buf, mb_grub_words *ret, const char **ret_why) {
        mb_grub_words w = { 0 };

        for (size_t i = 0; i <= len; i++) {
                if (i < len && line[i] != ' ')
                        continue;
                if (w.n == MB_GRUB_MAX_WORDS || i == (w.n ? w.off[w.n - 1] + w.len[w.n - 1] + 1 : 0)) {
                        /* An empty word: a word of the command held a blank
                         * (or was empty), which the text no longer shows. */
                        *ret_why = w.n == MB_GRUB_MAX_WORDS ? "more words on a line than the predictor reads"
                                                            : "a logged GRUB command with a word holding blanks";
                        return MB_ERR_UNSUPPORTED;
                }
                w.off[w.n] = w.n ? w.off[w.n - 1] + w.len[w.n - 1] + 1 : 0;
                w.len[w.n] = i - w.off[w.n];
                w.n++;
        }
        mb_memcpy(buf, line, len);
        w.text_len = len;
        *ret = w;
        return MB_OK;
}

mb_err mb_grub_line_words(const char *line, size_t len, bool measured, char *buf, size_t cap, mb_grub_words *ret,
                          const char **ret_why) {
        mb_grub_words w = { 0 };
        size_t i = 0, o = 0;

        if (cap < len)
                return MB_ERR_NOSPACE;
        if (measured)
                return len ? measured_words(line, len, buf, ret, ret_why) : MB_END;
        while (i < len) {
                char quote = 0;
                bool quoted_empty = false;

                while (i < len && blank(line[i]))
                        i++;
                if (i == len || line[i] == '#')
                        break;
                if (w.n == 0 && reserved(line + i, len - i)) {
                        *ret_why = "a menu, conditional, loop or function (menuentry, submenu, if, for, while, "
                                   "function, ...): not in the predicted subset";
                        return MB_ERR_UNSUPPORTED;
                }
                if (w.n == MB_GRUB_MAX_WORDS) {
                        *ret_why = "more words on a line than the predictor reads";
                        return MB_ERR_UNSUPPORTED;
                }
                if (w.n)
                        buf[o++] = ' ';
                w.off[w.n] = o;
                for (; i < len && (quote || !blank(line[i])); i++) {
                        const char *why = special(line[i], quote);
                        if (why) {
                                *ret_why = why;
                                return MB_ERR_UNSUPPORTED;
                        }
                        if (!quote && (line[i] == '\'' || line[i] == '"')) {
                                quote = line[i];
                                quoted_empty = i + 1 < len && line[i + 1] == quote;
                        } else if (quote && line[i] == quote) {
                                quote = 0;
                        } else {
                                buf[o++] = line[i];
                        }
                }
                if (quote || quoted_empty) {
                        *ret_why = quote ? "an unterminated quote (a word over several lines)"
                                         : "an empty quoted word: not in the predicted subset";
                        return MB_ERR_UNSUPPORTED;
                }
                w.len[w.n] = o - w.off[w.n];
                w.n++;
        }
        if (w.n == 0)
                return MB_END;
        w.text_len = o;
        *ret = w;
        return MB_OK;
}

static bool word_is(const char *buf, const mb_grub_words *w, size_t i, const char *s) {
        size_t n = 0;

        while (s[n])
                n++;
        return i < w->n && w->len[i] == n && mb_memcmp(buf + w->off[i], s, n) == 0;
}

static bool word_starts(const char *buf, const mb_grub_words *w, size_t i, const char *s) {
        size_t n = 0;

        while (s[n])
                n++;
        return i < w->n && w->len[i] >= n && mb_memcmp(buf + w->off[i], s, n) == 0;
}

/* set NAME=VALUE: one word with a name before '='. */
static const char *check_set(const char *buf, const mb_grub_words *w) {
        const char *s = buf + w->off[1];

        if (w->n != 2 || w->len[1] == 0 || s[0] == '=')
                return "set: only 'set NAME=VALUE' is in the predicted subset";
        for (size_t i = 0; i < w->len[1]; i++)
                if (s[i] == '=')
                        return NULL;
        return "set: only 'set NAME=VALUE' is in the predicted subset";
}

/* search [--no-floppy] [--file|--fs-uuid|--label] --set[=VAR] [--hint...] WHAT
 * (grub-core/commands/search_wrap.c). With --set, search stops at the
 * first device that has WHAT, so --file opens one file. */
static void check_search(const char *buf, const mb_grub_words *w, mb_grub_cmd_kind *kind, size_t *file,
                         const char **why) {
        bool set = false, by_file = false;
        size_t what = 0;

        for (size_t i = 1; i < w->n; i++) {
                if (word_is(buf, w, i, "--file") || word_is(buf, w, i, "-f"))
                        by_file = true;
                else if (word_is(buf, w, i, "--set") || word_starts(buf, w, i, "--set="))
                        set = true;
                else if (word_is(buf, w, i, "--no-floppy") || word_is(buf, w, i, "-n") ||
                         word_is(buf, w, i, "--fs-uuid") || word_is(buf, w, i, "-u") ||
                         word_is(buf, w, i, "--label") || word_is(buf, w, i, "-l") ||
                         word_starts(buf, w, i, "--hint"))
                        continue;
                else if (word_starts(buf, w, i, "-") || what) {
                        *why = "search: an option or form not in the predicted subset";
                        return;
                } else
                        what = i;
        }
        if (!set || !what) {
                *why = "search without --set=VAR or without what to search: not in the predicted subset";
                return;
        }
        *kind = by_file ? MB_GRUB_CMD_SEARCH_FILE : MB_GRUB_CMD_PLAIN;
        *file = what;
}

/* The command line words of linux: GRUB copies them with escapes for
 * blanks, quotes and backslashes (grub_create_loader_cmdline), not
 * predicted; the rest go as they are. */
static const char *check_linux(const char *buf, const mb_grub_words *w) {
        if (w->n < 2)
                return "linux without a kernel path";
        for (size_t i = 2; i < w->n; i++)
                for (size_t k = 0; k < w->len[i]; k++) {
                        char c = buf[w->off[i] + k];
                        if (blank(c) || c == '\'' || c == '"' || c == '\\')
                                return "linux: a command line word with a blank or a quote (GRUB escapes "
                                       "it): not in the predicted subset";
                }
        return NULL;
}

mb_err mb_grub_cmd_classify(const char *buf, const mb_grub_words *w, mb_grub_cmd_kind *ret_kind,
                            size_t *ret_file_word, const char **ret_why) {
        const char *why = NULL;
        mb_grub_cmd_kind kind = MB_GRUB_CMD_PLAIN;
        size_t file = 0;

        if (word_is(buf, w, 0, "set"))
                why = check_set(buf, w);
        else if (word_is(buf, w, 0, "echo"))
                why = NULL;
        else if (word_is(buf, w, 0, "search"))
                check_search(buf, w, &kind, &file, &why);
        else if (word_is(buf, w, 0, "linux") || word_is(buf, w, 0, "linuxefi")) {
                why = check_linux(buf, w);
                kind = MB_GRUB_CMD_LINUX;
                file = 1;
        } else if (word_is(buf, w, 0, "initrd") || word_is(buf, w, 0, "initrdefi")) {
                why = w->n < 2 ? "initrd without a file" : NULL;
                kind = MB_GRUB_CMD_INITRD;
                file = 1;
        } else if (word_is(buf, w, 0, "boot")) {
                why = w->n != 1 ? "boot with arguments" : NULL;
                kind = MB_GRUB_CMD_BOOT;
        } else
                why = "a command outside the predicted subset (set, echo, search, linux, linuxefi, initrd, "
                      "initrdefi, boot): menus, conditionals, insmod, configfile and others are not predicted";
        if (why) {
                *ret_why = why;
                return MB_ERR_UNSUPPORTED;
        }
        *ret_kind = kind;
        *ret_file_word = file;
        return MB_OK;
}
