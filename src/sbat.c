/* SPDX-License-Identifier: BSD-2-Clause */
/* SBAT records and the revocation check (see mb/sbat.h and shim's SBAT.md). */
#include "mb/sbat.h"

/* An image record has exactly these 6 fields (SBAT.md "SBAT Format"). */
#define SBAT_IMAGE_FIELDS  6
/* A policy record needs component and generation; the first one carries a
 * third field, the policy's date (e.g. "sbat,1,2022052400"). */
#define SBAT_POLICY_FIELDS 2

static void iter_init(mb_sbat_iter *it, const void *data, size_t size, bool policy) {
        const char *t = data;
        size_t len = mb_strnlen(t, size);

        *it = (mb_sbat_iter) { .text = t, .len = len, .policy = policy };
        /* A section is NUL-padded to its size: anything but NUL after the
         * first NUL is text hidden from C-string consumers, so refuse it. */
        for (size_t i = len; i < size; i++)
                if (t[i] != '\0')
                        it->padding_err = MB_ERR_INVALID;
}

void mb_sbat_init(mb_sbat_iter *it, const void *data, size_t size) {
        iter_init(it, data, size, false);
}

void mb_sbat_policy_init(mb_sbat_iter *it, const void *data, size_t size) {
        iter_init(it, data, size, true);
}

/* A positive decimal integer below 2^32, digits only. */
static mb_err parse_generation(mb_str s, uint32_t *ret) {
        uint64_t v = 0;

        if (s.len == 0)
                return MB_ERR_INVALID;
        for (size_t i = 0; i < s.len; i++) {
                if (s.p[i] < '0' || s.p[i] > '9')
                        return MB_ERR_INVALID;
                v = v * 10 + (uint64_t) (s.p[i] - '0');
                if (v > UINT32_MAX)
                        return MB_ERR_INVALID;
        }
        if (v == 0)
                return MB_ERR_INVALID;
        *ret = (uint32_t) v;
        return MB_OK;
}

/* Split one line (no newline) into at most `max` comma-separated fields.
 * Returns the number of fields, or max + 1 when there are more. */
static size_t split_fields(mb_str line, mb_str *f, size_t max) {
        size_t n = 0, start = 0;

        for (size_t i = 0; i <= line.len; i++) {
                if (i < line.len && line.p[i] != ',')
                        continue;
                if (n == max)
                        return max + 1;
                f[n++] = (mb_str) { line.p + start, i - start };
                start = i + 1;
        }
        return n;
}

static mb_err parse_record(const mb_sbat_iter *it, mb_str line, mb_sbat_entry *ret) {
        mb_str f[SBAT_IMAGE_FIELDS] = { { 0 } };
        mb_sbat_entry e = { .lineno = it->lineno };
        size_t n;

        for (size_t i = 0; i < line.len; i++)
                if ((unsigned char) line.p[i] < 0x20 || line.p[i] == 0x7f)
                        return MB_ERR_INVALID;
        n = split_fields(line, f, SBAT_IMAGE_FIELDS);
        /* Policies may carry more fields than we name; images may not. */
        if (it->policy ? n < SBAT_POLICY_FIELDS : n != SBAT_IMAGE_FIELDS)
                return MB_ERR_INVALID;
        if (f[0].len == 0 || parse_generation(f[1], &e.generation) != MB_OK)
                return MB_ERR_INVALID;
        e.component = f[0];
        e.vendor_name = f[2];
        e.vendor_package = f[3];
        e.vendor_version = f[4];
        e.vendor_url = f[5];
        /* SBAT.md: the first record states the format version, "sbat,1". */
        if (it->n_records == 0 && (!mb_str_eq(e.component, "sbat") || e.generation != 1))
                return MB_ERR_INVALID;
        *ret = e;
        return MB_OK;
}

/* The next non-empty line, without its newline and a trailing '\r'. */
static mb_err next_line(mb_sbat_iter *it, mb_str *ret) {
        while (it->off < it->len) {
                const char *p = it->text + it->off;
                size_t rest = it->len - it->off, n = 0;

                while (n < rest && p[n] != '\n')
                        n++;
                it->lineno++;
                it->off += n < rest ? n + 1 : n;
                if (n > MB_SBAT_MAX_LINE)
                        return MB_ERR_TOOLONG;
                if (n && p[n - 1] == '\r')
                        n--;
                if (n) {
                        *ret = (mb_str) { p, n };
                        return MB_OK;
                }
        }
        return MB_END;
}

mb_err mb_sbat_next(mb_sbat_iter *it, mb_sbat_entry *ret) {
        mb_str line;
        mb_err r;

        if (it->padding_err != MB_OK)
                return it->padding_err;
        r = next_line(it, &line);
        if (r == MB_END)
                /* No "sbat,1" record at all is not an empty success. */
                return it->n_records ? MB_END : MB_ERR_INVALID;
        if (r != MB_OK)
                return r;
        r = parse_record(it, line, ret);
        if (r != MB_OK)
                return r;
        it->n_records++;
        return MB_OK;
}

mb_err mb_sbat_validate(const void *data, size_t size, size_t *ret_lineno) {
        mb_sbat_iter it;
        mb_sbat_entry e;
        mb_err r;

        mb_sbat_init(&it, data, size);
        while ((r = mb_sbat_next(&it, &e)) == MB_OK)
                ;
        if (r == MB_END)
                return MB_OK;
        if (ret_lineno)
                *ret_lineno = it.lineno;
        return r;
}

/* Whether an image record names rule's component with a lower generation
 * (shim's verify_sbat rule: such an image is revoked). */
static mb_err find_revoked(const void *sbat, size_t sbat_size, const mb_sbat_entry *rule,
                           bool *ret_hit, mb_sbat_entry *ret_entry) {
        mb_sbat_iter it;
        mb_sbat_entry e;
        mb_err r;

        mb_sbat_init(&it, sbat, sbat_size);
        while ((r = mb_sbat_next(&it, &e)) == MB_OK) {
                if (e.component.len != rule->component.len ||
                    mb_memcmp(e.component.p, rule->component.p, e.component.len) != 0 ||
                    e.generation >= rule->generation)
                        continue;
                *ret_hit = true;
                *ret_entry = e;
                return MB_OK;
        }
        return r == MB_END ? MB_OK : r;
}

mb_err mb_sbat_check(const void *sbat, size_t sbat_size, const void *policy, size_t policy_size,
                     bool *ret_revoked, mb_sbat_entry *ret_entry, uint32_t *ret_min_generation) {
        mb_sbat_iter pol;
        mb_sbat_entry rule, hit;
        bool revoked = false;
        mb_err r;

        /* Validate the image first, so a malformed .sbat is reported as
         * such even when the policy would not have looked at the bad line. */
        r = mb_sbat_validate(sbat, sbat_size, NULL);
        if (r != MB_OK)
                return r;
        mb_sbat_policy_init(&pol, policy, policy_size);
        while ((r = mb_sbat_next(&pol, &rule)) == MB_OK) {
                r = find_revoked(sbat, sbat_size, &rule, &revoked, &hit);
                if (r != MB_OK)
                        return r;
                if (revoked)
                        break;
        }
        if (r != MB_OK && r != MB_END)
                return r;
        if (revoked) {
                *ret_entry = hit;
                *ret_min_generation = rule.generation;
        }
        *ret_revoked = revoked;
        return MB_OK;
}

mb_err mb_sbat_level_section(const void *data, size_t size, bool want_latest,
                             const char **ret_text, size_t *ret_len) {
        const uint8_t *b = data;
        size_t off, len;

        if (size < 12)
                return MB_ERR_TRUNCATED;
        if (mb_le32(b) != 0)
                return MB_ERR_UNSUPPORTED;
        /* Offsets count from the end of the 4-byte version field. */
        off = mb_le32(b + (want_latest ? 8 : 4));
        if (mb_out_of_bounds(size - 4, off, 1))
                return MB_ERR_INVALID;
        off += 4;
        len = mb_strnlen((const char *) b + off, size - off);
        if (len == size - off)
                return MB_ERR_TRUNCATED;   /* no terminating NUL */
        *ret_text = (const char *) b + off;
        *ret_len = len;
        return MB_OK;
}
