/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The portable engine (src/sha.c) as include/mb/sha.h's engine, for the
 * loader and the sanitized tests. The host CLI links tools/lib/sha_openssl.c
 * in place of this file (Makefile HOST_CORE_O).
 */
#include "mb/sha.h"

mb_err mb_hash_init(mb_hash *h, uint16_t alg) {
        return mb_hash_soft_init(h, alg);
}

void mb_hash_update(mb_hash *h, const void *data, size_t n) {
        mb_hash_soft_update(h, data, n);
}

void mb_hash_final(mb_hash *h, uint8_t *ret_digest) {
        mb_hash_soft_final(h, ret_digest);
}
