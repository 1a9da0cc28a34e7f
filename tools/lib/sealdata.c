/* SPDX-License-Identifier: BSD-2-Clause */
/* The sealed file and approvals, read and written through src/sealfile.c
 * (tools/lib/sealdata.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <tss2/tss2_mu.h>
#include "sealdata.h"

/* Big enough for any file the codec writes: 512 states of 768 bytes in
 * hex and the blobs. */
#define TEXT_MAX (SEAL_MAX_STATES * (2 * SEAL_STATE_MAX + 8) + 16 * MB_SEAL_LINE_MAX)

/* TPM2B structures as the files hold them: marshalled (Part 2 form). */
#define MARSHAL(type, val, buf, ret_size)                                                              \
        (*(ret_size) = 0, Tss2_MU_##type##_Marshal((val), (buf), MB_SEAL_BLOB_MAX, (ret_size)) == TSS2_RC_SUCCESS)
#define UNMARSHAL(type, buf, size, out)                                                            \
        ({                                                                                         \
                size_t o_ = 0;                                                                     \
                Tss2_MU_##type##_Unmarshal((buf), (size), &o_, (out)) == TSS2_RC_SUCCESS && o_ == (size); \
        })

static char *write_text(mb_err (*fn)(const void *, char *, size_t, size_t *), const void *v, const char *what) {
        char *buf = malloc(TEXT_MAX);
        size_t len;
        mb_err e = buf ? fn(v, buf, TEXT_MAX, &len) : MB_ERR_NOSPACE;

        if (e != MB_OK) {
                cli_error("cannot write the %s: %s", what, mb_strerror(e));
                free(buf);
                return NULL;
        }
        return buf;
}

static mb_err sealed_write(const void *s, char *buf, size_t cap, size_t *len) {
        return mb_sealed_write(s, buf, cap, len);
}

static mb_err approval_write(const void *a, char *buf, size_t cap, size_t *len) {
        return mb_approval_write(a, buf, cap, len);
}

char *seal_file_format(const seal_file *f) {
        mb_sealed *s = calloc(1, sizeof(*s));
        size_t state = seal_pcr_count(f->pcrs) * SEAL_PCR_VALUE;
        uint8_t *states = calloc(f->n_states ? f->n_states : 1, state ? state : 1);
        char *text = NULL;

        if (!s || !states) {
                cli_error("out of memory");
                goto out;
        }
        *s = (mb_sealed) { .mode = f->literal ? MB_SEAL_LITERAL : MB_SEAL_SIGNED, .pin = f->pin, .bank = MB_ALG_SHA256,
                           .pcrs = f->pcrs, .fence = f->fence, .n_states = f->literal ? f->n_states : 0,
                           .states = states };
        for (size_t i = 0; f->literal && i < f->n_states; i++)
                memcpy(states + i * state, f->states[i], state);
        if (!f->literal) {
                s->nv_index = f->nv_index;
                s->nv_name_size = f->nv_name.size;
                memcpy(s->nv_name, f->nv_name.name, f->nv_name.size);
        }
        if (!MARSHAL(TPM2B_PUBLIC, &f->srk, s->srk_public, &s->srk_public_size) ||
            !MARSHAL(TPM2B_PUBLIC, &f->pub, s->public_, &s->public_size) ||
            !MARSHAL(TPM2B_PRIVATE, &f->priv, s->private_, &s->private_size) ||
            (!f->literal && !MARSHAL(TPM2B_PUBLIC, &f->policy_key, s->policy_key, &s->policy_key_size))) {
                cli_error("cannot write the sealed file: a TPM structure too large");
                goto out;
        }
        text = write_text(sealed_write, s, "sealed file");
out:
        free(states);
        free(s);
        return text;
}

char *approval_format(const approval *a) {
        return write_text(approval_write, a, "approval");
}

static int parse_error(const char *path, size_t line, mb_err e) {
        if (line)
                cli_error("%s:%zu: %s (damaged, or not a file mshim wrote)", path, line, mb_strerror(e));
        else
                cli_error("%s: %s (damaged or truncated, or not a file mshim wrote)", path, mb_strerror(e));
        return -1;
}

/* The parsed file into the CLI's form: the blobs unmarshalled. */
static int sealed_take(const char *path, const mb_sealed *s, seal_file *f) {
        size_t state = seal_pcr_count(s->pcrs) * SEAL_PCR_VALUE;

        *f = (seal_file) { .literal = s->mode == MB_SEAL_LITERAL, .pin = s->pin, .pcrs = s->pcrs, .fence = s->fence,
                           .nv_index = s->nv_index };
        if (!UNMARSHAL(TPM2B_PUBLIC, s->srk_public, s->srk_public_size, &f->srk) ||
            !UNMARSHAL(TPM2B_PUBLIC, s->public_, s->public_size, &f->pub) ||
            !UNMARSHAL(TPM2B_PRIVATE, s->private_, s->private_size, &f->priv) ||
            (!f->literal && !UNMARSHAL(TPM2B_PUBLIC, s->policy_key, s->policy_key_size, &f->policy_key))) {
                cli_error("%s: a TPM structure in it does not unmarshal (damaged file)", path);
                return -1;
        }
        if (!f->literal) {
                f->nv_name.size = (UINT16) s->nv_name_size;
                memcpy(f->nv_name.name, s->nv_name, s->nv_name_size);
                return 0;
        }
        f->n_states = s->n_states;
        f->states = calloc(s->n_states, sizeof(*f->states));
        if (!f->states) {
                cli_error("out of memory");
                return -1;
        }
        for (size_t i = 0; i < s->n_states; i++)
                memcpy(f->states[i], s->states + i * state, state);
        return 0;
}

int seal_file_parse(const char *name, const char *text, size_t size, seal_file *ret) {
        size_t cap = (size_t) SEAL_MAX_STATES * SEAL_STATE_MAX, line = 0;
        uint8_t *buf = malloc(cap);
        mb_sealed *s = calloc(1, sizeof(*s));
        seal_file f = { 0 };
        mb_err e;
        int r = -1;

        if (!buf || !s)
                cli_error("out of memory");
        else if ((e = mb_sealed_parse(text, size, buf, cap, s, &line)) != MB_OK)
                parse_error(name, line, e);
        else if (s->bank != MB_ALG_SHA256)
                cli_error("%s: PCR bank not sha256 (unsupported)", name);
        else if ((r = sealed_take(name, s, &f)) == 0)
                *ret = f;
        else
                seal_file_free(&f);
        free(buf);
        free(s);
        return r;
}

int seal_file_load(const char *path, seal_file *ret) {
        cli_file cf;
        int r;

        if (cli_file_load_max(path, SEAL_MAX_FILE, "a sealed file", &cf) < 0)
                return -1;
        r = seal_file_parse(path, (const char *) cf.data, cf.size, ret);
        cli_file_free(&cf);
        return r;
}

void seal_file_free(seal_file *f) {
        free(f->states);
        f->states = NULL;
        f->n_states = 0;
}

int approval_load(const char *path, approval *ret) {
        approval *a = calloc(1, sizeof(*a));
        size_t line = 0;
        cli_file cf;
        mb_err e;
        int r = -1;

        if (!a) {
                cli_error("out of memory");
                return -1;
        }
        if (cli_file_load_max(path, SEAL_MAX_FILE, "an approval", &cf) == 0) {
                e = mb_approval_parse((const char *) cf.data, cf.size, a, &line);
                cli_file_free(&cf);
                if (e != MB_OK)
                        parse_error(path, line, e);
                else if (a->bank != MB_ALG_SHA256)
                        cli_error("%s: PCR bank not sha256 (unsupported)", path);
                else {
                        *ret = *a;
                        r = 0;
                }
        }
        free(a);
        return r;
}

int totp_enrolment_load(const char *path, mb_totp_enrolment *ret) {
        mb_totp_enrolment *e = calloc(1, sizeof(*e));
        uint8_t *states = malloc(MB_SEAL_STATE_MAX * MB_SEAL_VALUES_MAX);
        size_t line = 0;
        cli_file cf;
        mb_err err;
        int r = -1;

        if (access(path, F_OK) < 0 && errno == ENOENT)
                r = 1;
        else if (!e || !states)
                cli_error("out of memory");
        else if (cli_file_load_max(path, SEAL_MAX_FILE, "a TOTP enrolment", &cf) == 0) {
                err = mb_totp_enrolment_parse((const char *) cf.data, cf.size, states,
                                              MB_SEAL_STATE_MAX * MB_SEAL_VALUES_MAX, e, &line);
                cli_file_free(&cf);
                if (err != MB_OK) {
                        parse_error(path, line, err);
                } else {
                        /* The states are not kept: the callers need the
                         * key and the signed mode's data. */
                        e->states = NULL;
                        e->n_states = 0;
                        *ret = *e;
                        r = 0;
                }
        }
        free(states);
        free(e);
        return r;
}
