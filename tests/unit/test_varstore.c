/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The variable store parser/editor and signature lists, on the stores
 * Debian's ovmf package ships (read from /usr/share/OVMF, or $MB_OVMF_DIR),
 * cross-checked with OpenSSL, plus corruptions that must be refused.
 */
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include "testlib.h"
#include "mb/varstore.h"

static const char *ovmf_dir(void) {
        const char *d = getenv("MB_OVMF_DIR");
        return d ? d : "/usr/share/OVMF";
}

/* A heap copy of an OVMF file; NULL (and a message) if it is missing. */
static uint8_t *load(const char *name, size_t *ret_size) {
        char path[512];
        uint8_t *p;

        snprintf(path, sizeof(path), "%s/%s", ovmf_dir(), name);
        p = tl_read_file(path, ret_size);
        if (!p)
                fprintf(stderr, "  cannot read %s (install ovmf: scripts/deps.sh)\n", path);
        return p;
}

/* "PK" -> UTF-16LE with NUL. */
static size_t u16(const char *s, uint8_t *out) {
        size_t i = 0;

        for (; s[i]; i++) {
                out[2 * i] = (uint8_t) s[i];
                out[2 * i + 1] = 0;
        }
        out[2 * i] = out[2 * i + 1] = 0;
        return 2 * i + 2;
}

static mb_err find(const mb_varstore *vs, const char *name, const mb_guid *g, mb_var *ret) {
        uint8_t n[128];
        size_t ns = u16(name, n);

        return mb_varstore_find(vs, n, ns, g, ret);
}

static size_t count_live(const mb_varstore *vs) {
        size_t cursor = 0, n = 0;
        mb_var v;

        while (mb_varstore_next(vs, &cursor, &v) == MB_OK)
                n += v.live;
        return n;
}

/* Number of entries of the given type in a signature database. */
static uint32_t count_sigs(const mb_var *v, const mb_guid *type, uint32_t *ret_lists) {
        size_t off = 0;
        uint32_t n = 0, lists = 0;
        mb_siglist l;

        while (mb_siglist_next(v->data, v->data_size, &off, &l) == MB_OK) {
                lists++;
                if (mb_guid_eq(&l.type, type))
                        n += l.n_sigs;
        }
        *ret_lists = lists;
        return n;
}

/* Does any X.509 entry of v have a subject containing needle? (OpenSSL) */
static bool has_subject(const mb_var *v, const char *needle) {
        size_t off = 0;
        mb_siglist l;

        while (mb_siglist_next(v->data, v->data_size, &off, &l) == MB_OK) {
                if (!mb_guid_eq(&l.type, &MB_GUID_CERT_X509))
                        continue;
                for (uint32_t i = 0; i < l.n_sigs; i++) {
                        const unsigned char *p = l.sigs + (size_t) i * l.sig_size + 16;
                        X509 *x = d2i_X509(NULL, &p, (long) (l.sig_size - 16));
                        char buf[512];
                        bool hit = x && X509_NAME_oneline(X509_get_subject_name(x), buf, sizeof(buf)) &&
                                   strstr(buf, needle);
                        X509_free(x);
                        if (hit)
                                return true;
                }
        }
        return false;
}

/* The snakeoil test certificate the ovmf package ships, as DER. */
static unsigned char *snakeoil_der(int *ret_len) {
        FILE *f = fopen("/usr/share/ovmf/PkKek-1-snakeoil.pem", "r");
        X509 *x = f ? PEM_read_X509(f, NULL, NULL, NULL) : NULL;
        unsigned char *der = NULL;

        if (f)
                fclose(f);
        *ret_len = x ? i2d_X509(x, &der) : -1;
        X509_free(x);
        return der;
}

TEST(debian_stores_open) {
        static const char *const files[] = {
                "OVMF_VARS_4M.fd", "OVMF_VARS_4M.ms.fd", "OVMF_VARS_4M.snakeoil.fd", "OVMF_VARS.fd", "OVMF_VARS.ms.fd",
        };
        for (size_t i = 0; i < MB_ARRAY_SIZE(files); i++) {
                size_t n;
                uint8_t *img = load(files[i], &n);
                mb_varstore vs;

                CHECK(img);
                if (!img)
                        continue;
                CHECK_EQ_INT(mb_varstore_open(img, n, &vs), MB_OK);
                CHECK(vs.ftw_off != 0);
                CHECK(!mb_varstore_ftw_pending(&vs));
                if (strstr(files[i], "ms") || strstr(files[i], "snakeoil"))
                        CHECK(count_live(&vs) > 10);
                else {
                        CHECK_EQ_INT(count_live(&vs), 0);
                        CHECK_EQ_INT(vs.free_off, vs.vars_off);
                }
                free(img);
        }
}

TEST(microsoft_keys) {
        size_t n;
        uint8_t *img = load("OVMF_VARS_4M.ms.fd", &n);
        mb_varstore vs;
        mb_var pk, kek, db, dbx, sbe;
        uint32_t lists;

        CHECK(img);
        if (!img)
                return;
        CHECK_EQ_INT(mb_varstore_open(img, n, &vs), MB_OK);
        CHECK_EQ_INT(find(&vs, "PK", &MB_GUID_GLOBAL_VARIABLE, &pk), MB_OK);
        CHECK_EQ_INT(find(&vs, "KEK", &MB_GUID_GLOBAL_VARIABLE, &kek), MB_OK);
        CHECK_EQ_INT(find(&vs, "db", &MB_GUID_IMAGE_SECURITY_DB, &db), MB_OK);
        CHECK_EQ_INT(find(&vs, "dbx", &MB_GUID_IMAGE_SECURITY_DB, &dbx), MB_OK);
        CHECK_EQ_INT(find(&vs, "db", &MB_GUID_GLOBAL_VARIABLE, &pk), MB_ERR_NOTFOUND);
        CHECK_EQ_INT(count_sigs(&pk, &MB_GUID_CERT_X509, &lists), 1);
        CHECK_EQ_INT(count_sigs(&kek, &MB_GUID_CERT_X509, &lists), 2);
        CHECK_EQ_INT(lists, 2);
        CHECK_EQ_INT(count_sigs(&db, &MB_GUID_CERT_X509, &lists), 2);
        CHECK_EQ_INT(count_sigs(&dbx, &MB_GUID_CERT_SHA256, &lists), 1);
        CHECK_EQ_INT(db.attributes, 0x27);
        CHECK(has_subject(&db, "Microsoft Windows Production PCA 2011"));
        CHECK(has_subject(&db, "Microsoft Corporation UEFI CA 2011"));
        CHECK(has_subject(&kek, "Microsoft Corporation KEK CA 2011"));
        CHECK_EQ_INT(find(&vs, "SecureBootEnable", &MB_GUID_SECURE_BOOT_ENABLE, &sbe), MB_OK);
        CHECK(sbe.data_size == 1 && sbe.data[0] == 1);
        free(img);
}

/* EDK2 keeps superseded copies: CustomMode appears three times in ms.fd,
 * only the last (0) is live. */
TEST(deleted_records_are_skipped) {
        size_t n, cursor = 0, copies = 0;
        uint8_t *img = load("OVMF_VARS_4M.ms.fd", &n);
        mb_varstore vs;
        mb_var v;

        CHECK(img);
        if (!img)
                return;
        CHECK_EQ_INT(mb_varstore_open(img, n, &vs), MB_OK);
        while (mb_varstore_next(&vs, &cursor, &v) == MB_OK)
                copies += v.name_size == 22 && mb_guid_eq(&v.guid, &MB_GUID_CUSTOM_MODE);
        CHECK_EQ_INT(copies, 3);
        CHECK_EQ_INT(find(&vs, "CustomMode", &MB_GUID_CUSTOM_MODE, &v), MB_OK);
        CHECK(v.data_size == 1 && v.data[0] == 0);
        free(img);
}

TEST(enroll_roundtrip) {
        size_t n, len;
        uint8_t *img = load("OVMF_VARS_4M.fd", &n), *orig, name[64], list[4096], ts[16] = { 0xe9, 0x07, 1, 2 };
        int der_len;
        unsigned char *der = snakeoil_der(&der_len);
        mb_varstore vs, again;
        mb_var v;

        CHECK(img && der && der_len > 0);
        if (!img || !der)
                goto out;
        orig = malloc(n);
        memcpy(orig, img, n);
        CHECK_EQ_INT(mb_varstore_open(img, n, &vs), MB_OK);
        CHECK_EQ_INT(mb_siglist_build(&MB_GUID_CERT_X509, &MB_GUID_SHIM_LOCK, der, (size_t) der_len,
                                      list, sizeof(list), &len), MB_OK);
        CHECK_EQ_INT(len, 28 + 16 + (size_t) der_len);
        CHECK_EQ_INT(mb_varstore_set(&vs, name, u16("db", name), &MB_GUID_IMAGE_SECURITY_DB, 0x27, ts,
                                     list, len), MB_OK);
        /* Re-parse from scratch: header untouched, record readable. */
        CHECK(memcmp(img, orig, (size_t) vs.vars_off) == 0);
        CHECK_EQ_INT(mb_varstore_open(img, n, &again), MB_OK);
        CHECK_EQ_INT(find(&again, "db", &MB_GUID_IMAGE_SECURITY_DB, &v), MB_OK);
        CHECK_EQ_INT(v.data_size, len);
        CHECK(memcmp(v.data, list, len) == 0);
        CHECK(memcmp(v.timestamp, ts, 16) == 0);
        CHECK_EQ_INT(v.attributes, 0x27);
        CHECK_EQ_INT(v.state, MB_VAR_ADDED);
        CHECK_EQ_INT(again.free_off, vs.free_off);
        CHECK_EQ_INT(again.free_off % 4, 0);
        /* Everything past the new record is still erased flash. */
        CHECK(memcmp(img + vs.free_off, orig + vs.free_off, n - vs.free_off) == 0);
        free(orig);
out:
        OPENSSL_free(der);
        free(img);
}

TEST(replace_and_delete) {
        size_t n, cursor = 0, records = 0;
        uint8_t *img = load("OVMF_VARS_4M.fd", &n), name[64], a = 1, b = 0;
        mb_varstore vs;
        mb_var v;
        size_t ns = u16("CustomMode", name);

        CHECK(img);
        if (!img)
                return;
        CHECK_EQ_INT(mb_varstore_open(img, n, &vs), MB_OK);
        CHECK_EQ_INT(mb_varstore_set(&vs, name, ns, &MB_GUID_CUSTOM_MODE, 3, NULL, &a, 1), MB_OK);
        CHECK_EQ_INT(mb_varstore_set(&vs, name, ns, &MB_GUID_CUSTOM_MODE, 3, NULL, &b, 1), MB_OK);
        CHECK_EQ_INT(count_live(&vs), 1);
        while (mb_varstore_next(&vs, &cursor, &v) == MB_OK) {
                records++;
                if (records == 1)
                        CHECK_EQ_INT(v.state, MB_VAR_ADDED & MB_VAR_DELETED);
        }
        CHECK_EQ_INT(records, 2);
        CHECK_EQ_INT(find(&vs, "CustomMode", &MB_GUID_CUSTOM_MODE, &v), MB_OK);
        CHECK(v.data[0] == 0);
        CHECK_EQ_INT(mb_varstore_delete(&vs, name, ns, &MB_GUID_CUSTOM_MODE), MB_OK);
        CHECK_EQ_INT(find(&vs, "CustomMode", &MB_GUID_CUSTOM_MODE, &v), MB_ERR_NOTFOUND);
        CHECK_EQ_INT(mb_varstore_delete(&vs, name, ns, &MB_GUID_CUSTOM_MODE), MB_ERR_NOTFOUND);
        free(img);
}

/* VAR_ADDED & VAR_IN_DELETED_TRANSITION: live only without a VAR_ADDED twin. */
TEST(in_deleted_transition) {
        size_t n;
        uint8_t *img = load("OVMF_VARS_4M.fd", &n), name[64], a = 1;
        mb_varstore vs;
        mb_var v;
        size_t ns = u16("Test", name), first;

        CHECK(img);
        if (!img)
                return;
        CHECK_EQ_INT(mb_varstore_open(img, n, &vs), MB_OK);
        first = vs.free_off;
        CHECK_EQ_INT(mb_varstore_set(&vs, name, ns, &MB_GUID_SHIM_LOCK, 3, NULL, &a, 1), MB_OK);
        img[first + 2] = MB_VAR_ADDED & MB_VAR_IN_DELETED_TRANSITION;
        CHECK_EQ_INT(find(&vs, "Test", &MB_GUID_SHIM_LOCK, &v), MB_OK);
        CHECK_EQ_INT(v.off, first);
        /* A crash after the new copy was written: the new one wins. */
        CHECK_EQ_INT(mb_varstore_open(img, n, &vs), MB_OK);
        memcpy(img + vs.free_off, img + first, 4 * ((60 + ns + 1 + 3) / 4));
        img[vs.free_off + 2] = MB_VAR_ADDED;
        CHECK_EQ_INT(mb_varstore_open(img, n, &vs), MB_OK);
        CHECK_EQ_INT(count_live(&vs), 1);
        CHECK_EQ_INT(find(&vs, "Test", &MB_GUID_SHIM_LOCK, &v), MB_OK);
        CHECK(v.off != first);
        free(img);
}

TEST(corruption_refused) {
        size_t n;
        uint8_t *img = load("OVMF_VARS_4M.ms.fd", &n), *bad;
        mb_varstore vs;
        mb_var v;
        size_t cursor = 0;

        CHECK(img);
        if (!img)
                return;
        bad = malloc(n);
        CHECK_EQ_INT(mb_varstore_open(img, 10, &vs), MB_ERR_TRUNCATED);
        CHECK_EQ_INT(mb_varstore_open(img, n - 1, &vs), MB_ERR_TRUNCATED);
        memcpy(bad, img, n);
        bad[40] ^= 1;                           /* "_FVH" */
        CHECK_EQ_INT(mb_varstore_open(bad, n, &vs), MB_ERR_INVALID);
        memcpy(bad, img, n);
        bad[16] ^= 1;                           /* FileSystemGuid */
        CHECK_EQ_INT(mb_varstore_open(bad, n, &vs), MB_ERR_INVALID);
        memcpy(bad, img, n);
        bad[44] ^= 0x10;                        /* Attributes: checksum no longer adds up */
        CHECK_EQ_INT(mb_varstore_open(bad, n, &vs), MB_ERR_INVALID);
        memcpy(bad, img, n);
        bad[0x48] ^= 1;                         /* store GUID: another format */
        CHECK_EQ_INT(mb_varstore_open(bad, n, &vs), MB_ERR_UNSUPPORTED);
        memcpy(bad, img, n);
        bad[0x48 + 20] = 0;                     /* store Format */
        CHECK_EQ_INT(mb_varstore_open(bad, n, &vs), MB_ERR_UNSUPPORTED);
        memcpy(bad, img, n);
        mb_put_le32(bad + 0x48 + 16, 0x7fffffff); /* store Size past the FV */
        CHECK_EQ_INT(mb_varstore_open(bad, n, &vs), MB_ERR_INVALID);
        /* An absurd NameSize or DataSize in the 5th record. */
        CHECK_EQ_INT(mb_varstore_open(img, n, &vs), MB_OK);
        for (int i = 0; i < 5; i++)
                CHECK_EQ_INT(mb_varstore_next(&vs, &cursor, &v), MB_OK);
        memcpy(bad, img, n);
        bad[v.off + 36 + 2] = 0x7f;
        CHECK_EQ_INT(mb_varstore_open(bad, n, &vs), MB_ERR_INVALID);
        memcpy(bad, img, n);
        mb_put_le32(bad + v.off + 40, 0xffffffff);
        CHECK_EQ_INT(mb_varstore_open(bad, n, &vs), MB_ERR_INVALID);
        free(bad);
        free(img);
}

TEST(no_room_leaves_image_untouched) {
        size_t n, big;
        uint8_t *img = load("OVMF_VARS.fd", &n), *copy, *data, name[64];
        mb_varstore vs;
        size_t ns = u16("Big", name);

        CHECK(img);
        if (!img)
                return;
        CHECK_EQ_INT(mb_varstore_open(img, n, &vs), MB_OK);
        big = vs.vars_end - vs.free_off;        /* header + name make it too big */
        data = calloc(1, big);
        copy = malloc(n);
        memcpy(copy, img, n);
        CHECK_EQ_INT(mb_varstore_set(&vs, name, ns, &MB_GUID_SHIM_LOCK, 3, NULL, data, big), MB_ERR_NOSPACE);
        CHECK(memcmp(img, copy, n) == 0);
        /* Exactly filling the store is fine. */
        CHECK_EQ_INT(mb_varstore_set(&vs, name, ns, &MB_GUID_SHIM_LOCK, 3, NULL, data, big - 60 - ns), MB_OK);
        CHECK_EQ_INT(vs.free_off, vs.vars_end);
        CHECK_EQ_INT(mb_varstore_set(&vs, name, ns, &MB_GUID_SHIM_LOCK, 3, NULL, data, 0), MB_ERR_NOSPACE);
        CHECK_EQ_INT(mb_varstore_open(img, n, &vs), MB_OK);
        CHECK_EQ_INT(count_live(&vs), 1);
        free(data);
        free(copy);
        free(img);
}

TEST(unerased_free_space_and_bad_names) {
        size_t n;
        uint8_t *img = load("OVMF_VARS_4M.fd", &n), name[64], odd[3] = { 'A', 0, 0 }, d = 0;
        mb_varstore vs;

        CHECK(img);
        if (!img)
                return;
        CHECK_EQ_INT(mb_varstore_open(img, n, &vs), MB_OK);
        CHECK_EQ_INT(mb_varstore_set(&vs, odd, 3, &MB_GUID_SHIM_LOCK, 3, NULL, &d, 1), MB_ERR_INVALID);
        CHECK_EQ_INT(mb_varstore_set(&vs, name, 2, &MB_GUID_SHIM_LOCK, 3, NULL, &d, 1), MB_ERR_INVALID);
        img[vs.free_off + 10] = 0;
        CHECK_EQ_INT(mb_varstore_set(&vs, name, u16("X", name), &MB_GUID_SHIM_LOCK, 3, NULL, &d, 1),
                     MB_ERR_INVALID);
        free(img);
}

/* An FTW write queue entry allocated but not completed blocks editing. */
TEST(ftw_pending_write) {
        size_t n;
        uint8_t *img = load("OVMF_VARS_4M.fd", &n), name[64], d = 0;
        mb_varstore vs;

        CHECK(img);
        if (!img)
                return;
        CHECK_EQ_INT(mb_varstore_open(img, n, &vs), MB_OK);
        CHECK_EQ_INT(vs.ftw_off, 0x41000);
        img[vs.ftw_off + 32] = 0xFE;            /* HeaderAllocated, not Complete */
        mb_put_le32(img + vs.ftw_off + 32 + 24, 1);
        memset(img + vs.ftw_off + 32 + 28, 0, 4);
        memset(img + vs.ftw_off + 32 + 32, 0, 8);
        CHECK(mb_varstore_ftw_pending(&vs));
        CHECK_EQ_INT(mb_varstore_set(&vs, name, u16("X", name), &MB_GUID_SHIM_LOCK, 3, NULL, &d, 1),
                     MB_ERR_UNSUPPORTED);
        img[vs.ftw_off + 32] = 0xF8;            /* ... now completed */
        CHECK(!mb_varstore_ftw_pending(&vs));
        free(img);
}

TEST(siglist_bounds) {
        uint8_t buf[128] = { 0 };
        size_t off = 0, len;
        mb_siglist l;
        uint8_t sig[32] = { 1 };

        CHECK_EQ_INT(mb_siglist_build(&MB_GUID_CERT_SHA256, &MB_GUID_SHIM_LOCK, sig, 32, buf, 60, &len),
                     MB_ERR_NOSPACE);
        CHECK_EQ_INT(mb_siglist_build(&MB_GUID_CERT_SHA256, &MB_GUID_SHIM_LOCK, sig, 32, buf, sizeof(buf), &len),
                     MB_OK);
        CHECK_EQ_INT(len, 76);
        CHECK_EQ_INT(mb_siglist_next(buf, len, &off, &l), MB_OK);
        CHECK_EQ_INT(l.n_sigs, 1);
        CHECK_EQ_INT(l.sig_size, 48);
        CHECK(memcmp(l.sigs + 16, sig, 32) == 0);
        CHECK_EQ_INT(mb_siglist_next(buf, len, &off, &l), MB_END);
        off = 0;
        CHECK_EQ_INT(mb_siglist_next(buf, len - 1, &off, &l), MB_ERR_TRUNCATED);
        mb_put_le32(buf + 24, 0);               /* SignatureSize 0 */
        CHECK_EQ_INT(mb_siglist_next(buf, len, &off, &l), MB_ERR_INVALID);
        mb_put_le32(buf + 24, 47);              /* entries do not tile the list */
        CHECK_EQ_INT(mb_siglist_next(buf, len, &off, &l), MB_ERR_INVALID);
        mb_put_le32(buf + 24, 48);
        mb_put_le32(buf + 20, 0xfffffff0);      /* header larger than the list */
        CHECK_EQ_INT(mb_siglist_next(buf, len, &off, &l), MB_ERR_INVALID);
        mb_put_le32(buf + 16, 27);
        CHECK_EQ_INT(mb_siglist_next(buf, len, &off, &l), MB_ERR_TRUNCATED);
        CHECK_EQ_INT(off, 0);
}

/* One list of n SHA-256 entries, entry i holding byte vals[i] 32 times,
 * owner `owner`, written by hand (UEFI 2.10, 32.4.1) rather than by
 * mb_siglist_build, so the expected bytes do not come from the code
 * under test. */
static size_t hand_list(uint8_t *out, const uint8_t *vals, size_t n, uint8_t owner) {
        memcpy(out, MB_GUID_CERT_SHA256.b, 16);
        mb_put_le32(out + 16, (uint32_t) (28 + 48 * n));
        mb_put_le32(out + 20, 0);
        mb_put_le32(out + 24, 48);
        for (size_t i = 0; i < n; i++) {
                memset(out + 28 + 48 * i, owner, 16);
                memset(out + 28 + 48 * i + 16, vals[i], 32);
        }
        return 28 + 48 * n;
}

TEST(siglist_append_dedup) {
        uint8_t old[256], add[512], want[1024], out[1024];
        size_t ol, al = 0, wl, len = 0, added = 99;

        ol = hand_list(old, (const uint8_t[]) { 1, 2 }, 2, 0xaa);
        /* List 1: 2 (present), 3 (new), 3 again (kept once); list 2: 1 with
         * another owner (a different EFI_SIGNATURE_DATA: kept); list 3: only
         * 1 with the old owner (dropped whole). */
        al += hand_list(add + al, (const uint8_t[]) { 2, 3, 3 }, 3, 0xaa);
        al += hand_list(add + al, (const uint8_t[]) { 1 }, 1, 0xbb);
        al += hand_list(add + al, (const uint8_t[]) { 1 }, 1, 0xaa);
        wl = ol;
        memcpy(want, old, ol);
        wl += hand_list(want + wl, (const uint8_t[]) { 3 }, 1, 0xaa);
        wl += hand_list(want + wl, (const uint8_t[]) { 1 }, 1, 0xbb);
        CHECK_EQ_INT(mb_siglist_append(old, ol, add, al, out, sizeof(out), &len, &added), MB_OK);
        CHECK_EQ_INT(len, wl);
        CHECK_EQ_INT(added, 2);
        CHECK(memcmp(out, want, wl) == 0);
        /* Appending to nothing creates; appending all-duplicates is a no-op. */
        CHECK_EQ_INT(mb_siglist_append(NULL, 0, old, ol, out, sizeof(out), &len, &added), MB_OK);
        CHECK(len == ol && added == 2 && memcmp(out, old, ol) == 0);
        CHECK_EQ_INT(mb_siglist_append(old, ol, old, ol, out, sizeof(out), &len, &added), MB_OK);
        CHECK(len == ol && added == 0);
        /* Malformed input on either side, or no room: refused, outputs kept. */
        len = added = 7;
        CHECK_EQ_INT(mb_siglist_append(old, ol - 1, add, al, out, sizeof(out), &len, &added), MB_ERR_TRUNCATED);
        CHECK_EQ_INT(mb_siglist_append(old, ol, add, al - 1, out, sizeof(out), &len, &added), MB_ERR_TRUNCATED);
        CHECK_EQ_INT(mb_siglist_append(old, ol, add, al, out, ol + al - 1, &len, &added), MB_ERR_NOSPACE);
        CHECK(len == 7 && added == 7);
}

TEST(guid_text) {
        mb_guid g;

        CHECK_EQ_INT(mb_guid_parse("8be4df61-93ca-11d2-aa0d-00e098032b8c", 36, &g), MB_OK);
        CHECK(mb_guid_eq(&g, &MB_GUID_GLOBAL_VARIABLE));
        CHECK_EQ_INT(mb_guid_parse("605DAB50-E046-4300-ABB6-3DD810DD8B23", 36, &g), MB_OK);
        CHECK(mb_guid_eq(&g, &MB_GUID_SHIM_LOCK));
        CHECK_EQ_INT(mb_guid_parse("605dab50-e046-4300-abb6-3dd810dd8b2", 35, &g), MB_ERR_INVALID);
        CHECK_EQ_INT(mb_guid_parse("605dab50-e046-4300-abb6x3dd810dd8b23", 36, &g), MB_ERR_INVALID);
        CHECK_EQ_INT(mb_guid_parse("605dab50-e046-4300-abb6-3dd810dd8bzz", 36, &g), MB_ERR_INVALID);
}

/* MokAuth against an independent computation with OpenSSL. */
TEST(mok_auth) {
        const uint8_t moknew[] = "not really a signature list";
        const char *pw = "s3cret pw";
        uint8_t got[32], want[32], wide[64];
        unsigned int wl;
        EVP_MD_CTX *c = EVP_MD_CTX_new();

        for (size_t i = 0; i < strlen(pw); i++) {
                wide[2 * i] = (uint8_t) pw[i];
                wide[2 * i + 1] = 0;
        }
        EVP_DigestInit_ex(c, EVP_sha256(), NULL);
        EVP_DigestUpdate(c, moknew, sizeof(moknew));
        EVP_DigestUpdate(c, wide, 2 * strlen(pw));
        EVP_DigestFinal_ex(c, want, &wl);
        EVP_MD_CTX_free(c);
        CHECK_EQ_INT(mb_mok_auth(moknew, sizeof(moknew), pw, strlen(pw), got), MB_OK);
        CHECK(memcmp(got, want, 32) == 0);
        CHECK_EQ_INT(mb_mok_auth(moknew, sizeof(moknew), "", 0, got), MB_ERR_TOOLONG);
        CHECK_EQ_INT(mb_mok_auth(moknew, sizeof(moknew), "caf\xc3\xa9", 5, got), MB_ERR_INVALID);
}

int main(void) {
        RUN(debian_stores_open);
        RUN(microsoft_keys);
        RUN(deleted_records_are_skipped);
        RUN(enroll_roundtrip);
        RUN(replace_and_delete);
        RUN(in_deleted_transition);
        RUN(corruption_refused);
        RUN(no_room_leaves_image_untouched);
        RUN(unerased_free_space_and_bad_names);
        RUN(ftw_pending_write);
        RUN(siglist_bounds);
        RUN(siglist_append_dedup);
        RUN(guid_text);
        RUN(mok_auth);
        TL_EXIT();
}
