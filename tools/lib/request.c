/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The approval request (docs/SEALING.md "Signing elsewhere"): text, one
 * `key value` a line, the approval file's rules (src/sealfile.c):
 *
 *   mshim-approval-request 1
 *   kind disk|totp
 *   nv-name <the epoch counter's Name, hex>
 *   key-name <the policy key's Name, hex>
 *   ahash <what to sign: SHA-256(approvedPolicy || policyRef), hex>
 *   <the approval's lines but its first and its signature>
 *
 * The first five lines in this order; the rest is parsed by the approval
 * codec itself, so a request holds exactly what an approval holds.
 */
#include <stdlib.h>
#include <string.h>
#include "request.h"
#include "mb/base.h"

#define REQ_MAX ((size_t) 64 << 10)
#define REQ_HEAD "mshim-approval-request 1\n"
#define APPROVAL_HEAD "mshim-approval 1\n"
/* A well-formed DER ECDSA-Sig-Value (r = s = 1) in place of the signature
 * while the codec parses the request's approval lines, never kept. */
#define NO_SIGNATURE "signature 3006020101020101\n"

static void put_hex(char *p, const uint8_t *v, size_t n) {
        for (size_t i = 0; i < n; i++)
                sprintf(p + 2 * i, "%02x", v[i]);
}

char *request_format(const approval_request *q) {
        approval a = q->a;
        char *text, *out = NULL, *p;
        size_t n;

        /* The codec writes only a signed approval: a placeholder, dropped. */
        a.signature_size = 8;
        memcpy(a.signature, "\x30\x06\x02\x01\x01\x02\x01\x01", 8);
        text = approval_format(&a);
        n = text ? strlen(text) + 512 : 0;
        if (text && (out = malloc(n))) {
                p = out + sprintf(out, REQ_HEAD "kind %s\nnv-name ", q->kind == SEAL_TOTP ? "totp" : "disk");
                put_hex(p, q->nv_name.name, q->nv_name.size);
                p += strlen(p);
                p += sprintf(p, "\nkey-name ");
                put_hex(p, q->key_name.name, q->key_name.size);
                p += strlen(p);
                p += sprintf(p, "\nahash ");
                put_hex(p, q->ahash, MB_POLICY_SIZE);
                p += strlen(p);
                *p++ = '\n';
                /* The approval's lines after its first, but the signature. */
                for (char *l = strchr(text, '\n') + 1, *e; *l; l = e + 1) {
                        e = strchr(l, '\n');
                        if (strncmp(l, "signature ", 10)) {
                                memcpy(p, l, (size_t) (e - l) + 1);
                                p += e - l + 1;
                        }
                }
                *p = 0;
        } else if (text) {
                cli_error("out of memory");
        }
        free(text);
        return out;
}

/* Line "KEY HEX\n" at *p (end e) into v (at most max bytes, exactly
 * exact when not 0): 0, or -1. */
static int hex_line(const char **p, const char *e, const char *key, uint8_t *v, size_t max, size_t exact,
                    size_t *ret_n) {
        size_t k = strlen(key), n = 0;
        const char *s = *p;

        if ((size_t) (e - s) <= k || memcmp(s, key, k) || s[k] != ' ')
                return -1;
        for (s += k + 1; s + 1 < e && *s != '\n'; s += 2) {
                int hi = mb_hexval(s[0]), lo = mb_hexval(s[1]);
                if (hi < 0 || lo < 0 || (s[0] >= 'A' && s[0] <= 'F') || (s[1] >= 'A' && s[1] <= 'F') || n == max)
                        return -1;
                v[n++] = (uint8_t) (hi << 4 | lo);
        }
        if (s >= e || *s != '\n' || n == 0 || (exact && n != exact))
                return -1;
        *p = s + 1;
        *ret_n = n;
        return 0;
}

static int parse(const char *path, const uint8_t *data, size_t size, approval_request *q) {
        const char *p = (const char *) data, *e = p + size;
        size_t n, line = 2, err_line = 0, hl = strlen(REQ_HEAD);
        char *text;
        mb_err err;

        memset(q, 0, sizeof(*q));
        if (size < hl || memcmp(p, REQ_HEAD, hl)) {
                cli_error("%s: not an approval request (its first line must be 'mshim-approval-request 1')", path);
                return -1;
        }
        p += hl;
        if ((size_t) (e - p) >= 10 && !memcmp(p, "kind disk\n", 10))
                q->kind = SEAL_DISK;
        else if ((size_t) (e - p) >= 10 && !memcmp(p, "kind totp\n", 10))
                q->kind = SEAL_TOTP;
        else
                goto bad;
        p += 10;
        line++;
        if (hex_line(&p, e, "nv-name", q->nv_name.name, sizeof(q->nv_name.name), 0, &n) < 0)
                goto bad;
        q->nv_name.size = (UINT16) n;
        line++;
        if (hex_line(&p, e, "key-name", q->key_name.name, sizeof(q->key_name.name), 0, &n) < 0)
                goto bad;
        q->key_name.size = (UINT16) n;
        line++;
        if (hex_line(&p, e, "ahash", q->ahash, MB_POLICY_SIZE, MB_POLICY_SIZE, &n) < 0)
                goto bad;
        /* The rest is an approval but its first line and its signature. */
        n = (size_t) (e - p);
        text = malloc(n + strlen(APPROVAL_HEAD) + strlen(NO_SIGNATURE) + 1);
        if (!text) {
                cli_error("out of memory");
                return -1;
        }
        memcpy(text, APPROVAL_HEAD, strlen(APPROVAL_HEAD));
        memcpy(text + strlen(APPROVAL_HEAD), p, n);
        memcpy(text + strlen(APPROVAL_HEAD) + n, NO_SIGNATURE, strlen(NO_SIGNATURE) + 1);
        err = mb_approval_parse(text, strlen(text), &q->a, &err_line);
        free(text);
        if (err != MB_OK || q->a.bank != MB_ALG_SHA256) {
                /* The codec's line 2 is the request's line 6. */
                cli_error("%s:%zu: %s (damaged, or not a request mshim wrote)", path, err_line ? err_line + 4 : 6,
                          err != MB_OK ? mb_strerror(err) : "PCR bank not sha256");
                return -1;
        }
        q->a.signature_size = 0;
        memset(q->a.signature, 0, sizeof(q->a.signature));
        return 0;
bad:
        cli_error("%s:%zu: not the line an approval request has there (kind, nv-name, key-name, ahash, in that "
                  "order; lower-case hex)", path, line);
        return -1;
}

int request_load(const char *path, approval_request *ret, cli_file *ret_file) {
        approval_request *q = calloc(1, sizeof(*q));
        cli_file f;
        int r = -1;

        if (!q) {
                cli_error("out of memory");
                return -1;
        }
        if (cli_file_load_max(path, REQ_MAX, "an approval request", &f) == 0) {
                if (parse(path, f.data, f.size, q) == 0) {
                        *ret = *q;
                        r = 0;
                }
                if (r == 0 && ret_file)
                        *ret_file = f;
                else
                        cli_file_free(&f);
        }
        free(q);
        return r;
}

int request_check(const char *path, approval_request *q) {
        uint8_t policy[MB_POLICY_SIZE], ahash[MB_POLICY_SIZE];

        memcpy(policy, q->a.policy, MB_POLICY_SIZE);
        if (seal_ahash(&q->nv_name, q->kind, &q->a, ahash) < 0)
                return -1;
        if (memcmp(policy, q->a.policy, MB_POLICY_SIZE)) {
                cli_error("%s: its policy is not the digest of its own epoch, PCRs, values and counter Name "
                          "(changed after it was written): not signing it", path);
                return -1;
        }
        if (memcmp(ahash, q->ahash, MB_POLICY_SIZE)) {
                cli_error("%s: its ahash is not the %s aHash of its policy (changed after it was written): not "
                          "signing it", path, q->kind == SEAL_TOTP ? "TOTP" : "disk");
                return -1;
        }
        return 0;
}

char *request_pending_path(const char *state_dir, const approval *a) {
        char *dir = seal_path(state_dir, "requests"), *path = dir ? seal_approval_path(dir, a) : NULL;
        size_t n = path ? strlen(path) : 0;

        free(dir);
        /* NAME.approval -> NAME.request (the name ends in ".approval"). */
        if (path && n > 9 && !strcmp(path + n - 9, ".approval"))
                strcpy(path + n - 9, ".request");
        return path;
}
