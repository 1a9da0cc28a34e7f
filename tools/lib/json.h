/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * A small JSON reader (RFC 8259) for documents other programs write:
 * cryptsetup's LUKS2 metadata (tools/lib/luks2.c). The whole document
 * becomes a tree; depth and size are bounded.
 */
#ifndef MB_JSON_H
#define MB_JSON_H

#include <stdbool.h>
#include <stddef.h>

typedef enum json_type {
        JSON_NULL,
        JSON_BOOL,
        JSON_NUMBER,
        JSON_STRING,
        JSON_ARRAY,
        JSON_OBJECT,
} json_type;

typedef struct json_value {
        json_type type;
        bool b;                 /* JSON_BOOL */
        char *s;                /* JSON_STRING (decoded, NUL-terminated; a \u0000 refused) or JSON_NUMBER (its text) */
        struct json_value *v;   /* JSON_ARRAY, JSON_OBJECT: n values */
        char **keys;            /* JSON_OBJECT: their keys */
        size_t n;
} json_value;

/* Parse text (n bytes): 0 and *ret (json_free it), or -1 with a message
 * naming what and the byte offset. */
int json_parse(const char *text, size_t n, const char *what, json_value **ret);
void json_free(json_value *v);
/* An object's member (the first of that key), or NULL (also when v is not
 * an object). */
const json_value *json_get(const json_value *v, const char *key);
/* A JSON_STRING's text, or NULL. */
const char *json_str(const json_value *v);
/* A number or string holding a decimal integer 0..max, into *ret: 0, or -1. */
int json_uint(const json_value *v, unsigned long max, unsigned long *ret);

#endif
