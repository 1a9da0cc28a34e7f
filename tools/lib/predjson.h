/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * A reader for exactly one JSON document: `mshim predict --json` output,
 * schema mshim-predict/1 (docs/predict.md "Output"). Strict (RFC 8259
 * syntax, duplicate members refused, the known members' types checked) and
 * bounded (size, nesting, string length); members it does not know are
 * skipped, as the schema's readers must.
 */
#ifndef MB_PREDJSON_H
#define MB_PREDJSON_H

#include "cli.h"

#define PREDJSON_MAX_SIZE ((size_t) 1 << 20)

typedef struct pred_json {
        mb_pcr_values pcrs;     /* "pcrs": the listed values, every bank */
        uint32_t unpredictable; /* "unpredictable": bit i for PCR i */
        bool refused;           /* "refused" present */
} pred_json;

/* Parse path: 0, or -1 with a message naming the file and byte offset. */
int pred_json_load(const char *path, pred_json *ret);
/* The same over a buffer (name: for messages). */
int pred_json_parse(const char *name, const char *buf, size_t size, pred_json *ret);

/* The predicted sha256 value of each PCR in mask into values (32 bytes
 * each, ascending PCR order): listed, or zero (reset) for an unlisted PCR
 * 0-15. Refuses (message, -1) a refused boot, an unpredictable PCR, an
 * unlisted PCR above 15. */
int pred_json_values(const char *name, const pred_json *p, uint32_t mask, uint8_t *values);

#endif
