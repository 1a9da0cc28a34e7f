/* SPDX-License-Identifier: BSD-2-Clause */
/* State shared by the fake firmware's files (tests/efiharness/fh_*.c). */
#ifndef MSHIM_FH_INTERNAL_H
#define MSHIM_FH_INTERNAL_H

#include "harness.h"

#define FH_MAX_PROTOS 16

typedef struct fh_handle {
        bool live;
        struct {
                EFI_GUID guid;
                void *iface;
                fh_loaded *owner;          /* image that installed it; NULL: mshim */
        } p[FH_MAX_PROTOS];
        int n;
        fh_loaded *image;                  /* set on image handles */
} fh_handle;

/* A file or directory of the fake volume. */
typedef struct fh_node {
        char path[512];                    /* "\loader\entries\a.conf", no trailing '\'; "" is the root */
        bool dir, odd_record;
        uint8_t *data;
        size_t size;
        const fh_image_spec *image;        /* LoadImage accepts these bytes */
        fh_image_spec image_copy;
} fh_node;

/* The fake lib's and fake firmware's own allocations are plain malloc;
 * only AllocatePool blocks are tracked. */
void *fh_xmalloc(size_t n);
char *fh_xstrdup(const char *s);

/* fh_fw.c */
extern EFI_SYSTEM_TABLE fh_st;
extern EFI_BOOT_SERVICES fh_bs;
extern EFI_RUNTIME_SERVICES fh_rt;
void fh_record_call(const char *service);
fh_handle *fh_handle_new(void);
fh_handle *fh_handle_valid(EFI_HANDLE h);   /* NULL (and an error) for an unknown or dead one */
EFI_STATUS fh_install(fh_handle *h, const EFI_GUID *guid, void *iface);
bool fh_guid_eq(const EFI_GUID *a, const EFI_GUID *b);
const char *fh_guid_name(const EFI_GUID *g);
fh_loaded *fh_running_image(void);

/* fh_fs.c */
fh_node *fh_node_find(const char *path);
size_t fh_n_nodes(void);
fh_node *fh_node_at(size_t i);
/* A new handle carrying SimpleFileSystem and a device path: the volume. */
fh_handle *fh_fs_volume(void);
size_t fh_open_files(void);             /* EFI_FILE_PROTOCOL handles not closed */
extern EFI_DEVICE_PATH *fh_volume_dp;

/* fh_tpm.c */
void fh_tpm_install(void);
void fh_tpm_measure_image(const void *buf, size_t size);

/* fh_lib.c */
void fh_console_append(const char *utf8);
size_t fh_dp_size(const EFI_DEVICE_PATH *dp);    /* bytes, end node included */
/* The file path node(s) of dp as a UTF-8 path ("" when none). */
void fh_dp_file_path(const EFI_DEVICE_PATH *dp, char *out, size_t cap);

#endif
