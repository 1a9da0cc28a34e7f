/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The fake firmware: pool, protocol database, images, variables, reset,
 * and the case runner. Behaviour follows the UEFI 2.10 specification and,
 * where it leaves room, what EDK2 (OVMF) does, since that is what the
 * integration tests boot on; each such choice says so.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include "fh_internal.h"
#include "mb/mboot.h"

/* No leak report at a case's exit: the fake keeps what it recorded until
 * the process ends, and tracks mshim's pool blocks itself. */
const char *__asan_default_options(void);
const char *__asan_default_options(void) {
        return "detect_leaks=0";
}

/* The loader's entry point (efi/main.c); crt0 calls it with the System V
 * convention, and so do we. */
EFI_STATUS efi_main(EFI_HANDLE image, EFI_SYSTEM_TABLE *systab);

EFI_SYSTEM_TABLE fh_st;
EFI_BOOT_SERVICES fh_bs;
EFI_RUNTIME_SERVICES fh_rt;

EFI_GUID fh_tcg2_guid = MSHIM_TCG2_PROTOCOL_GUID;
EFI_GUID fh_load_file2_guid = { 0x4006c0c1, 0xfcb3, 0x403e, { 0x99, 0x6d, 0x4a, 0x6c, 0x87, 0x24, 0xe0, 0x6d } };
EFI_GUID fh_initrd_media_guid = { 0x5568e427, 0x68fc, 0x4f3d, { 0xac, 0x74, 0xca, 0x55, 0x52, 0x31, 0xcc, 0x68 } };
EFI_GUID fh_shim_lock_guid = { 0x605dab50, 0xe046, 0x4300, { 0xab, 0xb6, 0x3d, 0xd8, 0x10, 0xdd, 0x8b, 0x23 } };

/* Owner of what the fake itself installs (LoadedImage, the volume, TCG2). */
static fh_loaded fh_firmware_owner;
#define FH_FIRMWARE (&fh_firmware_owner)

static struct {
        int case_failed, cases_failed;
        size_t n_errors;
        /* calls by service name */
        struct { const char *name; unsigned n; } calls[64];
        /* pool */
        struct { void *p; size_t size; bool live, pages; fh_loaded *owner; } *pool;
        size_t n_pool, cap_pool;
        unsigned alloc_count, alloc_fail_nth;
        /* handles, never freed: a stale handle stays recognisable */
        fh_handle *handles[256];
        size_t n_handles;
        /* images: the stack of those running (mshim at the bottom is NULL) */
        fh_loaded *images[64];
        size_t n_images;
        fh_loaded *running[16];
        jmp_buf *exit_jmp[16];
        EFI_STATUS exit_status[16];
        size_t n_running;
        /* uninstall faults */
        struct { EFI_GUID guid; EFI_STATUS st; } uninstall_fail[8];
        size_t n_uninstall_fail;
        /* variables */
        struct { CHAR16 name[64]; EFI_GUID guid; fh_var_value v; } vars[16];
        size_t n_vars;
        EFI_STATUS set_variable_status;
        /* mshim itself */
        uint8_t *mshim_options;
        size_t mshim_options_size;
        char mshim_path[256];
        /* boot */
        bool booted;
        jmp_buf *reset_jmp;
        fh_result result;
        EFI_IMAGE_LOAD fw_load_image;
} fh;

void *fh_xmalloc(size_t n) {
        void *p = malloc(n ? n : 1);

        if (!p) {
                perror("malloc");
                abort();
        }
        return p;
}

char *fh_xstrdup(const char *s) {
        size_t n = strlen(s) + 1;

        return memcpy(fh_xmalloc(n), s, n);
}

/* ---- cases and errors ----------------------------------------------------------- */

void fh_fail(const char *file, int line, const char *fmt, ...) {
        va_list ap;

        fprintf(stderr, "  %s:%d: ", file, line);
        va_start(ap, fmt);
        vfprintf(stderr, fmt, ap);
        va_end(ap);
        fputc('\n', stderr);
        fh.case_failed = 1;
}

void fh_error(const char *fmt, ...) {
        va_list ap;

        fprintf(stderr, "  fake firmware: ");
        va_start(ap, fmt);
        vfprintf(stderr, fmt, ap);
        va_end(ap);
        fputc('\n', stderr);
        fh.n_errors++;
}

size_t fh_n_errors(void) {
        return fh.n_errors;
}

void fh_run_case(const char *name, fh_case_fn fn, const char *xfail) {
        int status = 0;
        bool ok;
        pid_t pid;

        fflush(stdout);
        fflush(stderr);
        pid = fork();
        if (pid < 0) {
                perror("fork");
                exit(2);
        }
        if (pid == 0) {
                fn();
                /* A known defect's console would only repeat itself. */
                if (fh.case_failed && !xfail)
                        fprintf(stderr, "  console:\n%s\n", fh_console());
                fflush(stdout);
                fflush(stderr);
                _exit(fh.case_failed ? 1 : 0);
        }
        waitpid(pid, &status, 0);
        ok = WIFEXITED(status) && WEXITSTATUS(status) == 0;
        if (xfail && !ok)
                printf("XFAIL: %s (known defect: %s)\n", name, xfail);
        else if (xfail)
                printf("FAIL: %s (XPASS: fixed? make it an ordinary case: FH_RUN)\n", name);
        else
                printf("%s: %s\n", ok ? "PASS" : "FAIL", name);
        if (!ok && !xfail)
                fh.cases_failed++;
        if (ok && xfail)
                fh.cases_failed++;
        fflush(stdout);
}

/* Run scenario in a child process with fault number nth (0: none) of the
 * given kind; true when it passed. The child reports through the pipe how
 * many faults its boot offered (allocations, or TPM events). */
static bool run_with_fault(fh_case_fn scenario, bool tpm, EFI_STATUS st, unsigned nth, unsigned *ret_count) {
        int fds[2], status = 0;
        unsigned count = 0;
        pid_t pid;

        if (pipe(fds) != 0)
                abort();
        fflush(stdout);
        fflush(stderr);
        pid = fork();
        if (pid == 0) {
                close(fds[0]);
                if (tpm && nth)
                        fh_tpm_fail(nth, st);
                else if (!tpm)
                        fh_alloc_fail(nth);
                scenario();
                count = tpm ? fh_calls("TCG2.HashLogExtendEvent") : fh.alloc_count;
                if (write(fds[1], &count, sizeof(count)) != (ssize_t) sizeof(count))
                        _exit(3);
                fflush(stderr);
                _exit(fh.case_failed ? 1 : 0);
        }
        close(fds[1]);
        if (read(fds[0], &count, sizeof(count)) != (ssize_t) sizeof(count))
                count = 0;
        close(fds[0]);
        waitpid(pid, &status, 0);
        if (ret_count)
                *ret_count = count;
        return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

static void each_fault(fh_case_fn scenario, bool tpm, EFI_STATUS st) {
        const char *what = tpm ? "HashLogExtendEvent call" : "allocation";
        unsigned count = 0, failed = 0;

        if (!run_with_fault(scenario, tpm, st, 0, &count)) {
                fh_fail(__FILE__, __LINE__, "the scenario fails without any fault");
                return;
        }
        if (count == 0)
                fh_fail(__FILE__, __LINE__, "the scenario made no %s", what);
        for (unsigned n = 1; n <= count; n++)
                if (!run_with_fault(scenario, tpm, st, n, NULL)) {
                        fprintf(stderr, "  ^ with %s %u of %u failing\n", what, n, count);
                        failed++;
                }
        if (failed)
                fh_fail(__FILE__, __LINE__, "%u of %u %s failures broke the scenario", failed, count, what);
}

void fh_each_alloc_failure(fh_case_fn scenario) {
        each_fault(scenario, false, EFI_SUCCESS);
}

void fh_each_tpm_failure(fh_case_fn scenario, EFI_STATUS st) {
        each_fault(scenario, true, st);
}

int fh_exit_status(void) {
        return fh.cases_failed ? 1 : 0;
}

bool fh_case_ok(void) {
        return !fh.case_failed;
}

void fh_record_call(const char *service) {
        size_t i;

        for (i = 0; i < 64 && fh.calls[i].name; i++)
                if (strcmp(fh.calls[i].name, service) == 0)
                        break;
        if (i == 64)
                return;
        fh.calls[i].name = service;
        fh.calls[i].n++;
}

unsigned fh_calls(const char *service) {
        for (size_t i = 0; i < 64 && fh.calls[i].name; i++)
                if (strcmp(fh.calls[i].name, service) == 0)
                        return fh.calls[i].n;
        return 0;
}

bool fh_guid_eq(const EFI_GUID *a, const EFI_GUID *b) {
        return memcmp(a, b, sizeof(*a)) == 0;
}

const char *fh_guid_name(const EFI_GUID *g) {
        static char buf[4][40];
        static int k;
        char *b;

        if (fh_guid_eq(g, &gEfiLoadedImageProtocolGuid))
                return "LoadedImage";
        if (fh_guid_eq(g, &gEfiDevicePathProtocolGuid))
                return "DevicePath";
        if (fh_guid_eq(g, &fh_load_file2_guid))
                return "LoadFile2";
        if (fh_guid_eq(g, &fh_shim_lock_guid))
                return "SHIM_LOCK";
        if (fh_guid_eq(g, &fh_tcg2_guid))
                return "TCG2";
        b = buf[k++ % 4];
        snprintf(b, sizeof(buf[0]), "%08x-%04x-%04x-...", g->Data1, g->Data2, g->Data3);
        return b;
}

fh_loaded *fh_running_image(void) {
        return fh.n_running ? fh.running[fh.n_running - 1] : NULL;
}

/* ---- pool -------------------------------------------------------------------------- */

void fh_alloc_fail(unsigned nth) {
        fh.alloc_fail_nth = nth;
}

unsigned fh_alloc_count(void) {
        return fh.alloc_count;
}

/* A live block, from AllocatePool or (pages) AllocatePages. */
static void block_add(void *p, size_t size, bool pages) {
        /* Not zeroed, like firmware memory: a pattern makes reads of bytes
         * nobody wrote visible. */
        memset(p, 0xaf, size);
        if (fh.n_pool == fh.cap_pool) {
                fh.cap_pool = fh.cap_pool ? 2 * fh.cap_pool : 64;
                fh.pool = realloc(fh.pool, fh.cap_pool * sizeof(*fh.pool));
                if (!fh.pool)
                        abort();
        }
        fh.pool[fh.n_pool].p = p;
        fh.pool[fh.n_pool].size = size;
        fh.pool[fh.n_pool].live = true;
        fh.pool[fh.n_pool].pages = pages;
        fh.pool[fh.n_pool].owner = fh_running_image();
        fh.n_pool++;
}

static EFI_STATUS EFIAPI fw_allocate_pool(EFI_MEMORY_TYPE type, UINTN size, VOID **ret) {
        void *p;

        fh_record_call("AllocatePool");
        if (!ret)
                return EFI_INVALID_PARAMETER;
        fh.alloc_count++;
        if (fh.alloc_fail_nth && fh.alloc_count == fh.alloc_fail_nth)
                return EFI_OUT_OF_RESOURCES;
        p = fh_xmalloc(size);
        block_add(p, size, false);
        *ret = p;
        return EFI_SUCCESS;
}

/* AllocatePages with AllocateAnyPages only, counted with the pool's
 * allocations (fh_alloc_fail fails either). */
static EFI_STATUS EFIAPI fw_allocate_pages(EFI_ALLOCATE_TYPE type, EFI_MEMORY_TYPE mem, UINTN n,
                                           EFI_PHYSICAL_ADDRESS *ret) {
        void *p;

        fh_record_call("AllocatePages");
        if (!ret || type != AllocateAnyPages) {
                fh_error("AllocatePages: only AllocateAnyPages with an address pointer is faked");
                return EFI_INVALID_PARAMETER;
        }
        fh.alloc_count++;
        if (fh.alloc_fail_nth && fh.alloc_count == fh.alloc_fail_nth)
                return EFI_OUT_OF_RESOURCES;
        if (n == 0 || n > SIZE_MAX / EFI_PAGE_SIZE || !(p = aligned_alloc(EFI_PAGE_SIZE, n * EFI_PAGE_SIZE)))
                return EFI_OUT_OF_RESOURCES;
        block_add(p, n * EFI_PAGE_SIZE, true);
        *ret = (EFI_PHYSICAL_ADDRESS) (uintptr_t) p;
        return EFI_SUCCESS;
}

static EFI_STATUS EFIAPI fw_free_pages(EFI_PHYSICAL_ADDRESS a, UINTN n) {
        void *p = (void *) (uintptr_t) a;

        fh_record_call("FreePages");
        for (size_t i = fh.n_pool; i-- > 0;)
                if (fh.pool[i].live && fh.pool[i].pages && fh.pool[i].p == p) {
                        if (fh.pool[i].size != n * EFI_PAGE_SIZE) {
                                fh_error("FreePages(%p, %zu): allocated as %zu pages", p, (size_t) n,
                                         fh.pool[i].size / EFI_PAGE_SIZE);
                                return EFI_INVALID_PARAMETER;
                        }
                        fh.pool[i].live = false;
                        free(p);
                        return EFI_SUCCESS;
                }
        fh_error("FreePages(%p): not live pages (double free, or not from AllocatePages)", p);
        return EFI_NOT_FOUND;
}

static EFI_STATUS EFIAPI fw_free_pool(VOID *p) {
        fh_record_call("FreePool");
        for (size_t i = fh.n_pool; i-- > 0;)
                if (fh.pool[i].live && !fh.pool[i].pages && fh.pool[i].p == p) {
                        fh.pool[i].live = false;
                        free(p);
                        return EFI_SUCCESS;
                }
        fh_error("FreePool(%p): not a live pool block (double free, or not from AllocatePool)", p);
        return EFI_INVALID_PARAMETER;
}

/* Whether p points into a live pool block (for assertions). */
static bool pool_live(const void *p) {
        for (size_t i = 0; i < fh.n_pool; i++)
                if (fh.pool[i].live && (const uint8_t *) p >= (const uint8_t *) fh.pool[i].p &&
                    (const uint8_t *) p < (const uint8_t *) fh.pool[i].p + (fh.pool[i].size ? fh.pool[i].size : 1))
                        return true;
        return false;
}

/* ---- handles and protocols --------------------------------------------------------- */

fh_handle *fh_handle_new(void) {
        fh_handle *h = calloc(1, sizeof(*h));

        if (!h || fh.n_handles == 256)
                abort();
        h->live = true;
        fh.handles[fh.n_handles++] = h;
        return h;
}

static fh_handle *handle_lookup(EFI_HANDLE p) {
        for (size_t i = 0; i < fh.n_handles; i++)
                if (fh.handles[i] == (fh_handle *) p)
                        return fh.handles[i];
        return NULL;
}

fh_handle *fh_handle_valid(EFI_HANDLE p) {
        fh_handle *h = handle_lookup(p);

        if (!h)
                return NULL;
        if (!h->live) {
                fh_error("use of handle %p, which no longer exists", p);
                return NULL;
        }
        return h;
}

static int proto_index(const fh_handle *h, const EFI_GUID *guid) {
        for (int i = 0; i < h->n; i++)
                if (fh_guid_eq(&h->p[i].guid, guid))
                        return i;
        return -1;
}

static EFI_STATUS install_owned(fh_handle *h, const EFI_GUID *guid, void *iface, fh_loaded *owner) {
        /* UEFI 2.10, 7.3.2: a protocol already on the handle. */
        if (proto_index(h, guid) >= 0)
                return EFI_INVALID_PARAMETER;
        if (h->n == FH_MAX_PROTOS)
                return EFI_OUT_OF_RESOURCES;
        h->p[h->n].guid = *guid;
        h->p[h->n].iface = iface;
        h->p[h->n].owner = owner;
        h->n++;
        return EFI_SUCCESS;
}

EFI_STATUS fh_install(fh_handle *h, const EFI_GUID *guid, void *iface) {
        return install_owned(h, guid, iface, FH_FIRMWARE);
}

static EFI_STATUS uninstall_one(fh_handle *h, const EFI_GUID *guid, void *iface) {
        int i = proto_index(h, guid);

        for (size_t k = 0; k < fh.n_uninstall_fail; k++)
                if (fh_guid_eq(&fh.uninstall_fail[k].guid, guid))
                        return fh.uninstall_fail[k].st;
        if (i < 0 || h->p[i].iface != iface)
                return EFI_NOT_FOUND;
        h->p[i] = h->p[--h->n];
        /* EDK2 frees a handle when its last protocol goes. */
        if (h->n == 0)
                h->live = false;
        return EFI_SUCCESS;
}

void fh_uninstall_fail(const EFI_GUID *guid, EFI_STATUS st) {
        if (fh.n_uninstall_fail < 8) {
                fh.uninstall_fail[fh.n_uninstall_fail].guid = *guid;
                fh.uninstall_fail[fh.n_uninstall_fail].st = st;
                fh.n_uninstall_fail++;
        }
}

static EFI_STATUS EFIAPI fw_install_protocol(EFI_HANDLE *handle, EFI_GUID *guid, EFI_INTERFACE_TYPE type, VOID *iface) {
        fh_handle *h;

        fh_record_call("InstallProtocolInterface");
        if (!handle || !guid || type != EFI_NATIVE_INTERFACE)
                return EFI_INVALID_PARAMETER;
        if (*handle) {
                h = fh_handle_valid(*handle);
                if (!h)
                        return EFI_INVALID_PARAMETER;
        } else {
                h = fh_handle_new();
        }
        *handle = h;
        return install_owned(h, guid, iface, fh_running_image());
}

static EFI_STATUS EFIAPI fw_uninstall_protocol(EFI_HANDLE handle, EFI_GUID *guid, VOID *iface) {
        fh_handle *h = fh_handle_valid(handle);

        fh_record_call("UninstallProtocolInterface");
        if (!h || !guid)
                return EFI_INVALID_PARAMETER;
        return uninstall_one(h, guid, iface);
}

static EFI_STATUS EFIAPI fw_handle_protocol(EFI_HANDLE handle, EFI_GUID *guid, VOID **iface) {
        fh_handle *h = fh_handle_valid(handle);
        int i;

        fh_record_call("HandleProtocol");
        if (!h || !guid || !iface)
                return EFI_INVALID_PARAMETER;
        i = proto_index(h, guid);
        if (i < 0)
                return EFI_UNSUPPORTED;     /* UEFI 2.10, 7.3.7 */
        *iface = h->p[i].iface;
        return EFI_SUCCESS;
}

static EFI_STATUS EFIAPI fw_locate_protocol(EFI_GUID *guid, VOID *registration, VOID **iface) {
        fh_record_call("LocateProtocol");
        if (!guid || !iface)
                return EFI_INVALID_PARAMETER;
        for (size_t k = 0; k < fh.n_handles; k++) {
                int i;

                if (!fh.handles[k]->live)
                        continue;
                i = proto_index(fh.handles[k], guid);
                if (i >= 0) {
                        *iface = fh.handles[k]->p[i].iface;
                        return EFI_SUCCESS;
                }
        }
        *iface = NULL;
        return EFI_NOT_FOUND;
}

bool fh_protocol_installed(const EFI_GUID *guid) {
        VOID *iface;

        return fw_locate_protocol((EFI_GUID *) guid, NULL, &iface) == EFI_SUCCESS;
}

/* Bytes of dp before its end node, or SIZE_MAX when the first node of
 * prefix does not match dp node for node. */
static size_t dp_prefix(const EFI_DEVICE_PATH *prefix, const EFI_DEVICE_PATH *dp) {
        size_t n = fh_dp_size(prefix) - sizeof(EFI_DEVICE_PATH);

        if (fh_dp_size(dp) < n + sizeof(EFI_DEVICE_PATH) || memcmp(prefix, dp, n) != 0)
                return SIZE_MAX;
        return n;
}

/* UEFI 2.10, 7.3.8: the handle supporting guid whose device path is the
 * longest prefix of *dp; *dp is advanced past it. */
static EFI_STATUS EFIAPI fw_locate_device_path(EFI_GUID *guid, EFI_DEVICE_PATH **dp, EFI_HANDLE *device) {
        fh_handle *best = NULL;
        size_t best_n = 0;

        fh_record_call("LocateDevicePath");
        if (!guid || !dp || !*dp || !device)
                return EFI_INVALID_PARAMETER;
        for (size_t k = 0; k < fh.n_handles; k++) {
                fh_handle *h = fh.handles[k];
                int d, p;
                size_t n;

                if (!h->live || (p = proto_index(h, guid)) < 0 ||
                    (d = proto_index(h, &gEfiDevicePathProtocolGuid)) < 0)
                        continue;
                n = dp_prefix(h->p[d].iface, *dp);
                if (n != SIZE_MAX && (!best || n > best_n)) {
                        best = h;
                        best_n = n;
                }
        }
        if (!best)
                return EFI_NOT_FOUND;
        *dp = (EFI_DEVICE_PATH *) ((uint8_t *) *dp + best_n);
        *device = best;
        return EFI_SUCCESS;
}

/* UEFI 2.10, 7.3.16: varargs pairs (GUID *, interface), NULL-terminated.
 * The caller uses the MS ABI, so the list is an MS va_list. EDK2 refuses
 * a device path that another handle already carries (EFI_ALREADY_STARTED). */
static EFI_STATUS EFIAPI fw_install_multiple(EFI_HANDLE *handle, ...) {
        __builtin_ms_va_list ap;
        EFI_GUID *guids[FH_MAX_PROTOS];
        void *ifaces[FH_MAX_PROTOS];
        size_t n = 0, done = 0;
        EFI_STATUS st = EFI_SUCCESS;
        fh_handle *h;

        fh_record_call("InstallMultipleProtocolInterfaces");
        if (!handle)
                return EFI_INVALID_PARAMETER;
        __builtin_ms_va_start(ap, handle);
        for (;;) {
                EFI_GUID *g = __builtin_va_arg(ap, EFI_GUID *);

                if (!g)
                        break;
                if (n == FH_MAX_PROTOS) {
                        __builtin_ms_va_end(ap);
                        return EFI_INVALID_PARAMETER;
                }
                guids[n] = g;
                ifaces[n++] = __builtin_va_arg(ap, void *);
        }
        __builtin_ms_va_end(ap);
        for (size_t i = 0; i < n; i++) {
                EFI_DEVICE_PATH *dp = ifaces[i];
                EFI_HANDLE other;

                if (fh_guid_eq(guids[i], &gEfiDevicePathProtocolGuid) &&
                    fw_locate_device_path(&gEfiDevicePathProtocolGuid, &dp, &other) == EFI_SUCCESS &&
                    IsDevicePathEnd(dp))
                        return EFI_ALREADY_STARTED;
        }
        if (*handle) {
                h = fh_handle_valid(*handle);
                if (!h)
                        return EFI_INVALID_PARAMETER;
        } else {
                h = fh_handle_new();
        }
        for (; done < n && st == EFI_SUCCESS; done++)
                st = install_owned(h, guids[done], ifaces[done], fh_running_image());
        if (st != EFI_SUCCESS) {
                for (size_t i = 0; i + 1 < done; i++)
                        uninstall_one(h, guids[i], ifaces[i]);
                return st;
        }
        *handle = h;
        return EFI_SUCCESS;
}

/* UEFI 2.10, 7.3.17: all or nothing; EDK2 answers any failure with
 * EFI_INVALID_PARAMETER after putting back what it had removed. */
static EFI_STATUS EFIAPI fw_uninstall_multiple(EFI_HANDLE handle, ...) {
        __builtin_ms_va_list ap;
        EFI_GUID *guids[FH_MAX_PROTOS];
        void *ifaces[FH_MAX_PROTOS];
        size_t n = 0, done;
        fh_handle *h = fh_handle_valid(handle);

        fh_record_call("UninstallMultipleProtocolInterfaces");
        if (!h)
                return EFI_INVALID_PARAMETER;
        __builtin_ms_va_start(ap, handle);
        for (;;) {
                EFI_GUID *g = __builtin_va_arg(ap, EFI_GUID *);

                if (!g || n == FH_MAX_PROTOS)
                        break;
                guids[n] = g;
                ifaces[n++] = __builtin_va_arg(ap, void *);
        }
        __builtin_ms_va_end(ap);
        for (done = 0; done < n; done++) {
                fh_loaded *owner = NULL;
                int i = proto_index(h, guids[done]);

                if (i >= 0)
                        owner = h->p[i].owner;
                if (uninstall_one(h, guids[done], ifaces[done]) != EFI_SUCCESS) {
                        h->live = true;
                        while (done-- > 0)
                                install_owned(h, guids[done], ifaces[done], owner);
                        return EFI_INVALID_PARAMETER;
                }
        }
        return EFI_SUCCESS;
}

/* ---- images ------------------------------------------------------------------------ */

fh_loaded *fh_last_image(void) {
        return fh.n_images ? fh.images[fh.n_images - 1] : NULL;
}

fh_loaded *fh_image_of(EFI_HANDLE h) {
        for (size_t i = 0; i < fh.n_images; i++)
                if (fh.images[i]->handle == h)
                        return fh.images[i];
        return NULL;
}

static const fh_node *image_by_bytes(const void *buf, size_t size) {
        for (size_t i = 0; i < fh_n_nodes(); i++) {
                const fh_node *n = fh_node_at(i);

                if (n->image && n->size == size && memcmp(n->data, buf, size) == 0)
                        return n;
        }
        return NULL;
}

static fh_loaded *image_create(const fh_image_spec *spec, EFI_HANDLE parent, const EFI_DEVICE_PATH *dp,
                               const void *buf, size_t size) {
        fh_loaded *img = calloc(1, sizeof(*img));
        EFI_LOADED_IMAGE *li = calloc(1, sizeof(*li));
        fh_handle *h = fh_handle_new();
        bool app = spec->subsystem == 0 || spec->subsystem == IMAGE_SUBSYSTEM_EFI_APPLICATION;

        if (!img || !li || fh.n_images == 64)
                abort();
        img->handle = h;
        img->spec = spec;
        img->li = li;
        h->image = img;
        li->Revision = EFI_LOADED_IMAGE_PROTOCOL_REVISION;
        li->ParentHandle = parent;
        li->SystemTable = &fh_st;
        if (dp) {
                EFI_DEVICE_PATH *rest = (EFI_DEVICE_PATH *) dp;
                EFI_HANDLE dev = NULL;

                fh_dp_file_path(dp, img->path, sizeof(img->path));
                if (fw_locate_device_path(&gEfiSimpleFileSystemProtocolGuid, &rest, &dev) == EFI_SUCCESS) {
                        li->DeviceHandle = dev;
                        li->FilePath = memcpy(fh_xmalloc(fh_dp_size(rest)), rest, fh_dp_size(rest));
                }
        }
        li->ImageBase = memcpy(fh_xmalloc(size), buf, size);
        li->ImageSize = size;
        /* EDK2: applications run as loader code/data, drivers as boot
         * services or runtime code/data. */
        li->ImageCodeType = app ? EfiLoaderCode : spec->subsystem == 12 ? EfiRuntimeServicesCode : EfiBootServicesCode;
        li->ImageDataType = app ? EfiLoaderData : spec->subsystem == 12 ? EfiRuntimeServicesData : EfiBootServicesData;
        install_owned(h, &gEfiLoadedImageProtocolGuid, li, FH_FIRMWARE);
        fh.images[fh.n_images++] = img;
        return img;
}

static void image_unload(fh_loaded *img) {
        fh_handle *h = img->handle;
        int i = proto_index(h, &gEfiLoadedImageProtocolGuid);

        if (i >= 0)
                h->p[i] = h->p[--h->n];
        if (h->n == 0)
                h->live = false;
        free(img->li->FilePath);
        free(img->li->ImageBase);
        free(img->li);          /* a stale pointer to it is a use after free */
        img->li = NULL;
        img->unloaded = true;
}

static EFI_STATUS EFIAPI fw_load_image(BOOLEAN boot_policy, EFI_HANDLE parent, EFI_DEVICE_PATH *dp,
                                       VOID *src, UINTN size, EFI_HANDLE *ret) {
        const fh_node *n;
        fh_loaded *img;
        EFI_STATUS st;

        fh_record_call("LoadImage");
        if (!ret || !fh_handle_valid(parent) || !fh_image_of(parent))
                return EFI_INVALID_PARAMETER;
        if (!src) {
                fh_error("LoadImage from a device path alone: not implemented by the fake");
                return EFI_NOT_FOUND;
        }
        n = image_by_bytes(src, size);
        if (!n)
                return EFI_LOAD_ERROR;
        st = n->image->load_status;
        /* UEFI 2.10, 7.4.1: EFI_SECURITY_VIOLATION returns a handle that
         * cannot be started; other errors return none. */
        if (EFI_ERROR(st) && st != EFI_SECURITY_VIOLATION)
                return st;
        img = image_create(n->image, parent, dp, src, size);
        /* EDK2 measures what its verification accepted (PCR 4). */
        if (!EFI_ERROR(st))
                fh_tpm_measure_image(src, size);
        *ret = img->handle;
        return st;
}

/* UEFI 2.10, 7.4.2, as EDK2's CoreStartImage does it: an image loaded
 * with EFI_SECURITY_VIOLATION is refused and stays loaded; otherwise it
 * runs, and when it returns (or calls Exit) it is unloaded if it is an
 * application or returned an error. A driver returning success stays. */
static EFI_STATUS EFIAPI fw_start_image(EFI_HANDLE handle, UINTN *exit_size, CHAR16 **exit_data) {
        fh_loaded *img = fh_image_of(handle);
        jmp_buf jb;
        EFI_STATUS st;
        size_t k;

        fh_record_call("StartImage");
        if (!img || img->unloaded || !fh_handle_valid(handle)) {
                fh_error("StartImage(%p): not a loaded image (already unloaded?)", handle);
                return EFI_INVALID_PARAMETER;
        }
        if (img->started) {
                fh_error("StartImage(%p): started twice", handle);
                return EFI_INVALID_PARAMETER;
        }
        if (img->spec->load_status == EFI_SECURITY_VIOLATION)
                return EFI_SECURITY_VIOLATION;
        if (fh.n_running == 16)
                abort();
        img->started = true;
        img->options_size = img->li->LoadOptionsSize;
        img->options = memcpy(fh_xmalloc(img->options_size), img->li->LoadOptions ? img->li->LoadOptions : "",
                              img->li->LoadOptions ? img->options_size : 0);
        k = fh.n_running++;
        fh.running[k] = img;
        fh.exit_jmp[k] = &jb;
        if (setjmp(jb) == 0)
                st = img->spec->entry ? img->spec->entry(handle, &fh_st) : EFI_SUCCESS;
        else
                st = fh.exit_status[k];
        fh.n_running = k;
        if (EFI_ERROR(st) || img->spec->subsystem == 0 || img->spec->subsystem == IMAGE_SUBSYSTEM_EFI_APPLICATION)
                image_unload(img);
        return st;
}

static EFI_STATUS EFIAPI fw_exit(EFI_HANDLE handle, EFI_STATUS status, UINTN size, CHAR16 *data) {
        fh_record_call("Exit");
        if (!fh.n_running || fh.running[fh.n_running - 1]->handle != handle) {
                fh_error("Exit(%p) from an image that is not the one running", handle);
                return EFI_INVALID_PARAMETER;
        }
        fh.exit_status[fh.n_running - 1] = status;
        longjmp(*fh.exit_jmp[fh.n_running - 1], 1);
}

static EFI_STATUS EFIAPI fw_unload_image(EFI_HANDLE handle) {
        fh_loaded *img = fh_image_of(handle);

        fh_record_call("UnloadImage");
        if (!img || img->unloaded) {
                fh_error("UnloadImage(%p): not a loaded image (the firmware already unloaded it)", handle);
                return EFI_INVALID_PARAMETER;
        }
        /* Started and still here: a resident driver, which would need its
         * own Unload function (UEFI 2.10, 7.4.4). */
        if (img->started)
                return EFI_UNSUPPORTED;
        image_unload(img);
        return EFI_SUCCESS;
}

EFI_IMAGE_LOAD fh_firmware_load_image(void) {
        return fw_load_image;
}

/* ---- variables, reset, misc ------------------------------------------------------ */

static bool str16_eq(const CHAR16 *a, const CHAR16 *b) {
        while (*a && *a == *b)
                a++, b++;
        return *a == *b;
}

/* The store's slot for (name, guid); fh.n_vars when there is none. */
static size_t var_find(const CHAR16 *name, const EFI_GUID *guid) {
        for (size_t i = 0; i < fh.n_vars; i++)
                if (str16_eq(fh.vars[i].name, name) && fh_guid_eq(&fh.vars[i].guid, guid))
                        return i;
        return fh.n_vars;
}

static void var_put(const CHAR16 *name, const EFI_GUID *guid, uint32_t attrs, const void *data, size_t size) {
        size_t i = var_find(name, guid), n = 0;

        if (i == fh.n_vars) {
                if (fh.n_vars == 16)
                        abort();
                fh.n_vars++;
        } else {
                free(fh.vars[i].v.data);
        }
        while (name[n] && n < 63)
                n++;
        memset(fh.vars[i].name, 0, sizeof(fh.vars[i].name));
        memcpy(fh.vars[i].name, name, n * sizeof(CHAR16));
        fh.vars[i].guid = *guid;
        fh.vars[i].v.data = fh_xmalloc(size ? size : 1);
        if (size)
                memcpy(fh.vars[i].v.data, data, size);
        fh.vars[i].v.size = size;
        fh.vars[i].v.attrs = attrs;
}

void fh_var(const CHAR16 *name, const EFI_GUID *guid, const void *data, size_t size) {
        var_put(name, guid, EFI_VARIABLE_BOOTSERVICE_ACCESS | EFI_VARIABLE_RUNTIME_ACCESS, data, size);
}

void fh_secure_boot(bool on) {
        EFI_GUID global = EFI_GLOBAL_VARIABLE;
        uint8_t v = on;

        fh_var(L"SecureBoot", &global, &v, 1);
}

const fh_var_value *fh_var_get(const CHAR16 *name, const EFI_GUID *guid) {
        size_t i = var_find(name, guid);

        return i < fh.n_vars ? &fh.vars[i].v : NULL;
}

void fh_set_variable_status(EFI_STATUS st) {
        fh.set_variable_status = st;
}

static EFI_STATUS EFIAPI fw_get_variable(CHAR16 *name, EFI_GUID *guid, UINT32 *attrs, UINTN *size, VOID *data) {
        size_t i;

        fh_record_call("GetVariable");
        if (!name || !guid || !size)
                return EFI_INVALID_PARAMETER;
        i = var_find(name, guid);
        if (i == fh.n_vars)
                return EFI_NOT_FOUND;
        if (*size < fh.vars[i].v.size) {
                *size = fh.vars[i].v.size;
                return EFI_BUFFER_TOO_SMALL;
        }
        if (!data)
                return EFI_INVALID_PARAMETER;
        memcpy(data, fh.vars[i].v.data, fh.vars[i].v.size);
        *size = fh.vars[i].v.size;
        if (attrs)
                *attrs = fh.vars[i].v.attrs;
        return EFI_SUCCESS;
}

/* UEFI 2.10, 8.2.3 SetVariable, for volatile variables (what a loader may
 * set): runtime access needs boot services access; size 0 or no access
 * attributes deletes. Authenticated writes are not modelled (an error). */
static EFI_STATUS EFIAPI fw_set_variable(CHAR16 *name, EFI_GUID *guid, UINT32 attrs, UINTN size, VOID *data) {
        const UINT32 known = EFI_VARIABLE_NON_VOLATILE | EFI_VARIABLE_BOOTSERVICE_ACCESS | EFI_VARIABLE_RUNTIME_ACCESS;
        size_t i;

        fh_record_call("SetVariable");
        if (!name || !name[0] || !guid || (size && !data))
                return EFI_INVALID_PARAMETER;
        if (attrs & ~known) {
                fh_error("SetVariable with attributes 0x%x: not modelled by the fake", (unsigned) attrs);
                return EFI_UNSUPPORTED;
        }
        if ((attrs & EFI_VARIABLE_RUNTIME_ACCESS) && !(attrs & EFI_VARIABLE_BOOTSERVICE_ACCESS))
                return EFI_INVALID_PARAMETER;
        if (fh.set_variable_status != EFI_SUCCESS)
                return fh.set_variable_status;
        i = var_find(name, guid);
        if (size == 0 || !(attrs & EFI_VARIABLE_BOOTSERVICE_ACCESS)) {
                if (i == fh.n_vars)
                        return EFI_NOT_FOUND;
                free(fh.vars[i].v.data);
                fh.vars[i] = fh.vars[--fh.n_vars];
                return EFI_SUCCESS;
        }
        var_put(name, guid, attrs, data, size);
        return EFI_SUCCESS;
}

static EFI_STATUS EFIAPI fw_reset_system(EFI_RESET_TYPE type, EFI_STATUS status, UINTN size, CHAR16 *data) {
        fh_record_call("ResetSystem");
        fh.result.reset = true;
        fh.result.reset_type = type;
        fh.result.reset_status = status;
        if (!fh.reset_jmp) {
                fh_error("ResetSystem outside a boot");
                abort();
        }
        longjmp(*fh.reset_jmp, 1);
}

/* ---- the clock and the keyboard ------------------------------------------------ */

/* The RTC: a start time (fh_clock) that Stall moves on; nothing else
 * waits. */
static struct {
        bool set;
        EFI_TIME start;
        uint64_t us;            /* stalled so far */
        EFI_STATUS status;
} clock;
/* ReadKeyStroke: a key on call number key_at (0: never). */
static unsigned key_at, key_calls;
/* Before that: the scripted keys, one a call ({0, 0}: none that call),
 * then key_status when it is set (a keyboard that fails). */
#define FH_KEYS_MAX 512
static EFI_INPUT_KEY keys[FH_KEYS_MAX];
static size_t n_keys, next_key;
static EFI_STATUS key_status;

void fh_clock(uint16_t year, uint8_t month, uint8_t day, uint8_t hour, uint8_t minute, uint8_t second,
              int16_t tz) {
        clock.set = true;
        clock.start = (EFI_TIME) { .Year = year, .Month = month, .Day = day, .Hour = hour, .Minute = minute,
                                   .Second = second, .TimeZone = tz };
}

void fh_clock_status(EFI_STATUS st) {
        clock.status = st;
}

uint64_t fh_clock_stalled_us(void) {
        return clock.us;
}

void fh_key_after(unsigned nth) {
        key_at = nth;
}

void fh_keys(const EFI_INPUT_KEY *k, size_t n) {
        if (n > FH_KEYS_MAX - n_keys) {
                fh_error("fh_keys: more than %d keys", FH_KEYS_MAX);
                return;
        }
        memcpy(keys + n_keys, k, n * sizeof(*k));
        n_keys += n;
}

void fh_keys_str(const char *s) {
        for (; *s; s++) {
                EFI_INPUT_KEY k = { .ScanCode = 0, .UnicodeChar = (CHAR16) (unsigned char) *s };

                if (*s == '\n')
                        k.UnicodeChar = CHAR_CARRIAGE_RETURN;
                fh_keys(&k, 1);
        }
}

void fh_key_status(EFI_STATUS st) {
        key_status = st;
}

size_t fh_keys_left(void) {
        return n_keys - next_key;
}

static EFI_STATUS EFIAPI fw_stall(UINTN us) {
        fh_record_call("Stall");
        clock.us += us;
        return EFI_SUCCESS;
}

/* The start time plus whole seconds stalled, carried into minutes, hours
 * and days (a test stays within one month). */
static EFI_STATUS EFIAPI fw_get_time(EFI_TIME *t, EFI_TIME_CAPABILITIES *cap) {
        uint64_t s;

        fh_record_call("GetTime");
        if (!t)
                return EFI_INVALID_PARAMETER;
        if (!clock.set) {
                fh_error("GetTime called and the case set no clock (fh_clock)");
                return EFI_DEVICE_ERROR;
        }
        if (EFI_ERROR(clock.status))
                return clock.status;
        *t = clock.start;
        s = t->Second + t->Minute * 60ull + t->Hour * 3600ull + clock.us / 1000000;
        t->Second = (UINT8) (s % 60);
        t->Minute = (UINT8) (s / 60 % 60);
        t->Hour = (UINT8) (s / 3600 % 24);
        t->Day = (UINT8) (t->Day + s / 86400);
        return EFI_SUCCESS;
}

static EFI_STATUS EFIAPI con_read_key(SIMPLE_INPUT_INTERFACE *this, EFI_INPUT_KEY *key) {
        fh_record_call("ReadKeyStroke");
        if (!key)
                return EFI_INVALID_PARAMETER;
        if (next_key < n_keys) {
                EFI_INPUT_KEY k = keys[next_key++];

                if (k.ScanCode == 0 && k.UnicodeChar == 0)
                        return EFI_NOT_READY;
                *key = k;
                return EFI_SUCCESS;
        }
        if (EFI_ERROR(key_status))
                return key_status;
        if (key_at == 0 || ++key_calls != key_at)
                return EFI_NOT_READY;
        *key = (EFI_INPUT_KEY) { .ScanCode = 0, .UnicodeChar = L' ' };
        return EFI_SUCCESS;
}

static SIMPLE_INPUT_INTERFACE fh_conin;

static EFI_STATUS EFIAPI fw_set_watchdog(UINTN timeout, UINT64 code, UINTN size, CHAR16 *data) {
        fh_record_call("SetWatchdogTimer");
        return EFI_SUCCESS;
}

/* CRC-32 of UEFI 2.10, 4.2 (the ISO 3309 / zlib polynomial). */
static uint32_t crc32(const void *buf, size_t n) {
        const uint8_t *p = buf;
        uint32_t c = 0xffffffffu;

        while (n--) {
                c ^= *p++;
                for (int k = 0; k < 8; k++)
                        c = (c >> 1) ^ (0xedb88320u & -(c & 1));
        }
        return ~c;
}

static EFI_STATUS EFIAPI fw_crc32(VOID *data, UINTN size, UINT32 *ret) {
        fh_record_call("CalculateCrc32");
        if (!data || !ret || size == 0)
                return EFI_INVALID_PARAMETER;
        *ret = crc32(data, size);
        return EFI_SUCCESS;
}

static VOID EFIAPI fw_copy_mem(VOID *dst, VOID *src, UINTN n) {
        memmove(dst, src, n);
}

static VOID EFIAPI fw_set_mem(VOID *dst, UINTN n, UINT8 v) {
        memset(dst, v, n);
}

static EFI_TPL EFIAPI fw_raise_tpl(EFI_TPL tpl) {
        return TPL_APPLICATION;
}

static VOID EFIAPI fw_restore_tpl(EFI_TPL tpl) {
}

static EFI_STATUS EFIAPI con_output(SIMPLE_TEXT_OUTPUT_INTERFACE *this, CHAR16 *s) {
        fh_console_append(fh_utf8(s));
        return EFI_SUCCESS;
}

static SIMPLE_TEXT_OUTPUT_INTERFACE fh_conout;

/* Services the fake does not implement: calling one is an error that
 * names it, so whoever needs it next knows what to add. One list, used
 * to define the stubs and to fill the tables. */
#define FH_UNIMPLEMENTED(X) \
        X(fh_bs, GetMemoryMap) X(fh_bs, CreateEvent) \
        X(fh_bs, SetTimer) X(fh_bs, WaitForEvent) X(fh_bs, SignalEvent) X(fh_bs, CloseEvent) \
        X(fh_bs, CheckEvent) X(fh_bs, ReinstallProtocolInterface) X(fh_bs, RegisterProtocolNotify) \
        X(fh_bs, LocateHandle) X(fh_bs, InstallConfigurationTable) X(fh_bs, ExitBootServices) \
        X(fh_bs, GetNextMonotonicCount) X(fh_bs, ConnectController) X(fh_bs, DisconnectController) \
        X(fh_bs, OpenProtocol) X(fh_bs, CloseProtocol) X(fh_bs, OpenProtocolInformation) \
        X(fh_bs, ProtocolsPerHandle) X(fh_bs, LocateHandleBuffer) X(fh_bs, CreateEventEx) \
        X(fh_rt, GetNextVariableName) X(fh_rt, SetTime) \
        X(fh_rt, GetWakeupTime) X(fh_rt, SetWakeupTime) X(fh_rt, SetVirtualAddressMap) \
        X(fh_rt, ConvertPointer) X(fh_rt, GetNextHighMonotonicCount) X(fh_rt, UpdateCapsule) \
        X(fh_rt, QueryCapsuleCapabilities) X(fh_rt, QueryVariableInfo) \
        X(fh_conout, Reset) X(fh_conout, TestString) X(fh_conout, QueryMode) X(fh_conout, SetMode) \
        X(fh_conout, SetAttribute) X(fh_conout, ClearScreen) X(fh_conout, SetCursorPosition) \
        X(fh_conout, EnableCursor)
#define FH_DEFINE_STUB(table, slot) \
        static EFI_STATUS EFIAPI unimpl_##table##_##slot(void) { \
                fh_record_call(#slot); \
                fh_error("%s called: not implemented by the fake firmware", #slot); \
                return EFI_UNSUPPORTED; \
        }
#define FH_SET_STUB(table, slot) table.slot = (__typeof__(table.slot)) (void *) unimpl_##table##_##slot;
FH_UNIMPLEMENTED(FH_DEFINE_STUB)


static void tables_init(void) {
        fh_bs = (EFI_BOOT_SERVICES) {
                .Hdr = { .Signature = EFI_BOOT_SERVICES_SIGNATURE, .Revision = EFI_SYSTEM_TABLE_REVISION,
                         .HeaderSize = sizeof(EFI_BOOT_SERVICES) },
                .RaiseTPL = fw_raise_tpl, .RestoreTPL = fw_restore_tpl,
                .AllocatePool = fw_allocate_pool, .FreePool = fw_free_pool,
                .AllocatePages = fw_allocate_pages, .FreePages = fw_free_pages,
                .InstallProtocolInterface = fw_install_protocol,
                .UninstallProtocolInterface = fw_uninstall_protocol,
                .HandleProtocol = fw_handle_protocol, .PCHandleProtocol = fw_handle_protocol,
                .LocateDevicePath = fw_locate_device_path,
                .LoadImage = fw_load_image, .StartImage = fw_start_image, .Exit = fw_exit,
                .UnloadImage = fw_unload_image, .Stall = fw_stall, .SetWatchdogTimer = fw_set_watchdog,
                .LocateProtocol = fw_locate_protocol,
                .InstallMultipleProtocolInterfaces = fw_install_multiple,
                .UninstallMultipleProtocolInterfaces = fw_uninstall_multiple,
                .CalculateCrc32 = fw_crc32, .CopyMem = fw_copy_mem, .SetMem = fw_set_mem,
        };

        fh_rt = (EFI_RUNTIME_SERVICES) {
                .Hdr = { .Signature = EFI_RUNTIME_SERVICES_SIGNATURE, .Revision = EFI_SYSTEM_TABLE_REVISION,
                         .HeaderSize = sizeof(EFI_RUNTIME_SERVICES) },
                .GetVariable = fw_get_variable, .SetVariable = fw_set_variable, .ResetSystem = fw_reset_system,
                .GetTime = fw_get_time,
        };
        fh_conin = (SIMPLE_INPUT_INTERFACE) { .ReadKeyStroke = con_read_key };

        fh_conout = (SIMPLE_TEXT_OUTPUT_INTERFACE) { .OutputString = con_output };
        FH_UNIMPLEMENTED(FH_SET_STUB)

        fh_st = (EFI_SYSTEM_TABLE) {
                .Hdr = { .Signature = EFI_SYSTEM_TABLE_SIGNATURE, .Revision = EFI_SYSTEM_TABLE_REVISION,
                         .HeaderSize = sizeof(EFI_SYSTEM_TABLE) },
                .FirmwareVendor = L"mshim harness",
                .ConIn = &fh_conin,
                .ConOut = &fh_conout,
                .StdErr = &fh_conout,
                .RuntimeServices = &fh_rt,
                .BootServices = &fh_bs,
        };
}

static uint32_t bs_crc(void) {
        EFI_BOOT_SERVICES copy = fh_bs;

        copy.Hdr.CRC32 = 0;
        return crc32(&copy, copy.Hdr.HeaderSize);
}

/* ---- mshim ------------------------------------------------------------------------- */

void fh_mshim_options(const void *data, size_t size) {
        fh.mshim_options = memcpy(fh_xmalloc(size), data, size);
        fh.mshim_options_size = size;
}

/* efi/policy.c reads the loader's .mpolicy section through this symbol
 * (efi/mpolicy.S in the real image): the default built-in policy,
 * efi/boot-policy.conf's text, unless a case sets another. */
UINT8 mshim_boot_policy_text[MB_BOOT_POLICY_SIZE] = "tpm-required no\ntpm-failure refuse\n";

/* efi/shimlock.c's self-test image (efi/selftest.S in the real loader): a
 * few bytes no fh_image registers, so the fake LoadImage refuses them as
 * the real firmware refuses an unsigned image, unless a case registers
 * them (fh_selftest_bytes) to play a firmware that accepts anything. */
__asm__(".section .rodata\n"
        ".globl mshim_selftest_unsigned\n"
        "mshim_selftest_unsigned:\n"
        ".ascii \"mshim self-test: an unsigned EFI image\"\n"
        ".globl mshim_selftest_unsigned_end\n"
        "mshim_selftest_unsigned_end:\n"
        ".balign 8\n"
        ".globl mshim_selftest_unsigned_size\n"
        "mshim_selftest_unsigned_size:\n"
        ".quad mshim_selftest_unsigned_end - mshim_selftest_unsigned\n"
        ".previous\n");

void fh_boot_policy(const char *text) {
        memset(mshim_boot_policy_text, 0, sizeof(mshim_boot_policy_text));
        memcpy(mshim_boot_policy_text, text, strnlen(text, sizeof(mshim_boot_policy_text)));
}

void fh_mshim_path(const char *path) {
        snprintf(fh.mshim_path, sizeof(fh.mshim_path), "%s", path);
}

/* mshim's image handle, as the boot manager's LoadImage made it. */
static EFI_HANDLE mshim_handle(void) {
        static const fh_image_spec mshim_spec = { .subsystem = IMAGE_SUBSYSTEM_EFI_APPLICATION };
        static uint8_t mshim_bytes[] = "mshimx64.efi";
        fh_handle *vol = fh_fs_volume();
        size_t vsize = fh_dp_size(fh_volume_dp) - sizeof(EFI_DEVICE_PATH);
        CHAR16 name[256];
        size_t units = fh_utf16_from(fh.mshim_path[0] ? fh.mshim_path : "\\EFI\\BOOT\\BOOTX64.EFI", name, 256);
        size_t node = 4 + units * sizeof(CHAR16), total = vsize + node + sizeof(EFI_DEVICE_PATH);
        uint8_t *dp = fh_xmalloc(total);
        EFI_DEVICE_PATH *file = (EFI_DEVICE_PATH *) (dp + vsize), *end = (EFI_DEVICE_PATH *) (dp + vsize + node);
        fh_loaded *img;

        memcpy(dp, fh_volume_dp, vsize);
        file->Type = MEDIA_DEVICE_PATH;
        file->SubType = MEDIA_FILEPATH_DP;
        file->Length[0] = (uint8_t) node;
        file->Length[1] = (uint8_t) (node >> 8);
        memcpy(file + 1, name, units * sizeof(CHAR16));
        SetDevicePathEndNode(end);
        (void) vol;
        img = image_create(&mshim_spec, NULL, (EFI_DEVICE_PATH *) dp, mshim_bytes, sizeof(mshim_bytes));
        free(dp);
        img->started = true;
        img->li->LoadOptions = fh.mshim_options;
        img->li->LoadOptionsSize = (UINT32) fh.mshim_options_size;
        return img->handle;
}

/* What mshim left behind when it returned: its protocols and hooks point
 * into an image the firmware is about to free. */
static void check_left_behind(fh_loaded *self) {
        for (size_t k = 0; k < fh.n_handles; k++) {
                fh_handle *h = fh.handles[k];

                for (int i = 0; h->live && i < h->n; i++)
                        if (h->p[i].owner == NULL)
                                fh_error("mshim returned with its %s protocol still installed (on %s handle %p)",
                                         fh_guid_name(&h->p[i].guid), h == self->handle ? "its own" : "a", (void *) h);
        }
        if (fh_open_files())
                fh_error("mshim returned with %zu file handle(s) still open", fh_open_files());
        if (fh_bs.LoadImage != fh.fw_load_image)
                fh_error("mshim returned with BS->LoadImage not the firmware's");
        if (fh_bs.Hdr.CRC32 != bs_crc())
                fh_error("mshim returned with a wrong boot services table CRC");
}

/* The firmware as it is when it starts mshim. */
static EFI_HANDLE firmware_ready(void) {
        EFI_HANDLE self;

        if (fh.booted) {
                fh_error("fh_boot or fh_start_lib called twice in one case");
                abort();
        }
        fh.booted = true;
        self = mshim_handle();
        fh_tpm_install();
        fh_bs.Hdr.CRC32 = bs_crc();
        fh.fw_load_image = fh_bs.LoadImage;
        fh.alloc_count = 0;
        return self;
}

EFI_HANDLE fh_start_lib(void) {
        EFI_HANDLE self = firmware_ready();

        InitializeLib(self, &fh_st);
        return self;
}

/* The firmware's verdict on efi/shimlock.c's unsigned self-test image:
 * refused, as real firmware refuses an unsigned image under Secure Boot,
 * unless a case said otherwise (fh_selftest_verdict). */
static bool selftest_set;

void fh_selftest_verdict(EFI_STATUS st) {
        extern const uint8_t mshim_selftest_unsigned[];
        extern const uint64_t mshim_selftest_unsigned_size;

        fh_image_bytes("/fh-firmware/selftest.efi", mshim_selftest_unsigned, (size_t) mshim_selftest_unsigned_size,
                       &(fh_image_spec) { .load_status = st });
        selftest_set = true;
}

fh_result fh_boot(void) {
        EFI_HANDLE self;
        jmp_buf jb;

        if (!selftest_set)
                fh_selftest_verdict(EFI_ACCESS_DENIED);
        self = firmware_ready();

        fh.reset_jmp = &jb;
        if (setjmp(jb) == 0) {
                fh.result.status = efi_main(self, &fh_st);
                fh.result.returned = true;
        }
        fh.reset_jmp = NULL;
        fh.n_running = 0;
        if (fh.result.returned) {
                check_left_behind(fh_image_of(self));
                for (size_t i = 0; i < fh.n_pool; i++)
                        fh.result.leaked += fh.pool[i].live && fh.pool[i].owner == NULL;
        }
        return fh.result;
}

bool fh_options_alive(const fh_loaded *img) {
        /* mshim's own LoadOptions belong to the boot manager, which frees
         * them once mshim has returned (EDK2's BmBoot). */
        if (!img->li || !img->li->LoadOptions)
                return img->li != NULL;
        if ((const uint8_t *) img->li->LoadOptions == fh.mshim_options)
                return !fh.result.returned;
        return pool_live(img->li->LoadOptions);
}

__attribute__((constructor)) static void fh_init(void) {
        tables_init();
}
