/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * `mshim predict --json` output read back, schema mshim-predict/1
 * (docs/predict.md "Output"), with the CLI's strict JSON reader
 * (tools/lib/jsonread.h): the known members' types checked, members it
 * does not know skipped, as the schema's readers must.
 */
#ifndef MB_PREDJSON_H
#define MB_PREDJSON_H

#include "cli.h"

#define PREDJSON_MAX_SIZE ((size_t) 1 << 20)

/* "point": which moment of the boot the values are of. */
typedef enum pred_point {
        PRED_POINT_NONE,        /* no "point": a file of an mshim before it */
        PRED_POINT_BOOT,        /* "boot": the end of the boot (the disk key's state) */
        PRED_POINT_TOTP,        /* "totp": when mshim makes the TOTP code (--totp-point) */
} pred_point;

typedef struct pred_json {
        mb_pcr_values pcrs;     /* "pcrs": the listed values, every bank */
        uint32_t unpredictable; /* "unpredictable": bit i for PCR i */
        bool refused;           /* "refused" present */
        pred_point point;
} pred_json;

/* Parse path: 0, or -1 with a message naming the file and byte offset. */
int pred_json_load(const char *path, pred_json *ret);
/* The same over a buffer (name: for messages). */
int pred_json_parse(const char *name, const char *buf, size_t size, pred_json *ret);

/* The predicted sha256 value of each PCR in mask into values (32 bytes
 * each, ascending PCR order), for a use that wants the point want.
 * Refuses (message, -1) a prediction of another point or of none, a
 * refused boot, an unpredictable PCR, and a PCR the prediction does not
 * list (never taken as zero: `mshim predict --select` lists every PCR it
 * is asked for). */
int pred_json_values(const char *name, const pred_json *p, pred_point want, uint32_t mask, uint8_t *values);

#endif
