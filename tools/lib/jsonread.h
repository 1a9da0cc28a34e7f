/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * A strict JSON reader (RFC 8259) for every JSON document the CLI reads:
 * one document into a tree, with the strictest rules any of its readers
 * needs, whoever wrote the document: nesting at most JR_MAX_DEPTH, strings
 * with escapes decoded (\u outside ASCII kept as '?', as no member mshim
 * reads is other than ASCII), duplicate member names refused in every
 * object, numbers in RFC 8259's grammar of at most 32 characters, nothing
 * after the document; and the caller's bounds (jr_limits) on strings,
 * values and numbers.
 */
#ifndef MB_JSONREAD_H
#define MB_JSONREAD_H

#include "cli.h"

#define JR_MAX_DEPTH 16
/* Values in one document of mshim's own schemas: evidence has a few
 * hundred, a prediction fewer; without a bound 64 MiB of "[0,0,..." would
 * be 32 million nodes. */
#define JR_MAX_NODES 4096

/* What one kind of document may hold. */
typedef struct jr_limits {
        size_t max_string;      /* bytes of one string's text */
        size_t max_nodes;       /* values in the document */
        uint64_t max_int;       /* a number's integer part */
} jr_limits;
/* mshim's own schemas (predictions, evidence): no number in them is 2^31
 * or more. */
#define JR_LIMITS(max_string) ((jr_limits) { (max_string), JR_MAX_NODES, 0x7fffffff })

typedef enum jr_type { JR_NULL, JR_BOOL, JR_NUMBER, JR_STRING, JR_ARRAY, JR_OBJECT } jr_type;

typedef struct jr_node jr_node;
struct jr_node {
        jr_type type;
        size_t off;             /* byte offset of the value, for messages */
        char *key;              /* a member's name, in an object */
        char *str;              /* string (decoded, NUL-terminated; len below) or number text */
        size_t len;
        bool b;
        jr_node *kids;          /* members or elements */
        size_t n_kids;
};

/* Parse one document within lim. NULL with *err (a constant) and
 * *err_off (byte offset) on failure. */
jr_node *jr_parse(const char *s, size_t n, const jr_limits *lim, const char **err, size_t *err_off);
void jr_free(jr_node *n);
/* The member key of object o, or NULL (also when o is not an object). */
const jr_node *jr_get(const jr_node *o, const char *key);
/* A JR_STRING's text, or NULL (also for NULL). */
const char *jr_str(const jr_node *v);
/* A non-negative integer below 2^32 without fraction or exponent: true
 * with *ret. */
bool jr_uint(const jr_node *v, uint32_t *ret);
/* Text of decimal digits only (no sign, space or point), at most max:
 * true with *ret. */
bool jr_decimal(const char *s, uint32_t max, uint32_t *ret);
/* A PCR index as docs/schema/ writes it in keys: "0" to "23", decimal,
 * no sign or leading zero. true with *ret. */
bool jr_pcr_index(const char *key, uint32_t *ret);
/* Hex of exactly size bytes (either case) into ret: true, or false. */
bool jr_hex(const jr_node *v, size_t size, uint8_t *ret);

#endif
