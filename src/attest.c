/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * TPMS_ATTEST, TPMT_SIGNATURE and TPM2B_PUBLIC parsers (include/mb/attest.h).
 * Everything is big-endian (Part 1 §18); section numbers are Part 2's.
 */
#include "mb/attest.h"

/* A cursor over the input: the first error sticks, so a structure is read
 * field by field and judged once at the end. */
typedef struct rd {
        const uint8_t *p;
        size_t size, off;
        mb_err err;
} rd;

static bool take(rd *r, size_t n, const uint8_t **ret) {
        if (r->err != MB_OK)
                return false;
        if (mb_out_of_bounds(r->size, r->off, n)) {
                r->err = MB_ERR_TRUNCATED;
                return false;
        }
        *ret = r->p + r->off;
        r->off += n;
        return true;
}

static uint16_t u16(rd *r) {
        const uint8_t *q;
        return take(r, 2, &q) ? (uint16_t) ((q[0] << 8) | q[1]) : 0;
}

static uint32_t u32(rd *r) {
        const uint8_t *q;
        return take(r, 4, &q) ? ((uint32_t) q[0] << 24) | ((uint32_t) q[1] << 16) | ((uint32_t) q[2] << 8) | q[3] : 0;
}

static uint64_t u64(rd *r) {
        uint64_t hi = u32(r);
        return (hi << 32) | u32(r);
}

static uint8_t u8(rd *r) {
        const uint8_t *q;
        return take(r, 1, &q) ? q[0] : 0;
}

/* A TPM2B: a UINT16 size, at most max, then that many bytes. */
static mb_attest_bytes b2(rd *r, size_t max) {
        mb_attest_bytes b = { 0 };
        uint16_t n = u16(r);

        if (r->err == MB_OK && n > max)
                r->err = MB_ERR_INVALID;
        if (take(r, n, &b.p))
                b.size = n;
        return b;
}

static void fail(rd *r, mb_err e) {
        if (r->err == MB_OK)
                r->err = e;
}

/* The whole input must have been one structure. */
static mb_err finish(rd *r) {
        if (r->err == MB_OK && r->off != r->size)
                r->err = MB_ERR_INVALID;
        return r->err;
}

/* ---- TPMS_ATTEST (§10.12.12) ---------------------------------------------- */

/* §10.6.2 TPMS_PCR_SELECTION, §10.9.7 TPML_PCR_SELECTION. A selection of a
 * PCR above 23, a bank listed twice or more banks than HASH_COUNT allows
 * is refused: the verifier could not say which PCRs the digest covers. */
static void pcr_selection(rd *r, mb_attest_quote *q) {
        uint32_t n = u32(r);

        if (r->err == MB_OK && n > MB_ATTEST_MAX_BANKS)
                fail(r, MB_ERR_INVALID);
        for (uint32_t i = 0; r->err == MB_OK && i < n; i++) {
                uint16_t alg = u16(r);
                uint8_t sz = u8(r);
                const uint8_t *bits;
                uint32_t mask = 0;

                /* PCR_SELECT_MAX is 4 in tpm2-tss's headers; a fourth byte
                 * may be present but must select nothing. */
                if (r->err == MB_OK && sz > MB_ATTEST_PCR_SELECT_MAX + 1)
                        fail(r, MB_ERR_INVALID);
                if (!take(r, sz, &bits))
                        break;
                for (uint8_t k = 0; k < sz; k++) {
                        if (k >= MB_ATTEST_PCR_SELECT_MAX && bits[k])
                                fail(r, MB_ERR_INVALID);
                        if (k < MB_ATTEST_PCR_SELECT_MAX)
                                mask |= (uint32_t) bits[k] << (8 * k);
                }
                for (uint32_t k = 0; k < i; k++)
                        if (q->sel[k].alg == alg)
                                fail(r, MB_ERR_INVALID);
                q->sel[i].alg = alg;
                q->sel[i].mask = mask;
        }
        if (r->err == MB_OK)
                q->n_sel = n;
}

mb_err mb_attest_quote_parse(const uint8_t *buf, size_t size, mb_attest_quote *ret) {
        rd r = { buf, size, 0, MB_OK };
        mb_attest_quote q = { 0 };

        q.magic = u32(&r);
        q.type = u16(&r);
        q.signer = b2(&r, MB_ATTEST_NAME_MAX);
        q.extra = b2(&r, MB_ATTEST_DATA_MAX);
        /* §10.11.1 TPMS_CLOCK_INFO; safe is a TPMI_YES_NO. */
        q.clock = u64(&r);
        q.reset_count = u32(&r);
        q.restart_count = u32(&r);
        q.safe = u8(&r);
        if (r.err == MB_OK && q.safe > 1)
                fail(&r, MB_ERR_INVALID);
        q.firmware = u64(&r);
        if (r.err == MB_OK && q.type == MB_ATTEST_ST_QUOTE) {
                pcr_selection(&r, &q);
                q.digest = b2(&r, MB_ATTEST_DIGEST_MAX);
                if (finish(&r) != MB_OK)
                        return r.err;
        }
        if (r.err != MB_OK)
                return r.err;
        *ret = q;
        return MB_OK;
}

/* ---- TPMT_SIGNATURE (§11.3.4) ------------------------------------------- */

mb_err mb_attest_sig_parse(const uint8_t *buf, size_t size, mb_attest_sig *ret) {
        rd r = { buf, size, 0, MB_OK };
        mb_attest_sig s = { 0 };

        s.alg = u16(&r);
        if (r.err != MB_OK)
                return r.err;
        switch (s.alg) {
        case MB_ATTEST_ALG_RSASSA:
        case MB_ATTEST_ALG_RSAPSS:
                /* §11.3.1 TPMS_SIGNATURE_RSA: hash, TPM2B_PUBLIC_KEY_RSA. */
                s.hash = u16(&r);
                s.rsa = b2(&r, MB_ATTEST_RSA_MAX);
                break;
        case MB_ATTEST_ALG_ECDSA:
                /* §11.3.2 TPMS_SIGNATURE_ECC: hash, r, s. */
                s.hash = u16(&r);
                s.r = b2(&r, MB_ATTEST_ECC_MAX);
                s.s = b2(&r, MB_ATTEST_ECC_MAX);
                break;
        default:
                return MB_ERR_UNSUPPORTED;
        }
        if (finish(&r) != MB_OK)
                return r.err;
        *ret = s;
        return MB_OK;
}

/* ---- TPM2B_PUBLIC (§12.2.5), TPMT_PUBLIC (§12.2.4) ---------------------- */

/* §11.1.6 TPMT_SYM_DEF_OBJECT: an algorithm, then keyBits and mode
 * unless it is NULL. */
static void sym_def(rd *r, mb_attest_public *p) {
        p->sym = u16(r);
        if (p->sym != MB_ATTEST_ALG_NULL) {
                p->sym_bits = u16(r);
                p->sym_mode = u16(r);
        }
}

/* §11.2.3.5 TPMT_RSA_SCHEME and §11.2.5.6 TPMT_ECC_SCHEME: a scheme, then
 * its details: nothing for NULL and RSAES (TPMS_EMPTY), a hash and a
 * count for ECDAA (TPMS_SCHEME_ECDAA), a hash for every other. */
#define ALG_RSAES 0x0015u
#define ALG_ECDAA 0x001Au
static void scheme(rd *r, mb_attest_public *p) {
        p->scheme = u16(r);
        if (p->scheme == MB_ATTEST_ALG_NULL || p->scheme == ALG_RSAES)
                return;
        p->scheme_hash = u16(r);
        if (p->scheme == ALG_ECDAA)
                (void) u16(r);
}

mb_err mb_attest_public_parse(const uint8_t *buf, size_t size, mb_attest_public *ret) {
        rd r = { buf, size, 0, MB_OK };
        mb_attest_public p = { 0 };
        uint16_t n = u16(&r);

        /* The TPMT_PUBLIC is exactly the TPM2B's size and all of the rest. */
        if (r.err == MB_OK && (size_t) n + 2 != size)
                fail(&r, size < (size_t) n + 2 ? MB_ERR_TRUNCATED : MB_ERR_INVALID);
        p.area.p = buf + r.off;
        p.area.size = n;
        p.type = u16(&r);
        p.name_alg = u16(&r);
        p.attrs = u32(&r);
        p.policy = b2(&r, MB_ATTEST_DIGEST_MAX);
        if (r.err != MB_OK)
                return r.err;
        if (p.type != MB_ATTEST_ALG_RSA && p.type != MB_ATTEST_ALG_ECC)
                return MB_ERR_UNSUPPORTED;
        sym_def(&r, &p);
        scheme(&r, &p);
        if (p.type == MB_ATTEST_ALG_RSA) {
                /* §12.2.3.5 TPMS_RSA_PARMS, then unique.rsa. */
                p.rsa_bits = u16(&r);
                p.rsa_exponent = u32(&r);
                p.rsa_n = b2(&r, MB_ATTEST_RSA_MAX);
        } else {
                /* §12.2.3.6 TPMS_ECC_PARMS (kdf: §11.2.3.3 TPMT_KDF_SCHEME),
                 * then unique.ecc (§11.2.5.2 TPMS_ECC_POINT). */
                p.curve = u16(&r);
                p.kdf = u16(&r);
                if (p.kdf != MB_ATTEST_ALG_NULL)
                        (void) u16(&r);
                p.x = b2(&r, MB_ATTEST_ECC_MAX);
                p.y = b2(&r, MB_ATTEST_ECC_MAX);
        }
        if (finish(&r) != MB_OK)
                return r.err;
        *ret = p;
        return MB_OK;
}

/* ---- the challenge file (include/mb/attest.h) --------------------------- */

/* §11.2.5.2 TPMS_ECC_POINT: two TPM2B_ECC_PARAMETERs and nothing else. */
static void ecc_point(mb_attest_cred *c) {
        rd r = { c->secret.p, c->secret.size, 0, MB_OK };
        mb_attest_bytes x = b2(&r, MB_ATTEST_ECC_MAX), y = b2(&r, MB_ATTEST_ECC_MAX);

        if (finish(&r) == MB_OK && x.size && y.size) {
                c->ecc_x = x;
                c->ecc_y = y;
        }
}

/* The ID object: integrityHMAC (a TPM2B_DIGEST), then encIdentity, which
 * is never empty (Part 1 §24.4: it holds at least a TPM2B's size). */
static bool id_object_ok(const mb_attest_bytes *b) {
        rd r = { b->p, b->size, 0, MB_OK };

        (void) b2(&r, MB_ATTEST_DIGEST_MAX);
        return r.err == MB_OK && r.off < r.size;
}

mb_err mb_attest_cred_parse(const uint8_t *buf, size_t size, mb_attest_cred *ret) {
        rd r = { buf, size, 0, MB_OK };
        mb_attest_cred c = { 0 };
        uint32_t magic = u32(&r), version = u32(&r);

        if (r.err == MB_OK && (magic != MB_ATTEST_CRED_MAGIC || version != MB_ATTEST_CRED_VERSION))
                fail(&r, MB_ERR_INVALID);
        c.id_object = b2(&r, MB_ATTEST_ID_OBJECT_MAX);
        c.secret = b2(&r, MB_ATTEST_SECRET_MAX);
        if (finish(&r) != MB_OK)
                return r.err;
        if (!id_object_ok(&c.id_object) || !c.secret.size)
                return MB_ERR_INVALID;
        ecc_point(&c);
        *ret = c;
        return MB_OK;
}
