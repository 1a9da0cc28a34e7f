/* SPDX-License-Identifier: BSD-2-Clause */
/* Entry id variables through efivarfs or an OVMF store (efivar.h). */
#include <errno.h>
#include <fcntl.h>
#include <linux/fs.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>
#include "cli.h"
#include "efivar.h"
#include "safeio.h"
#include "mb/bls.h"
#include "mb/varstore.h"

#define EFIVARFS_MAGIC 0xde5e81e4
#define ID_MAX_BYTES   1024             /* UTF-16LE bytes of an id we read or write */
#define STORE_MAX      ((size_t) 64 << 20)     /* as `mshim vars` */
#define NAME_MAX_UNITS 64

static const char *efivars_dir(void) {
        const char *d = getenv("MSHIM_EFIVARS");
        return d && *d ? d : "/sys/firmware/efi/efivars";
}

static char *var_path(const char *name) {
        const char *dir = efivars_dir();
        size_t n = strlen(dir) + strlen(name) + sizeof(EFIVAR_LOADER_GUID) + 2;
        char *p = malloc(n);

        if (p)
                snprintf(p, n, "%s/%s-%s", dir, name, EFIVAR_LOADER_GUID);
        else
                cli_error("out of memory");
        return p;
}

/* UTF-16LE units (the NUL, if any, ends them) as a new UTF-8 string. */
static int utf16_to_utf8(const char *name, const uint8_t *p, size_t size, char **ret) {
        char *s;
        mb_strbuf b;

        if (size % 2) {
                cli_error("%s: %zu bytes, not a UTF-16 string", name, size);
                return -1;
        }
        s = malloc(size * 2 + 1);
        if (!s) {
                cli_error("out of memory");
                return -1;
        }
        mb_strbuf_init(&b, s, size * 2 + 1);
        mb_strbuf_utf16le(&b, p, size / 2);
        *ret = s;
        return 0;
}

/* name as UTF-16LE with its NUL, for the store. */
static size_t name_utf16(const char *name, uint8_t out[NAME_MAX_UNITS * 2]) {
        size_t n = 0;

        return mb_utf8_to_utf16le(name, strlen(name), out, NAME_MAX_UNITS * 2, &n) == MB_OK ? n : 0;
}

/* An OVMF store opened for one variable under the loader's GUID. */
typedef struct store_var {
        cli_file f;
        uint8_t *img;           /* a copy of the file: edits are made here */
        mb_varstore vs;
        mb_guid guid;
        uint8_t name[NAME_MAX_UNITS * 2];
        size_t name_size;
} store_var;

static int store_open(const char *path, const char *name, store_var *s) {
        s->name_size = name_utf16(name, s->name);
        mb_guid_parse(EFIVAR_LOADER_GUID, sizeof(EFIVAR_LOADER_GUID) - 1, &s->guid);
        if (cli_file_load_max(path, STORE_MAX, "an OVMF variable store", &s->f) < 0)
                return -1;
        s->img = malloc(s->f.size ? s->f.size : 1);
        if (!s->img) {
                cli_file_free(&s->f);
                cli_error("out of memory");
                return -1;
        }
        memcpy(s->img, s->f.data, s->f.size);
        if (mb_varstore_open(s->img, s->f.size, &s->vs) != MB_OK) {
                cli_error("%s: not an OVMF variable store, or corrupt", path);
                free(s->img);
                cli_file_free(&s->f);
                return -1;
        }
        return 0;
}

static void store_close(store_var *s) {
        free(s->img);
        cli_file_free(&s->f);
}

static int store_get(const char *path, const char *name, char **ret) {
        store_var s;
        mb_var v;
        int r = 0;

        if (store_open(path, name, &s) < 0)
                return -1;
        *ret = NULL;
        if (mb_varstore_find(&s.vs, s.name, s.name_size, &s.guid, &v) == MB_OK)
                r = utf16_to_utf8(name, v.data, v.data_size, ret);
        store_close(&s);
        return r;
}

static int store_set(const char *path, const char *name, const uint8_t *val, size_t n, uint32_t attrs) {
        store_var s;
        mb_err e;
        int r = -1;

        if (store_open(path, name, &s) < 0)
                return -1;
        e = val ? mb_varstore_set(&s.vs, s.name, s.name_size, &s.guid, attrs, NULL, val, n)
                : mb_varstore_delete(&s.vs, s.name, s.name_size, &s.guid);
        if (e == MB_ERR_NOTFOUND && !val)
                r = 0;          /* nothing to delete */
        else if (e != MB_OK)
                cli_error("%s: cannot write %s (%s); nothing written", path, name, mb_strerror(e));
        else
                r = cli_write_file(path, CLI_MODE_SECRET, s.img, s.f.size);
        store_close(&s);
        return r;
}

/* efivarfs marks most variables immutable; a write or unlink needs the
 * flag off (chattr -i). Elsewhere (a test directory) there is no flag. */
static void clear_immutable(const char *path) {
        int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
        int flags;

        if (fd < 0)
                return;
        if (ioctl(fd, FS_IOC_GETFLAGS, &flags) == 0 && (flags & FS_IMMUTABLE_FL)) {
                flags &= ~FS_IMMUTABLE_FL;
                (void) ioctl(fd, FS_IOC_SETFLAGS, &flags);
        }
        close(fd);
}

static int fs_get(const char *name, char **ret) {
        char *path = var_path(name);
        cli_file f;
        int r = -1;

        if (!path)
                return -1;
        *ret = NULL;
        if (access(path, F_OK) < 0 && errno == ENOENT) {
                r = 0;
        } else if (cli_file_load_max(path, ID_MAX_BYTES + 4, "an entry id variable", &f) == 0) {
                /* efivarfs: u32 attributes, then the value. */
                if (f.size < 4)
                        cli_error("%s: %zu bytes, not an EFI variable", path, f.size);
                else
                        r = utf16_to_utf8(name, f.data + 4, f.size - 4, ret);
                cli_file_free(&f);
        }
        free(path);
        return r;
}

/* One write() of attributes and value, as efivarfs requires; O_TRUNC only
 * outside efivarfs (there a write replaces the whole value). */
static int fs_set(const char *name, const uint8_t *val, size_t n, uint32_t attrs) {
        char *path = var_path(name);
        uint8_t buf[4 + ID_MAX_BYTES];
        struct statfs sfs;
        int fd = -1, r = -1, trunc;

        if (!path)
                return -1;
        clear_immutable(path);
        if (!val) {
                r = unlink(path) == 0 || errno == ENOENT ? 0 : -1;
                if (r < 0)
                        cli_error("%s: cannot delete it: %s", path, strerror(errno));
                goto out;
        }
        trunc = statfs(efivars_dir(), &sfs) == 0 && (unsigned long) sfs.f_type == EFIVARFS_MAGIC ? 0 : O_TRUNC;
        mb_put_le32(buf, attrs);
        memcpy(buf + 4, val, n);
        fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC | O_NOFOLLOW | trunc, 0644);
        if (fd < 0 || write(fd, buf, 4 + n) != (ssize_t) (4 + n)) {
                cli_error("%s: cannot write it: %s", path, strerror(errno));
                goto out;
        }
        r = 0;
out:
        if (fd >= 0 && close(fd) < 0 && r == 0) {
                cli_error("%s: cannot write it: %s", path, strerror(errno));
                r = -1;
        }
        free(path);
        return r;
}

int efivar_get_id(const char *store, const char *name, char **ret) {
        return store ? store_get(store, name, ret) : fs_get(name, ret);
}

int efivar_set_id(const char *store, const char *name, const char *id, uint32_t attrs) {
        uint8_t val[ID_MAX_BYTES];
        size_t n = 0;

        if (id && mb_utf8_to_utf16le(id, strlen(id), val, sizeof(val), &n) != MB_OK) {
                cli_error("%s: not an entry id (UTF-8, at most %d characters): '%s'", name, ID_MAX_BYTES / 2 - 1, id);
                return -1;
        }
        return store ? store_set(store, name, id ? val : NULL, n, attrs) : fs_set(name, id ? val : NULL, n, attrs);
}
