/* SPDX-License-Identifier: BSD-2-Clause */
/* Authenticode signing of an EFI image (tools/lib/imgsign.c). */
#ifndef MB_TOOLS_IMGSIGN_H
#define MB_TOOLS_IMGSIGN_H
#include <stdbool.h>

typedef struct sign_opts {
        const char *key, *cert, *out, *image, *pass_file;
        bool in_place;
} sign_opts;

/* Sign o->image with o->key and o->cert into o->out (or in place), then
 * check the new signature: 0, or an exit status with a message. */
int sign_image(const sign_opts *o);

#endif
