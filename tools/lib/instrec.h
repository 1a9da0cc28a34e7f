/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * What `mshim install` did, kept in the state directory (STATE/install.record,
 * docs/UPGRADES.md "mshim install"), so that `mshim uninstall` undoes exactly
 * that and `mshim status` can say what is installed where. The file is the
 * state directory's (root's, 0700), never the ESP's: the ESP belongs to
 * whoever had the disk, so nothing here is ever read from it.
 *
 * One "KEY VALUE" a line, VALUE the rest of the line (paths may hold
 * spaces; a path with a newline is refused when recorded):
 *
 *   mshim-install 1                  the format; first line
 *   esp /boot/efi                    the ESP's directory
 *   layout shim|signed|unsigned
 *   loader /usr/lib/mshim/mshimx64.efi   the image installed (package's)
 *   key PATH / cert PATH             the signing key and certificate, if any
 *   mshim EFI/mshim/grubx64.efi      mshim on the ESP (also a `file` line)
 *   boot-entry 0004                  the firmware boot entry added (hex)
 *   boot-order 0001,0000             BootOrder before the install
 *   confirmed yes|no                 --confirm made the entry first
 *   dir REL                          a directory made on the ESP
 *   file SHA256 REL                  a file written on the ESP
 *   host-file SHA256 /ABS            a file written outside the ESP
 *
 * dir, file and host-file lines are in the order they were made.
 */
#ifndef MB_INSTREC_H
#define MB_INSTREC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define INSTREC_NAME "install.record"

typedef enum { INSTREC_DIR, INSTREC_FILE, INSTREC_HOST_FILE } instrec_kind;

typedef struct instrec_item {
        instrec_kind kind;
        char *path;             /* ESP-relative (DIR, FILE) or absolute (HOST_FILE) */
        uint8_t sha256[32];     /* FILE, HOST_FILE */
} instrec_item;

typedef struct instrec {
        char *esp, *layout, *loader, *key, *cert, *mshim, *boot_entry, *boot_order;
        bool confirmed;
        instrec_item *items;
        size_t n_items;
} instrec;

/* Read PATH: 0, 1 when there is no such file (ret zeroed), -1 with a
 * message (unreadable, malformed). */
int instrec_load(const char *path, instrec *ret);
/* Write PATH atomically (cli_write_file): 0, or -1 with a message. */
int instrec_save(const char *path, const instrec *r);
/* Append an item (path copied): 0, or -1 with a message (out of memory, a
 * path with a newline). */
int instrec_add(instrec *r, instrec_kind kind, const char *path, const uint8_t sha256[32]);
/* Set a string member (copied; NULL clears): 0 or -1. */
int instrec_set(char **slot, const char *value);
void instrec_free(instrec *r);

/* SHA-256 of a file's contents: 0, or -1 (errno set; no message). */
int instrec_sha256_file(const char *path, uint8_t ret[32]);
/* An entry file recorded as PATH (ESP/loader/entries/NAME+LEFT-DONE.conf)
 * is renamed by boot counting (the loader's try, mshim bless) with its
 * bytes unchanged: the file in PATH's directory with PATH's entry id and
 * the SHA-256 sha, its path into ret_path (size bytes). 0 found, -1 none
 * (ret_path untouched or partly written). */
int instrec_renamed_entry(const char *path, const uint8_t sha[32], char *ret_path, size_t size);
void instrec_hex(const uint8_t d[32], char out[65]);

#endif
