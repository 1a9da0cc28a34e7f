/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The boot plan: what mshim does with an ESP, decided once. From
 * loader.conf's bytes, the entry files' names and bytes and the built-in
 * boot policy, mb_plan_build says which settings are in force, which
 * entries are usable and in what order they are tried, which unusable
 * entries are measured and in what order, and whether mshim chainloads.
 * The loader executes the plan (efi/main.c, efi/entries.c) and `mshim
 * predict` assumes it (tools/cmd/predict.c): one function, so the two cannot
 * disagree about which entry boots (docs/DESIGN.md "The boot plan").
 * Pure: no I/O, no allocation; the caller keeps the bytes.
 */
#ifndef MB_PLAN_H
#define MB_PLAN_H

#include "mb/bls.h"
#include "mb/mboot.h"

/* Entry files mshim considers; more are reported and ignored. */
#define MB_PLAN_MAX_ENTRIES 64u

/* mshim's own measurements, one step each (docs/MEASUREMENTS.md "The
 * events, in the order they happen"): which bytes a step measures. The
 * loader executes the steps in the plan's order and `mshim predict`
 * replays the same order; neither decides a sequence of its own. */
typedef enum mb_plan_src {
        MB_PLAN_SRC_LOADER_CONF = 1,    /* loader.conf's path, and its bytes when read (tag: conf_tag) */
        MB_PLAN_SRC_UNUSABLE,           /* an unusable entry's path and bytes, none when unreadable (its bad_tag) */
        MB_PLAN_SRC_ENTRY,              /* the entry about to be tried: path and bytes (MB_TAG_BLS_ENTRY) */
        MB_PLAN_SRC_CMDLINE,            /* its options joined, UTF-16LE with the NUL (EV_IPL) */
        MB_PLAN_SRC_INITRD,             /* the initrd, with the Linux stub's event: only when the image's
                                         * stub does not make it (mb_linux_stub_measures_initrd) */
        MB_PLAN_SRC_TOTP_INITRD,        /* the initrd's size and SHA-256 (mb_totp_initrd_event) */
        MB_PLAN_SRC_TOTP_FENCE,         /* the TOTP code (or the warning), then the fence */
        MB_PLAN_SRC_TOTP_LOCK,          /* the fence's event into PCR 13: once a boot, the first time */
        MB_PLAN_SRC_CHAINLOAD,          /* the load options passed on to the chainloaded program */
        MB_PLAN_SRC_EXIT,               /* the exit marker: mshim returns to the firmware */
        /* Not a measurement (PCR 0, type 0): rename the entry file to its
         * next_name, before its image is loaded (boot counting). */
        MB_PLAN_SRC_COUNTER,
        /* In MB_PLAN_SRC_CMDLINE's place: the line the menu's editor made
         * (plan.edited), the same event with other bytes (mb_plan_choose). */
        MB_PLAN_SRC_CMDLINE_EDITED,
} mb_plan_src;

typedef struct mb_plan_step {
        uint8_t pcr;
        uint8_t src;                    /* mb_plan_src */
        uint16_t entry;                 /* index into the caller's entries (< MB_PLAN_MAX_ENTRIES) */
        uint32_t type;                  /* MB_EV_EVENT_TAG or MB_EV_IPL */
        uint32_t tag;                   /* the tagged event's id; 0 for EV_IPL */
} mb_plan_step;

/* Steps of one try of an entry: entry, counter, command line, initrd,
 * TOTP initrd, fence, lock. */
#define MB_PLAN_TRY_STEPS 7u
#define MB_PLAN_END_STEPS 3u

/* The steps of trying entry index `entry` (a `linux` entry, else an
 * `efi` one) with TOTP mode totp, in the order mshim makes them: its
 * file (PCR 5), then, once its image is loaded, the command line (PCR
 * 12), the initrd (PCR 9), with TOTP on the TOTP initrd event (`linux`
 * only) and the fence (PCR 12), then the lock (PCR 13) right before
 * StartImage; with a boot counter (counted), the rename right after the
 * entry's file is measured. Returns how many (at most
 * MB_PLAN_TRY_STEPS). The plan holds these for each usable entry; the
 * predictor asks for them too. */
size_t mb_plan_try_steps(mb_totp_mode totp, bool linux_entry, bool counted, size_t entry,
                         mb_plan_step ret[MB_PLAN_TRY_STEPS]);

/* What became of loader.conf (it decides which PCR 5 event records it). */
typedef enum mb_plan_conf_state {
        MB_PLAN_CONF_ABSENT = 0,
        MB_PLAN_CONF_UNREADABLE,        /* there, but it could not be read */
        MB_PLAN_CONF_READ,
} mb_plan_conf_state;

/* The Boot Loader Interface variables the plan follows (systemd's "Boot
 * Loader Interface", vendor GUID 4a67b082-0a4c-41cf-b6c7-440b29bb8c4f):
 * entry ids as UTF-8 (the loader converts their UTF-16 values). */
typedef struct mb_plan_vars {
        /* LoaderEntryOneShot exists: the loader deletes it before anything
         * is tried, whatever it holds (delete_oneshot), and it names the
         * entry of this one boot. */
        bool oneshot_set;
        mb_str oneshot;
        mb_str entry_default;           /* LoaderEntryDefault; len 0: not set */
} mb_plan_vars;

/* Which rule chose the entry tried first. */
typedef enum mb_plan_default_from {
        MB_PLAN_DEFAULT_FIRST = 0,      /* none matched: the first in sort order */
        MB_PLAN_DEFAULT_CONF,           /* loader.conf's "default" glob */
        MB_PLAN_DEFAULT_VAR,            /* LoaderEntryDefault */
        MB_PLAN_DEFAULT_ONESHOT,        /* LoaderEntryOneShot */
} mb_plan_default_from;

/* Does a Boot Loader Interface entry id name this entry: its id, or its id
 * without ".conf" (as loader.conf's default matches)? */
bool mb_plan_id_matches(mb_str want, const mb_bls_entry *e);

/* Boot counting (Boot Loader Specification "Boot counting", systemd's
 * Automatic Boot Assessment): an entry file "NAME+LEFT-DONE.conf" or
 * "NAME+LEFT.conf" (decimal, at most MB_PLAN_COUNTER_MAX each) has LEFT
 * tries left and DONE made. Its entry id is "NAME.conf": the counter is
 * no part of it, so LoaderEntryDefault, loader.conf's default and the
 * measured path (docs/MEASUREMENTS.md) do not change when it counts. */
#define MB_PLAN_COUNTER_MAX 999999u
#define MB_PLAN_NAME_MAX    256u        /* bytes of an entry file name (UTF-8) mshim keeps */
typedef struct mb_plan_counter {
        bool counted;
        uint32_t left, done;
        size_t stem;                    /* NAME's length */
} mb_plan_counter;
/* Parse name's counter (ret->counted false when there is none: then the
 * name is the id). Pure, never fails. */
void mb_plan_counter_parse(mb_str name, mb_plan_counter *ret);
/* The entry id of file name: the name without its counter, into buf.
 * MB_ERR_NOSPACE when it does not fit (buf untouched). */
mb_err mb_plan_entry_id(mb_str name, char *buf, size_t cap, mb_str *ret);

/* One \loader\entries\*.conf file. */
typedef struct mb_plan_entry {
        /* In: its file name (UTF-8, with ".conf") and bytes; buf NULL when
         * the file could not be read. A file over MB_CONF_FILE_MAX bytes is
         * unreadable to mshim, whoever read it. */
        mb_str id;
        const char *buf;
        size_t size;
        /* Out: its boot counter; bls.id is the entry id (the name without
         * the counter, in id_buf); with a counter, next_name is the name
         * the loader renames the file to before it boots it: LEFT - 1 (not
         * below 0), DONE + 1, "NAME+LEFT-DONE.conf" (systemd-boot's
         * rename). */
        mb_plan_counter counter;
        char id_buf[MB_PLAN_NAME_MAX];
        char next_name[MB_PLAN_NAME_MAX + 16];
        /* Out: bad_tag 0 for a usable entry (bls parsed), else how mshim
         * measures it (MB_TAG_FILE_UNREADABLE, MB_TAG_BLS_ENTRY_BAD, with
         * err the parser's error and bls.err_line its line). */
        uint32_t bad_tag;
        mb_err err;
        mb_bls_entry bls;
} mb_plan_entry;

/* The boot menu (include/mb/menu.h, efi/menu.c): whether and how it
 * appears, from loader.conf's "timeout" (systemd-boot's loader.conf(5)). */
typedef enum mb_plan_menu {
        MB_PLAN_MENU_HIDDEN = 0,        /* unset, 0, "menu-hidden": the default boots at once, unless a
                                         * key is already pressed: then the menu, with no countdown */
        MB_PLAN_MENU_DISABLED,          /* "menu-disabled": never a menu, keys or not */
        MB_PLAN_MENU_TIMEOUT,           /* N seconds: the menu counts down, then boots the default */
        MB_PLAN_MENU_FORCE,             /* "menu-force": the menu waits for the user */
} mb_plan_menu;

/* The longest command line (UTF-8, joined, NUL excluded) mshim boots and
 * the editor makes: the loader refuses longer ones (efi/mshim.h
 * MSHIM_CMDLINE_MAX, which says why 4096). */
#define MB_PLAN_CMDLINE_MAX 4096u

typedef struct mb_plan {
        /* loader.conf as parsed, or the defaults: absent, no default, no
         * TPM or TOTP asked for; present but unreadable or not parseable
         * (conf_defaulted), tpm-required yes and totp show, since mshim
         * cannot know what it asked for: fail closed on the TPM, and show
         * a code or the warning rather than a silent boot (not "require":
         * a typo must not brick the machine). */
        mb_loader_conf conf;
        bool conf_defaulted;
        uint32_t conf_tag;              /* PCR 5: MB_TAG_LOADER_CONF, _FILE_ABSENT or _FILE_UNREADABLE */
        /* In force: loader.conf raised to the built-in policy's floors. */
        bool tpm_required;
        bool tpm_failure_boot;
        mb_totp_mode totp;
        /* Usable entries in the order they are tried: the default, then
         * the others in sort order after it, wrapping around. Sort order:
         * entries with no tries left ("bad": a counter at LEFT 0) after
         * all others, then mb_bls_compare (of the entry ids), then more
         * tries left first, fewer done first (systemd-boot's order). The default
         * is, first match wins (systemd-boot's precedence): the entry
         * LoaderEntryOneShot names, the one LoaderEntryDefault names, the
         * first loader.conf's "default" glob matches, else the first in
         * mb_bls_compare order. Indices into the caller's entries. */
        size_t boot[MB_PLAN_MAX_ENTRIES];
        size_t n_boot;
        mb_plan_default_from default_from;
        /* The default's position in sort order: the k-th usable entry in
         * sort order is boot[(k + n_boot - default_pos) % n_boot]
         * (mb_plan_sorted), the order the menu lists them in. */
        size_t default_pos;
        /* The menu: how it appears, its countdown (seconds, MB_PLAN_MENU_
         * TIMEOUT only), and whether its editor may change a command line
         * (the built-in policy's "editor", and loader.conf's unless "no").
         * None of it changes a measurement: what the menu decides goes
         * through mb_plan_choose, and a boot without a menu (the timeout
         * ran out, or none was shown) is the plan as built, which is what
         * `mshim predict` assumes. */
        mb_plan_menu menu;
        uint32_t menu_timeout;
        bool editor;
        /* Set by mb_plan_choose: the user chose boot[0] in the menu, and
         * with edited_set, boots it with the line edited (borrowed; its
         * UTF-8 bytes, no NUL). */
        bool chosen, edited_set;
        mb_str edited;
        /* LoaderEntryOneShot is to be deleted before anything is tried
         * (read once, as systemd-boot does: a failed boot does not repeat
         * it). */
        bool delete_oneshot;
        /* Unusable entries in file-name byte order, each measured into
         * PCR 5 before anything is booted (a broken entry is never the PCR
         * 5 of no entry). */
        size_t unusable[MB_PLAN_MAX_ENTRIES];
        size_t n_unusable;
        /* No usable entry: the chainload path (conf.chainload, else
         * grubx64.efi beside mshim). */
        bool chainload;
        /* mshim's measurements, in order: before anything is tried
         * (loader.conf, then the unusable entries); for trying boot[k],
         * tries[k]; on the chainload path, chain; when mshim returns to
         * the firmware, exit (the lock only if not made yet). */
        mb_plan_step start[1 + MB_PLAN_MAX_ENTRIES];
        size_t n_start;
        mb_plan_step tries[MB_PLAN_MAX_ENTRIES][MB_PLAN_TRY_STEPS];
        size_t n_tries[MB_PLAN_MAX_ENTRIES];
        mb_plan_step chain[MB_PLAN_END_STEPS], exit[MB_PLAN_END_STEPS];
        size_t n_chain, n_exit;
} mb_plan;

/* Parse every entry (writing their Out fields) and build the plan.
 * vars: the Boot Loader Interface variables (NULL: none set).
 * conf/conf_size: loader.conf's bytes when conf_state is
 * MB_PLAN_CONF_READ. MB_ERR_INVALID for more than MB_PLAN_MAX_ENTRIES
 * entries or a NULL argument; ret is written only on success. */
mb_err mb_plan_build(const mb_boot_policy *policy, const mb_plan_vars *vars, mb_plan_conf_state conf_state,
                     const char *conf, size_t conf_size, mb_plan_entry *const *entries, size_t n, mb_plan *ret);

/* The usable entry at position k (< n_boot) of sort order: an index
 * into the caller's entries. */
size_t mb_plan_sorted(const mb_plan *p, size_t k);

/* The menu's decision, into the plan: the usable entry index `entry` (an
 * index into the caller's entries) is tried first, the others after it in
 * sort order as for a default (so a chosen entry that fails falls back as
 * the default would), each try's steps unchanged. With edited (non-NULL)
 * the first try's command line step measures and boots that line instead
 * of the entry's options (MB_PLAN_SRC_CMDLINE_EDITED; p borrows the
 * bytes): PCR 12 then holds the edited line, like any other line, so a
 * secret sealed to the unedited one stays shut. MB_ERR_NOTFOUND when
 * entry is not usable, MB_ERR_UNSUPPORTED for an edit the plan's editor
 * setting forbids, MB_ERR_TOOLONG for a line over MB_PLAN_CMDLINE_MAX, MB_ERR_INVALID for
 * a NULL line of non-zero length;
 * p is untouched on failure. */
mb_err mb_plan_choose(mb_plan *p, size_t entry, const mb_str *edited);

#endif
