/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * SBAT parsing and shim's revocation rule, on Debian's real shim and GRUB
 * .sbat sections (extracted with objcopy, the independent oracle for the
 * bytes; src/pe.c must find the same ones), on shim's own .sbatlevel
 * policies, and on corrupt variants.
 */
#include <stdint.h>
#include <unistd.h>
#include "testlib.h"
#include "mb/pe.h"
#include "mb/sbat.h"

#define SHIM "efi:usr/lib/shim/shimx64.efi.signed"
#define GRUB "efi:usr/lib/grub/x86_64-efi-signed/grubx64.efi.signed"
#define TMP  "/tmp/mb-test-sbat.bin"

typedef struct blob {
        uint8_t *data;
        size_t size;
} blob;

static bool load(const char *path, blob *ret) {
        ret->data = tl_read_file(path, &ret->size);
        return ret->data != NULL;
}

/* objcopy's copy of a section, or false when objcopy or the file is missing. */
static bool objcopy_section(const char *file, const char *section, blob *ret) {
        char cmd[512];

        snprintf(cmd, sizeof(cmd), "objcopy -O binary --only-section=%s '%s' " TMP " 2>/dev/null",
                 section, tl_path(file));
        if (system(cmd) != 0)
                return false;
        bool ok = load(TMP, ret);
        unlink(TMP);
        return ok;
}

static bool str_is(mb_str s, const char *lit) { return mb_str_eq(s, lit); }

TEST(real_shim_and_grub_sbat) {
        static const struct {
                const char *file;
                const char *components[4];
                uint32_t generations[4];
        } want[] = {
                { SHIM, { "sbat", "shim", "shim.debian" }, { 1, 4, 1 } },
                { GRUB, { "sbat", "grub", "grub.debian", "grub.debian12" }, { 1, 5, 5, 1 } },
        };

        for (size_t i = 0; i < MB_ARRAY_SIZE(want); i++) {
                blob img, oracle;
                mb_pe pe;
                const uint8_t *p;
                size_t n, k = 0;
                mb_sbat_iter it;
                mb_sbat_entry e;
                mb_err r;

                if (!load(want[i].file, &img) || !objcopy_section(want[i].file, ".sbat", &oracle)) {
                        CHECK(!"shim-signed / grub-efi-amd64-signed missing: run make deps");
                        continue;
                }
                CHECK_EQ_INT(mb_pe_parse(img.data, img.size, &pe), MB_OK);
                CHECK_EQ_INT(mb_pe_find_section(&pe, ".sbat", &p, &n), MB_OK);
                CHECK(n == oracle.size && memcmp(p, oracle.data, n) == 0);
                mb_sbat_init(&it, oracle.data, oracle.size);
                while ((r = mb_sbat_next(&it, &e)) == MB_OK) {
                        CHECK(k < 4 && want[i].components[k] && str_is(e.component, want[i].components[k]));
                        CHECK(k < 4 && e.generation == want[i].generations[k]);
                        CHECK(e.vendor_url.len > 8 && !memcmp(e.vendor_url.p, "https://", 8));
                        k++;
                }
                CHECK_EQ_INT(r, MB_END);
                CHECK(k == 3 + i);
                CHECK_EQ_INT(mb_sbat_validate(p, n, NULL), MB_OK);
                free(oracle.data);
                free(img.data);
        }
}

/* shim 16.1 carries its own policies: GRUB 2.06 (grub,5) passes both. */
TEST(real_sbatlevel_policies) {
        blob lvl, grub;
        const char *t;
        size_t tn;
        bool revoked = true;
        mb_sbat_entry e;
        uint32_t g;

        if (!objcopy_section(SHIM, ".sbatlevel", &lvl) || !objcopy_section(GRUB, ".sbat", &grub)) {
                CHECK(!"shim-signed / grub-efi-amd64-signed missing: run make deps");
                return;
        }
        for (int latest = 0; latest < 2; latest++) {
                CHECK_EQ_INT(mb_sbat_level_section(lvl.data, lvl.size, latest, &t, &tn), MB_OK);
                CHECK(tn > 7 && !memcmp(t, "sbat,1,", 7));
                CHECK_EQ_INT(mb_sbat_check(grub.data, grub.size, t, tn, &revoked, &e, &g), MB_OK);
                CHECK(!revoked);
        }
        /* A policy one generation ahead of Debian's GRUB revokes it. */
        CHECK_EQ_INT(mb_sbat_check(grub.data, grub.size, "sbat,1,2030010100\ngrub,6\n", 25,
                                   &revoked, &e, &g), MB_OK);
        CHECK(revoked && str_is(e.component, "grub") && e.generation == 5 && g == 6);
        CHECK_EQ_INT(mb_sbat_level_section(lvl.data, 11, true, &t, &tn), MB_ERR_TRUNCATED);
        lvl.data[0] = 1;
        CHECK_EQ_INT(mb_sbat_level_section(lvl.data, lvl.size, true, &t, &tn), MB_ERR_UNSUPPORTED);
        free(lvl.data);
        free(grub.data);
}

#define HDR "sbat,1,SBAT Version,sbat,1,https://github.com/rhboot/shim/blob/main/SBAT.md\n"

static mb_err validate(const char *s, size_t n) {
        /* An exact-size heap copy, so ASan sees any overread. */
        char *c = malloc(n ? n : 1);
        size_t line = 0;
        mb_err r;

        memcpy(c, s, n);
        r = mb_sbat_validate(c, n, &line);
        free(c);
        return r;
}
#define V(lit) validate(lit, sizeof(lit) - 1)

TEST(corrupt_sections) {
        char big[2 * MB_SBAT_MAX_LINE];

        CHECK_EQ_INT(V(HDR "mshim,1,mshim,mshim,0.1.0,https://example.org\n"), MB_OK);
        CHECK_EQ_INT(V(HDR "a,1,b,c,d,e\r\n\n"), MB_OK);                 /* CRLF, blank line */
        CHECK_EQ_INT(V(HDR "a,1,b,c,d,e\0\0\0"), MB_OK);                 /* NUL padding */
        CHECK_EQ_INT(V(HDR "a,1,b,c,d,e"), MB_OK);                       /* no final newline */
        CHECK_EQ_INT(V(""), MB_ERR_INVALID);                             /* no sbat record */
        CHECK_EQ_INT(V("\0\0\0\0"), MB_ERR_INVALID);
        CHECK_EQ_INT(V("grub,1,a,b,c,d\n"), MB_ERR_INVALID);             /* first is not sbat */
        CHECK_EQ_INT(V("sbat,2,a,b,c,d\n"), MB_ERR_INVALID);             /* unknown format version */
        CHECK_EQ_INT(V(HDR "a,1,b,c,d,e\0x\n"), MB_ERR_INVALID);         /* text after a NUL */
        CHECK_EQ_INT(V(HDR ",1,b,c,d,e\n"), MB_ERR_INVALID);             /* empty component */
        CHECK_EQ_INT(V(HDR "a,,b,c,d,e\n"), MB_ERR_INVALID);
        CHECK_EQ_INT(V(HDR "a,0,b,c,d,e\n"), MB_ERR_INVALID);            /* generation 0 */
        CHECK_EQ_INT(V(HDR "a,-1,b,c,d,e\n"), MB_ERR_INVALID);
        CHECK_EQ_INT(V(HDR "a,1x,b,c,d,e\n"), MB_ERR_INVALID);
        CHECK_EQ_INT(V(HDR "a,4294967296,b,c,d,e\n"), MB_ERR_INVALID);   /* 2^32 */
        CHECK_EQ_INT(V(HDR "a,4294967295,b,c,d,e\n"), MB_OK);
        CHECK_EQ_INT(V(HDR "a,1,b,c,d\n"), MB_ERR_INVALID);              /* 5 fields */
        CHECK_EQ_INT(V(HDR "a,1,b,c,d,e,f\n"), MB_ERR_INVALID);          /* 7 fields */
        CHECK_EQ_INT(V(HDR "a,1,b\tc,c,d,e\n"), MB_ERR_INVALID);         /* control character */
        memcpy(big, HDR, sizeof(HDR) - 1);
        memset(big + sizeof(HDR) - 1, 'x', sizeof(big) - (sizeof(HDR) - 1));
        CHECK_EQ_INT(validate(big, sizeof(big)), MB_ERR_TOOLONG);
}

TEST(error_line_numbers_and_iteration) {
        static const char s[] = HDR "\na,1,b,c,d,e\nbad\n";
        mb_sbat_iter it;
        mb_sbat_entry e;
        size_t line = 0;

        CHECK_EQ_INT(mb_sbat_validate(s, sizeof(s) - 1, &line), MB_ERR_INVALID);
        CHECK_EQ_INT(line, 4);
        mb_sbat_init(&it, s, sizeof(s) - 1);
        CHECK_EQ_INT(mb_sbat_next(&it, &e), MB_OK);
        CHECK(str_is(e.component, "sbat") && e.lineno == 1 && str_is(e.vendor_name, "SBAT Version"));
        CHECK_EQ_INT(mb_sbat_next(&it, &e), MB_OK);
        CHECK(str_is(e.component, "a") && e.lineno == 3 && str_is(e.vendor_url, "e"));
        CHECK_EQ_INT(mb_sbat_next(&it, &e), MB_ERR_INVALID);
        CHECK_EQ_INT(it.lineno, 4);
}

TEST(revocation_rule) {
        static const char img[] = HDR "shim,3,UEFI shim,shim,1,u\nshim.debian,1,Debian,shim,15.7,u\n";
        bool revoked = true;
        mb_sbat_entry e = { 0 };
        uint32_t g = 0;

#define CHK(pol) mb_sbat_check(img, sizeof(img) - 1, pol, sizeof(pol) - 1, &revoked, &e, &g)
        CHECK_EQ_INT(CHK("sbat,1,2022052400\ngrub,2\n"), MB_OK);        /* other component */
        CHECK(!revoked);
        CHECK_EQ_INT(CHK("sbat,1,2023012900\nshim,3\n"), MB_OK);        /* equal generation */
        CHECK(!revoked);
        CHECK_EQ_INT(CHK("sbat,1,2024010900\nshim,4\ngrub,3\n"), MB_OK);
        CHECK(revoked && str_is(e.component, "shim") && e.generation == 3 && g == 4);
        revoked = true;
        CHECK_EQ_INT(CHK("sbat,1\nshim.debian,1\n"), MB_OK);
        CHECK(!revoked);
        CHECK_EQ_INT(CHK("sbat,1\nshim.debian,2,extra,fields\n"), MB_OK);
        CHECK(revoked && str_is(e.component, "shim.debian"));
        CHECK_EQ_INT(CHK("grub,2\n"), MB_ERR_INVALID);                  /* policy without sbat,1 */
        CHECK_EQ_INT(CHK("sbat,1\nshim\n"), MB_ERR_INVALID);            /* no generation */
        CHECK_EQ_INT(CHK(""), MB_ERR_INVALID);
        CHECK_EQ_INT(mb_sbat_check("sbat,1\n", 7, "sbat,1\n", 7, &revoked, &e, &g), MB_ERR_INVALID);
#undef CHK
}

/* Every prefix and single-byte mutation of a real section: no overreads,
 * and the NUL mutation inside the text is always rejected. */
TEST(prefixes_and_mutations) {
        blob s;

        if (!objcopy_section(GRUB, ".sbat", &s)) {
                CHECK(!"grub-efi-amd64-signed missing: run make deps");
                return;
        }
        size_t len = strnlen((char *) s.data, s.size);
        for (size_t n = 0; n <= len; n++)
                (void) validate((char *) s.data, n);
        for (size_t i = 0; i + 1 < len; i++) {
                uint8_t o = s.data[i];
                s.data[i] = 0;
                CHECK_EQ_INT(validate((char *) s.data, s.size), MB_ERR_INVALID);
                s.data[i] = ',';
                (void) validate((char *) s.data, s.size);
                s.data[i] = o;
        }
        free(s.data);
}

int main(void) {
        RUN(real_shim_and_grub_sbat);
        RUN(real_sbatlevel_policies);
        RUN(corrupt_sections);
        RUN(error_line_numbers_and_iteration);
        RUN(revocation_rule);
        RUN(prefixes_and_mutations);
        TL_EXIT();
}
