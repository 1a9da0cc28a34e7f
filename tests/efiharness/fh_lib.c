/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The gnu-efi library functions the loader calls (efilib.h), for the host:
 * same names and signatures, each doing what gnu-efi 3.0.15's does through
 * the (fake) boot services, so pool faults and frees are seen by the fake
 * firmware and memory bugs by ASan (gnu-efi's own byte loops would hide
 * them from it). Print's formats are gnu-efi's: %s CHAR16 *, %a CHAR8 *,
 * %d/%u/%x INT32 or, with l, INT64, %r an EFI_STATUS, %g an EFI_GUID *.
 * Add what a new loader function needs here; the link fails until then.
 */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include "fh_internal.h"

EFI_SYSTEM_TABLE *ST;
EFI_BOOT_SERVICES *BS;
EFI_RUNTIME_SERVICES *RT;

EFI_GUID gEfiLoadedImageProtocolGuid = EFI_LOADED_IMAGE_PROTOCOL_GUID;
EFI_GUID gEfiDevicePathProtocolGuid = EFI_DEVICE_PATH_PROTOCOL_GUID;
EFI_GUID gEfiSimpleFileSystemProtocolGuid = EFI_SIMPLE_FILE_SYSTEM_PROTOCOL_GUID;
EFI_GUID gEfiFileInfoGuid = EFI_FILE_INFO_ID;
EFI_GUID gEfiGlobalVariableGuid = EFI_GLOBAL_VARIABLE;

static char *console;
static size_t console_len, console_cap;

void fh_console_append(const char *s) {
        size_t n = strlen(s);

        if (console_len + n + 1 > console_cap) {
                console_cap = (console_len + n + 1) * 2;
                console = realloc(console, console_cap);
                if (!console)
                        abort();
        }
        memcpy(console + console_len, s, n + 1);
        console_len += n;
}

const char *fh_console(void) {
        return console ? console : "";
}

bool fh_console_has(const char *text) {
        return strstr(fh_console(), text) != NULL;
}

/* ---- strings ----------------------------------------------------------------------- */

static void put_utf8(char **p, char *end, uint32_t c) {
        char b[4];
        int n;

        if (c < 0x80)
                b[0] = (char) c, n = 1;
        else if (c < 0x800)
                b[0] = (char) (0xc0 | c >> 6), b[1] = (char) (0x80 | (c & 0x3f)), n = 2;
        else if (c < 0x10000)
                b[0] = (char) (0xe0 | c >> 12), b[1] = (char) (0x80 | ((c >> 6) & 0x3f)),
                b[2] = (char) (0x80 | (c & 0x3f)), n = 3;
        else
                b[0] = (char) (0xf0 | c >> 18), b[1] = (char) (0x80 | ((c >> 12) & 0x3f)),
                b[2] = (char) (0x80 | ((c >> 6) & 0x3f)), b[3] = (char) (0x80 | (c & 0x3f)), n = 4;
        if (end - *p > n) {
                memcpy(*p, b, (size_t) n);
                *p += n;
        }
}

/* CHAR16 string (surrogate pairs joined) to UTF-8, at most cap - 1 bytes. */
static void utf16_to_utf8(const CHAR16 *s, char *out, size_t cap) {
        char *p = out, *end = out + cap;

        for (; s && *s; s++) {
                uint32_t c = *s;

                if (c >= 0xd800 && c < 0xdc00 && s[1] >= 0xdc00 && s[1] < 0xe000)
                        c = 0x10000 + ((c - 0xd800) << 10) + (*++s - 0xdc00);
                put_utf8(&p, end, c);
        }
        *p = 0;
}

const char *fh_utf8(const CHAR16 *s) {
        static char buf[4][4096];
        static int k;
        char *b = buf[k++ % 4];

        utf16_to_utf8(s, b, sizeof(buf[0]));
        return b;
}

/* ASCII/UTF-8 (BMP only) to CHAR16 with NUL; returns units, NUL included. */
size_t fh_utf16_from(const char *s, CHAR16 *out, size_t units) {
        size_t n = 0;
        const uint8_t *p = (const uint8_t *) s;

        while (*p && n + 1 < units) {
                uint32_t c = *p++;

                if (c >= 0xe0 && p[0] && p[1])
                        c = ((c & 0x0f) << 12) | ((p[0] & 0x3fu) << 6) | (p[1] & 0x3fu), p += 2;
                else if (c >= 0xc0 && p[0])
                        c = ((c & 0x1f) << 6) | (p[0] & 0x3fu), p += 1;
                out[n++] = (CHAR16) c;
        }
        out[n++] = 0;
        return n;
}

UINTN StrLen(IN CONST CHAR16 *s) {
        UINTN n = 0;

        while (s[n])
                n++;
        return n;
}

UINTN StrSize(IN CONST CHAR16 *s) {
        return (StrLen(s) + 1) * sizeof(CHAR16);
}

INTN StrCmp(IN CONST CHAR16 *a, IN CONST CHAR16 *b) {
        while (*a && *a == *b)
                a++, b++;
        return (INTN) *a - (INTN) *b;
}

INTN StrnCmp(IN CONST CHAR16 *a, IN CONST CHAR16 *b, IN UINTN n) {
        for (; n; n--, a++, b++)
                if (*a != *b || !*a)
                        return (INTN) *a - (INTN) *b;
        return 0;
}

VOID StrCpy(IN CHAR16 *dst, IN CONST CHAR16 *src) {
        memmove(dst, src, StrSize(src));
}

/* ---- memory ------------------------------------------------------------------------ */

VOID ZeroMem(IN VOID *buf, IN UINTN n) {
        memset(buf, 0, n);
}

VOID SetMem(IN VOID *buf, IN UINTN n, IN UINT8 v) {
        memset(buf, v, n);
}

/* gnu-efi's CopyMem copies overlapping ranges correctly (RtCopyMem). */
VOID CopyMem(IN VOID *dst, IN CONST VOID *src, IN UINTN n) {
        memmove(dst, src, n);
}

INTN CompareMem(IN CONST VOID *a, IN CONST VOID *b, IN UINTN n) {
        return memcmp(a, b, n);
}

/* gnu-efi allocates EfiLoaderData unless InitializeLib found otherwise. */
VOID *AllocatePool(IN UINTN size) {
        VOID *p = NULL;

        if (EFI_ERROR(BS->AllocatePool(EfiLoaderData, size, &p)))
                return NULL;
        return p;
}

VOID *AllocateZeroPool(IN UINTN size) {
        VOID *p = AllocatePool(size);

        if (p)
                ZeroMem(p, size);
        return p;
}

VOID FreePool(IN VOID *p) {
        BS->FreePool(p);
}

/* ---- library set-up and protocols -------------------------------------------------- */

VOID InitializeLib(IN EFI_HANDLE image, IN EFI_SYSTEM_TABLE *systab) {
        ST = systab;
        BS = systab->BootServices;
        RT = systab->RuntimeServices;
}

EFI_STATUS LibLocateProtocol(IN EFI_GUID *guid, OUT VOID **iface) {
        return BS->LocateProtocol(guid, NULL, iface);
}

EFI_FILE_HANDLE LibOpenRoot(IN EFI_HANDLE device) {
        EFI_SIMPLE_FILE_SYSTEM_PROTOCOL *fs = NULL;
        EFI_FILE_HANDLE root = NULL;

        if (EFI_ERROR(BS->HandleProtocol(device, &gEfiSimpleFileSystemProtocolGuid, (VOID **) &fs)) || !fs)
                return NULL;
        if (EFI_ERROR(fs->OpenVolume(fs, &root)))
                return NULL;
        return root;
}

/* gnu-efi: GetInfo into a guessed size, again with the size asked for. */
EFI_FILE_INFO *LibFileInfo(IN EFI_FILE_HANDLE f) {
        UINTN size = SIZE_OF_EFI_FILE_INFO + 200;
        EFI_FILE_INFO *info = AllocatePool(size);
        EFI_STATUS st;

        if (!info)
                return NULL;
        st = f->GetInfo(f, &gEfiFileInfoGuid, &size, info);
        if (st == EFI_BUFFER_TOO_SMALL) {
                FreePool(info);
                info = AllocatePool(size);
                if (!info)
                        return NULL;
                st = f->GetInfo(f, &gEfiFileInfoGuid, &size, info);
        }
        if (EFI_ERROR(st)) {
                FreePool(info);
                return NULL;
        }
        return info;
}

/* ---- device paths ------------------------------------------------------------------ */

size_t fh_dp_size(const EFI_DEVICE_PATH *dp) {
        const uint8_t *p = (const uint8_t *) dp;
        size_t n = 0;

        for (int k = 0; k < 64; k++) {
                const EFI_DEVICE_PATH *node = (const EFI_DEVICE_PATH *) (p + n);
                size_t len = DevicePathNodeLength(node);

                if (len < sizeof(EFI_DEVICE_PATH)) {
                        fh_error("device path node of length %zu", len);
                        return n + sizeof(EFI_DEVICE_PATH);
                }
                n += len;
                if (IsDevicePathEnd(node))
                        return n;
        }
        fh_error("device path without an end node");
        return n;
}

void fh_dp_file_path(const EFI_DEVICE_PATH *dp, char *out, size_t cap) {
        size_t used = 0;

        out[0] = 0;
        for (int k = 0; k < 64 && !IsDevicePathEnd(dp); k++) {
                if (DevicePathType(dp) == MEDIA_DEVICE_PATH && DevicePathSubType(dp) == MEDIA_FILEPATH_DP) {
                        size_t units = (DevicePathNodeLength(dp) - 4) / 2;
                        CHAR16 name[512] = { 0 };

                        memcpy(name, (const uint8_t *) dp + 4, (units < 511 ? units : 511) * 2);
                        used += (size_t) snprintf(out + used, cap - used, "%s", fh_utf8(name));
                        if (used >= cap)
                                return;
                }
                dp = NextDevicePathNode(dp);
        }
}

UINTN DevicePathSize(IN EFI_DEVICE_PATH *dp) {
        return fh_dp_size(dp);
}

EFI_DEVICE_PATH *DevicePathFromHandle(IN EFI_HANDLE h) {
        EFI_DEVICE_PATH *dp = NULL;

        if (EFI_ERROR(BS->HandleProtocol(h, &gEfiDevicePathProtocolGuid, (VOID **) &dp)))
                return NULL;
        return dp;
}

EFI_DEVICE_PATH *DuplicateDevicePath(IN EFI_DEVICE_PATH *dp) {
        size_t n = fh_dp_size(dp);
        EFI_DEVICE_PATH *copy = AllocatePool(n);

        if (copy)
                memcpy(copy, dp, n);
        return copy;
}

/* The device's path with one file path node for name appended. */
EFI_DEVICE_PATH *FileDevicePath(IN EFI_HANDLE device, IN CHAR16 *name) {
        EFI_DEVICE_PATH *dev = device ? DevicePathFromHandle(device) : NULL;
        size_t dev_n = dev ? fh_dp_size(dev) - sizeof(EFI_DEVICE_PATH) : 0;
        size_t node = 4 + StrSize(name);
        uint8_t *p = AllocatePool(dev_n + node + sizeof(EFI_DEVICE_PATH));
        EFI_DEVICE_PATH *file;

        if (!p)
                return NULL;
        if (dev_n)
                memcpy(p, dev, dev_n);
        file = (EFI_DEVICE_PATH *) (p + dev_n);
        file->Type = MEDIA_DEVICE_PATH;
        file->SubType = MEDIA_FILEPATH_DP;
        file->Length[0] = (UINT8) node;
        file->Length[1] = (UINT8) (node >> 8);
        memcpy(p + dev_n + 4, name, StrSize(name));
        SetDevicePathEndNode((EFI_DEVICE_PATH *) (p + dev_n + node));
        return (EFI_DEVICE_PATH *) p;
}

/* ---- Print ------------------------------------------------------------------------- */

static const char *status_text(EFI_STATUS st) {
        static const char *const errors[] = {
                "Success", "Load Error", "Invalid Parameter", "Unsupported", "Bad Buffer Size",
                "Buffer Too Small", "Not Ready", "Device Error", "Write Protected", "Out of Resources",
                "Volume Corrupt", "Volume Full", "No Media", "Media changed", "Not Found",
                "Access Denied", "No Response", "No mapping", "Time out", "Not started",
                "Already started", "Aborted", "ICMP Error", "TFTP Error", "Protocol Error",
                "Incompatible Version", "Security Violation", "CRC Error", "End of Media",
                "(unknown)", "(unknown)", "End of File", "Invalid Language", "Compromised Data",
        };
        static char buf[32];
        UINTN code = st & ~EFI_ERROR_MASK;

        if (st == EFI_SUCCESS || (EFI_ERROR(st) && code < sizeof(errors) / sizeof(errors[0])))
                return errors[code];
        snprintf(buf, sizeof(buf), "%s %lx", EFI_ERROR(st) ? "Error" : "Warning", (unsigned long) code);
        return buf;
}

static void vprint(const CHAR16 *fmt, va_list ap) {
        char out[8192], *p = out, *end = out + sizeof(out);

        for (; *fmt; fmt++) {
                char item[4200] = "", spec[16];
                bool is_long = false, left = false;
                char pad = ' ';
                int width = 0;

                if (*fmt != L'%') {
                        put_utf8(&p, end, *fmt);
                        continue;
                }
                for (fmt++;; fmt++) {
                        if (*fmt == L'-')
                                left = true;
                        else if (*fmt == L'0' && width == 0)
                                pad = '0';
                        else if (*fmt >= L'0' && *fmt <= L'9')
                                width = width * 10 + (*fmt - L'0');
                        else if (*fmt == L'*')
                                width = va_arg(ap, int);
                        else if (*fmt == L'l')
                                is_long = true;
                        else if (*fmt == L'N' || *fmt == L'E' || *fmt == L'H' || *fmt == L'B' || *fmt == L'V')
                                ;       /* console attributes */
                        else
                                break;
                }
                switch (*fmt) {
                case L's': {
                        const CHAR16 *s = va_arg(ap, const CHAR16 *);
                        utf16_to_utf8(s ? s : L"(null)", item, sizeof(item));
                        break;
                }
                case L'a': {
                        const char *s = va_arg(ap, const char *);
                        snprintf(item, sizeof(item), "%s", s ? s : "(null)");
                        break;
                }
                case L'c': {
                        char *q = item;
                        put_utf8(&q, item + sizeof(item), (CHAR16) va_arg(ap, int));
                        *q = 0;
                        break;
                }
                case L'r':
                        snprintf(item, sizeof(item), "%s", status_text(va_arg(ap, EFI_STATUS)));
                        break;
                case L'g': {
                        const EFI_GUID *g = va_arg(ap, const EFI_GUID *);
                        snprintf(item, sizeof(item), "%08x-%04x-%04x-%02x%02x-%02x%02x%02x%02x%02x%02x",
                                 g->Data1, g->Data2, g->Data3, g->Data4[0], g->Data4[1], g->Data4[2],
                                 g->Data4[3], g->Data4[4], g->Data4[5], g->Data4[6], g->Data4[7]);
                        break;
                }
                case L'd':
                        snprintf(item, sizeof(item), "%lld", is_long ? (long long) va_arg(ap, INT64)
                                                                      : (long long) va_arg(ap, INT32));
                        break;
                case L'u':
                        snprintf(item, sizeof(item), "%llu", is_long ? (unsigned long long) va_arg(ap, UINT64)
                                                                      : (unsigned long long) va_arg(ap, UINT32));
                        break;
                case L'x':
                case L'X':
                        snprintf(spec, sizeof(spec), "%%ll%c", *fmt == L'x' ? 'x' : 'X');
                        snprintf(item, sizeof(item), spec, is_long ? (unsigned long long) va_arg(ap, UINT64)
                                                                    : (unsigned long long) va_arg(ap, UINT32));
                        break;
                case L'p':
                        snprintf(item, sizeof(item), "%p", va_arg(ap, void *));
                        break;
                case L'%':
                        snprintf(item, sizeof(item), "%%");
                        break;
                case 0:
                        fh_error("Print: format ends inside a conversion");
                        fmt--;
                        break;
                default:
                        fh_error("Print: conversion %%%c not implemented by the fake", (char) *fmt);
                        break;
                }
                for (int k = (int) strlen(item); !left && k < width; k++)
                        put_utf8(&p, end, (uint32_t) pad);
                for (const char *q = item; *q && end - p > 1; q++)
                        *p++ = *q;
                for (int k = (int) strlen(item); left && k < width; k++)
                        put_utf8(&p, end, ' ');
        }
        *p = 0;
        fh_console_append(out);
}

UINTN VPrint(IN CONST CHAR16 *fmt, va_list ap) {
        va_list copy;

        va_copy(copy, ap);
        vprint(fmt, copy);
        va_end(copy);
        return 0;
}

UINTN Print(IN CONST CHAR16 *fmt, ...) {
        va_list ap;

        va_start(ap, fmt);
        vprint(fmt, ap);
        va_end(ap);
        return 0;
}
