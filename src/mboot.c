/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * What mshim measures, as pure functions (include/mb/mboot.h): the tagged
 * event layout, the PCR 5 digest input, whether a Linux stub measures its
 * initrd, and the built-in boot policy.
 */
#include "mb/mboot.h"
#include "mb/bls.h"

mb_err mb_tagged_event_build(uint32_t tag, const void *data, size_t data_size,
                             uint8_t *dst, size_t dst_size, size_t *ret_size) {
        if (data_size > UINT32_MAX)
                return MB_ERR_OVERFLOW;
        if (mb_out_of_bounds(dst_size, 8, data_size))
                return MB_ERR_NOSPACE;
        mb_put_le32(dst, tag);
        mb_put_le32(dst + 4, (uint32_t) data_size);
        mb_memcpy(dst + 8, data, data_size);
        *ret_size = 8 + data_size;
        return MB_OK;
}

mb_err mb_pcr5_input_size(size_t path_bytes, size_t file_size, size_t *ret_size) {
        size_t event;

        if (path_bytes > UINT32_MAX || path_bytes > SIZE_MAX - 8)
                return MB_ERR_OVERFLOW;
        event = 8 + path_bytes;
        if (file_size > SIZE_MAX - event)
                return MB_ERR_OVERFLOW;
        *ret_size = event + file_size;
        return MB_OK;
}

mb_err mb_pcr5_input_build(uint32_t tag, const uint8_t *path_utf16, size_t path_bytes,
                           const void *file, size_t file_size,
                           uint8_t *dst, size_t dst_size, size_t *ret_size) {
        size_t need, event;
        mb_err r;

        r = mb_pcr5_input_size(path_bytes, file_size, &need);
        if (r != MB_OK)
                return r;
        if (dst_size < need)
                return MB_ERR_NOSPACE;
        r = mb_tagged_event_build(tag, path_utf16, path_bytes, dst, dst_size, &event);
        if (r != MB_OK)
                return r;
        mb_memcpy(dst + event, file, file_size);
        *ret_size = need;
        return MB_OK;
}

/* ---- Linux EFI stub: does it measure the initrd? ------------------------- */

/* Offsets in the x86 boot protocol's setup header
 * (Documentation/arch/x86/boot.rst, "The Real-Mode Kernel Header"). */
#define SETUP_HEADER_MAGIC   0x202   /* "HdrS" */
#define SETUP_VERSION        0x206   /* boot protocol version, e.g. 0x020f */
#define SETUP_KERNEL_VERSION 0x20e   /* pointer to the version string, minus 0x200 */
#define KERNEL_VERSION_MAX   64      /* "6.1.0-57-amd64 (...)": only the numbers matter */

/* Linux 5.17: "efi/libstub: measure loaded initrd info into the TPM". */
#define STUB_MEASURES_INITRD_MAJOR 5
#define STUB_MEASURES_INITRD_MINOR 17
/* Linux 6.1: "efi/libstub: measure EFI LoadOptions" (PCR 9, tag
 * 0x8F3B22ED), skipped only for empty LoadOptions, which mshim never
 * passes. */
#define STUB_MEASURES_OPTIONS_MAJOR 6
#define STUB_MEASURES_OPTIONS_MINOR 1

/* A decimal number of at most 4 digits at s[*i], which must be followed by
 * `stop` (or end the string when stop is 0). */
static bool version_number(const uint8_t *s, size_t len, size_t *i, char stop, unsigned *ret) {
        unsigned v = 0, digits = 0;

        for (; *i < len && s[*i] >= '0' && s[*i] <= '9' && digits < 4; (*i)++, digits++)
                v = v * 10 + (unsigned) (s[*i] - '0');
        if (digits == 0 || (stop && (*i >= len || s[*i] != stop)))
                return false;
        *ret = v;
        return true;
}

mb_err mb_linux_kernel_version(const void *image, size_t size, unsigned *ret_major, unsigned *ret_minor) {
        const uint8_t *p = image;
        unsigned major, minor;
        size_t off, i = 0, len;

        if (mb_out_of_bounds(size, SETUP_KERNEL_VERSION, 2) ||
            mb_memcmp(p + SETUP_HEADER_MAGIC, "HdrS", 4) != 0 ||
            mb_le16(p + SETUP_VERSION) < 0x0200)
                return MB_ERR_INVALID;
        off = (size_t) mb_le16(p + SETUP_KERNEL_VERSION) + 0x200;
        if (mb_le16(p + SETUP_KERNEL_VERSION) == 0 || off >= size)
                return MB_ERR_INVALID;
        len = size - off < KERNEL_VERSION_MAX ? size - off : KERNEL_VERSION_MAX;
        if (!version_number(p + off, len, &i, '.', &major))
                return MB_ERR_INVALID;
        i++;
        if (!version_number(p + off, len, &i, 0, &minor))
                return MB_ERR_INVALID;
        *ret_major = major;
        *ret_minor = minor;
        return MB_OK;
}

static bool version_at_least(unsigned major, unsigned minor, unsigned want_major, unsigned want_minor) {
        return major > want_major || (major == want_major && minor >= want_minor);
}

bool mb_linux_stub_measures_initrd(const void *image, size_t size) {
        unsigned major, minor;

        return mb_linux_kernel_version(image, size, &major, &minor) == MB_OK &&
               version_at_least(major, minor, STUB_MEASURES_INITRD_MAJOR, STUB_MEASURES_INITRD_MINOR);
}

bool mb_linux_stub_measures_load_options(const void *image, size_t size) {
        unsigned major, minor;

        return mb_linux_kernel_version(image, size, &major, &minor) == MB_OK &&
               version_at_least(major, minor, STUB_MEASURES_OPTIONS_MAJOR, STUB_MEASURES_OPTIONS_MINOR);
}

/* ---- the built-in boot policy --------------------------------------------- */

/* Exactly one of two words: no synonyms, so the text has one reading. */
static mb_err policy_choice(mb_str v, const char *off_word, const char *on_word, bool *ret) {
        if (mb_str_eq(v, off_word))
                *ret = false;
        else if (mb_str_eq(v, on_word))
                *ret = true;
        else
                return MB_ERR_INVALID;
        return MB_OK;
}

/* loader.conf's three words, and only them. */
static mb_err policy_totp(mb_str v, mb_totp_mode *ret) {
        if (mb_str_eq(v, "no"))
                *ret = MB_TOTP_NO;
        else if (mb_str_eq(v, "show"))
                *ret = MB_TOTP_SHOW;
        else if (mb_str_eq(v, "require"))
                *ret = MB_TOTP_REQUIRE;
        else
                return MB_ERR_INVALID;
        return MB_OK;
}

typedef struct policy_ctx {
        mb_boot_policy p;
        unsigned seen;          /* keys given: each at most once */
} policy_ctx;

static mb_err policy_apply(void *ctx, const mb_conf_line *l) {
        policy_ctx *c = ctx;
        unsigned bit;
        mb_err r;

        if (mb_str_eq(l->key, "tpm-required")) {
                bit = 1;
                r = policy_choice(l->value, "no", "yes", &c->p.tpm_required);
        } else if (mb_str_eq(l->key, "tpm-failure")) {
                bit = 2;
                r = policy_choice(l->value, "refuse", "boot", &c->p.tpm_failure_boot);
        } else if (mb_str_eq(l->key, "totp")) {
                bit = 4;
                r = policy_totp(l->value, &c->p.totp);
        } else if (mb_str_eq(l->key, "editor")) {
                bit = 8;
                r = policy_choice(l->value, "yes", "no", &c->p.editor_off);
        } else {
                return MB_ERR_INVALID;
        }
        if (r == MB_OK && (c->seen & bit))
                r = MB_ERR_INVALID;
        c->seen |= bit;
        return r;
}

mb_err mb_boot_policy_parse(const void *buf, size_t size, mb_boot_policy *ret) {
        const char *text = buf;
        size_t len = mb_strnlen(text, size);
        policy_ctx c = { .seen = 0 };
        mb_err r;

        for (size_t i = len; i < size; i++)
                if (text[i] != 0) {
                        ret->err_line = 0;
                        return MB_ERR_INVALID;
                }
        r = mb_conf_each(text, len, policy_apply, &c, &ret->err_line);
        if (r == MB_OK)
                *ret = c.p;
        return r;
}

mb_totp_mode mb_boot_totp_mode(const mb_boot_policy *p, mb_totp_mode conf) {
        /* The enum is ordered: no < show < require. */
        return conf > p->totp ? conf : p->totp;
}

mb_err mb_boot_policy_format(const mb_boot_policy *p, char *dst, size_t dst_size, size_t *ret_len) {
        static const char *const totp[] = {
                [MB_TOTP_NO] = "totp no\n", [MB_TOTP_SHOW] = "totp show\n", [MB_TOTP_REQUIRE] = "totp require\n",
        };
        const char *lines[4] = {
                p->tpm_required ? "tpm-required yes\n" : "tpm-required no\n",
                p->tpm_failure_boot ? "tpm-failure boot\n" : "tpm-failure refuse\n",
                totp[p->totp],
                p->editor_off ? "editor no\n" : "",
        };
        size_t len[4], total = 0;

        for (size_t i = 0; i < 4; i++)
                total += len[i] = mb_strnlen(lines[i], 64);
        if (dst_size < total + 1)
                return MB_ERR_NOSPACE;
        total = 0;
        for (size_t i = 0; i < 4; i++) {
                mb_memcpy(dst + total, lines[i], len[i]);
                total += len[i];
        }
        dst[total] = 0;
        if (ret_len)
                *ret_len = total;
        return MB_OK;
}
