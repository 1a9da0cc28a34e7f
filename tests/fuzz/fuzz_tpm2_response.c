/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * libFuzzer target: src/tpm2.c. The input, as a TPM's response, goes to
 * every response parser (what a TPM, or whatever answers in its place
 * through SubmitCommand, can send the loader). A parser that accepts must
 * have read a response whose size field is the input's length, hand back
 * outputs inside their types' bounds (slices inside the input), and for a
 * non-zero code have seen the header alone. Then the input drives every
 * builder as arguments and an output capacity: a builder must fail with
 * MB_ERR_NOSPACE or write a command of at most that capacity whose size
 * field is what it returned (the buffer is exactly the capacity, so ASan
 * sees a byte written past it).
 */
#include <stdlib.h>
#include <string.h>

#include "mb/tpm2.h"
#include "mb/sha.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static uint32_t be32(const uint8_t *p) {
        return ((uint32_t) p[0] << 24) | ((uint32_t) p[1] << 16) | ((uint32_t) p[2] << 8) | p[3];
}

/* What every accepting parser must have seen. */
static void accepted(const uint8_t *buf, size_t size, uint32_t rc) {
        if (size < MB_TPM2_HEADER_SIZE || be32(buf + 2) != size || be32(buf + 6) != rc)
                abort();
        if (rc != 0 && size != MB_TPM2_HEADER_SIZE)
                abort();
}

static void inside(const uint8_t *buf, size_t size, const uint8_t *p, size_t n) {
        if (p < buf || (size_t) (p - buf) > size || size - (size_t) (p - buf) < n)
                abort();
}

static void parse_all(const uint8_t *buf, size_t size) {
        uint32_t rc, handle;
        mb_tpm2_digest d;
        mb_tpm2_name name;
        mb_tpm2_ticket tk;
        const uint8_t *pub, *nm;
        size_t pub_size, nm_size, rsp_len;

        /* SubmitCommand's answer: the header's size, never past what came. */
        if (mb_tpm2_response_size(buf, size, &rsp_len) == MB_OK && (rsp_len < MB_TPM2_HEADER_SIZE || rsp_len > size))
                abort();
        if (mb_tpm2_parse_empty(buf, size, &rc) == MB_OK)
                accepted(buf, size, rc);
        if (mb_tpm2_parse_policy_nv(buf, size, &rc) == MB_OK)
                accepted(buf, size, rc);
        if (mb_tpm2_parse_start_auth_session(buf, size, &rc, &handle, &d) == MB_OK) {
                accepted(buf, size, rc);
                if (rc == 0 && (d.size > MB_TPM2_DIGEST_MAX || handle >> 24 != MB_TPM2_HT_POLICY_SESSION))
                        abort();
        }
        if (mb_tpm2_parse_load_external(buf, size, &rc, &handle, &name) == MB_OK) {
                accepted(buf, size, rc);
                if (rc == 0 && name.size > MB_TPM2_NAME_MAX)
                        abort();
        }
        if (mb_tpm2_parse_verify_signature(buf, size, &rc, &tk) == MB_OK) {
                accepted(buf, size, rc);
                if (rc == 0 && tk.digest.size > MB_TPM2_DIGEST_MAX)
                        abort();
        }
        if (mb_tpm2_parse_hmac(buf, size, MB_ALG_SHA1, &rc, &d) == MB_OK) {
                accepted(buf, size, rc);
                if (rc == 0 && d.size != 20)
                        abort();
        }
        if (mb_tpm2_parse_policy_get_digest(buf, size, &rc, &d) == MB_OK) {
                accepted(buf, size, rc);
                if (rc == 0 && d.size > MB_TPM2_DIGEST_MAX)
                        abort();
        }
        if (mb_tpm2_parse_read_public(buf, size, &rc, &pub, &pub_size, &nm, &nm_size) == MB_OK) {
                accepted(buf, size, rc);
                if (rc == 0) {
                        inside(buf, size, pub, pub_size);
                        inside(buf, size, nm, nm_size);
                        if (nm_size > MB_TPM2_NAME_MAX || pub_size < 8)
                                abort();
                        (void) mb_tpm2_object_name(pub, pub_size, &name);
                }
        }
        if (size >= MB_TPM2_HEADER_SIZE) {
                char kind;
                unsigned index;
                const char *n = mb_tpm2_rc_name(be32(buf + 6)), *t = mb_tpm2_rc_text(be32(buf + 6));
                if ((n == NULL) != (t == NULL))
                        abort();
                mb_tpm2_rc_where(be32(buf + 6), &kind, &index);
                if (index > 15)
                        abort();
        }
}

/* One builder with arguments cut from the input; the command must fit
 * the capacity and carry its own size. n is a pointer: the builder call
 * in the same argument list sets it. */
static void check_built(const uint8_t *out, size_t cap, mb_err e, const size_t *n) {
        if (e == MB_ERR_NOSPACE || e == MB_ERR_INVALID)
                return;
        if (e != MB_OK || *n > cap || *n < MB_TPM2_HEADER_SIZE || be32(out + 2) != *n)
                abort();
}

static void build_all(const uint8_t *data, size_t size) {
        static const uint8_t zero[MB_TPM2_MAX_BUFFER + 1];
        size_t cap, len, n = 0;
        const uint8_t *arg;
        uint8_t *out;
        mb_tpm2_ticket tk;

        if (size < 4)
                return;
        cap = ((size_t) data[0] << 8 | data[1]) % (MB_TPM2_MAX_COMMAND + 1);
        len = data[2] | ((size_t) (data[3] & 0x7) << 8);       /* an argument's length, 0..2047 */
        arg = size - 4 >= len ? data + 4 : zero;
        if (len > sizeof(zero))
                len = sizeof(zero);
        out = malloc(cap ? cap : 1);
        if (!out)
                return;
        tk.hierarchy = MB_TPM2_RH_OWNER;
        tk.digest.size = (uint16_t) (len % (MB_TPM2_DIGEST_MAX + 2));
        memset(tk.digest.b, 0x5a, sizeof(tk.digest.b));
        n = 0;
        check_built(out, cap, mb_tpm2_build_start_auth_session(out, cap, arg, len, &n), &n);
        check_built(out, cap, mb_tpm2_build_policy_pcr(out, cap, 1, MB_ALG_SHA256, len * 4099u, arg, len, &n), &n);
        check_built(out, cap, mb_tpm2_build_policy_or(out, cap, 1, arg, len % 10, len / 10, &n), &n);
        check_built(out, cap, mb_tpm2_build_policy_nv(out, cap, 1, 2, arg, len % 70, arg, len / 30, 0, 9, &n), &n);
        check_built(out, cap, mb_tpm2_build_load_external(out, cap, arg, len, MB_TPM2_RH_NULL, &n), &n);
        check_built(out, cap, mb_tpm2_build_verify_signature(out, cap, 1, arg, len % 40, arg, len % 34, arg,
                                                             len / 34, &n), &n);
        check_built(out, cap, mb_tpm2_build_policy_authorize(out, cap, 1, arg, len % 70, arg, len / 40, arg,
                                                             len % 68, &tk, &n), &n);
        check_built(out, cap, mb_tpm2_build_hmac(out, cap, 1, 2, 0, arg, len, MB_ALG_SHA1, &n), &n);
        check_built(out, cap, mb_tpm2_build_flush_context(out, cap, 1, &n), &n);
        check_built(out, cap, mb_tpm2_build_read_public(out, cap, 1, &n), &n);
        check_built(out, cap, mb_tpm2_build_policy_get_digest(out, cap, 1, &n), &n);
        free(out);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        uint8_t *buf = malloc(size ? size : 1);   /* exactly size bytes */

        if (!buf)
                return 0;
        memcpy(buf, data, size);
        parse_all(buf, size);
        build_all(buf, size);
        free(buf);
        return 0;
}
