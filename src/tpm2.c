/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * TPM 2.0 command marshalling and response parsing (include/mb/tpm2.h).
 * Everything on the wire is big-endian (Part 1 §18, "Command/Response
 * Structure"; Part 3 §5, "Command Processing"). A command is
 *
 *   tag (TPM_ST) | commandSize (UINT32, whole command) | commandCode (TPM_CC)
 *   | handles | [authorizationSize (UINT32) | TPMS_AUTH_COMMAND...]
 *   | parameters
 *
 * with the authorization area present exactly when tag is TPM_ST_SESSIONS.
 * A response is
 *
 *   tag | responseSize | responseCode | handles
 *   | [parameterSize (UINT32)] | parameters | [TPMS_AUTH_RESPONSE...]
 *
 * where parameterSize and the authorization area are present only in a
 * TPM_ST_SESSIONS response, with one TPMS_AUTH_RESPONSE per session of
 * the command. A response with a non-zero code is the header alone with
 * tag TPM_ST_NO_SESSIONS, or TPM_ST_RSP_COMMAND with TPM_RC_BAD_TAG, the
 * answer to a command whose tag the TPM cannot read, 1.2 commands
 * included (Part 2 §6.9, TPM_ST_RSP_COMMAND).
 */
#include "mb/tpm2.h"
#include "mb/policy.h"
#include "mb/sha.h"

/* TPM_CC (Part 2 §6.5.2) of the commands that mb/policy.h does not name. */
#define CC_HMAC               0x00000155u
#define CC_FLUSH_CONTEXT      0x00000165u
#define CC_LOAD_EXTERNAL      0x00000167u
#define CC_READ_PUBLIC        0x00000173u
#define CC_START_AUTH_SESSION 0x00000176u
#define CC_VERIFY_SIGNATURE   0x00000177u
#define CC_POLICY_GET_DIGEST  0x00000189u

/* TPM_ALG_ID (Part 2 §6.3), TPM_SE (§6.11), TPM_ECC_CURVE (§6.4). */
#define ALG_ECC   0x0023u
#define ALG_NULL  0x0010u
#define ALG_ECDSA 0x0018u
#define SE_POLICY 0x01u
#define ECC_NIST_P256 0x0003u

/* TPMA_OBJECT (Part 2 §8.3): userWithAuth (bit 6), sign (bit 18). */
#define OBJ_USER_WITH_AUTH 0x00000040u
#define OBJ_SIGN           0x00040000u

/* TPM_RC (Part 2 §6.6.3): format-one codes have bit 7 set, then bit 6 says
 * "parameter" and bits 8-11 hold its number; otherwise bits 8-11 are a
 * handle number, or with bit 11 a session number. */
#define RC_FMT1   0x080u
#define RC_P      0x040u

static inline uint16_t be16(const uint8_t *p) {
        return (uint16_t) ((p[0] << 8) | p[1]);
}
static inline uint32_t be32(const uint8_t *p) {
        return ((uint32_t) p[0] << 24) | ((uint32_t) p[1] << 16) | ((uint32_t) p[2] << 8) | p[3];
}

/* ---- the writer: sticky "no space", never past cap ------------------------ */

typedef struct wr {
        uint8_t *buf;
        size_t cap, len;
        bool nospace;
} wr;

static void w_bytes(wr *w, const void *p, size_t n) {
        if (w->nospace || mb_out_of_bounds(w->cap, w->len, n)) {
                w->nospace = true;
                return;
        }
        mb_memcpy(w->buf + w->len, p, n);
        w->len += n;
}

static void w_u8(wr *w, uint8_t v) {
        w_bytes(w, &v, 1);
}

static void w_u16(wr *w, uint16_t v) {
        uint8_t b[2] = { (uint8_t) (v >> 8), (uint8_t) v };
        w_bytes(w, b, sizeof(b));
}

static void w_u32(wr *w, uint32_t v) {
        uint8_t b[4] = { (uint8_t) (v >> 24), (uint8_t) (v >> 16), (uint8_t) (v >> 8), (uint8_t) v };
        w_bytes(w, b, sizeof(b));
}

/* A TPM2B: UINT16 size, then the bytes. Callers bound n first. */
static void w_2b(wr *w, const uint8_t *p, size_t n) {
        w_u16(w, (uint16_t) n);
        w_bytes(w, p, n);
}

/* tag | commandSize (patched by w_end) | commandCode */
static wr w_begin(uint8_t *buf, size_t cap, uint16_t tag, uint32_t cc) {
        wr w = { .buf = buf, .cap = cap };
        w_u16(&w, tag);
        w_u32(&w, 0);
        w_u32(&w, cc);
        return w;
}

static mb_err w_end(wr *w, size_t *ret_size) {
        if (w->nospace)
                return MB_ERR_NOSPACE;
        if (w->len > UINT32_MAX)
                return MB_ERR_OVERFLOW;
        w->buf[2] = (uint8_t) (w->len >> 24);
        w->buf[3] = (uint8_t) (w->len >> 16);
        w->buf[4] = (uint8_t) (w->len >> 8);
        w->buf[5] = (uint8_t) w->len;
        *ret_size = w->len;
        return MB_OK;
}

/* The authorization area of a command with one session (Part 1 §18,
 * Part 2 §10.13.2 TPMS_AUTH_COMMAND): authorizationSize, sessionHandle,
 * an empty nonceCaller (a policy session without cpHash/HMAC checks and a
 * password need none), sessionAttributes, hmac (the password, or empty
 * for a policy session). */
static void w_auth(wr *w, uint32_t session, uint8_t attrs, const uint8_t *hmac, size_t hmac_size) {
        w_u32(w, (uint32_t) (4 + 2 + 1 + 2 + hmac_size));
        w_u32(w, session);
        w_2b(w, NULL, 0);
        w_u8(w, attrs);
        w_2b(w, hmac, hmac_size);
}

/* TPML_PCR_SELECTION with one TPMS_PCR_SELECTION (Part 2 §10.6.2, §10.9.7):
 * sizeofSelect 3 (PCRs 0-23, the PC Client minimum), bit i of byte j is
 * PCR 8j+i. */
static void w_pcr_selection(wr *w, uint16_t bank, uint32_t mask) {
        w_u32(w, 1);
        w_u16(w, bank);
        w_u8(w, 3);
        w_u8(w, (uint8_t) mask);
        w_u8(w, (uint8_t) (mask >> 8));
        w_u8(w, (uint8_t) (mask >> 16));
}

/* ---- the reader: every length checked against what is left --------------- */

typedef struct rd {
        const uint8_t *p;
        size_t end, off;
} rd;

static mb_err r_u8(rd *r, uint8_t *ret) {
        if (mb_out_of_bounds(r->end, r->off, 1))
                return MB_ERR_TRUNCATED;
        *ret = r->p[r->off++];
        return MB_OK;
}

static mb_err r_u16(rd *r, uint16_t *ret) {
        if (mb_out_of_bounds(r->end, r->off, 2))
                return MB_ERR_TRUNCATED;
        *ret = be16(r->p + r->off);
        r->off += 2;
        return MB_OK;
}

static mb_err r_u32(rd *r, uint32_t *ret) {
        if (mb_out_of_bounds(r->end, r->off, 4))
                return MB_ERR_TRUNCATED;
        *ret = be32(r->p + r->off);
        r->off += 4;
        return MB_OK;
}

/* A TPM2B of at most max bytes (its type's buffer size, Part 2 §10.4:
 * a larger size is TPM_RC_SIZE on the TPM's side and invalid here). */
static mb_err r_2b(rd *r, size_t max, const uint8_t **ret_p, size_t *ret_n) {
        uint16_t n;
        mb_err e = r_u16(r, &n);

        if (e)
                return e;
        if (n > max)
                return MB_ERR_INVALID;
        if (mb_out_of_bounds(r->end, r->off, n))
                return MB_ERR_TRUNCATED;
        *ret_p = r->p + r->off;
        *ret_n = n;
        r->off += n;
        return MB_OK;
}

static mb_err r_digest(rd *r, mb_tpm2_digest *ret) {
        const uint8_t *p;
        size_t n;
        mb_err e = r_2b(r, MB_TPM2_DIGEST_MAX, &p, &n);

        if (e)
                return e;
        ret->size = (uint16_t) n;
        mb_memcpy(ret->b, p, n);
        return MB_OK;
}

/* Every byte of the area consumed: anything left over is not the response
 * the command has. */
static mb_err r_done(const rd *r) {
        return r->off == r->end ? MB_OK : MB_ERR_INVALID;
}

/* ---- responses ---------------------------------------------------------- */

typedef struct rsp {
        uint32_t rc;
        uint32_t handle;        /* the response's one handle, if it has one */
        rd params;              /* exactly the parameter area */
} rsp;

/* The authorization area of a response to a command with one session
 * (Part 2 §10.13.4 TPMS_AUTH_RESPONSE: nonceTPM, sessionAttributes, hmac),
 * which must end the response. A policy or password session's nonce and
 * hmac are normally empty; any size up to a digest is well-formed. */
static mb_err rsp_auth_area(rd *r) {
        const uint8_t *p;
        size_t n;
        uint8_t attrs;
        mb_err e;

        if ((e = r_2b(r, MB_TPM2_DIGEST_MAX, &p, &n)) || (e = r_u8(r, &attrs)) ||
            (e = r_2b(r, MB_TPM2_DIGEST_MAX, &p, &n)))
                return e;
        return r_done(r);
}

/* The header, the handle area and the split into parameters and
 * authorizations; ret->rc is the TPM's code and, when it is 0, ret->handle
 * and ret->params are set. */
static mb_err rsp_open(const uint8_t *b, size_t n, bool has_handle, bool sessions, rsp *ret) {
        rd r = { .p = b, .end = n, .off = MB_TPM2_HEADER_SIZE };
        uint16_t tag;
        uint32_t size, rc;
        mb_err e;

        if (n < MB_TPM2_HEADER_SIZE)
                return MB_ERR_TRUNCATED;
        tag = be16(b);
        size = be32(b + 2);
        rc = be32(b + 6);
        /* responseSize is the whole response (Part 1 §18): the bytes
         * received must be exactly that, no fewer and no more. */
        if (size != n)
                return size > n ? MB_ERR_TRUNCATED : MB_ERR_INVALID;
        if (rc != MB_TPM2_RC_SUCCESS) {
                if (n != MB_TPM2_HEADER_SIZE)
                        return MB_ERR_INVALID;
                if (tag != MB_TPM2_ST_NO_SESSIONS && !(tag == MB_TPM2_ST_RSP_COMMAND && rc == MB_TPM2_RC_BAD_TAG))
                        return MB_ERR_INVALID;
                ret->rc = rc;
                return MB_OK;
        }
        /* A successful response has sessions exactly when the command had
         * (Part 1 §18). */
        if (tag != (sessions ? MB_TPM2_ST_SESSIONS : MB_TPM2_ST_NO_SESSIONS))
                return MB_ERR_INVALID;
        ret->handle = 0;
        if (has_handle && (e = r_u32(&r, &ret->handle)))
                return e;
        if (sessions) {
                uint32_t psize;
                rd auth;

                if ((e = r_u32(&r, &psize)))
                        return e;
                if (mb_out_of_bounds(n, r.off, psize))
                        return MB_ERR_TRUNCATED;
                auth = (rd) { .p = b, .end = n, .off = r.off + psize };
                if ((e = rsp_auth_area(&auth)))
                        return e;
                r.end = r.off + psize;
        }
        ret->rc = rc;
        ret->params = r;
        return MB_OK;
}

mb_err mb_tpm2_response_size(const uint8_t *rsp_buf, size_t cap, size_t *ret_size) {
        uint32_t size;

        if (cap < MB_TPM2_HEADER_SIZE)
                return MB_ERR_TRUNCATED;
        size = be32(rsp_buf + 2);
        if (size < MB_TPM2_HEADER_SIZE || size > cap)
                return MB_ERR_INVALID;
        *ret_size = size;
        return MB_OK;
}

mb_err mb_tpm2_parse_empty(const uint8_t *rsp_buf, size_t n, uint32_t *ret_rc) {
        rsp s;
        mb_err e = rsp_open(rsp_buf, n, false, false, &s);

        if (e)
                return e;
        if (s.rc == MB_TPM2_RC_SUCCESS && (e = r_done(&s.params)))
                return e;
        *ret_rc = s.rc;
        return MB_OK;
}

/* ---- TPM2_StartAuthSession (Part 3 §11.1) ------------------------------- */

mb_err mb_tpm2_build_start_auth_session(uint8_t *buf, size_t cap, const uint8_t *nonce_caller, size_t nonce_size,
                                        size_t *ret_size) {
        wr w;

        /* §11.1: nonceCaller at least 16 octets, at most authHash's size. */
        if (nonce_size < 16 || nonce_size > mb_hash_size(MB_ALG_SHA256))
                return MB_ERR_INVALID;
        w = w_begin(buf, cap, MB_TPM2_ST_NO_SESSIONS, CC_START_AUTH_SESSION);
        w_u32(&w, MB_TPM2_RH_NULL);        /* tpmKey: no salt */
        w_u32(&w, MB_TPM2_RH_NULL);        /* bind: unbound */
        w_2b(&w, nonce_caller, nonce_size);
        w_2b(&w, NULL, 0);                 /* encryptedSalt */
        w_u8(&w, SE_POLICY);
        w_u16(&w, ALG_NULL);               /* symmetric: TPMT_SYM_DEF, NULL has no keyBits/mode */
        w_u16(&w, MB_ALG_SHA256);          /* authHash */
        return w_end(&w, ret_size);
}

mb_err mb_tpm2_parse_start_auth_session(const uint8_t *rsp_buf, size_t n, uint32_t *ret_rc, uint32_t *ret_session,
                                        mb_tpm2_digest *ret_nonce_tpm) {
        rsp s;
        mb_tpm2_digest nonce;
        mb_err e = rsp_open(rsp_buf, n, true, false, &s);

        if (e)
                return e;
        if (s.rc == MB_TPM2_RC_SUCCESS) {
                if ((e = r_digest(&s.params, &nonce)) || (e = r_done(&s.params)))
                        return e;
                /* TPM_HT_POLICY_SESSION is the handle's top byte (Part 2
                 * §7.2): anything else is not the session asked for. */
                if (s.handle >> 24 != MB_TPM2_HT_POLICY_SESSION)
                        return MB_ERR_INVALID;
                *ret_session = s.handle;
                *ret_nonce_tpm = nonce;
        }
        *ret_rc = s.rc;
        return MB_OK;
}

/* ---- policy commands (Part 3 §23) ------------------------------------------ */

mb_err mb_tpm2_build_policy_pcr(uint8_t *buf, size_t cap, uint32_t session, uint16_t bank, uint32_t pcr_mask,
                                const uint8_t *pcr_digest, size_t digest_size, size_t *ret_size) {
        wr w;

        if (pcr_mask > 0xFFFFFFu || digest_size > MB_TPM2_DIGEST_MAX)
                return MB_ERR_INVALID;
        w = w_begin(buf, cap, MB_TPM2_ST_NO_SESSIONS, MB_TPM_CC_POLICY_PCR);
        w_u32(&w, session);
        w_2b(&w, pcr_digest, digest_size);
        w_pcr_selection(&w, bank, pcr_mask);
        return w_end(&w, ret_size);
}

mb_err mb_tpm2_build_policy_or(uint8_t *buf, size_t cap, uint32_t session, const uint8_t *digests, size_t n,
                               size_t digest_size, size_t *ret_size) {
        wr w;

        /* §23.6: pHashList holds 2 to 8 digests (TPM_RC_SIZE otherwise). */
        if (n < 2 || n > MB_POLICY_OR_MAX || digest_size == 0 || digest_size > MB_TPM2_DIGEST_MAX)
                return MB_ERR_INVALID;
        w = w_begin(buf, cap, MB_TPM2_ST_NO_SESSIONS, MB_TPM_CC_POLICY_OR);
        w_u32(&w, session);
        w_u32(&w, (uint32_t) n);            /* TPML_DIGEST count */
        for (size_t i = 0; i < n; i++)
                w_2b(&w, digests + i * digest_size, digest_size);
        return w_end(&w, ret_size);
}

mb_err mb_tpm2_build_policy_nv(uint8_t *buf, size_t cap, uint32_t session, uint32_t nv_index, const uint8_t *auth,
                               size_t auth_size, const uint8_t *operand_b, size_t operand_size, uint16_t offset,
                               uint16_t operation, size_t *ret_size) {
        wr w;

        /* TPM2B_AUTH and TPM2B_OPERAND are digest-sized (Part 2 §10.4.5,
         * §10.4.6). */
        if (auth_size > MB_TPM2_DIGEST_MAX || operand_size > MB_TPM2_DIGEST_MAX)
                return MB_ERR_INVALID;
        w = w_begin(buf, cap, MB_TPM2_ST_SESSIONS, MB_TPM_CC_POLICY_NV);
        w_u32(&w, nv_index);                /* authHandle: the index itself (AUTHREAD) */
        w_u32(&w, nv_index);                /* nvIndex */
        w_u32(&w, session);                 /* policySession: no authorization */
        /* A password session may ask to continue; the TPM ignores it for
         * TPM_RS_PW but tpm2-tools and the TSS set it. */
        w_auth(&w, MB_TPM2_RS_PW, MB_TPM2_SA_CONTINUE_SESSION, auth, auth_size);
        w_2b(&w, operand_b, operand_size);
        w_u16(&w, offset);
        w_u16(&w, operation);
        return w_end(&w, ret_size);
}

mb_err mb_tpm2_parse_policy_nv(const uint8_t *rsp_buf, size_t n, uint32_t *ret_rc) {
        rsp s;
        mb_err e = rsp_open(rsp_buf, n, false, true, &s);

        if (e)
                return e;
        if (s.rc == MB_TPM2_RC_SUCCESS && (e = r_done(&s.params)))
                return e;
        *ret_rc = s.rc;
        return MB_OK;
}

mb_err mb_tpm2_build_policy_authorize(uint8_t *buf, size_t cap, uint32_t session, const uint8_t *approved,
                                      size_t approved_size, const uint8_t *ref, size_t ref_size,
                                      const uint8_t *key_name, size_t key_name_size, const mb_tpm2_ticket *ticket,
                                      size_t *ret_size) {
        wr w;

        if (approved_size > MB_TPM2_DIGEST_MAX || ref_size > MB_TPM2_DIGEST_MAX ||
            key_name_size > MB_TPM2_NAME_MAX || ticket->digest.size > MB_TPM2_DIGEST_MAX)
                return MB_ERR_INVALID;
        w = w_begin(buf, cap, MB_TPM2_ST_NO_SESSIONS, MB_TPM_CC_POLICY_AUTHORIZE);
        w_u32(&w, session);
        w_2b(&w, approved, approved_size);
        w_2b(&w, ref, ref_size);            /* policyRef: TPM2B_NONCE */
        w_2b(&w, key_name, key_name_size);  /* keySign: TPM2B_NAME */
        w_u16(&w, MB_TPM2_ST_VERIFIED);     /* checkTicket: TPMT_TK_VERIFIED */
        w_u32(&w, ticket->hierarchy);
        w_2b(&w, ticket->digest.b, ticket->digest.size);
        return w_end(&w, ret_size);
}

mb_err mb_tpm2_build_policy_get_digest(uint8_t *buf, size_t cap, uint32_t session, size_t *ret_size) {
        wr w = w_begin(buf, cap, MB_TPM2_ST_NO_SESSIONS, CC_POLICY_GET_DIGEST);

        w_u32(&w, session);
        return w_end(&w, ret_size);
}

/* A response whose parameters are one TPM2B_DIGEST. */
static mb_err parse_one_digest(const uint8_t *rsp_buf, size_t n, bool sessions, uint32_t *ret_rc,
                               mb_tpm2_digest *ret_digest) {
        rsp s;
        mb_tpm2_digest d;
        mb_err e = rsp_open(rsp_buf, n, false, sessions, &s);

        if (e)
                return e;
        if (s.rc == MB_TPM2_RC_SUCCESS) {
                if ((e = r_digest(&s.params, &d)) || (e = r_done(&s.params)))
                        return e;
                *ret_digest = d;
        }
        *ret_rc = s.rc;
        return MB_OK;
}

mb_err mb_tpm2_parse_policy_get_digest(const uint8_t *rsp_buf, size_t n, uint32_t *ret_rc,
                                       mb_tpm2_digest *ret_digest) {
        return parse_one_digest(rsp_buf, n, false, ret_rc, ret_digest);
}

/* ---- keys: LoadExternal, VerifySignature, ReadPublic, Names -------------- */

void mb_tpm2_ecc_public(const uint8_t x[MB_TPM2_P256_SIZE], const uint8_t y[MB_TPM2_P256_SIZE],
                        uint8_t ret_pub[MB_TPM2_ECC_PUBLIC_SIZE]) {
        wr w = { .buf = ret_pub, .cap = MB_TPM2_ECC_PUBLIC_SIZE };

        w_u16(&w, ALG_ECC);                 /* type */
        w_u16(&w, MB_ALG_SHA256);           /* nameAlg */
        w_u32(&w, OBJ_SIGN | OBJ_USER_WITH_AUTH);
        w_2b(&w, NULL, 0);                  /* authPolicy */
        /* parameters: TPMS_ECC_PARMS (Part 2 §12.2.3.6) */
        w_u16(&w, ALG_NULL);                /* symmetric (TPMT_SYM_DEF_OBJECT) */
        w_u16(&w, ALG_ECDSA);               /* scheme (TPMT_ECC_SCHEME) ... */
        w_u16(&w, MB_ALG_SHA256);           /* ... its hashAlg */
        w_u16(&w, ECC_NIST_P256);           /* curveID */
        w_u16(&w, ALG_NULL);                /* kdf */
        /* unique: TPMS_ECC_POINT (Part 2 §11.2.5.2) */
        w_2b(&w, x, MB_TPM2_P256_SIZE);
        w_2b(&w, y, MB_TPM2_P256_SIZE);
}

mb_err mb_tpm2_object_name(const uint8_t *pub, size_t pub_size, mb_tpm2_name *ret_name) {
        uint16_t alg;
        size_t dsize;
        mb_hash h;

        if (pub_size < 4)
                return MB_ERR_TRUNCATED;
        alg = be16(pub + 2);
        dsize = mb_hash_size(alg);
        if (dsize == 0 || dsize > MB_TPM2_DIGEST_MAX || mb_hash_init(&h, alg) != MB_OK)
                return MB_ERR_UNSUPPORTED;
        mb_hash_update(&h, pub, pub_size);
        ret_name->b[0] = (uint8_t) (alg >> 8);
        ret_name->b[1] = (uint8_t) alg;
        mb_hash_final(&h, ret_name->b + 2);
        ret_name->size = (uint16_t) (2 + dsize);
        return MB_OK;
}

void mb_tpm2_ecc_name(const uint8_t x[MB_TPM2_P256_SIZE], const uint8_t y[MB_TPM2_P256_SIZE],
                      uint8_t ret_name[MB_TPM2_ECC_NAME_SIZE]) {
        uint8_t pub[MB_TPM2_ECC_PUBLIC_SIZE];
        mb_tpm2_name name;

        mb_tpm2_ecc_public(x, y, pub);
        /* nameAlg SHA-256 is always there: this cannot fail. */
        (void) mb_tpm2_object_name(pub, sizeof(pub), &name);
        mb_memcpy(ret_name, name.b, MB_TPM2_ECC_NAME_SIZE);
}

mb_err mb_tpm2_build_load_external(uint8_t *buf, size_t cap, const uint8_t *pub, size_t pub_size,
                                   uint32_t hierarchy, size_t *ret_size) {
        wr w;

        if (pub_size > UINT16_MAX)
                return MB_ERR_INVALID;
        w = w_begin(buf, cap, MB_TPM2_ST_NO_SESSIONS, CC_LOAD_EXTERNAL);
        w_2b(&w, NULL, 0);                  /* inPrivate: TPM2B_SENSITIVE, absent */
        w_2b(&w, pub, pub_size);            /* inPublic: TPM2B_PUBLIC */
        w_u32(&w, hierarchy);
        return w_end(&w, ret_size);
}

mb_err mb_tpm2_parse_load_external(const uint8_t *rsp_buf, size_t n, uint32_t *ret_rc, uint32_t *ret_handle,
                                   mb_tpm2_name *ret_name) {
        rsp s;
        const uint8_t *p;
        size_t len;
        mb_err e = rsp_open(rsp_buf, n, true, false, &s);

        if (e)
                return e;
        if (s.rc == MB_TPM2_RC_SUCCESS) {
                if ((e = r_2b(&s.params, MB_TPM2_NAME_MAX, &p, &len)) || (e = r_done(&s.params)))
                        return e;
                /* A loaded object is transient (Part 2 §7.2, TPM_HT_TRANSIENT). */
                if (s.handle >> 24 != MB_TPM2_HT_TRANSIENT)
                        return MB_ERR_INVALID;
                *ret_handle = s.handle;
                ret_name->size = (uint16_t) len;
                mb_memcpy(ret_name->b, p, len);
        }
        *ret_rc = s.rc;
        return MB_OK;
}

mb_err mb_tpm2_build_verify_signature(uint8_t *buf, size_t cap, uint32_t key, const uint8_t *digest,
                                      size_t digest_size, const uint8_t *r, size_t r_size, const uint8_t *s,
                                      size_t s_size, size_t *ret_size) {
        wr w;

        if (digest_size != mb_hash_size(MB_ALG_SHA256) || r_size == 0 || r_size > MB_TPM2_P256_SIZE ||
            s_size == 0 || s_size > MB_TPM2_P256_SIZE)
                return MB_ERR_INVALID;
        w = w_begin(buf, cap, MB_TPM2_ST_NO_SESSIONS, CC_VERIFY_SIGNATURE);
        w_u32(&w, key);
        w_2b(&w, digest, digest_size);
        /* TPMT_SIGNATURE (Part 2 §11.3.4): sigAlg, then TPMS_SIGNATURE_ECDSA
         * (§11.3.2: hash, signatureR, signatureS). */
        w_u16(&w, ALG_ECDSA);
        w_u16(&w, MB_ALG_SHA256);
        w_2b(&w, r, r_size);
        w_2b(&w, s, s_size);
        return w_end(&w, ret_size);
}

mb_err mb_tpm2_parse_verify_signature(const uint8_t *rsp_buf, size_t n, uint32_t *ret_rc, mb_tpm2_ticket *ret_ticket) {
        rsp s;
        uint16_t tag;
        mb_tpm2_ticket t;
        mb_err e = rsp_open(rsp_buf, n, false, false, &s);

        if (e)
                return e;
        if (s.rc == MB_TPM2_RC_SUCCESS) {
                if ((e = r_u16(&s.params, &tag)) || (e = r_u32(&s.params, &t.hierarchy)) ||
                    (e = r_digest(&s.params, &t.digest)) || (e = r_done(&s.params)))
                        return e;
                if (tag != MB_TPM2_ST_VERIFIED)
                        return MB_ERR_INVALID;
                *ret_ticket = t;
        }
        *ret_rc = s.rc;
        return MB_OK;
}

mb_err mb_tpm2_build_read_public(uint8_t *buf, size_t cap, uint32_t object, size_t *ret_size) {
        wr w = w_begin(buf, cap, MB_TPM2_ST_NO_SESSIONS, CC_READ_PUBLIC);

        w_u32(&w, object);
        return w_end(&w, ret_size);
}

mb_err mb_tpm2_parse_read_public(const uint8_t *rsp_buf, size_t n, uint32_t *ret_rc, const uint8_t **ret_pub,
                                 size_t *ret_pub_size, const uint8_t **ret_name, size_t *ret_name_size) {
        rsp s;
        const uint8_t *pub, *name, *qname;
        size_t pub_size, name_size, qname_size;
        mb_err e = rsp_open(rsp_buf, n, false, false, &s);

        if (e)
                return e;
        if (s.rc == MB_TPM2_RC_SUCCESS) {
                /* outPublic (TPM2B_PUBLIC), name, qualifiedName (TPM2B_NAME). */
                if ((e = r_2b(&s.params, UINT16_MAX, &pub, &pub_size)) ||
                    (e = r_2b(&s.params, MB_TPM2_NAME_MAX, &name, &name_size)) ||
                    (e = r_2b(&s.params, MB_TPM2_NAME_MAX, &qname, &qname_size)) || (e = r_done(&s.params)))
                        return e;
                /* type, nameAlg, objectAttributes at least (Part 2 §12.2.4). */
                if (pub_size < 8)
                        return MB_ERR_INVALID;
                *ret_pub = pub;
                *ret_pub_size = pub_size;
                *ret_name = name;
                *ret_name_size = name_size;
        }
        *ret_rc = s.rc;
        return MB_OK;
}

/* ---- TPM2_HMAC (Part 3 §15.5) and TPM2_FlushContext (§28.4) ------------- */

mb_err mb_tpm2_build_hmac(uint8_t *buf, size_t cap, uint32_t key, uint32_t session, uint8_t attrs,
                          const uint8_t *data, size_t data_size, uint16_t hash_alg, size_t *ret_size) {
        wr w;

        if (data_size > MB_TPM2_MAX_BUFFER)
                return MB_ERR_INVALID;
        w = w_begin(buf, cap, MB_TPM2_ST_SESSIONS, CC_HMAC);
        w_u32(&w, key);
        w_auth(&w, session, attrs, NULL, 0);
        w_2b(&w, data, data_size);          /* buffer: TPM2B_MAX_BUFFER */
        w_u16(&w, hash_alg);
        return w_end(&w, ret_size);
}

mb_err mb_tpm2_parse_hmac(const uint8_t *rsp_buf, size_t n, uint16_t hash_alg, uint32_t *ret_rc,
                          mb_tpm2_digest *ret_hmac) {
        uint32_t rc;
        mb_tpm2_digest d;
        size_t want = mb_hash_size(hash_alg);
        mb_err e;

        if (want == 0)
                return MB_ERR_UNSUPPORTED;
        if ((e = parse_one_digest(rsp_buf, n, true, &rc, &d)))
                return e;
        if (rc == MB_TPM2_RC_SUCCESS) {
                if (d.size != want)
                        return MB_ERR_INVALID;
                *ret_hmac = d;
        }
        *ret_rc = rc;
        return MB_OK;
}

mb_err mb_tpm2_build_flush_context(uint8_t *buf, size_t cap, uint32_t handle, size_t *ret_size) {
        wr w = w_begin(buf, cap, MB_TPM2_ST_NO_SESSIONS, CC_FLUSH_CONTEXT);

        w_u32(&w, handle);                  /* flushHandle is a parameter, not a handle */
        return w_end(&w, ret_size);
}

/* ---- response codes (Part 2 §6.6) ----------------------------------------- */

uint32_t mb_tpm2_rc_base(uint32_t rc) {
        return (rc & RC_FMT1) ? (RC_FMT1 | (rc & 0x3Fu)) : rc;
}

void mb_tpm2_rc_where(uint32_t rc, char *ret_kind, unsigned *ret_index) {
        unsigned num = (rc >> 8) & 0xFu;

        *ret_kind = '\0';
        *ret_index = 0;
        if (!(rc & RC_FMT1) || num == 0)
                return;
        if (rc & RC_P)
                *ret_kind = 'P', *ret_index = num;
        else if (num & 0x8u)
                *ret_kind = 'S', *ret_index = num & 0x7u;
        else
                *ret_kind = 'H', *ret_index = num;
}

static const struct rc_desc {
        uint32_t rc;
        const char *name, *text;
} rc_table[] = {
        { MB_TPM2_RC_SUCCESS, "SUCCESS", "success" },
        { MB_TPM2_RC_BAD_TAG, "BAD_TAG", "the TPM does not understand the command's tag" },
        { MB_TPM2_RC_INITIALIZE, "INITIALIZE", "the TPM has not been started (TPM2_Startup)" },
        { MB_TPM2_RC_FAILURE, "FAILURE", "the TPM is in failure mode" },
        { 0x103, "SEQUENCE", "improper use of a sequence handle" },
        { 0x120, "DISABLED", "the command is disabled" },
        { 0x124, "AUTH_TYPE", "the authorization handle is not correct for the command" },
        { 0x125, "AUTH_MISSING", "the command requires an authorization session" },
        { MB_TPM2_RC_POLICY, "POLICY", "the policy session is in the wrong state" },
        { MB_TPM2_RC_PCR, "PCR", "the PCR check failed" },
        { MB_TPM2_RC_PCR_CHANGED, "PCR_CHANGED", "the PCRs changed since the policy checked them" },
        { 0x12E, "TOO_MANY_CONTEXTS", "the TPM has no room for another session" },
        { 0x12F, "AUTH_UNAVAILABLE", "the authValue or authPolicy is not available" },
        { 0x142, "COMMAND_SIZE", "the command size is wrong" },
        { 0x143, "COMMAND_CODE", "the TPM does not implement the command" },
        { 0x144, "AUTHSIZE", "the authorization area size is wrong" },
        { 0x148, "NV_LOCKED", "the NV index is locked" },
        { 0x149, "NV_AUTHORIZATION", "the NV index does not allow this authorization" },
        { 0x14A, "NV_UNINITIALIZED", "the NV index has never been written" },
        { 0x081, "ASYMMETRIC", "the asymmetric algorithm is not supported or not correct" },
        { 0x082, "ATTRIBUTES", "inconsistent attributes" },
        { 0x083, "HASH", "the hash algorithm is not supported or not appropriate" },
        { MB_TPM2_RC_VALUE, "VALUE", "a value is out of range or not correct for the context" },
        { 0x085, "HIERARCHY", "the hierarchy is not enabled or not correct for the use" },
        { 0x08A, "TYPE", "the object type is not correct" },
        { MB_TPM2_RC_HANDLE, "HANDLE", "the handle is not correct for the use" },
        { 0x08D, "RANGE", "a value is outside its range" },
        { MB_TPM2_RC_AUTH_FAIL, "AUTH_FAIL", "the authorization (password or HMAC) check failed" },
        { 0x08F, "NONCE", "the nonce size is invalid" },
        { 0x092, "SCHEME", "the scheme is not supported or not correct" },
        { 0x095, "SIZE", "a structure's size is wrong" },
        { 0x096, "SYMMETRIC", "the symmetric algorithm is not supported or not correct" },
        { 0x097, "TAG", "an incorrect structure tag" },
        { 0x098, "SELECTOR", "the union selector is incorrect" },
        { 0x09A, "INSUFFICIENT", "the TPM ran out of input while unmarshalling" },
        { MB_TPM2_RC_SIGNATURE, "SIGNATURE", "the signature is not valid" },
        { 0x09C, "KEY", "the key fields are not compatible with the selected use" },
        { MB_TPM2_RC_POLICY_FAIL, "POLICY_FAIL", "the policy session does not satisfy the object's policy" },
        { 0x09F, "INTEGRITY", "the integrity check failed" },
        { 0x0A0, "TICKET", "the ticket is not valid" },
        { MB_TPM2_RC_BAD_AUTH, "BAD_AUTH", "authorization failure without dictionary-attack implications" },
        { 0x0A3, "EXPIRED", "the policy has expired" },
        { 0x0A4, "POLICY_CC", "the policy was made for another command" },
        { 0x0A6, "CURVE", "the curve is not supported" },
        { 0x0A7, "ECC_POINT", "the point is not on the curve" },
        { 0x902, "OBJECT_MEMORY", "the TPM has no room for another object" },
        { 0x903, "SESSION_MEMORY", "the TPM has no room for another session" },
        { 0x904, "MEMORY", "the TPM is out of memory" },
        { 0x908, "YIELDED", "the TPM yielded; retry" },
        { 0x909, "CANCELED", "the command was canceled" },
        { 0x90A, "TESTING", "the TPM is self-testing" },
        { 0x920, "NV_RATE", "the NV is rate-limited; retry" },
        { MB_TPM2_RC_LOCKOUT, "LOCKOUT", "the TPM is in dictionary-attack lockout" },
        { MB_TPM2_RC_RETRY, "RETRY", "the TPM asks for the command again" },
        { 0x923, "NV_UNAVAILABLE", "the NV is not available" },
};

static const struct rc_desc *rc_find(uint32_t rc) {
        uint32_t base = mb_tpm2_rc_base(rc);

        for (size_t i = 0; i < MB_ARRAY_SIZE(rc_table); i++)
                if (rc_table[i].rc == base)
                        return &rc_table[i];
        return NULL;
}

const char *mb_tpm2_rc_name(uint32_t rc) {
        const struct rc_desc *d = rc_find(rc);
        return d ? d->name : NULL;
}

const char *mb_tpm2_rc_text(uint32_t rc) {
        const struct rc_desc *d = rc_find(rc);
        return d ? d->text : NULL;
}
