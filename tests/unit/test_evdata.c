/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Event payload decoders and integrity rules (src/evdata.c) and the string
 * builder (src/strbuf.c): hand-built payloads of every decoded type, every
 * truncation of the structured ones, device-path text, and the whole
 * corpus of real logs (decode never breaks, check never says MISMATCH).
 */
#include <dirent.h>
#include <openssl/evp.h>
#include "testlib.h"
#include "mb/evdata.h"

/* ---- a recording emitter: compact JSON-ish text ------------------------- */

typedef struct rec {
        char out[1 << 16];
        size_t len;
        int depth, min_depth;
        int bad_utf8;
} rec;

static void rec_puts(rec *r, const char *s, size_t n) {
        for (size_t i = 0; i < n && r->len + 1 < sizeof r->out; i++)
                r->out[r->len++] = s[i];
        r->out[r->len] = '\0';
}

static void rec_key(rec *r, const char *key) {
        if (key) {
                rec_puts(r, "\"", 1);
                rec_puts(r, key, strlen(key));
                rec_puts(r, "\":", 2);
        }
}

/* Well-formed UTF-8 (RFC 3629) without overlong two-byte forms. */
static bool utf8_ok(const unsigned char *s, size_t n) {
        for (size_t i = 0; i < n;) {
                size_t k = s[i] < 0x80 ? 1 : (s[i] >> 5) == 6 && s[i] >= 0xc2 ? 2 : (s[i] >> 4) == 14 ? 3 :
                           (s[i] >> 3) == 30 && s[i] <= 0xf4 ? 4 : 0;
                if (k == 0 || n - i < k)
                        return false;
                for (size_t j = 1; j < k; j++)
                        if ((s[i + j] & 0xc0) != 0x80)
                                return false;
                i += k;
        }
        return true;
}

static void rec_open(mb_emit *e, const char *key, const char *c) {
        rec *r = e->ctx;
        rec_key(r, key);
        rec_puts(r, c, 1);
        r->depth++;
}

static void rec_close(mb_emit *e, const char *c) {
        rec *r = e->ctx;
        rec_puts(r, c, 1);
        rec_puts(r, ",", 1);
        if (--r->depth < r->min_depth)
                r->min_depth = r->depth;
}

static void rec_begin_obj(mb_emit *e, const char *key) { rec_open(e, key, "{"); }
static void rec_end_obj(mb_emit *e) { rec_close(e, "}"); }
static void rec_begin_arr(mb_emit *e, const char *key) { rec_open(e, key, "["); }
static void rec_end_arr(mb_emit *e) { rec_close(e, "]"); }

static void rec_str(mb_emit *e, const char *key, const char *s, size_t n) {
        rec *r = e->ctx;
        if (!utf8_ok((const unsigned char *) s, n))
                r->bad_utf8++;
        rec_key(r, key);
        rec_puts(r, "\"", 1);
        rec_puts(r, s, n);
        rec_puts(r, "\",", 2);
}

static void rec_u64(mb_emit *e, const char *key, uint64_t v) {
        char tmp[32];
        rec_key(e->ctx, key);
        snprintf(tmp, sizeof tmp, "%llu,", (unsigned long long) v);
        rec_puts(e->ctx, tmp, strlen(tmp));
}

static void rec_hex(mb_emit *e, const char *key, const uint8_t *p, size_t n) {
        char tmp[3];
        rec_key(e->ctx, key);
        rec_puts(e->ctx, "\"", 1);
        for (size_t i = 0; i < n; i++) {
                snprintf(tmp, sizeof tmp, "%02x", p[i]);
                rec_puts(e->ctx, tmp, 2);
        }
        rec_puts(e->ctx, "\",", 2);
}

static void rec_bool(mb_emit *e, const char *key, bool v) {
        rec_key(e->ctx, key);
        rec_puts(e->ctx, v ? "true," : "false,", v ? 5 : 6);
}

static const mb_emit_ops rec_ops = {
        rec_begin_obj, rec_end_obj, rec_begin_arr, rec_end_arr, rec_str, rec_u64, rec_hex, rec_bool,
};

static rec R;

/* Decode ev into R and check the structural promises every decode keeps:
 * balanced nesting and valid UTF-8 strings. */
static const char *decode(const mb_tcglog_event *ev) {
        mb_emit e = { &rec_ops, &R };
        R.len = 0;
        R.out[0] = '\0';
        R.depth = R.min_depth = R.bad_utf8 = 0;
        mb_evdata_decode(ev, &e);
        CHECK_EQ_INT(R.depth, 0);
        CHECK_EQ_INT(R.min_depth, 0);
        CHECK_EQ_INT(R.bad_utf8, 0);
        return R.out;
}

#define CHECK_HAS(s) do { if (!strstr(R.out, (s))) { \
        fprintf(stderr, "  %s:%d: output lacks %s\n    output: %s\n", __FILE__, __LINE__, (s), R.out); \
        tl_case_failed = 1; } } while (0)
#define CHECK_LACKS(s) do { if (strstr(R.out, (s))) { \
        fprintf(stderr, "  %s:%d: output has %s\n    output: %s\n", __FILE__, __LINE__, (s), R.out); \
        tl_case_failed = 1; } } while (0)

/* ---- payload builder ------------------------------------------------------ */

typedef struct bb {
        uint8_t b[8192];
        size_t n;
} bb;

static void put(bb *b, const void *p, size_t n) {
        if (n == 0)
                return;
        if (b->n + n > sizeof b->b)
                abort();
        memcpy(b->b + b->n, p, n);
        b->n += n;
}
static void put8(bb *b, uint8_t v) { put(b, &v, 1); }
static void put16(bb *b, uint16_t v) { uint8_t t[2]; mb_put_le16(t, v); put(b, t, 2); }
static void put32(bb *b, uint32_t v) { uint8_t t[4]; mb_put_le32(t, v); put(b, t, 4); }
static void put64(bb *b, uint64_t v) { put32(b, (uint32_t) v); put32(b, (uint32_t) (v >> 32)); }
static void putz(bb *b, size_t n) { while (n--) put8(b, 0); }
/* ASCII as UTF-16LE, without NUL. */
static void put_u16s(bb *b, const char *s) { while (*s) put16(b, (uint8_t) *s++); }

static void put_guid(bb *b, uint32_t a, uint16_t c, uint16_t d, uint64_t tail_be) {
        put32(b, a);
        put16(b, c);
        put16(b, d);
        for (int i = 7; i >= 0; i--)
                put8(b, (uint8_t) (tail_be >> (8 * i)));
}
#define GUID_GLOBAL(b)   put_guid(b, 0x8be4df61, 0x93ca, 0x11d2, 0xaa0d00e098032b8cull)
#define GUID_IMGSEC(b)   put_guid(b, 0xd719b2cb, 0x3d3a, 0x4596, 0xa3bcdad00e67656full)
#define GUID_X509(b)     put_guid(b, 0xa5c059a1, 0x94e4, 0x4aa7, 0x87b5ab155c2bf072ull)
#define GUID_SHA256(b)   put_guid(b, 0xc1c41626, 0x504c, 0x4092, 0xaca941f936934328ull)
#define GUID_OWNER(b)    put_guid(b, 0x77fa9abd, 0x0359, 0x4d32, 0xbd6028f4e78f784bull)
#define OWNER_TEXT       "77fa9abd-0359-4d32-bd60-28f4e78f784b"

/* UEFI_VARIABLE_DATA around a value. */
static void put_var(bb *b, int imgsec, const char *name, const void *data, size_t n) {
        if (imgsec)
                GUID_IMGSEC(b);
        else
                GUID_GLOBAL(b);
        put64(b, strlen(name));
        put64(b, n);
        put_u16s(b, name);
        put(b, data, n);
}

/* Device path node helpers. */
static void dp_node(bb *b, uint8_t t, uint8_t s, const void *body, size_t n) {
        put8(b, t);
        put8(b, s);
        put16(b, (uint16_t) (4 + n));
        put(b, body, n);
}
static void dp_end(bb *b) { dp_node(b, 0x7f, 0xff, NULL, 0); }
static void dp_pciroot(bb *b) { uint8_t x[8]; mb_put_le32(x, 0x0a0341d0); mb_put_le32(x + 4, 0); dp_node(b, 2, 1, x, 8); }
static void dp_pci(bb *b, uint8_t dev, uint8_t fn) { uint8_t x[2] = { fn, dev }; dp_node(b, 1, 1, x, 2); }
static void dp_file(bb *b, const char *path) {
        bb t = { .n = 0 };
        put_u16s(&t, path);
        put16(&t, 0);
        dp_node(b, 4, 4, t.b, t.n);
}
static void dp_hd_gpt(bb *b) {
        bb t = { .n = 0 };
        put32(&t, 1);
        put64(&t, 0x800);
        put64(&t, 0x100000);
        put_guid(&t, 0x12345678, 0x9abc, 0xdef0, 0x0011223344556677ull);
        put8(&t, 2);
        put8(&t, 2);
        dp_node(b, 4, 1, t.b, t.n);
}

/* ---- events and digests ------------------------------------------------- */

static uint8_t dig_store[4][64];

static mb_tcglog_event mkev(uint32_t pcr, uint32_t type, const void *data, size_t n) {
        mb_tcglog_event ev;
        memset(&ev, 0, sizeof ev);
        ev.pcr = pcr;
        ev.type = type;
        ev.data = data;
        ev.data_size = (uint32_t) n;
        return ev;
}

/* Give ev a sha1 and a sha256 digest of p[0..n) (OpenSSL, independent of
 * the core's SHA). */
static void set_digests(mb_tcglog_event *ev, const void *p, size_t n) {
        unsigned len;
        EVP_Digest(p, n, dig_store[0], &len, EVP_sha1(), NULL);
        EVP_Digest(p, n, dig_store[1], &len, EVP_sha256(), NULL);
        ev->n_digests = 2;
        ev->digests[0] = (mb_tcglog_digest) { MB_ALG_SHA1, 20, dig_store[0] };
        ev->digests[1] = (mb_tcglog_digest) { MB_ALG_SHA256, 32, dig_store[1] };
}

static mb_integrity check(const mb_tcglog_event *ev, const char **conv) {
        const char *c = "untouched";
        mb_integrity v = mb_evdata_check(ev, &c);
        *conv = c;
        return v;
}

/* Every strict prefix of a structured payload must decode to an "error". */
static void check_truncations(uint32_t pcr, uint32_t type, const uint8_t *p, size_t n) {
        for (size_t k = 0; k < n; k++) {
                /* A heap copy of exactly k bytes, so ASan sees any overread. */
                uint8_t *copy = malloc(k ? k : 1);
                memcpy(copy, p, k);
                mb_tcglog_event ev = mkev(pcr, type, copy, k);
                decode(&ev);
                if (!strstr(R.out, "\"error\":")) {
                        fprintf(stderr, "  truncation to %zu of %zu bytes: no error: %s\n", k, n, R.out);
                        tl_case_failed = 1;
                }
                const char *conv;
                (void) check(&ev, &conv);
                free(copy);
        }
}

/* ---- strbuf ------------------------------------------------------------- */

TEST(strbuf_formats) {
        char st[128];
        mb_strbuf b;
        mb_strbuf_init(&b, st, sizeof st);
        const uint8_t g[16] = { 0x61, 0xdf, 0xe4, 0x8b, 0xca, 0x93, 0xd2, 0x11, 0xaa, 0x0d, 0x00, 0xe0, 0x98, 0x03, 0x2b, 0x8c };
        mb_strbuf_guid(&b, g);
        mb_strbuf_puts(&b, " ");
        mb_strbuf_hexnum(&b, 0);
        mb_strbuf_puts(&b, " ");
        mb_strbuf_hexnum(&b, 0x1f);
        mb_strbuf_puts(&b, " ");
        mb_strbuf_hexnum(&b, UINT64_MAX);
        mb_strbuf_puts(&b, " ");
        mb_strbuf_u64(&b, 0);
        mb_strbuf_puts(&b, " ");
        mb_strbuf_u64(&b, UINT64_MAX);
        mb_strbuf_puts(&b, " ");
        mb_strbuf_hex(&b, (const uint8_t *) "\x00\xab", 2);
        CHECK(!strcmp(st, "8be4df61-93ca-11d2-aa0d-00e098032b8c 0x0 0x1f 0xffffffffffffffff 0 18446744073709551615 00ab"));
        CHECK(!b.truncated);
}

TEST(strbuf_utf16) {
        char st[64];
        mb_strbuf b;
        /* "A", U+00E9, U+20AC, U+1F600 (surrogate pair), lone high, lone low, NUL, "Z". */
        const uint8_t u[] = { 'A', 0, 0xe9, 0, 0xac, 0x20, 0x3d, 0xd8, 0x00, 0xde, 0x3d, 0xd8, 'x', 0, 0x00, 0xde, 0, 0, 'Z', 0 };
        mb_strbuf_init(&b, st, sizeof st);
        mb_strbuf_utf16le(&b, u, sizeof u / 2);
        CHECK(!strcmp(st, "A\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80\xef\xbf\xbdx\xef\xbf\xbd"));
        /* A high surrogate as the very last unit must not read past n_units. */
        mb_strbuf_init(&b, st, sizeof st);
        mb_strbuf_utf16le(&b, u + 6, 1);
        CHECK(!strcmp(st, "\xef\xbf\xbd"));
}

TEST(strbuf_truncation) {
        char st[6];
        mb_strbuf b;
        mb_strbuf_init(&b, st, sizeof st);
        mb_strbuf_puts(&b, "abcd");
        /* U+20AC needs 3 bytes and only 1 is left: dropped whole, sticky. */
        const uint8_t euro[] = { 0xac, 0x20, 'e', 0 };
        mb_strbuf_utf16le(&b, euro, 2);
        CHECK(b.truncated);
        CHECK(!strcmp(st, "abcd"));
        CHECK_EQ_INT(b.len, 4);
        mb_strbuf_init(&b, st, 0);
        mb_strbuf_puts(&b, "x");
        CHECK(b.truncated);
        CHECK_EQ_INT(b.len, 0);
}

/* ---- variables ---------------------------------------------------------- */

TEST(var_secureboot) {
        bb b = { .n = 0 };
        put_var(&b, 0, "SecureBoot", "\x01", 1);
        mb_tcglog_event ev = mkev(7, MB_EV_EFI_VARIABLE_DRIVER_CONFIG, b.b, b.n);
        decode(&ev);
        CHECK_HAS("\"payload\":{");
        CHECK_HAS("\"guid\":\"8be4df61-93ca-11d2-aa0d-00e098032b8c\"");
        CHECK_HAS("\"vendor\":\"EFI_GLOBAL_VARIABLE\"");
        CHECK_HAS("\"name\":\"SecureBoot\"");
        CHECK_HAS("\"data_size\":1,");
        CHECK_HAS("\"enabled\":true");
        CHECK_LACKS("error");
        const char *conv;
        set_digests(&ev, b.b, b.n);
        CHECK_EQ_INT(check(&ev, &conv), MB_INTEGRITY_OK);
        CHECK(conv && !strcmp(conv, "whole-event"));
        /* Digest over the data only is not accepted for DRIVER_CONFIG. */
        set_digests(&ev, "\x01", 1);
        CHECK_EQ_INT(check(&ev, &conv), MB_INTEGRITY_MISMATCH);
        CHECK(conv == NULL);
        check_truncations(7, MB_EV_EFI_VARIABLE_DRIVER_CONFIG, b.b, b.n);
}

static void build_db(bb *b) {
        static const uint8_t der[] = { 0x30, 0x82, 0x00, 0x03, 0x01, 0x02, 0x03 };
        bb v = { .n = 0 };
        /* An X509 list with one certificate. */
        GUID_X509(&v);
        put32(&v, 28 + 16 + sizeof der);
        put32(&v, 0);
        put32(&v, 16 + sizeof der);
        GUID_OWNER(&v);
        put(&v, der, sizeof der);
        /* A SHA256 list with two hashes. */
        GUID_SHA256(&v);
        put32(&v, 28 + 2 * 48);
        put32(&v, 0);
        put32(&v, 48);
        for (int i = 0; i < 2; i++) {
                GUID_OWNER(&v);
                for (int j = 0; j < 32; j++)
                        put8(&v, (uint8_t) (i * 0x10 + j));
        }
        put_var(b, 1, "db", v.b, v.n);
}

TEST(var_db_signature_lists) {
        bb b = { .n = 0 };
        build_db(&b);
        mb_tcglog_event ev = mkev(7, MB_EV_EFI_VARIABLE_DRIVER_CONFIG, b.b, b.n);
        decode(&ev);
        CHECK_HAS("\"vendor\":\"EFI_IMAGE_SECURITY_DATABASE\"");
        CHECK_HAS("\"name\":\"db\"");
        CHECK_HAS("\"signature_lists\":[{\"type\":\"a5c059a1-94e4-4aa7-87b5-ab155c2bf072\",\"type_name\":\"EFI_CERT_X509\"");
        CHECK_HAS("\"owner\":\"" OWNER_TEXT "\"");
        CHECK_HAS("\"cert_size\":7,");
        /* sha256 of 30 82 00 03 01 02 03, computed by OpenSSL here. */
        uint8_t d[32];
        unsigned len;
        char want[100] = "\"cert_sha256\":\"";
        EVP_Digest("\x30\x82\x00\x03\x01\x02\x03", 7, d, &len, EVP_sha256(), NULL);
        for (int i = 0; i < 32; i++)
                snprintf(want + strlen(want), 3, "%02x", d[i]);
        CHECK_HAS(want);
        CHECK_HAS("\"type_name\":\"EFI_CERT_SHA256\"");
        CHECK_HAS("\"sha256\":\"000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f\"");
        CHECK_HAS("\"sha256\":\"101112131415161718191a1b1c1d1e1f202122232425262728292a2b2c2d2e2f\"");
        CHECK_LACKS("error");
        check_truncations(7, MB_EV_EFI_VARIABLE_DRIVER_CONFIG, b.b, b.n);
}

TEST(var_siglist_malformed) {
        /* SignatureSize that does not divide the list, and one below 16. */
        for (uint32_t sig_size = 0; sig_size < 40; sig_size += 15) {
                bb v = { .n = 0 }, b = { .n = 0 };
                GUID_SHA256(&v);
                put32(&v, 28 + 48);
                put32(&v, 0);
                put32(&v, sig_size);
                putz(&v, 48);
                put_var(&b, 1, "dbx", v.b, v.n);
                mb_tcglog_event ev = mkev(7, MB_EV_EFI_VARIABLE_DRIVER_CONFIG, b.b, b.n);
                decode(&ev);
                CHECK_HAS("\"error\":\"signature size does not divide the list\"");
                CHECK_HAS("\"hex\":\"");
        }
        /* ListSize past the data, header size larger than the list. */
        bb v = { .n = 0 }, b = { .n = 0 };
        GUID_SHA256(&v);
        put32(&v, 0xffffffff);
        put32(&v, 0);
        put32(&v, 48);
        put_var(&b, 1, "dbx", v.b, v.n);
        mb_tcglog_event ev = mkev(7, MB_EV_EFI_VARIABLE_DRIVER_CONFIG, b.b, b.n);
        decode(&ev);
        CHECK_HAS("signature list size out of bounds");
        v.n = b.n = 0;
        GUID_SHA256(&v);
        put32(&v, 28);
        put32(&v, 0xffffffff);
        put32(&v, 48);
        put_var(&b, 1, "dbx", v.b, v.n);
        ev = mkev(7, MB_EV_EFI_VARIABLE_DRIVER_CONFIG, b.b, b.n);
        decode(&ev);
        CHECK_HAS("signature header larger than its list");
}

TEST(var_boot_order_and_conventions) {
        const uint8_t order[] = { 1, 0, 0x0a, 0, 0, 0 };
        bb b = { .n = 0 };
        put_var(&b, 0, "BootOrder", order, sizeof order);
        mb_tcglog_event ev = mkev(1, MB_EV_EFI_VARIABLE_BOOT, b.b, b.n);
        decode(&ev);
        CHECK_HAS("\"boot_order\":[\"Boot0001\",\"Boot000A\",\"Boot0000\",]");
        const char *conv;
        /* EDK2: digest over VariableData only. */
        set_digests(&ev, order, sizeof order);
        CHECK_EQ_INT(check(&ev, &conv), MB_INTEGRITY_OK);
        CHECK(conv && !strcmp(conv, "variable-data"));
        /* PFP text: digest over the whole UEFI_VARIABLE_DATA. */
        set_digests(&ev, b.b, b.n);
        CHECK_EQ_INT(check(&ev, &conv), MB_INTEGRITY_OK);
        CHECK(conv && !strcmp(conv, "whole-event"));
        set_digests(&ev, "x", 1);
        CHECK_EQ_INT(check(&ev, &conv), MB_INTEGRITY_MISMATCH);
        /* Odd size. */
        b.n = 0;
        put_var(&b, 0, "BootOrder", order, 3);
        ev = mkev(1, MB_EV_EFI_VARIABLE_BOOT, b.b, b.n);
        decode(&ev);
        CHECK_HAS("\"error\":\"BootOrder has an odd size\"");
}

static void build_load_option(bb *o) {
        bb dp = { .n = 0 };
        uint8_t sata[6] = { 0, 0, 0xff, 0xff, 0, 0 };
        dp_pciroot(&dp);
        dp_pci(&dp, 0x1f, 0x2);
        dp_node(&dp, 3, 18, sata, 6);
        dp_hd_gpt(&dp);
        dp_file(&dp, "\\EFI\\BOOT\\BOOTX64.EFI");
        dp_end(&dp);
        put32(o, 1);
        put16(o, (uint16_t) dp.n);
        put_u16s(o, "Debian");
        put16(o, 0);
        put(o, dp.b, dp.n);
        put(o, "opt", 3);
}

TEST(var_boot_option) {
        bb o = { .n = 0 }, b = { .n = 0 };
        build_load_option(&o);
        put_var(&b, 0, "Boot0003", o.b, o.n);
        mb_tcglog_event ev = mkev(1, MB_EV_EFI_VARIABLE_BOOT, b.b, b.n);
        decode(&ev);
        CHECK_HAS("\"name\":\"Boot0003\"");
        CHECK_HAS("\"attributes\":1,\"active\":true,\"description\":\"Debian\"");
        CHECK_HAS("\"device_path\":\"PciRoot(0x0)/Pci(0x1f,0x2)/Sata(0x0,0xffff,0x0)/"
                  "HD(1,GPT,12345678-9abc-def0-0011-223344556677,0x800,0x100000)/\\EFI\\BOOT\\BOOTX64.EFI\"");
        CHECK_HAS("\"optional_data\":\"6f7074\"");
        CHECK_LACKS("error");
        check_truncations(1, MB_EV_EFI_VARIABLE_BOOT, b.b, b.n);
        /* A description without its NUL. */
        b.n = 0;
        put_var(&b, 0, "Boot0004", "\x01\x00\x00\x00\x00\x00" "A\0B\0", 10);
        ev = mkev(1, MB_EV_EFI_VARIABLE_BOOT, b.b, b.n);
        decode(&ev);
        CHECK_HAS("load option description has no NUL");
        /* A name that only looks like Boot####. */
        b.n = 0;
        put_var(&b, 0, "Bootxyzw", "\x01", 1);
        ev = mkev(1, MB_EV_EFI_VARIABLE_BOOT, b.b, b.n);
        decode(&ev);
        CHECK_HAS("\"data\":\"01\"");
}

TEST(var_header_malformed) {
        bb b = { .n = 0 };
        GUID_GLOBAL(&b);
        put64(&b, UINT64_MAX / 2 + 1); /* name_chars * 2 would wrap */
        put64(&b, 0);
        put_u16s(&b, "PK");
        mb_tcglog_event ev = mkev(7, MB_EV_EFI_VARIABLE_DRIVER_CONFIG, b.b, b.n);
        decode(&ev);
        CHECK_HAS("\"error\":\"variable name runs past the event\"");
        b.n = 0;
        GUID_GLOBAL(&b);
        put64(&b, 2);
        put64(&b, UINT64_MAX);
        put_u16s(&b, "PK");
        ev = mkev(7, MB_EV_EFI_VARIABLE_DRIVER_CONFIG, b.b, b.n);
        decode(&ev);
        CHECK_HAS("\"error\":\"variable data runs past the event\"");
        CHECK_HAS("\"hex\":\"61dfe48b");
        const char *conv;
        set_digests(&ev, b.b, b.n);
        CHECK_EQ_INT(check(&ev, &conv), MB_INTEGRITY_OK); /* whole-event needs no parsing */
}

TEST(var_authority) {
        static const uint8_t der[] = { 0x30, 0x82, 0x00, 0x01, 0x05 };
        bb s = { .n = 0 }, b = { .n = 0 };
        GUID_OWNER(&s);
        put(&s, der, sizeof der);
        put_var(&b, 1, "db", s.b, s.n);
        mb_tcglog_event ev = mkev(7, MB_EV_EFI_VARIABLE_AUTHORITY, b.b, b.n);
        /* EDK2 names the authority after the database it came from, "db";
         * the data is one EFI_SIGNATURE_DATA, not a signature list. */
        decode(&ev);
        CHECK_HAS("\"name\":\"db\"");
        CHECK_HAS("\"owner\":\"" OWNER_TEXT "\"");
        CHECK_HAS("\"cert_size\":5,");
        CHECK_HAS("\"cert_sha256\":\"");
        CHECK_LACKS("error");
        check_truncations(7, MB_EV_EFI_VARIABLE_AUTHORITY, b.b, b.n);
        /* shim's vendor certificate: bare DER under the name "Shim". */
        b.n = 0;
        GUID_IMGSEC(&b);
        put64(&b, 4);
        put64(&b, sizeof der);
        put_u16s(&b, "Shim");
        put(&b, der, sizeof der);
        ev = mkev(7, MB_EV_EFI_VARIABLE_AUTHORITY, b.b, b.n);
        decode(&ev);
        CHECK_HAS("\"name\":\"Shim\",\"data_size\":5,\"cert_size\":5,\"cert_sha256\":\"");
        /* MokListTrusted (1 byte) and SbatLevel (text). */
        b.n = 0;
        put_var(&b, 0, "MokListTrusted", "\x01", 1);
        ev = mkev(7, MB_EV_EFI_VARIABLE_AUTHORITY, b.b, b.n);
        decode(&ev);
        CHECK_HAS("\"enabled\":true");
        b.n = 0;
        put_var(&b, 0, "SbatLevel", "sbat,1,2021030218\n", 19);
        ev = mkev(7, MB_EV_EFI_VARIABLE_AUTHORITY, b.b, b.n);
        decode(&ev);
        CHECK_HAS("\"text\":\"sbat,1,2021030218\n\"");
        b.n = 0;
        put_var(&b, 1, "db", s.b, s.n);
        /* Old shim: 5 bytes of struct padding after the data, hashed, plus
         * one more logged byte. */
        uint8_t padded[sizeof b.b];
        memcpy(padded, b.b, b.n);
        memset(padded + b.n, 0xaa, 6);
        ev = mkev(7, MB_EV_EFI_VARIABLE_AUTHORITY, padded, b.n + 6);
        set_digests(&ev, padded, b.n + 5);
        const char *conv;
        CHECK_EQ_INT(check(&ev, &conv), MB_INTEGRITY_OK);
        CHECK(conv && !strcmp(conv, "shim-padded"));
        decode(&ev);
        CHECK_HAS("\"trailing_bytes\":6,");
        set_digests(&ev, padded, b.n + 6);
        CHECK_EQ_INT(check(&ev, &conv), MB_INTEGRITY_OK);
        CHECK(conv && !strcmp(conv, "whole-event"));
}

/* ---- images and device paths ------------------------------------------- */

static const char *dp_text_of(const bb *dp) {
        bb b = { .n = 0 };
        put64(&b, 0x1000);
        put64(&b, 0x2000);
        put64(&b, 0);
        put64(&b, dp->n);
        put(&b, dp->b, dp->n);
        mb_tcglog_event ev = mkev(4, MB_EV_EFI_BOOT_SERVICES_APPLICATION, b.b, b.n);
        return decode(&ev);
}

TEST(image_load_event) {
        bb dp = { .n = 0 };
        dp_pciroot(&dp);
        dp_pci(&dp, 1, 1);
        dp_file(&dp, "\\EFI\\mshim\\mshimx64.efi");
        dp_end(&dp);
        dp_text_of(&dp);
        CHECK_HAS("\"image_location\":4096,\"image_length\":8192,\"link_time_address\":0,");
        CHECK_HAS("\"device_path\":\"PciRoot(0x0)/Pci(0x1,0x1)/\\EFI\\mshim\\mshimx64.efi\"");
        CHECK_LACKS("error");
        bb b = { .n = 0 };
        put64(&b, 0x1000);
        put64(&b, 0x2000);
        put64(&b, 0);
        put64(&b, dp.n);
        put(&b, dp.b, dp.n);
        check_truncations(4, MB_EV_EFI_BOOT_SERVICES_APPLICATION, b.b, b.n);
        /* A device path length beyond the event. */
        mb_put_le32(b.b + 24, 0xffffffff);
        mb_tcglog_event ev = mkev(2, MB_EV_EFI_BOOT_SERVICES_DRIVER, b.b, b.n);
        decode(&ev);
        CHECK_HAS("\"error\":\"device path length runs past the event\"");
        const char *conv;
        CHECK_EQ_INT(check(&ev, &conv), MB_INTEGRITY_NOT_APPLICABLE);
}

TEST(device_path_nodes) {
        bb dp = { .n = 0 };
        uint8_t x[64];
        memset(x, 0, sizeof x);
        /* MemoryMapped(type 0xb, 0x1000..0x1fff) */
        mb_put_le32(x, 0xb);
        mb_put_le32(x + 4, 0x1000);
        mb_put_le32(x + 12, 0x1fff);
        dp_node(&dp, 1, 3, x, 20);
        dp_text_of(&dp);
        CHECK_HAS("\"device_path\":\"MemoryMapped(0xb,0x1000,0x1fff)\"");

        /* Fv(guid)/FvFile(guid) */
        dp.n = 0;
        bb g = { .n = 0 };
        put_guid(&g, 0x7cb8bdc9, 0xf8eb, 0x4f34, 0xaaea3ee4af6516a1ull);
        dp_node(&dp, 4, 7, g.b, 16);
        dp_node(&dp, 4, 6, g.b, 16);
        dp_end(&dp);
        dp_text_of(&dp);
        CHECK_HAS("\"device_path\":\"Fv(7cb8bdc9-f8eb-4f34-aaea-3ee4af6516a1)/FvFile(7cb8bdc9-f8eb-4f34-aaea-3ee4af6516a1)\"");

        /* VenHw with data, VenMsg, VenMedia, Offset */
        dp.n = 0;
        put(&g, "\x01\x02", 2);
        dp_node(&dp, 1, 4, g.b, 18);
        dp_node(&dp, 3, 10, g.b, 16);
        dp_node(&dp, 4, 3, g.b, 16);
        memset(x, 0, 20);
        mb_put_le32(x + 4, 0x16000);
        mb_put_le32(x + 12, 0x353ff);
        dp_node(&dp, 4, 8, x, 20);
        dp_text_of(&dp);
        CHECK_HAS("\"device_path\":\"VenHw(7cb8bdc9-f8eb-4f34-aaea-3ee4af6516a1,0102)/VenMsg(7cb8bdc9-f8eb-4f34-aaea-3ee4af6516a1)/"
                  "VenMedia(7cb8bdc9-f8eb-4f34-aaea-3ee4af6516a1)/Offset(0x16000,0x353ff)\"");

        /* Scsi, USB, NVMe, Acpi(PNP0501), PcieRoot, CDROM, HD(MBR), MAC, Uri */
        dp.n = 0;
        dp_node(&dp, 3, 2, "\x02\x00\x01\x00", 4);
        dp_node(&dp, 3, 5, "\x03\x00", 2);
        dp_node(&dp, 3, 23, "\x01\x00\x00\x00\x00\x11\x22\x33\x44\x55\x66\x77", 12);
        mb_put_le32(x, 0x050141d0);
        mb_put_le32(x + 4, 1);
        dp_node(&dp, 2, 1, x, 8);
        mb_put_le32(x, 0x0a0841d0);
        dp_node(&dp, 2, 1, x, 8);
        memset(x, 0, 20);
        mb_put_le32(x + 4, 0x10);
        mb_put_le32(x + 12, 0x20);
        dp_node(&dp, 4, 2, x, 20);
        memset(x, 0, 38);
        mb_put_le32(x, 2);
        mb_put_le32(x + 4, 0x3f);
        mb_put_le32(x + 12, 0x100);
        mb_put_le32(x + 20, 0xdeadbeef);
        x[36] = 1;
        x[37] = 1;
        dp_node(&dp, 4, 1, x, 38);
        memset(x, 0, 33);
        memcpy(x, "\x52\x54\x00\x12\x34\x56", 6);
        x[32] = 1;
        dp_node(&dp, 3, 11, x, 33);
        dp_node(&dp, 3, 24, "http://x/a.efi", 14);
        dp_text_of(&dp);
        CHECK_HAS("\"device_path\":\"Scsi(0x2,0x1)/USB(0x3,0x0)/NVMe(0x1,00-11-22-33-44-55-66-77)/Acpi(PNP0501,0x1)/"
                  "PcieRoot(0x1)/CDROM(0x0,0x10,0x20)/HD(2,MBR,0xdeadbeef,0x3f,0x100)/MAC(525400123456,0x1)/Uri(http://x/a.efi)\"");

        /* End-instance, unknown node, short known node -> generic form. */
        dp.n = 0;
        dp_pci(&dp, 2, 0);
        dp_node(&dp, 0x7f, 0x01, NULL, 0);
        dp_pci(&dp, 3, 0);
        dp_node(&dp, 5, 1, "\xab\xcd", 2);
        dp_node(&dp, 4, 1, "\x01", 1);
        dp_end(&dp);
        dp_text_of(&dp);
        CHECK_HAS("\"device_path\":\"Pci(0x2,0x0),Pci(0x3,0x0)/Path(5,1,abcd)/Path(4,1,01)\"");
        CHECK_LACKS("error");
}

TEST(device_path_malformed) {
        bb dp = { .n = 0 };
        dp_pci(&dp, 2, 0);
        dp_node(&dp, 1, 1, NULL, 0);
        dp.b[dp.n - 2] = 2; /* node length 2 < 4 */
        dp_text_of(&dp);
        CHECK_HAS("\"device_path\":\"Pci(0x2,0x0)\"");
        CHECK_HAS("\"error\":\"device path node shorter than its header\"");
        dp.n = 0;
        dp_pci(&dp, 2, 0);
        dp_node(&dp, 4, 4, "a\0b\0", 4);
        dp.b[dp.n - 6] = 200; /* node length past the end */
        dp_text_of(&dp);
        CHECK_HAS("\"error\":\"device path node runs past the end\"");
        dp.n = 0;
        dp_pci(&dp, 2, 0);
        put(&dp, "\x04\x04", 2);
        dp_text_of(&dp);
        CHECK_HAS("\"error\":\"device path node header truncated\"");
}

TEST(device_path_long_is_cut) {
        bb dp = { .n = 0 };
        /* 300 nodes of ~26 characters: more than the 4 KiB text limit. */
        for (int i = 0; i < 300; i++)
                dp_node(&dp, 4, 8, "\0\0\0\0\x11\x22\x33\x44\0\0\0\0\x55\x66\x77\x88\0\0\0\0", 20);
        dp_text_of(&dp);
        CHECK_HAS("...\"");
        CHECK_LACKS("error");
}

/* ---- GPT ------------------------------------------------------------------ */

static void build_gpt(bb *b, uint32_t entry_size, uint64_t count) {
        size_t h = b->n;
        put(b, "EFI PART", 8);
        put32(b, 0x10000);
        put32(b, 92);
        putz(b, 92 - 16);
        put_guid(b, 0x11111111, 0x2222, 0x3333, 0x4444555555555555ull);
        memmove(b->b + h + 56, b->b + b->n - 16, 16);
        b->n -= 16;
        mb_put_le32(b->b + h + 72, 2);
        mb_put_le32(b->b + h + 80, 128);
        mb_put_le32(b->b + h + 84, entry_size);
        put64(b, count);
        for (uint64_t i = 0; i < count; i++) {
                size_t e = b->n;
                put_guid(b, 0xc12a7328, 0xf81f, 0x11d2, 0xba4b00a0c93ec93bull);
                put_guid(b, 0xaaaaaaaa, 0xbbbb, 0xcccc, 0xdddd000000000000ull + i);
                put64(b, 2048 + i);
                put64(b, 4095 + i);
                put64(b, 0);
                put_u16s(b, "EFI System");
                putz(b, entry_size - (b->n - e));
        }
}

TEST(gpt_event) {
        bb b = { .n = 0 };
        build_gpt(&b, 128, 2);
        mb_tcglog_event ev = mkev(5, MB_EV_EFI_GPT_EVENT, b.b, b.n);
        decode(&ev);
        CHECK_HAS("\"disk_guid\":\"11111111-2222-3333-4444-555555555555\"");
        CHECK_HAS("\"number_of_partitions\":2,");
        CHECK_HAS("\"partitions\":[{\"type_guid\":\"c12a7328-f81f-11d2-ba4b-00a0c93ec93b\",\"unique_guid\":\"aaaaaaaa-bbbb-cccc-dddd-000000000000\","
                  "\"first_lba\":2048,\"last_lba\":4095,\"attributes\":0,\"name\":\"EFI System\",}");
        CHECK_HAS("\"unique_guid\":\"aaaaaaaa-bbbb-cccc-dddd-000000000001\"");
        CHECK_LACKS("error");
        const char *conv;
        set_digests(&ev, b.b, b.n);
        CHECK_EQ_INT(check(&ev, &conv), MB_INTEGRITY_OK);
        check_truncations(5, MB_EV_EFI_GPT_EVENT, b.b, b.n);
        /* Bad signature, tiny entry size, absurd count. */
        b.b[0] = 'X';
        decode(&ev);
        CHECK_HAS("\"error\":\"GPT header signature is not \"EFI PART\"\""); /* the recorder does not escape */
        b.n = 0;
        build_gpt(&b, 128, 1);
        mb_put_le32(b.b + 84, 16);
        ev = mkev(5, MB_EV_EFI_GPT_EVENT, b.b, b.n);
        decode(&ev);
        CHECK_HAS("GPT entry size below 128");
        mb_put_le32(b.b + 84, 128);
        mb_put_le32(b.b + 92, 0xffffffff);
        mb_put_le32(b.b + 96, 0xffffffff);
        decode(&ev);
        CHECK_HAS("\"error\":\"partition entries run past the event\"");
}

/* ---- small payloads ----------------------------------------------------- */

TEST(blobs_and_tables) {
        bb b = { .n = 0 };
        put64(&b, 0x820000);
        put64(&b, 0xe0000);
        mb_tcglog_event ev = mkev(0, MB_EV_EFI_PLATFORM_FIRMWARE_BLOB, b.b, b.n);
        decode(&ev);
        CHECK_HAS("\"base\":8519680,\"length\":917504,");
        check_truncations(0, MB_EV_EFI_PLATFORM_FIRMWARE_BLOB, b.b, b.n);
        ev = mkev(0, MB_EV_POST_CODE, b.b, b.n);
        decode(&ev);
        CHECK_HAS("\"base\":8519680,");
        ev = mkev(0, MB_EV_POST_CODE, "ACPI DATA", 9);
        decode(&ev);
        CHECK_HAS("\"text\":\"ACPI DATA\",\"encoding\":\"ascii\"");

        b.n = 0;
        put8(&b, 5);
        put(&b, "PEIFV", 5);
        put64(&b, 0x1000);
        put64(&b, 0x2000);
        ev = mkev(0, MB_EV_EFI_PLATFORM_FIRMWARE_BLOB2, b.b, b.n);
        decode(&ev);
        CHECK_HAS("\"description\":\"PEIFV\",\"base\":4096,\"length\":8192,");
        check_truncations(0, MB_EV_EFI_PLATFORM_FIRMWARE_BLOB2, b.b, b.n);

        b.n = 0;
        put64(&b, 2);
        put_guid(&b, 0xeb9d2d31, 0x2d88, 0x11d3, 0x9a160090273fc14dull);
        put64(&b, 0x7f000000);
        put_guid(&b, 0x01020304, 0x0506, 0x0708, 0x090a0b0c0d0e0f10ull);
        put64(&b, 1);
        ev = mkev(1, MB_EV_EFI_HANDOFF_TABLES, b.b, b.n);
        decode(&ev);
        CHECK_HAS("\"number_of_tables\":2,\"tables\":[{\"guid\":\"eb9d2d31-2d88-11d3-9a16-0090273fc14d\",\"name\":\"SMBIOS_TABLE\",\"address\":2130706432,}");
        CHECK_HAS("{\"guid\":\"01020304-0506-0708-090a-0b0c0d0e0f10\",\"address\":1,}");
        check_truncations(1, MB_EV_EFI_HANDOFF_TABLES, b.b, b.n);

        bb c = { .n = 0 };
        put8(&c, 9);
        put(&c, "SMBIOS...", 9);
        put(&c, b.b, b.n);
        ev = mkev(1, MB_EV_EFI_HANDOFF_TABLES2, c.b, c.n);
        decode(&ev);
        CHECK_HAS("\"description\":\"SMBIOS...\",\"number_of_tables\":2,");
        check_truncations(1, MB_EV_EFI_HANDOFF_TABLES2, c.b, c.n);
}

TEST(separator) {
        const char *conv;
        mb_tcglog_event ev = mkev(4, MB_EV_SEPARATOR, "\0\0\0\0", 4);
        decode(&ev);
        CHECK_HAS("\"value\":0,\"meaning\":\"normal\"");
        set_digests(&ev, "\0\0\0\0", 4);
        CHECK_EQ_INT(check(&ev, &conv), MB_INTEGRITY_OK);
        CHECK(conv && !strcmp(conv, "event-data"));
        ev = mkev(4, MB_EV_SEPARATOR, "\xff\xff\xff\xff", 4);
        decode(&ev);
        CHECK_HAS("\"value\":4294967295,\"meaning\":\"error\"");
        set_digests(&ev, "\0\0\0\0", 4);
        CHECK_EQ_INT(check(&ev, &conv), MB_INTEGRITY_MISMATCH);
        CHECK(conv == NULL);
        check_truncations(4, MB_EV_SEPARATOR, (const uint8_t *) "\0\0\0\0", 4);
        /* Only an algorithm we do not implement (SHA3-256): nothing computable. */
        ev.n_digests = 1;
        ev.digests[0] = (mb_tcglog_digest) { 0x0027, 32, dig_store[1] };
        CHECK_EQ_INT(check(&ev, &conv), MB_INTEGRITY_NOT_APPLICABLE);
        /* Such a digest next to a matching sha256 is skipped, not failed. */
        set_digests(&ev, "\xff\xff\xff\xff", 4);
        ev.digests[0] = (mb_tcglog_digest) { 0x0027, 32, dig_store[2] };
        CHECK_EQ_INT(check(&ev, &conv), MB_INTEGRITY_OK);
        /* SM3 digests are checked (OpenSSL's EVP_sm3 as the oracle). */
        {
                unsigned len;
                EVP_Digest("\xff\xff\xff\xff", 4, dig_store[2], &len, EVP_sm3(), NULL);
                ev.digests[0] = (mb_tcglog_digest) { MB_ALG_SM3_256, 32, dig_store[2] };
                CHECK_EQ_INT(check(&ev, &conv), MB_INTEGRITY_OK);
                dig_store[2][31] ^= 1;
                CHECK_EQ_INT(check(&ev, &conv), MB_INTEGRITY_MISMATCH);
                dig_store[2][31] ^= 1;
        }
        CHECK_EQ_INT(mb_evdata_check(&ev, NULL), MB_INTEGRITY_OK);
}

TEST(actions_and_versions) {
        const char *conv;
        static const char act[] = "Calling EFI Application from Boot Option";
        mb_tcglog_event ev = mkev(4, MB_EV_EFI_ACTION, act, sizeof act - 1);
        decode(&ev);
        CHECK_HAS("\"text\":\"Calling EFI Application from Boot Option\",\"encoding\":\"ascii\"");
        set_digests(&ev, act, sizeof act - 1);
        CHECK_EQ_INT(check(&ev, &conv), MB_INTEGRITY_OK);
        bb v = { .n = 0 };
        put_u16s(&v, "edk2-stable");
        put16(&v, 0);
        ev = mkev(0, MB_EV_S_CRTM_VERSION, v.b, v.n);
        decode(&ev);
        CHECK_HAS("\"text\":\"edk2-stable\",\"encoding\":\"utf-16le\"");
        set_digests(&ev, v.b, v.n);
        CHECK_EQ_INT(check(&ev, &conv), MB_INTEGRITY_OK);
        ev = mkev(0, MB_EV_S_CRTM_VERSION, "\x01\x02\x03", 3);
        decode(&ev);
        CHECK_HAS("\"hex\":\"010203\"");
        ev = mkev(0, MB_EV_EFI_HCRTM_EVENT, "HCRTM", 5);
        decode(&ev);
        CHECK_HAS("\"text\":\"HCRTM\"");
        CHECK_EQ_INT(check(&ev, &conv), MB_INTEGRITY_NOT_APPLICABLE);
        ev = mkev(1, MB_EV_PLATFORM_CONFIG_FLAGS, "\x00\xff", 2);
        decode(&ev);
        CHECK(!strcmp(R.out, "\"payload\":{\"hex\":\"00ff\",},"));
        ev = mkev(1, 0x12345678, NULL, 0);
        decode(&ev);
        CHECK(!strcmp(R.out, "\"payload\":{\"hex\":\"\",},"));
}

/* Types that share a decoder with one tested above; each checked on its
 * own so a change to the type routing cannot drop one unnoticed. */
TEST(sibling_event_types) {
        const char *conv;
        bb b = { .n = 0 }, dp = { .n = 0 }, o = { .n = 0 }, v = { .n = 0 };
        mb_tcglog_event ev;

        /* EV_S_CRTM_CONTENTS (PFP 10.4.2): a blob address, or text. */
        put64(&b, 0xffc00000);
        put64(&b, 0x400000);
        ev = mkev(0, MB_EV_S_CRTM_CONTENTS, b.b, b.n);
        decode(&ev);
        CHECK_HAS("\"base\":4290772992,\"length\":4194304,");
        ev = mkev(0, MB_EV_S_CRTM_CONTENTS, "FV_MAIN", 7);
        decode(&ev);
        CHECK_HAS("\"text\":\"FV_MAIN\"");
        /* Boot-services drivers and runtime drivers: image load events. */
        dp_file(&dp, "\\drv.efi");
        dp_end(&dp);
        b.n = 0;
        put64(&b, 0x1000);
        put64(&b, 0x2000);
        put64(&b, 0);
        put64(&b, dp.n);
        put(&b, dp.b, dp.n);
        ev = mkev(2, MB_EV_EFI_BOOT_SERVICES_DRIVER, b.b, b.n);
        decode(&ev);
        CHECK_HAS("\"image_location\":4096,\"image_length\":8192,\"link_time_address\":0,\"device_path\":\"\\drv.efi\"");
        ev = mkev(2, MB_EV_EFI_RUNTIME_SERVICES_DRIVER, b.b, b.n);
        decode(&ev);
        CHECK_HAS("\"device_path\":\"\\drv.efi\"");
        CHECK_EQ_INT(check(&ev, &conv), MB_INTEGRITY_NOT_APPLICABLE);
        /* EV_EFI_GPT_EVENT2: the GPT decoder and the event-data rule. */
        b.n = 0;
        build_gpt(&b, 128, 1);
        ev = mkev(5, MB_EV_EFI_GPT_EVENT2, b.b, b.n);
        decode(&ev);
        CHECK_HAS("\"number_of_partitions\":1,");
        set_digests(&ev, b.b, b.n);
        CHECK_EQ_INT(check(&ev, &conv), MB_INTEGRITY_OK);
        set_digests(&ev, b.b, b.n - 1);
        CHECK_EQ_INT(check(&ev, &conv), MB_INTEGRITY_MISMATCH);
        /* EV_ACTION (PFP 10.4.1): text, and the digest covers it. */
        ev = mkev(5, MB_EV_ACTION, "Exit Boot Services Invocation", 29);
        decode(&ev);
        CHECK_HAS("\"text\":\"Exit Boot Services Invocation\"");
        set_digests(&ev, "Exit Boot Services Invocation", 29);
        CHECK_EQ_INT(check(&ev, &conv), MB_INTEGRITY_OK);
        /* EV_EFI_VARIABLE_BOOT2 (PFP 10.4.4): decoded as Boot####, and the
         * digest covers the whole UEFI_VARIABLE_DATA; the variable data
         * alone (EDK2's EV_EFI_VARIABLE_BOOT habit) is not accepted. */
        build_load_option(&o);
        put_var(&v, 0, "Boot0003", o.b, o.n);
        ev = mkev(1, MB_EV_EFI_VARIABLE_BOOT2, v.b, v.n);
        decode(&ev);
        CHECK_HAS("\"name\":\"Boot0003\"");
        CHECK_HAS("\"description\":\"Debian\"");
        set_digests(&ev, v.b, v.n);
        CHECK_EQ_INT(check(&ev, &conv), MB_INTEGRITY_OK);
        CHECK(conv && !strcmp(conv, "whole-event"));
        set_digests(&ev, o.b, o.n);
        CHECK_EQ_INT(check(&ev, &conv), MB_INTEGRITY_MISMATCH);
}

/* ---- EV_IPL --------------------------------------------------------------- */

TEST(ipl_grub) {
        const char *conv;
        static const char cmd[] = "grub_cmd: linux /vmlinuz root=/dev/sda1";
        mb_tcglog_event ev = mkev(8, MB_EV_IPL, cmd, sizeof cmd); /* with NUL */
        decode(&ev);
        CHECK_HAS("\"text\":\"grub_cmd: linux /vmlinuz root=/dev/sda1\",\"encoding\":\"ascii\",\"convention\":\"grub\"");
        /* GRUB hashes the string after the prefix, without the NUL. */
        set_digests(&ev, "linux /vmlinuz root=/dev/sda1", 29);
        CHECK_EQ_INT(check(&ev, &conv), MB_INTEGRITY_OK);
        CHECK(conv && !strcmp(conv, "grub"));
        static const char kc[] = "kernel_cmdline: /vmlinuz ro";
        ev = mkev(8, MB_EV_IPL, kc, sizeof kc);
        set_digests(&ev, "/vmlinuz ro", 11);
        CHECK_EQ_INT(check(&ev, &conv), MB_INTEGRITY_OK);
        /* Anything else in PCR 8 is a mismatch... */
        set_digests(&ev, kc, sizeof kc - 1);
        CHECK_EQ_INT(check(&ev, &conv), MB_INTEGRITY_MISMATCH);
        CHECK(conv == NULL);
        /* ...but GRUB's file events in PCR 9 cover the file. */
        ev = mkev(9, MB_EV_IPL, "/boot/vmlinuz", 14);
        set_digests(&ev, "file bytes", 10);
        CHECK_EQ_INT(check(&ev, &conv), MB_INTEGRITY_NOT_APPLICABLE);
}

TEST(ipl_systemd_and_shim) {
        const char *conv;
        bb v = { .n = 0 };
        put_u16s(&v, "root=/dev/vda2 quiet");
        put16(&v, 0);
        mb_tcglog_event ev = mkev(12, MB_EV_IPL, v.b, v.n);
        decode(&ev);
        CHECK_HAS("\"text\":\"root=/dev/vda2 quiet\",\"encoding\":\"utf-16le\",\"convention\":\"systemd-utf16\"");
        set_digests(&ev, v.b, v.n);
        CHECK_EQ_INT(check(&ev, &conv), MB_INTEGRITY_OK);
        CHECK(conv && !strcmp(conv, "systemd-utf16"));
        /* systemd-boot < 250 logged one byte short; the digest still covers
         * the full UTF-16 NUL. */
        ev = mkev(8, MB_EV_IPL, v.b, v.n - 1);
        set_digests(&ev, v.b, v.n);
        CHECK_EQ_INT(check(&ev, &conv), MB_INTEGRITY_OK);
        CHECK(conv && !strcmp(conv, "systemd-utf16"));
        set_digests(&ev, v.b, v.n - 2);
        CHECK_EQ_INT(check(&ev, &conv), MB_INTEGRITY_MISMATCH);
        /* shim's PCR 14 events: the digest covers the variable's data. */
        ev = mkev(14, MB_EV_IPL, "MokList", 8);
        decode(&ev);
        CHECK_HAS("\"text\":\"MokList\",\"encoding\":\"ascii\",\"convention\":\"shim\"");
        set_digests(&ev, "some mok data", 13);
        CHECK_EQ_INT(check(&ev, &conv), MB_INTEGRITY_NOT_APPLICABLE);
        CHECK(conv == NULL);
        /* systemd-stub's credential cpio in PCR 12: the data is a fixed
         * description, the digest covers the archive, which is not in the
         * log. A command line with a wrong digest is still a mismatch. */
        v.n = 0;
        put_u16s(&v, "Credentials initrd");
        put16(&v, 0);
        ev = mkev(12, MB_EV_IPL, v.b, v.n);
        set_digests(&ev, "070701 a cpio archive", 21);
        CHECK_EQ_INT(check(&ev, &conv), MB_INTEGRITY_NOT_APPLICABLE);
        v.n = 0;
        put_u16s(&v, "Credentials initrd=1");
        put16(&v, 0);
        ev = mkev(12, MB_EV_IPL, v.b, v.n);
        set_digests(&ev, "070701 a cpio archive", 21);
        CHECK_EQ_INT(check(&ev, &conv), MB_INTEGRITY_MISMATCH);
        /* Binary EV_IPL: hex. */
        ev = mkev(8, MB_EV_IPL, "\x01\xfe", 2);
        decode(&ev);
        CHECK_HAS("\"hex\":\"01fe\"");
}

/* ---- EV_EVENT_TAG, EV_NO_ACTION ------------------------------------------ */

TEST(event_tag) {
        bb t = { .n = 0 }, b = { .n = 0 };
        put_u16s(&t, "\\loader\\entries\\debian.conf");
        put16(&t, 0);
        put32(&b, MB_TAG_BLS_ENTRY);
        put32(&b, (uint32_t) t.n);
        put(&b, t.b, t.n);
        mb_tcglog_event ev = mkev(12, MB_EV_EVENT_TAG, b.b, b.n);
        decode(&ev);
        CHECK_HAS("\"tag\":1836279810,\"tag_name\":\"mshim BLS entry\",\"text\":\"\\loader\\entries\\debian.conf\",\"encoding\":\"utf-16le\"");
        const char *conv;
        set_digests(&ev, b.b, b.n);
        CHECK_EQ_INT(check(&ev, &conv), MB_INTEGRITY_NOT_APPLICABLE);
        check_truncations(12, MB_EV_EVENT_TAG, b.b, b.n);
        b.n = 0;
        put32(&b, MB_TAG_LINUX_LOAD_OPTIONS);
        put32(&b, 3);
        put(&b, "\x80\x81\x82", 3);
        ev = mkev(9, MB_EV_EVENT_TAG, b.b, b.n);
        decode(&ev);
        CHECK_HAS("\"tag_name\":\"LOADED_IMAGE::LoadOptions\",\"hex\":\"808182\"");
        b.n = 0;
        put32(&b, 0xf5bc582a);
        put32(&b, 4);
        put(&b, "x=1\n", 4);
        ev = mkev(5, MB_EV_EVENT_TAG, b.b, b.n);
        decode(&ev);
        CHECK_HAS("\"tag_name\":\"systemd-boot loader.conf\",\"text\":\"x=1\n\",\"encoding\":\"ascii\"");
}

TEST(no_action) {
        bb b = { .n = 0 };
        put(&b, "Spec ID Event03", 16);
        put32(&b, 0);
        put8(&b, 0);
        put8(&b, 2);
        put8(&b, 0);
        put8(&b, 2);
        put32(&b, 3);
        put16(&b, MB_ALG_SHA1);
        put16(&b, 20);
        put16(&b, MB_ALG_SHA256);
        put16(&b, 32);
        put16(&b, MB_ALG_SM3_256);
        put16(&b, 32);
        put8(&b, 2);
        put(&b, "\xaa\xbb", 2);
        mb_tcglog_event ev = mkev(0, MB_EV_NO_ACTION, b.b, b.n);
        decode(&ev);
        CHECK_HAS("\"signature\":\"Spec ID Event03\",\"platform_class\":0,\"spec_version_major\":2,\"spec_version_minor\":0,");
        CHECK_HAS("\"uintn_size\":2,\"algorithms\":[{\"alg_id\":4,\"alg\":\"sha1\",\"digest_size\":20,}");
        CHECK_HAS("{\"alg_id\":18,\"alg\":\"sm3_256\",\"digest_size\":32,},],\"vendor_info\":\"aabb\"");
        CHECK_LACKS("error");
        const char *conv;
        CHECK_EQ_INT(check(&ev, &conv), MB_INTEGRITY_NOT_APPLICABLE);
        /* Prefixes shorter than the signature are plain hex, not errors;
         * longer ones are truncated Spec ID events. */
        check_truncations(0, MB_EV_NO_ACTION, b.b + 0, 0);
        for (size_t k = 17; k < b.n; k++) {
                ev = mkev(0, MB_EV_NO_ACTION, b.b, k);
                decode(&ev);
                CHECK_HAS("\"error\":");
        }
        mb_put_le32(b.b + 24, 0x40000000);
        ev = mkev(0, MB_EV_NO_ACTION, b.b, b.n);
        decode(&ev);
        CHECK_HAS("Spec ID algorithm count runs past the event");

        b.n = 0;
        put(&b, "StartupLocality", 16);
        put8(&b, 3);
        ev = mkev(0, MB_EV_NO_ACTION, b.b, b.n);
        decode(&ev);
        CHECK_HAS("\"signature\":\"StartupLocality\",\"startup_locality\":3,");
        ev.data_size = 16;
        decode(&ev);
        CHECK_HAS("StartupLocality byte missing");

        b.n = 0;
        put(&b, "SP800-155 Event\0", 16);
        put(&b, "\x01\x02", 2);
        ev = mkev(0, MB_EV_NO_ACTION, b.b, b.n);
        decode(&ev);
        CHECK_HAS("\"signature\":\"SP800-155 Event\",\"hex\":\"0102\"");
        ev = mkev(0, MB_EV_NO_ACTION, "\x01\x02\x03", 3);
        decode(&ev);
        CHECK_HAS("\"hex\":\"010203\"");
}

/* ---- the corpus of real logs --------------------------------------------- */

TEST(corpus_decode_and_check) {
        char dir[1024], path[2048];
        snprintf(dir, sizeof dir, "%s/eventlogs", tl_corpus_dir());
        DIR *d = opendir(dir);
        CHECK(d != NULL);
        if (!d)
                return;
        unsigned logs = 0, events = 0, ok = 0;
        struct dirent *de;
        while ((de = readdir(d))) {
                size_t l = strlen(de->d_name), n;
                if (l < 4 || strcmp(de->d_name + l - 4, ".bin"))
                        continue;
                snprintf(path, sizeof path, "%s/%s", dir, de->d_name);
                uint8_t *buf = tl_read_file(path, &n);
                mb_tcglog log;
                mb_tcglog_event ev;
                if (!buf || mb_tcglog_open(&log, buf, n) != MB_OK) {
                        free(buf);
                        continue;
                }
                logs++;
                while (mb_tcglog_next(&log, &ev) == MB_OK) {
                        const char *conv;
                        events++;
                        decode(&ev);
                        mb_integrity v = mb_evdata_check(&ev, &conv);
                        if (v == MB_INTEGRITY_MISMATCH) {
                                fprintf(stderr, "  %s: event %u (pcr %u, type 0x%x): MISMATCH\n",
                                        de->d_name, ev.number, ev.pcr, ev.type);
                                tl_case_failed = 1;
                        }
                        ok += v == MB_INTEGRITY_OK;
                }
                free(buf);
        }
        closedir(d);
        /* EXPECTED.json: 17 logs, 2 malformed; the 15 others hold 735
         * records (their headers included). */
        CHECK_EQ_INT(logs, 15);
        CHECK_EQ_INT(events, 735);
        CHECK(ok >= 500);
}

/* The verdict a caller of mb_evdata_check_deferred reaches: confirm each
 * deferred digest over the listed bytes, and on any mismatch fall back to
 * mb_evdata_check. */
static mb_integrity deferred_then_confirmed(const mb_tcglog_event *ev, const char **conv) {
        static const uint16_t algs[] = { MB_ALG_SHA384, MB_ALG_SHA512 };
        mb_integrity_deferred d;
        mb_integrity v = mb_evdata_check_deferred(ev, algs, 2, conv, &d);

        for (uint32_t k = 0; k < d.n_digests; k++) {
                const mb_tcglog_digest *g = &ev->digests[d.digest_index[k]];
                uint8_t got[MB_HASH_MAX];
                mb_hash h;
                CHECK(g->alg == MB_ALG_SHA384 || g->alg == MB_ALG_SHA512);
                mb_hash_init(&h, g->alg);
                mb_hash_update(&h, d.p, d.n);
                mb_hash_update(&h, d.suffix, d.suffix_n);
                mb_hash_final(&h, got);
                if (memcmp(got, g->bytes, g->size) != 0)
                        return mb_evdata_check(ev, conv);
        }
        return v;
}

/* Deferring SHA-384/512 never changes a verdict or a convention: on every
 * corpus event as logged, and with each of its digests corrupted in turn. */
TEST(check_deferred_agrees) {
        static const char *logs[] = { "qemu-ovmf-systemd-boot-linux61.bin", "tpm2-tools-event-uefiaction.bin",
                                      "tpm2-tools-event-uefivar.bin", "tpm2-tools-event-arch-linux.bin" };
        char path[2048];
        unsigned deferred_events = 0;

        for (size_t f = 0; f < MB_ARRAY_SIZE(logs); f++) {
                size_t n;
                mb_tcglog log;
                mb_tcglog_event ev;
                snprintf(path, sizeof path, "%s/eventlogs/%s", tl_corpus_dir(), logs[f]);
                uint8_t *buf = tl_read_file(path, &n);
                CHECK(buf && mb_tcglog_open(&log, buf, n) == MB_OK);
                if (!buf)
                        continue;
                while (mb_tcglog_next(&log, &ev) == MB_OK) {
                        for (int bad = -1; bad < (int) ev.n_digests; bad++) {
                                mb_tcglog_event e = ev;
                                uint8_t copy[MB_HASH_MAX];
                                const char *c1 = NULL, *c2 = NULL;
                                mb_integrity_deferred d;
                                static const uint16_t algs[] = { MB_ALG_SHA384, MB_ALG_SHA512 };
                                if (bad >= 0) {
                                        memcpy(copy, ev.digests[bad].bytes, ev.digests[bad].size);
                                        copy[0] ^= 1;
                                        e.digests[bad].bytes = copy;
                                }
                                mb_integrity full = mb_evdata_check(&e, &c1);
                                mb_integrity two = deferred_then_confirmed(&e, &c2);
                                CHECK_EQ_INT(two, full);
                                CHECK(c1 == c2);
                                mb_evdata_check_deferred(&e, algs, 2, &c2, &d);
                                deferred_events += bad < 0 && d.n_digests > 0;
                        }
                }
                free(buf);
        }
        /* The OVMF and uefiaction logs carry SHA-384/512 banks. */
        CHECK(deferred_events >= 20);
}

int main(void) {
        RUN(strbuf_formats);
        RUN(strbuf_utf16);
        RUN(strbuf_truncation);
        RUN(var_secureboot);
        RUN(var_db_signature_lists);
        RUN(var_siglist_malformed);
        RUN(var_boot_order_and_conventions);
        RUN(var_boot_option);
        RUN(var_header_malformed);
        RUN(var_authority);
        RUN(image_load_event);
        RUN(device_path_nodes);
        RUN(device_path_malformed);
        RUN(device_path_long_is_cut);
        RUN(gpt_event);
        RUN(blobs_and_tables);
        RUN(separator);
        RUN(actions_and_versions);
        RUN(sibling_event_types);
        RUN(ipl_grub);
        RUN(ipl_systemd_and_shim);
        RUN(event_tag);
        RUN(no_action);
        RUN(corpus_decode_and_check);
        RUN(check_deferred_agrees);
        TL_EXIT();
}
