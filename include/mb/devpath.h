/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Device paths as the loader gets them from the firmware (UEFI 2.10,
 * section 10.3): finding the GPT partition a path names, and the text form
 * of that partition's GUID the Boot Loader Interface's LoaderDevicePartUUID
 * variable holds (systemd's docs/BOOT_LOADER_INTERFACE.md).
 */
#ifndef MB_DEVPATH_H
#define MB_DEVPATH_H

#include "mb/base.h"

/* The partition GUID (16 bytes as stored, EFI mixed-endian) of the first
 * hard drive media node (type 4, subtype 1, UEFI 2.10 10.3.5.1) whose
 * partition format is GPT (2) and signature type GUID (2), in the device
 * path p[0..n), read up to its first end-entire node. MB_ERR_NOTFOUND when
 * there is none (an MBR partition, a whole disk, a network boot);
 * MB_ERR_TRUNCATED or MB_ERR_INVALID when a node before it is malformed:
 * no node length is trusted. ret_guid is untouched on failure. */
mb_err mb_devpath_gpt_partuuid(const uint8_t *p, size_t n, uint8_t ret_guid[16]);

/* LoaderDevicePartUUID's value for guid: the 36-character GUID text in
 * upper case as UTF-16LE, NUL-terminated (as systemd-boot sets it). */
#define MB_PARTUUID_TEXT_UNITS 36
#define MB_PARTUUID_VAR_SIZE ((MB_PARTUUID_TEXT_UNITS + 1) * 2)
void mb_devpath_partuuid_var(const uint8_t guid[16], uint8_t out[MB_PARTUUID_VAR_SIZE]);

#endif
