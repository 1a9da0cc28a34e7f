/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * mshim boot-policy: show or set the built-in boot policy of an
 * mshimx64.efi image (its .mpolicy section, docs/CONFIG.md). The section
 * has a fixed size, so setting it rewrites those bytes and nothing else;
 * that must happen before signing, because the signature covers them.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "cli.h"
#include "mb/mboot.h"
#include "mb/pe.h"

/* The image's .mpolicy section, parsed; prints its own error. */
static int read_policy(const char *path, const cli_file *f, mb_pe *pe, const uint8_t **ret_sec,
                       mb_boot_policy *ret) {
        size_t size;
        mb_err r;

        r = mb_pe_parse(f->data, f->size, pe);
        if (r != MB_OK) {
                cli_error("%s: not a PE image (%s)", path, mb_strerror(r));
                return -1;
        }
        r = mb_pe_find_section(pe, MB_BOOT_POLICY_SECTION, ret_sec, &size);
        if (r != MB_OK || size != MB_BOOT_POLICY_SIZE) {
                cli_error("%s: no %d-byte %s section: not an mshim image of this version", path,
                          MB_BOOT_POLICY_SIZE, MB_BOOT_POLICY_SECTION);
                return -1;
        }
        r = mb_boot_policy_parse(*ret_sec, size, ret);
        if (r != MB_OK) {
                cli_error("%s: invalid boot policy (%s at line %zu); mshim refuses to boot with it",
                          path, mb_strerror(r), ret->err_line);
                return -1;
        }
        return 0;
}

/* Apply "KEY=VALUE" by parsing the one-line policy it makes, so the CLI
 * accepts exactly what the loader accepts. */
static int apply_set(mb_boot_policy *p, const char *kv, unsigned *seen) {
        static const char *const keys[] = { "tpm-required", "tpm-failure", "totp", "editor" };
        char line[128];
        const char *eq = strchr(kv, '=');
        mb_boot_policy one;
        size_t klen;

        for (size_t i = 0; eq && i < MB_ARRAY_SIZE(keys); i++) {
                klen = strlen(keys[i]);
                if ((size_t) (eq - kv) != klen || strncmp(kv, keys[i], klen) != 0)
                        continue;
                if (*seen & (1u << i)) {
                        cli_usage_error("boot-policy", "--set %s given twice", keys[i]);
                        return -1;
                }
                *seen |= 1u << i;
                /* Start from p so the other keys keep their values. */
                if (snprintf(line, sizeof(line), "%s %s\n", keys[i], eq + 1) >= (int) sizeof(line) ||
                    mb_boot_policy_parse(line, strlen(line), &one) != MB_OK) {
                        cli_usage_error("boot-policy", "--set %s: invalid value", kv);
                        return -1;
                }
                if (i == 0)
                        p->tpm_required = one.tpm_required;
                else if (i == 1)
                        p->tpm_failure_boot = one.tpm_failure_boot;
                else if (i == 2)
                        p->totp = one.totp;
                else
                        p->editor_off = one.editor_off;
                return 0;
        }
        cli_usage_error("boot-policy", "--set %s: expected tpm-required=yes|no, tpm-failure=refuse|boot, "
                        "totp=no|show|require or editor=yes|no", kv);
        return -1;
}

/* Write the image with the new section bytes, and its PE CheckSum
 * recomputed (PE Format, "CheckSum"), to a new file OUT. */
static int write_image(const char *out, const cli_file *f, const mb_pe *pe, size_t sec_off,
                       const char *text, size_t len) {
        uint8_t *img = malloc(f->size);
        size_t done = 0;
        ssize_t w;
        int fd = -1, r = -1;

        if (!img) {
                cli_error("out of memory");
                return -1;
        }
        memcpy(img, f->data, f->size);
        memset(img + sec_off, 0, MB_BOOT_POLICY_SIZE);
        memcpy(img + sec_off, text, len);
        mb_put_le32(img + pe->checksum_off, mb_pe_checksum(img, f->size, pe->checksum_off));
        fd = open(out, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
        if (fd < 0) {
                cli_error("cannot create %s: %s%s", out, strerror(errno),
                          errno == EEXIST ? " (it is never overwritten: remove it or pick another name)" : "");
                goto out;
        }
        while (done < f->size) {
                w = write(fd, img + done, f->size - done);
                if (w < 0 && errno == EINTR)
                        continue;
                if (w <= 0)
                        break;
                done += (size_t) w;
        }
        if (done != f->size || fsync(fd) < 0) {
                cli_error("cannot write %s: %s", out, strerror(errno));
                unlink(out);
                goto out;
        }
        r = 0;
out:
        if (fd >= 0 && close(fd) < 0 && r == 0) {
                cli_error("cannot write %s: %s", out, strerror(errno));
                unlink(out);
                r = -1;
        }
        free(img);
        return r;
}

static int set_policy(const char *image, const cli_file *f, const mb_pe *pe, const uint8_t *sec,
                      mb_boot_policy *p, char **sets, size_t n_sets, const char *out) {
        char text[MB_BOOT_POLICY_SIZE];
        unsigned seen = 0;
        size_t len;

        if (pe->cert_size) {
                cli_error("%s is signed; set the boot policy before signing (the signature covers it), "
                          "e.g. on the unsigned build/mshimx64.efi", image);
                return EXIT_BAD_INPUT;
        }
        for (size_t i = 0; i < n_sets; i++)
                if (apply_set(p, sets[i], &seen) < 0)
                        return EXIT_BAD_INPUT;
        if (mb_boot_policy_format(p, text, sizeof(text), &len) != MB_OK ||
            write_image(out, f, pe, (size_t) (sec - f->data), text, len) < 0)
                return EXIT_BAD_INPUT;
        printf("%s: boot policy written to %s:\n%s", image, out, text);
        return 0;
}

int cmd_boot_policy(int argc, char **argv) {
        static const struct option longopts[] = {
                { "set", required_argument, NULL, 's' },
                { "output", required_argument, NULL, 'o' },
                { "help", no_argument, NULL, 'h' },
                { 0 },
        };
        char *sets[4];
        size_t n_sets = 0;
        const char *out = NULL, *image;
        const uint8_t *sec = NULL;
        mb_boot_policy p;
        cli_file f;
        mb_pe pe;
        char text[MB_BOOT_POLICY_SIZE];
        int c, r = EXIT_BAD_INPUT;

        optind = 1;
        while ((c = cli_getopt(argc, argv, "ho:", longopts, "boot-policy")) != -1) {
                switch (c) {
                case 's':
                        if (n_sets == MB_ARRAY_SIZE(sets))
                                return cli_usage_error("boot-policy", "too many --set options");
                        sets[n_sets++] = optarg;
                        break;
                case 'o':
                        if (out)
                                return cli_usage_error("boot-policy", "-o given twice");
                        out = optarg;
                        break;
                case 'h': cli_help(stdout, "boot-policy"); return 0;
                default: return EXIT_BAD_INPUT;
                }
        }
        if (argc - optind != 1 || (n_sets && !out) || (!n_sets && out))
                return cli_usage_error("boot-policy", "boot-policy takes one IMAGE, and --set with -o OUT or neither");
        image = argv[optind];
        if (cli_file_load(image, &f) < 0)
                return EXIT_BAD_INPUT;
        if (read_policy(image, &f, &pe, &sec, &p) < 0)
                goto out;
        if (n_sets) {
                r = set_policy(image, &f, &pe, sec, &p, sets, n_sets, out);
                goto out;
        }
        mb_boot_policy_format(&p, text, sizeof(text), NULL);
        fputs(text, stdout);
        r = 0;
out:
        cli_file_free(&f);
        return r;
}
