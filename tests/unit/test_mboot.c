/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The pure rules of what mshim measures (src/mboot.c): PCR 5 digest inputs
 * that cannot collide, the Linux stub's initrd decision, the built-in boot
 * policy. Expected bytes are written out here from docs/MEASUREMENTS.md and
 * the x86 boot protocol, not produced by the code under test.
 */
#include "testlib.h"
#include "mb/mboot.h"
#include "mb/tcglog.h"

static const uint8_t conf_path[] = { '\\', 0, 'l', 0, 'o', 0, 'a', 0, 'd', 0, 'e', 0, 'r', 0, '\\', 0,
                                     'l', 0, 'o', 0, 'a', 0, 'd', 0, 'e', 0, 'r', 0, '.', 0, 'c', 0,
                                     'o', 0, 'n', 0, 'f', 0, 0, 0 };
static const uint8_t entry_path[] = { '\\', 0, 'x', 0, '.', 0, 'c', 0, 'o', 0, 'n', 0, 'f', 0, 0, 0 };

static size_t input(uint32_t tag, const uint8_t *path, size_t path_bytes, const char *file,
                    uint8_t *dst, size_t dst_size) {
        size_t n = 0;
        mb_err r = mb_pcr5_input_build(tag, path, path_bytes, file, file ? strlen(file) : 0, dst, dst_size, &n);
        CHECK_EQ_INT(r, MB_OK);
        return n;
}

TEST(pcr5_input_layout) {
        uint8_t buf[128];
        size_t n = input(MB_TAG_LOADER_CONF, conf_path, sizeof(conf_path), "default x\n", buf, sizeof(buf));
        /* tag 0x6d736801 LE, size 40 LE, the path, then the file. */
        static const uint8_t head[8] = { 0x01, 0x68, 0x73, 0x6d, 40, 0, 0, 0 };
        CHECK_EQ_INT(n, 8 + 40 + 10);
        CHECK(memcmp(buf, head, 8) == 0);
        CHECK(memcmp(buf + 8, conf_path, 40) == 0);
        CHECK(memcmp(buf + 48, "default x\n", 10) == 0);
}

/* The issue-9 attack: a loader.conf holding an entry's exact bytes, and an
 * absent loader.conf against an empty one: the digest inputs differ. */
TEST(pcr5_inputs_never_collide) {
        uint8_t a[128], b[128];
        const char *entry = "title t\nlinux /vmlinuz\noptions quiet\n";
        size_t na = input(MB_TAG_LOADER_CONF, conf_path, sizeof(conf_path), entry, a, sizeof(a));
        size_t nb = input(MB_TAG_BLS_ENTRY, entry_path, sizeof(entry_path), entry, b, sizeof(b));
        CHECK(na != nb || memcmp(a, b, na) != 0);
        na = input(MB_TAG_FILE_ABSENT, conf_path, sizeof(conf_path), NULL, a, sizeof(a));
        nb = input(MB_TAG_LOADER_CONF, conf_path, sizeof(conf_path), "", b, sizeof(b));
        CHECK_EQ_INT(na, nb);
        CHECK(memcmp(a, b, na) != 0);
        /* Same bytes, same tag, another file name. */
        na = input(MB_TAG_BLS_ENTRY, entry_path, sizeof(entry_path), entry, a, sizeof(a));
        nb = input(MB_TAG_BLS_ENTRY_BAD, entry_path, sizeof(entry_path), entry, b, sizeof(b));
        CHECK(memcmp(a, b, na < nb ? na : nb) != 0);
}

TEST(pcr5_input_bounds) {
        uint8_t buf[16];
        size_t n = 7;
        CHECK_EQ_INT(mb_pcr5_input_build(MB_TAG_LOADER_CONF, conf_path, sizeof(conf_path), "x", 1,
                                         buf, sizeof(buf), &n), MB_ERR_NOSPACE);
        CHECK_EQ_INT(n, 7);
        CHECK_EQ_INT(mb_pcr5_input_size(SIZE_MAX - 4, 0, &n), MB_ERR_OVERFLOW);
        CHECK_EQ_INT(mb_pcr5_input_size(16, SIZE_MAX - 10, &n), MB_ERR_OVERFLOW);
        CHECK_EQ_INT(mb_pcr5_input_size(16, 100, &n), MB_OK);
        CHECK_EQ_INT(n, 124);
}

/* A fake x86 kernel image: "HdrS", protocol version, kernel_version. */
static size_t fake_kernel(uint8_t *k, size_t size, uint16_t proto, const char *version) {
        memset(k, 0, size);
        memcpy(k + 0x202, "HdrS", 4);
        k[0x206] = (uint8_t) proto;
        k[0x207] = (uint8_t) (proto >> 8);
        if (version) {
                k[0x20e] = 0x00;        /* version string at 0x300 + 0x200 */
                k[0x20f] = 0x03;
                memcpy(k + 0x500, version, strlen(version) + 1);
        }
        return size;
}

TEST(linux_stub_initrd_decision) {
        static uint8_t k[0x600];
        static const struct { const char *v; bool measures; } cases[] = {
                { "6.1.0-57-amd64 (debian-kernel@lists.debian.org) #1", true },
                { "5.17.0", true }, { "5.16.20-generic", false }, { "5.15.0-91-generic", false },
                { "5.10.0-28-amd64", false }, { "5.9.0", false }, { "10.0.1", true }, { "5.170", true },
                { "6", false }, { "x.1", false }, { "6.", false }, { ".6.1", false }, { "", false },
        };
        for (size_t i = 0; i < MB_ARRAY_SIZE(cases); i++) {
                fake_kernel(k, sizeof(k), 0x020f, cases[i].v);
                if (mb_linux_stub_measures_initrd(k, sizeof(k)) != cases[i].measures) {
                        fprintf(stderr, "  version \"%s\": expected %d\n", cases[i].v, cases[i].measures);
                        tl_case_failed = 1;
                }
        }
        fake_kernel(k, sizeof(k), 0x01ff, "6.1.0");      /* protocol before 2.00 */
        CHECK(!mb_linux_stub_measures_initrd(k, sizeof(k)));
        fake_kernel(k, sizeof(k), 0x020f, NULL);         /* no kernel_version */
        CHECK(!mb_linux_stub_measures_initrd(k, sizeof(k)));
        fake_kernel(k, sizeof(k), 0x020f, "6.1.0");
        CHECK(!mb_linux_stub_measures_initrd(k, 0x502)); /* string cut by the end of the file */
        CHECK(!mb_linux_stub_measures_initrd(k, 0x20f)); /* file ends inside the header */
        k[0x203] = 'x';
        CHECK(!mb_linux_stub_measures_initrd(k, sizeof(k)));
        CHECK(!mb_linux_stub_measures_initrd("MZ", 2));
}

/* LoadOptions from Linux 6.1; the version read as MAJOR.MINOR or not at all. */
TEST(linux_stub_load_options_and_version) {
        static uint8_t k[0x600];
        static const struct { const char *v; bool measures; unsigned major, minor; } cases[] = {
                { "6.1.0-57-rt-amd64 (debian-kernel@lists.debian.org)", true, 6, 1 },
                { "6.0.19", false, 6, 0 }, { "5.19.0", false, 5, 19 }, { "6.10", true, 6, 10 },
                { "7.0", true, 7, 0 }, { "5.17.0", false, 5, 17 },
        };
        unsigned major = 99, minor = 99;

        for (size_t i = 0; i < MB_ARRAY_SIZE(cases); i++) {
                fake_kernel(k, sizeof(k), 0x020f, cases[i].v);
                CHECK_EQ_INT(mb_linux_stub_measures_load_options(k, sizeof(k)), cases[i].measures);
                CHECK_EQ_INT(mb_linux_kernel_version(k, sizeof(k), &major, &minor), MB_OK);
                CHECK_EQ_INT(major, cases[i].major);
                CHECK_EQ_INT(minor, cases[i].minor);
        }
        major = minor = 99;
        fake_kernel(k, sizeof(k), 0x020f, "x.1");
        CHECK_EQ_INT(mb_linux_kernel_version(k, sizeof(k), &major, &minor), MB_ERR_INVALID);
        CHECK(!mb_linux_stub_measures_load_options(k, sizeof(k)));
        CHECK_EQ_INT(major, 99);        /* untouched on failure */
        CHECK_EQ_INT(mb_linux_kernel_version("MZ", 2, &major, &minor), MB_ERR_INVALID);
}

/* The real Debian kernel the integration tests boot (6.1): its stub measures. */
TEST(linux_stub_initrd_debian_kernel) {
        size_t n = 0;
        uint8_t *k = tl_read_file("build/kernel/vmlinuz", &n);
        if (!k) {
                fprintf(stderr, "  build/kernel/vmlinuz missing (make deps)\n");
                tl_case_failed = 1;
                return;
        }
        CHECK(mb_linux_stub_measures_initrd(k, n));
        CHECK(mb_linux_stub_measures_load_options(k, n));
        free(k);
}

static mb_err policy(const char *text, mb_boot_policy *p) {
        return mb_boot_policy_parse(text, strlen(text), p);
}

TEST(boot_policy_parse) {
        mb_boot_policy p;
        static char section[MB_BOOT_POLICY_SIZE];

        CHECK_EQ_INT(policy("", &p), MB_OK);
        CHECK(!p.tpm_required && !p.tpm_failure_boot);
        CHECK_EQ_INT(policy("tpm-required yes\ntpm-failure boot\n", &p), MB_OK);
        CHECK(p.tpm_required && p.tpm_failure_boot);
        CHECK_EQ_INT(policy("# comment\n\ntpm-required no\n", &p), MB_OK);
        CHECK(!p.tpm_required);
        CHECK(p.totp == MB_TOTP_NO);    /* the default floor */
        CHECK_EQ_INT(policy("totp show\n", &p), MB_OK);
        CHECK(p.totp == MB_TOTP_SHOW);
        CHECK_EQ_INT(policy("tpm-required yes\ntotp require\n", &p), MB_OK);
        CHECK(p.totp == MB_TOTP_REQUIRE && p.tpm_required);
        /* Fixed-size section: text, then NULs only. */
        strcpy(section, "tpm-required yes\n");
        CHECK_EQ_INT(mb_boot_policy_parse(section, sizeof(section), &p), MB_OK);
        CHECK(p.tpm_required);
        section[100] = 'x';
        p.err_line = 99;
        CHECK_EQ_INT(mb_boot_policy_parse(section, sizeof(section), &p), MB_ERR_INVALID);
        CHECK_EQ_INT(p.err_line, 0);
}

TEST(boot_policy_strict) {
        static const struct { const char *text; size_t line; } bad[] = {
                { "tpm-required true\n", 1 },           /* loader.conf synonyms are not accepted */
                { "tpm-required\n", 1 },
                { "tpm-failure continue\n", 1 },
                { "tpm-requird yes\n", 1 },             /* a typo is not ignored */
                { "tpm-required yes\ntpm-required no\n", 2 },
                { "tpm-failure boot\nfoo bar\n", 2 },
                { "totp yes\n", 1 },                    /* only no|show|require */
                { "totp\n", 1 },
                { "totp show\ntotp no\n", 2 },          /* a later line cannot lower it */
        };
        for (size_t i = 0; i < MB_ARRAY_SIZE(bad); i++) {
                mb_boot_policy p = { .tpm_required = true };
                p.err_line = 77;
                CHECK_EQ_INT(policy(bad[i].text, &p), MB_ERR_INVALID);
                CHECK_EQ_INT(p.err_line, bad[i].line);
                CHECK(p.tpm_required);  /* only err_line written */
        }
}

TEST(boot_policy_format_roundtrip) {
        char buf[64], small[8];
        size_t len = 0;
        for (int i = 0; i < 12; i++) {
                mb_boot_policy p = { .tpm_required = i & 1, .tpm_failure_boot = (i >> 1) & 1,
                                     .totp = (mb_totp_mode) (i >> 2) }, q;
                CHECK_EQ_INT(mb_boot_policy_format(&p, buf, sizeof(buf), &len), MB_OK);
                CHECK_EQ_INT(len, strlen(buf));
                CHECK_EQ_INT(policy(buf, &q), MB_OK);
                CHECK(q.tpm_required == p.tpm_required && q.tpm_failure_boot == p.tpm_failure_boot &&
                      q.totp == p.totp);
        }
        {
                mb_boot_policy p = { 0 };
                CHECK_EQ_INT(mb_boot_policy_format(&p, buf, sizeof(buf), NULL), MB_OK);
                CHECK(strcmp(buf, "tpm-required no\ntpm-failure refuse\ntotp no\n") == 0);
                memset(small, 'z', sizeof(small));
                CHECK_EQ_INT(mb_boot_policy_format(&p, small, sizeof(small), NULL), MB_ERR_NOSPACE);
                CHECK(small[0] == 'z');
        }
}

/* Issue 20, finding 7: loader.conf raises the built-in TOTP floor, never
 * lowers it; every pair against the order no < show < require. */
TEST(boot_policy_totp_floor) {
        static const mb_totp_mode want[3][3] = {
                /* conf:  no               show             require */
                { MB_TOTP_NO,      MB_TOTP_SHOW,    MB_TOTP_REQUIRE },  /* floor no */
                { MB_TOTP_SHOW,    MB_TOTP_SHOW,    MB_TOTP_REQUIRE },  /* floor show */
                { MB_TOTP_REQUIRE, MB_TOTP_REQUIRE, MB_TOTP_REQUIRE },  /* floor require */
        };
        for (int f = 0; f < 3; f++)
                for (int c = 0; c < 3; c++) {
                        mb_boot_policy p = { .totp = (mb_totp_mode) f };
                        CHECK(mb_boot_totp_mode(&p, (mb_totp_mode) c) == want[f][c]);
                }
}

int main(void) {
        RUN(pcr5_input_layout);
        RUN(pcr5_inputs_never_collide);
        RUN(pcr5_input_bounds);
        RUN(linux_stub_initrd_decision);
        RUN(linux_stub_load_options_and_version);
        RUN(linux_stub_initrd_debian_kernel);
        RUN(boot_policy_parse);
        RUN(boot_policy_strict);
        RUN(boot_policy_format_roundtrip);
        RUN(boot_policy_totp_floor);
        TL_EXIT();
}
