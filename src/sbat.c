/* SPDX-License-Identifier: BSD-2-Clause */
/* SBAT records and the revocation check (see mb/sbat.h and shim's SBAT.md). */
#include "mb/sbat.h"
#include "mb/varstore.h"

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

/* ---- enforcing the policy -------------------------------------------------- */

const char *mb_sbat_source_name(mb_sbat_source s) {
        return s == MB_SBAT_LEVEL_RT ? "SbatLevelRT" : "SbatLevel";
}

/* shim's sbat.h: SbatLevel is written NV+BS (check_sbat_var_attributes
 * also accepts NV+BS+time-authenticated); its mok.c mirror recreates
 * SbatLevelRT as BS+RT. */
static bool sbat_attributes_ok(mb_sbat_source s, uint32_t a) {
        const uint32_t nvbs = MB_VAR_NON_VOLATILE | MB_VAR_BOOTSERVICE_ACCESS;

        if (s == MB_SBAT_LEVEL_RT)
                return a == (MB_VAR_BOOTSERVICE_ACCESS | MB_VAR_RUNTIME_ACCESS);
        return a == nvbs || a == (nvbs | MB_VAR_TIME_BASED_AUTHENTICATED_WRITE);
}

/* A whole policy text parses (at least the "sbat,1" record). */
static mb_err policy_validate(const void *data, size_t size) {
        mb_sbat_iter it;
        mb_sbat_entry e;
        mb_err r;

        mb_sbat_policy_init(&it, data, size);
        while ((r = mb_sbat_next(&it, &e)) == MB_OK)
                ;
        return r == MB_END ? MB_OK : r;
}

mb_err mb_sbat_policy_select(const mb_sbat_var vars[MB_SBAT_N_SOURCES], mb_sbat_policy *ret,
                             mb_sbat_source *ret_source) {
        mb_sbat_policy pol = { .n = 0 };

        for (int s = MB_SBAT_LEVEL; s < MB_SBAT_N_SOURCES; s++) {
                const mb_sbat_var *v = &vars[s];

                if (!v->present)
                        continue;
                if (!sbat_attributes_ok((mb_sbat_source) s, v->attributes) || !v->data ||
                    policy_validate(v->data, v->size) != MB_OK) {
                        *ret_source = (mb_sbat_source) s;
                        return MB_ERR_INVALID;
                }
                pol.p[pol.n].source = (mb_sbat_source) s;
                pol.p[pol.n].text = v->data;
                pol.p[pol.n].len = mb_strnlen(v->data, v->size);
                pol.n++;
        }
        *ret = pol;
        return MB_OK;
}

/* The image's one .sbat section, as shim's verify_buffer_sbat finds it:
 * the raw data (SizeOfRawData, NUL padded). MB_ERR_NOTFOUND when there is
 * none; MB_ERR_INVALID for two, or for one whose VirtualSize exceeds its
 * SizeOfRawData (text the file does not hold). */
static mb_err image_sbat_section(const mb_pe *pe, const uint8_t **ret_ptr, size_t *ret_size) {
        static const uint8_t name[8] = ".sbat";
        const uint8_t *ptr = NULL;
        size_t size = 0;
        bool found = false;

        for (uint16_t i = 0; i < pe->n_sections; i++) {
                mb_pe_section s;

                if (mb_pe_section_at(pe, i, &s) != MB_OK)
                        return MB_ERR_INVALID;
                if (mb_memcmp(s.name, name, sizeof(name)) != 0)
                        continue;
                if (found || s.virtual_size > s.raw_size)
                        return MB_ERR_INVALID;
                found = true;
                /* mb_pe_parse checked the raw range lies in the file. */
                ptr = pe->buf + s.raw_offset;
                size = s.raw_size;
        }
        if (!found)
                return MB_ERR_NOTFOUND;
        *ret_ptr = ptr;
        *ret_size = size;
        return MB_OK;
}

void mb_sbat_image_verdict(const mb_sbat_policy *pol, const mb_pe *pe, bool section_required,
                           mb_sbat_verdict *ret) {
        mb_sbat_verdict v = { .outcome = MB_SBAT_ALLOWED };
        const uint8_t *sbat = NULL;
        size_t size = 0;
        mb_err r;

        /* shim: "if (list_empty(&sbat_var)) return EFI_SUCCESS", before
         * it even looks for the section. */
        if (pol->n == 0)
                goto out;
        r = image_sbat_section(pe, &sbat, &size);
        if (r == MB_ERR_NOTFOUND) {
                v.outcome = section_required ? MB_SBAT_MISSING : MB_SBAT_ALLOWED;
                goto out;
        }
        if (r == MB_OK)
                r = mb_sbat_validate(sbat, size, &v.lineno);
        if (r != MB_OK) {
                v.outcome = MB_SBAT_MALFORMED;
                goto out;
        }
        for (size_t i = 0; i < pol->n; i++) {
                bool revoked = false;

                /* Both inputs were validated: an error here is not expected,
                 * and would still refuse the image. */
                r = mb_sbat_check(sbat, size, pol->p[i].text, pol->p[i].len, &revoked, &v.entry,
                                  &v.min_generation);
                if (r != MB_OK) {
                        v.outcome = MB_SBAT_MALFORMED;
                        goto out;
                }
                if (revoked) {
                        v.outcome = MB_SBAT_REVOKED;
                        v.source = pol->p[i].source;
                        goto out;
                }
        }
out:
        *ret = v;
}
