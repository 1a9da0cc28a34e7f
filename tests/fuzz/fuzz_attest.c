/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * libFuzzer target: src/attest.c. The input, as bytes a machine under
 * attestation sends a verifier, goes to the TPMS_ATTEST, TPMT_SIGNATURE and
 * TPM2B_PUBLIC parsers, and as a challenge file a machine receives to the
 * credential parser. A parser that accepts must hand back slices inside
 * the input, sizes within their types' bounds, and a quote's PCR selection
 * within 24 PCRs and HASH_COUNT banks, each bank once; every byte of every
 * slice is read (ASan checks the reads).
 */
#include <stdlib.h>
#include "mb/attest.h"
#include "sink.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void slice(const uint8_t *buf, size_t size, mb_attest_bytes b, size_t max) {
        if (b.size > max)
                abort();
        fuzz_inside(buf, size, b.p, b.size);
        fuzz_read(b.p, b.size);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        mb_attest_quote q;
        mb_attest_sig s;
        mb_attest_public p;
        mb_attest_cred c;

        if (mb_attest_quote_parse(data, size, &q) == MB_OK) {
                slice(data, size, q.signer, MB_ATTEST_NAME_MAX);
                slice(data, size, q.extra, MB_ATTEST_DATA_MAX);
                slice(data, size, q.digest, MB_ATTEST_DIGEST_MAX);
                if (q.n_sel > MB_ATTEST_MAX_BANKS || (q.type != MB_ATTEST_ST_QUOTE && (q.n_sel || q.digest.size)))
                        abort();
                for (uint32_t i = 0; i < q.n_sel; i++) {
                        if (q.sel[i].mask >> 24)
                                abort();
                        for (uint32_t k = 0; k < i; k++)
                                if (q.sel[k].alg == q.sel[i].alg)
                                        abort();
                }
        }
        if (mb_attest_sig_parse(data, size, &s) == MB_OK) {
                if (s.alg != MB_ATTEST_ALG_RSASSA && s.alg != MB_ATTEST_ALG_RSAPSS && s.alg != MB_ATTEST_ALG_ECDSA)
                        abort();
                slice(data, size, s.rsa, MB_ATTEST_RSA_MAX);
                slice(data, size, s.r, MB_ATTEST_ECC_MAX);
                slice(data, size, s.s, MB_ATTEST_ECC_MAX);
        }
        if (mb_attest_public_parse(data, size, &p) == MB_OK) {
                if ((p.type != MB_ATTEST_ALG_RSA && p.type != MB_ATTEST_ALG_ECC) || p.area.size + 2u != size ||
                    p.area.p != data + 2)
                        abort();
                slice(data, size, p.policy, MB_ATTEST_DIGEST_MAX);
                slice(data, size, p.rsa_n, MB_ATTEST_RSA_MAX);
                slice(data, size, p.x, MB_ATTEST_ECC_MAX);
                slice(data, size, p.y, MB_ATTEST_ECC_MAX);
        }
        if (mb_attest_cred_parse(data, size, &c) == MB_OK) {
                if (!c.secret.size || c.id_object.size < 3 || (!c.ecc_x.size != !c.ecc_y.size))
                        abort();
                slice(data, size, c.id_object, MB_ATTEST_ID_OBJECT_MAX);
                slice(data, size, c.secret, MB_ATTEST_SECRET_MAX);
                slice(data, size, c.ecc_x, MB_ATTEST_ECC_MAX);
                slice(data, size, c.ecc_y, MB_ATTEST_ECC_MAX);
        }
        return 0;
}
