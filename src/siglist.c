/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * EFI_SIGNATURE_LIST parsing and building (UEFI 2.10, 32.4.1), and the
 * MokAuth digest shim's MokManager checks before it enrolls MokNew.
 */
#include "mb/sha.h"
#include "mb/varstore.h"

/* EFI_SIGNATURE_LIST: SignatureType, SignatureListSize, SignatureHeaderSize,
 * SignatureSize; then the header, then the EFI_SIGNATURE_DATA entries, each
 * a SignatureOwner GUID followed by the signature. */
#define SL_TYPE         0
#define SL_LIST_SIZE    16
#define SL_HEADER_SIZE  20
#define SL_SIG_SIZE     24
#define SL_FIXED        28
#define SD_OWNER_SIZE   16

/* MokManager's limits on the password it reads (PASSWORD_MIN/MAX). */
#define MOK_PW_MIN 1
#define MOK_PW_MAX 256

mb_err mb_siglist_next_why(const uint8_t *buf, size_t size, size_t *off, mb_siglist *ret, const char **ret_why) {
        const uint8_t *p;
        uint32_t list_size, hdr_size, sig_size, body;
        mb_siglist l;
        const char *why;
        mb_err err;

        if (*off == size)
                return MB_END;
        err = MB_ERR_TRUNCATED;
        why = "signature list header truncated";
        if (mb_out_of_bounds(size, *off, SL_FIXED))
                goto fail;
        p = buf + *off;
        list_size = mb_le32(p + SL_LIST_SIZE);
        hdr_size = mb_le32(p + SL_HEADER_SIZE);
        sig_size = mb_le32(p + SL_SIG_SIZE);
        why = "signature list size out of bounds";
        if (list_size < SL_FIXED || mb_out_of_bounds(size, *off, list_size))
                goto fail;
        /* The entries must exactly fill what the header leaves, and each
         * must at least hold its owner GUID. */
        err = MB_ERR_INVALID;
        why = "signature header larger than its list";
        if (hdr_size > list_size - SL_FIXED)
                goto fail;
        body = list_size - SL_FIXED - hdr_size;
        why = "signature size does not divide the list";
        if (sig_size < SD_OWNER_SIZE || body % sig_size)
                goto fail;
        mb_memcpy(l.type.b, p + SL_TYPE, 16);
        l.header = p + SL_FIXED;
        l.header_size = hdr_size;
        l.sig_size = sig_size;
        l.n_sigs = body / sig_size;
        l.sigs = l.header + hdr_size;
        *ret = l;
        *off += list_size;
        return MB_OK;
fail:
        if (ret_why)
                *ret_why = why;
        return err;
}

mb_err mb_siglist_next(const uint8_t *buf, size_t size, size_t *off, mb_siglist *ret) {
        return mb_siglist_next_why(buf, size, off, ret, NULL);
}

mb_err mb_siglist_build(const mb_guid *type, const mb_guid *owner, const uint8_t *sig, size_t sig_len,
                        uint8_t *out, size_t out_size, size_t *ret_len) {
        size_t total;

        if (sig_len > UINT32_MAX - SL_FIXED - SD_OWNER_SIZE)
                return MB_ERR_OVERFLOW;
        total = SL_FIXED + SD_OWNER_SIZE + sig_len;
        if (out) {
                if (out_size < total)
                        return MB_ERR_NOSPACE;
                mb_memcpy(out + SL_TYPE, type->b, 16);
                mb_put_le32(out + SL_LIST_SIZE, (uint32_t) total);
                mb_put_le32(out + SL_HEADER_SIZE, 0);
                mb_put_le32(out + SL_SIG_SIZE, (uint32_t) (SD_OWNER_SIZE + sig_len));
                mb_memcpy(out + SL_FIXED, owner->b, 16);
                mb_memcpy(out + SL_FIXED + SD_OWNER_SIZE, sig, sig_len);
        }
        *ret_len = total;
        return MB_OK;
}

/* Every list of buf[0..size) parses and they fill it exactly. */
static mb_err siglists_valid(const uint8_t *buf, size_t size) {
        size_t off = 0;
        mb_siglist l;
        mb_err r;

        while ((r = mb_siglist_next(buf, size, &off, &l)) == MB_OK)
                ;
        return r == MB_END ? MB_OK : r;
}

/* Is the SignatureSize-byte entry `sd` (owner included) one of the entries
 * of a list in buf[0..size) with this type and SignatureSize? */
static bool siglists_hold(const uint8_t *buf, size_t size, const mb_siglist *like, const uint8_t *sd) {
        size_t off = 0;
        mb_siglist l;

        while (mb_siglist_next(buf, size, &off, &l) == MB_OK) {
                if (!mb_guid_eq(&l.type, &like->type) || l.sig_size != like->sig_size)
                        continue;
                for (uint32_t i = 0; i < l.n_sigs; i++)
                        if (mb_memcmp(l.sigs + (size_t) i * l.sig_size, sd, l.sig_size) == 0)
                                return true;
        }
        return false;
}

/* Copy list l's header to out + *tail, then those of its entries that
 * neither out[0..*tail) (old and the lists already kept) nor the entries
 * copied so far hold; a list that keeps nothing leaves *tail as it was. */
static size_t append_list(const mb_siglist *l, uint8_t *out, size_t *tail) {
        size_t head = *tail, first = head + SL_FIXED + l->header_size, end = first;

        mb_memcpy(out + head, l->sigs - l->header_size - SL_FIXED, SL_FIXED + l->header_size);
        for (uint32_t i = 0; i < l->n_sigs; i++) {
                const uint8_t *sd = l->sigs + (size_t) i * l->sig_size;
                bool dup = siglists_hold(out, head, l, sd);

                for (size_t k = first; !dup && k < end; k += l->sig_size)
                        dup = mb_memcmp(out + k, sd, l->sig_size) == 0;
                if (dup)
                        continue;
                mb_memcpy(out + end, sd, l->sig_size);
                end += l->sig_size;
        }
        if (end == first)
                return 0;
        mb_put_le32(out + head + SL_LIST_SIZE, (uint32_t) (end - head));
        *tail = end;
        return (end - first) / l->sig_size;
}

mb_err mb_siglist_append(const uint8_t *old, size_t old_len, const uint8_t *add, size_t add_len,
                         uint8_t *out, size_t out_size, size_t *ret_len, size_t *ret_added) {
        size_t off = 0, tail = old_len, added = 0;
        mb_siglist l;
        mb_err r;

        r = siglists_valid(old, old_len);
        if (r == MB_OK)
                r = siglists_valid(add, add_len);
        if (r != MB_OK)
                return r;
        if (out_size < old_len || out_size - old_len < add_len)
                return MB_ERR_NOSPACE;
        mb_memcpy(out, old, old_len);
        while (mb_siglist_next(add, add_len, &off, &l) == MB_OK)
                added += append_list(&l, out, &tail);
        *ret_len = tail;
        *ret_added = added;
        return MB_OK;
}

size_t mb_siglist_hash_type(const mb_guid *type, uint16_t *ret_alg) {
        static const struct {
                const mb_guid *type;
                uint16_t alg;
        } hashes[] = {
                { &MB_GUID_CERT_SHA1, MB_ALG_SHA1 }, { &MB_GUID_CERT_SHA256, MB_ALG_SHA256 },
                { &MB_GUID_CERT_SHA384, MB_ALG_SHA384 }, { &MB_GUID_CERT_SHA512, MB_ALG_SHA512 },
        };

        for (size_t i = 0; i < MB_ARRAY_SIZE(hashes); i++)
                if (mb_guid_eq(type, hashes[i].type)) {
                        if (ret_alg)
                                *ret_alg = hashes[i].alg;
                        return mb_hash_size(hashes[i].alg);
                }
        return 0;
}

/* EFI_VARIABLE_AUTHENTICATION_2 (UEFI 2.10, 8.2.2): TimeStamp (EFI_TIME,
 * 16 bytes), then WIN_CERTIFICATE_UEFI_GUID: dwLength (the whole
 * WIN_CERTIFICATE_UEFI_GUID), wRevision, wCertificateType, CertType, CertData. */
#define A2_TIME         0
#define A2_LENGTH       16
#define A2_REVISION     20
#define A2_CERT_TYPE    22
#define A2_GUID         24
#define A2_FIXED        40
#define WIN_CERT_FIXED  24      /* dwLength .. CertType */
#define WIN_CERT_REVISION 0x0200
#define WIN_CERT_TYPE_EFI_GUID 0x0EF1

/* Is buf an authenticated payload? Its WIN_CERTIFICATE's revision and type
 * where an EFI_SIGNATURE_LIST has its SignatureHeaderSize (which would be
 * 0x0EF10200 bytes: no list that big fits a file this tool reads). */
static bool is_auth2(const uint8_t *buf, size_t size) {
        return size >= A2_GUID && mb_le16(buf + A2_REVISION) == WIN_CERT_REVISION &&
               mb_le16(buf + A2_CERT_TYPE) == WIN_CERT_TYPE_EFI_GUID;
}

/* The header's layout; *ret_off past it. */
static const char *auth2_check(const uint8_t *buf, size_t size, size_t *ret_off, mb_err *ret_err) {
        const uint8_t *t = buf + A2_TIME;
        uint32_t len;

        *ret_err = MB_ERR_TRUNCATED;
        if (size < A2_FIXED)
                return "authentication header (EFI_VARIABLE_AUTHENTICATION_2) truncated";
        len = mb_le32(buf + A2_LENGTH);
        if (mb_out_of_bounds(size, A2_LENGTH, len))
                return "authentication header's dwLength runs past the end of the file";
        *ret_err = MB_ERR_INVALID;
        if (len <= WIN_CERT_FIXED)
                return "authentication header holds no PKCS#7 signature";
        if (!mb_guid_eq((const mb_guid *) (buf + A2_GUID), &MB_GUID_CERT_TYPE_PKCS7))
                return "authentication header's CertType is not EFI_CERT_TYPE_PKCS7_GUID";
        /* EFI_TIME Pad1, Nanosecond, TimeZone, Daylight, Pad2 "shall be set
         * to 0" (8.2.2); the firmware refuses the update otherwise. */
        for (size_t i = 7; i < MB_EFI_TIME_SIZE; i++)
                if (t[i])
                        return "authentication header's TimeStamp has Pad1, Nanosecond, TimeZone, Daylight "
                               "or Pad2 set (the firmware refuses the update)";
        *ret_off = A2_LENGTH + len;
        return NULL;
}

/* Every list of buf[off..size) parses, they fill it exactly, and a hash
 * type's entries have its size; NULL, or what is wrong (*ret_err). */
static const char *lists_check(const uint8_t *buf, size_t size, size_t off, mb_err *ret_err) {
        const char *why = NULL;
        mb_siglist l;
        mb_err r;

        while ((r = mb_siglist_next_why(buf, size, &off, &l, &why)) == MB_OK) {
                size_t hash = mb_siglist_hash_type(&l.type, NULL);
                if (hash && l.sig_size != SD_OWNER_SIZE + hash) {
                        *ret_err = MB_ERR_INVALID;
                        return "a hash signature list's SignatureSize is not 16 + the hash's size";
                }
        }
        if (r == MB_END)
                return NULL;
        *ret_err = r;
        return why;
}

mb_err mb_siglist_payload(const uint8_t *buf, size_t size, size_t *ret_off, const char **ret_why) {
        size_t start = 0;
        const char *why;
        mb_err r = MB_ERR_TRUNCATED;

        if (is_auth2(buf, size))
                why = auth2_check(buf, size, &start, &r);
        else
                why = size ? NULL : "empty: no EFI_SIGNATURE_LIST";
        if (!why)
                why = lists_check(buf, size, start, &r);
        if (why) {
                *ret_why = why;
                return r;
        }
        *ret_off = start;
        return MB_OK;
}

/* MokManager hashes the CHAR16 keystrokes it read; mokutil widens each
 * password byte to 16 bits. The two agree only for ASCII, so that is all
 * we accept. */
mb_err mb_mok_auth(const uint8_t *moknew, size_t moknew_len, const char *password, size_t pw_len,
                   uint8_t ret_digest[32]) {
        mb_hash h;

        if (pw_len < MOK_PW_MIN || pw_len > MOK_PW_MAX)
                return MB_ERR_TOOLONG;
        for (size_t i = 0; i < pw_len; i++)
                if ((unsigned char) password[i] < 0x20 || (unsigned char) password[i] > 0x7e)
                        return MB_ERR_INVALID;
        if (mb_hash_init(&h, MB_ALG_SHA256) != MB_OK)
                return MB_ERR_UNSUPPORTED;
        mb_hash_update(&h, moknew, moknew_len);
        for (size_t i = 0; i < pw_len; i++) {
                uint8_t u[2] = { (uint8_t) password[i], 0 };
                mb_hash_update(&h, u, 2);
        }
        mb_hash_final(&h, ret_digest);
        return MB_OK;
}
