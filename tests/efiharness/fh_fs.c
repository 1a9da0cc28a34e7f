/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The fake volume: EFI_SIMPLE_FILE_SYSTEM_PROTOCOL and EFI_FILE_PROTOCOL
 * (UEFI 2.10, 13.4-13.5) over files and directories the test gives.
 * Read-only; names compare without case, as on FAT.
 */
#include <stdlib.h>
#include <string.h>
#include "fh_internal.h"

#define FH_MAX_NODES 256

static fh_node *nodes[FH_MAX_NODES];
static size_t n_nodes;
static char *opened[512];
static size_t n_opened;
static size_t open_files;

typedef struct fh_open_file {
        EFI_FILE_PROTOCOL proto;        /* first: EFI_FILE_HANDLE is this */
        fh_node *node;
        size_t pos;                     /* bytes for a file, records for a directory */
        bool writable;                  /* opened with EFI_FILE_MODE_WRITE */
} fh_open_file;

/* Read-only unless a case says otherwise (fh_volume_writable). */
static bool volume_writable;

void fh_volume_writable(bool on) {
        volume_writable = on;
}

size_t fh_n_nodes(void) {
        return n_nodes;
}

fh_node *fh_node_at(size_t i) {
        return nodes[i];
}

/* "\A\b.conf" from "/a/b.conf", "a\b.conf", ...; "" is the root. */
static void normalize(const char *in, char *out, size_t cap) {
        size_t n = 0;

        for (; *in && n + 2 < cap; in++) {
                char c = *in == '/' ? '\\' : *in;

                if (c == '\\' && n && out[n - 1] == '\\')
                        continue;
                if (n == 0 && c != '\\')
                        out[n++] = '\\';
                out[n++] = c;
        }
        if (n && out[n - 1] == '\\')
                n--;
        out[n] = 0;
}

static bool path_eq(const char *a, const char *b) {
        for (; *a && *b; a++, b++) {
                char x = *a >= 'A' && *a <= 'Z' ? (char) (*a + 32) : *a;
                char y = *b >= 'A' && *b <= 'Z' ? (char) (*b + 32) : *b;

                if (x != y)
                        return false;
        }
        return *a == *b;
}

fh_node *fh_node_find(const char *path) {
        char norm[512];

        normalize(path, norm, sizeof(norm));
        for (size_t i = 0; i < n_nodes; i++)
                if (path_eq(nodes[i]->path, norm))
                        return nodes[i];
        return NULL;
}

static fh_node *node_add(const char *path, bool dir) {
        char norm[512], parent[512];
        fh_node *n = fh_node_find(path);
        char *slash;

        if (n)
                return n;
        normalize(path, norm, sizeof(norm));
        /* Parents first, so listings come out in creation order. */
        memcpy(parent, norm, sizeof(parent));
        slash = strrchr(parent, '\\');
        if (slash && slash != parent) {
                *slash = 0;
                node_add(parent, true);
        } else if (norm[0] && !fh_node_find("")) {
                node_add("", true);
        }
        if (n_nodes == FH_MAX_NODES)
                abort();
        n = calloc(1, sizeof(*n));
        if (!n)
                abort();
        memcpy(n->path, norm, sizeof(n->path));
        n->dir = dir;
        nodes[n_nodes++] = n;
        return n;
}

void fh_dir(const char *path) {
        node_add(path, true);
}

void fh_file(const char *path, const void *data, size_t size) {
        fh_node *n = node_add(path, false);

        free(n->data);
        n->data = memcpy(fh_xmalloc(size), data, size);
        n->size = size;
}

void fh_file_str(const char *path, const char *text) {
        fh_file(path, text, strlen(text));
}

const fh_node_bytes *fh_file_bytes(const char *path) {
        static fh_node_bytes b;
        const fh_node *n = fh_node_find(path);

        if (!n || n->dir)
                return NULL;
        b.data = n->data;
        b.size = n->size;
        return &b;
}

void fh_file_odd_record(const char *path) {
        fh_node *n = fh_node_find(path);

        if (n)
                n->odd_record = true;
}

void fh_image_bytes(const char *path, const void *data, size_t size, const fh_image_spec *spec) {
        fh_node *n;

        fh_file(path, data, size);
        n = fh_node_find(path);
        n->image_copy = *spec;
        n->image = &n->image_copy;
}

/* A minimal valid PE32+ EFI image (PE Format: MS-DOS header, "PE\0\0",
 * COFF header, optional header with 16 data directories, one section),
 * 1 KiB, whose section holds the text "fake image PATH" so every image's
 * bytes differ. SHIM_LOCK refuses anything that is not a PE. */
#define PUT16(o, v) (img[o] = (uint8_t) (v), img[(o) + 1] = (uint8_t) ((v) >> 8))
#define PUT32(o, v) (PUT16(o, (v) & 0xffff), PUT16((o) + 2, (uint32_t) (v) >> 16))
void fh_image(const char *path, const fh_image_spec *spec) {
        uint8_t img[0x400] = { 'M', 'Z' };
        const size_t pe = 0x40, opt = pe + 24, sec = opt + 240;

        PUT32(0x3c, pe);
        memcpy(img + pe, "PE\0\0", 4);
        PUT16(pe + 4, 0x8664);          /* Machine: x86-64 */
        PUT16(pe + 6, 1);               /* NumberOfSections */
        PUT16(pe + 20, 240);            /* SizeOfOptionalHeader */
        PUT16(pe + 22, 0x22);           /* executable, large address aware */
        PUT16(opt, 0x20b);              /* PE32+ */
        PUT32(opt + 16, 0x1000);        /* AddressOfEntryPoint */
        PUT32(opt + 32, 0x1000);        /* SectionAlignment */
        PUT32(opt + 36, 0x200);         /* FileAlignment */
        PUT32(opt + 56, 0x2000);        /* SizeOfImage */
        PUT32(opt + 60, 0x200);         /* SizeOfHeaders */
        PUT16(opt + 68, spec->subsystem ? spec->subsystem : 10);
        PUT32(opt + 108, 16);           /* NumberOfRvaAndSizes */
        memcpy(img + sec, ".text", 5);
        PUT32(sec + 8, 0x200);          /* VirtualSize */
        PUT32(sec + 12, 0x1000);        /* VirtualAddress */
        PUT32(sec + 16, 0x200);         /* SizeOfRawData */
        PUT32(sec + 20, 0x200);         /* PointerToRawData */
        PUT32(sec + 36, 0x60000020);    /* code, execute, read */
        snprintf((char *) img + 0x200, 0x200, "fake image %s", path);
        fh_image_bytes(path, img, sizeof(img), spec);
}
#undef PUT16
#undef PUT32

size_t fh_n_opened(void) {
        return n_opened;
}

const char *fh_opened_at(size_t i) {
        return i < n_opened ? opened[i] : NULL;
}

/* ---- EFI_FILE_PROTOCOL ----------------------------------------------------------- */

static const char *last_component(const char *path) {
        const char *s = strrchr(path, '\\');

        return s ? s + 1 : path;
}

/* An EFI_FILE_INFO for n (UEFI 2.10, 13.5.16) into buf; returns its size.
 * odd: the malformed record of fh_file_odd_record (no NUL, odd size). */
static size_t file_info(const fh_node *n, uint8_t *buf, size_t cap, bool odd) {
        CHAR16 name[256];
        size_t units = fh_utf16_from(last_component(n->path), name, 256);
        size_t size = SIZE_OF_EFI_FILE_INFO + units * sizeof(CHAR16);
        EFI_FILE_INFO info;

        if (odd)
                size -= 1;      /* the NUL's low byte only: odd, and unterminated */
        if (size > cap)
                return size;
        memset(&info, 0, sizeof(info));
        info.Size = size;
        info.FileSize = n->size;
        info.PhysicalSize = n->size;
        info.Attribute = EFI_FILE_READ_ONLY | (n->dir ? EFI_FILE_DIRECTORY : 0);
        memcpy(buf, &info, SIZE_OF_EFI_FILE_INFO);
        if (odd)
                name[units - 1] = L'x';
        memcpy(buf + SIZE_OF_EFI_FILE_INFO, name, size - SIZE_OF_EFI_FILE_INFO);
        return size;
}

static bool is_child(const fh_node *dir, const fh_node *n) {
        size_t d = strlen(dir->path);

        return n != dir && n->path[0] && strncmp(n->path, dir->path, d) == 0 && n->path[d] == '\\' &&
               !strchr(n->path + d + 1, '\\');
}

static EFI_FILE_PROTOCOL *file_new(fh_node *n);

static EFI_STATUS EFIAPI file_open(EFI_FILE_PROTOCOL *this, EFI_FILE_PROTOCOL **ret, CHAR16 *name,
                                   UINT64 mode, UINT64 attrs) {
        fh_open_file *f = (fh_open_file *) this;
        char path[1100];
        const char *u;
        fh_node *n;

        fh_record_call("File.Open");
        if (!ret || !name)
                return EFI_INVALID_PARAMETER;
        u = fh_utf8(name);
        if (n_opened < 512)
                opened[n_opened++] = fh_xstrdup(u);
        /* Writable volumes: open existing files for writing (SetInfo's
         * rename); nothing is created. */
        if (mode != EFI_FILE_MODE_READ &&
            (!volume_writable || mode != (EFI_FILE_MODE_READ | EFI_FILE_MODE_WRITE)))
                return EFI_WRITE_PROTECTED;
        if (u[0] == '\\')
                snprintf(path, sizeof(path), "%s", u);
        else
                snprintf(path, sizeof(path), "%s\\%s", f->node->path, u);
        n = fh_node_find(path);
        if (!n)
                return EFI_NOT_FOUND;
        *ret = file_new(n);
        ((fh_open_file *) *ret)->writable = mode != EFI_FILE_MODE_READ;
        return EFI_SUCCESS;
}

static EFI_STATUS EFIAPI file_close(EFI_FILE_PROTOCOL *this) {
        fh_record_call("File.Close");
        open_files--;
        free(this);
        return EFI_SUCCESS;
}

static EFI_STATUS EFIAPI file_read(EFI_FILE_PROTOCOL *this, UINTN *size, VOID *buf) {
        fh_open_file *f = (fh_open_file *) this;
        size_t k = 0;

        fh_record_call("File.Read");
        if (!size || (*size && !buf))
                return EFI_INVALID_PARAMETER;
        if (!f->node->dir) {
                size_t n = f->pos < f->node->size ? f->node->size - f->pos : 0;

                if (n > *size)
                        n = *size;
                memcpy(buf, f->node->data + f->pos, n);
                f->pos += n;
                *size = n;
                return EFI_SUCCESS;
        }
        for (size_t i = 0; i < n_nodes; i++) {
                size_t need;

                if (!is_child(f->node, nodes[i]) || k++ < f->pos)
                        continue;
                /* UEFI 2.10, 13.5.5: too small a buffer gets the size
                 * needed and the position stays. */
                need = file_info(nodes[i], buf, *size, nodes[i]->odd_record);
                if (need > *size) {
                        *size = need;
                        return EFI_BUFFER_TOO_SMALL;
                }
                *size = need;
                f->pos++;
                return EFI_SUCCESS;
        }
        *size = 0;      /* the end of the directory */
        return EFI_SUCCESS;
}

static EFI_STATUS EFIAPI file_get_info(EFI_FILE_PROTOCOL *this, EFI_GUID *type, UINTN *size, VOID *buf) {
        fh_open_file *f = (fh_open_file *) this;
        size_t need;

        fh_record_call("File.GetInfo");
        if (!type || !size || !fh_guid_eq(type, &gEfiFileInfoGuid)) {
                fh_error("File.GetInfo: only EFI_FILE_INFO is implemented by the fake");
                return EFI_UNSUPPORTED;
        }
        need = file_info(f->node, buf, buf ? *size : 0, false);
        if (need > *size) {
                *size = need;
                return EFI_BUFFER_TOO_SMALL;
        }
        *size = need;
        return EFI_SUCCESS;
}

static EFI_STATUS EFIAPI file_set_position(EFI_FILE_PROTOCOL *this, UINT64 pos) {
        fh_open_file *f = (fh_open_file *) this;

        fh_record_call("File.SetPosition");
        if (f->node->dir && pos != 0)
                return EFI_UNSUPPORTED;
        f->pos = pos == UINT64_MAX ? f->node->size : pos;
        return EFI_SUCCESS;
}

static EFI_STATUS EFIAPI file_get_position(EFI_FILE_PROTOCOL *this, UINT64 *pos) {
        fh_open_file *f = (fh_open_file *) this;

        fh_record_call("File.GetPosition");
        if (f->node->dir)
                return EFI_UNSUPPORTED;
        *pos = f->pos;
        return EFI_SUCCESS;
}

/* UEFI 2.10, 13.5.14 SetInfo with EFI_FILE_INFO: only a rename within
 * the directory (a new FileName without '\\') is modelled; a name another
 * file has is EFI_ACCESS_DENIED. */
static EFI_STATUS EFIAPI file_set_info(EFI_FILE_PROTOCOL *this, EFI_GUID *type, UINTN size, VOID *buf) {
        fh_open_file *f = (fh_open_file *) this;
        char path[1100], *slash;
        const char *u;

        fh_record_call("File.SetInfo");
        if (!type || !buf || !fh_guid_eq(type, &gEfiFileInfoGuid) || size < SIZE_OF_EFI_FILE_INFO + 2)
                return EFI_INVALID_PARAMETER;
        if (!f->writable)
                return EFI_ACCESS_DENIED;
        u = fh_utf8(((EFI_FILE_INFO *) buf)->FileName);
        if (!u[0] || strchr(u, '\\')) {
                fh_error("File.SetInfo: only a rename in the same directory is modelled");
                return EFI_UNSUPPORTED;
        }
        snprintf(path, sizeof(path), "%s", f->node->path);
        slash = strrchr(path, '\\');
        snprintf(slash ? slash + 1 : path, sizeof(path) - (size_t) (slash ? slash + 1 - path : 0), "%s", u);
        if (fh_node_find(path) && fh_node_find(path) != f->node)
                return EFI_ACCESS_DENIED;
        if (strlen(path) >= sizeof(f->node->path))
                return EFI_ACCESS_DENIED;
        memcpy(f->node->path, path, strlen(path) + 1);
        return EFI_SUCCESS;
}

static EFI_STATUS EFIAPI file_flush(EFI_FILE_PROTOCOL *this) {
        fh_record_call("File.Flush");
        return ((fh_open_file *) this)->writable ? EFI_SUCCESS : EFI_ACCESS_DENIED;
}

static EFI_STATUS EFIAPI file_unimpl(void) {
        fh_error("an EFI_FILE_PROTOCOL function the fake does not implement (write, delete, flush, ...)");
        return EFI_UNSUPPORTED;
}

static EFI_FILE_PROTOCOL *file_new(fh_node *n) {
        fh_open_file *f = calloc(1, sizeof(*f));

        if (!f)
                abort();
        f->proto = (EFI_FILE_PROTOCOL) {
                .Revision = EFI_FILE_PROTOCOL_REVISION,
                .Open = file_open, .Close = file_close, .Read = file_read,
                .GetInfo = file_get_info, .SetPosition = file_set_position, .GetPosition = file_get_position,
        };
        f->proto.Delete = (__typeof__(f->proto.Delete)) (void *) file_unimpl;
        f->proto.Write = (__typeof__(f->proto.Write)) (void *) file_unimpl;
        f->proto.SetInfo = file_set_info;
        f->proto.Flush = file_flush;
        f->node = n;
        open_files++;
        return &f->proto;
}

size_t fh_open_files(void) {
        return open_files;
}

/* ---- the volume ------------------------------------------------------------------ */

static EFI_STATUS EFIAPI open_volume(EFI_SIMPLE_FILE_SYSTEM_PROTOCOL *this, EFI_FILE_PROTOCOL **root) {
        fh_record_call("OpenVolume");
        if (!root)
                return EFI_INVALID_PARAMETER;
        *root = file_new(node_add("", true));
        return EFI_SUCCESS;
}

/* The volume's device path: one vendor hardware node (any GUID) + end,
 * with room for a hard drive node in between (fh_volume_partition). */
#define FH_HD_NODE 42
static const VENDOR_DEVICE_PATH volume_vendor = {
        .Header = { .Type = HARDWARE_DEVICE_PATH, .SubType = HW_VENDOR_DP,
                    .Length = { sizeof(VENDOR_DEVICE_PATH), 0 } },
        .Guid = { 0x6d73686d, 0x6861, 0x726e, { 'e', 's', 's', 'v', 'o', 'l', 'u', 'm' } },
};
static uint8_t volume_dp[sizeof(VENDOR_DEVICE_PATH) + FH_HD_NODE + sizeof(EFI_DEVICE_PATH)];
EFI_DEVICE_PATH *fh_volume_dp = (EFI_DEVICE_PATH *) volume_dp;

static void volume_dp_end(size_t off) {
        EFI_DEVICE_PATH *end = (EFI_DEVICE_PATH *) (volume_dp + off);

        end->Type = END_DEVICE_PATH_TYPE;
        end->SubType = END_ENTIRE_DEVICE_PATH_SUBTYPE;
        end->Length[0] = sizeof(EFI_DEVICE_PATH);
        end->Length[1] = 0;
}

void fh_volume_partition(uint8_t format, uint8_t sig_type, const uint8_t sig[16]) {
        uint8_t *hd = volume_dp + sizeof(VENDOR_DEVICE_PATH);

        memcpy(volume_dp, &volume_vendor, sizeof(volume_vendor));
        /* UEFI 2.10, 10.3.5.1: header, PartitionNumber, PartitionStart,
         * PartitionSize, PartitionSignature, PartitionFormat, SignatureType. */
        memset(hd, 0, FH_HD_NODE);
        hd[0] = MEDIA_DEVICE_PATH;
        hd[1] = MEDIA_HARDDRIVE_DP;
        hd[2] = FH_HD_NODE;
        hd[4] = 1;
        hd[9] = 0x08;           /* starts at LBA 2048 */
        hd[18] = 0x01;          /* 65536 sectors */
        memcpy(hd + 24, sig, 16);
        hd[40] = format;
        hd[41] = sig_type;
        volume_dp_end(sizeof(VENDOR_DEVICE_PATH) + FH_HD_NODE);
}

fh_handle *fh_fs_volume(void) {
        static EFI_SIMPLE_FILE_SYSTEM_PROTOCOL sfs = {
                .Revision = EFI_SIMPLE_FILE_SYSTEM_PROTOCOL_REVISION,
                .OpenVolume = open_volume,
        };
        static fh_handle *vol;

        if (!vol) {
                /* Unless the case gave it a partition node already. */
                if (volume_dp[0] == 0) {
                        memcpy(volume_dp, &volume_vendor, sizeof(volume_vendor));
                        volume_dp_end(sizeof(VENDOR_DEVICE_PATH));
                }
                vol = fh_handle_new();
                fh_install(vol, &gEfiSimpleFileSystemProtocolGuid, &sfs);
                fh_install(vol, &gEfiDevicePathProtocolGuid, fh_volume_dp);
                node_add("", true);
        }
        return vol;
}
