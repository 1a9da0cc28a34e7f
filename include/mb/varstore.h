/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * An EDK2/OVMF variable store image (OVMF_VARS*.fd) parsed and edited in a
 * caller's buffer, never resized. Layout, outermost first:
 *
 *   EFI_FIRMWARE_VOLUME_HEADER  (PI spec vol. 3, 3.2.1) with FileSystemGuid
 *                               EFI_SYSTEM_NV_DATA_FV_GUID and a 16-bit
 *                               checksum over the header
 *   VARIABLE_STORE_HEADER       (EDK2 Guid/VariableFormat.h), authenticated
 *                               format: gEfiAuthenticatedVariableGuid,
 *                               Format 0x5A, State 0xFE
 *   AUTHENTICATED_VARIABLE_HEADER records, each followed by its UTF-16 name
 *                               and data, each record 4-byte aligned; the
 *                               first StartId != 0x55AA ends the list and
 *                               the rest of the store is erased flash (0xFF)
 *   EDKII fault-tolerant-write working block, then its spare area
 *                               (Guid/SystemNvDataGuid.h)
 *
 * Writes follow the firmware's own append-only discipline: a new record is
 * appended in the free space and the record it replaces gets its State
 * bits cleared, as VariableDxe does on flash, so the firmware reads the
 * result exactly as if it had written it itself.
 */
#ifndef MB_VARSTORE_H
#define MB_VARSTORE_H

#include "mb/base.h"

/* A GUID in its on-disk (mixed-endian EFI_GUID) byte order. */
typedef struct mb_guid {
        uint8_t b[16];
} mb_guid;

extern const mb_guid MB_GUID_GLOBAL_VARIABLE;     /* 8be4df61-93ca-11d2-aa0d-00e098032b8c */
extern const mb_guid MB_GUID_IMAGE_SECURITY_DB;   /* d719b2cb-3d3a-4596-a3bc-dad00e67656f */
extern const mb_guid MB_GUID_SHIM_LOCK;           /* 605dab50-e046-4300-abb6-3dd810dd8b23 */
extern const mb_guid MB_GUID_SECURE_BOOT_ENABLE;  /* f0a30bc7-af08-4556-99c4-001009c93a44 */
extern const mb_guid MB_GUID_CUSTOM_MODE;         /* c076ec0c-7028-4399-a072-71ee5c448b9f */
extern const mb_guid MB_GUID_CERT_X509;           /* a5c059a1-94e4-4aa7-87b5-ab155c2bf072 */
extern const mb_guid MB_GUID_CERT_SHA256;         /* c1c41626-504c-4092-aca9-41f936934328 */
extern const mb_guid MB_GUID_CERT_SHA1;           /* 826ca512-cf10-4ac9-b187-be01496631bd */
extern const mb_guid MB_GUID_CERT_SHA384;         /* ff3e5307-9fd0-48c9-85f1-8ad56c701e01 */
extern const mb_guid MB_GUID_CERT_SHA512;         /* 093e0fae-a6c4-4f50-9f1b-d41e2b89c19a */
extern const mb_guid MB_GUID_CERT_TYPE_PKCS7;     /* 4aafd29d-68df-49ee-8aa9-347d375665a7 */

/* "xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx" (either case) to bytes. */
mb_err mb_guid_parse(const char *s, size_t len, mb_guid *ret);
bool mb_guid_eq(const mb_guid *a, const mb_guid *b);

/* UEFI 2.10, 8.2 (GetVariable): attribute bits. */
#define MB_VAR_NON_VOLATILE                     0x00000001u
#define MB_VAR_BOOTSERVICE_ACCESS               0x00000002u
#define MB_VAR_RUNTIME_ACCESS                   0x00000004u
#define MB_VAR_HARDWARE_ERROR_RECORD            0x00000008u
#define MB_VAR_AUTHENTICATED_WRITE_ACCESS       0x00000010u
#define MB_VAR_TIME_BASED_AUTHENTICATED_WRITE   0x00000020u
#define MB_VAR_APPEND_WRITE                     0x00000040u
#define MB_VAR_ENHANCED_AUTHENTICATED_ACCESS    0x00000080u

/* EDK2 VariableFormat.h: a record's State only ever loses bits. */
#define MB_VAR_IN_DELETED_TRANSITION 0xFE
#define MB_VAR_DELETED               0xFD
#define MB_VAR_HEADER_VALID_ONLY     0x7F
#define MB_VAR_ADDED                 0x3F

#define MB_EFI_TIME_SIZE 16

typedef struct mb_varstore {
        uint8_t *img;           /* the whole file; NULL-free, caller-owned */
        size_t size;
        size_t vars_off;        /* first record */
        size_t vars_end;        /* end of the variable store region */
        size_t free_off;        /* first byte after the last record */
        size_t ftw_off;         /* FTW working block header, 0 if absent */
} mb_varstore;

typedef struct mb_var {
        size_t off;             /* record offset in the image */
        uint8_t state;
        bool live;              /* what GetVariable would return */
        uint32_t attributes;
        uint64_t monotonic_count;
        uint8_t timestamp[MB_EFI_TIME_SIZE];
        uint32_t pubkey_index;
        mb_guid guid;
        const uint8_t *name;    /* UTF-16LE, name_size bytes, normally NUL-terminated */
        size_t name_size;
        const uint8_t *data;
        size_t data_size;
} mb_var;

/* Validate the FV header (signature, GUID, checksum, block map), the store
 * header and every record's bounds. MB_ERR_UNSUPPORTED for a well-formed
 * FV holding another store format; MB_ERR_INVALID/TRUNCATED otherwise.
 * img is kept, and written only by the editing calls below. */
mb_err mb_varstore_open(uint8_t *img, size_t size, mb_varstore *ret);

/* Iterate all records, deleted ones included; *cursor starts at 0.
 * MB_END after the last. */
mb_err mb_varstore_next(const mb_varstore *vs, size_t *cursor, mb_var *ret);

/* The live variable with this UTF-16LE name (name_size bytes, including
 * the NUL) and GUID; MB_ERR_NOTFOUND if there is none. */
mb_err mb_varstore_find(const mb_varstore *vs, const uint8_t *name, size_t name_size,
                        const mb_guid *guid, mb_var *ret);

/* Does the FTW working block hold a write the firmware has not finished?
 * Editing then would race the firmware's recovery, so the editing calls
 * refuse (MB_ERR_UNSUPPORTED). */
bool mb_varstore_ftw_pending(const mb_varstore *vs);

/* Append a record (State VAR_ADDED) and retire the live one it replaces.
 * timestamp is an EFI_TIME (16 bytes) or NULL for all zeroes. MB_ERR_NOSPACE
 * when the store has no room; the image is untouched on every failure. */
mb_err mb_varstore_set(mb_varstore *vs, const uint8_t *name, size_t name_size, const mb_guid *guid,
                       uint32_t attributes, const uint8_t *timestamp, const uint8_t *data, size_t data_size);

/* Retire the live variable (State &= VAR_DELETED); MB_ERR_NOTFOUND if none. */
mb_err mb_varstore_delete(mb_varstore *vs, const uint8_t *name, size_t name_size, const mb_guid *guid);

/* ---- EFI_SIGNATURE_LIST (UEFI 2.10, 32.4.1) ------------------------------ */

typedef struct mb_siglist {
        mb_guid type;
        const uint8_t *header;  /* SignatureHeader, header_size bytes */
        uint32_t header_size;
        uint32_t sig_size;      /* each EFI_SIGNATURE_DATA, owner included */
        uint32_t n_sigs;
        const uint8_t *sigs;    /* n_sigs * sig_size bytes */
} mb_siglist;

/* The next list in a db-style buffer; *off starts at 0. MB_END at the end,
 * MB_ERR_INVALID/TRUNCATED for a list whose sizes do not add up. */
mb_err mb_siglist_next(const uint8_t *buf, size_t size, size_t *off, mb_siglist *ret);
/* The same, and on an error *ret_why (if not NULL) says what is wrong. */
mb_err mb_siglist_next_why(const uint8_t *buf, size_t size, size_t *off, mb_siglist *ret, const char **ret_why);

/* One EFI_SIGNATURE_LIST holding one entry. out may be NULL to measure;
 * *ret_len is set either way on success. */
mb_err mb_siglist_build(const mb_guid *type, const mb_guid *owner, const uint8_t *sig, size_t sig_len,
                        uint8_t *out, size_t out_size, size_t *ret_len);

/* Append the EFI_SIGNATURE_LISTs add[0..add_len) to old[0..old_len) the way
 * firmware appends to db, dbx or KEK (SetVariable with
 * EFI_VARIABLE_APPEND_WRITE, UEFI 2.10 8.2.1: "the driver shall not perform
 * an append of EFI_SIGNATURE_DATA values that are already part of the
 * existing variable value"; EDK2 AuthVariableLib FilterSignatureList): an
 * entry (owner and data) equal to one in a list of the same SignatureType
 * and SignatureSize is dropped, and a list left with no entries is dropped
 * whole. Entries repeated within add are kept once too. out (not
 * overlapping either input) receives old followed by what is kept; out_size
 * >= old_len + add_len always suffices. *ret_added counts the entries kept.
 * MB_ERR_INVALID/TRUNCATED when either buffer is not a whole sequence of
 * well-formed lists; ret_ values untouched on failure. */
mb_err mb_siglist_append(const uint8_t *old, size_t old_len, const uint8_t *add, size_t add_len,
                         uint8_t *out, size_t out_size, size_t *ret_len, size_t *ret_added);

/*
 * An update for db, dbx or KEK as a file holds it: EFI_SIGNATURE_LISTs, or
 * an authenticated-variable payload as efi-updatevar and fwupd hand it to
 * SetVariable (EFI_VARIABLE_AUTHENTICATION_2, UEFI 2.10 8.2.2: an EFI_TIME
 * and a WIN_CERTIFICATE_UEFI_GUID holding a PKCS#7 signature, then the
 * lists). The header's layout is checked (wRevision 0x0200,
 * WIN_CERT_TYPE_EFI_GUID, EFI_CERT_TYPE_PKCS7_GUID, a signature, the
 * TimeStamp fields the spec requires to be zero), not its signature. The
 * lists must fill the rest exactly, a hash type's SignatureSize must be its
 * hash's (UEFI 2.10 32.4.1). *ret_off: where the lists start. On failure
 * *ret_why says what is wrong (MB_ERR_TRUNCATED or MB_ERR_INVALID).
 */
mb_err mb_siglist_payload(const uint8_t *buf, size_t size, size_t *ret_off, const char **ret_why);

/* The hash size of an EFI_CERT_SHA1/256/384/512 SignatureType and the
 * TPM_ALG_ID of that hash (*ret_alg), else 0. */
size_t mb_siglist_hash_type(const mb_guid *type, uint16_t *ret_alg);

/* MokAuth as mokutil's simple-hash path writes it and shim's MokManager
 * checks it: SHA-256 over the MokNew data followed by the password as
 * UCS-2 code units (no NUL). password is ASCII/UTF-8 without a NUL. */
mb_err mb_mok_auth(const uint8_t *moknew, size_t moknew_len, const char *password, size_t pw_len,
                   uint8_t ret_digest[32]);

#endif
