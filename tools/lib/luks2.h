/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * A LUKS2 volume's header through the cryptsetup program (mshim does not
 * link libcryptsetup): its metadata (`luksDump --dump-json-metadata`),
 * key slots (luksAddKey, luksKillSlot) and tokens (`token import`,
 * `token remove`), and mshim's tokens in it (docs/SEALING.md "LUKS2
 * tokens"). Every function prints its own error.
 */
#ifndef MB_LUKS2_H
#define MB_LUKS2_H

#include <stdbool.h>
#include <stdint.h>
#include "jsonread.h"
#include "sealdata.h"

/* LUKS2 on-disk format: at most 32 key slots and 32 tokens. */
#define LUKS2_SLOTS 32
#define LUKS2_TOKENS 32
/* mshim's token types and the version of their members. */
#define LUKS2_TOKEN_TPM2 "mshim-tpm2"
#define LUKS2_TOKEN_RECOVERY "mshim-recovery"
#define LUKS2_TOKEN_VERSION 1

typedef struct luks2_token {
        const char *type;       /* NULL: no token with this id */
        uint32_t keyslots;      /* bit i: key slot i */
        const jr_node *json;
} luks2_token;

typedef struct luks2_hdr {
        const char *device;
        jr_node *meta;
        uint32_t keyslots;      /* bit i: key slot i is in use */
        luks2_token tokens[LUKS2_TOKENS];
} luks2_hdr;

/* The header of device, which must be a LUKS2 volume (else exit status 2
 * with "DEVICE is not a LUKS2 volume"): 0, or an exit status. */
int luks2_read(const char *device, luks2_hdr *ret);
void luks2_free(luks2_hdr *h);
/* The lowest free key slot / token id, or -1 (with a message). */
int luks2_free_slot(const luks2_hdr *h);
int luks2_free_token(const luks2_hdr *h, int after);
/* The id of the only token of type, -1 when there is none, -2 (with a
 * message) when there are several. */
int luks2_find(const luks2_hdr *h, const char *type);
/* The key slot a token of mshim opens (exactly one), or -1. */
int luks2_token_slot(const luks2_token *t);

/* Add key (n bytes) in key slot slot, unlocked by the whole file
 * unlock_file or by the unlock bytes; the new slot's PBKDF is PBKDF2
 * (SHA-512) at its minimum, 1000 iterations: the key is random (docs/SEALING.md).
 * 0; 1 the passphrase opens no key slot; 2 anything else. */
int luks2_add_key(const luks2_hdr *h, int slot, const char *unlock_file, const char *unlock, size_t unlock_n,
                  const void *key, size_t n);
int luks2_kill_slot(const luks2_hdr *h, int slot);
/* Import json as token id / remove token id. */
int luks2_token_import(const luks2_hdr *h, int id, const char *json);
int luks2_token_remove(const luks2_hdr *h, int id);

/* The sealed key of the mshim-tpm2 token (its version, its sealed file):
 * 0 with *ret (seal_file_free it), and *ret_id; else an exit status (none:
 * EXIT_CHECK_FAILED with "DEVICE has no mshim-tpm2 token"). */
int luks2_sealed(const luks2_hdr *h, seal_file *ret, int *ret_id);

#endif
