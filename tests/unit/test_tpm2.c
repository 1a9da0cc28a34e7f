/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * src/tpm2.c: every builder's bytes against the same command marshalled by
 * tpm2-tss's libtss2-mu (an independent marshaller, type by type), one
 * command against bytes written out by hand from Part 3; every builder
 * refuses every buffer too small without writing past it; every parser
 * accepts a response marshalled by libtss2-mu and refuses its truncations,
 * a size field larger or smaller than the bytes, wrong tags, trailing
 * bytes, over-long TPM2Bs and error codes with a body, leaving its outputs
 * untouched; the Name of the policy key against OpenSSL's SHA-256 of
 * libtss2-mu's TPMT_PUBLIC; response-code names.
 */
#include <openssl/sha.h>
#include <tss2/tss2_mu.h>
#include "testlib.h"
#include "mb/tpm2.h"
#include "mb/policy.h"
#include "mb/sha.h"

#define SESSION 0x03000000u
#define KEY     0x81000010u
#define NVIDX   0x01804D53u

/* ---- expected commands, marshalled by libtss2-mu ----------------------- */

typedef struct mu {
        uint8_t b[MB_TPM2_MAX_COMMAND];
        size_t off;
        int bad;
} mu;

#define MU(call) do { if ((call) != TSS2_RC_SUCCESS) m->bad = 1; } while (0)

static void mu_header(mu *m, TPM2_ST tag, TPM2_CC cc) {
        m->off = 0;
        m->bad = 0;
        MU(Tss2_MU_TPM2_ST_Marshal(tag, m->b, sizeof(m->b), &m->off));
        MU(Tss2_MU_UINT32_Marshal(0, m->b, sizeof(m->b), &m->off));
        MU(Tss2_MU_TPM2_CC_Marshal(cc, m->b, sizeof(m->b), &m->off));
}
static void mu_u32(mu *m, uint32_t v) { MU(Tss2_MU_UINT32_Marshal(v, m->b, sizeof(m->b), &m->off)); }
static void mu_u16(mu *m, uint16_t v) { MU(Tss2_MU_UINT16_Marshal(v, m->b, sizeof(m->b), &m->off)); }
static void mu_digest(mu *m, const uint8_t *p, size_t n) {
        TPM2B_DIGEST d = { .size = (UINT16) n };
        memcpy(d.buffer, p, n);
        MU(Tss2_MU_TPM2B_DIGEST_Marshal(&d, m->b, sizeof(m->b), &m->off));
}
/* One TPMS_AUTH_COMMAND behind its authorizationSize. */
static void mu_auth(mu *m, uint32_t session, uint8_t attrs, const uint8_t *hmac, size_t n) {
        TPMS_AUTH_COMMAND a = { .sessionHandle = session, .sessionAttributes = attrs };
        uint8_t tmp[256];
        size_t len = 0;

        a.hmac.size = (UINT16) n;
        if (n)
                memcpy(a.hmac.buffer, hmac, n);
        MU(Tss2_MU_TPMS_AUTH_COMMAND_Marshal(&a, tmp, sizeof(tmp), &len));
        mu_u32(m, (uint32_t) len);
        memcpy(m->b + m->off, tmp, len);
        m->off += len;
}
/* commandSize patched, then compared with what the builder wrote. */
static int mu_equals(mu *m, const uint8_t *got, size_t got_size) {
        size_t o = 2;
        MU(Tss2_MU_UINT32_Marshal((UINT32) m->off, m->b, sizeof(m->b), &o));
        if (m->bad || got_size != m->off || memcmp(got, m->b, m->off) != 0) {
                fprintf(stderr, "  builder wrote %zu bytes, libtss2-mu %zu:\n  ", got_size, m->off);
                for (size_t i = 0; i < got_size; i++)
                        fprintf(stderr, "%02x", got[i]);
                fprintf(stderr, "\n  ");
                for (size_t i = 0; i < m->off; i++)
                        fprintf(stderr, "%02x", m->b[i]);
                fprintf(stderr, "\n");
                return 0;
        }
        return 1;
}

static uint8_t X[32], Y[32], R[32], S[32], D32[32], NONCE[32];

static void fill(void) {
        for (int i = 0; i < 32; i++) {
                X[i] = (uint8_t) (0x10 + i);
                Y[i] = (uint8_t) (0x80 + i);
                R[i] = (uint8_t) (0xa0 ^ i);
                S[i] = (uint8_t) (0x50 ^ (i * 7));
                D32[i] = (uint8_t) (i * 13);
                NONCE[i] = (uint8_t) (0xc0 + i);
        }
}

/* The policy key's TPMT_PUBLIC as tpm2-tss marshals it from its fields. */
static TPMT_PUBLIC mu_ecc_public(void) {
        TPMT_PUBLIC p = {
                .type = TPM2_ALG_ECC,
                .nameAlg = TPM2_ALG_SHA256,
                .objectAttributes = TPMA_OBJECT_SIGN_ENCRYPT | TPMA_OBJECT_USERWITHAUTH,
                .parameters.eccDetail = {
                        .symmetric.algorithm = TPM2_ALG_NULL,
                        .scheme = { .scheme = TPM2_ALG_ECDSA, .details.ecdsa.hashAlg = TPM2_ALG_SHA256 },
                        .curveID = TPM2_ECC_NIST_P256,
                        .kdf.scheme = TPM2_ALG_NULL,
                },
        };
        p.unique.ecc.x.size = 32;
        memcpy(p.unique.ecc.x.buffer, X, 32);
        p.unique.ecc.y.size = 32;
        memcpy(p.unique.ecc.y.buffer, Y, 32);
        return p;
}

/* ---- every builder, once with a big buffer, then with every smaller one -- */

typedef mb_err (*build_fn)(uint8_t *buf, size_t cap, size_t *ret_size);

static mb_tpm2_ticket TICKET;
static uint8_t KEY_NAME[MB_TPM2_ECC_NAME_SIZE];

static mb_err b_start(uint8_t *b, size_t c, size_t *n) { return mb_tpm2_build_start_auth_session(b, c, NONCE, 32, n); }
static mb_err b_pcr(uint8_t *b, size_t c, size_t *n) {
        return mb_tpm2_build_policy_pcr(b, c, SESSION, MB_ALG_SHA256, (1u << 7) | (1u << 12) | (1u << 23), D32, 32, n);
}
static mb_err b_pcr_empty(uint8_t *b, size_t c, size_t *n) {
        return mb_tpm2_build_policy_pcr(b, c, SESSION, MB_ALG_SHA1, 1u << 0, NULL, 0, n);
}
static uint8_t OR_LIST[8 * 32];
static mb_err b_or(uint8_t *b, size_t c, size_t *n) { return mb_tpm2_build_policy_or(b, c, SESSION, OR_LIST, 8, 32, n); }
static mb_err b_nv(uint8_t *b, size_t c, size_t *n) {
        static const uint8_t epoch[8] = { 0, 0, 0, 0, 0, 0, 0, 5 };
        return mb_tpm2_build_policy_nv(b, c, SESSION, NVIDX, (const uint8_t *) "pw", 2, epoch, 8, 0,
                                       MB_TPM_EO_UNSIGNED_LE, n);
}
static mb_err b_load(uint8_t *b, size_t c, size_t *n) {
        uint8_t pub[MB_TPM2_ECC_PUBLIC_SIZE];
        mb_tpm2_ecc_public(X, Y, pub);
        return mb_tpm2_build_load_external(b, c, pub, sizeof(pub), MB_TPM2_RH_OWNER, n);
}
static mb_err b_verify(uint8_t *b, size_t c, size_t *n) {
        return mb_tpm2_build_verify_signature(b, c, 0x80000001u, D32, 32, R, 32, S, 31, n);
}
static mb_err b_authorize(uint8_t *b, size_t c, size_t *n) {
        return mb_tpm2_build_policy_authorize(b, c, SESSION, D32, 32, NULL, 0, KEY_NAME, sizeof(KEY_NAME), &TICKET, n);
}
static mb_err b_hmac(uint8_t *b, size_t c, size_t *n) {
        static const uint8_t step[8] = { 0, 0, 0, 0, 0x03, 0x7c, 0x1b, 0x5a };
        return mb_tpm2_build_hmac(b, c, KEY, SESSION, 0, step, sizeof(step), MB_ALG_SHA1, n);
}
static mb_err b_flush(uint8_t *b, size_t c, size_t *n) { return mb_tpm2_build_flush_context(b, c, SESSION, n); }
static mb_err b_read(uint8_t *b, size_t c, size_t *n) { return mb_tpm2_build_read_public(b, c, KEY, n); }
static mb_err b_digest(uint8_t *b, size_t c, size_t *n) { return mb_tpm2_build_policy_get_digest(b, c, SESSION, n); }

/* What libtss2-mu makes of the same command. */
static void expect(build_fn f, mu *m) {
        if (f == b_start) {
                TPM2B_NONCE nonce = { .size = 32 };
                TPM2B_ENCRYPTED_SECRET salt = { .size = 0 };
                TPMT_SYM_DEF sym = { .algorithm = TPM2_ALG_NULL };
                memcpy(nonce.buffer, NONCE, 32);
                mu_header(m, TPM2_ST_NO_SESSIONS, TPM2_CC_StartAuthSession);
                MU(Tss2_MU_TPM2_HANDLE_Marshal(TPM2_RH_NULL, m->b, sizeof(m->b), &m->off));
                MU(Tss2_MU_TPM2_HANDLE_Marshal(TPM2_RH_NULL, m->b, sizeof(m->b), &m->off));
                MU(Tss2_MU_TPM2B_NONCE_Marshal(&nonce, m->b, sizeof(m->b), &m->off));
                MU(Tss2_MU_TPM2B_ENCRYPTED_SECRET_Marshal(&salt, m->b, sizeof(m->b), &m->off));
                MU(Tss2_MU_TPM2_SE_Marshal(TPM2_SE_POLICY, m->b, sizeof(m->b), &m->off));
                MU(Tss2_MU_TPMT_SYM_DEF_Marshal(&sym, m->b, sizeof(m->b), &m->off));
                MU(Tss2_MU_TPMI_ALG_HASH_Marshal(TPM2_ALG_SHA256, m->b, sizeof(m->b), &m->off));
        } else if (f == b_pcr || f == b_pcr_empty) {
                TPML_PCR_SELECTION sel = { .count = 1 };
                int full = f == b_pcr;
                sel.pcrSelections[0].hash = full ? TPM2_ALG_SHA256 : TPM2_ALG_SHA1;
                sel.pcrSelections[0].sizeofSelect = 3;
                sel.pcrSelections[0].pcrSelect[0] = full ? 0x80 : 0x01;
                sel.pcrSelections[0].pcrSelect[1] = full ? 0x10 : 0;
                sel.pcrSelections[0].pcrSelect[2] = full ? 0x80 : 0;
                mu_header(m, TPM2_ST_NO_SESSIONS, TPM2_CC_PolicyPCR);
                mu_u32(m, SESSION);
                mu_digest(m, D32, full ? 32 : 0);
                MU(Tss2_MU_TPML_PCR_SELECTION_Marshal(&sel, m->b, sizeof(m->b), &m->off));
        } else if (f == b_or) {
                TPML_DIGEST l = { .count = 8 };
                for (int i = 0; i < 8; i++) {
                        l.digests[i].size = 32;
                        memcpy(l.digests[i].buffer, OR_LIST + 32 * i, 32);
                }
                mu_header(m, TPM2_ST_NO_SESSIONS, TPM2_CC_PolicyOR);
                mu_u32(m, SESSION);
                MU(Tss2_MU_TPML_DIGEST_Marshal(&l, m->b, sizeof(m->b), &m->off));
        } else if (f == b_nv) {
                TPM2B_OPERAND op = { .size = 8, .buffer = { 0, 0, 0, 0, 0, 0, 0, 5 } };
                mu_header(m, TPM2_ST_SESSIONS, TPM2_CC_PolicyNV);
                mu_u32(m, NVIDX);
                mu_u32(m, NVIDX);
                mu_u32(m, SESSION);
                mu_auth(m, TPM2_RS_PW, TPMA_SESSION_CONTINUESESSION, (const uint8_t *) "pw", 2);
                MU(Tss2_MU_TPM2B_OPERAND_Marshal(&op, m->b, sizeof(m->b), &m->off));
                mu_u16(m, 0);
                mu_u16(m, TPM2_EO_UNSIGNED_LE);
        } else if (f == b_load) {
                TPM2B_PUBLIC pub = { .publicArea = mu_ecc_public() };
                mu_header(m, TPM2_ST_NO_SESSIONS, TPM2_CC_LoadExternal);
                mu_u16(m, 0);           /* inPrivate absent: an empty TPM2B_SENSITIVE */
                MU(Tss2_MU_TPM2B_PUBLIC_Marshal(&pub, m->b, sizeof(m->b), &m->off));
                mu_u32(m, TPM2_RH_OWNER);
        } else if (f == b_verify) {
                TPMT_SIGNATURE sig = { .sigAlg = TPM2_ALG_ECDSA };
                sig.signature.ecdsa.hash = TPM2_ALG_SHA256;
                sig.signature.ecdsa.signatureR.size = 32;
                memcpy(sig.signature.ecdsa.signatureR.buffer, R, 32);
                sig.signature.ecdsa.signatureS.size = 31;
                memcpy(sig.signature.ecdsa.signatureS.buffer, S, 31);
                mu_header(m, TPM2_ST_NO_SESSIONS, TPM2_CC_VerifySignature);
                mu_u32(m, 0x80000001u);
                mu_digest(m, D32, 32);
                MU(Tss2_MU_TPMT_SIGNATURE_Marshal(&sig, m->b, sizeof(m->b), &m->off));
        } else if (f == b_authorize) {
                TPM2B_NONCE ref = { .size = 0 };
                TPM2B_NAME name = { .size = sizeof(KEY_NAME) };
                TPMT_TK_VERIFIED tk = { .tag = TPM2_ST_VERIFIED, .hierarchy = TICKET.hierarchy };
                memcpy(name.name, KEY_NAME, sizeof(KEY_NAME));
                tk.digest.size = TICKET.digest.size;
                memcpy(tk.digest.buffer, TICKET.digest.b, TICKET.digest.size);
                mu_header(m, TPM2_ST_NO_SESSIONS, TPM2_CC_PolicyAuthorize);
                mu_u32(m, SESSION);
                mu_digest(m, D32, 32);
                MU(Tss2_MU_TPM2B_NONCE_Marshal(&ref, m->b, sizeof(m->b), &m->off));
                MU(Tss2_MU_TPM2B_NAME_Marshal(&name, m->b, sizeof(m->b), &m->off));
                MU(Tss2_MU_TPMT_TK_VERIFIED_Marshal(&tk, m->b, sizeof(m->b), &m->off));
        } else if (f == b_hmac) {
                TPM2B_MAX_BUFFER data = { .size = 8, .buffer = { 0, 0, 0, 0, 0x03, 0x7c, 0x1b, 0x5a } };
                mu_header(m, TPM2_ST_SESSIONS, TPM2_CC_HMAC);
                mu_u32(m, KEY);
                mu_auth(m, SESSION, 0, NULL, 0);
                MU(Tss2_MU_TPM2B_MAX_BUFFER_Marshal(&data, m->b, sizeof(m->b), &m->off));
                MU(Tss2_MU_TPMI_ALG_HASH_Marshal(TPM2_ALG_SHA1, m->b, sizeof(m->b), &m->off));
        } else if (f == b_flush) {
                mu_header(m, TPM2_ST_NO_SESSIONS, TPM2_CC_FlushContext);
                mu_u32(m, SESSION);
        } else if (f == b_read) {
                mu_header(m, TPM2_ST_NO_SESSIONS, TPM2_CC_ReadPublic);
                mu_u32(m, KEY);
        } else {
                mu_header(m, TPM2_ST_NO_SESSIONS, TPM2_CC_PolicyGetDigest);
                mu_u32(m, SESSION);
        }
}

static const struct { const char *name; build_fn f; } builders[] = {
        { "StartAuthSession", b_start }, { "PolicyPCR", b_pcr }, { "PolicyPCR (empty digest)", b_pcr_empty },
        { "PolicyOR", b_or }, { "PolicyNV", b_nv }, { "LoadExternal", b_load }, { "VerifySignature", b_verify },
        { "PolicyAuthorize", b_authorize }, { "HMAC", b_hmac }, { "FlushContext", b_flush },
        { "ReadPublic", b_read }, { "PolicyGetDigest", b_digest },
};

static void setup(void) {
        fill();
        for (size_t i = 0; i < sizeof(OR_LIST); i++)
                OR_LIST[i] = (uint8_t) (i * 31 + 7);
        TICKET.hierarchy = MB_TPM2_RH_OWNER;
        TICKET.digest.size = 32;
        memcpy(TICKET.digest.b, NONCE, 32);
        mb_tpm2_ecc_name(X, Y, KEY_NAME);
}

TEST(builders_match_libtss2_mu) {
        for (size_t i = 0; i < MB_ARRAY_SIZE(builders); i++) {
                uint8_t buf[MB_TPM2_MAX_COMMAND];
                size_t n = 0;
                mu m;

                CHECK_EQ_INT(builders[i].f(buf, sizeof(buf), &n), MB_OK);
                expect(builders[i].f, &m);
                if (!mu_equals(&m, buf, n)) {
                        fprintf(stderr, "  ^ %s\n", builders[i].name);
                        CHECK(!"bytes differ from libtss2-mu");
                }
        }
}

/* Part 3 §28.4, written out by hand: TPM_ST_NO_SESSIONS, 14 bytes,
 * TPM_CC_FlushContext, flushHandle. And §23.7's PolicyPCR of PCR 7 with an
 * empty digest. */
TEST(builders_match_the_spec_by_hand) {
        static const uint8_t flush[] = { 0x80, 0x01, 0, 0, 0, 14, 0, 0, 0x01, 0x65, 0x03, 0, 0, 0 };
        static const uint8_t pcr[] = { 0x80, 0x01, 0, 0, 0, 26, 0, 0, 0x01, 0x7f, 0x03, 0, 0, 0,
                                       0, 0, 0, 0, 0, 1, 0, 0x0b, 3, 0x80, 0, 0 };
        uint8_t buf[64];
        size_t n = 0;

        CHECK_EQ_INT(mb_tpm2_build_flush_context(buf, sizeof(buf), SESSION, &n), MB_OK);
        CHECK(n == sizeof(flush) && memcmp(buf, flush, n) == 0);
        CHECK_EQ_INT(mb_tpm2_build_policy_pcr(buf, sizeof(buf), SESSION, MB_ALG_SHA256, 1u << 7, NULL, 0, &n), MB_OK);
        CHECK(n == sizeof(pcr) && memcmp(buf, pcr, n) == 0);
}

/* Every capacity below the command's size: NOSPACE, nothing written past
 * the capacity (a heap block of exactly that size, so ASan would see it),
 * *ret_size untouched. */
TEST(builders_never_overflow) {
        for (size_t i = 0; i < MB_ARRAY_SIZE(builders); i++) {
                uint8_t full[MB_TPM2_MAX_COMMAND];
                size_t need = 0;

                CHECK_EQ_INT(builders[i].f(full, sizeof(full), &need), MB_OK);
                for (size_t cap = 0; cap <= need; cap++) {
                        uint8_t *b = malloc(cap ? cap : 1);
                        size_t n = 12345;
                        mb_err e = builders[i].f(cap ? b : NULL, cap, &n);
                        if (cap < need) {
                                CHECK_EQ_INT(e, MB_ERR_NOSPACE);
                                CHECK_EQ_INT(n, 12345);
                        } else {
                                CHECK_EQ_INT(e, MB_OK);
                                CHECK(n == need && memcmp(b, full, need) == 0);
                        }
                        free(b);
                }
        }
}

TEST(builders_refuse_what_the_tpm_would) {
        uint8_t buf[MB_TPM2_MAX_COMMAND * 2], big[MB_TPM2_MAX_BUFFER + 1] = { 0 };
        size_t n = 777;

        CHECK_EQ_INT(mb_tpm2_build_start_auth_session(buf, sizeof(buf), NONCE, 15, &n), MB_ERR_INVALID);
        CHECK_EQ_INT(mb_tpm2_build_start_auth_session(buf, sizeof(buf), big, 33, &n), MB_ERR_INVALID);
        CHECK_EQ_INT(mb_tpm2_build_start_auth_session(buf, sizeof(buf), NONCE, 16, &n), MB_OK);
        n = 777;
        CHECK_EQ_INT(mb_tpm2_build_policy_or(buf, sizeof(buf), SESSION, OR_LIST, 1, 32, &n), MB_ERR_INVALID);
        CHECK_EQ_INT(mb_tpm2_build_policy_or(buf, sizeof(buf), SESSION, big, 9, 32, &n), MB_ERR_INVALID);
        CHECK_EQ_INT(mb_tpm2_build_policy_or(buf, sizeof(buf), SESSION, big, 2, 65, &n), MB_ERR_INVALID);
        CHECK_EQ_INT(mb_tpm2_build_policy_pcr(buf, sizeof(buf), SESSION, MB_ALG_SHA256, 1u << 24, NULL, 0, &n),
                     MB_ERR_INVALID);
        CHECK_EQ_INT(mb_tpm2_build_policy_pcr(buf, sizeof(buf), SESSION, MB_ALG_SHA256, 1, big, 65, &n),
                     MB_ERR_INVALID);
        CHECK_EQ_INT(mb_tpm2_build_hmac(buf, sizeof(buf), KEY, SESSION, 0, big, sizeof(big), MB_ALG_SHA1, &n),
                     MB_ERR_INVALID);
        CHECK_EQ_INT(mb_tpm2_build_verify_signature(buf, sizeof(buf), 1, D32, 31, R, 32, S, 32, &n), MB_ERR_INVALID);
        CHECK_EQ_INT(mb_tpm2_build_verify_signature(buf, sizeof(buf), 1, D32, 32, big, 33, S, 32, &n), MB_ERR_INVALID);
        CHECK_EQ_INT(mb_tpm2_build_verify_signature(buf, sizeof(buf), 1, D32, 32, R, 32, S, 0, &n), MB_ERR_INVALID);
        CHECK_EQ_INT(mb_tpm2_build_policy_nv(buf, sizeof(buf), SESSION, NVIDX, big, 65, NULL, 0, 0, 0, &n),
                     MB_ERR_INVALID);
        CHECK_EQ_INT(n, 777);
        /* The largest HMAC is within MB_TPM2_MAX_COMMAND. */
        CHECK_EQ_INT(mb_tpm2_build_hmac(buf, MB_TPM2_MAX_COMMAND, KEY, SESSION, 0, big, MB_TPM2_MAX_BUFFER,
                                        MB_ALG_SHA1, &n), MB_OK);
}

/* The policy key's Name: nameAlg || SHA-256 of libtss2-mu's TPMT_PUBLIC. */
TEST(ecc_public_and_name) {
        TPMT_PUBLIC p = mu_ecc_public();
        uint8_t mu_pub[512], pub[MB_TPM2_ECC_PUBLIC_SIZE], name[MB_TPM2_ECC_NAME_SIZE], want[34] = { 0x00, 0x0b };
        size_t len = 0;
        mb_tpm2_name any;

        CHECK(Tss2_MU_TPMT_PUBLIC_Marshal(&p, mu_pub, sizeof(mu_pub), &len) == TSS2_RC_SUCCESS);
        mb_tpm2_ecc_public(X, Y, pub);
        CHECK(len == sizeof(pub) && memcmp(pub, mu_pub, len) == 0);
        SHA256(mu_pub, len, want + 2);
        mb_tpm2_ecc_name(X, Y, name);
        CHECK(memcmp(name, want, sizeof(want)) == 0);
        CHECK_EQ_INT(mb_tpm2_object_name(pub, sizeof(pub), &any), MB_OK);
        CHECK(any.size == 34 && memcmp(any.b, want, 34) == 0);
        /* A SHA-1 nameAlg gives a SHA-1 Name; an unknown one, none. */
        pub[3] = 0x04;
        CHECK_EQ_INT(mb_tpm2_object_name(pub, sizeof(pub), &any), MB_OK);
        CHECK_EQ_INT(any.size, 22);
        pub[3] = 0x99;
        CHECK_EQ_INT(mb_tpm2_object_name(pub, sizeof(pub), &any), MB_ERR_UNSUPPORTED);
        CHECK_EQ_INT(mb_tpm2_object_name(pub, 3, &any), MB_ERR_TRUNCATED);
}

/* ---- parsers ------------------------------------------------------------ */

/* All parsers behind one signature; outputs land in `out`, which the test
 * fills with 0xa5 first to see that a refused response leaves it alone. */
typedef struct outs {
        uint32_t u32;
        mb_tpm2_digest d;
        mb_tpm2_name name;
        mb_tpm2_ticket tk;
        const uint8_t *p1, *p2;
        size_t n1, n2;
} outs;
typedef mb_err (*parse_fn)(const uint8_t *r, size_t n, uint32_t *rc, outs *o);

static mb_err p_start(const uint8_t *r, size_t n, uint32_t *rc, outs *o) {
        return mb_tpm2_parse_start_auth_session(r, n, rc, &o->u32, &o->d);
}
static mb_err p_empty(const uint8_t *r, size_t n, uint32_t *rc, outs *o) { return mb_tpm2_parse_empty(r, n, rc); }
static mb_err p_nv(const uint8_t *r, size_t n, uint32_t *rc, outs *o) { return mb_tpm2_parse_policy_nv(r, n, rc); }
static mb_err p_load(const uint8_t *r, size_t n, uint32_t *rc, outs *o) {
        return mb_tpm2_parse_load_external(r, n, rc, &o->u32, &o->name);
}
static mb_err p_verify(const uint8_t *r, size_t n, uint32_t *rc, outs *o) {
        return mb_tpm2_parse_verify_signature(r, n, rc, &o->tk);
}
static mb_err p_hmac(const uint8_t *r, size_t n, uint32_t *rc, outs *o) {
        return mb_tpm2_parse_hmac(r, n, MB_ALG_SHA1, rc, &o->d);
}
static mb_err p_read(const uint8_t *r, size_t n, uint32_t *rc, outs *o) {
        return mb_tpm2_parse_read_public(r, n, rc, &o->p1, &o->n1, &o->p2, &o->n2);
}
static mb_err p_digest(const uint8_t *r, size_t n, uint32_t *rc, outs *o) {
        return mb_tpm2_parse_policy_get_digest(r, n, rc, &o->d);
}

/* A response marshalled by libtss2-mu: header, then what `body` adds. */
static void mu_rsp_header(mu *m, TPM2_ST tag) {
        m->off = 0;
        m->bad = 0;
        MU(Tss2_MU_TPM2_ST_Marshal(tag, m->b, sizeof(m->b), &m->off));
        MU(Tss2_MU_UINT32_Marshal(0, m->b, sizeof(m->b), &m->off));
        MU(Tss2_MU_UINT32_Marshal(TPM2_RC_SUCCESS, m->b, sizeof(m->b), &m->off));
}
static void mu_rsp_auth(mu *m) {
        TPMS_AUTH_RESPONSE a = { .sessionAttributes = TPMA_SESSION_CONTINUESESSION };
        MU(Tss2_MU_TPMS_AUTH_RESPONSE_Marshal(&a, m->b, sizeof(m->b), &m->off));
}
static void mu_rsp_end(mu *m) {
        size_t o = 2;
        MU(Tss2_MU_UINT32_Marshal((UINT32) m->off, m->b, sizeof(m->b), &o));
}

/* The valid response each parser is given, and where its parameterSize
 * sits for a session response (0: none). */
static size_t valid_rsp(parse_fn f, mu *m, size_t *ret_psize_at) {
        *ret_psize_at = 0;
        if (f == p_start) {
                TPM2B_NONCE nonce = { .size = 32 };
                memcpy(nonce.buffer, NONCE, 32);
                mu_rsp_header(m, TPM2_ST_NO_SESSIONS);
                mu_u32(m, SESSION + 2);
                MU(Tss2_MU_TPM2B_NONCE_Marshal(&nonce, m->b, sizeof(m->b), &m->off));
        } else if (f == p_empty) {
                mu_rsp_header(m, TPM2_ST_NO_SESSIONS);
        } else if (f == p_nv) {
                mu_rsp_header(m, TPM2_ST_SESSIONS);
                *ret_psize_at = m->off;
                mu_u32(m, 0);
                mu_rsp_auth(m);
        } else if (f == p_load) {
                TPM2B_NAME name = { .size = sizeof(KEY_NAME) };
                memcpy(name.name, KEY_NAME, sizeof(KEY_NAME));
                mu_rsp_header(m, TPM2_ST_NO_SESSIONS);
                mu_u32(m, 0x80000001u);
                MU(Tss2_MU_TPM2B_NAME_Marshal(&name, m->b, sizeof(m->b), &m->off));
        } else if (f == p_verify) {
                TPMT_TK_VERIFIED tk = { .tag = TPM2_ST_VERIFIED, .hierarchy = TPM2_RH_OWNER, .digest.size = 32 };
                memcpy(tk.digest.buffer, D32, 32);
                mu_rsp_header(m, TPM2_ST_NO_SESSIONS);
                MU(Tss2_MU_TPMT_TK_VERIFIED_Marshal(&tk, m->b, sizeof(m->b), &m->off));
        } else if (f == p_hmac) {
                mu_rsp_header(m, TPM2_ST_SESSIONS);
                *ret_psize_at = m->off;
                mu_u32(m, 22);
                mu_digest(m, D32, 20);
                mu_rsp_auth(m);
        } else if (f == p_read) {
                TPM2B_PUBLIC pub = { .publicArea = mu_ecc_public() };
                TPM2B_NAME name = { .size = sizeof(KEY_NAME) };
                memcpy(name.name, KEY_NAME, sizeof(KEY_NAME));
                mu_rsp_header(m, TPM2_ST_NO_SESSIONS);
                MU(Tss2_MU_TPM2B_PUBLIC_Marshal(&pub, m->b, sizeof(m->b), &m->off));
                MU(Tss2_MU_TPM2B_NAME_Marshal(&name, m->b, sizeof(m->b), &m->off));
                MU(Tss2_MU_TPM2B_NAME_Marshal(&name, m->b, sizeof(m->b), &m->off));
        } else {
                mu_rsp_header(m, TPM2_ST_NO_SESSIONS);
                mu_digest(m, D32, 32);
        }
        mu_rsp_end(m);
        return m->off;
}

static const struct { const char *name; parse_fn f; } parsers[] = {
        { "StartAuthSession", p_start }, { "empty", p_empty }, { "PolicyNV", p_nv }, { "LoadExternal", p_load },
        { "VerifySignature", p_verify }, { "HMAC", p_hmac }, { "ReadPublic", p_read },
        { "PolicyGetDigest", p_digest },
};

/* Run f on exactly n bytes (a heap copy of that size). */
static mb_err run(parse_fn f, const uint8_t *r, size_t n, uint32_t *rc, outs *o) {
        uint8_t *b = malloc(n ? n : 1);
        memcpy(b, r, n);
        mb_err e = f(b, n, rc, o);
        free(b);
        return e;
}

static void put32(uint8_t *p, uint32_t v) {
        p[0] = (uint8_t) (v >> 24); p[1] = (uint8_t) (v >> 16); p[2] = (uint8_t) (v >> 8); p[3] = (uint8_t) v;
}

/* The response refused and the outputs and rc untouched. */
static void refused(parse_fn f, const uint8_t *r, size_t n, const char *what) {
        outs o, clean;
        uint32_t rc = 0xa5a5a5a5u;
        memset(&o, 0xa5, sizeof(o));
        memset(&clean, 0xa5, sizeof(clean));
        mb_err e = run(f, r, n, &rc, &o);
        if (e == MB_OK || rc != 0xa5a5a5a5u || memcmp(&o, &clean, sizeof(o)) != 0) {
                fprintf(stderr, "  accepted or wrote outputs: %s (n=%zu, e=%d)\n", what, n, (int) e);
                tl_case_failed = 1;
        }
}

TEST(parsers_accept_libtss2_mu_responses) {
        for (size_t i = 0; i < MB_ARRAY_SIZE(parsers); i++) {
                mu m;
                size_t at, n = valid_rsp(parsers[i].f, &m, &at);
                outs o;
                uint32_t rc = 1;

                memset(&o, 0, sizeof(o));
                CHECK(!m.bad);
                CHECK_EQ_INT(run(parsers[i].f, m.b, n, &rc, &o), MB_OK);
                CHECK_EQ_INT(rc, 0);
                if (parsers[i].f == p_start)
                        CHECK(o.u32 == SESSION + 2 && o.d.size == 32 && !memcmp(o.d.b, NONCE, 32));
                if (parsers[i].f == p_load)
                        CHECK(o.u32 == 0x80000001u && o.name.size == 34 && !memcmp(o.name.b, KEY_NAME, 34));
                if (parsers[i].f == p_verify)
                        CHECK(o.tk.hierarchy == MB_TPM2_RH_OWNER && o.tk.digest.size == 32 &&
                              !memcmp(o.tk.digest.b, D32, 32));
                if (parsers[i].f == p_hmac || parsers[i].f == p_digest)
                        CHECK(o.d.size == (parsers[i].f == p_hmac ? 20 : 32) && !memcmp(o.d.b, D32, o.d.size));
        }
        /* ReadPublic's slices are the TPMT_PUBLIC and the Name. */
        {
                mu m;
                size_t at, n = valid_rsp(p_read, &m, &at);
                const uint8_t *pub, *name;
                size_t pub_size, name_size;
                uint8_t want[MB_TPM2_ECC_PUBLIC_SIZE];
                uint32_t rc;

                mb_tpm2_ecc_public(X, Y, want);
                CHECK_EQ_INT(mb_tpm2_parse_read_public(m.b, n, &rc, &pub, &pub_size, &name, &name_size), MB_OK);
                CHECK(pub_size == sizeof(want) && !memcmp(pub, want, sizeof(want)));
                CHECK(name_size == 34 && !memcmp(name, KEY_NAME, 34));
        }
}

TEST(parsers_refuse_truncations_and_sizes) {
        for (size_t i = 0; i < MB_ARRAY_SIZE(parsers); i++) {
                mu m;
                size_t at, n = valid_rsp(parsers[i].f, &m, &at);
                uint8_t b[MB_TPM2_MAX_COMMAND];

                for (size_t k = 0; k < n; k++) {
                        /* cut, size field as sent: larger than the bytes */
                        refused(parsers[i].f, m.b, k, "truncated");
                        /* cut, size field made consistent: the body is short */
                        if (k >= MB_TPM2_HEADER_SIZE) {
                                memcpy(b, m.b, k);
                                put32(b + 2, (uint32_t) k);
                                refused(parsers[i].f, b, k, "truncated, consistent size");
                        }
                }
                /* trailing garbage, with and without the size field counting it */
                memcpy(b, m.b, n);
                b[n] = 0;
                refused(parsers[i].f, b, n + 1, "one byte more than responseSize");
                put32(b + 2, (uint32_t) n + 1);
                refused(parsers[i].f, b, n + 1, "a trailing byte");
                /* size field larger or smaller than the bytes */
                memcpy(b, m.b, n);
                put32(b + 2, (uint32_t) n + 1);
                refused(parsers[i].f, b, n, "responseSize + 1");
                put32(b + 2, 0xffffffffu);
                refused(parsers[i].f, b, n, "responseSize 0xffffffff");
                put32(b + 2, (uint32_t) n - 1);
                refused(parsers[i].f, b, n, "responseSize - 1");
                /* wrong tags */
                static const uint16_t tags[] = { 0x8001, 0x8002, 0x00c4, 0x0000, 0x8022, 0xffff };
                for (size_t t = 0; t < MB_ARRAY_SIZE(tags); t++) {
                        if (tags[t] == ((m.b[0] << 8) | m.b[1]))
                                continue;
                        memcpy(b, m.b, n);
                        b[0] = (uint8_t) (tags[t] >> 8);
                        b[1] = (uint8_t) tags[t];
                        refused(parsers[i].f, b, n, "wrong tag");
                }
                if (at) {
                        /* parameterSize past the end, one short, one long */
                        uint32_t ps = ((uint32_t) m.b[at] << 24) | (m.b[at + 1] << 16) | (m.b[at + 2] << 8) | m.b[at + 3];
                        memcpy(b, m.b, n);
                        put32(b + at, 0xfffffff0u);
                        refused(parsers[i].f, b, n, "parameterSize past the end");
                        put32(b + at, ps + 1);
                        refused(parsers[i].f, b, n, "parameterSize + 1");
                        if (ps) {
                                put32(b + at, ps - 1);
                                refused(parsers[i].f, b, n, "parameterSize - 1");
                        }
                        /* a second authorization */
                        memcpy(b, m.b, n);
                        memcpy(b + n, m.b + n - 5, 5);
                        put32(b + 2, (uint32_t) n + 5);
                        refused(parsers[i].f, b, n + 5, "two authorizations for one session");
                }
        }
}

/* A TPM2B whose size exceeds its type, or a field of the wrong kind. */
TEST(parsers_refuse_bad_fields) {
        mu m;
        size_t at, n;
        uint8_t b[MB_TPM2_MAX_COMMAND];

        /* StartAuthSession: a non-policy session handle; a 65-byte nonce. */
        n = valid_rsp(p_start, &m, &at);
        memcpy(b, m.b, n);
        b[10] = 0x02;
        refused(p_start, b, n, "HMAC session handle");
        {
                uint8_t big[10 + 4 + 2 + 65];
                memcpy(big, m.b, 14);
                put32(big + 2, sizeof(big));
                big[14] = 0;
                big[15] = 65;
                memset(big + 16, 0, 65);
                refused(p_start, big, sizeof(big), "65-byte nonce");
        }
        /* LoadExternal: a persistent handle; a 67-byte name. */
        n = valid_rsp(p_load, &m, &at);
        memcpy(b, m.b, n);
        b[10] = 0x81;
        refused(p_load, b, n, "LoadExternal handle not transient");
        memcpy(b, m.b, n);
        b[15] = 67;
        memset(b + n, 0, 33);
        put32(b + 2, (uint32_t) n + 33);
        refused(p_load, b, n + 33, "67-byte name");
        /* VerifySignature: a ticket with another tag. */
        n = valid_rsp(p_verify, &m, &at);
        memcpy(b, m.b, n);
        b[11] = 0x21;
        refused(p_verify, b, n, "ticket tag TPM_ST_CREATION");
        /* HMAC: a SHA-256-sized answer to a SHA-1 HMAC. */
        mu_rsp_header(&m, TPM2_ST_SESSIONS);
        mu_u32(&m, 34);
        mu_digest(&m, D32, 32);
        mu_rsp_auth(&m);
        mu_rsp_end(&m);
        refused(p_hmac, m.b, m.off, "32-byte HMAC for SHA-1");
        /* A response auth area with a 65-byte hmac. */
        n = valid_rsp(p_nv, &m, &at);
        memcpy(b, m.b, n - 2);
        b[n - 2] = 0;
        b[n - 1] = 65;
        memset(b + n, 0, 65);
        put32(b + 2, (uint32_t) n + 65);
        refused(p_nv, b, n + 65, "65-byte response hmac");
        /* ReadPublic: a public area shorter than its fixed header. */
        mu_rsp_header(&m, TPM2_ST_NO_SESSIONS);
        mu_digest(&m, D32, 7);
        mu_digest(&m, KEY_NAME, 34);
        mu_digest(&m, KEY_NAME, 34);
        mu_rsp_end(&m);
        refused(p_read, m.b, m.off, "7-byte public area");
}

/* Error responses: the header alone, the code handed back, outputs left. */
TEST(parsers_hand_back_error_codes) {
        static const uint32_t codes[] = { 0x99D, 0x128, 0x921, 0x98E, 0x184, 0x18B, 0x143, 0x101 };

        for (size_t i = 0; i < MB_ARRAY_SIZE(parsers); i++)
                for (size_t c = 0; c < MB_ARRAY_SIZE(codes); c++) {
                        uint8_t b[16] = { 0x80, 0x01, 0, 0, 0, 10 };
                        outs o, clean;
                        uint32_t rc = 0;

                        put32(b + 6, codes[c]);
                        memset(&o, 0xa5, sizeof(o));
                        memset(&clean, 0xa5, sizeof(clean));
                        CHECK_EQ_INT(run(parsers[i].f, b, 10, &rc, &o), MB_OK);
                        CHECK_EQ_INT(rc, codes[c]);
                        CHECK(memcmp(&o, &clean, sizeof(o)) == 0);
                        /* an error with a body, or with the sessions tag */
                        put32(b + 2, 14);
                        refused(parsers[i].f, b, 14, "error code with a body");
                        put32(b + 2, 10);
                        b[1] = 0x02;
                        refused(parsers[i].f, b, 10, "error code with TPM_ST_SESSIONS");
                }
        /* A TPM 2.0's answer to a bad tag: TPM 1.2's tag and TPM_RC_BAD_TAG. */
        {
                static const uint8_t bad_tag[] = { 0x00, 0xc4, 0, 0, 0, 10, 0, 0, 0, 0x1e };
                uint8_t b[10];
                uint32_t rc = 0;
                CHECK_EQ_INT(mb_tpm2_parse_empty(bad_tag, sizeof(bad_tag), &rc), MB_OK);
                CHECK_EQ_INT(rc, MB_TPM2_RC_BAD_TAG);
                memcpy(b, bad_tag, 10);
                b[9] = 0x1d;
                refused(p_empty, b, 10, "TPM 1.2 tag with another code");
        }
}

TEST(response_code_names) {
        static const struct { uint32_t rc; const char *name; char kind; unsigned index; } want[] = {
                { 0x99D, "POLICY_FAIL", 'S', 1 },    /* HMAC with a policy session that does not match */
                { 0x128, "PCR_CHANGED", 0, 0 },
                { 0x921, "LOCKOUT", 0, 0 },
                { 0x98E, "AUTH_FAIL", 'S', 1 },
                { 0x1C4, "VALUE", 'P', 1 },          /* PolicyPCR's pcrDigest against other PCR values */
                { 0x18B, "HANDLE", 'H', 1 },
                { 0x2DB, "SIGNATURE", 'P', 2 },
                { 0x126, "POLICY", 0, 0 },
                { 0x000, "SUCCESS", 0, 0 },
                { 0x9A2, "BAD_AUTH", 'S', 1 },
        };

        for (size_t i = 0; i < MB_ARRAY_SIZE(want); i++) {
                char kind = 'x';
                unsigned index = 99;
                const char *n = mb_tpm2_rc_name(want[i].rc);
                CHECK(n && strcmp(n, want[i].name) == 0);
                CHECK(mb_tpm2_rc_text(want[i].rc) != NULL);
                mb_tpm2_rc_where(want[i].rc, &kind, &index);
                CHECK(kind == want[i].kind && index == want[i].index);
        }
        CHECK_EQ_INT(mb_tpm2_rc_base(0x99D), MB_TPM2_RC_POLICY_FAIL);
        CHECK_EQ_INT(mb_tpm2_rc_base(0x128), MB_TPM2_RC_PCR_CHANGED);
        CHECK(mb_tpm2_rc_name(0x07F) == NULL);
        CHECK(mb_tpm2_rc_text(0xBFF) == NULL);
}

/* The response's length from its header (SubmitCommand returns none):
 * the header's size when it fits what was received, else a refusal. */
TEST(response_size_from_header) {
        uint8_t r[16] = { 0x80, 0x01, 0, 0, 0, 10, 0, 0, 0, 0 };
        size_t n = 77;

        CHECK(mb_tpm2_response_size(r, sizeof(r), &n) == MB_OK);
        CHECK_EQ_INT(n, 10);
        r[5] = 16;
        CHECK(mb_tpm2_response_size(r, sizeof(r), &n) == MB_OK);
        CHECK_EQ_INT(n, 16);
        n = 77;
        r[5] = 17;      /* longer than the buffer */
        CHECK(mb_tpm2_response_size(r, sizeof(r), &n) == MB_ERR_INVALID);
        r[5] = 9;       /* shorter than a header */
        CHECK(mb_tpm2_response_size(r, sizeof(r), &n) == MB_ERR_INVALID);
        r[2] = 0xff; r[5] = 10;         /* 4 GiB */
        CHECK(mb_tpm2_response_size(r, sizeof(r), &n) == MB_ERR_INVALID);
        CHECK(mb_tpm2_response_size(r, 9, &n) == MB_ERR_TRUNCATED);
        CHECK_EQ_INT(n, 77);
}

int main(void) {
        setup();
        RUN(builders_match_libtss2_mu);
        RUN(builders_match_the_spec_by_hand);
        RUN(builders_never_overflow);
        RUN(builders_refuse_what_the_tpm_would);
        RUN(ecc_public_and_name);
        RUN(parsers_accept_libtss2_mu_responses);
        RUN(parsers_refuse_truncations_and_sizes);
        RUN(parsers_refuse_bad_fields);
        RUN(parsers_hand_back_error_codes);
        RUN(response_code_names);
        RUN(response_size_from_header);
        TL_EXIT();
}
