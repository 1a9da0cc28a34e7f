/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The Boot Loader Interface's entry id variables (systemd's
 * BOOT_LOADER_INTERFACE: LoaderEntryDefault, LoaderEntryOneShot,
 * LoaderEntrySelected; vendor GUID 4a67b082-0a4c-41cf-b6c7-440b29bb8c4f;
 * a UTF-16LE string with its NUL), read and written through efivarfs
 * ($MSHIM_EFIVARS, else /sys/firmware/efi/efivars), or in an OVMF
 * variable store file (store non-NULL: `--vars FILE`, for tests).
 */
#ifndef MSHIM_EFIVAR_H
#define MSHIM_EFIVAR_H

#include <stdbool.h>
#include <stdint.h>

#define EFIVAR_LOADER_GUID "4a67b082-0a4c-41cf-b6c7-440b29bb8c4f"
/* Non-volatile, boot and runtime access: what bootctl writes. */
#define EFIVAR_ATTR_NV_BS_RT 0x7u

/* The variable's value as UTF-8 in *ret (malloc'd; NULL when it does not
 * exist). 0, or -1 after a message (unreadable, not a UTF-16 string). */
int efivar_get_id(const char *store, const char *name, char **ret);
/* Write id (UTF-8, non-empty) with attrs; id NULL deletes the variable
 * (absent is fine). 0, or -1 after a message; nothing changed then. */
int efivar_set_id(const char *store, const char *name, const char *id, uint32_t attrs);

#endif
