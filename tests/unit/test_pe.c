/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * PE/COFF parsing and the Authenticode image hash.
 *
 * Oracles, none of them sharing code with src/pe.c:
 *  - the digest inside each signed image's own signature (the PKCS#7
 *    SpcIndirectDataContent messageDigest, decoded here with OpenSSL);
 *  - `pesign -h` (SHA-256 and SHA-1) when pesign is installed;
 *  - `objcopy -O binary --only-section=.sbat` for section lookup;
 *  - a hand-built PE32 image whose hash is the concatenation of ranges
 *    spelled out in the test, hashed with OpenSSL.
 * Real images come from Debian packages (scripts/deps.sh installs them):
 * shim-signed and grub-efi-amd64-signed must be present; the kernel,
 * mshimx64.efi and the others are used when they exist.
 */
#include <openssl/asn1.h>
#include <openssl/evp.h>
#include <openssl/objects.h>
#include <openssl/pkcs7.h>
#include <openssl/x509.h>
#include <stdint.h>
#include <unistd.h>
#include "testlib.h"
#include "mb/pe.h"
#include "mb/sha.h"

#define SHIM "efi:usr/lib/shim/shimx64.efi.signed"
#define GRUB "efi:usr/lib/grub/x86_64-efi-signed/grubx64.efi.signed"

static const char *const images[] = {
        SHIM, GRUB,
        "efi:usr/lib/shim/mmx64.efi.signed",
        "efi:usr/lib/shim/fbx64.efi",              /* unsigned */
        "efi:usr/lib/grub/x86_64-efi-signed/gcdx64.efi.signed",
        "build/kernel/vmlinuz",                    /* Debian's signed kernel */
        "build/mshimx64.efi",                      /* ours, unsigned */
};

typedef struct blob {
        uint8_t *data;
        size_t size;
} blob;

/* A real image; false when it is missing or empty. */
static bool load(const char *path, blob *ret) {
        ret->data = tl_read_file(path, &ret->size);
        if (ret->data && ret->size == 0) {
                free(ret->data);
                ret->data = NULL;
        }
        return ret->data != NULL;
}

static void hex(const uint8_t *d, size_t n, char *out) {
        for (size_t i = 0; i < n; i++)
                sprintf(out + 2 * i, "%02x", d[i]);
}

/* The messageDigest of the SpcIndirectDataContent in a PKCS#7
 * SignedData (Authenticode PE, "SpcIndirectDataContent"): SEQUENCE {
 * SpcAttributeTypeAndOptionalValue, DigestInfo { AlgorithmIdentifier,
 * OCTET STRING } }. Returns the digest length, 0 on failure. */
static size_t signed_digest(const uint8_t *der, size_t len, int *ret_nid, uint8_t *out) {
        const unsigned char *p = der, *q, *end;
        PKCS7 *p7 = d2i_PKCS7(NULL, &p, (long) len);
        size_t n = 0;
        long l;
        int tag, cls;

        if (!p7 || !PKCS7_type_is_signed(p7))
                goto out;
        {
                PKCS7 *inner = p7->d.sign->contents;
                ASN1_TYPE *t = inner ? inner->d.other : NULL;
                X509_ALGOR *alg;
                if (!t || t->type != V_ASN1_SEQUENCE)
                        goto out;
                q = t->value.sequence->data;
                end = q + t->value.sequence->length;
                /* Outer SEQUENCE, then skip the first element. */
                if (ASN1_get_object(&q, &l, &tag, &cls, end - q) & 0x80 || tag != V_ASN1_SEQUENCE)
                        goto out;
                if (ASN1_get_object(&q, &l, &tag, &cls, end - q) & 0x80)
                        goto out;
                q += l;
                /* DigestInfo. */
                if (ASN1_get_object(&q, &l, &tag, &cls, end - q) & 0x80 || tag != V_ASN1_SEQUENCE)
                        goto out;
                alg = d2i_X509_ALGOR(NULL, &q, end - q);
                if (!alg)
                        goto out;
                *ret_nid = OBJ_obj2nid(alg->algorithm);
                X509_ALGOR_free(alg);
                if (ASN1_get_object(&q, &l, &tag, &cls, end - q) & 0x80 || tag != V_ASN1_OCTET_STRING ||
                    l > MB_HASH_MAX)
                        goto out;
                memcpy(out, q, (size_t) l);
                n = (size_t) l;
        }
out:
        PKCS7_free(p7);
        return n;
}

/* "hash: HEX" from `pesign -h`; false when pesign is not installed. */
static bool pesign_hash(const char *path, const char *alg, char *out, size_t out_size) {
        char cmd[512], line[256];
        FILE *p;
        bool ok = false;

        if (access("/usr/bin/pesign", X_OK) != 0)
                return false;
        snprintf(cmd, sizeof(cmd), "pesign -h -d %s -i '%s' 2>/dev/null", alg, tl_path(path));
        p = popen(cmd, "r");
        if (!p)
                return false;
        while (fgets(line, sizeof(line), p))
                if (sscanf(line, "hash: %127s", out) == 1 && strlen(out) < out_size)
                        ok = true;
        pclose(p);
        return ok;
}

static int n_signed_checked;

static void check_image(const char *path) {
        blob b;
        mb_pe pe;
        uint8_t d256[32], d1[20], sig[MB_HASH_MAX];
        char h[2 * MB_HASH_MAX + 1], oracle[160];
        const uint8_t *table;
        size_t tsize, off = 0, n;
        mb_pe_cert cert;
        int nid = 0;

        if (!load(path, &b)) {
                printf("note: %s not present, skipped\n", path);
                return;
        }
        CHECK_EQ_INT(mb_pe_parse(b.data, b.size, &pe), MB_OK);
        /* Real shim, GRUB, MokManager, kernel and mshim: loadable. */
        CHECK_EQ_INT(mb_pe_check_loadable(&pe), MB_OK);
        CHECK_EQ_INT(mb_pe_authenticode(b.data, b.size, MB_ALG_SHA256, d256), MB_OK);
        CHECK_EQ_INT(mb_pe_authenticode(b.data, b.size, MB_ALG_SHA1, d1), MB_OK);
        if (pesign_hash(path, "sha256", oracle, sizeof(oracle))) {
                hex(d256, 32, h);
                if (strcmp(h, oracle) != 0)
                        fprintf(stderr, "  %s: sha256 %s, pesign says %s\n", path, h, oracle);
                CHECK(strcmp(h, oracle) == 0);
        }
        if (pesign_hash(path, "sha1", oracle, sizeof(oracle))) {
                hex(d1, 20, h);
                CHECK(strcmp(h, oracle) == 0);
        }
        if (mb_pe_cert_table(&pe, &table, &tsize) != MB_OK) {
                CHECK_EQ_INT(pe.cert_size, 0);
                goto out;
        }
        /* Every signature in the table must name the digest we computed. */
        while (mb_pe_cert_next(table, tsize, &off, &cert) == MB_OK) {
                CHECK_EQ_INT(cert.revision, MB_PE_WIN_CERT_REVISION_2_0);
                CHECK_EQ_INT(cert.type, MB_PE_WIN_CERT_TYPE_PKCS_SIGNED);
                n = signed_digest(cert.data, cert.size, &nid, sig);
                CHECK(n == 32 && nid == NID_sha256);
                CHECK(n == 32 && memcmp(sig, d256, 32) == 0);
                n_signed_checked++;
        }
out:
        free(b.data);
}

TEST(real_images_match_oracles) {
        for (size_t i = 0; i < MB_ARRAY_SIZE(images); i++)
                check_image(images[i]);
        printf("note: %d signatures checked against their images\n", n_signed_checked);
        /* shim and GRUB are guaranteed by scripts/deps.sh. */
        CHECK(n_signed_checked >= 2);
}

TEST(real_sbat_section_matches_objcopy) {
        static const char *const files[] = { SHIM, GRUB };

        for (size_t i = 0; i < MB_ARRAY_SIZE(files); i++) {
                blob b, o;
                mb_pe pe;
                const uint8_t *p = NULL;
                size_t n = 0;
                char cmd[512];

                if (!load(files[i], &b)) {
                        CHECK(!"signed image missing: run make deps");
                        continue;
                }
                snprintf(cmd, sizeof(cmd), "objcopy -O binary --only-section=.sbat '%s' /tmp/mb-test-pe.sbat", tl_path(files[i]));
                CHECK(system(cmd) == 0);
                CHECK(load("/tmp/mb-test-pe.sbat", &o));
                CHECK_EQ_INT(mb_pe_parse(b.data, b.size, &pe), MB_OK);
                CHECK_EQ_INT(mb_pe_find_section(&pe, ".sbat", &p, &n), MB_OK);
                CHECK_EQ_INT(n, o.size);
                CHECK(n == o.size && memcmp(p, o.data, n) == 0);
                CHECK_EQ_INT(mb_pe_find_section(&pe, ".nosuch", &p, &n), MB_ERR_NOTFOUND);
                free(o.data);
                /* Names longer than 8 bytes, through the COFF string
                 * table, as objcopy finds them (shim's .sbatlevel and
                 * .vendor_cert; none in GRUB: objcopy writes nothing). */
                for (size_t k = 0; k < 2; k++) {
                        const char *name = k ? ".vendor_cert" : ".sbatlevel";
                        snprintf(cmd, sizeof(cmd), "objcopy -O binary --only-section=%s '%s' /tmp/mb-test-pe.sbat",
                                 name, tl_path(files[i]));
                        CHECK(system(cmd) == 0);
                        if (load("/tmp/mb-test-pe.sbat", &o)) {
                                CHECK_EQ_INT(mb_pe_find_section(&pe, name, &p, &n), MB_OK);
                                CHECK(n == o.size && memcmp(p, o.data, n) == 0);
                                free(o.data);
                        } else {
                                CHECK(i == 1);  /* only GRUB lacks them */
                                CHECK_EQ_INT(mb_pe_find_section(&pe, name, &p, &n), MB_ERR_NOTFOUND);
                        }
                }
                free(b.data);
        }
        unlink("/tmp/mb-test-pe.sbat");
}

/* ---- a hand-built PE32 image ------------------------------------------- */

#define T_LFANEW   0x40
#define T_OPT      (T_LFANEW + 4 + 20)
#define T_OPTSIZE  (96 + 16 * 8)
#define T_SECT     (T_OPT + T_OPTSIZE)
#define T_HDRS     0x200
#define T_SIZE     0x600

/* Three sections listed out of file order: B at 0x400, A at 0x200, an
 * empty one; then 0x100 bytes of extra data at 0x500. */
static void build_pe32(uint8_t *b, uint32_t ndirs, uint32_t cert_off, uint32_t cert_size) {
        static const struct { const char *name; uint32_t raw_off, raw_size; } s[] = {
                { ".b", 0x400, 0x100 }, { ".a", 0x200, 0x200 }, { ".bss", 0, 0 },
        };

        memset(b, 0, T_SIZE);
        for (size_t i = 0; i < T_SIZE; i++)
                b[i] = (uint8_t) (i * 7 + 3);
        memset(b, 0, T_HDRS);
        b[0] = 'M'; b[1] = 'Z';
        mb_put_le32(b + 0x3c, T_LFANEW);
        memcpy(b + T_LFANEW, "PE\0\0", 4);
        mb_put_le16(b + T_LFANEW + 4, 0x14c);                  /* i386 */
        mb_put_le16(b + T_LFANEW + 4 + 2, MB_ARRAY_SIZE(s));
        mb_put_le16(b + T_LFANEW + 4 + 16, T_OPTSIZE);
        mb_put_le16(b + T_OPT, MB_PE_MAGIC_PE32);
        mb_put_le32(b + T_OPT + 60, T_HDRS);
        mb_put_le32(b + T_OPT + 64, 0xdeadbeef);               /* CheckSum: skipped */
        mb_put_le32(b + T_OPT + 92, ndirs);
        for (uint32_t d = 0; d < 16; d++)                      /* filler in every directory */
                mb_put_le32(b + T_OPT + 96 + d * 8, 0x1000 * (d + 1));
        mb_put_le32(b + T_OPT + 96 + 4 * 8, cert_off);
        mb_put_le32(b + T_OPT + 96 + 4 * 8 + 4, cert_size);
        for (size_t i = 0; i < MB_ARRAY_SIZE(s); i++) {
                uint8_t *h = b + T_SECT + 40 * i;
                memcpy(h, s[i].name, strlen(s[i].name));
                mb_put_le32(h + 8, s[i].raw_size);
                mb_put_le32(h + 12, 0x1000 * (uint32_t) (i + 1));
                mb_put_le32(h + 16, s[i].raw_size);
                mb_put_le32(h + 20, s[i].raw_off);
        }
}

static void md_ranges(const EVP_MD *md, const uint8_t *b, const size_t (*r)[2], size_t n, uint8_t *out) {
        EVP_MD_CTX *c = EVP_MD_CTX_new();

        EVP_DigestInit_ex(c, md, NULL);
        for (size_t i = 0; i < n; i++)
                EVP_DigestUpdate(c, b + r[i][0], r[i][1] - r[i][0]);
        EVP_DigestFinal_ex(c, out, NULL);
        EVP_MD_CTX_free(c);
}

static void sha256_ranges(const uint8_t *b, const size_t (*r)[2], size_t n, uint8_t *out) {
        md_ranges(EVP_sha256(), b, r, n, out);
}

/* A long section name ("/<offset>" into the COFF string table, PE Format
 * "Section Table") is resolved inside the file only; anything odd is not
 * found, never read out of bounds. */
TEST(long_section_names) {
        uint8_t b[T_SIZE];
        const uint8_t *p;
        size_t n;
        mb_pe pe;
        const size_t coff = T_LFANEW + 4;

        build_pe32(b, 16, 0, 0);
        memcpy(b + T_SECT, "/4\0\0\0\0\0\0", 8);          /* section .b, data at 0x400 */
        mb_put_le32(b + coff + 8, 0x180);                       /* string table at 0x180 */
        memcpy(b + 0x184, ".vendor_cert", 13);
        CHECK_EQ_INT(mb_pe_parse(b, T_SIZE, &pe), MB_OK);
        CHECK_EQ_INT(mb_pe_find_section(&pe, ".vendor_cert", &p, &n), MB_OK);
        CHECK(p == b + 0x400 && n == 0x100);
        CHECK_EQ_INT(mb_pe_find_section(&pe, ".vendor_cer", &p, &n), MB_ERR_NOTFOUND);
        CHECK_EQ_INT(mb_pe_find_section(&pe, ".vendor_certs", &p, &n), MB_ERR_NOTFOUND);
        /* The name runs past the end of the file; a symbol table beyond
         * it; symbols that overflow; a name that is not a number. */
        mb_put_le32(b + coff + 8, T_SIZE - 8);
        memcpy(b + T_SIZE - 4, ".ven", 4);
        CHECK_EQ_INT(mb_pe_find_section(&pe, ".vendor_cert", &p, &n), MB_ERR_NOTFOUND);
        mb_put_le32(b + coff + 8, 0xfffffff0);
        CHECK_EQ_INT(mb_pe_find_section(&pe, ".vendor_cert", &p, &n), MB_ERR_NOTFOUND);
        mb_put_le32(b + coff + 8, 0x180);
        mb_put_le32(b + coff + 12, 0xffffffff);
        CHECK_EQ_INT(mb_pe_find_section(&pe, ".vendor_cert", &p, &n), MB_ERR_NOTFOUND);
        mb_put_le32(b + coff + 12, 0);
        memcpy(b + T_SECT, "/4x", 3);
        CHECK_EQ_INT(mb_pe_find_section(&pe, ".vendor_cert", &p, &n), MB_ERR_NOTFOUND);
}

TEST(pe32_hash_ranges) {
        uint8_t b[T_SIZE], want[32], got[32];
        const size_t dir4 = T_OPT + 96 + 32;
        /* Headers minus CheckSum and directory 4; .a, .b; extra data. */
        const size_t unsigned_r[][2] = {
                { 0, T_OPT + 64 }, { T_OPT + 68, dir4 }, { dir4 + 8, T_HDRS },
                { 0x200, 0x400 }, { 0x400, 0x500 }, { 0x500, T_SIZE },
        };
        /* Signed: a certificate table over the last 0x80 bytes. */
        const size_t signed_r[][2] = {
                { 0, T_OPT + 64 }, { T_OPT + 68, dir4 }, { dir4 + 8, T_HDRS },
                { 0x200, 0x400 }, { 0x400, 0x500 }, { 0x500, T_SIZE - 0x80 },
        };
        /* Four directories: no certificate entry to skip. */
        const size_t nodir_r[][2] = {
                { 0, T_OPT + 64 }, { T_OPT + 68, T_HDRS },
                { 0x200, 0x400 }, { 0x400, 0x500 }, { 0x500, T_SIZE },
        };
        mb_pe pe;

        build_pe32(b, 16, 0, 0);
        CHECK_EQ_INT(mb_pe_parse(b, sizeof(b), &pe), MB_OK);
        CHECK_EQ_INT(pe.magic, MB_PE_MAGIC_PE32);
        CHECK_EQ_INT(pe.n_sections, 3);
        sha256_ranges(b, unsigned_r, MB_ARRAY_SIZE(unsigned_r), want);
        CHECK_EQ_INT(mb_pe_authenticode(b, sizeof(b), MB_ALG_SHA256, got), MB_OK);
        CHECK(memcmp(want, got, 32) == 0);

        build_pe32(b, 16, T_SIZE - 0x80, 0x80);
        sha256_ranges(b, signed_r, MB_ARRAY_SIZE(signed_r), want);
        CHECK_EQ_INT(mb_pe_authenticode(b, sizeof(b), MB_ALG_SHA256, got), MB_OK);
        CHECK(memcmp(want, got, 32) == 0);

        build_pe32(b, 4, 0, 0);
        sha256_ranges(b, nodir_r, MB_ARRAY_SIZE(nodir_r), want);
        CHECK_EQ_INT(mb_pe_authenticode(b, sizeof(b), MB_ALG_SHA256, got), MB_OK);
        CHECK(memcmp(want, got, 32) == 0);
        /* The same ranges under SM3 (OpenSSL's EVP_sm3 as the oracle). */
        md_ranges(EVP_sm3(), b, nodir_r, MB_ARRAY_SIZE(nodir_r), want);
        CHECK_EQ_INT(mb_pe_authenticode(b, sizeof(b), MB_ALG_SM3_256, got), MB_OK);
        CHECK(memcmp(want, got, 32) == 0);
        CHECK_EQ_INT(mb_pe_authenticode(b, sizeof(b), 0x0027, got), MB_ERR_UNSUPPORTED); /* SHA3-256 */
}

TEST(pe32_corruptions_are_rejected) {
        uint8_t b[T_SIZE];
        mb_pe pe;

        build_pe32(b, 16, 0, 0);
        b[0] = 'X';
        CHECK_EQ_INT(mb_pe_parse(b, sizeof(b), &pe), MB_ERR_INVALID);      /* no MZ */
        build_pe32(b, 16, 0, 0);
        b[T_LFANEW + 1] = 'X';
        CHECK_EQ_INT(mb_pe_parse(b, sizeof(b), &pe), MB_ERR_INVALID);      /* no PE\0\0 */
        build_pe32(b, 16, 0, 0);
        mb_put_le32(b + 0x3c, 0xfffffff0);
        CHECK_EQ_INT(mb_pe_parse(b, sizeof(b), &pe), MB_ERR_TRUNCATED);    /* e_lfanew past the end */
        build_pe32(b, 16, 0, 0);
        mb_put_le16(b + T_OPT, 0x107);
        CHECK_EQ_INT(mb_pe_parse(b, sizeof(b), &pe), MB_ERR_INVALID);      /* ROM image magic */
        build_pe32(b, 17, 0, 0);
        CHECK_EQ_INT(mb_pe_parse(b, sizeof(b), &pe), MB_ERR_INVALID);      /* directories overrun SizeOfOptionalHeader */
        build_pe32(b, 0xffffffff, 0, 0);
        CHECK_EQ_INT(mb_pe_parse(b, sizeof(b), &pe), MB_ERR_INVALID);
        build_pe32(b, 16, 0, 0);
        mb_put_le16(b + T_LFANEW + 4 + 2, MB_PE_MAX_SECTIONS + 1);
        CHECK_EQ_INT(mb_pe_parse(b, sizeof(b), &pe), MB_ERR_UNSUPPORTED);
        build_pe32(b, 16, 0, 0);
        mb_put_le16(b + T_LFANEW + 4 + 2, 20);                          /* table past SizeOfHeaders */
        CHECK_EQ_INT(mb_pe_parse(b, sizeof(b), &pe), MB_ERR_INVALID);
        build_pe32(b, 16, 0, 0);
        mb_put_le32(b + T_OPT + 60, T_SIZE + 1);
        CHECK_EQ_INT(mb_pe_parse(b, sizeof(b), &pe), MB_ERR_TRUNCATED);    /* SizeOfHeaders > file */
        build_pe32(b, 16, 0, 0);
        mb_put_le32(b + T_SECT + 20, 0xffffff00);                       /* raw data past the end */
        CHECK_EQ_INT(mb_pe_parse(b, sizeof(b), &pe), MB_ERR_INVALID);
        build_pe32(b, 16, T_SIZE - 0x80, 0x100);                        /* cert table past the end */
        CHECK_EQ_INT(mb_pe_parse(b, sizeof(b), &pe), MB_ERR_INVALID);
        build_pe32(b, 16, T_SIZE - 0x100, 0x80);                        /* data after the cert table */
        CHECK_EQ_INT(mb_pe_parse(b, sizeof(b), &pe), MB_ERR_INVALID);
        build_pe32(b, 16, 0x100, T_SIZE - 0x100);                       /* cert table inside the headers */
        CHECK_EQ_INT(mb_pe_parse(b, sizeof(b), &pe), MB_ERR_INVALID);
        build_pe32(b, 16, 0x480, T_SIZE - 0x480);                       /* overlapping section .b */
        CHECK_EQ_INT(mb_pe_parse(b, sizeof(b), &pe), MB_ERR_INVALID);
        CHECK_EQ_INT(mb_pe_parse(b, 0x3f, &pe), MB_ERR_TRUNCATED);
        CHECK_EQ_INT(mb_pe_parse("", 0, &pe), MB_ERR_INVALID);
}

TEST(cert_iterator) {
        uint8_t t[40] = { 0 };
        size_t off = 0;
        mb_pe_cert c;

        mb_put_le32(t, 8 + 5);          /* entry 1: 5 bytes, padded to 16 */
        mb_put_le16(t + 4, 0x200);
        mb_put_le16(t + 6, 2);
        mb_put_le32(t + 16, 8 + 16);    /* entry 2: 16 bytes, ends the table */
        CHECK_EQ_INT(mb_pe_cert_next(t, sizeof(t), &off, &c), MB_OK);
        CHECK(c.size == 5 && c.data == t + 8 && c.type == 2 && c.revision == 0x200);
        CHECK_EQ_INT(mb_pe_cert_next(t, sizeof(t), &off, &c), MB_OK);
        CHECK(c.size == 16 && c.data == t + 24);
        CHECK_EQ_INT(mb_pe_cert_next(t, sizeof(t), &off, &c), MB_END);
        off = 0;
        mb_put_le32(t, 7);
        CHECK_EQ_INT(mb_pe_cert_next(t, sizeof(t), &off, &c), MB_ERR_INVALID);
        mb_put_le32(t, 41);
        CHECK_EQ_INT(mb_pe_cert_next(t, sizeof(t), &off, &c), MB_ERR_TRUNCATED);
        CHECK_EQ_INT(mb_pe_cert_next(t, 4, &off, &c), MB_ERR_TRUNCATED);
        CHECK_EQ_INT(off, 0);
}

/* ImageHlp's CheckSumMappedFile, written out independently: 16-bit words,
 * carries folded, the CheckSum field as zero, plus the length. */
static uint32_t ref_checksum(const uint8_t *b, size_t n, size_t co) {
        uint64_t sum = 0;

        for (size_t i = 0; i < n; i += 2) {
                uint32_t lo = (i >= co && i < co + 4) ? 0 : b[i];
                uint32_t hi = (i + 1 >= n || (i + 1 >= co && i + 1 < co + 4)) ? 0 : b[i + 1];
                sum += lo | hi << 8;
        }
        while (sum >> 16)
                sum = (sum & 0xffff) + (sum >> 16);
        return (uint32_t) sum + (uint32_t) n;
}

TEST(remove_cert) {
        /* Three entries after the image: 5 bytes (padded to 16), 9 bytes
         * (padded to 24), 16 bytes (24, the table's end). */
        enum { TBL = 16 + 24 + 24 };
        static uint8_t b[T_SIZE + TBL], orig[T_SIZE + TBL], want[T_SIZE + TBL];
        const size_t lens[3] = { 5, 9, 16 }, spans[3] = { 16, 24, 24 }, starts[3] = { 0, 16, 40 };
        size_t n = 0;
        mb_pe pe;

        build_pe32(orig, 16, T_SIZE, TBL);
        memset(orig + T_SIZE, 0, TBL);
        for (size_t i = 0; i < 3; i++) {
                mb_put_le32(orig + T_SIZE + starts[i], 8 + (uint32_t) lens[i]);
                mb_put_le16(orig + T_SIZE + starts[i] + 4, 0x200);
                mb_put_le16(orig + T_SIZE + starts[i] + 6, 2);
                memset(orig + T_SIZE + starts[i] + 8, 0x10 + (int) i, lens[i]);
        }
        for (size_t k = 0; k < 3; k++) {
                /* Expected: the other entries in order, the directory and
                 * CheckSum updated, computed here by hand. */
                size_t w = T_SIZE;

                memcpy(want, orig, T_SIZE);
                for (size_t i = 0; i < 3; i++)
                        if (i != k) {
                                memcpy(want + w, orig + T_SIZE + starts[i], spans[i]);
                                w += spans[i];
                        }
                mb_put_le32(want + T_OPT + 96 + 4 * 8 + 4, (uint32_t) (w - T_SIZE));
                mb_put_le32(want + T_OPT + 64, ref_checksum(want, w, T_OPT + 64));
                memcpy(b, orig, sizeof(b));
                CHECK_EQ_INT(mb_pe_remove_cert(b, sizeof(b), k, &n), MB_OK);
                CHECK_EQ_INT(n, w);
                CHECK(memcmp(b, want, w) == 0);
                CHECK_EQ_INT(mb_pe_parse(b, n, &pe), MB_OK);
        }
        /* Down to no entry: the directory entry becomes 0, 0. */
        memcpy(b, orig, sizeof(b));
        n = sizeof(b);
        for (int i = 0; i < 3; i++)
                CHECK_EQ_INT(mb_pe_remove_cert(b, n, 0, &n), MB_OK);
        CHECK_EQ_INT(n, T_SIZE);
        CHECK_EQ_INT(mb_le32(b + T_OPT + 96 + 4 * 8), 0);
        CHECK_EQ_INT(mb_le32(b + T_OPT + 96 + 4 * 8 + 4), 0);
        CHECK_EQ_INT(mb_le32(b + T_OPT + 64), ref_checksum(b, n, T_OPT + 64));
        CHECK_EQ_INT(mb_pe_remove_cert(b, n, 0, &n), MB_ERR_NOTFOUND);
        /* No such entry, or a bad entry anywhere: refused, nothing changed. */
        memcpy(b, orig, sizeof(b));
        CHECK_EQ_INT(mb_pe_remove_cert(b, sizeof(b), 3, &n), MB_ERR_NOTFOUND);
        mb_put_le32(b + T_SIZE + 40, 4);
        memcpy(want, b, sizeof(b));
        CHECK_EQ_INT(mb_pe_remove_cert(b, sizeof(b), 0, &n), MB_ERR_INVALID);
        CHECK(memcmp(b, want, sizeof(b)) == 0);
}

/* Exercise everything the parser allows on an image held in a buffer of
 * exactly `size` bytes, so ASan sees any read past it. Hashing is the slow
 * part, so the caller chooses when to include it. */
static mb_err exercise(const uint8_t *src, size_t size, bool hash) {
        uint8_t *b = malloc(size ? size : 1), d[32];
        const uint8_t *p, *t;
        size_t n, tn, off = 0;
        mb_pe_section s;
        mb_pe_cert c;
        mb_pe pe;
        mb_err r;

        memcpy(b, src, size);
        r = mb_pe_parse(b, size, &pe);
        if (r == MB_OK) {
                if (hash)
                        CHECK_EQ_INT(mb_pe_authenticode_parsed(&pe, MB_ALG_SHA256, d), MB_OK);
                (void) mb_pe_find_section(&pe, ".sbat", &p, &n);
                for (uint16_t i = 0; mb_pe_section_at(&pe, i, &s) == MB_OK; i++)
                        ;
                if (mb_pe_cert_table(&pe, &t, &tn) == MB_OK)
                        while (mb_pe_cert_next(t, tn, &off, &c) == MB_OK)
                                ;
                /* Removing a signature edits a copy in place: it must stay
                 * inside the buffer and leave a parseable image. */
                if (hash && mb_pe_remove_cert(b, size, 0, &n) == MB_OK)
                        CHECK_EQ_INT(mb_pe_parse(b, n, &pe), MB_OK);
        }
        free(b);
        return r;
}

TEST(every_prefix_and_random_header_flips) {
        blob b;
        mb_pe pe;
        size_t last = 0;
        uint32_t seed = 12345;

        if (!load("efi:usr/lib/shim/fbx64.efi", &b) && !load(SHIM, &b)) {
                CHECK(!"no shim image: run make deps");
                return;
        }
        CHECK_EQ_INT(mb_pe_parse(b.data, b.size, &pe), MB_OK);
        for (uint16_t i = 0; i < pe.n_sections; i++) {
                mb_pe_section s;
                mb_pe_section_at(&pe, i, &s);
                if (s.raw_size && s.raw_offset + s.raw_size > last)
                        last = s.raw_offset + s.raw_size;
        }
        /* Every prefix of the headers, then every 509th: an error while
         * a section still runs past the end, never an out-of-bounds read. */
        for (size_t n = 0; n < b.size; n += n < 2 * pe.size_of_headers ? 1 : 509)
                if (n < last)
                        CHECK(exercise(b.data, n, true) != MB_OK);
        /* Random byte flips in the headers. */
        for (int iter = 0; iter < 20000; iter++) {
                uint8_t *c = malloc(b.size);
                memcpy(c, b.data, b.size);
                for (int k = 0; k < 1 + iter % 4; k++) {
                        seed = seed * 1103515245 + 12345;
                        c[(seed >> 8) % pe.size_of_headers] ^= (uint8_t) (1u << ((seed >> 4) % 8));
                }
                (void) exercise(c, b.size, iter % 64 == 0);
                free(c);
        }
        free(b.data);
}

/* mb_pe_check_loadable against each rule alone, on the hand-built image
 * made loadable: SizeOfImage 0x4000 over sections at 0x1000-0x3000. */
static void build_loadable(uint8_t *b) {
        build_pe32(b, 16, 0, 0);
        mb_put_le32(b + T_OPT + 56, 0x4000);                   /* SizeOfImage */
        mb_put_le32(b + T_OPT + 16, 0x1010);                   /* AddressOfEntryPoint */
}

/* mb_pe_parse, then mb_pe_check_loadable; a parse failure (the image must
 * parse) shows as MB_ERR_TRUNCATED, which mb_pe_check_loadable never gives. */
static mb_err parse_loadable(const uint8_t *b) {
        mb_pe pe;
        mb_err r = mb_pe_parse(b, T_SIZE, &pe);

        return r == MB_OK ? mb_pe_check_loadable(&pe) : MB_ERR_TRUNCATED;
}

TEST(pe32_loadable_layout) {
        uint8_t b[T_SIZE];

        build_loadable(b);
        CHECK_EQ_INT(parse_loadable(b), MB_OK);
        /* SizeOfImage smaller than SizeOfHeaders (and than every section). */
        mb_put_le32(b + T_OPT + 56, T_HDRS - 1);
        CHECK_EQ_INT(parse_loadable(b), MB_ERR_INVALID);
        /* The entry point at SizeOfImage: one past the image. */
        build_loadable(b);
        mb_put_le32(b + T_OPT + 16, 0x4000);
        CHECK_EQ_INT(parse_loadable(b), MB_ERR_INVALID);
        mb_put_le32(b + T_OPT + 16, 0x3fff);
        CHECK_EQ_INT(parse_loadable(b), MB_OK);
        /* Section .b (VirtualAddress 0x1000) one byte too long, then
         * exactly reaching SizeOfImage. */
        build_loadable(b);
        mb_put_le32(b + T_SECT + 8, 0x3001);
        CHECK_EQ_INT(parse_loadable(b), MB_ERR_INVALID);
        mb_put_le32(b + T_SECT + 8, 0x3000);
        CHECK_EQ_INT(parse_loadable(b), MB_OK);
        /* VirtualAddress + VirtualSize wrapping 32 bits is no escape. */
        build_loadable(b);
        mb_put_le32(b + T_SECT + 12, 0xffffff00);
        mb_put_le32(b + T_SECT + 8, 0x200);
        CHECK_EQ_INT(parse_loadable(b), MB_ERR_INVALID);
        /* VirtualSize 0 means SizeOfRawData (0x100 for .b). */
        build_loadable(b);
        mb_put_le32(b + T_SECT + 8, 0);
        mb_put_le32(b + T_SECT + 12, 0x3f00);
        CHECK_EQ_INT(parse_loadable(b), MB_OK);
        mb_put_le32(b + T_SECT + 12, 0x3f01);
        CHECK_EQ_INT(parse_loadable(b), MB_ERR_INVALID);
}

int main(void) {
        RUN(real_images_match_oracles);
        RUN(real_sbat_section_matches_objcopy);
        RUN(pe32_hash_ranges);
        RUN(long_section_names);
        RUN(pe32_corruptions_are_rejected);
        RUN(pe32_loadable_layout);
        RUN(cert_iterator);
        RUN(remove_cert);
        RUN(every_prefix_and_random_header_flips);
        TL_EXIT();
}
