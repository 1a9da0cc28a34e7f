/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The next boot's PCR values, predicted from this boot's event log and the
 * files the next boot will use (docs/predict.md). Pure: no I/O, no
 * allocation; the caller passes the bytes and a scratch buffer.
 *
 * Covered: firmware [-> Debian's shim 16] -> mshim -> a Linux kernel (a
 * `linux` entry), and firmware -> mshim -> GRUB 2.06 -> Linux on mshim's
 * chainload path for a simple grub.cfg (src/predict_grub.c), the events
 * docs/MEASUREMENTS.md and docs/MOK.md list. Every PCR the changes do not touch
 * keeps the baseline's replayed value. A touched PCR is rebuilt from the
 * baseline's events, with the firmware's own events kept in their places
 * and mshim's, the firmware's image events for mshim and the kernel, and
 * the Linux stub's replaced by recomputed ones. A touched PCR whose
 * baseline holds an event these rules cannot attribute, or whose change
 * the rules do not cover (Secure Boot authority events for a new image,
 * GRUB beyond the subset, a new shim, an EFI program as next stage), is reported unpredictable
 * with a reason: never guessed.
 */
#ifndef MB_PREDICT_H
#define MB_PREDICT_H

#include "mb/tcglog.h"

/* One of mshim's PCR 5 file events (docs/MEASUREMENTS.md "The PCR 5
 * digest input"): tag, path as UTF-16LE with its NUL, the file's bytes
 * (none for MB_TAG_FILE_ABSENT and MB_TAG_FILE_UNREADABLE). */
typedef struct mb_predict_file {
        uint32_t tag;
        const uint8_t *path_utf16;
        size_t path_bytes;
        const void *data;
        size_t size;
} mb_predict_file;

/* A piece of a byte stream given in parts (the initrds, in entry order:
 * the stream is their concatenation, as mshim serves it). */
typedef struct mb_predict_chunk {
        const void *data;
        size_t size;
} mb_predict_chunk;

/* What the next boot uses. A NULL pointer (or a false *_given) means
 * "as in the baseline boot": the baseline's events for it are kept. */
typedef struct mb_predict_input {
        const void *log;                        /* the baseline event log */
        size_t log_size;
        const void *loader;                     /* mshimx64.efi as the firmware will start it (and its
                                                 * built-in TOTP floor, mb_boot_totp_mode) */
        size_t loader_size;
        const mb_predict_file *loader_conf;     /* tag LOADER_CONF, FILE_ABSENT or FILE_UNREADABLE */
        bool bad_entries_given;                 /* the unusable entry files, in file name byte order */
        const mb_predict_file *bad_entries;
        size_t n_bad_entries;
        const mb_predict_file *entry;           /* tag BLS_ENTRY: the entry that boots */
        const void *kernel;                     /* the entry's linux image */
        size_t kernel_size;
        bool initrd_given;                      /* with n_initrd 0: no initrd */
        const mb_predict_chunk *initrd;
        size_t n_initrd;
        const char *options;                    /* UTF-8, the entry's options joined */
        size_t options_len;
        /* Non-NULL: the next stage is not a Linux kernel mshim starts (an
         * `efi` entry, the chainload path): the PCRs such a program may
         * extend are unpredictable, with this reason. */
        const char *next_stage_unsupported;
        /* Secure Boot updates (docs/predict.md "Secure Boot"): a file as
         * mb_siglist_payload reads it, appended to the baseline's db or dbx
         * as the firmware appends (mb_siglist_append). NULL: unchanged. */
        const void *db_append;
        size_t db_append_size;
        const void *dbx_append;
        size_t dbx_append_size;
        /* With Secure Boot on and a new loader or kernel: does the PKCS#7
         * SignedData pkcs7 (a WIN_CERTIFICATE of image) verify with the
         * X.509 certificate cert (DER) as its one trusted certificate, as
         * the firmware's Pkcs7Verify checks it (and its digest is the
         * image's)? 1 yes, 0 no. NULL: PCR 7 is then unpredictable. */
        int (*sb_verify)(void *ctx, const void *image, size_t image_size, const uint8_t *pkcs7,
                         size_t pkcs7_len, const uint8_t *cert, size_t cert_len);
        void *sb_ctx;
        /* Behind shim (docs/predict.md "Behind shim"): shimx64.efi as the
         * firmware will start it (NULL: as in the baseline), and MokList's
         * data on the next boot (an EFI_SIGNATURE_LIST array; empty: no
         * MokList). */
        const void *shim;
        size_t shim_size;
        bool mok_list_given;
        const uint8_t *mok_list;
        size_t mok_list_size;
        /* GRUB as next stage (the baseline chainloaded it; docs/predict.md):
         * a new grubx64.efi and a new grub.cfg (then the kernel and initrds
         * above are the files its linux and initrd lines name). */
        const void *next_stage;
        size_t next_stage_size;
        const char *grub_cfg;
        size_t grub_cfg_size;
        /* The PCRs at the TOTP point (docs/CONFIG.md "TOTP"), for `mshim
         * totp enroll --literal`: PCR 12 without the fence, PCR 5 without
         * the firmware's ExitBootServices events, and PCR 9, which the
         * Linux stub extends only later, unpredictable. */
        bool totp_point;
        /* The baseline boot did not run mshim (shim + GRUB, GRUB alone):
         * predict the first boot through mshim (docs/predict.md "The
         * first boot"): the firmware's events come from the log, mshim's
         * and the kernel's from the files, which must all be given
         * (loader, loader.conf, unusable entries, entry, kernel, initrds,
         * options). With shim: shim stays, as the baseline's (the same
         * image), and starts mshim; without: the firmware starts mshim. */
        bool first_boot;
        uint8_t *scratch;                       /* mb_predict_scratch_size bytes */
        size_t scratch_size;
} mb_predict_input;

/* Which input a failure is about, for the caller's message. */
typedef enum mb_predict_what {
        MB_PREDICT_NONE = 0,
        MB_PREDICT_LOG,
        MB_PREDICT_LOADER,
        MB_PREDICT_KERNEL,
        MB_PREDICT_OPTIONS,
        MB_PREDICT_SCRATCH,
        MB_PREDICT_DB_APPEND,           /* not a signature list payload: see err_why */
        MB_PREDICT_DBX_APPEND,
        MB_PREDICT_SHIM,        /* not a PE image */
        MB_PREDICT_MOK,         /* not an EFI_SIGNATURE_LIST array */
        MB_PREDICT_NEXT_STAGE,
} mb_predict_what;

/* Baseline events of one PCR the rules rebuild, as attributed. */
#define MB_PREDICT_MAX_EVENTS 80
typedef struct mb_predict_item {
        uint8_t kind;
        const uint8_t *digest[MB_TCGLOG_MAX_ALGS];     /* per bank index; NULL: not in this record */
        uint32_t type;                                  /* the event's type and data (in the log) */
        const uint8_t *data;
        size_t data_size;
        uint32_t apps_before;   /* boot applications logged before it (mb_predict.boot_apps) */
} mb_predict_item;

typedef struct mb_predict_seq {
        uint32_t n;
        bool overflow;
        mb_predict_item items[MB_PREDICT_MAX_EVENTS];
} mb_predict_seq;

/* What the baseline says about shim: its PCR 14 events and the
 * EFI_SIGNATURE_DATA (owner + certificate) of each PCR 7 "MokListRT"
 * authority it logged, in log order (pointers into the log). */
#define MB_PREDICT_MAX_SHIM_AUTH 8
typedef struct mb_predict_shim {
        mb_predict_seq seq14;
        uint32_t n_moklist;             /* PCR 14 "MokList" events */
        bool unknown14;                 /* a PCR 14 event shim does not make */
        uint32_t n_auth;
        bool auth_overflow;
        const uint8_t *auth[MB_PREDICT_MAX_SHIM_AUTH];
        size_t auth_size[MB_PREDICT_MAX_SHIM_AUTH];
        uint32_t auth_apps[MB_PREDICT_MAX_SHIM_AUTH];  /* PCR 4 applications logged before it */
        uint32_t apps;                  /* PCR 4 applications so far */
} mb_predict_shim;

typedef struct mb_predict {
        mb_replay baseline;     /* the baseline log's replay */
        mb_replay pcrs;         /* the prediction (values of unpredictable PCRs are meaningless) */
        uint32_t touched;       /* bit i: the changes touch PCR i */
        uint32_t changed;       /* bit i: predicted differs from the baseline in some bank */
        uint32_t unpredictable; /* bit i: see reason[i] */
        const char *reason[MB_PCR_COUNT];
        mb_predict_what err_what;       /* on failure: the input to blame */
        const char *err_why;            /* and for DB/DBX_APPEND, what is wrong with it */
        /* Non-NULL: the firmware would refuse an image of the next boot
         * (a dbx update revokes it): no boot to predict; every PCR the
         * boot extends is unpredictable with this reason. */
        const char *refused;
        /* Working state: the baseline's events of PCRs 4, 5, 9, 12. */
        mb_predict_seq seq4, seq5, seq9, seq12;
        mb_predict_seq seq8;            /* GRUB's commands */
        bool chainloaded;               /* mshim's chainload marker in PCR 12 */
        mb_predict_seq seq7;            /* PCR 7, for Secure Boot updates */
        mb_predict_seq drivers;         /* driver images the firmware verified (PCR 2) */
        bool secure_boot_on;            /* the SecureBoot variable's event says 1 */
        uint32_t n_events[MB_PCR_COUNT];
        uint32_t authorities;           /* EV_EFI_VARIABLE_AUTHORITY records in PCR 7 */
        bool mshim_seen, mshim_left;    /* mshim's PCR 5 events; its exit or chainload marker */
        bool other13;                   /* PCR 13 holds an event that is not mshim's TOTP fence */
        uint32_t images_before_mshim;   /* PCR 4 applications started before mshim's first event */
        mb_predict_shim shim;
        bool first_boot;                /* predicted as the first boot through mshim (input first_boot) */
        bool sep4;                      /* PCR 4's separator is logged */
        uint32_t boot_apps;             /* PCR 4 applications after it (boot applications) so far */
        uint32_t early[MB_PCR_COUNT];   /* events per PCR logged before the first boot application */
} mb_predict;

/* Scratch bytes in needs: the largest PCR 5 digest input, the options
 * as UTF-16LE, and the new db and dbx values (their baseline's, at most
 * the log's size, plus the update). MB_ERR_OVERFLOW when that does not fit a size_t. */
mb_err mb_predict_scratch_size(const mb_predict_input *in, size_t *ret_size);

/*
 * Predict. MB_OK: ret holds the prediction (some PCRs maybe unpredictable).
 * Errors, with ret->err_what set: the log does not parse (MB_PREDICT_LOG,
 * the codec's error), the loader or kernel is not a PE image
 * (MB_PREDICT_LOADER/KERNEL, mb_pe_parse's error), the options are not
 * UTF-8 (MB_PREDICT_OPTIONS), scratch too small (MB_PREDICT_SCRATCH), the
 * shim is not a PE image (MB_PREDICT_SHIM), the MokList is not an
 * EFI_SIGNATURE_LIST array (MB_PREDICT_MOK), the next stage is not a PE
 * image (MB_PREDICT_NEXT_STAGE).
 */
mb_err mb_predict_run(const mb_predict_input *in, mb_predict *ret);

#endif
