/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * SBAT parsing and shim's revocation rule, on Debian's real shim and GRUB
 * .sbat sections (extracted with objcopy, the independent oracle for the
 * bytes; src/pe.c must find the same ones), on shim's own .sbatlevel
 * policies, and on corrupt variants.
 */
#define _GNU_SOURCE     /* memmem */
#include <stdint.h>
#include <unistd.h>
#include "testlib.h"
#include "mb/pe.h"
#include "mb/sbat.h"
#include "mb/varstore.h"

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


/* ---- which policy applies, and shim's verdict on whole images ---------- */

#define NVBS   (MB_VAR_NON_VOLATILE | MB_VAR_BOOTSERVICE_ACCESS)
#define BSRT   (MB_VAR_BOOTSERVICE_ACCESS | MB_VAR_RUNTIME_ACCESS)
#define POL_A  "sbat,1,2030010100\ngrub,6\n"
#define POL_B  "sbat,1,2021030218\n"

static mb_err sel(bool lp, uint32_t la, const char *lt, bool rp, uint32_t ra, const char *rt,
                  mb_sbat_policy *pol, mb_sbat_source *src) {
        mb_sbat_var v[MB_SBAT_N_SOURCES] = {
                [MB_SBAT_LEVEL] = { lp, la, lt, lt ? strlen(lt) : 0 },
                [MB_SBAT_LEVEL_RT] = { rp, ra, rt, rt ? strlen(rt) : 0 },
        };
        return mb_sbat_policy_select(v, pol, src);
}

TEST(policy_selection) {
        mb_sbat_policy pol;
        mb_sbat_source src = MB_SBAT_N_SOURCES;

        /* Neither variable: no policy. */
        CHECK_EQ_INT(sel(false, 0, NULL, false, 0, NULL, &pol, &src), MB_OK);
        CHECK_EQ_INT(pol.n, 0);
        /* SbatLevel as shim writes it (NV+BS, or time-authenticated too). */
        CHECK_EQ_INT(sel(true, NVBS, POL_A, false, 0, NULL, &pol, &src), MB_OK);
        CHECK(pol.n == 1 && pol.p[0].source == MB_SBAT_LEVEL && pol.p[0].len == strlen(POL_A));
        CHECK_EQ_INT(sel(true, NVBS | MB_VAR_TIME_BASED_AUTHENTICATED_WRITE, POL_A, false, 0, NULL, &pol, &src), MB_OK);
        /* SbatLevelRT as shim's mirror creates it, alone, or after SbatLevel. */
        CHECK_EQ_INT(sel(false, 0, NULL, true, BSRT, POL_B, &pol, &src), MB_OK);
        CHECK(pol.n == 1 && pol.p[0].source == MB_SBAT_LEVEL_RT);
        CHECK_EQ_INT(sel(true, NVBS, POL_B, true, BSRT, POL_A, &pol, &src), MB_OK);
        CHECK(pol.n == 2 && pol.p[0].source == MB_SBAT_LEVEL && pol.p[1].source == MB_SBAT_LEVEL_RT);
        /* Attributes the OS could have produced: fail closed, naming the variable. */
        pol.n = 99;
        CHECK_EQ_INT(sel(true, NVBS | MB_VAR_RUNTIME_ACCESS, POL_A, false, 0, NULL, &pol, &src), MB_ERR_INVALID);
        CHECK(src == MB_SBAT_LEVEL && pol.n == 99);
        CHECK_EQ_INT(sel(true, MB_VAR_BOOTSERVICE_ACCESS, POL_A, false, 0, NULL, &pol, &src), MB_ERR_INVALID);
        CHECK_EQ_INT(sel(true, NVBS, POL_A, true, BSRT | MB_VAR_NON_VOLATILE, POL_A, &pol, &src), MB_ERR_INVALID);
        CHECK(src == MB_SBAT_LEVEL_RT);
        CHECK_EQ_INT(sel(false, 0, NULL, true, MB_VAR_BOOTSERVICE_ACCESS, POL_A, &pol, &src), MB_ERR_INVALID);
        /* A policy that does not parse is no policy to fall back from. */
        CHECK_EQ_INT(sel(true, NVBS, "grub,6\n", false, 0, NULL, &pol, &src), MB_ERR_INVALID);
        CHECK(src == MB_SBAT_LEVEL);
        CHECK_EQ_INT(sel(true, NVBS, POL_B, true, BSRT, "sbat,1\ngrub\n", &pol, &src), MB_ERR_INVALID);
        CHECK(src == MB_SBAT_LEVEL_RT);
        CHECK(!strcmp(mb_sbat_source_name(MB_SBAT_LEVEL), "SbatLevel") &&
              !strcmp(mb_sbat_source_name(MB_SBAT_LEVEL_RT), "SbatLevelRT"));
}

static mb_sbat_verdict verdict(const blob *img, const char *level, const char *rt, bool required) {
        mb_sbat_policy pol;
        mb_sbat_source src;
        mb_sbat_verdict v = { .outcome = 99 };
        mb_pe pe;

        CHECK_EQ_INT(sel(level != NULL, NVBS, level, rt != NULL, BSRT, rt, &pol, &src), MB_OK);
        if (mb_pe_parse(img->data, img->size, &pe) != MB_OK) {
                CHECK(!"not a PE image");
                return v;
        }
        mb_sbat_image_verdict(&pol, &pe, required, &v);
        return v;
}

/* The offset of the section header called name, found without src/pe.c
 * (PE Format: e_lfanew at 0x3c; after the 4-byte signature and the 20-byte
 * COFF header comes the optional header, SizeOfOptionalHeader bytes). */
static size_t section_header(const blob *b, const char *name) {
        uint32_t lfanew = b->data[0x3c] | b->data[0x3d] << 8 | b->data[0x3e] << 16 | (uint32_t) b->data[0x3f] << 24;
        uint16_t n = b->data[lfanew + 6] | b->data[lfanew + 7] << 8;
        uint16_t opt = b->data[lfanew + 20] | b->data[lfanew + 21] << 8;
        size_t off = lfanew + 24 + opt;

        for (uint16_t i = 0; i < n; i++, off += 40)
                if (!strncmp((char *) b->data + off, name, 8))
                        return off;
        return 0;
}

TEST(image_verdicts) {
        blob grub, nosbat;
        mb_sbat_verdict v;
        size_t sh, raw;

        if (!load(GRUB, &grub) || !load(GRUB, &nosbat)) {
                CHECK(!"grub-efi-amd64-signed missing: run make deps");
                return;
        }
        /* An image without .sbat (like Debian's kernel): GRUB with the
         * section renamed. */
        sh = section_header(&nosbat, ".sbat");
        CHECK(sh != 0);
        nosbat.data[sh + 4] = 'X';
        /* Debian's GRUB is grub,5: revoked by grub,6, whichever variable says so. */
        v = verdict(&grub, POL_A, NULL, true);
        CHECK(v.outcome == MB_SBAT_REVOKED && v.source == MB_SBAT_LEVEL && str_is(v.entry.component, "grub") &&
              v.entry.generation == 5 && v.min_generation == 6);
        v = verdict(&grub, POL_B, POL_A, false);
        CHECK(v.outcome == MB_SBAT_REVOKED && v.source == MB_SBAT_LEVEL_RT);
        CHECK_EQ_INT(verdict(&grub, "sbat,1,2030010100\ngrub,5\n", POL_B, true).outcome, MB_SBAT_ALLOWED);
        CHECK_EQ_INT(verdict(&grub, NULL, NULL, true).outcome, MB_SBAT_ALLOWED);
        /* No .sbat: required -> missing, else allowed; with no policy at
         * all, allowed either way. */
        CHECK_EQ_INT(verdict(&nosbat, POL_B, NULL, true).outcome, MB_SBAT_MISSING);
        CHECK_EQ_INT(verdict(&nosbat, POL_A, POL_B, false).outcome, MB_SBAT_ALLOWED);
        CHECK_EQ_INT(verdict(&nosbat, NULL, NULL, true).outcome, MB_SBAT_ALLOWED);

        sh = section_header(&grub, ".sbat");
        CHECK(sh != 0);
        raw = grub.data[sh + 16] | grub.data[sh + 17] << 8 | grub.data[sh + 18] << 16 | (size_t) grub.data[sh + 19] << 24;
        /* VirtualSize beyond SizeOfRawData: text the file does not hold. */
        grub.data[sh + 8] = (uint8_t) (raw + 1);
        grub.data[sh + 9] = (uint8_t) ((raw + 1) >> 8);
        grub.data[sh + 10] = (uint8_t) ((raw + 1) >> 16);
        grub.data[sh + 11] = (uint8_t) ((raw + 1) >> 24);
        v = verdict(&grub, POL_B, NULL, false);
        CHECK(v.outcome == MB_SBAT_MALFORMED && v.lineno == 0);
        free(grub.data);
        /* A second section called .sbat. */
        CHECK(load(GRUB, &grub));
        sh = section_header(&grub, ".data");
        CHECK(sh != 0);
        memcpy(grub.data + sh, ".sbat\0\0\0", 8);
        CHECK_EQ_INT(verdict(&grub, POL_B, NULL, false).outcome, MB_SBAT_MALFORMED);
        /* ... but with no policy nobody looks. */
        CHECK_EQ_INT(verdict(&grub, NULL, NULL, false).outcome, MB_SBAT_ALLOWED);
        free(grub.data);
        /* A generation that is not a number, on line 2. */
        CHECK(load(GRUB, &grub));
        sh = section_header(&grub, ".sbat");
        raw = grub.data[sh + 20] | grub.data[sh + 21] << 8 | grub.data[sh + 22] << 16 | (size_t) grub.data[sh + 23] << 24;
        {
                char *t = memmem(grub.data + raw, 400, "\ngrub,5,", 8);
                CHECK(t != NULL);
                if (t)
                        t[6] = 'x';
        }
        v = verdict(&grub, POL_B, NULL, false);
        CHECK(v.outcome == MB_SBAT_MALFORMED && v.lineno == 2);
        free(grub.data);
        free(nosbat.data);
}

int main(void) {
        RUN(real_shim_and_grub_sbat);
        RUN(real_sbatlevel_policies);
        RUN(corrupt_sections);
        RUN(error_line_numbers_and_iteration);
        RUN(revocation_rule);
        RUN(prefixes_and_mutations);
        RUN(policy_selection);
        RUN(image_verdicts);
        TL_EXIT();
}
