/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Boot Loader Specification Type #1 entries, systemd-boot's loader.conf,
 * the version comparison and glob matching systemd-boot applies to them, and
 * the UTF-8 to UTF-16LE conversion needed to hand a command line to an EFI
 * image. Everything works on borrowed slices: no allocation, no libc.
 */
#include "mb/bls.h"

/* ---- line iterator ------------------------------------------------------- */

/* '\r' counts as whitespace so that files written with CRLF line ends
 * parse like their LF twins. */
static bool conf_is_ws(char c) {
        return c == ' ' || c == '\t' || c == '\r';
}

/* Key and value are separated by spaces or tabs only (BLS "Type #1 Boot
 * Loader Entry Keys"). */
static bool conf_is_sep(char c) {
        return c == ' ' || c == '\t';
}

/* Find the end of the line starting at start: the offset of its '\n', or
 * size for a last line without one. */
static mb_err conf_line_end(const char *buf, size_t size, size_t start, size_t *ret_end) {
        size_t end;

        for (end = start; end < size && buf[end] != '\n'; end++) {
                if (end - start == MB_CONF_MAX_LINE)
                        return MB_ERR_TOOLONG;
                /* A NUL means a binary or corrupt file, never text. */
                if (buf[end] == '\0')
                        return MB_ERR_INVALID;
        }
        *ret_end = end;
        return MB_OK;
}

/* Split a trimmed, non-empty, non-comment line into key and value. */
static void conf_split(const char *p, size_t len, mb_conf_line *ret) {
        size_t k = 0, v;

        while (k < len && !conf_is_sep(p[k]))
                k++;
        for (v = k; v < len && conf_is_sep(p[v]); v++)
                ;
        ret->key = (mb_str) { p, k };
        ret->value = (mb_str) { p + v, len - v };
}

mb_err mb_conf_next(const char *buf, size_t size, size_t *off, size_t *lineno, mb_conf_line *ret) {
        size_t pos = *off, n = *lineno;

        while (pos < size) {
                size_t start = pos, end;
                mb_err r;

                n++;
                r = conf_line_end(buf, size, start, &end);
                if (r != MB_OK) {
                        *lineno = n;
                        return r;
                }
                pos = end < size ? end + 1 : end;

                while (start < end && conf_is_ws(buf[start]))
                        start++;
                while (end > start && conf_is_ws(buf[end - 1]))
                        end--;
                /* Blank lines and '#' comments (whole lines only). */
                if (start == end || buf[start] == '#')
                        continue;

                conf_split(buf + start, end - start, ret);
                ret->lineno = n;
                *off = pos;
                *lineno = n;
                return MB_OK;
        }
        *off = pos;
        *lineno = n;
        return MB_END;
}

/* ---- BLS entries ---------------------------------------------------------- */

/* The single-valued keys of BLS Type #1 that we keep. */
static mb_str *entry_field(mb_bls_entry *e, mb_str key) {
        if (mb_str_eq(key, "title"))
                return &e->title;
        if (mb_str_eq(key, "version"))
                return &e->version;
        if (mb_str_eq(key, "machine-id"))
                return &e->machine_id;
        if (mb_str_eq(key, "sort-key"))
                return &e->sort_key;
        if (mb_str_eq(key, "linux"))
                return &e->linux;
        if (mb_str_eq(key, "efi"))
                return &e->efi;
        return NULL;
}

/* Would the Linux EFI stub load a file named by these options? Its
 * handle_cmdline_files (drivers/firmware/efi/libstub/file.c) looks for
 * "initrd=" anywhere in the command line, not only at a word's start, and
 * loads that file from the volume itself: nobody measures it (issue 20,
 * finding 8). So any occurrence counts, the same way. */
static bool options_load_initrd(mb_str v) {
        static const char key[] = "initrd=";
        size_t n = sizeof(key) - 1;

        for (size_t i = 0; v.len >= n && i <= v.len - n; i++)
                if (mb_memcmp(v.p + i, key, n) == 0)
                        return true;
        return false;
}

static mb_err entry_apply(mb_bls_entry *e, const mb_conf_line *l) {
        mb_str *field;

        if (mb_str_eq(l->key, "initrd")) {
                if (l->value.len == 0 || e->n_initrd == MB_BLS_MAX_INITRD)
                        return MB_ERR_INVALID;
                e->initrd[e->n_initrd++] = l->value;
                return MB_OK;
        }
        if (mb_str_eq(l->key, "options")) {
                if (l->value.len == 0)
                        return MB_OK;
                if (e->n_options == MB_BLS_MAX_OPTIONS)
                        return MB_ERR_INVALID;
                if (options_load_initrd(l->value))
                        return MB_ERR_UNSUPPORTED;
                e->options[e->n_options++] = l->value;
                return MB_OK;
        }
        field = entry_field(e, l->key);
        /* Unknown keys (architecture, devicetree, ...) are ignored, as the
         * BLS asks, so newer entries still boot. */
        if (!field)
                return MB_OK;
        /* A path is needed to boot anything. */
        if ((field == &e->linux || field == &e->efi) && l->value.len == 0)
                return MB_ERR_INVALID;
        *field = l->value;
        return MB_OK;
}

mb_err mb_bls_parse_entry(const char *buf, size_t size, mb_str id, mb_bls_entry *ret) {
        mb_bls_entry e;
        mb_conf_line l;
        size_t off = 0, lineno = 0;
        mb_err r;

        mb_memset(&e, 0, sizeof(e));
        e.id = id;
        while ((r = mb_conf_next(buf, size, &off, &lineno, &l)) == MB_OK) {
                r = entry_apply(&e, &l);
                if (r != MB_OK) {
                        ret->err_line = l.lineno;
                        return r;
                }
                if (e.linux.p && e.efi.p) {
                        /* BLS: "linux" and "efi" are mutually exclusive. */
                        ret->err_line = l.lineno;
                        return MB_ERR_INVALID;
                }
        }
        if (r != MB_END) {
                ret->err_line = lineno;
                return r;
        }
        if (!e.linux.p && !e.efi.p) {
                ret->err_line = 0;
                return MB_ERR_INVALID;
        }
        *ret = e;
        return MB_OK;
}

mb_err mb_bls_options_join(const mb_bls_entry *e, char *dst, size_t dst_size, size_t *ret_len) {
        size_t need = 0, len = 0;

        /* Measure first so that dst stays untouched when it is too small.
         * Each option line is at most MB_CONF_MAX_LINE bytes and there are at
         * most MB_BLS_MAX_OPTIONS of them: the sum cannot overflow. */
        for (size_t i = 0; i < e->n_options; i++)
                need += (i ? 1 : 0) + e->options[i].len;
        if (mb_out_of_bounds(dst_size, need, 1))
                return MB_ERR_NOSPACE;

        for (size_t i = 0; i < e->n_options; i++) {
                if (i)
                        dst[len++] = ' ';
                mb_memcpy(dst + len, e->options[i].p, e->options[i].len);
                len += e->options[i].len;
        }
        dst[len] = '\0';
        if (ret_len)
                *ret_len = len;
        return MB_OK;
}

/* ---- version comparison ----------------------------------------------------- */

/*
 * systemd's strverscmp_improved(), reimplemented over slices. A version is
 * read as segments, each a run of digits or a run of letters, optionally
 * preceded by one of these prefixes:
 *   '~'  pre-release: older than anything, even the end of the string
 *        ("1.0~rc1" < "1.0");
 *   '-'  version/release separator: older than '^', '.' or no prefix;
 *   '^'  post-release patch: older than '.' or no prefix;
 *   '.'  point release: older than no prefix ("1.a" < "1a").
 * Other characters are dropped. A string with more segments is newer;
 * a numeric segment is newer than an alphabetic one; digit runs compare by
 * value (leading zeros ignored), letter runs by bytes, the longer newer.
 */

typedef struct ver_cursor {
        const char *p, *end;
} ver_cursor;

static char ver_peek(const ver_cursor *c) {
        return c->p < c->end ? *c->p : '\0';
}

static bool ver_is_digit(char c) {
        return c >= '0' && c <= '9';
}

static bool ver_is_alpha(char c) {
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

static bool ver_is_valid(char c) {
        return ver_is_digit(c) || ver_is_alpha(c) || c == '~' || c == '-' || c == '^' || c == '.';
}

static int ver_cmp_size(size_t a, size_t b) {
        return a < b ? -1 : a > b;
}

/* Handle one prefix character: the side carrying it is older. Returns
 * nonzero when that decides; consumes it on both sides when both carry it. */
static int ver_prefix(ver_cursor *a, ver_cursor *b, char prefix) {
        bool pa = ver_peek(a) == prefix, pb = ver_peek(b) == prefix;

        if (pa != pb)
                return pa ? -1 : 1;
        if (pa) {
                a->p++;
                b->p++;
        }
        return 0;
}

static size_t ver_run(const ver_cursor *c, bool (*is_class)(char)) {
        size_t n = 0;

        while (c->p + n < c->end && is_class(c->p[n]))
                n++;
        return n;
}

static int ver_numeric(ver_cursor *a, ver_cursor *b) {
        size_t na = ver_run(a, ver_is_digit), nb = ver_run(b, ver_is_digit);
        const char *ea = a->p + na, *eb = b->p + nb;
        int r;

        /* A numeric segment is newer than a missing one. */
        if ((na == 0) != (nb == 0))
                return na == 0 ? -1 : 1;
        while (a->p < ea && *a->p == '0')
                a->p++;
        while (b->p < eb && *b->p == '0')
                b->p++;
        /* Without leading zeros, the longer number is the larger. */
        r = ver_cmp_size((size_t) (ea - a->p), (size_t) (eb - b->p));
        if (r == 0)
                r = mb_memcmp(a->p, b->p, (size_t) (ea - a->p));
        a->p = ea;
        b->p = eb;
        return r;
}

static int ver_alpha(ver_cursor *a, ver_cursor *b) {
        size_t na = ver_run(a, ver_is_alpha), nb = ver_run(b, ver_is_alpha);
        int r = mb_memcmp(a->p, b->p, na < nb ? na : nb);

        if (r == 0)
                r = ver_cmp_size(na, nb);
        a->p += na;
        b->p += nb;
        return r;
}

static void ver_skip_invalid(ver_cursor *c) {
        while (c->p < c->end && !ver_is_valid(*c->p))
                c->p++;
}

int mb_vercmp(mb_str as, mb_str bs) {
        ver_cursor a, b;

        /* An empty (or missing) version is older than any other. Checked
         * before the cursors: an unset version is {NULL, 0}, and NULL + 0 is
         * undefined in C. */
        if (as.len == 0 || bs.len == 0)
                return ver_cmp_size(as.len, bs.len);
        a = (ver_cursor) { as.p, as.p + as.len };
        b = (ver_cursor) { bs.p, bs.p + bs.len };

        for (;;) {
                ver_skip_invalid(&a);
                ver_skip_invalid(&b);

                /* '~' is checked before the end: "1~rc" < "1". */
                int r = ver_prefix(&a, &b, '~');
                if (r)
                        return r;
                /* Otherwise the string with more left is newer. */
                if (a.p == a.end || b.p == b.end)
                        return (b.p == b.end) - (a.p == a.end);

                if ((r = ver_prefix(&a, &b, '-')) || (r = ver_prefix(&a, &b, '^')) ||
                    (r = ver_prefix(&a, &b, '.')))
                        return r;

                if (ver_is_digit(ver_peek(&a)) || ver_is_digit(ver_peek(&b)))
                        r = ver_numeric(&a, &b);
                else
                        r = ver_alpha(&a, &b);
                if (r)
                        return r;
        }
}

/* ---- sort order ------------------------------------------------------------- */

static int str_cmp(mb_str a, mb_str b) {
        int r = mb_memcmp(a.p, b.p, a.len < b.len ? a.len : b.len);

        return r ? r : ver_cmp_size(a.len, b.len);
}

/* systemd-boot's boot_entry_compare(): entries with a sort-key first,
 * ordered by sort-key, machine-id and then version, newest first; ties and
 * entries without sort-key by id, newest version first (the version is
 * usually part of the file name). */
int mb_bls_compare(const mb_bls_entry *a, const mb_bls_entry *b) {
        bool ka = a->sort_key.len > 0, kb = b->sort_key.len > 0;

        if (ka != kb)
                return ka ? -1 : 1;
        if (ka) {
                int r = str_cmp(a->sort_key, b->sort_key);
                if (r)
                        return r;
                r = str_cmp(a->machine_id, b->machine_id);
                if (r)
                        return r;
                r = -mb_vercmp(a->version, b->version);
                if (r)
                        return r;
        }
        return -mb_vercmp(a->id, b->id);
}

/* ---- loader.conf ------------------------------------------------------------ */

/* Seconds, or one of systemd-boot's menu-* words (see bls.h). */
static mb_err parse_timeout(mb_str v, int64_t *ret) {
        int64_t t = 0;

        if (mb_str_eq(v, "menu-force")) {
                *ret = MB_TIMEOUT_MENU_FORCE;
                return MB_OK;
        }
        if (mb_str_eq(v, "menu-disabled")) {
                *ret = MB_TIMEOUT_MENU_DISABLED;
                return MB_OK;
        }
        if (mb_str_eq(v, "menu-hidden")) {
                *ret = 0;
                return MB_OK;
        }
        if (v.len == 0)
                return MB_ERR_INVALID;
        for (size_t i = 0; i < v.len; i++) {
                if (!ver_is_digit(v.p[i]))
                        return MB_ERR_INVALID;
                /* Checked before multiplying, so t never exceeds the limit. */
                if (t > (MB_TIMEOUT_MAX - (v.p[i] - '0')) / 10)
                        return MB_ERR_INVALID;
                t = t * 10 + (v.p[i] - '0');
        }
        *ret = t;
        return MB_OK;
}

static mb_err parse_bool(mb_str v, mb_tristate *ret) {
        static const char *const yes[] = { "yes", "true", "on", "1" }, *const no[] = { "no", "false", "off", "0" };

        for (size_t i = 0; i < MB_ARRAY_SIZE(yes); i++) {
                if (mb_str_eq(v, yes[i])) {
                        *ret = MB_YES;
                        return MB_OK;
                }
                if (mb_str_eq(v, no[i])) {
                        *ret = MB_NO;
                        return MB_OK;
                }
        }
        return MB_ERR_INVALID;
}

/* systemd-boot's booleans (loader.conf(5): yes/y/true/t/on/1, no/n/
 * false/f/off/0), for its own keys: a file written for systemd-boot must
 * parse the same here. */
static mb_err parse_sd_bool(mb_str v, mb_tristate *ret) {
        if (mb_str_eq(v, "y") || mb_str_eq(v, "t")) {
                *ret = MB_YES;
                return MB_OK;
        }
        if (mb_str_eq(v, "n") || mb_str_eq(v, "f")) {
                *ret = MB_NO;
                return MB_OK;
        }
        return parse_bool(v, ret);
}

/* "no", "show", "require". */
static mb_err parse_totp(mb_str v, mb_totp_mode *ret) {
        static const char *const words[] = { [MB_TOTP_NO] = "no", [MB_TOTP_SHOW] = "show",
                                             [MB_TOTP_REQUIRE] = "require" };

        for (size_t i = 0; i < MB_ARRAY_SIZE(words); i++)
                if (mb_str_eq(v, words[i])) {
                        *ret = (mb_totp_mode) i;
                        return MB_OK;
                }
        return MB_ERR_INVALID;
}

/* Decimal seconds, 0..MB_TOTP_TIMEOUT_MAX. */
static mb_err parse_totp_timeout(mb_str v, uint32_t *ret) {
        uint32_t t = 0;

        if (v.len == 0 || v.len > 4)
                return MB_ERR_INVALID;
        for (size_t i = 0; i < v.len; i++) {
                if (!ver_is_digit(v.p[i]))
                        return MB_ERR_INVALID;
                t = t * 10 + (uint32_t) (v.p[i] - '0');
        }
        if (t > MB_TOTP_TIMEOUT_MAX)
                return MB_ERR_INVALID;
        *ret = t;
        return MB_OK;
}

/* "utc" or "local". */
static mb_err parse_rtc(mb_str v, bool *ret_local) {
        if (mb_str_eq(v, "utc") || mb_str_eq(v, "local")) {
                *ret_local = mb_str_eq(v, "local");
                return MB_OK;
        }
        return MB_ERR_INVALID;
}

/* "+HH:MM" or "-HH:MM" (ISO 8601's UTC offset): at most 24:00. */
static mb_err parse_rtc_offset(mb_str v, int32_t *ret_min) {
        int32_t h, m;

        if (v.len != 6 || (v.p[0] != '+' && v.p[0] != '-') || v.p[3] != ':' || !ver_is_digit(v.p[1]) ||
            !ver_is_digit(v.p[2]) || !ver_is_digit(v.p[4]) || !ver_is_digit(v.p[5]))
                return MB_ERR_INVALID;
        h = (v.p[1] - '0') * 10 + (v.p[2] - '0');
        m = (v.p[4] - '0') * 10 + (v.p[5] - '0');
        if (m > 59 || h * 60 + m > 24 * 60)
                return MB_ERR_INVALID;
        *ret_min = v.p[0] == '-' ? -(h * 60 + m) : h * 60 + m;
        return MB_OK;
}

static mb_err loader_conf_totp(mb_loader_conf *c, const mb_conf_line *l, bool *ret_known) {
        mb_err r = MB_OK;

        *ret_known = true;
        if (mb_str_eq(l->key, "totp"))
                r = parse_totp(l->value, &c->totp);
        else if (mb_str_eq(l->key, "totp-timeout"))
                r = parse_totp_timeout(l->value, &c->totp_timeout);
        else if (mb_str_eq(l->key, "rtc")) {
                /* The last line wins: "rtc utc" drops an earlier offset. */
                r = parse_rtc(l->value, &c->rtc_local);
                if (r == MB_OK && !c->rtc_local)
                        c->rtc_offset_set = false;
        }
        else if (mb_str_eq(l->key, "rtc-offset")) {
                r = parse_rtc_offset(l->value, &c->rtc_offset_min);
                if (r == MB_OK)
                        c->rtc_offset_set = c->rtc_local = true;
        } else
                *ret_known = false;
        return r;
}

static mb_err loader_conf_apply(mb_loader_conf *c, const mb_conf_line *l) {
        bool known;
        mb_err r = loader_conf_totp(c, l, &known);

        if (known)
                return r;
        if (mb_str_eq(l->key, "default")) {
                c->default_glob = l->value;
                return MB_OK;
        }
        if (mb_str_eq(l->key, "timeout"))
                return parse_timeout(l->value, &c->timeout);
        if (mb_str_eq(l->key, "tpm-required"))
                return parse_bool(l->value, &c->tpm_required);
        if (mb_str_eq(l->key, "editor"))
                return parse_sd_bool(l->value, &c->editor);
        if (mb_str_eq(l->key, "chainload")) {
                if (l->value.len == 0)
                        return MB_ERR_INVALID;
                c->chainload = l->value;
                return MB_OK;
        }
        /* systemd-boot's other keys (console-mode, auto-entries, ...). */
        return MB_OK;
}

mb_err mb_conf_each(const char *buf, size_t size, mb_err (*apply)(void *ctx, const mb_conf_line *l), void *ctx,
                    size_t *ret_err_line) {
        mb_conf_line l;
        size_t off = 0, lineno = 0;
        mb_err r;

        while ((r = mb_conf_next(buf, size, &off, &lineno, &l)) == MB_OK) {
                r = apply(ctx, &l);
                if (r != MB_OK) {
                        *ret_err_line = l.lineno;
                        return r;
                }
        }
        if (r != MB_END) {
                *ret_err_line = lineno;
                return r;
        }
        return MB_OK;
}

static mb_err loader_conf_line(void *ctx, const mb_conf_line *l) {
        return loader_conf_apply(ctx, l);
}

mb_err mb_loader_conf_parse(const char *buf, size_t size, mb_loader_conf *ret) {
        mb_loader_conf c;
        mb_err r;

        mb_memset(&c, 0, sizeof(c));
        c.timeout = MB_TIMEOUT_UNSET;
        c.totp_timeout = MB_TOTP_TIMEOUT_DEFAULT;
        r = mb_conf_each(buf, size, loader_conf_line, &c, &ret->err_line);
        if (r == MB_OK)
                *ret = c;
        return r;
}

/* ---- glob ------------------------------------------------------------------- */

/* Match c against the bracket expression starting at pat.p[*pi] == '['.
 * Returns false when the expression is unterminated (the '[' is then an
 * ordinary character, as in fnmatch(3)); otherwise sets *ret_match and moves
 * *pi past the ']'. A ']' right after '[' or '[!' is a member. */
static bool glob_bracket(mb_str pat, size_t *pi, char c, bool *ret_match) {
        size_t i = *pi + 1, first;
        bool negate = false, match = false;
        uint8_t uc = (uint8_t) c;

        if (i < pat.len && (pat.p[i] == '!' || pat.p[i] == '^')) {
                negate = true;
                i++;
        }
        for (first = i; i < pat.len; i++) {
                uint8_t lo = (uint8_t) pat.p[i];

                if (lo == ']' && i > first) {
                        *pi = i + 1;
                        *ret_match = match != negate;
                        return true;
                }
                if (pat.len - i > 2 && pat.p[i + 1] == '-' && pat.p[i + 2] != ']') {
                        if (lo <= uc && uc <= (uint8_t) pat.p[i + 2])
                                match = true;
                        i += 2;
                } else if (lo == uc) {
                        match = true;
                }
        }
        return false;
}

/* Greedy matching with backtracking to the last '*' only: every other
 * token consumes exactly one character, so that suffices and runs in
 * O(len(pattern) * len(s)) without recursion. */
bool mb_glob_match(mb_str pat, mb_str s) {
        size_t pi = 0, si = 0, star_pi = 0, star_si = 0;
        bool have_star = false;

        while (si < s.len) {
                if (pi < pat.len && pat.p[pi] == '*') {
                        have_star = true;
                        star_pi = ++pi;
                        star_si = si;
                        continue;
                }
                if (pi < pat.len) {
                        size_t next = pi;
                        bool ok;

                        if (pat.p[pi] != '[' || !glob_bracket(pat, &next, s.p[si], &ok)) {
                                ok = pat.p[pi] == '?' || pat.p[pi] == s.p[si];
                                next = pi + 1;
                        }
                        if (ok) {
                                pi = next;
                                si++;
                                continue;
                        }
                }
                if (!have_star)
                        return false;
                pi = star_pi;
                si = ++star_si;
        }
        while (pi < pat.len && pat.p[pi] == '*')
                pi++;
        return pi == pat.len;
}

bool mb_bls_is_default(mb_str pattern, const mb_bls_entry *e) {
        static const char suffix[] = ".conf";
        const size_t slen = sizeof(suffix) - 1;
        mb_str id = e->id;

        if (pattern.len == 0)
                return false;
        if (mb_glob_match(pattern, id))
                return true;
        if (id.len > slen && mb_memcmp(id.p + id.len - slen, suffix, slen) == 0) {
                id.len -= slen;
                return mb_glob_match(pattern, id);
        }
        return false;
}

/* ---- UTF-8 to UTF-16LE ------------------------------------------------------ */

/* Decode one scalar value (RFC 3629 §3-4): rejects stray continuation
 * bytes, truncated sequences, overlong forms, surrogates, values above
 * U+10FFFF, and U+0000. */
static mb_err utf8_decode(const uint8_t *s, size_t len, size_t *i, uint32_t *ret_cp) {
        uint8_t b = s[*i];
        size_t n;
        uint32_t cp, min;

        if (b < 0x80) {
                n = 1; cp = b; min = 1;
        } else if ((b & 0xE0) == 0xC0) {
                n = 2; cp = b & 0x1F; min = 0x80;
        } else if ((b & 0xF0) == 0xE0) {
                n = 3; cp = b & 0x0F; min = 0x800;
        } else if ((b & 0xF8) == 0xF0) {
                n = 4; cp = b & 0x07; min = 0x10000;
        } else {
                return MB_ERR_INVALID;
        }
        if (mb_out_of_bounds(len, *i, n))
                return MB_ERR_INVALID;
        for (size_t k = 1; k < n; k++) {
                uint8_t c = s[*i + k];

                if ((c & 0xC0) != 0x80)
                        return MB_ERR_INVALID;
                cp = (cp << 6) | (c & 0x3F);
        }
        if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
                return MB_ERR_INVALID;
        *i += n;
        *ret_cp = cp;
        return MB_OK;
}

/* UTF-16 code units for cp (RFC 2781 §2.1); returns how many (1 or 2). */
static size_t utf16_encode(uint32_t cp, uint16_t units[2]) {
        if (cp < 0x10000) {
                units[0] = (uint16_t) cp;
                return 1;
        }
        cp -= 0x10000;
        units[0] = (uint16_t) (0xD800 | (cp >> 10));
        units[1] = (uint16_t) (0xDC00 | (cp & 0x3FF));
        return 2;
}

mb_err mb_utf8_to_utf16le(const char *s, size_t len, uint8_t *dst, size_t dst_size, size_t *ret_bytes) {
        const uint8_t *u = (const uint8_t *) s;
        size_t need = 2, i, out = 0; /* the terminating NUL */
        uint32_t cp;
        uint16_t units[2];

        /* Pass 1: validate and size, so dst stays untouched on failure and
         * malformed input is reported even when dst is also too small. */
        for (i = 0; i < len;) {
                mb_err r = utf8_decode(u, len, &i, &cp);

                if (r != MB_OK)
                        return r;
                if (need > (size_t) -1 - 4)
                        return MB_ERR_OVERFLOW;
                need += 2 * utf16_encode(cp, units);
        }
        if (dst_size < need)
                return MB_ERR_NOSPACE;

        for (i = 0; i < len;) {
                size_t n;

                (void) utf8_decode(u, len, &i, &cp); /* validated above */
                n = utf16_encode(cp, units);
                for (size_t k = 0; k < n; k++, out += 2)
                        mb_put_le16(dst + out, units[k]);
        }
        mb_put_le16(dst + out, 0);
        *ret_bytes = need;
        return MB_OK;
}
