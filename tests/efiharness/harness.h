/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The loader on the host: the efi/ sources compiled with gcc under ASan/UBSan and
 * linked against a fake of the firmware (boot and runtime services, the
 * system table, an in-memory simple file system, EFI_TCG2_PROTOCOL) and of
 * the gnu-efi library functions the loader calls. Never linked into the
 * loader. docs/DESIGN.md ("The firmware harness") explains the model and
 * how to add a scenario.
 *
 * A test program is a list of cases (FH_CASE); each runs in its own
 * process, so a sanitizer report or a crash fails that case only. A case
 * describes a scenario (files on the ESP, images, TPM, fault knobs), boots
 * efi_main with fh_boot() and asserts on what the fake recorded.
 *
 * Everything the fake finds wrong on its own (a double free, an UnloadImage
 * of a handle the firmware already unloaded, a boot service the fake does
 * not implement, a protocol or hook of mshim's left installed when it
 * returns to the firmware) is an "error": fh_boot() returns them counted,
 * and FH_CHECK_CLEAN() fails the case when there is any.
 */
#ifndef MSHIM_FH_HARNESS_H
#define MSHIM_FH_HARNESS_H

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wstrict-prototypes"
#include <efi.h>
#include <efilib.h>
#pragma GCC diagnostic pop
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include "tcg2.h"

/* ---- cases ----------------------------------------------------------------- */

typedef void (*fh_case_fn)(void);

/* Run fn in a child process and print "PASS: name" or "FAIL: name". With
 * xfail set (the reason), a failure prints "XFAIL: name (reason)" and a pass
 * prints "FAIL: name (XPASS ...)": the defect is fixed, so the mark must go. */
void fh_run_case(const char *name, fh_case_fn fn, const char *xfail);
#define FH_CASE(name) static void name(void)
#define FH_RUN(name) fh_run_case(#name, name, NULL)
#define FH_RUN_XFAIL(name, why) fh_run_case(#name, name, why)
/* Exit status for main(): 1 when any case failed. */
int fh_exit_status(void);
/* No check of the running case has failed (so far): for a case that
 * forks a boot of its own, as that child's exit status. */
bool fh_case_ok(void);

/* Assertions inside a case: a failed one is reported and fails the case,
 * which goes on (later checks still say what else is wrong). */
void fh_fail(const char *file, int line, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
#define FH_CHECK(cond) do { if (!(cond)) fh_fail(__FILE__, __LINE__, "check failed: %s", #cond); } while (0)
#define FH_CHECK_EQ(a, b) do { long long _a = (long long) (a), _b = (long long) (b); if (_a != _b) \
        fh_fail(__FILE__, __LINE__, "%s == %lld (0x%llx), expected %lld (0x%llx)", #a, _a, _a, _b, _b); } while (0)
/* No misuse of the fake firmware was recorded (see fh_errors). */
#define FH_CHECK_CLEAN() do { if (fh_n_errors()) fh_fail(__FILE__, __LINE__, "%zu firmware misuse(s) recorded", fh_n_errors()); } while (0)

/* ---- the scenario ------------------------------------------------------------ */

/* Files on the volume mshim was loaded from. Paths use '/' or '\' and are
 * matched without case, like FAT; parent directories are created. */
void fh_file(const char *path, const void *data, size_t size);
void fh_file_str(const char *path, const char *text);
void fh_dir(const char *path);
/* Files may be opened for writing and renamed (SetInfo); by default the
 * volume is write-protected, as a read-only medium is. */
void fh_volume_writable(bool on);
/* The next directory listing of path's parent returns path's record with an
 * odd length and no NUL inside it (a malformed EFI_FILE_INFO). */
void fh_file_odd_record(const char *path);

/* The bytes of a file declared above (NULL when there is none). */
typedef struct fh_node_bytes {
        const uint8_t *data;
        size_t size;
} fh_node_bytes;
const fh_node_bytes *fh_file_bytes(const char *path);

/* What an image does when started: called with its handle and the system
 * table, like an entry point; its return value is the exit status (or call
 * BS->Exit). */
typedef EFI_STATUS (*fh_entry_fn)(EFI_HANDLE image, EFI_SYSTEM_TABLE *st);

typedef struct fh_image_spec {
        uint16_t subsystem;        /* 10 application (default when 0), 11 BS driver, 12 RT driver */
        fh_entry_fn entry;         /* NULL: returns EFI_SUCCESS */
        EFI_STATUS load_status;    /* LoadImage's answer: EFI_SUCCESS, or e.g. a Secure Boot refusal */
} fh_image_spec;

/* A file that LoadImage recognises as an image (by its exact bytes, which
 * are made up from the path unless data is given). */
void fh_image(const char *path, const fh_image_spec *spec);
void fh_image_bytes(const char *path, const void *data, size_t size, const fh_image_spec *spec);
/* The image LoadImage created last (NULL before any), and what is known
 * about the image behind a handle (NULL when it is not one). */
typedef struct fh_loaded {
        EFI_HANDLE handle;
        char path[256];            /* the file node of the device path LoadImage got, UTF-8 */
        const fh_image_spec *spec;
        EFI_LOADED_IMAGE *li;      /* NULL once unloaded (the fake frees it, as firmware does) */
        bool started, unloaded;
        /* LoadOptions as the image saw them when it started (a copy). */
        uint8_t *options;
        size_t options_size;
} fh_loaded;
fh_loaded *fh_last_image(void);
fh_loaded *fh_image_of(EFI_HANDLE h);
/* A started image that is still loaded (a resident driver): whether its
 * LoadOptions still point at memory nobody freed or will free under it. */
bool fh_options_alive(const fh_loaded *img);

/* mshim's own LoadOptions (its boot option's data) and file path. */
void fh_mshim_options(const void *data, size_t size);
/* What the firmware's LoadImage answers for mshim's unsigned SHIM_LOCK
 * self-test image (default EFI_ACCESS_DENIED, a refusal). */
void fh_selftest_verdict(EFI_STATUS st);
/* The built-in boot policy's text (the .mpolicy section), for this case. */
void fh_boot_policy(const char *text);
void fh_mshim_path(const char *path);   /* default \EFI\BOOT\BOOTX64.EFI */

/* A file that passes for a Linux x86 kernel with this kernel_version
 * string (its stub measures the initrd from "5.17"): written to out, its
 * size returned (0 when cap is too small). Give it to fh_image_bytes. */
#define FH_LINUX_IMAGE_MIN 0x500
size_t fh_linux_image(uint8_t *out, size_t cap, const char *version);
/* From a started image's code: get the initrd as Linux's EFI stub does
 * (LoadFile2 on the initrd media path: the size, then the bytes into buf,
 * which holds cap). EFI_NOT_FOUND: nobody serves one; else LoadFile2's
 * status, with *ret_size set on success. */
EFI_STATUS fh_stub_load_initrd(void *buf, size_t cap, size_t *ret_size);

/* UEFI variables (GetVariable); SecureBoot is 0 unless set. */
void fh_var(const CHAR16 *name, const EFI_GUID *guid, const void *data, size_t size);
void fh_secure_boot(bool on);
/* A variable as the store holds it now (set above or by mshim's
 * SetVariable); NULL when there is none. */
typedef struct fh_var_value {
        uint8_t *data;
        size_t size;
        uint32_t attrs;
} fh_var_value;
const fh_var_value *fh_var_get(const CHAR16 *name, const EFI_GUID *guid);
/* SetVariable answers st (and stores nothing) from now on; EFI_SUCCESS:
 * it works again. */
void fh_set_variable_status(EFI_STATUS st);
/* The volume's device path gets a hard drive media node (UEFI 2.10
 * 10.3.5.1) before its end: partition 1, format (1 MBR, 2 GPT),
 * signature type (1 MBR, 2 GUID) and signature as given. */
void fh_volume_partition(uint8_t format, uint8_t sig_type, const uint8_t sig[16]);

/* ---- TPM ------------------------------------------------------------------------ */

/* No EFI_TCG2_PROTOCOL at all (the default is a TPM with SHA-256 active). */
void fh_tpm_absent(void);
/* HashLogExtendEvent call number nth (1-based, counted over the whole
 * boot) returns st; nth == 0: every call does. EFI_VOLUME_FULL still
 * extends, as the TCG EFI Protocol Spec says. */
void fh_tpm_fail(unsigned nth, EFI_STATUS st);
/* GetCapability's MaxCommandSize and MaxResponseSize (default 4096 each,
 * a TIS TPM under QEMU); SubmitCommand refuses a larger command or answer
 * buffer with EFI_INVALID_PARAMETER, as EDK2's Tcg2Dxe does. */
void fh_tpm_max_sizes(uint16_t command, uint16_t response);

typedef struct fh_event {
        uint32_t pcr, type;
        uint64_t flags;
        uint8_t *event;            /* EFI_TCG2_EVENT.Event (after the header) */
        size_t event_size;
        uint8_t *data;             /* the bytes hashed */
        size_t data_size;
        EFI_STATUS status;         /* what the fake answered */
        bool by_firmware;          /* the fake's own PCR 4 event for LoadImage */
} fh_event;
/* Every HashLogExtendEvent call, failed ones included, in order. */
size_t fh_n_events(void);
const fh_event *fh_event_at(size_t i);
/* How many events (by mshim, accepted) went to pcr; type 0: any type. */
size_t fh_count_events(uint32_t pcr, uint32_t type);
/* The simulated SHA-256 PCR. */
void fh_pcr_sha256(uint32_t pcr, uint8_t out[32]);

/* TPM2 commands through SubmitCommand (EFI_TCG2_PROTOCOL 6.7), answered
 * by a small TPM: StartAuthSession (policy sessions), PolicyPCR (accepts
 * a pcrDigest equal to SHA-256 over the simulated PCRs it selects, else
 * TPM_RC_VALUE), PolicyOR, HMAC (HMAC-SHA1 with fh_tpm_hmac_key under the
 * persistent handle fh_tpm_hmac_handle, only in a session whose PolicyPCR
 * held, else TPM_RC_POLICY_FAIL) and FlushContext; anything else is
 * TPM_RC_COMMAND_CODE. */
#define FH_TPM_HMAC_HANDLE 0x81004d54u
extern const uint8_t fh_tpm_hmac_key[20];
typedef struct fh_tpm_cmd {
        uint32_t code;             /* TPM_CC */
        uint32_t rc;               /* what the fake answered */
} fh_tpm_cmd;
size_t fh_tpm_n_commands(void);
const fh_tpm_cmd *fh_tpm_command_at(size_t i);
/* Sessions started and not closed (by FlushContext or a successful
 * command without continueSession). */
size_t fh_tpm_open_sessions(void);
/* The simulated PCRs' values (ascending, SHA-256) for mask at the first
 * PolicyPCR of the boot; false when there was none. */
bool fh_tpm_policy_pcr_values(uint32_t mask, uint8_t *out);
/* Tamper with every answer of command code cc (0: all): fn edits the
 * response in place (cap bytes of buffer). */
typedef void (*fh_tpm_tamper_fn)(uint8_t *rsp, size_t cap);
void fh_tpm_tamper(uint32_t cc, fh_tpm_tamper_fn fn);

/* ---- the clock and the keyboard ---------------------------------------------------- */

/* GetTime's start (TimeZone as EFI_TIME has it; 0x7FF unspecified); each
 * Stall moves it on. Without fh_clock, GetTime is an error. */
void fh_clock(uint16_t year, uint8_t month, uint8_t day, uint8_t hour, uint8_t minute, uint8_t second, int16_t tz);
void fh_clock_status(EFI_STATUS st);
uint64_t fh_clock_stalled_us(void);
/* ReadKeyStroke returns a key on its nth call (default never). */
void fh_key_after(unsigned nth);
/* Scripted keys: ReadKeyStroke returns them in order, one a call, before
 * fh_key_after's rule applies; a key {0, 0} is "no key" for that call (a
 * pause of one poll). fh_keys_str: each character as typed, '\n' as
 * Enter. fh_keys_left: how many were not read. */
void fh_keys(const EFI_INPUT_KEY *k, size_t n);
void fh_keys_str(const char *s);
size_t fh_keys_left(void);
/* Once the scripted keys are read, ReadKeyStroke fails with st. */
void fh_key_status(EFI_STATUS st);

/* ---- faults ---------------------------------------------------------------------- */

/* AllocatePool call number nth (1-based, counted from the start of the
 * boot, the fake lib's own allocations included) fails; nth == 0: off.
 * fh_alloc_count() says how many there were, to aim at one. */
void fh_alloc_fail(unsigned nth);
unsigned fh_alloc_count(void);
/* Run scenario (which sets up, calls fh_boot() and checks) once without
 * faults to count its allocations, then once with each of them failing in
 * turn, each in its own process; the case fails if any run does. */
void fh_each_alloc_failure(fh_case_fn scenario);
/* The same over the HashLogExtendEvent calls of the boot, each answering
 * st in turn. */
void fh_each_tpm_failure(fh_case_fn scenario, EFI_STATUS st);
/* Uninstalling guid (alone or in a UninstallMultiple) fails with st. */
void fh_uninstall_fail(const EFI_GUID *guid, EFI_STATUS st);

/* ---- the boot -------------------------------------------------------------------- */

typedef struct fh_result {
        EFI_STATUS status;         /* efi_main's return value (when it returned) */
        bool returned;             /* efi_main returned to the firmware */
        bool reset;                /* ResetSystem was called instead */
        EFI_RESET_TYPE reset_type;
        EFI_STATUS reset_status;
        size_t leaked;             /* pool blocks mshim left allocated when it returned */
} fh_result;

/* Start mshim: efi_main(image, systab) on the scenario set up so far. Then,
 * if it returned, check what it left behind (protocols installed by mshim,
 * a hooked LoadImage, the boot services CRC). Once per case. */
fh_result fh_boot(void);

/* For a case that calls one module's functions (efi/mshim.h) instead of
 * efi_main: the same firmware, then gnu-efi's InitializeLib as efi_main
 * would call it. Returns mshim's image handle. Once per case, instead of
 * fh_boot. */
EFI_HANDLE fh_start_lib(void);

/* Calls the fake recorded, by name: "LoadImage", "StartImage",
 * "UnloadImage", "InstallProtocolInterface", "Stall", "ResetSystem", ... */
unsigned fh_calls(const char *service);
/* Files mshim opened, in order (UTF-8 paths as given to Open). */
size_t fh_n_opened(void);
const char *fh_opened_at(size_t i);
/* The console: everything printed, UTF-8. */
const char *fh_console(void);
bool fh_console_has(const char *text);
/* Misuse of the fake recorded so far (printed as they happen). */
size_t fh_n_errors(void);
void fh_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Protocol database queries for assertions and for images' entry code. */
bool fh_protocol_installed(const EFI_GUID *guid);
/* The original firmware boot services functions (to tell a hook). */
EFI_IMAGE_LOAD fh_firmware_load_image(void);

/* GUIDs tests need. */
extern EFI_GUID fh_tcg2_guid, fh_load_file2_guid, fh_initrd_media_guid, fh_shim_lock_guid;

/* UTF-8 <-> CHAR16 helpers for tests (static buffers, a few at a time). */
const char *fh_utf8(const CHAR16 *s);
size_t fh_utf16_from(const char *s, CHAR16 *out, size_t units);

#endif
