/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The next boot's PCRs from this boot's log and the next boot's files
 * (include/mb/predict.h, docs/predict.md). The rules are
 * docs/MEASUREMENTS.md's; every byte mshim measures comes from the same
 * functions the loader uses (mb_pcr5_input_build, mb_linux_stub_*), every
 * image digest from src/pe.c's Authenticode.
 */
#include "mb/predict.h"
#include "mb/bls.h"
#include "mb/evdata.h"
#include "mb/mboot.h"
#include "mb/pe.h"
#include "mb/plan.h"
#include "mb/varstore.h"
#include "mb/predict_grub.h"
#include "mb/totp.h"

/* What a baseline event of PCR 4, 5, 9 or 12 is, as far as the rules know. */
enum {
        K_FIRMWARE,     /* the firmware's own: kept where it is */
        K_APP_EARLY,    /* PCR 4 application started before mshim's first event */
        K_MSHIM_IMAGE,  /* PCR 4: mshim itself (the last K_APP_EARLY) */
        K_IMAGE,        /* PCR 4: an image mshim loaded (the kernel) */
        K_CONF,         /* PCR 5: loader.conf, its absence, or that it was unreadable */
        K_BAD,          /* PCR 5: an unusable entry file */
        K_ENTRY,        /* PCR 5: an entry mshim tried */
        K_INITRD,       /* PCR 9: "Linux initrd" */
        K_LOADOPT,      /* PCR 9: the stub's LoadOptions */
        K_CMDLINE,      /* PCR 12: mshim's EV_IPL */
        K_FENCE,        /* PCR 12: mshim's TOTP fence */
        K_TOTP_INITRD,  /* PCR 12: the initrd the TOTP code vouches for */
        K_SHIM_IMAGE,   /* PCR 4: shim, started by the firmware right before shim started mshim */
        K_MOKLIST,      /* PCR 14: shim's "MokList" EV_IPL */
        K_SHIM14,       /* PCR 14: shim's other EV_IPL events (MokListX, ...) */
        K_GRUB_CMD,     /* PCR 8: GRUB's "grub_cmd: " EV_IPL */
        K_GRUB_CMDLINE, /* PCR 8: GRUB's "kernel_cmdline: " EV_IPL */
        K_OTHER,        /* none of these: the PCR cannot be rebuilt */
};

/* Digests per bank index, for events the prediction computes. */
typedef uint8_t digest_set[MB_TCGLOG_MAX_ALGS][MB_HASH_MAX];

/* TOTP on the next boot (mb_boot_totp_mode of the loader's built-in floor
 * and loader.conf): known false when the inputs cannot tell. */
typedef struct next_totp {
        bool known, on;
        bool require;           /* known to be "totp require" */
} next_totp;

/* The recomputed digests of what changed, and what the kernel's stub does. */
typedef struct fresh {
        digest_set loader, kernel, initrd, options;
        bool kernel_known;      /* kernel given and its version read */
        bool stub_initrd, stub_options;
        const uint8_t *db_add, *dbx_add;        /* the updates' signature lists */
        size_t db_add_len, dbx_add_len;
        /* Behind shim: the new shim's image digest, whether it differs
         * from the baseline's, its built-in certificate (NULL: none) and
         * the next MokList event's digest (moklist_why: why there is none). */
        digest_set shim, moklist;
        bool shim_new;
        const uint8_t *vendor;
        size_t vendor_len;
        const char *moklist_why;
        digest_set next_stage;  /* GRUB's Authenticode digest */
        /* The new loader's built-in TOTP floor (floor_known: a loader is
         * given), or why it boots nothing (its policy does not parse). */
        bool floor_known;
        mb_totp_mode floor;
        const char *loader_refuses;
        next_totp totp;
        digest_set totp_initrd; /* the TOTP initrd event of the given initrds */
        /* The given loader.conf, loader or kernel is the baseline's own
         * (its PCR 5 event, its PCR 4 image digest). */
        bool conf_as_baseline, loader_as_baseline, kernel_as_baseline;
} fresh;

/* PCRs an EFI program started as next stage may extend before
 * ExitBootServices (GRUB 8 and 9, systemd-boot 12, shim 7 and 14, ...). */
#define NEXT_STAGE_PCRS ((1u << 4) | (1u << 5) | (1u << 7) | (1u << 8) | (1u << 9) | \
                         (1u << 12) | (1u << 13) | (1u << 14))

/* ---- hashing, for every bank the log declares ----------------------------- */

static bool bank_ok(const mb_predict *p, uint32_t b) {
        return p->pcrs.banks[b].computable;
}

/* H(stream) per bank; the stream in parts. Each part is hashed in slices
 * for every bank in turn, so a large initrd is read from memory once, not
 * once per bank. */
#define SLICE (256u * 1024)
static void hash_chunks(const mb_predict *p, const mb_predict_chunk *c, size_t n, digest_set out) {
        mb_hash h[MB_TCGLOG_MAX_ALGS];

        for (uint32_t b = 0; b < p->pcrs.n_banks; b++)
                if (bank_ok(p, b))
                        mb_hash_init(&h[b], p->pcrs.banks[b].alg);
        for (size_t i = 0; i < n; i++)
                for (size_t off = 0; off < c[i].size; off += SLICE) {
                        size_t len = c[i].size - off < SLICE ? c[i].size - off : SLICE;
                        for (uint32_t b = 0; b < p->pcrs.n_banks; b++)
                                if (bank_ok(p, b))
                                        mb_hash_update(&h[b], (const uint8_t *) c[i].data + off, len);
                }
        for (uint32_t b = 0; b < p->pcrs.n_banks; b++)
                if (bank_ok(p, b))
                        mb_hash_final(&h[b], out[b]);
}

static void hash_buf(const mb_predict *p, const void *data, size_t size, digest_set out) {
        mb_predict_chunk c = { data, size };
        hash_chunks(p, &c, 1, out);
}

/* The Authenticode digest per bank: what the firmware logs in PCR 4. */
static mb_err image_digests(const mb_predict *p, const void *buf, size_t size, digest_set out) {
        mb_pe pe;
        mb_err r = mb_pe_parse(buf, size, &pe);

        for (uint32_t b = 0; r == MB_OK && b < p->pcrs.n_banks; b++)
                if (bank_ok(p, b))
                        r = mb_pe_authenticode_parsed(&pe, p->pcrs.banks[b].alg, out[b]);
        return r;
}

/* ---- the prediction's PCRs ------------------------------------------------ */

static void pcr_reset(mb_predict *p, uint32_t pcr) {
        for (uint32_t b = 0; b < p->pcrs.n_banks; b++) {
                mb_memset(p->pcrs.banks[b].pcr[pcr], 0, MB_HASH_MAX);
                p->pcrs.banks[b].extended &= ~(1u << pcr);
        }
}

/* Extend with one event's digests (NULL for a bank the record lacks: as
 * mb_replay_event, that bank is not extended). */
static void pcr_extend(mb_predict *p, uint32_t pcr, const uint8_t *const d[MB_TCGLOG_MAX_ALGS]) {
        for (uint32_t b = 0; b < p->pcrs.n_banks; b++) {
                if (!d[b])
                        continue;
                p->pcrs.banks[b].extended |= 1u << pcr;
                if (bank_ok(p, b))
                        mb_pcr_extend(p->pcrs.banks[b].alg, p->pcrs.banks[b].pcr[pcr], d[b]);
        }
}

static void pcr_extend_set(mb_predict *p, uint32_t pcr, digest_set d) {
        const uint8_t *refs[MB_TCGLOG_MAX_ALGS] = { 0 };

        for (uint32_t b = 0; b < p->pcrs.n_banks; b++)
                refs[b] = d[b];
        pcr_extend(p, pcr, refs);
}

static void unpredictable(mb_predict *p, uint32_t pcr, const char *why) {
        if (p->unpredictable & (1u << pcr))
                return;         /* the first reason found is the one reported */
        p->unpredictable |= 1u << pcr;
        p->reason[pcr] = why;
}

/* ---- attributing the baseline's events ------------------------------------ */

static bool mshim_tag(const mb_tcglog_event *ev, uint32_t *ret_tag) {
        uint32_t tag;

        if (ev->type != MB_EV_EVENT_TAG || ev->data_size < 8 || mb_le32(ev->data + 4) != ev->data_size - 8)
                return false;
        tag = mb_le32(ev->data);
        if (tag < MB_TAG_LOADER_CONF || tag > MB_TAG_TOTP_INITRD)
                return false;
        *ret_tag = tag;
        return true;
}

static bool linux_tag(const mb_tcglog_event *ev, uint32_t tag) {
        return ev->type == MB_EV_EVENT_TAG && ev->data_size >= 8 && mb_le32(ev->data) == tag &&
               mb_le32(ev->data + 4) == ev->data_size - 8;
}

/* The firmware's own PCR 5 events on a UEFI boot (PC Client PFP, PCR[5]
 * usage): the GPT, the separator, the ExitBootServices actions. */
static bool pcr5_firmware(uint32_t type) {
        return type == MB_EV_SEPARATOR || type == MB_EV_EFI_GPT_EVENT || type == MB_EV_EFI_GPT_EVENT2 ||
               type == MB_EV_EFI_ACTION;
}

static uint8_t kind4(mb_predict *p, const mb_tcglog_event *ev) {
        if (!p->mshim_seen)
                return ev->type == MB_EV_EFI_BOOT_SERVICES_APPLICATION ? K_APP_EARLY : K_FIRMWARE;
        return ev->type == MB_EV_EFI_BOOT_SERVICES_APPLICATION ? K_IMAGE : K_OTHER;
}

static uint8_t kind5(mb_predict *p, const mb_tcglog_event *ev) {
        uint32_t tag;

        if (!mshim_tag(ev, &tag))
                return pcr5_firmware(ev->type) ? K_FIRMWARE : K_OTHER;
        switch (tag) {
        case MB_TAG_LOADER_CONF:
        case MB_TAG_FILE_ABSENT:
                return K_CONF;
        case MB_TAG_FILE_UNREADABLE:
                /* loader.conf's comes first, an entry's after it. */
                return p->mshim_seen ? K_BAD : K_CONF;
        case MB_TAG_BLS_ENTRY_BAD:
                return K_BAD;
        case MB_TAG_BLS_ENTRY:
                return K_ENTRY;
        case MB_TAG_EXIT:
                p->mshim_left = true;
                return K_OTHER;
        }
        return K_OTHER;
}

static uint8_t kind9(const mb_tcglog_event *ev) {
        if (linux_tag(ev, MB_TAG_LINUX_INITRD))
                return K_INITRD;
        return linux_tag(ev, MB_TAG_LINUX_LOAD_OPTIONS) ? K_LOADOPT : K_OTHER;
}

/* GRUB 2.06's PCR 8 events: EV_IPL, data the prefix, the text, a NUL. */
static bool grub_text(const mb_tcglog_event *ev, const char *prefix) {
        size_t n = 0;

        while (prefix[n])
                n++;
        return ev->type == MB_EV_IPL && ev->data_size > n && mb_memcmp(ev->data, prefix, n) == 0;
}

static uint8_t kind8(const mb_tcglog_event *ev) {
        if (grub_text(ev, "grub_cmd: "))
                return K_GRUB_CMD;
        return grub_text(ev, "kernel_cmdline: ") ? K_GRUB_CMDLINE : K_OTHER;
}

static uint8_t kind12(mb_predict *p, const mb_tcglog_event *ev) {
        uint32_t tag;

        if (ev->type == MB_EV_IPL)
                return K_CMDLINE;
        if (mshim_tag(ev, &tag) && tag == MB_TAG_TOTP_FENCE)
                return K_FENCE;
        if (mshim_tag(ev, &tag) && tag == MB_TAG_TOTP_INITRD)
                return K_TOTP_INITRD;
        if (mshim_tag(ev, &tag) && (tag == MB_TAG_CHAINLOAD || tag == MB_TAG_EXIT))
                p->mshim_left = true;
        if (mshim_tag(ev, &tag) && tag == MB_TAG_CHAINLOAD)
                p->chainloaded = true;
        return K_OTHER;
}

/* PCR 7 events as the Secure Boot rules see them (docs/MEASUREMENTS.md,
 * "PCR 7"). */
enum {
        K7_KEEP,        /* kept in its place: SecureBoot, PK, KEK, the separator, ... */
        K7_DB,          /* EV_EFI_VARIABLE_DRIVER_CONFIG of db */
        K7_DBX,         /* ... of dbx */
        K7_AUTH,        /* EV_EFI_VARIABLE_AUTHORITY: a db entry that verified an image */
};

/* A UEFI_VARIABLE_DATA's GUID and name (ASCII, compared with the UTF-16LE
 * name the firmware logs without its NUL). */
static bool var_named(const mb_uefi_variable *v, const mb_guid *guid, const char *name) {
        size_t n = mb_strnlen(name, 16);

        if (mb_memcmp(v->guid, guid->b, 16) != 0 || v->name_units != n)
                return false;
        for (size_t i = 0; i < n; i++)
                if (mb_le16(v->name + 2 * i) != (uint8_t) name[i])
                        return false;
        return true;
}

static uint8_t kind7(mb_predict *p, const mb_tcglog_event *ev) {
        mb_uefi_variable v;

        if (ev->type == MB_EV_EFI_VARIABLE_AUTHORITY)
                return K7_AUTH;
        if (ev->type != MB_EV_EFI_VARIABLE_DRIVER_CONFIG || mb_evdata_variable(ev->data, ev->data_size, &v) != MB_OK)
                return K7_KEEP;
        if (var_named(&v, &MB_GUID_GLOBAL_VARIABLE, "SecureBoot"))
                p->secure_boot_on = v.data_size == 1 && v.data[0] == 1;
        if (var_named(&v, &MB_GUID_IMAGE_SECURITY_DB, "db"))
                return K7_DB;
        return var_named(&v, &MB_GUID_IMAGE_SECURITY_DB, "dbx") ? K7_DBX : K7_KEEP;
}

/* Images the firmware verifies and measures (PC Client PFP 10.4.3). */
static bool is_image_event(uint32_t type) {
        return type == MB_EV_EFI_BOOT_SERVICES_APPLICATION || type == MB_EV_EFI_BOOT_SERVICES_DRIVER ||
               type == MB_EV_EFI_RUNTIME_SERVICES_DRIVER;
}

static void seq_add(mb_predict *p, mb_predict_seq *s, uint8_t kind, const mb_tcglog_event *ev) {
        mb_predict_item *it;

        if (s->n == MB_PREDICT_MAX_EVENTS) {
                s->overflow = true;
                return;
        }
        it = &s->items[s->n++];
        it->kind = kind;
        it->type = ev->type;
        it->data = ev->data;
        it->data_size = ev->data_size;
        it->apps_before = p->boot_apps;
        for (uint32_t b = 0; b < p->baseline.n_banks; b++) {
                const mb_tcglog_digest *d = mb_tcglog_event_digest(ev, p->baseline.banks[b].alg);
                it->digest[b] = d ? d->bytes : NULL;
        }
}

/* ---- behind shim: what shim 16 logged (mok.c, verify.c, tpm.c) ------------ */

/* An EV_IPL whose data is `name` with its NUL (shim's tpm_log_event). */
static bool ipl_is(const mb_tcglog_event *ev, const char *name) {
        size_t n = mb_strnlen(name, 32) + 1;
        return ev->type == MB_EV_IPL && ev->data_size == n && mb_memcmp(ev->data, name, n) == 0;
}

/* shim logs into PCR 14 each MOK variable with MOK_VARIABLE_LOG (mok.c's
 * mok_state_variable_data): EV_IPL, data = the name with its NUL, digest =
 * the hash of what it mirrors to <name>RT. MokList's is rebuilt; the
 * others do not depend on MokList and stay. */
static uint8_t kind14(mb_predict *p, const mb_tcglog_event *ev) {
        static const char *const others[] = { "MokListX", "MokSBState", "MokListTrusted", "MokPolicy" };

        if (ipl_is(ev, "MokList")) {
                p->shim.n_moklist++;
                return K_MOKLIST;
        }
        for (size_t i = 0; i < sizeof(others) / sizeof(others[0]); i++)
                if (ipl_is(ev, others[i]))
                        return K_SHIM14;
        p->shim.unknown14 = true;
        return K_OTHER;
}

/* shim's authority event for an image verified by a MokListRT entry
 * (verify.c check_db_cert_in_ram -> tpm.c tpm_measure_variable): a
 * UEFI_VARIABLE_DATA (TCG PC Client PFP 10.2.6: GUID, u64 name length in
 * characters, u64 data length, the UTF-16 name, the data) with shim's GUID,
 * name "MokListRT", data = the EFI_SIGNATURE_DATA (owner + certificate). */
static void shim_auth(mb_predict *p, const mb_tcglog_event *ev) {
        static const uint8_t name[18] = { 'M', 0, 'o', 0, 'k', 0, 'L', 0, 'i', 0, 's', 0, 't', 0, 'R', 0, 'T', 0 };
        mb_predict_shim *s = &p->shim;

        if (ev->data_size < 32 + sizeof(name) || mb_memcmp(ev->data, MB_GUID_SHIM_LOCK.b, 16) != 0 ||
            mb_le64(ev->data + 16) != 9 || mb_le64(ev->data + 24) != ev->data_size - 32 - sizeof(name) ||
            mb_memcmp(ev->data + 32, name, sizeof(name)) != 0)
                return;
        if (s->n_auth == MB_PREDICT_MAX_SHIM_AUTH) {
                s->auth_overflow = true;
                return;
        }
        s->auth[s->n_auth] = ev->data + 32 + sizeof(name);
        s->auth_size[s->n_auth] = ev->data_size - 32 - sizeof(name);
        s->auth_apps[s->n_auth++] = s->apps;
}

static void scan_shim(mb_predict *p, const mb_tcglog_event *ev) {
        if (ev->pcr == 4 && ev->type == MB_EV_EFI_BOOT_SERVICES_APPLICATION)
                p->shim.apps++;
        else if (ev->pcr == 7 && ev->type == MB_EV_EFI_VARIABLE_AUTHORITY)
                shim_auth(p, ev);
        else if (ev->pcr == 14)
                seq_add(p, &p->shim.seq14, kind14(p, ev), ev);
}

/* The index among PCR 4 applications of the first item of `kind`, or -1. */
static int32_t app_index(const mb_predict *p, uint8_t kind) {
        int32_t n = 0;

        for (uint32_t i = 0; i < p->seq4.n; i++) {
                uint8_t k = p->seq4.items[i].kind;
                if (k == kind)
                        return n;
                n += k == K_APP_EARLY || k == K_MSHIM_IMAGE || k == K_IMAGE || k == K_SHIM_IMAGE;
        }
        return -1;
}

/* Behind shim the firmware starts shim and shim starts mshim: shim is the
 * application right before mshim's. */
static void mark_shim_image(mb_predict *p) {
        int32_t m = app_index(p, K_MSHIM_IMAGE);

        if (!p->shim.n_moklist || m < 1)
                return;
        for (uint32_t i = 0; i < p->seq4.n; i++)
                if (p->seq4.items[i].kind == K_MSHIM_IMAGE) {
                        for (uint32_t j = i; j-- > 0;)
                                if (p->seq4.items[j].kind == K_APP_EARLY) {
                                        p->seq4.items[j].kind = K_SHIM_IMAGE;
                                        return;
                                }
                        return;
                }
}

static void scan_event(mb_predict *p, const mb_tcglog_event *ev) {
        mb_replay_event(&p->baseline, ev);
        if (ev->type == MB_EV_NO_ACTION || ev->pcr >= MB_PCR_COUNT)
                return;
        p->n_events[ev->pcr]++;
        if (!p->boot_apps)
                p->early[ev->pcr]++;
        switch (ev->pcr) {
        case 4:
                seq_add(p, &p->seq4, kind4(p, ev), ev);
                break;
        case 5: {
                uint8_t k = kind5(p, ev);
                seq_add(p, &p->seq5, k, ev);
                if (k == K_CONF)
                        p->mshim_seen = true;
                break;
        }
        case 7:
                if (ev->type == MB_EV_EFI_VARIABLE_AUTHORITY)
                        p->authorities++;
                seq_add(p, &p->seq7, kind7(p, ev), ev);
                break;
        case 8:
                seq_add(p, &p->seq8, kind8(ev), ev);
                break;
        case 9:
                seq_add(p, &p->seq9, kind9(ev), ev);
                break;
        case 12:
                seq_add(p, &p->seq12, kind12(p, ev), ev);
                break;
        case 13: {
                uint32_t tag;
                p->other13 |= !(mshim_tag(ev, &tag) && tag == MB_TAG_TOTP_FENCE);
                break;
        }
        }
        if (ev->pcr != 4 && is_image_event(ev->type))
                seq_add(p, &p->drivers, 0, ev);
        scan_shim(p, ev);
        /* Boot applications: those the firmware starts after PCR 4's
         * separator (PC Client PFP 3.3.4.5: ReadyToBoot); an application
         * before it is the firmware's own. */
        if (ev->pcr == 4 && ev->type == MB_EV_SEPARATOR)
                p->sep4 = true;
        else if (ev->pcr == 4 && ev->type == MB_EV_EFI_BOOT_SERVICES_APPLICATION && p->sep4)
                p->boot_apps++;
}

/* mshim is the last application the firmware started before mshim's first
 * PCR 5 event; any earlier one stays the firmware's. */
static void mark_mshim_image(mb_predict *p) {
        for (uint32_t i = p->seq4.n; i-- > 0;)
                if (p->seq4.items[i].kind == K_APP_EARLY) {
                        p->seq4.items[i].kind = K_MSHIM_IMAGE;
                        p->images_before_mshim++;
                        return;
                }
}

static mb_err scan(mb_predict *p, const mb_predict_input *in) {
        mb_tcglog log;
        mb_tcglog_event ev;
        mb_err r = mb_tcglog_open(&log, in->log, in->log_size);

        if (r != MB_OK)
                return r;
        mb_replay_init(&p->baseline, &log);
        while ((r = mb_tcglog_next(&log, &ev)) == MB_OK)
                scan_event(p, &ev);
        if (r != MB_END)
                return r;
        mark_mshim_image(p);
        mark_shim_image(p);
        p->pcrs = p->baseline;
        return MB_OK;
}

/* PCR 4 is rebuilt only when every event is attributed (and, images
 * non-zero, mshim loaded exactly that many): then reset, else unpredictable. */
static bool pcr4_reset_if_known(mb_predict *p, uint32_t images, const char *why) {
        const mb_predict_seq *s = &p->seq4;
        uint32_t n = 0;

        for (uint32_t i = 0; i < s->n; i++) {
                n += s->items[i].kind == K_IMAGE;
                if (s->items[i].kind == K_OTHER) {
                        unpredictable(p, 4, why);
                        return false;
                }
        }
        if (images && n != images) {
                unpredictable(p, 4, why);
                return false;
        }
        pcr_reset(p, 4);
        return true;
}

/* ---- GRUB as next stage (the chainload path) ------------------------------ */

/* GRUB's events of one grub.cfg, as GRUB 2.06 makes them (include/mb/
 * predict_grub.h): PCR 8's digests, and per PCR 9 event which file it is. */
#define GRUB_LINE_MAX   4096
#define GRUB_PATH_MAX   256
#define GRUB_MAX_SEARCH 8
enum { GF_KERNEL, GF_INITRD, GF_SEARCH };

typedef struct grub_path {
        char s[GRUB_PATH_MAX];
        size_t len;
} grub_path;

typedef struct grub_plan {
        uint32_t n8, n9, n_initrd, n_search;
        bool linux_seen, boot_seen;
        digest_set d8[MB_PREDICT_MAX_EVENTS];
        uint8_t f9[MB_PREDICT_MAX_EVENTS][2];   /* GF_*, index */
        grub_path kernel, initrd[MB_BLS_MAX_INITRD], search[GRUB_MAX_SEARCH];
} grub_plan;

/* With GRUB as next stage, these inputs are the ones predicted. */
static bool grub_inputs(const mb_predict_input *in) {
        return in->next_stage || in->grub_cfg;
}

static bool grub_baseline(const mb_predict *p) {
        return p->mshim_seen && p->chainloaded && p->n_events[8] > 0;
}

static const char *grub_path_set(grub_path *gp, const char *s, size_t len) {
        if (len >= GRUB_PATH_MAX)
                return "a file path in grub.cfg longer than the predictor reads";
        mb_memcpy(gp->s, s, len);
        gp->len = len;
        return NULL;
}

static bool grub_path_eq(const grub_path *a, const grub_path *b) {
        return a->len == b->len && mb_memcmp(a->s, b->s, a->len) == 0;
}

static const char *plan_file(grub_plan *g, uint8_t what, uint32_t idx) {
        if (g->n9 == MB_PREDICT_MAX_EVENTS)
                return "more files opened by GRUB than the predictor attributes";
        g->f9[g->n9][0] = what;
        g->f9[g->n9++][1] = (uint8_t) idx;
        return NULL;
}

static const char *plan_text(const mb_predict *p, grub_plan *g, const char *text, size_t len) {
        if (g->n8 == MB_PREDICT_MAX_EVENTS)
                return "more GRUB commands than the predictor attributes";
        hash_buf(p, text, len, g->d8[g->n8++]);
        return NULL;
}

/* What one command adds to the plan: PCR 8 its text (and linux's
 * kernel_cmdline, measured while it runs, after its own), PCR 9 its files
 * in the order GRUB opens them. */
static const char *plan_cmd(const mb_predict *p, grub_plan *g, const char *buf, const mb_grub_words *w,
                            mb_grub_cmd_kind kind, size_t fw) {
        const char *why = plan_text(p, g, buf, w->text_len);

        for (size_t i = fw; !why && kind == MB_GRUB_CMD_INITRD && i < w->n; i++) {
                if (g->n_initrd == MB_BLS_MAX_INITRD)
                        return "more initrd files than the predictor reads";
                why = grub_path_set(&g->initrd[g->n_initrd], buf + w->off[i], w->len[i]);
                if (!why)
                        why = plan_file(g, GF_INITRD, g->n_initrd++);
        }
        if (why || kind == MB_GRUB_CMD_PLAIN || kind == MB_GRUB_CMD_INITRD)
                return why;
        if (kind == MB_GRUB_CMD_SEARCH_FILE) {
                if (g->n_search == GRUB_MAX_SEARCH)
                        return "more search --file commands than the predictor reads";
                why = grub_path_set(&g->search[g->n_search], buf + w->off[fw], w->len[fw]);
                return why ? why : plan_file(g, GF_SEARCH, g->n_search++);
        }
        if (kind == MB_GRUB_CMD_BOOT) {
                g->boot_seen = true;
                return g->linux_seen ? NULL : "boot before any linux command";
        }
        g->linux_seen = true;
        why = grub_path_set(&g->kernel, buf + w->off[1], w->len[1]);
        if (!why)
                why = plan_file(g, GF_KERNEL, 0);
        /* grub_create_loader_cmdline: the path and the words after it. */
        return why ? why : plan_text(p, g, buf + w->off[1], w->text_len - w->off[1]);
}

static const char *plan_line(const mb_predict *p, grub_plan *g, const char *line, size_t len, bool measured) {
        char buf[GRUB_LINE_MAX];
        mb_grub_words w;
        mb_grub_cmd_kind kind;
        size_t fw = 0;
        const char *why = NULL;
        mb_err r;

        if (len > sizeof(buf))
                return "a grub.cfg line longer than the predictor reads";
        r = mb_grub_line_words(line, len, measured, buf, sizeof(buf), &w, &why);
        if (r == MB_END)
                return NULL;
        if (r == MB_OK && g->boot_seen)
                return "a command after boot: not in the predicted subset";
        if (r == MB_OK)
                r = mb_grub_cmd_classify(buf, &w, &kind, &fw, &why);
        if (r != MB_OK)
                return why;
        if (kind == MB_GRUB_CMD_LINUX && g->linux_seen)
                return "more than one linux command";
        if (kind == MB_GRUB_CMD_INITRD && (!g->linux_seen || g->n_initrd))
                return "an initrd command before linux, or a second one: not in the predicted subset";
        return plan_cmd(p, g, buf, &w, kind, fw);
}

/* After the last line: boot must have run, and every search --file must
 * find a file whose bytes are given (the kernel or an initrd). */
static const char *plan_finish(grub_plan *g) {
        if (!g->boot_seen)
                return "grub.cfg does not end with boot (GRUB would stop at its menu or prompt)";
        for (uint32_t i = 0; i < g->n9; i++) {
                const grub_path *sp = &g->search[g->f9[i][1]];
                if (g->f9[i][0] != GF_SEARCH)
                        continue;
                if (grub_path_eq(sp, &g->kernel)) {
                        g->f9[i][0] = GF_KERNEL;
                        continue;
                }
                for (uint32_t k = 0; k < g->n_initrd && g->f9[i][0] == GF_SEARCH; k++)
                        if (grub_path_eq(sp, &g->initrd[k])) {
                                g->f9[i][0] = GF_INITRD;
                                g->f9[i][1] = (uint8_t) k;
                        }
                if (g->f9[i][0] == GF_SEARCH)
                        return "search --file for a file that is neither the kernel nor an initrd: its bytes are "
                               "not given";
        }
        return NULL;
}

static const char *plan_cfg(const mb_predict *p, grub_plan *g, const char *cfg, size_t size) {
        const char *why = NULL;

        for (size_t i = 0, start = 0; !why && i <= size; i++)
                if (i == size || cfg[i] == '\n') {
                        why = plan_line(p, g, cfg + start, i - start, false);
                        start = i + 1;
                }
        return why ? why : plan_finish(g);
}

/* The baseline's plan, from the commands its GRUB logged: they must give
 * back exactly the baseline's PCR 8 events and as many PCR 9 file events,
 * else GRUB did something the rules do not model. */
static const char *plan_baseline(const mb_predict *p, grub_plan *g) {
        const mb_predict_seq *s8 = &p->seq8, *s9 = &p->seq9;
        const char *why = NULL;

        for (uint32_t i = 0; !why && i < s8->n; i++) {
                const mb_predict_item *it = &s8->items[i];
                if (it->kind == K_OTHER)
                        return "PCR 8 holds an event GRUB's commands do not make";
                /* "grub_cmd: " (10 bytes), the text, a NUL. */
                if (it->kind == K_GRUB_CMD)
                        why = plan_line(p, g, (const char *) it->data + 10, it->data_size - 11, true);
        }
        why = why ? why : plan_finish(g);
        if (why)
                return why;
        if (g->n8 != s8->n || g->n9 != s9->n)
                return "GRUB's PCR 8 and 9 events in the baseline are not those of the commands it logged";
        for (uint32_t i = 0; i < s8->n; i++)
                for (uint32_t b = 0; b < p->baseline.n_banks; b++)
                        if (bank_ok(p, b) && s8->items[i].digest[b] &&
                            mb_memcmp(s8->items[i].digest[b], g->d8[i][b], p->baseline.banks[b].size) != 0)
                                return "GRUB's PCR 8 digests in the baseline are not those of its commands' text";
        for (uint32_t i = 0; i < s9->n; i++)
                if (s9->items[i].type != MB_EV_IPL)
                        return "PCR 9 holds an event that is not a file GRUB opened";
        return NULL;
}

/* The baseline's digests of the file the new plan's event i opens: from a
 * baseline event that opened the same path. NULL: not in the baseline. */
static const uint8_t *const *baseline_file(const mb_predict *p, const grub_plan *base, const grub_path *path) {
        for (uint32_t i = 0; i < base->n9; i++) {
                const grub_path *bp = base->f9[i][0] == GF_KERNEL ? &base->kernel : &base->initrd[base->f9[i][1]];
                if (grub_path_eq(bp, path))
                        return p->seq9.items[i].digest;
        }
        return NULL;
}

static void rebuild9_grub(mb_predict *p, const mb_predict_input *in, const grub_plan *base, const grub_plan *g) {
        digest_set d;

        if (in->initrd_given && in->n_initrd != g->n_initrd) {
                unpredictable(p, 9, "--initrd gives another number of files than grub.cfg's initrd line names");
                return;
        }
        for (uint32_t i = 0; i < g->n9; i++) {
                bool kernel = g->f9[i][0] == GF_KERNEL;
                const grub_path *path = kernel ? &g->kernel : &g->initrd[g->f9[i][1]];
                if ((kernel && in->kernel) || (!kernel && in->initrd_given))
                        continue;
                if (!baseline_file(p, base, path)) {
                        unpredictable(p, 9, "grub.cfg opens a file the baseline boot did not (another kernel or "
                                            "initrd path): give it with --kernel or --initrd");
                        return;
                }
        }
        pcr_reset(p, 9);
        for (uint32_t i = 0; i < g->n9; i++) {
                bool kernel = g->f9[i][0] == GF_KERNEL;
                const grub_path *path = kernel ? &g->kernel : &g->initrd[g->f9[i][1]];
                if (kernel && in->kernel)
                        hash_buf(p, in->kernel, in->kernel_size, d);
                else if (!kernel && in->initrd_given)
                        hash_chunks(p, &in->initrd[g->f9[i][1]], 1, d);
                else {
                        pcr_extend(p, 9, baseline_file(p, base, path));
                        continue;
                }
                pcr_extend_set(p, 9, d);
        }
}

/* PCR 4: the firmware's events, mshim, GRUB (which enters the kernel by
 * the EFI handover: no image event for it). */
static void rebuild4_grub(mb_predict *p, const mb_predict_input *in, fresh *f) {
        const mb_predict_seq *s = &p->seq4;

        if (!pcr4_reset_if_known(p, 1, "PCR 4 holds other events after mshim's than GRUB's image"))
                return;
        for (uint32_t i = 0; i < s->n; i++) {
                const mb_predict_item *it = &s->items[i];
                if (it->kind == K_MSHIM_IMAGE && in->loader)
                        pcr_extend_set(p, 4, f->loader);
                else if (it->kind == K_IMAGE && in->next_stage)
                        pcr_extend_set(p, 4, f->next_stage);
                else
                        pcr_extend(p, 4, it->digest);
        }
}

/* Every touched PCR unpredictable, with one reason. */
static void all_touched(mb_predict *p, const char *why) {
        for (uint32_t i = 0; i < MB_PCR_COUNT; i++)
                if (p->touched & (1u << i))
                        unpredictable(p, i, why);
}

static void rebuild_grub(mb_predict *p, const mb_predict_input *in, fresh *f) {
        grub_plan base, next;
        const char *why = NULL;

        mb_memset(&base, 0, sizeof(base));
        mb_memset(&next, 0, sizeof(next));
        if (in->options || in->entry || in->loader_conf || in->bad_entries_given)
                why = "GRUB is the next stage (the baseline chainloaded it): the command line and the files are "
                      "grub.cfg's; only the loader, the next stage, grub.cfg, the kernel and the initrds are predicted";
        else if (p->n_events[14])
                why = "the baseline boot ran shim (PCR 14 events): shim is not supported yet";
        else if (p->images_before_mshim == 0)
                why = "no PCR 4 application event for mshim in the baseline boot";
        if (why)
                all_touched(p, why);
        why = plan_baseline(p, &base);
        if (!why && in->grub_cfg)
                why = plan_cfg(p, &next, in->grub_cfg, in->grub_cfg_size);
        if (!in->grub_cfg)
                next = base;
        for (uint32_t i = 8; why && i <= 9; i++)
                if (p->touched & (1u << i))
                        unpredictable(p, i, why);
        if ((p->touched & (1u << 4)) && !(p->unpredictable & (1u << 4)))
                rebuild4_grub(p, in, f);
        if ((p->touched & (1u << 8)) && !(p->unpredictable & (1u << 8))) {
                pcr_reset(p, 8);
                for (uint32_t i = 0; i < next.n8; i++)
                        pcr_extend_set(p, 8, next.d8[i]);
        }
        if ((p->touched & (1u << 9)) && !(p->unpredictable & (1u << 9)))
                rebuild9_grub(p, in, &base, &next);
}

/* A new GRUB, a new grub.cfg: PCR 4 (its image), 8 and 9; a baseline that
 * did not chainload GRUB cannot be rebuilt with them. */
static void find_touched_grub(mb_predict *p, const mb_predict_input *in) {
        if (in->next_stage)
                p->touched |= (1u << 4) | (1u << 8) | (1u << 9);
        if (in->grub_cfg)
                p->touched |= (1u << 8) | (1u << 9);
        if (in->next_stage && p->authorities) {
                p->touched |= 1u << 7;
                unpredictable(p, 7, "Secure Boot verified images in the baseline boot: the db entry that "
                                    "verifies a new next stage is not predicted yet");
        }
        if (grub_inputs(in) && !grub_baseline(p))
                all_touched(p, "the baseline boot did not chainload GRUB (mshim's chainload event in PCR 12 and "
                               "GRUB's PCR 8 events): a next stage or grub.cfg is not predicted for it");
}

/* GRUB's Authenticode digest, and a check that it is GRUB with the tpm
 * module built in: its two event prefixes are in the image. */
static bool contains(const void *hay, size_t size, const char *needle) {
        size_t n = 0;

        while (needle[n])
                n++;
        for (size_t i = 0; size >= n && i <= size - n; i++)
                if (mb_memcmp((const uint8_t *) hay + i, needle, n) == 0)
                        return true;
        return false;
}

static mb_err compute_fresh_grub(mb_predict *p, const mb_predict_input *in, fresh *f) {
        mb_err r;

        if (!in->next_stage)
                return MB_OK;
        r = image_digests(p, in->next_stage, in->next_stage_size, f->next_stage);
        if (r != MB_OK) {
                p->err_what = MB_PREDICT_NEXT_STAGE;
                return r;
        }
        if (!contains(in->next_stage, in->next_stage_size, "grub_cmd: ") ||
            !contains(in->next_stage, in->next_stage_size, "kernel_cmdline: ")) {
                p->touched |= (1u << 8) | (1u << 9);
                unpredictable(p, 8, "the next stage is not a GRUB 2.06 with its tpm module built in "
                                    "(no \"grub_cmd: \" in the image): what it measures is not predicted");
                unpredictable(p, 9, "the next stage is not a GRUB 2.06 with its tpm module built in");
        }
        return MB_OK;
}

/* ---- what changes touch, and what makes a touched PCR unpredictable -------- */

/* Secure Boot: db and dbx are logged in PCR 7, and the db entry that
 * verifies a new image (rebuild7). Behind shim, whose verification of a new
 * image the predictor does not model, a loader or kernel whose Authenticode
 * digest is the baseline's is taken for the baseline's image: shim verifies
 * it again and logs the same authority event, so with db and dbx unchanged
 * PCR 7 stays (an initrd, options or loader.conf change is predicted). The
 * digest does not cover the signature: the same code signed again by
 * another key would log another authority, or be refused; the prediction
 * is then wrong the safe way (that boot's PCR 7 is not the approved one,
 * nothing unseals). Without shim the signatures are checked (rebuild7). */
static bool sb_changes(const mb_predict *p, const mb_predict_input *in, const fresh *f) {
        bool same = p->shim.n_moklist > 0;
        bool new_image = (in->loader && !(same && f->loader_as_baseline)) ||
                         (in->kernel && !(same && f->kernel_as_baseline));

        return in->db_append || in->dbx_append || (new_image && (p->authorities || p->secure_boot_on));
}

static void find_touched(mb_predict *p, const mb_predict_input *in, const fresh *f) {
        if (in->loader)
                p->touched |= 1u << 4;
        if (in->kernel)
                p->touched |= (1u << 4) | (1u << 9);
        if (in->initrd_given)
                p->touched |= 1u << 9;
        if (in->options)
                p->touched |= (1u << 9) | (1u << 12);
        /* At the TOTP point, PCR 5 lacks the firmware's ExitBootServices events. */
        if (in->loader_conf || in->bad_entries_given || in->entry || in->totp_point)
                p->touched |= 1u << 5;
        /* A new loader.conf or loader (its built-in floor) may switch TOTP
         * on or off; with TOTP on, PCR 12 binds the initrd. */
        if (in->loader_conf || in->totp_point || ((in->loader || in->initrd_given) && !(f->totp.known && !f->totp.on)))
                p->touched |= 1u << 12;
        /* PCR 13 holds mshim's lock whatever loader.conf says; a new
         * loader extends it even if the baseline's (an older mshim) did
         * not; at the TOTP point it is not there yet. */
        if (in->loader || in->totp_point)
                p->touched |= 1u << MB_TOTP_LOCK_PCR;
        if (in->totp_point) {
                p->touched |= 1u << 9;
                unpredictable(p, 9, "at the TOTP point the Linux stub has not measured into PCR 9 yet");
        }
        if (sb_changes(p, in, f))
                p->touched |= 1u << 7;
        if (in->next_stage_unsupported) {
                p->touched |= NEXT_STAGE_PCRS;
                for (uint32_t i = 0; i < MB_PCR_COUNT; i++)
                        if (NEXT_STAGE_PCRS & (1u << i))
                                unpredictable(p, i, in->next_stage_unsupported);
        }
        find_touched_grub(p, in);
}

/* The baseline boot must be firmware -> mshim -> a Linux entry for its
 * events to be attributed at all. */
static const char *baseline_path_problem(const mb_predict *p) {
        if (!p->mshim_seen)
                return "the baseline boot did not run mshim (no mshim event in PCR 5)";
        if (p->mshim_left)
                return "mshim did not start a Linux entry in the baseline boot (its exit or chainload marker is logged)";
        if (p->n_events[8])
                return "the baseline boot ran GRUB (PCR 8 events) but not as mshim's chainloaded next stage: not supported";
        if (p->n_events[14] && (p->shim.unknown14 || p->shim.n_moklist != 1))
                return "PCR 14 holds events shim 16 does not make (or not exactly one MokList event)";
        if (p->images_before_mshim == 0)
                return "no PCR 4 application event for mshim in the baseline boot";
        return NULL;
}

/* ---- rebuilding PCR 4: firmware events, mshim, the kernel ------------------ */

static void rebuild4(mb_predict *p, const mb_predict_input *in, fresh *f) {
        const mb_predict_seq *s = &p->seq4;

        if (!pcr4_reset_if_known(p, 0, "PCR 4 holds an event after mshim's that is not an image mshim loaded"))
                return;
        for (uint32_t i = 0; i < s->n; i++) {
                const mb_predict_item *it = &s->items[i];
                if (it->kind == K_MSHIM_IMAGE && in->loader)
                        pcr_extend_set(p, 4, f->loader);
                else if (it->kind == K_SHIM_IMAGE && f->shim_new)
                        pcr_extend_set(p, 4, f->shim);
                else if (!(it->kind == K_IMAGE && in->kernel))
                        pcr_extend(p, 4, it->digest);
        }
        /* The kernel replaces every image mshim loaded in the baseline
         * (including fallback attempts): the default entry boots. */
        if (in->kernel)
                pcr_extend_set(p, 4, f->kernel);
}

/* ---- rebuilding PCR 5: firmware events in place, mshim's recomputed -------- */

/* mshim's events must be one run, in the order mshim makes them:
 * firmware*, loader.conf, unusable entries*, entries+, firmware*. */
static bool pcr5_in_order(const mb_predict_seq *s) {
        int state = 0;  /* 0 before mshim, 1 after conf/bad, 2 in entries, 3 after mshim */

        for (uint32_t i = 0; i < s->n; i++) {
                uint8_t k = s->items[i].kind;
                if (k == K_FIRMWARE && (state == 0 || state >= 2))
                        state = state == 0 ? 0 : 3;
                else if (k == K_CONF && state == 0)
                        state = 1;
                else if (k == K_BAD && state == 1)
                        state = 1;
                else if (k == K_ENTRY && (state == 1 || state == 2))
                        state = 2;
                else
                        return false;
        }
        return state >= 2;
}

static mb_err extend_file(mb_predict *p, const mb_predict_input *in, const mb_predict_file *file) {
        digest_set d;
        size_t n;
        mb_err r = mb_pcr5_input_build(file->tag, file->path_utf16, file->path_bytes, file->data, file->size,
                                       in->scratch, in->scratch_size, &n);

        if (r != MB_OK)
                return r;
        hash_buf(p, in->scratch, n, d);
        pcr_extend_set(p, 5, d);
        return MB_OK;
}

static mb_err rebuild5(mb_predict *p, const mb_predict_input *in) {
        const mb_predict_seq *s = &p->seq5;
        bool entry_done = false;
        mb_err r = MB_OK;

        if (!pcr5_in_order(s)) {
                unpredictable(p, 5, "mshim's PCR 5 events in the baseline are not in the order mshim makes them "
                                    "(or PCR 5 holds an event mshim and the firmware do not make)");
                return MB_OK;
        }
        pcr_reset(p, 5);
        for (uint32_t i = 0; r == MB_OK && i < s->n; i++) {
                const mb_predict_item *it = &s->items[i];
                switch (it->kind) {
                case K_CONF:
                        if (in->loader_conf)
                                r = extend_file(p, in, in->loader_conf);
                        else
                                pcr_extend(p, 5, it->digest);
                        for (size_t j = 0; r == MB_OK && in->bad_entries_given && j < in->n_bad_entries; j++)
                                r = extend_file(p, in, &in->bad_entries[j]);
                        break;
                case K_BAD:
                        if (!in->bad_entries_given)
                                pcr_extend(p, 5, it->digest);
                        break;
                case K_ENTRY:
                        /* The new entry replaces every entry the baseline
                         * tried: the one it names boots. */
                        if (!in->entry)
                                pcr_extend(p, 5, it->digest);
                        else if (!entry_done)
                                r = extend_file(p, in, in->entry);
                        entry_done = true;
                        break;
                case K_FIRMWARE:
                        /* After the entry: ExitBootServices, which comes
                         * after the TOTP point. */
                        if (!(in->totp_point && entry_done))
                                pcr_extend(p, 5, it->digest);
                        break;
                default:
                        pcr_extend(p, 5, it->digest);
                }
        }
        if (r != MB_OK)
                p->err_what = MB_PREDICT_SCRATCH;
        return r;
}

/* ---- rebuilding PCR 9: the initrd once, the stub's LoadOptions ------------- */

typedef struct pcr9_plan {
        bool mshim_initrd, stub_options, stub_initrd, has_initrd;
        const uint8_t *const *initrd_ref;       /* baseline digests when the initrd is unchanged */
        const uint8_t *const *options_ref;      /* baseline digests when the options are unchanged */
} pcr9_plan;

/* Who measures what, from the new kernel, else from the baseline's own
 * PCR 9 pattern [mshim's initrd] [stub's LoadOptions] [stub's initrd]. */
static const char *pcr9_structure(const mb_predict *p, const mb_predict_input *in, const fresh *f, pcr9_plan *plan) {
        const mb_predict_seq *s = &p->seq9;
        uint32_t before = 0, after = 0, opts = 0;

        for (uint32_t i = 0; i < s->n; i++) {
                if (s->items[i].kind == K_OTHER)
                        return "PCR 9 holds an event neither mshim nor the Linux stub makes (GRUB's?)";
                if (s->items[i].kind == K_LOADOPT) {
                        opts++;
                        plan->options_ref = s->items[i].digest;
                } else {
                        if (!plan->initrd_ref)
                                plan->initrd_ref = s->items[i].digest;
                        if (opts)
                                after++;
                        else
                                before++;
                }
        }
        if (opts > 1 || before > 1 || after > 1)
                return "PCR 9 holds more LoadOptions or initrd events than one boot of one kernel makes";
        plan->has_initrd = in->initrd_given ? in->n_initrd > 0 : before + after > 0;
        if (in->kernel) {
                if (!f->kernel_known)
                        return "the kernel's setup header names no version: what its EFI stub measures is unknown";
                plan->stub_options = f->stub_options;
                plan->stub_initrd = f->stub_initrd;
                plan->mshim_initrd = !f->stub_initrd;
                return NULL;
        }
        if (plan->has_initrd && before + after == 0)
                return "the baseline boot had no initrd: who measures one (mshim or the kernel's stub) depends "
                       "on the kernel; give the kernel too";
        plan->stub_options = opts > 0;
        /* Without LoadOptions a lone initrd event is in the same place
         * whoever made it. */
        plan->mshim_initrd = opts ? before > 0 : before + after == 2;
        plan->stub_initrd = opts ? after > 0 : before + after > 0;
        return NULL;
}

static void rebuild9(mb_predict *p, const mb_predict_input *in, fresh *f) {
        pcr9_plan plan = { 0 };
        const char *why = pcr9_structure(p, in, f, &plan);

        if (!why && plan.stub_options && !in->options && !plan.options_ref) {
                /* A new 6.1+ kernel after an older one: the LoadOptions
                 * bytes are PCR 12's, whose digest is the same. */
                if (p->seq12.n == 1 && p->seq12.items[0].kind == K_CMDLINE)
                        plan.options_ref = p->seq12.items[0].digest;
                else
                        why = "the command line's digest is not in the baseline: give the options too";
        }
        if (why) {
                unpredictable(p, 9, why);
                return;
        }
        pcr_reset(p, 9);
        if (plan.has_initrd && plan.mshim_initrd) {
                if (in->initrd_given)
                        pcr_extend_set(p, 9, f->initrd);
                else
                        pcr_extend(p, 9, plan.initrd_ref);
        }
        if (plan.stub_options) {
                if (in->options)
                        pcr_extend_set(p, 9, f->options);
                else
                        pcr_extend(p, 9, plan.options_ref);
        }
        if (plan.has_initrd && plan.stub_initrd) {
                if (in->initrd_given)
                        pcr_extend_set(p, 9, f->initrd);
                else
                        pcr_extend(p, 9, plan.initrd_ref);
        }
}

/* ---- rebuilding PCR 12: mshim's EV_IPL ------------------------------------- */

/* The next boot's loader.conf TOTP mode, when a new loader.conf is given:
 * as the loader reads it (efi/main.c): absent, no; unreadable or not
 * parsing, show. */
static mb_totp_mode conf_totp(const mb_predict_file *conf) {
        mb_loader_conf c;

        if (conf->tag != MB_TAG_LOADER_CONF)
                return conf->tag == MB_TAG_FILE_UNREADABLE ? MB_TOTP_SHOW : MB_TOTP_NO;
        return mb_loader_conf_parse(conf->data, conf->size, &c) != MB_OK ? MB_TOTP_SHOW : c.totp;
}

/* The TOTP fence's event (mb_totp_fence_event) into pcr. */
static void extend_fence(mb_predict *p, uint32_t pcr) {
        uint8_t fence[MB_TOTP_FENCE_EVENT_SIZE];
        digest_set d;

        mb_totp_fence_event(fence);
        hash_buf(p, fence, sizeof(fence), d);
        pcr_extend_set(p, pcr, d);
}

static bool baseline_fenced(const mb_predict *p) {
        for (uint32_t i = 0; i < p->seq12.n; i++)
                if (p->seq12.items[i].kind == K_FENCE)
                        return true;
        return false;
}

/* Will the next boot run with TOTP on (mb_boot_totp_mode)? The floor is
 * the new loader's (--loader), else the baseline's loader's; loader.conf
 * the new one, else the baseline's. What is not given is as in the
 * baseline, which shows only whether TOTP was on (its fence): when that
 * was on and every part given says "no", the part not given may be what
 * turned it on, and the answer is unknown. */
static next_totp next_totp_mode(const mb_predict *p, const mb_predict_input *in, const fresh *f) {
        mb_totp_mode floor = f->floor_known ? f->floor : MB_TOTP_NO;
        mb_totp_mode conf = in->loader_conf ? conf_totp(in->loader_conf) : MB_TOTP_NO;
        mb_totp_mode low = conf > floor ? conf : floor;     /* a lower bound */
        next_totp t = { .known = true, .require = low == MB_TOTP_REQUIRE };

        if (low != MB_TOTP_NO)
                t.on = true;
        else if (!f->floor_known && !in->loader_conf)
                t.on = baseline_fenced(p);
        else if ((f->floor_known && in->loader_conf) || !baseline_fenced(p))
                t.known = true;
        /* The part given is the baseline's own bytes: nothing changed. */
        else if (in->loader_conf ? f->conf_as_baseline : f->loader_as_baseline)
                t.on = true;
        else
                t.known = false;
        return t;
}

/* mshim's command line; with TOTP on, the initrd event and the fence
 * (docs/MEASUREMENTS.md "The TOTP initrd event", "The TOTP fence"); at
 * the TOTP point (in->totp_point) the fence is not there yet. The
 * baseline: [command line] [initrd event] [fence], the initrd event only
 * with the fence (an mshim before it fenced without one). */
/* mshim's steps of the boot predicted (src/plan.c, the loader's own
 * sequence): trying one `linux` entry; at the TOTP point (in->totp_point)
 * only those before it, that is before the fence and the lock. */
static size_t boot_steps(const mb_predict_input *in, const fresh *f, mb_plan_step steps[MB_PLAN_TRY_STEPS]) {
        size_t n = mb_plan_try_steps(f->totp.on ? MB_TOTP_SHOW : MB_TOTP_NO, true, false, 0, steps);

        for (size_t k = 0; in->totp_point && k < n; k++)
                if (steps[k].src == MB_PLAN_SRC_TOTP_FENCE || steps[k].src == MB_PLAN_SRC_TOTP_LOCK)
                        return k;
        return n;
}

static void rebuild12(mb_predict *p, const mb_predict_input *in, fresh *f) {
        const mb_predict_seq *s = &p->seq12;
        const mb_predict_item *initrd = NULL;
        mb_plan_step steps[MB_PLAN_TRY_STEPS];
        uint32_t k = 1;
        size_t n;

        if (s->n >= 2 && s->items[1].kind == K_TOTP_INITRD)
                initrd = &s->items[k++];
        if (s->n < 1 || s->items[0].kind != K_CMDLINE || (k < s->n && s->items[k].kind != K_FENCE) ||
            s->n > k + 1 || (initrd && s->n != 3)) {
                unpredictable(p, 12, "PCR 12 does not hold exactly mshim's one EV_IPL for the command line "
                                     "(and its TOTP initrd event and fence)");
                return;
        }
        if (!f->totp.known) {
                unpredictable(p, 12, "the baseline boot had TOTP on and what is given does not keep it on: whether "
                                     "it stays on is up to the built-in boot policy of mshimx64.efi and loader.conf: "
                                     "give both (--loader, and --loader-conf or --esp)");
                return;
        }
        if (f->totp.on && !in->initrd_given && !initrd) {
                unpredictable(p, 12, "with TOTP on, PCR 12 binds the initrd, and the baseline boot has no such event: "
                                     "give the initrd (--initrd, or --esp)");
                return;
        }
        pcr_reset(p, 12);
        n = boot_steps(in, f, steps);
        for (size_t j = 0; j < n; j++) {
                uint8_t src = steps[j].src;

                if (steps[j].pcr != 12)
                        continue;
                if (src == MB_PLAN_SRC_CMDLINE && in->options)
                        pcr_extend_set(p, 12, f->options);
                else if (src == MB_PLAN_SRC_CMDLINE)
                        pcr_extend(p, 12, s->items[0].digest);
                else if (src == MB_PLAN_SRC_TOTP_INITRD && in->initrd_given)
                        pcr_extend_set(p, 12, f->totp_initrd);
                else if (src == MB_PLAN_SRC_TOTP_INITRD)
                        pcr_extend(p, 12, initrd->digest);
                else if (src == MB_PLAN_SRC_TOTP_FENCE)
                        extend_fence(p, 12);
        }
}

/* PCR 13: nothing before mshim, then mshim's lock (the fence's event,
 * extended before it starts the kernel whatever loader.conf says: the
 * signed TOTP key's lock, docs/SEALING.md "The TOTP key"); at the TOTP
 * point all zeros. */
static void rebuild13(mb_predict *p, const mb_predict_input *in, const fresh *f) {
        mb_plan_step steps[MB_PLAN_TRY_STEPS];
        size_t n;

        if (p->other13 || p->n_events[MB_TOTP_LOCK_PCR] > 1) {
                unpredictable(p, MB_TOTP_LOCK_PCR, "PCR 13 holds an event other than mshim's one TOTP lock");
                return;
        }
        pcr_reset(p, MB_TOTP_LOCK_PCR);
        n = boot_steps(in, f, steps);
        for (size_t k = 0; k < n; k++)
                if (steps[k].src == MB_PLAN_SRC_TOTP_LOCK)
                        extend_fence(p, MB_TOTP_LOCK_PCR);
}

/* ---- rebuilding PCR 7: Secure Boot db/dbx updates, authority events -------- */

/* The db and dbx of the next boot, from the baseline's events and the
 * updates: the value each lists is where its EV_EFI_VARIABLE_DRIVER_CONFIG
 * data came from, with the update appended as the firmware appends. */
typedef struct sb_var {
        const mb_predict_item *ev;      /* the baseline's event */
        mb_uefi_variable var;
        const uint8_t *val;             /* the next boot's value */
        size_t len, old_len;            /* val[old_len..len): the entries the update adds */
        digest_set digest;              /* the next boot's event digests */
} sb_var;

/* What the Secure Boot checks found: the first reason the firmware would
 * refuse the boot, and the first reason PCR 7 cannot be predicted. */
typedef struct sb_verdict {
        const char *refused, *unpredictable;
} sb_verdict;

static void sb_refuse(sb_verdict *v, const char *why) {
        if (!v->refused)
                v->refused = why;
}

static void sb_unknown(sb_verdict *v, const char *why) {
        if (!v->unpredictable)
                v->unpredictable = why;
}

/* Every bank's digest of the event is the hash of its data: the data is
 * what the firmware measured, so the predictor may read it. */
static bool data_measured(const mb_predict *p, const mb_predict_item *it) {
        digest_set d;

        hash_buf(p, it->data, it->data_size, d);
        for (uint32_t b = 0; b < p->pcrs.n_banks; b++)
                if (bank_ok(p, b) && it->digest[b] && mb_memcmp(d[b], it->digest[b], p->pcrs.banks[b].size) != 0)
                        return false;
        return true;
}

/* The event's UEFI_VARIABLE_DATA rebuilt with new data: PFP 10.4.4,
 * VariableName, UnicodeNameLength, VariableDataLength (UINT64s),
 * UnicodeName, VariableData; the digest covers all of it. */
static void var_event_digests(const mb_predict *p, const mb_uefi_variable *v, const uint8_t *data, size_t len,
                              digest_set out) {
        uint8_t hdr[32];
        mb_predict_chunk c[3] = { { hdr, sizeof(hdr) }, { v->name, v->name_units * 2 }, { data, len } };

        mb_memcpy(hdr, v->guid, 16);
        mb_put_le32(hdr + 16, (uint32_t) v->name_units);
        mb_put_le32(hdr + 20, (uint32_t) ((uint64_t) v->name_units >> 32));
        mb_put_le32(hdr + 24, (uint32_t) len);
        mb_put_le32(hdr + 28, (uint32_t) ((uint64_t) len >> 32));
        hash_chunks(p, c, 3, out);
}

/* The baseline's event of db (kind K7_DB) or dbx (K7_DBX); NULL, or why
 * PCR 7 cannot be predicted. */
static const char *sb_var_find(const mb_predict *p, uint8_t kind, sb_var *ret) {
        mb_memset(ret, 0, sizeof(*ret));
        for (uint32_t i = 0; i < p->seq7.n; i++)
                if (p->seq7.items[i].kind == kind) {
                        if (ret->ev)
                                return "PCR 7 holds two events for db or dbx: which one the firmware reads is unknown";
                        ret->ev = &p->seq7.items[i];
                }
        if (!ret->ev)
                return "Secure Boot: the baseline log has no EV_EFI_VARIABLE_DRIVER_CONFIG event for db or dbx: "
                       "their values are unknown";
        if (!data_measured(p, ret->ev) || mb_evdata_variable(ret->ev->data, ret->ev->data_size, &ret->var) != MB_OK ||
            ret->var.trailing)
                return "the baseline's db or dbx event data is not what its digests cover";
        ret->val = ret->var.data;
        ret->len = ret->old_len = ret->var.data_size;
        return NULL;
}

/* Find the variable's event and append the update (add, NULL: none) into
 * *out, as the firmware appends (UEFI 2.10 8.2.1, mb_siglist_append); *out
 * and *out_size move past what it used. MB_ERR_NOSPACE when scratch is
 * short; else MB_OK with *ret_why NULL or why PCR 7 cannot be predicted. */
static mb_err sb_var_next(mb_predict *p, uint8_t kind, const uint8_t *add, size_t add_len, uint8_t **out,
                          size_t *out_size, sb_var *ret, const char **ret_why) {
        size_t added;

        *ret_why = sb_var_find(p, kind, ret);
        if (*ret_why || !add)
                goto digest;
        if (*out_size < ret->old_len || *out_size - ret->old_len < add_len)
                return MB_ERR_NOSPACE;
        if (mb_siglist_append(ret->var.data, ret->var.data_size, add, add_len, *out, *out_size, &ret->len, &added) !=
            MB_OK) {
                *ret_why = "the baseline's db or dbx is not a sequence of EFI_SIGNATURE_LISTs";
                return MB_OK;
        }
        ret->val = *out;
        *out += ret->len;
        *out_size -= ret->len;
digest:
        if (!*ret_why)
                var_event_digests(p, &ret->var, ret->val, ret->len, ret->digest);
        return MB_OK;
}

/* Is the EFI_SIGNATURE_DATA sd (owner + data, n bytes) an entry of a list
 * in buf[from..len)? ret_type: that list's type. */
static bool sb_holds(const uint8_t *buf, size_t len, size_t from, const uint8_t *sd, size_t n, mb_guid *ret_type) {
        mb_siglist l;

        while (mb_siglist_next(buf, len, &from, &l) == MB_OK)
                for (uint32_t i = 0; l.sig_size == n && i < l.n_sigs; i++)
                        if (mb_memcmp(l.sigs + (size_t) i * l.sig_size, sd, n) == 0) {
                                if (ret_type)
                                        *ret_type = l.type;
                                return true;
                        }
        return false;
}

/* The entry (EFI_SIGNATURE_DATA) of a list of the given type in
 * buf[from..len) whose data after the owner is d[0..n), or NULL. */
static const uint8_t *sb_holds_data(const uint8_t *buf, size_t len, size_t from, const mb_guid *type,
                                    const uint8_t *d, size_t n) {
        mb_siglist l;

        while (mb_siglist_next(buf, len, &from, &l) == MB_OK)
                for (uint32_t i = 0; mb_guid_eq(&l.type, type) && l.sig_size == 16 + n && i < l.n_sigs; i++)
                        if (mb_memcmp(l.sigs + (size_t) i * l.sig_size + 16, d, n) == 0)
                                return l.sigs + (size_t) i * l.sig_size;
        return NULL;
}

/* The bank of the log that holds alg, or -1. */
static int bank_of(const mb_predict *p, uint16_t alg) {
        for (uint32_t b = 0; b < p->pcrs.n_banks; b++)
                if (p->pcrs.banks[b].alg == alg && bank_ok(p, b))
                        return (int) b;
        return -1;
}

/* An image the next boot keeps from the baseline (its logged digests),
 * against the hash entries dbx gains: UEFI 2.10 32.5.3.3, an image whose
 * hash is in dbx is not started (EDK2 compares the Authenticode digest). */
static void sb_check_kept_image(const mb_predict *p, const mb_predict_item *it, const sb_var *dbx, sb_verdict *v) {
        size_t off = dbx->old_len;
        mb_siglist l;
        uint16_t alg;

        while (mb_siglist_next(dbx->val, dbx->len, &off, &l) == MB_OK) {
                int b;
                if (!mb_siglist_hash_type(&l.type, &alg) || !l.n_sigs)
                        continue;
                b = bank_of(p, alg);
                if (b < 0 || !it->digest[b]) {
                        sb_unknown(v, "dbx gains a hash of a type whose bank the baseline log lacks: whether it "
                                      "revokes an image of the boot cannot be checked");
                        continue;
                }
                if (sb_holds_data(dbx->val, dbx->len, dbx->old_len, &l.type, it->digest[b], l.sig_size - 16))
                        sb_refuse(v, "the firmware would refuse an image this boot starts (mshim, the kernel or a "
                                     "driver): its Authenticode digest is in dbx after the update; there is no "
                                     "boot to predict");
        }
}

/* The baseline's images the next boot starts again: PCR 4's applications
 * (but mshim with --loader and the kernel with --kernel), drivers. */
static void sb_check_kept(const mb_predict *p, const mb_predict_input *in, const sb_var *dbx, sb_verdict *v) {
        const mb_predict_seq *s = &p->seq4;
        bool kept = p->drivers.n > 0;
        mb_siglist l;
        size_t off = dbx->old_len;

        if (p->drivers.overflow || s->overflow)
                sb_unknown(v, "more image events than the predictor attributes: dbx cannot be checked against all");
        for (uint32_t i = 0; i < p->drivers.n; i++)
                sb_check_kept_image(p, &p->drivers.items[i], dbx, v);
        for (uint32_t i = 0; i < s->n; i++) {
                uint8_t k = s->items[i].kind;
                if ((k == K_MSHIM_IMAGE && in->loader) || (k == K_IMAGE && in->kernel) ||
                    (k != K_APP_EARLY && k != K_MSHIM_IMAGE && k != K_IMAGE))
                        continue;
                kept = true;
                sb_check_kept_image(p, &s->items[i], dbx, v);
        }
        /* A certificate dbx gains revokes every image whose signature
         * chains to it (EDK2 IsForbiddenByDbx); the log has no image's
         * signature, so only the authorities' own certificates are
         * checked (sb_check_authorities), the rest cannot be. */
        while (kept && mb_siglist_next(dbx->val, dbx->len, &off, &l) == MB_OK)
                if (l.n_sigs && !mb_siglist_hash_type(&l.type, NULL))
                        sb_unknown(v, "dbx gains a certificate (or an entry of a type other than a SHA hash): it may "
                                      "revoke a certificate in the signing chain of an image this boot keeps, which the "
                                      "log cannot tell; give the images (--loader, --kernel) to check them");
}

/* The baseline's authority events: each names an entry of db (the firmware's
 * EV_EFI_VARIABLE_AUTHORITY, docs/MEASUREMENTS.md); it stays while that entry
 * is in db, no certificate dbx gains is its certificate, and db gains no
 * certificate that could verify an image a hash entry verified. */
static void sb_check_authorities(const mb_predict *p, const sb_var *db, const sb_var *dbx, sb_verdict *v) {
        for (uint32_t i = 0; i < p->seq7.n; i++) {
                const mb_predict_item *it = &p->seq7.items[i];
                mb_uefi_variable a;
                mb_guid type;

                if (it->kind != K7_AUTH)
                        continue;
                /* Behind shim, shim's own (MokListRT, SbatLevel): checked
                 * by shim_touched and sb_check_new_shim. */
                if (p->shim.n_moklist && mb_evdata_variable(it->data, it->data_size, &a) == MB_OK &&
                    (var_named(&a, &MB_GUID_SHIM_LOCK, "MokListRT") || var_named(&a, &MB_GUID_SHIM_LOCK, "SbatLevel")))
                        continue;
                if (!data_measured(p, it) || mb_evdata_variable(it->data, it->data_size, &a) != MB_OK ||
                    !var_named(&a, &MB_GUID_IMAGE_SECURITY_DB, "db") || a.trailing) {
                        sb_unknown(v, "PCR 7 holds an authority event that does not name a db entry (shim's?)");
                        continue;
                }
                if (!sb_holds(db->val, db->len, 0, a.data, a.data_size, &type)) {
                        sb_unknown(v, "an authority event names an entry that is not in db");
                        continue;
                }
                if (!mb_guid_eq(&type, &MB_GUID_CERT_X509)) {
                        if (db->len != db->old_len)
                                sb_unknown(v, "an image was verified by its hash in db and db gains entries: a "
                                              "certificate among them would verify it first (EDK2 checks "
                                              "certificates before hashes)");
                        continue;
                }
                if (a.data_size > 16 &&
                    sb_holds_data(dbx->val, dbx->len, dbx->old_len, &MB_GUID_CERT_X509, a.data + 16, a.data_size - 16))
                        sb_refuse(v, "the firmware would refuse this boot's images: the db certificate that verified "
                                     "them (an EV_EFI_VARIABLE_AUTHORITY event) is in dbx after the update; there is "
                                     "no boot to predict");
        }
}

static const char *const NEW_REVOKED[2] = {
        "the firmware would refuse the new loader: dbx revokes it (its Authenticode digest, or a certificate its "
        "signature chains to); there is no boot to predict",
        "the firmware would refuse the new kernel: dbx revokes it (its Authenticode digest, or a certificate its "
        "signature chains to); there is no boot to predict",
};
static const char *const NEW_UNVERIFIED[2] = {
        "the firmware would refuse the new loader: no db entry verifies it (no db certificate verifies a "
        "signature, its SHA-256 Authenticode digest is not in db); there is no boot to predict",
        "the firmware would refuse the new kernel: no db entry verifies it (no db certificate verifies a "
        "signature, its SHA-256 Authenticode digest is not in db); there is no boot to predict",
};

/* The first X.509 entry of the lists in buf[0..len) whose certificate
 * verifies the signature c of the image (in->sb_verify), or NULL. */
static const uint8_t *sb_cert_verifies(const mb_predict_input *in, const void *img, size_t size,
                                       const mb_pe_cert *c, const uint8_t *buf, size_t len, size_t *ret_len) {
        size_t off = 0;
        mb_siglist l;

        while (mb_siglist_next(buf, len, &off, &l) == MB_OK)
                for (uint32_t i = 0; mb_guid_eq(&l.type, &MB_GUID_CERT_X509) && l.sig_size > 16 && i < l.n_sigs; i++) {
                        const uint8_t *sd = l.sigs + (size_t) i * l.sig_size;
                        if (in->sb_verify(in->sb_ctx, img, size, c->data, c->size, sd + 16, l.sig_size - 16) == 1) {
                                *ret_len = l.sig_size;
                                return sd;
                        }
                }
        return NULL;
}

/* Its Authenticode digests against every hash dbx holds (the firmware
 * compares the one of its signature's algorithm: all are checked). */
static void sb_new_hashes(const mb_pe *pe, int which, const sb_var *dbx, sb_verdict *v) {
        uint8_t d[MB_HASH_MAX];
        size_t off = 0;
        mb_siglist l;
        uint16_t alg;

        while (mb_siglist_next(dbx->val, dbx->len, &off, &l) == MB_OK) {
                if (!l.n_sigs)
                        continue;
                if (!mb_siglist_hash_type(&l.type, &alg)) {
                        if (!mb_guid_eq(&l.type, &MB_GUID_CERT_X509))
                                sb_unknown(v, "dbx holds entries of a type the predictor does not check a new image "
                                              "against (EFI_CERT_X509_SHA256 and others)");
                        continue;
                }
                if (mb_pe_authenticode_parsed(pe, alg, d) == MB_OK &&
                    sb_holds_data(dbx->val, dbx->len, 0, &l.type, d, mb_hash_size(alg)))
                        sb_refuse(v, NEW_REVOKED[which]);
        }
}

/* A new image as the firmware checks it (EDK2 DxeImageVerificationHandler,
 * UEFI 2.10 32.5.3.3): revoked when its hash is in dbx; then, signature by
 * signature in table order, revoked when a dbx certificate verifies it,
 * else the first db certificate that verifies the first signature db
 * allows is the db entry it logs; unverified by a certificate, the db
 * entry holding its SHA-256 digest is. *ret_auth: that entry. */
static void sb_check_new_image(const mb_predict_input *in, int which, const void *img, size_t size, const sb_var *db,
                               const sb_var *dbx, sb_verdict *v, const uint8_t **ret_auth, size_t *ret_len) {
        uint8_t d[32];
        const uint8_t *table = NULL;
        size_t tsize, off = 0;
        mb_pe_cert c;
        mb_pe pe;
        mb_err r;

        if (mb_pe_parse(img, size, &pe) != MB_OK)
                return;         /* compute_fresh refused it already */
        sb_new_hashes(&pe, which, dbx, v);
        if (!in->sb_verify) {
                sb_unknown(v, "Secure Boot: which db entry verifies a new loader or kernel needs its signatures "
                              "checked, which this caller cannot do");
                return;
        }
        if (mb_pe_cert_table(&pe, &table, &tsize) != MB_OK)
                tsize = 0;      /* unsigned: only its hash can be in db */
        while ((r = mb_pe_cert_next(table, tsize, &off, &c)) == MB_OK) {
                size_t n;
                const uint8_t *e;
                if (c.type != MB_PE_WIN_CERT_TYPE_PKCS_SIGNED)
                        continue;
                if (sb_cert_verifies(in, img, size, &c, dbx->val, dbx->len, &n))
                        sb_refuse(v, NEW_REVOKED[which]);
                if (!*ret_auth && (e = sb_cert_verifies(in, img, size, &c, db->val, db->len, &n))) {
                        *ret_auth = e;
                        *ret_len = n;
                }
        }
        if (r != MB_END)
                sb_unknown(v, "Secure Boot: a new image's certificate table is malformed: whether the firmware "
                              "starts it is not predicted");
        if (!*ret_auth && mb_pe_authenticode_parsed(&pe, MB_ALG_SHA256, d) == MB_OK &&
            (*ret_auth = sb_holds_data(db->val, db->len, 0, &MB_GUID_CERT_SHA256, d, sizeof(d))))
                *ret_len = 16 + sizeof(d);
        if (!*ret_auth)
                sb_refuse(v, NEW_UNVERIFIED[which]);
}

/* The authority shim logs for an image: the owner and certificate of an
 * EFI_SIGNATURE_DATA (PFP 10.4.4). */
typedef struct first_auth {
        const uint8_t *owner, *cert;    /* owner: 16 bytes; NULL cert: none */
        size_t cert_len;
} first_auth;

static const char *const SHIM_REFUSES[2] = {
        "shim would refuse mshim: neither its built-in certificate nor a certificate of the MokList given "
        "verifies it: there is no boot to predict",
        "shim would refuse the kernel: neither its built-in certificate nor a certificate of the MokList given "
        "verifies it: there is no boot to predict",
};

/* A MokList SHA-256 entry equal to d (shim checks hashes first). */
static bool mok_lists_hash(const mb_predict_input *in, const uint8_t d[32]) {
        size_t off = 0;
        mb_siglist sl;

        while (mb_siglist_next(in->mok_list, in->mok_list_size, &off, &sl) == MB_OK)
                for (uint32_t i = 0; mb_guid_eq(&sl.type, &MB_GUID_CERT_SHA256) && i < sl.n_sigs; i++)
                        if (sl.sig_size != 48 || mb_memcmp(sl.sigs + (size_t) i * sl.sig_size + 16, d, 32) == 0)
                                return true;
        return false;
}

/* Behind shim: the MokListRT entry shim logs for an image (verify.c:
 * MokListRT is its built-in certificate, then MokList's entries, tried in
 * order, the first that verifies a signature logged); db verifying it
 * (shim would log db's entry) or a SHA-256 entry for it is not predicted. */
static void first_auth_shim_one(const mb_predict_input *in, const fresh *f, int w, const void *img, size_t size,
                                const sb_var *db, first_auth *a, sb_verdict *v) {
        const uint8_t *table = NULL, *e;
        size_t tsize, off = 0, n;
        uint8_t d[32];
        mb_pe_cert c;
        mb_pe pe;

        if (mb_pe_parse(img, size, &pe) != MB_OK || mb_pe_authenticode_parsed(&pe, MB_ALG_SHA256, d) != MB_OK)
                return;         /* compute_fresh refused it already */
        if (mok_lists_hash(in, d) || sb_holds_data(db->val, db->len, 0, &MB_GUID_CERT_SHA256, d, sizeof(d))) {
                sb_unknown(v, "db or the MokList lists the SHA-256 of mshim or the kernel: shim would log that entry "
                              "(not predicted)");
                return;
        }
        if (mb_pe_cert_table(&pe, &table, &tsize) != MB_OK)
                tsize = 0;
        while (mb_pe_cert_next(table, tsize, &off, &c) == MB_OK) {
                if (c.type != MB_PE_WIN_CERT_TYPE_PKCS_SIGNED)
                        continue;
                if (sb_cert_verifies(in, img, size, &c, db->val, db->len, &n)) {
                        sb_unknown(v, "a db certificate verifies mshim or the kernel: shim would log db's entry "
                                      "(not predicted)");
                        return;
                }
                if (f->vendor && in->sb_verify(in->sb_ctx, img, size, c.data, c.size, f->vendor, f->vendor_len) == 1) {
                        *a = (first_auth) { MB_GUID_SHIM_LOCK.b, f->vendor, f->vendor_len };
                        return;
                }
                if ((e = sb_cert_verifies(in, img, size, &c, in->mok_list, in->mok_list_size, &n)) && n >= 16) {
                        *a = (first_auth) { e, e + 16, n - 16 };
                        return;
                }
        }
        sb_refuse(v, SHIM_REFUSES[w]);
}

/* An authority event's data (owner + certificate) is a's. */
static bool auth_is(const first_auth *a, const uint8_t *data, size_t n) {
        return a->cert && n == 16 + a->cert_len && mb_memcmp(data, a->owner, 16) == 0 &&
               mb_memcmp(data + 16, a->cert, a->cert_len) == 0;
}

/* A new image behind shim: dbx revokes it (its hash or a certificate that
 * verifies it: shim checks dbx first, verify.c check_denylist), else the
 * authority shim logs for it (first_auth_shim_one). */
static void sb_shim_new_image(const mb_predict_input *in, const fresh *f, int w, const void *img, size_t size,
                              const sb_var *db, const sb_var *dbx, first_auth *a, sb_verdict *v) {
        const uint8_t *table = NULL;
        size_t tsize, off = 0, n;
        mb_pe_cert c;
        mb_pe pe;

        if (mb_pe_parse(img, size, &pe) != MB_OK)
                return;         /* compute_fresh refused it already */
        sb_new_hashes(&pe, w, dbx, v);
        if (mb_pe_cert_table(&pe, &table, &tsize) != MB_OK)
                tsize = 0;
        while (mb_pe_cert_next(table, tsize, &off, &c) == MB_OK)
                if (c.type == MB_PE_WIN_CERT_TYPE_PKCS_SIGNED && sb_cert_verifies(in, img, size, &c, dbx->val, dbx->len, &n))
                        sb_refuse(v, NEW_REVOKED[w]);
        if (!v->refused)
                first_auth_shim_one(in, f, w, img, size, db, a, v);
}

/* Behind shim, shim verifies mshim and the kernel mshim loads, and logs
 * the authority of each (MokListRT: its built-in certificate or a MokList
 * entry), every distinct one once (tpm.c), right before the image's PCR 4
 * event. PCR 7 stays when the authorities of the next boot's images, in
 * that order and deduplicated, are the baseline's events: a new image's
 * computed here, a kept image's the one the baseline logged for it. A
 * Debian kernel update keeps it (the same vendor certificate), so does an
 * mshim update signed with the same MOK. */
static void sb_check_new_shim(const mb_predict *p, const mb_predict_input *in, const fresh *f, const sb_var *db,
                              const sb_var *dbx, sb_verdict *v) {
        const void *img[2] = { in->loader, in->kernel };
        const size_t size[2] = { in->loader_size, in->kernel_size };
        const int32_t stage[2] = { app_index(p, K_MSHIM_IMAGE), app_index(p, K_IMAGE) };
        first_auth next[2] = { { 0 } };
        uint32_t base[2] = { 0 }, n_base[2] = { 0 };

        if (!in->sb_verify || !in->mok_list_given || f->moklist_why || p->shim.auth_overflow) {
                sb_unknown(v, f->moklist_why ? f->moklist_why :
                              "Secure Boot behind shim: a new loader or kernel is verified by shim, whose authority "
                              "event needs the next boot's MokList (--mok) and the image's signatures checked");
                return;
        }
        for (uint32_t i = 0; i < p->shim.n_auth; i++)
                for (int w = 0; w < 2; w++)
                        if ((int32_t) p->shim.auth_apps[i] == stage[w] && n_base[w]++ == 0)
                                base[w] = i;
        if (stage[0] < 0 || stage[1] < 0 || n_base[0] != 1 || n_base[1] > 1 || n_base[0] + n_base[1] != p->shim.n_auth) {
                sb_unknown(v, "Secure Boot behind shim: the baseline's MokListRT authority events are not one for "
                              "mshim and at most one for the kernel: which image each belongs to is not known");
                return;
        }
        for (int w = 0; w < 2; w++) {
                if (img[w])
                        sb_shim_new_image(in, f, w, img[w], size[w], db, dbx, &next[w], v);
                else if (n_base[w])
                        next[w] = (first_auth) { p->shim.auth[base[w]], p->shim.auth[base[w]] + 16,
                                                 p->shim.auth_size[base[w]] - 16 };
                if (v->refused || v->unpredictable)
                        return;
        }
        /* A kept kernel whose authority was mshim's (not logged again) is
         * verified by that entry again only while mshim's is the same. */
        if (!n_base[1] && !img[1])
                next[1] = auth_is(&next[0], p->shim.auth[base[0]], p->shim.auth_size[base[0]]) ? next[0] :
                          (first_auth) { 0 };
        if (!auth_is(&next[0], p->shim.auth[base[0]], p->shim.auth_size[base[0]]) || !next[1].cert ||
            (n_base[1] ? !auth_is(&next[1], p->shim.auth[base[1]], p->shim.auth_size[base[1]]) :
                         !auth_is(&next[1], p->shim.auth[base[0]], p->shim.auth_size[base[0]])))
                sb_unknown(v, "Secure Boot behind shim: shim would verify a new image by another entry than the "
                              "baseline's (another MOK or certificate signs it): its PCR 7 authority events are "
                              "not predicted");
}

/* A new loader or kernel keeps PCR 7's authority events only when the db
 * entry that verifies it is the baseline's one authority (the firmware
 * logs each entry once, before the image it verified): with several, which
 * image each belongs to is not in the log. */
static void sb_check_new(const mb_predict *p, const mb_predict_input *in, const fresh *f, const sb_var *db,
                         const sb_var *dbx, sb_verdict *v) {
        const void *img[2] = { in->loader, in->kernel };
        const size_t size[2] = { in->loader_size, in->kernel_size };
        const mb_predict_item *base = NULL;
        mb_uefi_variable a = { 0 };
        uint32_t n_auth = 0;

        if (p->shim.n_moklist) {
                if (in->loader || in->kernel)
                        sb_check_new_shim(p, in, f, db, dbx, v);
                return;
        }
        for (uint32_t i = 0; i < p->seq7.n; i++)
                if (p->seq7.items[i].kind == K7_AUTH) {
                        base = &p->seq7.items[i];
                        n_auth++;
                }
        /* sb_check_authorities checked that every authority parses. */
        if (n_auth != 1 || mb_evdata_variable(base->data, base->data_size, &a) != MB_OK)
                a.data = NULL;
        for (int w = 0; w < 2; w++) {
                const uint8_t *auth = NULL;
                size_t n = 0;
                if (!img[w])
                        continue;
                sb_check_new_image(in, w, img[w], size[w], db, dbx, v, &auth, &n);
                if (auth && (!a.data || a.data_size != n || mb_memcmp(a.data, auth, n) != 0))
                        sb_unknown(v, "Secure Boot: a new image is verified by another db entry than the baseline's "
                                      "one authority event (or the baseline has several): the next boot's authority "
                                      "events are not predicted");
        }
}

/* No boot happens: every PCR the boot would extend is unpredictable. */
static void refuse(mb_predict *p, const char *why) {
        uint32_t set = NEXT_STAGE_PCRS;

        for (uint32_t b = 0; b < p->baseline.n_banks; b++)
                set |= p->baseline.banks[b].extended;
        p->refused = why;
        for (uint32_t i = 0; i < MB_PCR_COUNT; i++)
                if (set & (1u << i)) {
                        p->unpredictable |= 1u << i;
                        p->reason[i] = why;
                }
}

/* PCR 7 of the next boot: the baseline's events in place, db's and dbx's
 * with their new data; the authority events stay when the rules above
 * say so. */
static mb_err rebuild7(mb_predict *p, const mb_predict_input *in, const fresh *f) {
        uint8_t *out = in->scratch;
        size_t room = in->scratch_size;
        const char *why = p->seq7.overflow ? "more events in this PCR than the predictor attributes" : NULL;
        sb_verdict v = { 0 };
        sb_var db, dbx;
        mb_err r = MB_OK;

        if (!why)
                r = sb_var_next(p, K7_DB, f->db_add, f->db_add_len, &out, &room, &db, &why);
        if (r == MB_OK && !why)
                r = sb_var_next(p, K7_DBX, f->dbx_add, f->dbx_add_len, &out, &room, &dbx, &why);
        if (r != MB_OK) {
                p->err_what = MB_PREDICT_SCRATCH;
                return r;
        }
        if (why) {
                unpredictable(p, 7, why);
                return MB_OK;
        }
        /* Secure Boot enforced: the firmware checks every image. */
        if (p->secure_boot_on || p->authorities) {
                if (dbx.len != dbx.old_len)
                        sb_check_kept(p, in, &dbx, &v);
                sb_check_authorities(p, &db, &dbx, &v);
                sb_check_new(p, in, f, &db, &dbx, &v);
        }
        if (v.refused)
                refuse(p, v.refused);
        else if (v.unpredictable)
                unpredictable(p, 7, v.unpredictable);
        if (v.refused || v.unpredictable)
                return MB_OK;
        pcr_reset(p, 7);
        for (uint32_t i = 0; i < p->seq7.n; i++) {
                const mb_predict_item *it = &p->seq7.items[i];
                if (it == db.ev)
                        pcr_extend_set(p, 7, db.digest);
                else if (it == dbx.ev)
                        pcr_extend_set(p, 7, dbx.digest);
                else
                        pcr_extend(p, 7, it->digest);
        }
        return MB_OK;
}

/* The update files: signature lists, or an authenticated payload's. */
static mb_err sb_payload(mb_predict *p, const void *buf, size_t size, mb_predict_what what, const uint8_t **ret,
                         size_t *ret_len) {
        size_t off;
        mb_err r;

        if (!buf)
                return MB_OK;
        r = mb_siglist_payload(buf, size, &off, &p->err_why);
        if (r != MB_OK) {
                p->err_what = what;
                return r;
        }
        *ret = (const uint8_t *) buf + off;
        *ret_len = size - off;
        return MB_OK;
}

/* Scratch for the new db and dbx, one after the other: each at most its
 * baseline value (inside the log) plus its update. */
static mb_err sb_scratch_need(const mb_predict_input *in, size_t *need) {
        const size_t add[2] = { in->db_append_size, in->dbx_append_size };
        const bool given[2] = { in->db_append != NULL, in->dbx_append != NULL };
        size_t n = 0;

        for (int i = 0; i < 2; i++) {
                if (!given[i])
                        continue;
                if (in->log_size > SIZE_MAX - n || add[i] > SIZE_MAX - n - in->log_size)
                        return MB_ERR_OVERFLOW;
                n += in->log_size + add[i];
        }
        if (n > *need)
                *need = n;
        return MB_OK;
}

/* ---- behind shim: a new shim, a new MokList --------------------------------- */

#define SHIM_PCRS ((1u << 4) | (1u << 7) | (1u << 14))

static const mb_predict_item *shim_image(const mb_predict *p) {
        for (uint32_t i = 0; i < p->seq4.n; i++)
                if (p->seq4.items[i].kind == K_SHIM_IMAGE)
                        return &p->seq4.items[i];
        return NULL;
}

/* The DER length of a certificate: one SEQUENCE with a two- or
 * three-byte length (X.690 8.1.3.5), or 0. */
static size_t der_cert_size(const uint8_t *d, size_t n) {
        if (n >= 4 && d[0] == 0x30 && d[1] == 0x82)
                return 4 + ((size_t) d[2] << 8 | d[3]);
        if (n >= 5 && d[0] == 0x30 && d[1] == 0x83)
                return 5 + ((size_t) d[2] << 16 | (size_t) d[3] << 8 | d[4]);
        return 0;
}

/* shim's built-in certificate: its ".vendor_cert" section (cert.S
 * cert_table: u32 authorized size, deauthorized size, their offsets from
 * the table). NULL: found (f->vendor NULL when the build has none), else
 * why the rules cannot say what shim measures. */
static const char *shim_vendor(const mb_predict_input *in, fresh *f) {
        const uint8_t *vc, *a;
        size_t vc_size;
        uint32_t a_size, a_off;
        mb_pe pe;

        if (mb_pe_parse(in->shim, in->shim_size, &pe) != MB_OK ||
            mb_pe_find_section(&pe, ".vendor_cert", &vc, &vc_size) != MB_OK || vc_size < 16)
                return "shim has no .vendor_cert section: what it measures with MokList is not known";
        a_size = mb_le32(vc);
        a_off = mb_le32(vc + 8);
        if (mb_out_of_bounds(vc_size, a_off, a_size))
                return "shim's .vendor_cert table points outside its section";
        if (a_size == 0)
                return NULL;
        a = vc + a_off;
        /* A vendor_db build (an EFI_SIGNATURE_LIST array) is mirrored
         * as it is; only the one-certificate build is covered. */
        if (der_cert_size(a, a_size) != a_size)
                return "shim's built-in trust is not one DER certificate (a vendor_db build?): how it measures "
                       "MokList is not predicted";
        f->vendor = a;
        f->vendor_len = a_size;
        return NULL;
}

/* The next MokList event's digest (mok.c mirror_one_mok_variable, which
 * hashes what it mirrors to MokListRT): an EFI_SIGNATURE_LIST of shim's
 * built-in certificate (type X.509, no header, owner shim's GUID), then
 * MokList's data; nothing at all: one SHA-256 list of 32 zero bytes. Not
 * seen in the files: a build certificate (ENABLE_SHIM_CERT) or unbundled
 * trust files, which Debian's shim does not use (docs/predict.md). */
static void moklist_digest(const mb_predict *p, const mb_predict_input *in, fresh *f) {
        static const uint8_t zero[32];
        uint8_t hdr[44];
        mb_predict_chunk c[3];
        size_t n = 0, sig = f->vendor ? f->vendor_len : sizeof(zero);
        const mb_guid *type = f->vendor ? &MB_GUID_CERT_X509 : &MB_GUID_CERT_SHA256;

        mb_memcpy(hdr, type->b, 16);
        mb_put_le32(hdr + 16, (uint32_t) (28 + 16 + sig));
        mb_put_le32(hdr + 20, 0);
        mb_put_le32(hdr + 24, (uint32_t) (16 + sig));
        mb_memcpy(hdr + 28, MB_GUID_SHIM_LOCK.b, 16);
        if (f->vendor || in->mok_list_size == 0) {
                c[n++] = (mb_predict_chunk) { hdr, sizeof(hdr) };
                c[n++] = (mb_predict_chunk) { f->vendor ? f->vendor : zero, sig };
        }
        if (in->mok_list_size)
                c[n++] = (mb_predict_chunk) { in->mok_list, in->mok_list_size };
        hash_chunks(p, c, n, f->moklist);
}

static mb_err shim_fresh(mb_predict *p, const mb_predict_input *in, fresh *f) {
        const mb_predict_item *base = shim_image(p);
        size_t off = 0;
        mb_siglist sl;
        mb_err r;

        if (in->shim) {
                r = image_digests(p, in->shim, in->shim_size, f->shim);
                if (r != MB_OK) {
                        p->err_what = MB_PREDICT_SHIM;
                        return r;
                }
                for (uint32_t b = 0; b < p->pcrs.n_banks; b++)
                        if (!base || (bank_ok(p, b) && base->digest[b] &&
                                      mb_memcmp(base->digest[b], f->shim[b], p->pcrs.banks[b].size) != 0))
                                f->shim_new = true;
        }
        if (!in->mok_list_given)
                return MB_OK;
        while ((r = mb_siglist_next(in->mok_list, in->mok_list_size, &off, &sl)) == MB_OK)
                ;
        if (r != MB_END) {
                p->err_what = MB_PREDICT_MOK;
                return r;
        }
        if (!in->shim)
                f->moklist_why = "shim measures MokList together with the certificate built into it: give the shim";
        else if (!(f->moklist_why = shim_vendor(in, f)))
                moklist_digest(p, in, f);
        return MB_OK;
}

/* verify.c check_allowlist looks an image's SHA-256 up in MokListRT
 * before its certificates: a hash entry for an image this boot starts
 * would be the authority logged instead. */
static const char *mok_hash_problem(const mb_predict *p, const mb_predict_input *in) {
        size_t off = 0;
        mb_siglist sl;
        int32_t b256 = -1;

        for (uint32_t b = 0; b < p->baseline.n_banks; b++)
                if (p->baseline.banks[b].alg == MB_ALG_SHA256)
                        b256 = (int32_t) b;
        while (mb_siglist_next(in->mok_list, in->mok_list_size, &off, &sl) == MB_OK) {
                if (!mb_guid_eq(&sl.type, &MB_GUID_CERT_SHA256) || sl.n_sigs == 0)
                        continue;
                if (b256 < 0 || sl.sig_size != 16 + 32)
                        return "the new MokList holds SHA-256 entries and the baseline has no sha256 bank to "
                               "compare them with the images shim verifies";
                for (uint32_t i = 0; i < sl.n_sigs; i++)
                        for (uint32_t j = 0; j < p->seq4.n; j++) {
                                const mb_predict_item *it = &p->seq4.items[j];
                                if ((it->kind == K_MSHIM_IMAGE || it->kind == K_IMAGE) && it->digest[b256] &&
                                    mb_memcmp(it->digest[b256], sl.sigs + (size_t) i * sl.sig_size + 16, 32) == 0)
                                        return "the new MokList lists the SHA-256 of an image this boot starts: "
                                               "shim would log that entry as its authority (not predicted)";
                        }
        }
        return NULL;
}

/* Where the EFI_SIGNATURE_DATA `want` is among the new MokList's X.509
 * entries: 1 first of them, 2 after others, 0 not there. */
static int mok_cert_place(const mb_predict_input *in, const uint8_t *want, size_t want_size) {
        size_t off = 0;
        mb_siglist sl;
        bool before = false;

        while (mb_siglist_next(in->mok_list, in->mok_list_size, &off, &sl) == MB_OK) {
                if (!mb_guid_eq(&sl.type, &MB_GUID_CERT_X509))
                        continue;
                for (uint32_t i = 0; i < sl.n_sigs; i++) {
                        if (sl.sig_size == want_size && mb_memcmp(sl.sigs + (size_t) i * sl.sig_size, want, want_size) == 0)
                                return before ? 2 : 1;
                        before = true;
                }
        }
        return 0;
}

/* PCR 7 stays when every image a MokList certificate verified in the
 * baseline is verified by the same entry: shim tries MokListRT's
 * certificates in order (its built-in one first, then MokList's) and logs
 * the first that verifies (verify.c), each distinct entry once (tpm.c).
 * *ret_refused: that certificate is gone, shim would refuse the image. */
static const char *mok_authority_problem(const mb_predict *p, const mb_predict_input *in, const fresh *f,
                                         bool *ret_refused) {
        int32_t mshim = app_index(p, K_MSHIM_IMAGE);
        const char *why = mok_hash_problem(p, in);

        if (why)
                return why;
        if (p->shim.auth_overflow)
                return "more MokListRT authority events than the predictor attributes";
        for (uint32_t i = 0; i < p->shim.n_auth; i++) {
                const uint8_t *a = p->shim.auth[i];
                size_t n = p->shim.auth_size[i];
                int place;

                /* shim's built-in certificate comes before MokList's. */
                if (f->vendor && n == 16 + f->vendor_len && mb_memcmp(a, MB_GUID_SHIM_LOCK.b, 16) == 0 &&
                    mb_memcmp(a + 16, f->vendor, f->vendor_len) == 0)
                        continue;
                place = mok_cert_place(in, a, n);
                *ret_refused = place == 0;
                if (place == 0)
                        return (int32_t) p->shim.auth_apps[i] == mshim ?
                               "the MOK that verified mshim in the baseline boot is not in the new MokList: shim "
                               "would refuse mshim (unless another entry verifies it): that boot does not happen" :
                               "a MOK that verified an image mshim loaded in the baseline boot is not in the new "
                               "MokList: shim would refuse it (unless another entry verifies it): that boot does "
                               "not happen";
                if (place == 2)
                        return "the new MokList lists another certificate before the one that verified an image in "
                               "the baseline boot: shim logs the first that verifies it, which is not predicted";
        }
        return NULL;
}

/* What --shim and --mok touch; what makes it unpredictable. */
static void shim_touched(mb_predict *p, const mb_predict_input *in, const fresh *f) {
        bool refused = false;
        const char *why;

        if (!in->shim && !in->mok_list_given)
                return;
        if (!p->shim.n_moklist || !shim_image(p)) {
                p->touched |= SHIM_PCRS;
                for (uint32_t i = 0; i < MB_PCR_COUNT; i++)
                        if (SHIM_PCRS & (1u << i))
                                unpredictable(p, i, "the baseline boot did not run shim before mshim (no PCR 14 "
                                                    "MokList event or no PCR 4 event for shim)");
                return;
        }
        if (p->shim.seq14.overflow) {
                p->touched |= 1u << 14;
                unpredictable(p, 14, "more events in this PCR than the predictor attributes");
        }
        if (f->shim_new) {
                p->touched |= SHIM_PCRS;
                unpredictable(p, 7, "a new shim: the db entry that verifies it (the firmware's authority event) "
                                    "and the SbatLevel it applies are not predicted");
                unpredictable(p, 14, "a new shim: it measures MokList and MokListX together with its built-in "
                                     "certificate and dbx, and MokListX's data is not in the log");
        }
        if (!in->mok_list_given)
                return;
        p->touched |= (1u << 7) | (1u << 14);
        why = mok_authority_problem(p, in, f, &refused);
        /* A refused image: none of what mshim and its kernel measure
         * happens as in the baseline. */
        p->touched |= refused ? NEXT_STAGE_PCRS : 0;
        for (uint32_t i = 0; why && i < MB_PCR_COUNT; i++)
                if ((refused ? NEXT_STAGE_PCRS : 1u << 7) & (1u << i))
                        unpredictable(p, i, why);
        if (f->moklist_why)
                unpredictable(p, 14, f->moklist_why);
}

/* PCR 14 in the baseline's order, the MokList event's digest recomputed. */
static void rebuild14(mb_predict *p, fresh *f) {
        const mb_predict_seq *s = &p->shim.seq14;

        pcr_reset(p, 14);
        for (uint32_t i = 0; i < s->n; i++) {
                if (s->items[i].kind == K_MOKLIST)
                        pcr_extend_set(p, 14, f->moklist);
                else
                        pcr_extend(p, 14, s->items[i].digest);
        }
}

/* ---- inputs ------------------------------------------------------------------ */

static mb_err options_utf16_size(size_t len, size_t *ret) {
        /* One UTF-16 unit per UTF-8 byte at most (a 4-byte sequence gives
         * a surrogate pair: 4 bytes), plus the NUL. */
        if (len > SIZE_MAX / 2 - 1)
                return MB_ERR_OVERFLOW;
        *ret = (len + 1) * 2;
        return MB_OK;
}

/* Raise *need to what file's PCR 5 digest input takes. */
static mb_err file_need(const mb_predict_file *file, size_t *need) {
        size_t n;
        mb_err r;

        if (!file)
                return MB_OK;
        r = mb_pcr5_input_size(file->path_bytes, file->size, &n);
        if (r == MB_OK && n > *need)
                *need = n;
        return r;
}

mb_err mb_predict_scratch_size(const mb_predict_input *in, size_t *ret_size) {
        size_t need = 0;
        mb_err r = MB_OK;

        if (in->options) {
                r = options_utf16_size(in->options_len, &need);
                if (r != MB_OK)
                        return r;
        }
        r = file_need(in->loader_conf, &need);
        if (r == MB_OK)
                r = file_need(in->entry, &need);
        for (size_t i = 0; r == MB_OK && in->bad_entries_given && i < in->n_bad_entries; i++)
                r = file_need(&in->bad_entries[i], &need);
        if (r == MB_OK)
                r = sb_scratch_need(in, &need);
        if (r == MB_OK)
                *ret_size = need;
        return r;
}

/* The TOTP initrd event of the given initrds (mb_totp_initrd_event: their
 * size and SHA-256, concatenated as mshim serves them), per bank. */
static void totp_initrd_digests(const mb_predict *p, const mb_predict_input *in, digest_set out) {
        uint8_t sha256[MB_TOTP_INITRD_SHA256_SIZE], event[MB_TOTP_INITRD_EVENT_SIZE];
        uint64_t size = 0;
        mb_hash h;

        mb_hash_init(&h, MB_ALG_SHA256);
        for (size_t i = 0; i < in->n_initrd; i++) {
                mb_hash_update(&h, in->initrd[i].data, in->initrd[i].size);
                size += in->initrd[i].size;     /* files in memory: no overflow */
        }
        mb_hash_final(&h, sha256);
        mb_totp_initrd_event(size, sha256, event);
        hash_buf(p, event, sizeof(event), out);
}

/* Does the baseline's first item of this kind carry these digests, in
 * every bank it has? */
static bool baseline_item_is(const mb_predict *p, const mb_predict_seq *s, uint8_t kind, digest_set d) {
        for (uint32_t i = 0; i < s->n; i++) {
                if (s->items[i].kind != kind)
                        continue;
                for (uint32_t b = 0; b < p->pcrs.n_banks; b++)
                        if (bank_ok(p, b) && s->items[i].digest[b] &&
                            mb_memcmp(s->items[i].digest[b], d[b], p->pcrs.banks[b].size) != 0)
                                return false;
                return true;
        }
        return false;
}

/* Whether the given loader.conf and loader are the baseline's: then the
 * TOTP floor or mode the baseline ran with is theirs (next_totp_mode). */
static mb_err as_baseline(mb_predict *p, const mb_predict_input *in, fresh *f) {
        digest_set d;
        size_t n;
        mb_err r;

        if (in->loader)
                f->loader_as_baseline = baseline_item_is(p, &p->seq4, K_MSHIM_IMAGE, f->loader);
        if (in->kernel)
                f->kernel_as_baseline = baseline_item_is(p, &p->seq4, K_IMAGE, f->kernel);
        if (!in->loader_conf)
                return MB_OK;
        r = mb_pcr5_input_build(in->loader_conf->tag, in->loader_conf->path_utf16, in->loader_conf->path_bytes,
                                in->loader_conf->data, in->loader_conf->size, in->scratch, in->scratch_size, &n);
        if (r != MB_OK) {
                p->err_what = MB_PREDICT_SCRATCH;
                return r;
        }
        hash_buf(p, in->scratch, n, d);
        f->conf_as_baseline = baseline_item_is(p, &p->seq5, K_CONF, d);
        return MB_OK;
}

/* The new loader's built-in boot policy (efi/policy.c reads the same
 * section): its TOTP floor. A loader without the section predates the
 * policy and has no floor; one whose policy does not parse boots nothing. */
static void loader_floor(const mb_predict_input *in, fresh *f) {
        const uint8_t *sec = NULL;
        mb_boot_policy bp;
        size_t size = 0;
        mb_pe pe;

        if (!in->loader)
                return;
        f->floor_known = true;
        f->floor = MB_TOTP_NO;
        if (mb_pe_parse(in->loader, in->loader_size, &pe) != MB_OK ||
            mb_pe_find_section(&pe, MB_BOOT_POLICY_SECTION, &sec, &size) != MB_OK || size != MB_BOOT_POLICY_SIZE)
                return;
        if (mb_boot_policy_parse(sec, size, &bp) != MB_OK)
                f->loader_refuses = "the new loader's built-in boot policy does not parse: it boots nothing";
        else
                f->floor = bp.totp;
}

/* Everything that is hashed once, whatever PCRs use it. */
static mb_err compute_fresh(mb_predict *p, const mb_predict_input *in, fresh *f) {
        unsigned major, minor;
        size_t n, bytes;
        mb_err r;

        if (in->loader && (r = image_digests(p, in->loader, in->loader_size, f->loader)) != MB_OK) {
                p->err_what = MB_PREDICT_LOADER;
                return r;
        }
        /* GRUB hashes the kernel file as it is (PCR 9); a PE only for mshim. */
        if (in->kernel && !grub_baseline(p)) {
                r = image_digests(p, in->kernel, in->kernel_size, f->kernel);
                if (r != MB_OK) {
                        p->err_what = MB_PREDICT_KERNEL;
                        return r;
                }
                f->kernel_known = mb_linux_kernel_version(in->kernel, in->kernel_size, &major, &minor) == MB_OK;
                f->stub_initrd = mb_linux_stub_measures_initrd(in->kernel, in->kernel_size);
                f->stub_options = mb_linux_stub_measures_load_options(in->kernel, in->kernel_size);
        }
        if (in->initrd_given) {
                hash_chunks(p, in->initrd, in->n_initrd, f->initrd);
                totp_initrd_digests(p, in, f->totp_initrd);
        }
        loader_floor(in, f);
        if (in->options) {
                /* The bytes mshim measures and passes as LoadOptions:
                 * UTF-16LE with the NUL (docs/MEASUREMENTS.md, event 5). */
                r = options_utf16_size(in->options_len, &n);
                if (r == MB_OK && in->scratch_size < n)
                        r = MB_ERR_NOSPACE;
                if (r != MB_OK) {
                        p->err_what = MB_PREDICT_SCRATCH;
                        return r;
                }
                r = mb_utf8_to_utf16le(in->options, in->options_len, in->scratch, in->scratch_size, &bytes);
                if (r != MB_OK) {
                        p->err_what = MB_PREDICT_OPTIONS;
                        return r;
                }
                hash_buf(p, in->scratch, bytes, f->options);
        }
        return as_baseline(p, in, f);
}

/* ---- the first boot: a baseline that did not run mshim ----------------------
 *
 * A shim + GRUB (or GRUB) boot, predicted as the first boot through mshim
 * (docs/predict.md "The first boot"). The cut is the first boot
 * application: what the firmware logged before it started one is the
 * firmware's (PC Client PFP 3.3.4: the pre-OS events and the separators,
 * and the GPT measured with the first image), and stays; behind shim, shim
 * (the same image) stays with the events it makes before it verifies its
 * next stage. Everything the old chain logged after that (GRUB, its
 * kernel, their authorities) is dropped, and mshim's events and the
 * kernel's are computed from the files, with the rebuilders of an mshim
 * baseline: the sequences get mshim's events as placeholders, each
 * replaced because rebuild_first requires every input. */

#define FIRST_PCRS ((1u << 4) | (1u << 5) | (1u << 7) | (1u << 8) | (1u << 9) | (1u << 12) | \
                    (1u << MB_TOTP_LOCK_PCR) | (1u << 14))

/* PCR 7 events the first boot does not make again (the old chain's). */
#define K7_DROP 0xff

static void seq_keep_early(mb_predict_seq *s) {
        uint32_t n = 0;

        for (uint32_t i = 0; i < s->n; i++)
                if (s->items[i].apps_before == 0)
                        s->items[n++] = s->items[i];
        s->n = n;
}

/* One of mshim's events, to be replaced: no digests (never extended). */
static void seq_insert(mb_predict_seq *s, uint32_t at, uint8_t kind) {
        if (s->n == MB_PREDICT_MAX_EVENTS || at > s->n) {
                s->overflow = true;
                return;
        }
        for (uint32_t i = s->n; i > at; i--)
                s->items[i] = s->items[i - 1];
        mb_memset(&s->items[at], 0, sizeof(s->items[at]));
        s->items[at].kind = kind;
        s->n++;
}

/* PCR 4: the firmware's events before the first application, shim's
 * image behind shim, then mshim's and the kernel's. Another event after
 * the first application (the firmware's return from a boot option, ...)
 * is not attributed. */
static void first_rebase4(mb_predict *p, bool shim) {
        mb_predict_seq *s = &p->seq4;
        uint32_t n = 0;
        bool sep = false;

        for (uint32_t i = 0; i < s->n; i++) {
                mb_predict_item it = s->items[i];
                bool app = it.type == MB_EV_EFI_BOOT_SERVICES_APPLICATION;

                if (!app || !sep)
                        it.kind = it.apps_before == 0 ? K_FIRMWARE : K_OTHER;
                else if (it.apps_before == 0 && shim)
                        it.kind = K_SHIM_IMAGE;
                else
                        continue;       /* the old chain's images, shim's too without shim */
                sep |= it.type == MB_EV_SEPARATOR;
                s->items[n++] = it;
        }
        s->n = n;
        if (p->boot_apps == 0)
                return;                 /* baseline_path_problem: no application at all */
        seq_insert(s, s->n, K_MSHIM_IMAGE);
        seq_insert(s, s->n, K_IMAGE);
        p->images_before_mshim = 1;
}

/* PCR 5: the firmware's events before the first application (separator,
 * GPT), mshim's, then the firmware's after (ExitBootServices). */
static void first_rebase5(mb_predict *p) {
        mb_predict_seq *s = &p->seq5;
        uint32_t at = 0;

        while (at < s->n && s->items[at].apps_before == 0)
                at++;
        seq_insert(s, at, K_ENTRY);
        seq_insert(s, at, K_CONF);
}

static void first_rebase(mb_predict *p, const mb_predict_input *in) {
        mb_predict_shim *sh = &p->shim;

        p->first_boot = true;
        first_rebase4(p, in->shim != NULL);
        first_rebase5(p);
        seq_keep_early(&p->seq8);
        seq_keep_early(&p->seq9);
        seq_keep_early(&p->seq12);
        seq_insert(&p->seq12, p->seq12.n, K_CMDLINE);
        /* mshim runs; what the old chain logged in 8, 13 (and 14 without
         * shim) is gone; the firmware's own events there are not attributed. */
        p->mshim_seen = true;
        p->n_events[8] = p->early[8];
        p->n_events[MB_TOTP_LOCK_PCR] = p->early[MB_TOTP_LOCK_PCR];
        p->other13 = p->early[MB_TOTP_LOCK_PCR] > 0;
        if (in->shim) {
                /* shim's own events come before it starts its next stage. */
                for (uint32_t i = 0; i < sh->seq14.n; i++)
                        sh->unknown14 |= sh->seq14.items[i].apps_before > 1;
        } else {
                seq_keep_early(&sh->seq14);
                sh->n_moklist = 0;
                sh->unknown14 = p->early[14] > 0;
                p->n_events[14] = p->early[14];
        }
        /* The baseline's MokListRT authorities were GRUB's and its kernel's. */
        sh->n_auth = 0;
        sh->auth_overflow = false;
}

/* Every input the first boot's events are computed from, or why not. */
static const char *first_missing(const mb_predict_input *in) {
        if (!in->loader || !in->kernel || !in->initrd_given || !in->options || !in->loader_conf ||
            !in->bad_entries_given || !in->entry)
                return "the baseline boot did not run mshim: the first boot through mshim is computed from all of "
                       "its files, and some are not given (mshimx64.efi, loader.conf, the unusable entries, the "
                       "entry, its kernel, initrds and options: --loader and --esp)";
        if (grub_inputs(in) || in->next_stage_unsupported)
                return "the first boot through mshim is predicted for a Linux entry only";
        if (in->db_append || in->dbx_append)
                return "a db or dbx update with the first boot through mshim is not predicted";
        return NULL;
}

/* An authority event (PFP 10.4.4 UEFI_VARIABLE_DATA: GUID, name length,
 * data length, the UTF-16 name, the data = EFI_SIGNATURE_DATA: owner and
 * certificate); its digest in every bank. */
static void auth_digests(const mb_predict *p, const mb_guid *guid, const char *name, const first_auth *a,
                         digest_set out) {
        uint8_t hdr[32], name16[32];
        size_t units = mb_strnlen(name, 16), len = 16 + a->cert_len;
        mb_predict_chunk c[4] = { { hdr, sizeof(hdr) }, { name16, 2 * units }, { a->owner, 16 },
                                  { a->cert, a->cert_len } };

        mb_memcpy(hdr, guid->b, 16);
        mb_put_le32(hdr + 16, (uint32_t) units);
        mb_put_le32(hdr + 20, 0);
        mb_put_le32(hdr + 24, (uint32_t) len);
        mb_put_le32(hdr + 28, (uint32_t) ((uint64_t) len >> 32));
        for (size_t i = 0; i < units; i++) {
                name16[2 * i] = (uint8_t) name[i];
                name16[2 * i + 1] = 0;
        }
        hash_chunks(p, c, 4, out);
}

static bool auth_same(const first_auth *a, const first_auth *b) {
        return a->cert && b->cert && a->cert_len == b->cert_len && mb_memcmp(a->owner, b->owner, 16) == 0 &&
               mb_memcmp(a->cert, b->cert, a->cert_len) == 0;
}

/* shim's own SbatLevel (sbat.c): an authority event of shim's GUID that
 * records its SBAT policy, not a verification. */
static bool is_sbat_level(const mb_predict_item *it) {
        mb_uefi_variable v;

        return mb_evdata_variable(it->data, it->data_size, &v) == MB_OK &&
               var_named(&v, &MB_GUID_SHIM_LOCK, "SbatLevel");
}

/* Which PCR 7 events stay (the rest get K7_DROP), and how many images were
 * verified: by the firmware after its separator and before the first
 * application (*ret_fw), by shim after it (*ret_shim). Without shim: the
 * firmware's events up to its separator stay; its authority for the first
 * application and all after it go. Behind shim: the firmware's (its
 * authority for shim included) and shim's own (SbatLevel, ...) before its
 * first verification stay; its verifications (MokListRT, db, vendor_db
 * authorities) go. NULL, or why none of this can be attributed. */
static const char *first_keep7(mb_predict *p, bool shim, uint32_t *ret_fw, uint32_t *ret_shim) {
        bool sep = false;

        *ret_fw = *ret_shim = 0;
        for (uint32_t i = 0; i < p->seq7.n; i++) {
                mb_predict_item *it = &p->seq7.items[i];
                bool auth = it->type == MB_EV_EFI_VARIABLE_AUTHORITY;

                if (it->apps_before == 0 && sep && auth) {
                        if (++*ret_fw > 1)
                                return "PCR 7 holds several authority events before the first boot application: "
                                       "not attributed";
                        if (!shim)
                                it->kind = K7_DROP;
                } else if (it->apps_before == 0 && sep) {
                        return "PCR 7 holds an event between its separator and the first boot application that is "
                               "not that application's authority: not attributed";
                } else if (it->apps_before > 0 && (!shim || (auth && !is_sbat_level(it)))) {
                        it->kind = K7_DROP;
                        *ret_shim += shim;
                } else if (it->apps_before > 0 && *ret_shim) {
                        return "PCR 7 holds an event after shim verified its next stage that is not an authority "
                               "event: not attributed";
                }
                sep |= it->type == MB_EV_SEPARATOR && it->apps_before == 0;
        }
        if (!sep)
                return "PCR 7 has no separator before the first boot application";
        /* Whoever verified in the baseline verifies on the next boot. */
        if ((*ret_fw == 1) != p->secure_boot_on)
                return "the firmware's authority events before the first boot application do not match its "
                       "SecureBoot variable: who verifies the first boot is not known";
        if (shim && (*ret_shim > 0) != p->secure_boot_on)
                return "shim's verification events in the baseline boot do not match the SecureBoot variable "
                       "(MokSBState?): whether shim verifies mshim is not known";
        return NULL;
}

/* The firmware verifies mshim and the kernel mshim loads (sb_check_new_image). */
static void first_auth_firmware(mb_predict *p, const mb_predict_input *in, first_auth a[2], sb_verdict *v) {
        const void *img[2] = { in->loader, in->kernel };
        const size_t size[2] = { in->loader_size, in->kernel_size };
        const char *why;
        sb_var db, dbx;

        if ((why = sb_var_find(p, K7_DB, &db)) || (why = sb_var_find(p, K7_DBX, &dbx))) {
                sb_unknown(v, why);
                return;
        }
        for (int w = 0; w < 2; w++) {
                const uint8_t *e = NULL;
                size_t n = 0;

                sb_check_new_image(in, w, img[w], size[w], &db, &dbx, v, &e, &n);
                if (e && n >= 16)
                        a[w] = (first_auth) { e, e + 16, n - 16 };
        }
}

static void first_auth_shim(mb_predict *p, const mb_predict_input *in, const fresh *f, first_auth a[2],
                            sb_verdict *v) {
        const char *why;
        sb_var db;

        if (!in->sb_verify)
                sb_unknown(v, "Secure Boot: which entry verifies mshim and the kernel needs their signatures checked, "
                              "which this caller cannot do");
        else if (!in->mok_list_given)
                sb_unknown(v, "behind shim, the MokList entry that verifies mshim is logged in PCR 7: give the "
                              "MokList of the next boot (--mok)");
        else if (f->moklist_why)
                sb_unknown(v, f->moklist_why);
        else if ((why = sb_var_find(p, K7_DB, &db)))
                sb_unknown(v, why);
        if (v->unpredictable)
                return;
        first_auth_shim_one(in, f, 0, in->loader, in->loader_size, &db, &a[0], v);
        first_auth_shim_one(in, f, 1, in->kernel, in->kernel_size, &db, &a[1], v);
}

/* PCR 7: the events kept, then the authority of mshim and, when another
 * entry verifies it, the kernel's (each distinct entry is logged once). */
static void rebuild7_first(mb_predict *p, const mb_predict_input *in, const fresh *f) {
        static const char mok_rt[] = "MokListRT";
        first_auth a[2] = { { 0 } };
        sb_verdict v = { 0 };
        uint32_t fw, sh;
        const char *why = first_keep7(p, in->shim != NULL, &fw, &sh);
        digest_set d;

        if (!why && p->secure_boot_on) {
                if (in->shim)
                        first_auth_shim(p, in, f, a, &v);
                else
                        first_auth_firmware(p, in, a, &v);
                why = v.unpredictable;
        }
        if (v.refused) {
                refuse(p, v.refused);
                return;
        }
        if (why) {
                unpredictable(p, 7, why);
                return;
        }
        pcr_reset(p, 7);
        for (uint32_t i = 0; i < p->seq7.n; i++)
                if (p->seq7.items[i].kind != K7_DROP)
                        pcr_extend(p, 7, p->seq7.items[i].digest);
        for (int w = 0; w < 2; w++) {
                if (!a[w].cert || (w == 1 && auth_same(&a[0], &a[1])))
                        continue;
                if (in->shim)
                        auth_digests(p, &MB_GUID_SHIM_LOCK, mok_rt, &a[w], d);
                else
                        auth_digests(p, &MB_GUID_IMAGE_SECURITY_DB, "db", &a[w], d);
                pcr_extend_set(p, 7, d);
        }
}

/* The first boot: every PCR the chain after the firmware extends, rebuilt
 * (PCR 14 behind shim only for a new MokList: shim stays). PCR 1 holds the
 * boot variables, which the boot entry for mshim changes. */
static mb_err rebuild_first(mb_predict *p, const mb_predict_input *in, fresh *f) {
        uint32_t set = FIRST_PCRS & ~(in->shim && !in->mok_list_given ? 1u << 14 : 0u);
        const char *why = first_missing(in);
        mb_err r = MB_OK;

        if (!why)
                why = baseline_path_problem(p);
        p->touched |= set | (1u << 1);
        unpredictable(p, 1, "the first boot through mshim starts from another boot entry (mshim install adds "
                            "one): the boot variables the firmware measures into PCR 1 are not known here");
        for (uint32_t i = 0; i < MB_PCR_COUNT; i++) {
                const mb_predict_seq *s = i == 4 ? &p->seq4 : i == 5 ? &p->seq5 : i == 9 ? &p->seq9 :
                                          i == 12 ? &p->seq12 : i == 7 ? &p->seq7 : NULL;
                if (!(set & (1u << i)))
                        continue;
                if (why)
                        unpredictable(p, i, why);
                if (s && s->overflow)
                        unpredictable(p, i, "more events in this PCR than the predictor attributes");
        }
        if (!(p->unpredictable & (1u << 7)))
                rebuild7_first(p, in, f);
        if (!(p->unpredictable & (1u << 4)))
                rebuild4(p, in, f);
        if (!(p->unpredictable & (1u << 5)))
                r = rebuild5(p, in);
        if (!(p->unpredictable & (1u << 9)))
                rebuild9(p, in, f);
        if (!(p->unpredictable & (1u << 12)))
                rebuild12(p, in, f);
        if (!(p->unpredictable & (1u << MB_TOTP_LOCK_PCR)))
                rebuild13(p, in, f);
        if (!(p->unpredictable & (1u << 8)))
                pcr_reset(p, 8);        /* neither mshim nor the kernel's stub measures into PCR 8 */
        if ((set & (1u << 14)) && !(p->unpredictable & (1u << 14))) {
                if (in->shim)
                        rebuild14(p, f);
                else
                        pcr_reset(p, 14);
        }
        return r;
}

static bool pcr_differs(const mb_predict *p, uint32_t pcr) {
        for (uint32_t b = 0; b < p->pcrs.n_banks; b++) {
                const mb_pcr_bank *x = &p->pcrs.banks[b], *y = &p->baseline.banks[b];
                if (((x->extended ^ y->extended) & (1u << pcr)) ||
                    (x->computable && mb_memcmp(x->pcr[pcr], y->pcr[pcr], x->size) != 0))
                        return true;
        }
        return false;
}

static mb_err rebuild(mb_predict *p, const mb_predict_input *in, fresh *f) {
        const char *why = baseline_path_problem(p);
        mb_err r = MB_OK;

        /* As the loader (efi/policy.c, efi/totp.c): no boot at all. */
        if (f->loader_refuses) {
                refuse(p, f->loader_refuses);
                return MB_OK;
        }
        if (f->totp.require && (in->next_stage_unsupported || grub_baseline(p))) {
                refuse(p, "totp require: mshim starts no EFI program (an efi entry, the chainload path): no TOTP "
                          "code can vouch for what it loads");
                return MB_OK;
        }
        if (p->first_boot)
                return rebuild_first(p, in, f);
        if (grub_baseline(p)) {
                /* The chainload path makes no code: it has no TOTP point. */
                if (in->totp_point)
                        unpredictable(p, 12, "the chainload path shows no TOTP code: it has no TOTP point");
                rebuild_grub(p, in, f);
                return MB_OK;
        }
        for (uint32_t i = 0; i < MB_PCR_COUNT; i++) {
                const mb_predict_seq *s = i == 4 ? &p->seq4 : i == 5 ? &p->seq5 : i == 9 ? &p->seq9 :
                                          i == 12 ? &p->seq12 : NULL;
                if (!(p->touched & (1u << i)))
                        continue;
                if (why)
                        unpredictable(p, i, why);
                if (s && s->overflow)
                        unpredictable(p, i, "more events in this PCR than the predictor attributes");
        }
        if (sb_changes(p, in, f) && !(p->unpredictable & (1u << 7)) && (r = rebuild7(p, in, f)) != MB_OK)
                return r;
        if ((p->touched & (1u << 4)) && !(p->unpredictable & (1u << 4)))
                rebuild4(p, in, f);
        if ((p->touched & (1u << 5)) && !(p->unpredictable & (1u << 5)))
                r = rebuild5(p, in);
        if ((p->touched & (1u << 9)) && !(p->unpredictable & (1u << 9)))
                rebuild9(p, in, f);
        if ((p->touched & (1u << 12)) && !(p->unpredictable & (1u << 12)))
                rebuild12(p, in, f);
        if ((p->touched & (1u << MB_TOTP_LOCK_PCR)) && !(p->unpredictable & (1u << MB_TOTP_LOCK_PCR)))
                rebuild13(p, in, f);
        if ((p->touched & (1u << 14)) && !(p->unpredictable & (1u << 14)))
                rebuild14(p, f);
        return r;
}

mb_err mb_predict_run(const mb_predict_input *in, mb_predict *ret) {
        fresh f;
        mb_err r;

        mb_memset(ret, 0, sizeof(*ret));
        mb_memset(&f, 0, sizeof(f));
        r = scan(ret, in);
        if (r != MB_OK) {
                ret->err_what = MB_PREDICT_LOG;
                return r;
        }
        if (in->first_boot && !ret->mshim_seen)
                first_rebase(ret, in);
        r = compute_fresh(ret, in, &f);
        f.totp = next_totp_mode(ret, in, &f);
        if (r == MB_OK)
                r = sb_payload(ret, in->db_append, in->db_append_size, MB_PREDICT_DB_APPEND, &f.db_add, &f.db_add_len);
        if (r == MB_OK)
                r = sb_payload(ret, in->dbx_append, in->dbx_append_size, MB_PREDICT_DBX_APPEND, &f.dbx_add,
                               &f.dbx_add_len);
        if (r == MB_OK)
                r = shim_fresh(ret, in, &f);
        if (r == MB_OK)
                r = compute_fresh_grub(ret, in, &f);
        if (r != MB_OK)
                return r;
        find_touched(ret, in, &f);
        shim_touched(ret, in, &f);
        r = rebuild(ret, in, &f);
        if (r != MB_OK)
                return r;
        for (uint32_t i = 0; i < MB_PCR_COUNT; i++)
                if (!(ret->unpredictable & (1u << i)) && pcr_differs(ret, i))
                        ret->changed |= 1u << i;
        return MB_OK;
}
