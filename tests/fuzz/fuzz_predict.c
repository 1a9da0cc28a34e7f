/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * libFuzzer target: the prediction engine (src/predict.c) on an untrusted
 * baseline log, with every kind of change it can apply without a PE image
 * (loader.conf, an unusable entry, the entry, the initrd in two parts, the
 * options), then GRUB's (the same bytes as grub.cfg, a kernel and the
 * initrd: GRUB's commands read back from the log and the grub.cfg lexer
 * both see untrusted text), then a db and a dbx append (its PCR 7 rules
 * read the log's variable and authority events), then with none. The engine must never read outside the log or
 * its inputs, and whatever it predicts must be consistent: a PCR is never
 * both changed and unpredictable, every unpredictable one has a reason.
 */
#include <stdlib.h>
#include <string.h>

#include "mb/predict.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const uint8_t CONF_PATH[] = { '\\', 0, 'l', 0, '.', 0, 'c', 0, 0, 0 };
static const char CONF[] = "default a\n", ENTRY[] = "linux /v\noptions q\n", INITRD[] = "initrd";

/* EFI_SIGNATURE_LISTs: one SHA-256 entry (dbx), one 20-byte "certificate"
 * (db): type, ListSize, HeaderSize, SignatureSize, owner, data. */
static const uint8_t DBX_ADD[28 + 48] = {
        0x26, 0x16, 0xc4, 0xc1, 0x4c, 0x50, 0x92, 0x40, 0xac, 0xa9, 0x41, 0xf9, 0x36, 0x93, 0x43, 0x28,
        28 + 48, 0, 0, 0, 0, 0, 0, 0, 48, 0, 0, 0,
};
static const uint8_t DB_ADD[28 + 36] = {
        0xa1, 0x59, 0xc0, 0xa5, 0xe4, 0x94, 0xa7, 0x4a, 0x87, 0xb5, 0xab, 0x15, 0x5c, 0x2b, 0xf0, 0x72,
        28 + 36, 0, 0, 0, 0, 0, 0, 0, 36, 0, 0, 0, [44] = 0x30,
};

static void check(const mb_predict *p) {
        if (p->changed & p->unpredictable)
                abort();
        for (uint32_t i = 0; i < MB_PCR_COUNT; i++)
                if ((p->unpredictable & (1u << i)) && !p->reason[i])
                        abort();
}

/* The Secure Boot updates, with the scratch the engine asks for. */
static void run_sb(const uint8_t *log, size_t size, mb_predict *p) {
        mb_predict_input in = { .log = log, .log_size = size, .db_append = DB_ADD, .db_append_size = sizeof(DB_ADD),
                                .dbx_append = DBX_ADD, .dbx_append_size = sizeof(DBX_ADD) };
        size_t n;

        if (mb_predict_scratch_size(&in, &n) != MB_OK || !(in.scratch = malloc(n ? n : 1)))
                return;
        in.scratch_size = n;
        if (mb_predict_run(&in, p) == MB_OK) {
                check(p);
                if ((p->refused != NULL) != ((p->unpredictable & (1u << 7)) && p->reason[7] == p->refused))
                        abort();        /* a refusal is reported on PCR 7 too */
        }
        free(in.scratch);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        uint8_t *buf = malloc(size ? size : 1);
        static mb_predict p;    /* ~60 KiB: off the fuzzer's stack */
        static uint8_t scratch[256];
        mb_predict_file conf = { MB_TAG_LOADER_CONF, CONF_PATH, sizeof(CONF_PATH), CONF, sizeof(CONF) - 1 };
        mb_predict_file entry = { MB_TAG_BLS_ENTRY, CONF_PATH, sizeof(CONF_PATH), ENTRY, sizeof(ENTRY) - 1 };
        mb_predict_file bad = { MB_TAG_FILE_UNREADABLE, CONF_PATH, sizeof(CONF_PATH), NULL, 0 };
        mb_predict_chunk initrd[2] = { { INITRD, 2 }, { INITRD + 2, sizeof(INITRD) - 3 } };
        mb_predict_input in = {
                .loader_conf = &conf, .entry = &entry, .bad_entries_given = true, .bad_entries = &bad,
                .n_bad_entries = 1, .initrd_given = true, .initrd = initrd, .n_initrd = 2,
                .options = "quiet", .options_len = 5, .scratch = scratch, .scratch_size = sizeof(scratch),
        };
        mb_predict_input none = { 0 };
        mb_predict_input grub = { .kernel = INITRD, .kernel_size = 3, .initrd_given = true, .initrd = initrd,
                                  .n_initrd = 1 };

        if (!buf)
                return 0;
        memcpy(buf, data, size);
        in.log = none.log = buf;
        in.log_size = none.log_size = size;
        grub.log = grub.grub_cfg = (const char *) buf;
        grub.log_size = grub.grub_cfg_size = size;
        if (mb_predict_run(&in, &p) == MB_OK)
                check(&p);
        if (mb_predict_run(&grub, &p) == MB_OK)
                check(&p);
        run_sb(buf, size, &p);
        if (mb_predict_run(&none, &p) == MB_OK) {
                check(&p);
                if (p.changed || p.unpredictable)
                        abort();        /* no change: the baseline, whole */
        }
        free(buf);
        return 0;
}
