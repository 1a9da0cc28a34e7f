/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * mshim loader internals: the only code that calls firmware services. The
 * parsing, matching and encoding is the pure core's (include/mb/); these
 * modules fetch bytes from the firmware, hand them to the core and act on
 * the result.
 */
#ifndef MSHIM_EFI_H
#define MSHIM_EFI_H

/* gnu-efi's headers have a few old-style declarations; they are not ours
 * to fix, so keep -Wstrict-prototypes for our own code only. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wstrict-prototypes"
#include <efi.h>
#include <efilib.h>
#pragma GCC diagnostic pop

#include "mb/base.h"
#include "mb/bls.h"
#include "mb/mboot.h"
#include "mb/plan.h"
#include "tcg2.h"

/* Caps on what we read from the ESP. Sizes come from the file system, which
 * we do not trust: everything bigger is refused before any allocation. */
#define MSHIM_CONF_MAX     MB_CONF_FILE_MAX      /* loader.conf, entry files (mb/bls.h) */
#define MSHIM_IMAGE_MAX    (512u * 1024 * 1024)  /* kernel, EFI image, initrds (all together) */
#define MSHIM_PATH_UNITS   512                   /* CHAR16 units of a path, NUL included */
/* Caps on what one TPM event may log, so no input can fill the event log
 * (docs/MEASUREMENTS.md, "Limits"). A command line is refused beyond 4096
 * bytes (UTF-8, joined, NUL excluded): Linux's COMMAND_LINE_SIZE is 2048 on
 * x86 and arm64 and at most 4096 elsewhere, and its EFI stub drops what does
 * not fit, so no line a kernel can take whole is refused. Its PCR 12 event
 * is then at most (4096 + 1) * 2 bytes of UTF-16LE, and no event of mshim's
 * may be larger. */
#define MSHIM_CMDLINE_MAX  4096u
#define MSHIM_EVENT_MAX    ((MSHIM_CMDLINE_MAX + 1) * 2)

#define MSHIM_LOADER_CONF_PATH L"\\loader\\loader.conf"
#define MSHIM_ENTRIES_DIR      L"\\loader\\entries"

/* shim's vendor GUID: the SHIM_LOCK protocol and its variables (MokList,
 * SbatLevel, ...). */
#define MSHIM_SHIM_LOCK_GUID \
        { 0x605dab50, 0xe046, 0x4300, { 0xab, 0xb6, 0x3d, 0xd8, 0x10, 0xdd, 0x8b, 0x23 } }

/* The Boot Loader Interface's vendor GUID (systemd-boot's Loader* variables). */
#define MSHIM_LOADER_GUID \
        { 0x4a67b082, 0x0a4c, 0x41cf, { 0xb6, 0xc7, 0x44, 0x0b, 0x29, 0xbb, 0x8c, 0x4f } }

/* PCRs and event types mshim writes (docs/MEASUREMENTS.md). */
#define MSHIM_PCR_CONFIG   5   /* loader.conf and the entry file, like systemd-boot's loader.conf */
#define MSHIM_PCR_CMDLINE  12  /* kernel command line, systemd-boot convention */
#define MSHIM_PCR_INITRD   9   /* the initrd, when the Linux stub does not measure it */

/* ---- bench.c: phase timestamps, benchmark build only ---------------------- */

/* build/bench/mshimx64.efi (make bench-efi, -DMB_BENCH) records the time-
 * stamp counter at the end of each phase and prints the table on the
 * console just before StartImage (scripts/bench/loadtime.sh reads it).
 * The release loader has no timing code: these expand to nothing. */
#ifdef MB_BENCH
void mshim_bench_mark(const CHAR16 *phase);
void mshim_bench_report(void);
#define MSHIM_BENCH_MARK(phase) mshim_bench_mark(phase)
#define MSHIM_BENCH_REPORT() mshim_bench_report()
#else
#define MSHIM_BENCH_MARK(phase) ((void) 0)
#define MSHIM_BENCH_REPORT() ((void) 0)
#endif

/* ---- util.c -------------------------------------------------------------- */

/* The one conversion of the core's error type to EFI_STATUS. */
EFI_STATUS mb_efi_status(mb_err e);

/* Copy n bytes through the firmware's CopyMem: for anything bigger than a
 * few hundred bytes (gnu-efi's CopyMem copies a byte at a time, which a
 * 48 MiB initrd pays for under emulation). Boot services only. */
void mshim_copy(void *dst, const void *src, UINTN n);

/* Buffers of size bytes (> 0) in whole pages, for kernels and initrds:
 * EDK2's pool fills every block with 0xAF when it is allocated and again
 * when it is freed (DEBUG_CLEAR_MEMORY, on in OVMF's builds), a pass over
 * megabytes the file read then overwrites; AllocatePages does not. NULL
 * when out of memory. Boot services only. */
void *mshim_pages_alloc(UINTN size);
void mshim_pages_free(void *p, UINTN size);

/* Print "mshim: " + the formatted text + newline; returns status, so errors
 * are reported and returned in the same expression. */
EFI_STATUS mshim_log(EFI_STATUS status, const CHAR16 *fmt, ...);

/* Something mshim installed for a next stage (a protocol, a hook) cannot
 * be taken back: print why and power off; never returns (efi/util.c). */
#define MSHIM_FATAL_DELAY_S 5
__attribute__((noreturn)) void mshim_fatal_stuck(const CHAR16 *what, EFI_STATUS st);

/* A borrowed UTF-8 slice made printable: converted to CHAR16, cut to fit,
 * "(unprintable)" when it is not valid UTF-8. */
typedef struct mshim_text {
        CHAR16 s[128];
} mshim_text;
const CHAR16 *mshim_text_of(mb_str s, mshim_text *t);

/* A BLS path ("/vmlinuz-6.1", relative to the volume root, '/' separated)
 * as a UEFI file path ("\vmlinuz-6.1"). */
EFI_STATUS mshim_path_from_bls(mb_str path, CHAR16 *dst, UINTN dst_units);

/* Whether the firmware enforces Secure Boot (the SecureBoot variable is 1). */
bool mshim_secure_boot_enabled(void);

/* ---- bli.c --------------------------------------------------------------- */

/* Set the volatile LoaderDevicePartUUID variable to the GPT partition GUID
 * of device (the volume mshim was loaded from) when its device path has
 * one; otherwise set nothing. Never fails the boot: a firmware refusal is
 * a warning. */
void mshim_bli_set_partuuid(EFI_HANDLE device);

/* Entry ids in the Boot Loader Interface's variables: at most this many
 * UTF-16 units (a FAT long name is 255). */
#define MSHIM_BLI_ID_MAX 256
typedef struct mshim_bli_ids {
        char oneshot[MSHIM_BLI_ID_MAX * 3], entry_default[MSHIM_BLI_ID_MAX * 3];
} mshim_bli_ids;
/* LoaderEntryOneShot and LoaderEntryDefault for the plan (ret borrows
 * from ids). One that cannot be read is reported and names nothing. */
void mshim_bli_read_vars(mshim_bli_ids *ids, mb_plan_vars *ret);
/* Delete LoaderEntryOneShot (the plan's delete_oneshot); a failure is a
 * warning. */
void mshim_bli_delete_oneshot(void);
/* Set the volatile LoaderEntrySelected to the entry id about to be
 * tried; a failure is a warning. */
void mshim_bli_set_selected(mb_str id);

/* ---- file.c -------------------------------------------------------------- */

/* Read the whole file at path (from the volume root) into a new pool buffer
 * of at most max bytes. EFI_NOT_FOUND is returned quietly (callers decide
 * whether a missing file is an error); other failures are logged. */
EFI_STATUS mshim_file_load(EFI_FILE_HANDLE root, const CHAR16 *path, UINTN max,
                           void **ret_buf, UINTN *ret_size);
/* The same into whole pages (mshim_pages_alloc), for images: free the
 * buffer with mshim_pages_free(buf, size + 1). */
EFI_STATUS mshim_file_load_pages(EFI_FILE_HANDLE root, const CHAR16 *path, UINTN max,
                                 void **ret_buf, UINTN *ret_size);
/* Size of an open file, refused when it exceeds max or is a directory. */
EFI_STATUS mshim_file_size(EFI_FILE_HANDLE f, const CHAR16 *path, UINTN max, UINTN *ret_size);
/* Read exactly size bytes from the current position. */
EFI_STATUS mshim_file_read_exact(EFI_FILE_HANDLE f, const CHAR16 *path, void *buf, UINTN size);
/* A directory record with room for the longest FAT long name (255 units)
 * and its NUL. */
#define MSHIM_DIR_INFO_SIZE (SIZE_OF_EFI_FILE_INFO + 256 * sizeof(CHAR16))
/* The next regular file of the open directory dir (path: for messages)
 * whose name ends in suffix (lower case; FAT compares names without case),
 * its record validated into info (info_size bytes): EFI_NOT_FOUND at the
 * end, another error (logged) when the listing fails. */
EFI_STATUS mshim_dir_next(EFI_FILE_HANDLE dir, const CHAR16 *path, const CHAR16 *suffix, EFI_FILE_INFO *info,
                          UINTN info_size);

/* ---- measure.c ----------------------------------------------------------- */

typedef struct mshim_tpm {
        MSHIM_TCG2_PROTOCOL *tcg2;  /* NULL: no usable TPM (absent, or the policy let a failure pass) */
        UINT32 max_command;         /* SubmitCommand's limits, as GetCapability reported them */
        UINT32 max_response;        /* (0: not reported) */
        bool required;              /* built-in policy or loader.conf "tpm-required yes" */
        bool failure_boots;         /* built-in policy "tpm-failure boot" */
        bool failed;                /* a measurement failed: nothing may be started */
        bool warned_log_full;
        bool totp_locked;           /* the fence is in PCR 13 (mshim_tpm_lock_totp) */
} mshim_tpm;

/* Find and probe the TPM. EFI_SECURITY_VIOLATION when none is usable and
 * one is required; otherwise EFI_SUCCESS (with a warning when there is none). */
EFI_STATUS mshim_tpm_init(mshim_tpm *t, bool required, bool failure_boots);
/* Nothing may be booted: a TPM is required and none is usable, or a
 * measurement failed. */
static inline bool mshim_tpm_refuses(const mshim_tpm *t) {
        return (t->required && !t->tcg2) || t->failed;
}
/* Every measurement returns EFI_SECURITY_VIOLATION (after saying which
 * one failed) when it could not be made and the boot must stop. */

/* PCR 5 EV_EVENT_TAG: event data {tag, size, path as UTF-16LE with NUL};
 * digest over the event data followed by the file's bytes (size 0 for the
 * "absent" and "unreadable" tags): mb_pcr5_input_build. */
EFI_STATUS mshim_tpm_measure_file(mshim_tpm *t, uint32_t tag, const CHAR16 *path,
                                  const void *data, UINTN size);
/* PCR 12 EV_IPL: event data and digest both the UTF-16LE command line. */
EFI_STATUS mshim_tpm_measure_cmdline(mshim_tpm *t, const void *utf16, UINTN size);
/* PCR 12 EV_EVENT_TAG MB_TAG_CHAINLOAD over the load options handed on. */
EFI_STATUS mshim_tpm_measure_chainload(mshim_tpm *t, const void *options, UINTN size);
/* PCR 12 EV_EVENT_TAG MB_TAG_TOTP_INITRD (mb_totp_initrd_event): the
 * initrd's size and SHA-256, before the TOTP code. */
EFI_STATUS mshim_tpm_measure_totp_initrd(mshim_tpm *t, UINT64 size, const uint8_t sha256[32]);
/* PCR 9 "Linux initrd", for kernels whose stub does not measure it. */
EFI_STATUS mshim_tpm_measure_initrd(mshim_tpm *t, const void *initrd, UINTN size);
/* The plan's exit steps: PCR 5 and 12 MB_TAG_EXIT, then the lock unless
 * made: mshim returns to the firmware. */
void mshim_tpm_measure_exit(mshim_tpm *t, const mb_plan *plan);
/* PCR 12 EV_EVENT_TAG MB_TAG_TOTP_FENCE (mb_totp_fence_event): the TOTP
 * code can no longer be made for the rest of this boot. */
EFI_STATUS mshim_tpm_measure_totp_fence(mshim_tpm *t);
/* The same event into PCR 13 (MB_TOTP_LOCK_PCR), once per boot, whatever
 * loader.conf says: before mshim starts any image and when it returns to
 * the firmware, so nothing after mshim finds PCR 13 at zero, which the
 * signed TOTP key's policy requires (docs/SEALING.md "The TOTP key"). */
EFI_STATUS mshim_tpm_lock_totp(mshim_tpm *t);
/* PCR 4 EV_EFI_BOOT_SERVICES_APPLICATION for a PE image in memory, as
 * shim's tpm_log_pe logs what SHIM_LOCK Verify is given: the firmware
 * computes the Authenticode digest (PE_COFF_IMAGE). An error when the TPM
 * failed: the caller must not accept the image. */
EFI_STATUS mshim_tpm_measure_pe(mshim_tpm *t, const void *image, UINTN size);

/* ---- initrd.c ------------------------------------------------------------ */

typedef struct mshim_initrd mshim_initrd;

/* Publish the entry's initrd files, concatenated in order, through
 * LoadFile2 on the Linux initrd media device path; their sizes are taken
 * now. pin: read them now and serve that buffer (a step measures it);
 * else they are read when the stub asks, into its buffer. *ret is NULL
 * when the entry has no initrd. root, e and label must outlive *ret. */
EFI_STATUS mshim_initrd_install(EFI_FILE_HANDLE root, const mb_bls_entry *e, const CHAR16 *label,
                                bool pin, mshim_initrd **ret);
/* Undo mshim_initrd_install (NULL is fine); when the protocol cannot be
 * uninstalled, powers off (mshim_fatal_stuck). */
void mshim_initrd_uninstall(mshim_initrd *r);
/* Measure the published initrd as the Linux stub would (NULL is fine;
 * it must have been pinned). */
EFI_STATUS mshim_initrd_measure(mshim_tpm *t, const mshim_initrd *r);
/* With TOTP on, before the code: the published initrd's size and SHA-256
 * into PCR 12 (mshim_tpm_measure_totp_initrd); NULL: an entry without
 * initrd, measured as zero bytes. The very buffer LoadFile2 serves (it
 * must have been pinned). */
EFI_STATUS mshim_initrd_measure_totp(mshim_tpm *t, const mshim_initrd *r);

/* ---- boot.c -------------------------------------------------------------- */

typedef struct mshim_ctx {
        const mb_plan *plan;        /* what this boot does (src/plan.c) */
        const mb_loader_conf *conf; /* &plan->conf: loader.conf as parsed (defaults when absent or bad) */
        EFI_HANDLE image;           /* mshim's own image handle */
        EFI_HANDLE device;          /* the volume mshim was loaded from */
        EFI_LOADED_IMAGE *loaded;   /* mshim's own LoadedImage */
        EFI_FILE_HANDLE root;
        mshim_tpm tpm;
} mshim_ctx;

/* One entry file: the plan's view of it (bytes, and once the plan is
 * built, bls parsed from them or bad_tag), its name and path. plan.id and
 * plan.bls borrow from id and the bytes. */
typedef struct mshim_entry {
        mb_plan_entry plan;
        char id[256];               /* file name, UTF-8 */
        CHAR16 path[MSHIM_PATH_UNITS]; /* "\loader\entries\<id>" */
        CHAR16 mpath[MSHIM_PATH_UNITS]; /* the path measured: without the boot counter */
} mshim_entry;

/* Execute the plan's steps of trying e (plan->tries[k]: measure the
 * entry file, load its image, hand over options and initrd, measure them,
 * the TOTP point, the lock), then start it. Returns only when the entry failed or the image returned; the
 * reason has been printed. Whether to try another entry is the caller's
 * call: see mshim_tpm_refuses(). */
EFI_STATUS mshim_boot_entry(mshim_ctx *c, const mshim_entry *e, const mb_plan_step *steps, UINTN n);

/* ---- menu.c -------------------------------------------------------------- */

/* The boot menu, as the plan says it appears (plan->menu): shown, its
 * keys read and its decision taken into the plan (mb_plan_choose), or
 * nothing when there is no menu, nobody pressed a key in hidden mode, or
 * the keyboard fails (the default then boots, as the plan was built).
 * v/n: the entries the plan was built from. m holds the edited command
 * line the plan then borrows: keep it until the boot is over. */
struct mb_menu;
void mshim_menu_run(mb_plan *plan, mshim_entry **v, UINTN n, struct mb_menu *m);

/* ---- image.c ------------------------------------------------------------- */

/* An image file's bytes as read for LoadImage, in pages (mshim_pages_alloc).
 * LoadImage copies what it needs, but the buffer is kept until StartImage
 * returns: EDK2 fills freed pages (DEBUG_CLEAR_MEMORY), a pass over the
 * kernel that a boot which never comes back need not pay for. */
typedef struct mshim_image {
        void *buf;
        UINTN size;
        bool stub_measures_initrd;  /* mb_linux_stub_measures_initrd of buf */
} mshim_image;
/* Read path from the boot volume and check it against the SBAT policy
 * (sbat_required: refuse an image without .sbat when a policy is set, see
 * mshim_sbat_check). Refusals are reported with the file and the reason;
 * EFI_NOT_FOUND is returned silently, for the caller to say what was
 * missing. *ret is untouched on failure. */
EFI_STATUS mshim_image_read(mshim_ctx *c, const CHAR16 *path, bool sbat_required, mshim_image *ret);
/* LoadImage of img, read from path (the firmware verifies it under Secure
 * Boot and measures it into PCR 4). Refusals are reported. */
EFI_STATUS mshim_image_load(mshim_ctx *c, const CHAR16 *path, const mshim_image *img, EFI_HANDLE *ret_child);
/* Free img's buffer; again, or on a zeroed img, does nothing. */
void mshim_image_release(mshim_image *img);
/* StartImage, with SHIM_LOCK offered for the time it runs when shim_lock
 * is set. Takes child, and options: the pool buffer child's LoadOptions
 * point to (or NULL), freed only when the child cannot still use it.
 * Returns (after a message) only when it returned. */
EFI_STATUS mshim_image_start(mshim_ctx *c, EFI_HANDLE child, const CHAR16 *label, bool shim_lock, void *options);

/* ---- totp.c -------------------------------------------------------------- */

#define MSHIM_TOTP_PATH L"\\loader\\mshim\\totp"
/* The TOTP approvals, signed mode (mb/totp.h MB_TOTP_APPROVALS_DIR). */
#define MSHIM_TOTP_APPROVALS_DIR L"\\loader\\mshim\\totp-approvals"

/* Is TOTP on for this boot ("totp show|require": loader.conf raised to
 * the built-in floor, efi/main.c)? */
bool mshim_totp_on(const mshim_ctx *c);
/* With TOTP on: at the TOTP point (everything the code vouches for
 * measured, the image not yet started) show the TPM's TOTP code large,
 * refreshed each step, until a key or totp-timeout; or the warning when
 * the TPM refuses; then extend the fence (PCR 12). next_stage non-NULL
 * names an EFI program about to start (an efi entry, the chainload path):
 * it loads what it likes after the code, so no code is made for it, only
 * the warning saying so. EFI_SECURITY_VIOLATION when nothing may be
 * started: "totp require" and no code, or the fence could not be
 * measured. docs/CONFIG.md "TOTP". */
EFI_STATUS mshim_totp_run(mshim_ctx *c, const CHAR16 *next_stage);

/* ---- chain.c ------------------------------------------------------------- */

/* No entries: start grubx64.efi (or loader.conf's "chainload") from
 * mshim's directory with mshim's own LoadOptions. Returns only on failure. */
EFI_STATUS mshim_chainload(mshim_ctx *c, const mb_loader_conf *conf);

/* ---- policy.c ----------------------------------------------------------- */

/* The built-in boot policy (the .mpolicy section, covered by the image's
 * signature); EFI_SECURITY_VIOLATION, after a message, when it does not
 * parse: an image with a broken policy boots nothing. */
EFI_STATUS mshim_boot_policy(mb_boot_policy *ret);

/* ---- shimlock.c ---------------------------------------------------------- */

/* Offer SHIM_LOCK (and, with Secure Boot on, the LoadImage hook that keeps
 * verified images measured once) unless shim already provides it; undo,
 * or power off when that cannot be done (mshim_fatal_stuck). */
void mshim_shim_lock_install(mshim_ctx *c);
void mshim_shim_lock_uninstall(mshim_ctx *c);

/* ---- sbatpolicy.c -------------------------------------------------------- */

/* With Secure Boot on, check the PE image in buf against the SBAT policy
 * (SbatLevel, SbatLevelRT: docs/SIGNING.md). EFI_SECURITY_VIOLATION, after
 * a message naming label and the revoked component, when it must not run:
 * revoked, malformed .sbat, no .sbat while section_required and a policy
 * is set, or a policy variable that cannot be trusted or read. */
EFI_STATUS mshim_sbat_check(const void *buf, UINTN size, const CHAR16 *label, bool section_required);

/* ---- entries.c ----------------------------------------------------------- */

/* Read \loader\entries\*.conf, in listing order, into an array of
 * separately allocated entries (the plan borrows from each, so they must
 * not move). A file that cannot be read is reported and kept with no
 * bytes: the plan measures it as unreadable. Nothing is parsed here. */
EFI_STATUS mshim_entries_load(EFI_FILE_HANDLE root, mshim_entry ***ret_entries, UINTN *ret_n);
/* The plan's step s for an unusable entry: say why it is skipped, and
 * measure it (PCR 5). EFI_SECURITY_VIOLATION when the measurement failed
 * and the boot must stop. */
EFI_STATUS mshim_entry_measure_unusable(mshim_tpm *tpm, const mb_plan_step *s, const mshim_entry *e);
void mshim_entries_free(mshim_entry **entries, UINTN n);
/* The plan's counter step: rename e's file to e->plan.next_name (boot
 * counting). A failure is a warning: the entry still boots. */
void mshim_entry_count_try(EFI_FILE_HANDLE root, const mshim_entry *e);
/* The entry's file name, for messages. */
const CHAR16 *mshim_entry_name(const mshim_entry *e);

#endif
