/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * OVMF variable store images: parse and edit in place (see mb/varstore.h
 * for the layout). Field offsets are spelled out below because the image is
 * little-endian and packed, whatever the host.
 */
#include "mb/varstore.h"

/* EFI_GUIDs in on-disk order: Data1..3 little-endian, Data4 as bytes. */
#define GUID_BYTES(d1, d2, d3, a, b, c, d, e, f, g, h) { { \
        (uint8_t) (d1), (uint8_t) ((d1) >> 8), (uint8_t) ((d1) >> 16), (uint8_t) ((d1) >> 24), \
        (uint8_t) (d2), (uint8_t) ((d2) >> 8), (uint8_t) (d3), (uint8_t) ((d3) >> 8), \
        a, b, c, d, e, f, g, h } }

const mb_guid MB_GUID_GLOBAL_VARIABLE =
        GUID_BYTES(0x8be4df61, 0x93ca, 0x11d2, 0xaa, 0x0d, 0x00, 0xe0, 0x98, 0x03, 0x2b, 0x8c);
const mb_guid MB_GUID_IMAGE_SECURITY_DB =
        GUID_BYTES(0xd719b2cb, 0x3d3a, 0x4596, 0xa3, 0xbc, 0xda, 0xd0, 0x0e, 0x67, 0x65, 0x6f);
const mb_guid MB_GUID_SHIM_LOCK =
        GUID_BYTES(0x605dab50, 0xe046, 0x4300, 0xab, 0xb6, 0x3d, 0xd8, 0x10, 0xdd, 0x8b, 0x23);
const mb_guid MB_GUID_SECURE_BOOT_ENABLE =
        GUID_BYTES(0xf0a30bc7, 0xaf08, 0x4556, 0x99, 0xc4, 0x00, 0x10, 0x09, 0xc9, 0x3a, 0x44);
const mb_guid MB_GUID_CUSTOM_MODE =
        GUID_BYTES(0xc076ec0c, 0x7028, 0x4399, 0xa0, 0x72, 0x71, 0xee, 0x5c, 0x44, 0x8b, 0x9f);
const mb_guid MB_GUID_CERT_X509 =
        GUID_BYTES(0xa5c059a1, 0x94e4, 0x4aa7, 0x87, 0xb5, 0xab, 0x15, 0x5c, 0x2b, 0xf0, 0x72);
const mb_guid MB_GUID_CERT_SHA256 =
        GUID_BYTES(0xc1c41626, 0x504c, 0x4092, 0xac, 0xa9, 0x41, 0xf9, 0x36, 0x93, 0x43, 0x28);
const mb_guid MB_GUID_CERT_SHA1 =
        GUID_BYTES(0x826ca512, 0xcf10, 0x4ac9, 0xb1, 0x87, 0xbe, 0x01, 0x49, 0x66, 0x31, 0xbd);
const mb_guid MB_GUID_CERT_SHA384 =
        GUID_BYTES(0xff3e5307, 0x9fd0, 0x48c9, 0x85, 0xf1, 0x8a, 0xd5, 0x6c, 0x70, 0x1e, 0x01);
const mb_guid MB_GUID_CERT_SHA512 =
        GUID_BYTES(0x093e0fae, 0xa6c4, 0x4f50, 0x9f, 0x1b, 0xd4, 0x1e, 0x2b, 0x89, 0xc1, 0x9a);
const mb_guid MB_GUID_CERT_TYPE_PKCS7 =
        GUID_BYTES(0x4aafd29d, 0x68df, 0x49ee, 0x8a, 0xa9, 0x34, 0x7d, 0x37, 0x56, 0x65, 0xa7);

/* EDK2 Guid/SystemNvDataGuid.h: the NV FV's FileSystemGuid, and the FTW
 * working block signature (gEdkiiWorkingBlockSignatureGuid). */
static const mb_guid GUID_SYSTEM_NV_DATA_FV =
        GUID_BYTES(0xfff12b8d, 0x7696, 0x4c8b, 0xa9, 0x85, 0x27, 0x47, 0x07, 0x5b, 0x4f, 0x50);
static const mb_guid GUID_FTW_WORKING_BLOCK =
        GUID_BYTES(0x9e58292b, 0x7c68, 0x497d, 0xa0, 0xce, 0x65, 0x00, 0xfd, 0x9f, 0x1b, 0x95);
/* EDK2 Guid/AuthenticatedVariableFormat.h: gEfiAuthenticatedVariableGuid. */
static const mb_guid GUID_AUTH_VARIABLE_STORE =
        GUID_BYTES(0xaaf32c78, 0x947b, 0x439a, 0xa1, 0x80, 0x2e, 0x14, 0x4e, 0xc3, 0x77, 0x92);

/* PI spec vol. 3, 3.2.1 EFI_FIRMWARE_VOLUME_HEADER. */
#define FV_FSGUID       16
#define FV_LENGTH       32
#define FV_SIGNATURE    40      /* "_FVH" */
#define FV_HEADERLEN    48
#define FV_REVISION     55
#define FV_BLOCKMAP     56
#define FV_MIN_HEADER   (FV_BLOCKMAP + 8)  /* one block-map entry and the terminator */
#define FVH_SIGNATURE   0x4856465fu        /* '_','F','V','H' little-endian */
#define FVH_REVISION    2

/* EDK2 VariableFormat.h: VARIABLE_STORE_HEADER. */
#define VS_SIZE         16
#define VS_FORMAT       20
#define VS_STATE        21
#define VS_HEADER_SIZE  28
#define VS_FORMATTED    0x5A
#define VS_HEALTHY      0xFE

/* EDK2 AuthenticatedVariableFormat.h: AUTHENTICATED_VARIABLE_HEADER. */
#define AV_STARTID      0
#define AV_STATE        2
#define AV_ATTRIBUTES   4
#define AV_MONOTONIC    8
#define AV_TIMESTAMP    16
#define AV_PUBKEYINDEX  32
#define AV_NAMESIZE     36
#define AV_DATASIZE     40
#define AV_GUID         44
#define AV_HEADER_SIZE  60
#define AV_START_ID     0x55AA
/* VariableFormat.h HEADER_ALIGNMENT: records start 4-byte aligned; the name
 * and data inside a record are unaligned on IA32/X64 (ALIGNMENT = 1). */
#define AV_ALIGN        4u

/* SystemNvDataGuid.h: EFI_FAULT_TOLERANT_WORKING_BLOCK_HEADER is packed,
 * the write-queue entries are not (natural alignment: header 0x28 bytes,
 * record 0x28 bytes plus the caller's private data). */
#define FTW_WB_STATE    20
#define FTW_WB_QUEUE    24
#define FTW_WB_HEADER   32
#define FTW_HDR_NWRITES 24
#define FTW_HDR_PRIV    32
#define FTW_HDR_SIZE    40u
#define FTW_REC_SIZE    40u
/* Bit fields, FTW_VALID_STATE = 0: a bit cleared means "true". */
#define FTW_HEADER_ALLOCATED 0x1
#define FTW_WRITES_COMPLETED 0x4
/* OVMF places the working block on a flash block boundary after the store. */
#define FTW_SCAN_STEP   0x1000u

bool mb_guid_eq(const mb_guid *a, const mb_guid *b) {
        return mb_memcmp(a->b, b->b, sizeof(a->b)) == 0;
}

mb_err mb_guid_parse(const char *s, size_t len, mb_guid *ret) {
        /* Text order of the 16 bytes; the first three fields are stored
         * little-endian, so their bytes are reversed. */
        static const uint8_t pos[16] = { 3, 2, 1, 0, 5, 4, 7, 6, 8, 9, 10, 11, 12, 13, 14, 15 };
        mb_guid g;
        size_t i = 0;

        if (len != 36)
                return MB_ERR_INVALID;
        for (size_t k = 0; k < 16; k++) {
                int hi, lo;

                if (i == 8 || i == 13 || i == 18 || i == 23) {
                        if (s[i] != '-')
                                return MB_ERR_INVALID;
                        i++;
                }
                hi = mb_hexval(s[i]);
                lo = mb_hexval(s[i + 1]);
                if (hi < 0 || lo < 0)
                        return MB_ERR_INVALID;
                g.b[pos[k]] = (uint8_t) (hi << 4 | lo);
                i += 2;
        }
        *ret = g;
        return MB_OK;
}

static size_t align_up(size_t v) {
        return (v + (AV_ALIGN - 1)) & ~(size_t) (AV_ALIGN - 1);
}

/* PI spec vol. 3, 3.2.1: the 16-bit sum of the whole header is zero. */
static bool fv_checksum_ok(const uint8_t *p, size_t hl) {
        uint16_t sum = 0;

        for (size_t i = 0; i < hl; i += 2)
                sum = (uint16_t) (sum + mb_le16(p + i));
        return sum == 0;
}

/* The block map ({NumBlocks, Length} pairs up to {0, 0}) must describe
 * exactly FvLength bytes; a header that lies about it is not one we edit. */
static mb_err fv_blockmap_ok(const uint8_t *p, size_t hl, uint64_t fv_len) {
        uint64_t total = 0;

        for (size_t off = FV_BLOCKMAP; !mb_out_of_bounds(hl, off, 8); off += 8) {
                uint32_t n = mb_le32(p + off), len = mb_le32(p + off + 4);

                if (n == 0 && len == 0)
                        return total == fv_len ? MB_OK : MB_ERR_INVALID;
                if (len && n > (UINT64_MAX - total) / len)
                        return MB_ERR_INVALID;
                total += (uint64_t) n * len;
        }
        return MB_ERR_INVALID;
}

static mb_err fv_open(const uint8_t *img, size_t size, size_t *ret_hl, size_t *ret_fv_len) {
        mb_guid fs;
        uint64_t fv_len;
        size_t hl;

        if (size < FV_MIN_HEADER)
                return MB_ERR_TRUNCATED;
        mb_memcpy(fs.b, img + FV_FSGUID, 16);
        if (mb_le32(img + FV_SIGNATURE) != FVH_SIGNATURE || !mb_guid_eq(&fs, &GUID_SYSTEM_NV_DATA_FV))
                return MB_ERR_INVALID;
        fv_len = mb_le64(img + FV_LENGTH);
        hl = mb_le16(img + FV_HEADERLEN);
        if (img[FV_REVISION] != FVH_REVISION)
                return MB_ERR_UNSUPPORTED;
        if (hl < FV_MIN_HEADER || hl % 2 || fv_len > size || fv_len < hl)
                return fv_len > size ? MB_ERR_TRUNCATED : MB_ERR_INVALID;
        if (!fv_checksum_ok(img, hl))
                return MB_ERR_INVALID;
        if (fv_blockmap_ok(img, hl, fv_len) != MB_OK)
                return MB_ERR_INVALID;
        *ret_hl = hl;
        *ret_fv_len = (size_t) fv_len;
        return MB_OK;
}

/* Decode the record at off. MB_END when off holds no record (erased flash
 * or no room for a header): the list ends there. */
static mb_err record_at(const mb_varstore *vs, size_t off, mb_var *ret, size_t *ret_next) {
        const uint8_t *p = vs->img + off;
        uint32_t ns, ds;
        mb_var v = { .off = off };

        if (mb_out_of_bounds(vs->vars_end, off, 2) || mb_le16(p + AV_STARTID) != AV_START_ID)
                return MB_END;
        if (mb_out_of_bounds(vs->vars_end, off, AV_HEADER_SIZE))
                return MB_ERR_TRUNCATED;
        ns = mb_le32(p + AV_NAMESIZE);
        ds = mb_le32(p + AV_DATASIZE);
        /* Never trust the sizes: both must fit in what is left of the store. */
        if (mb_out_of_bounds(vs->vars_end, off + AV_HEADER_SIZE, ns) ||
            mb_out_of_bounds(vs->vars_end, off + AV_HEADER_SIZE + ns, ds))
                return MB_ERR_INVALID;
        v.state = p[AV_STATE];
        v.attributes = mb_le32(p + AV_ATTRIBUTES);
        v.monotonic_count = mb_le64(p + AV_MONOTONIC);
        mb_memcpy(v.timestamp, p + AV_TIMESTAMP, MB_EFI_TIME_SIZE);
        v.pubkey_index = mb_le32(p + AV_PUBKEYINDEX);
        mb_memcpy(v.guid.b, p + AV_GUID, 16);
        v.name = p + AV_HEADER_SIZE;
        v.name_size = ns;
        v.data = v.name + ns;
        v.data_size = ds;
        *ret = v;
        *ret_next = align_up(off + AV_HEADER_SIZE + ns + ds);
        return MB_OK;
}

static bool same_variable(const mb_var *a, const uint8_t *name, size_t name_size, const mb_guid *guid) {
        return a->name_size == name_size && mb_guid_eq(&a->guid, guid) &&
               mb_memcmp(a->name, name, name_size) == 0;
}

/* EDK2 (Variable.c FindVariableEx): a record caught mid-update (State
 * VAR_ADDED & VAR_IN_DELETED_TRANSITION) is still the variable unless the
 * update finished, i.e. a VAR_ADDED copy exists. */
static bool has_added_copy(const mb_varstore *vs, const mb_var *v) {
        size_t off = vs->vars_off, next;
        mb_var w;

        while (record_at(vs, off, &w, &next) == MB_OK) {
                if (w.state == MB_VAR_ADDED && same_variable(&w, v->name, v->name_size, &v->guid))
                        return true;
                off = next;
        }
        return false;
}

static bool is_live(const mb_varstore *vs, const mb_var *v) {
        if (v->state == MB_VAR_ADDED)
                return true;
        if (v->state == (MB_VAR_ADDED & MB_VAR_IN_DELETED_TRANSITION))
                return !has_added_copy(vs, v);
        return false;
}

static size_t ftw_find(const uint8_t *img, size_t from, size_t fv_len) {
        size_t off = (from + FTW_SCAN_STEP - 1) / FTW_SCAN_STEP * FTW_SCAN_STEP;

        for (; !mb_out_of_bounds(fv_len, off, FTW_WB_HEADER); off += FTW_SCAN_STEP)
                if (mb_memcmp(img + off, GUID_FTW_WORKING_BLOCK.b, 16) == 0)
                        return off;
        return 0;
}

mb_err mb_varstore_open(uint8_t *img, size_t size, mb_varstore *ret) {
        mb_varstore vs = { .img = img, .size = size };
        size_t hl, fv_len, store_size, off, next;
        mb_guid g;
        mb_var v;
        mb_err r;

        r = fv_open(img, size, &hl, &fv_len);
        if (r != MB_OK)
                return r;
        if (mb_out_of_bounds(fv_len, hl, VS_HEADER_SIZE))
                return MB_ERR_TRUNCATED;
        mb_memcpy(g.b, img + hl, 16);
        /* Only the authenticated format: it is what OVMF has used since
         * Secure Boot support, and the one whose record layout we write. */
        if (!mb_guid_eq(&g, &GUID_AUTH_VARIABLE_STORE) || img[hl + VS_FORMAT] != VS_FORMATTED ||
            img[hl + VS_STATE] != VS_HEALTHY)
                return MB_ERR_UNSUPPORTED;
        store_size = mb_le32(img + hl + VS_SIZE);
        if (store_size < VS_HEADER_SIZE || mb_out_of_bounds(fv_len, hl, store_size))
                return MB_ERR_INVALID;
        vs.vars_end = hl + store_size;
        vs.vars_off = align_up(hl + VS_HEADER_SIZE);
        for (off = vs.vars_off; (r = record_at(&vs, off, &v, &next)) == MB_OK; off = next)
                ;
        if (r != MB_END)
                return r;
        vs.free_off = off < vs.vars_end ? off : vs.vars_end;
        vs.ftw_off = ftw_find(img, vs.vars_end, fv_len);
        *ret = vs;
        return MB_OK;
}

mb_err mb_varstore_next(const mb_varstore *vs, size_t *cursor, mb_var *ret) {
        size_t off = *cursor ? *cursor : vs->vars_off, next;
        mb_var v;
        mb_err r = record_at(vs, off, &v, &next);

        if (r != MB_OK)
                return r;
        v.live = is_live(vs, &v);
        *ret = v;
        *cursor = next;
        return MB_OK;
}

mb_err mb_varstore_find(const mb_varstore *vs, const uint8_t *name, size_t name_size,
                        const mb_guid *guid, mb_var *ret) {
        size_t cursor = 0;
        mb_var v;

        while (mb_varstore_next(vs, &cursor, &v) == MB_OK)
                if (v.live && same_variable(&v, name, name_size, guid)) {
                        *ret = v;
                        return MB_OK;
                }
        return MB_ERR_NOTFOUND;
}

/* Walk the write queue; any header allocated but not completed means the
 * firmware will replay a spare-block copy over the store at next boot. */
bool mb_varstore_ftw_pending(const mb_varstore *vs) {
        const uint8_t *wb;
        uint64_t qsize;
        size_t end, off;

        if (!vs->ftw_off)
                return false;
        wb = vs->img + vs->ftw_off;
        qsize = mb_le64(wb + FTW_WB_QUEUE);
        if (qsize > vs->size - vs->ftw_off - FTW_WB_HEADER)
                return true;    /* a queue we cannot bound: assume the worst */
        end = vs->ftw_off + FTW_WB_HEADER + (size_t) qsize;
        for (off = vs->ftw_off + FTW_WB_HEADER; !mb_out_of_bounds(end, off, FTW_HDR_SIZE);) {
                const uint8_t *h = vs->img + off;
                uint64_t n = mb_le64(h + FTW_HDR_NWRITES), priv = mb_le64(h + FTW_HDR_PRIV), total;

                if (h[0] & FTW_HEADER_ALLOCATED)
                        return false;   /* erased: end of the queue */
                if (h[0] & FTW_WRITES_COMPLETED)
                        return true;
                if (priv > end || n > end / (FTW_REC_SIZE + priv + 1))
                        return true;
                total = FTW_HDR_SIZE + n * (FTW_REC_SIZE + priv);
                if (mb_out_of_bounds(end, off, (size_t) total))
                        return true;
                off += (size_t) total;
        }
        return false;
}

static bool is_erased(const uint8_t *p, size_t n) {
        for (size_t i = 0; i < n; i++)
                if (p[i] != 0xFF)
                        return false;
        return true;
}

static bool name_ok(const uint8_t *name, size_t name_size) {
        return name_size >= 4 && name_size % 2 == 0 && name_size <= UINT32_MAX &&
               name[name_size - 2] == 0 && name[name_size - 1] == 0;
}

static mb_err editable(const mb_varstore *vs) {
        return mb_varstore_ftw_pending(vs) ? MB_ERR_UNSUPPORTED : MB_OK;
}

mb_err mb_varstore_set(mb_varstore *vs, const uint8_t *name, size_t name_size, const mb_guid *guid,
                       uint32_t attributes, const uint8_t *timestamp, const uint8_t *data, size_t data_size) {
        size_t room = vs->vars_end - vs->free_off, len;
        uint8_t *p = vs->img + vs->free_off;
        mb_var old;
        bool replace;
        mb_err r = editable(vs);

        if (r != MB_OK)
                return r;
        if (!name_ok(name, name_size) || data_size > UINT32_MAX)
                return MB_ERR_INVALID;
        if (room < AV_HEADER_SIZE || room - AV_HEADER_SIZE < name_size ||
            room - AV_HEADER_SIZE - name_size < data_size)
                return MB_ERR_NOSPACE;
        len = AV_HEADER_SIZE + name_size + data_size;
        /* Flash can only clear bits: what we write over must be erased. */
        if (!is_erased(p, len))
                return MB_ERR_INVALID;
        replace = mb_varstore_find(vs, name, name_size, guid, &old) == MB_OK;

        mb_memset(p, 0, AV_HEADER_SIZE);
        mb_put_le16(p + AV_STARTID, AV_START_ID);
        p[AV_STATE] = MB_VAR_ADDED;
        mb_put_le32(p + AV_ATTRIBUTES, attributes);
        if (timestamp)
                mb_memcpy(p + AV_TIMESTAMP, timestamp, MB_EFI_TIME_SIZE);
        mb_put_le32(p + AV_NAMESIZE, (uint32_t) name_size);
        mb_put_le32(p + AV_DATASIZE, (uint32_t) data_size);
        mb_memcpy(p + AV_GUID, guid->b, 16);
        mb_memcpy(p + AV_HEADER_SIZE, name, name_size);
        if (data_size)
                mb_memcpy(p + AV_HEADER_SIZE + name_size, data, data_size);
        /* Variable.c UpdateVariable: the old copy is retired only once the
         * new one is in place. */
        if (replace)
                vs->img[old.off + AV_STATE] &= MB_VAR_DELETED;
        vs->free_off = align_up(vs->free_off + len);
        if (vs->free_off > vs->vars_end)
                vs->free_off = vs->vars_end;
        return MB_OK;
}

mb_err mb_varstore_delete(mb_varstore *vs, const uint8_t *name, size_t name_size, const mb_guid *guid) {
        mb_var old;
        mb_err r = editable(vs);

        if (r != MB_OK)
                return r;
        r = mb_varstore_find(vs, name, name_size, guid, &old);
        if (r != MB_OK)
                return r;
        vs->img[old.off + AV_STATE] &= MB_VAR_DELETED;
        return MB_OK;
}
