/* SPDX-License-Identifier: BSD-2-Clause */
/* IMA's binary measurement list: include/mb/ima.h. */
#include "mb/ima.h"

void mb_ima_begin(mb_ima_log *log, const void *buf, size_t size) {
        *log = (mb_ima_log) { .buf = buf, .size = size, .next_number = 1 };
}

/* A u32 length at *off and the n bytes after it, all within [0, size). */
static mb_err read_chunk(const uint8_t *buf, size_t size, size_t *off, const uint8_t **ret, uint32_t *ret_len) {
        uint32_t n;

        if (mb_out_of_bounds(size, *off, 4))
                return MB_ERR_TRUNCATED;
        n = mb_le32(buf + *off);
        if (mb_out_of_bounds(size, *off + 4, n))
                return MB_ERR_TRUNCATED;
        *ret = buf + *off + 4;
        *ret_len = n;
        *off += 4 + (size_t) n;
        return MB_OK;
}

/* The template data's fields (IMA-templates.rst: each a u32 length and its
 * bytes, filling the data exactly), at most max of them, into f/len. */
static mb_err split_fields(const uint8_t *data, size_t size, const uint8_t **f, uint32_t *len, size_t max,
                           size_t *ret_n) {
        size_t off = 0, n = 0;

        while (off < size) {
                if (n == max)
                        return MB_ERR_INVALID;
                if (read_chunk(data, size, &off, &f[n], &len[n]) != MB_OK)
                        return MB_ERR_INVALID;
                n++;
        }
        *ret_n = n;
        return MB_OK;
}

/* d-ng (ima_eventdigest_ng_init): the algorithm's name, ':', NUL, the
 * digest. The name is read, not trusted: mb_hash_alg_by_name gives the
 * digest's size only for algorithms mshim knows, and any other digest is
 * kept whole (what follows the NUL). */
static mb_err parse_dng(const uint8_t *f, uint32_t len, mb_ima_entry *e) {
        uint32_t i = 0;

        while (i < len && f[i] != ':' && f[i] != 0)
                i++;
        if (i == 0 || i == len || f[i] != ':' || len - i < 2 || f[i + 1] != 0)
                return MB_ERR_INVALID;
        e->digest_alg = (mb_str) { (const char *) f, i };
        e->digest = f + i + 2;
        e->digest_size = len - i - 2;
        return e->digest_size ? MB_OK : MB_ERR_INVALID;
}

/* The fields of ima-ng (d-ng|n-ng) and ima-sig (d-ng|n-ng|sig). */
static mb_err parse_known(mb_ima_entry *e) {
        /* Zeroed: split_fields fills n of them, and the count is checked
         * against the template before any is read. */
        const uint8_t *f[3] = { 0 };
        uint32_t len[3] = { 0 };
        size_t n = 0;
        mb_err r = split_fields(e->data, e->data_size, f, len, 3, &n);

        if (r != MB_OK)
                return r;
        if (n != (e->kind == MB_IMA_SIG ? 3u : 2u))
                return MB_ERR_INVALID;
        if ((r = parse_dng(f[0], len[0], e)) != MB_OK)
                return r;
        /* n-ng holds the name with its NUL (ima_eventname_ng_init). */
        e->path = (mb_str) { (const char *) f[1], len[1] && f[1][len[1] - 1] == 0 ? len[1] - 1 : len[1] };
        if (e->kind == MB_IMA_SIG) {
                e->sig = f[2];
                e->sig_size = len[2];
        }
        return MB_OK;
}

static mb_ima_kind kind_of(mb_str name) {
        if (mb_str_eq(name, "ima-ng"))
                return MB_IMA_NG;
        if (mb_str_eq(name, "ima-sig"))
                return MB_IMA_SIG;
        return MB_IMA_OTHER;
}

mb_err mb_ima_next(mb_ima_log *log, mb_ima_entry *ret_entry) {
        mb_ima_entry e = { .offset = log->off, .number = log->next_number };
        size_t off = log->off;
        const uint8_t *p;
        uint32_t len;
        mb_err r;

        if (off == log->size)
                return MB_END;
        if (mb_out_of_bounds(log->size, off, 4 + MB_IMA_SHA1_SIZE))
                return MB_ERR_TRUNCATED;
        e.pcr = mb_le32(log->buf + off);
        e.template_sha1 = log->buf + off + 4;
        off += 4 + MB_IMA_SHA1_SIZE;
        e.violation = true;
        for (size_t i = 0; i < MB_IMA_SHA1_SIZE; i++)
                e.violation &= e.template_sha1[i] == 0;
        if ((r = read_chunk(log->buf, log->size, &off, &p, &len)) != MB_OK)
                return r;
        if (len == 0 || len > MB_IMA_NAME_MAX)
                return len ? MB_ERR_TOOLONG : MB_ERR_INVALID;
        e.name = (mb_str) { (const char *) p, len };
        /* The legacy template: no data length follows its name. */
        if (mb_str_eq(e.name, "ima"))
                return MB_ERR_UNSUPPORTED;
        if ((r = read_chunk(log->buf, log->size, &off, &e.data, &len)) != MB_OK)
                return r;
        if (len > MB_IMA_DATA_MAX)
                return MB_ERR_TOOLONG;
        e.data_size = len;
        e.kind = kind_of(e.name);
        if (e.kind != MB_IMA_OTHER && (r = parse_known(&e)) != MB_OK)
                return r;
        log->off = off;
        log->next_number++;
        *ret_entry = e;
        return MB_OK;
}

mb_err mb_ima_extend_digest(const mb_ima_entry *e, uint16_t alg, uint8_t *ret) {
        size_t size = mb_hash_size(alg);

        if (!size || alg == MB_ALG_SM3_256)
                return MB_ERR_UNSUPPORTED;
        /* ima_store_template / ima_pcr_extend: a violation's digest is
         * all zeros in the list and all ones in every bank. */
        if (e->violation) {
                mb_memset(ret, 0xff, size);
                return MB_OK;
        }
        return mb_hash_buf(alg, e->data, e->data_size, ret);
}
