/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * What both SHA implementations share: the TPM_ALG_ID table (TCG Algorithm
 * Registry) and the one-shot helper. The engines are src/sha.c (portable)
 * and tools/lib/sha_openssl.c (host CLI); see include/mb/sha.h.
 */
#include "mb/sha.h"

static const struct {
        uint16_t alg;
        size_t size;
        const char *name;
} hash_table[] = {
        { MB_ALG_SHA1,    20, "sha1" },
        { MB_ALG_SHA256,  32, "sha256" },
        { MB_ALG_SHA384,  48, "sha384" },
        { MB_ALG_SHA512,  64, "sha512" },
        { MB_ALG_SM3_256, 32, "sm3_256" },
};

size_t mb_hash_size(uint16_t alg) {
        for (size_t i = 0; i < MB_ARRAY_SIZE(hash_table); i++)
                if (hash_table[i].alg == alg)
                        return hash_table[i].size;
        return 0;
}

const char *mb_hash_name(uint16_t alg) {
        for (size_t i = 0; i < MB_ARRAY_SIZE(hash_table); i++)
                if (hash_table[i].alg == alg)
                        return hash_table[i].name;
        return NULL;
}

static bool cstr_eq(const char *a, const char *b) {
        for (; *a && *a == *b; a++, b++)
                ;
        return *a == *b;
}

uint16_t mb_hash_alg_by_name(const char *name) {
        if (!name)
                return 0;
        for (size_t i = 0; i < MB_ARRAY_SIZE(hash_table); i++)
                if (cstr_eq(name, hash_table[i].name))
                        return hash_table[i].alg;
        return 0;
}

mb_err mb_hash_buf(uint16_t alg, const void *data, size_t n, uint8_t *ret_digest) {
        mb_hash h;
        mb_err r = mb_hash_init(&h, alg);

        if (r != MB_OK)
                return r;
        mb_hash_update(&h, data, n);
        mb_hash_final(&h, ret_digest);
        return MB_OK;
}
