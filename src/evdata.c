/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Event payload decoders and integrity rules (include/mb/evdata.h).
 *
 * Sources: TCG PC Client Platform Firmware Profile (PFP) 1.05, section 10.4
 * (event types and their data), UEFI 2.10 sections 3.1.3 (EFI_LOAD_OPTION),
 * 5.3 (GPT), 10.3 and 10.6 (device path nodes and their text form), 32.4
 * (EFI_SIGNATURE_LIST); the conventions of GRUB, systemd, shim and the Linux
 * EFI stub for what they log.
 *
 * Every reader walks a (pointer, size, offset) cursor and checks bounds with
 * mb_out_of_bounds before touching a byte; no length read from the log is
 * trusted. Decoders return NULL or a short description of what was wrong;
 * the caller then adds "error" and the raw "hex" so nothing is lost.
 */
#include "mb/evdata.h"
#include "mb/varstore.h"
#include "mb/sha.h"

/* Composed strings (device paths, names) are cut at this size and end in
 * "..." when cut; the emitter gets complete, valid UTF-8 either way. */
#define EVD_TEXT_MAX 4096

/* ---- byte cursor ------------------------------------------------------- */

typedef struct evd_rd {
        const uint8_t *p;
        size_t size, off;
} evd_rd;

static evd_rd rd_make(const uint8_t *p, size_t size) {
        return (evd_rd) { .p = p, .size = size, .off = 0 };
}

static size_t rd_left(const evd_rd *r) {
        return r->size - r->off;
}

static bool rd_take(evd_rd *r, size_t n, const uint8_t **ret) {
        if (mb_out_of_bounds(r->size, r->off, n))
                return false;
        *ret = r->p + r->off;
        r->off += n;
        return true;
}

static bool rd_u8(evd_rd *r, uint8_t *ret) {
        const uint8_t *q;
        if (!rd_take(r, 1, &q))
                return false;
        *ret = q[0];
        return true;
}

static bool rd_u16(evd_rd *r, uint16_t *ret) {
        const uint8_t *q;
        if (!rd_take(r, 2, &q))
                return false;
        *ret = mb_le16(q);
        return true;
}

static bool rd_u32(evd_rd *r, uint32_t *ret) {
        const uint8_t *q;
        if (!rd_take(r, 4, &q))
                return false;
        *ret = mb_le32(q);
        return true;
}

static bool rd_u64(evd_rd *r, uint64_t *ret) {
        const uint8_t *q;
        if (!rd_take(r, 8, &q))
                return false;
        *ret = mb_le64(q);
        return true;
}

/* ---- GUIDs ------------------------------------------------------------- */

/* EFI_GUID wire bytes from the registry form {Data1, Data2, Data3, Data4[8]}. */
#define EVD_GUID(a, b, c, d0, d1, d2, d3, d4, d5, d6, d7) { \
        (uint8_t) (a), (uint8_t) ((a) >> 8), (uint8_t) ((a) >> 16), (uint8_t) ((a) >> 24), \
        (uint8_t) (b), (uint8_t) ((b) >> 8), (uint8_t) (c), (uint8_t) ((c) >> 8), \
        d0, d1, d2, d3, d4, d5, d6, d7 }

static const uint8_t evd_guid_global[16] = EVD_GUID(0x8be4df61, 0x93ca, 0x11d2, 0xaa, 0x0d, 0x00, 0xe0, 0x98, 0x03, 0x2b, 0x8c);
static const uint8_t evd_guid_image_security[16] = EVD_GUID(0xd719b2cb, 0x3d3a, 0x4596, 0xa3, 0xbc, 0xda, 0xd0, 0x0e, 0x67, 0x65, 0x6f);
static const uint8_t evd_guid_shim[16] = EVD_GUID(0x605dab50, 0xe046, 0x4300, 0xab, 0xb6, 0x3d, 0xd8, 0x10, 0xdd, 0x8b, 0x23);
static const uint8_t evd_guid_cert_sha256[16] = EVD_GUID(0xc1c41626, 0x504c, 0x4092, 0xac, 0xa9, 0x41, 0xf9, 0x36, 0x93, 0x43, 0x28);
static const uint8_t evd_guid_cert_x509[16] = EVD_GUID(0xa5c059a1, 0x94e4, 0x4aa7, 0x87, 0xb5, 0xab, 0x15, 0x5c, 0x2b, 0xf0, 0x72);

typedef struct evd_guid_name {
        uint8_t guid[16];
        const char *name;
} evd_guid_name;

/* Names shown next to GUIDs: signature types (UEFI 32.4.1), variable
 * vendors, and the configuration tables firmware hands off (UEFI 4.6). */
static const evd_guid_name evd_guid_names[] = {
        { EVD_GUID(0x8be4df61, 0x93ca, 0x11d2, 0xaa, 0x0d, 0x00, 0xe0, 0x98, 0x03, 0x2b, 0x8c), "EFI_GLOBAL_VARIABLE" },
        { EVD_GUID(0xd719b2cb, 0x3d3a, 0x4596, 0xa3, 0xbc, 0xda, 0xd0, 0x0e, 0x67, 0x65, 0x6f), "EFI_IMAGE_SECURITY_DATABASE" },
        { EVD_GUID(0x605dab50, 0xe046, 0x4300, 0xab, 0xb6, 0x3d, 0xd8, 0x10, 0xdd, 0x8b, 0x23), "SHIM_LOCK" },
        { EVD_GUID(0xc1c41626, 0x504c, 0x4092, 0xac, 0xa9, 0x41, 0xf9, 0x36, 0x93, 0x43, 0x28), "EFI_CERT_SHA256" },
        { EVD_GUID(0xa5c059a1, 0x94e4, 0x4aa7, 0x87, 0xb5, 0xab, 0x15, 0x5c, 0x2b, 0xf0, 0x72), "EFI_CERT_X509" },
        { EVD_GUID(0x826ca512, 0xcf10, 0x4ac9, 0xb1, 0x87, 0xbe, 0x01, 0x49, 0x66, 0x31, 0xbd), "EFI_CERT_SHA1" },
        { EVD_GUID(0x3c5766e8, 0x269c, 0x4e34, 0xaa, 0x14, 0xed, 0x77, 0x6e, 0x85, 0xb3, 0xb6), "EFI_CERT_RSA2048" },
        { EVD_GUID(0x3bd2a492, 0x96c0, 0x4079, 0xb4, 0x20, 0xfc, 0xf9, 0x8e, 0xf1, 0x03, 0xed), "EFI_CERT_X509_SHA256" },
        { EVD_GUID(0x8868e871, 0xe4f1, 0x11d3, 0xbc, 0x22, 0x00, 0x80, 0xc7, 0x3c, 0x88, 0x81), "ACPI_20_TABLE" },
        { EVD_GUID(0xeb9d2d30, 0x2d88, 0x11d3, 0x9a, 0x16, 0x00, 0x90, 0x27, 0x3f, 0xc1, 0x4d), "ACPI_TABLE" },
        { EVD_GUID(0xeb9d2d31, 0x2d88, 0x11d3, 0x9a, 0x16, 0x00, 0x90, 0x27, 0x3f, 0xc1, 0x4d), "SMBIOS_TABLE" },
        { EVD_GUID(0xf2fd1544, 0x9794, 0x4a2c, 0x99, 0x2e, 0xe5, 0xbb, 0xcf, 0x20, 0xe3, 0x94), "SMBIOS3_TABLE" },
        { EVD_GUID(0x5568e427, 0x68fc, 0x4f3d, 0xac, 0x74, 0xca, 0x55, 0x52, 0x31, 0xcc, 0x68), "LINUX_EFI_INITRD_MEDIA" },
};

static bool guid_eq(const uint8_t *a, const uint8_t *b) {
        return mb_memcmp(a, b, 16) == 0;
}

static const char *guid_name(const uint8_t *g) {
        for (size_t i = 0; i < MB_ARRAY_SIZE(evd_guid_names); i++)
                if (guid_eq(g, evd_guid_names[i].guid))
                        return evd_guid_names[i].name;
        return NULL;
}

/* ---- text helpers ------------------------------------------------------ */

typedef struct evd_text {
        mb_strbuf b;
        char st[EVD_TEXT_MAX + 3]; /* room for the "..." truncation mark */
} evd_text;

static void text_init(evd_text *t) {
        mb_strbuf_init(&t->b, t->st, EVD_TEXT_MAX);
}

static void text_emit(mb_emit *e, const char *key, evd_text *t) {
        size_t n = t->b.len;
        if (t->b.truncated) {
                mb_memcpy(t->st + n, "...", 3);
                n += 3;
        }
        mb_emit_str(e, key, t->st, n);
}

static void emit_guid(mb_emit *e, const char *key, const uint8_t *g) {
        char st[40];
        mb_strbuf b;
        mb_strbuf_init(&b, st, sizeof st);
        mb_strbuf_guid(&b, g);
        mb_emit_str(e, key, st, b.len);
}

/* A GUID plus, when we know it, its symbolic name under "<key>_name". */
static void emit_named_guid(mb_emit *e, const char *key, const char *name_key, const uint8_t *g) {
        const char *name = guid_name(g);
        emit_guid(e, key, g);
        if (name)
                mb_emit_cstr(e, name_key, name);
}

static void emit_utf16(mb_emit *e, const char *key, const uint8_t *p, size_t n_units) {
        evd_text t;
        text_init(&t);
        mb_strbuf_utf16le(&t.b, p, n_units);
        text_emit(e, key, &t);
}

static bool is_texty(uint8_t c) {
        return (c >= 0x20 && c < 0x7f) || c == '\t' || c == '\n' || c == '\r';
}

/* Printable ASCII up to the first NUL, and nothing but NULs after it. */
static bool looks_ascii(const uint8_t *p, size_t n) {
        size_t i = 0;
        while (i < n && p[i] != 0) {
                if (!is_texty(p[i]))
                        return false;
                i++;
        }
        for (; i < n; i++)
                if (p[i] != 0)
                        return false;
        return n > 0;
}

/* UTF-16LE of ASCII text: every unit's high byte zero, printable up to the
 * first NUL unit, NUL units after it. Non-Latin UTF-16 is not recognised;
 * it falls back to hex, which loses nothing. An odd size is accepted when
 * the extra byte is 0: systemd-boot before v250 logged its PCR 8 command
 * line one byte short of the UTF-16 NUL (tpm2-tools-event-arch-linux.bin). */
static bool looks_utf16(const uint8_t *p, size_t n) {
        size_t i = 0;
        if (n % 2 != 0 && p[n - 1] == 0)
                n--;
        if (n < 2 || n % 2 != 0)
                return false;
        for (; i < n && mb_le16(p + i) != 0; i += 2)
                if (p[i + 1] != 0 || !is_texty(p[i]))
                        return false;
        for (; i < n; i++)
                if (p[i] != 0)
                        return false;
        return true;
}

/* Bytes of UTF-16LE text before its first NUL unit. */
static size_t utf16_len(const uint8_t *p, size_t n) {
        size_t i = 0;
        while (i + 1 < n && mb_le16(p + i) != 0)
                i += 2;
        return i;
}

/* Length of ASCII text without its trailing NULs. */
static size_t ascii_len(const uint8_t *p, size_t n) {
        while (n > 0 && p[n - 1] == 0)
                n--;
        return n;
}

/* Emit text if the bytes are text (UTF-16LE or ASCII, named under
 * "encoding"), otherwise hex. Returns whether it was text. */
static bool emit_text_or_hex(mb_emit *e, const uint8_t *p, size_t n) {
        if (looks_utf16(p, n)) {
                emit_utf16(e, "text", p, n / 2);
                mb_emit_cstr(e, "encoding", "utf-16le");
                return true;
        }
        if (looks_ascii(p, n)) {
                mb_emit_str(e, "text", (const char *) p, ascii_len(p, n));
                mb_emit_cstr(e, "encoding", "ascii");
                return true;
        }
        mb_emit_hex(e, "hex", p, n);
        return false;
}

/* UTF-16 name from the log equals an ASCII literal. */
static bool utf16_eq(const uint8_t *u, size_t n_units, const char *lit) {
        size_t i = 0;
        for (; i < n_units; i++) {
                if (lit[i] == '\0' || mb_le16(u + 2 * i) != (uint8_t) lit[i])
                        return false;
        }
        return lit[i] == '\0';
}

static void emit_sha256_of(mb_emit *e, const char *key, const uint8_t *p, size_t n) {
        uint8_t d[MB_HASH_MAX];
        if (mb_hash_buf(MB_ALG_SHA256, p, n, d) == MB_OK)
                mb_emit_hex(e, key, d, 32);
}

/* ---- device paths (UEFI 10.3 nodes, 10.6 text form) -------------------- */

static void dp_guid_args(mb_strbuf *b, const char *fn, const uint8_t *body, size_t n) {
        mb_strbuf_puts(b, fn);
        mb_strbuf_puts(b, "(");
        mb_strbuf_guid(b, body);
        if (n > 16) {
                mb_strbuf_puts(b, ",");
                mb_strbuf_hex(b, body + 16, n - 16);
        }
        mb_strbuf_puts(b, ")");
}

static void dp_hexnums(mb_strbuf *b, const char *fn, const uint64_t *v, size_t n) {
        mb_strbuf_puts(b, fn);
        mb_strbuf_puts(b, "(");
        for (size_t i = 0; i < n; i++) {
                if (i)
                        mb_strbuf_puts(b, ",");
                mb_strbuf_hexnum(b, v[i]);
        }
        mb_strbuf_puts(b, ")");
}

static void dp_generic(mb_strbuf *b, uint8_t type, uint8_t sub, const uint8_t *body, size_t n) {
        mb_strbuf_puts(b, "Path(");
        mb_strbuf_u64(b, type);
        mb_strbuf_puts(b, ",");
        mb_strbuf_u64(b, sub);
        mb_strbuf_puts(b, ",");
        mb_strbuf_hex(b, body, n);
        mb_strbuf_puts(b, ")");
}

/* ACPI _HID in EISA form: vendor "PNP" compressed to 0x41d0 in the low
 * word, product id in the high word (UEFI 10.3.3). */
#define EVD_EISA_PNP 0x41d0u

static bool dp_acpi(mb_strbuf *b, const uint8_t *body, size_t n) {
        if (n < 8)
                return false;
        uint32_t hid = mb_le32(body), uid = mb_le32(body + 4);
        if (hid == (0x0a03u << 16 | EVD_EISA_PNP) || hid == (0x0a08u << 16 | EVD_EISA_PNP)) {
                mb_strbuf_puts(b, hid >> 16 == 0x0a03 ? "PciRoot(" : "PcieRoot(");
                mb_strbuf_hexnum(b, uid);
                mb_strbuf_puts(b, ")");
                return true;
        }
        mb_strbuf_puts(b, "Acpi(");
        if ((hid & 0xffff) == EVD_EISA_PNP) {
                static const char dig[] = "0123456789ABCDEF";
                char pnp[7] = { 'P', 'N', 'P', dig[(hid >> 28) & 0xf], dig[(hid >> 24) & 0xf],
                                dig[(hid >> 20) & 0xf], dig[(hid >> 16) & 0xf] };
                mb_strbuf_put(b, pnp, sizeof pnp);
        } else {
                mb_strbuf_hexnum(b, hid);
        }
        mb_strbuf_puts(b, ",");
        mb_strbuf_hexnum(b, uid);
        mb_strbuf_puts(b, ")");
        return true;
}

/* HD(part,MBR|GPT,signature,start,size), UEFI 10.3.5.1: signature type 1
 * is a 32-bit MBR disk signature, 2 a GPT partition GUID. */
static bool dp_hd(mb_strbuf *b, const uint8_t *body, size_t n) {
        if (n < 38)
                return false;
        const uint8_t *sig = body + 20;
        uint8_t sig_type = body[37];
        mb_strbuf_puts(b, "HD(");
        mb_strbuf_u64(b, mb_le32(body));
        if (sig_type == 1) {
                mb_strbuf_puts(b, ",MBR,");
                mb_strbuf_hexnum(b, mb_le32(sig));
        } else if (sig_type == 2) {
                mb_strbuf_puts(b, ",GPT,");
                mb_strbuf_guid(b, sig);
        } else {
                mb_strbuf_puts(b, ",");
                mb_strbuf_u64(b, sig_type);
                mb_strbuf_puts(b, ",");
                mb_strbuf_hex(b, sig, 16);
        }
        mb_strbuf_puts(b, ",");
        mb_strbuf_hexnum(b, mb_le64(body + 4));
        mb_strbuf_puts(b, ",");
        mb_strbuf_hexnum(b, mb_le64(body + 12));
        mb_strbuf_puts(b, ")");
        return true;
}

/* NVMe(nsid,eui-64 bytes as stored, dash separated), UEFI 10.3.4.22. */
static bool dp_nvme(mb_strbuf *b, const uint8_t *body, size_t n) {
        if (n < 12)
                return false;
        mb_strbuf_puts(b, "NVMe(");
        mb_strbuf_hexnum(b, mb_le32(body));
        mb_strbuf_puts(b, ",");
        for (size_t i = 0; i < 8; i++) {
                if (i)
                        mb_strbuf_puts(b, "-");
                mb_strbuf_hex(b, body + 4 + i, 1);
        }
        mb_strbuf_puts(b, ")");
        return true;
}

/* MAC(address,iftype): ifType 0 and 1 (Ethernet) use 6 of the 32 bytes. */
static bool dp_mac(mb_strbuf *b, const uint8_t *body, size_t n) {
        if (n < 33)
                return false;
        mb_strbuf_puts(b, "MAC(");
        mb_strbuf_hex(b, body, body[32] <= 1 ? 6 : 32);
        mb_strbuf_puts(b, ",");
        mb_strbuf_hexnum(b, body[32]);
        mb_strbuf_puts(b, ")");
        return true;
}

static bool dp_printable(const uint8_t *p, size_t n) {
        for (size_t i = 0; i < n; i++)
                if (p[i] < 0x20 || p[i] >= 0x7f)
                        return false;
        return true;
}

/* Device path node type/subtype pairs, UEFI 10.3.2-10.3.6 and the PI spec
 * (firmware volume media nodes 6 and 7). */
#define DP(t, s) ((uint16_t) ((t) << 8 | (s)))

/* One node's text; false when its body is too short for its type, so the
 * caller falls back to the generic Path() form. */
static bool dp_node(mb_strbuf *b, uint8_t type, uint8_t sub, const uint8_t *body, size_t n) {
        uint64_t v[3];
        switch (DP(type, sub)) {
        case DP(1, 1): /* PCI: function, then device; text is Pci(dev,func) */
                if (n < 2)
                        return false;
                v[0] = body[1];
                v[1] = body[0];
                dp_hexnums(b, "Pci", v, 2);
                return true;
        case DP(1, 3):
                if (n < 20)
                        return false;
                v[0] = mb_le32(body);
                v[1] = mb_le64(body + 4);
                v[2] = mb_le64(body + 12);
                dp_hexnums(b, "MemoryMapped", v, 3);
                return true;
        case DP(1, 4):
        case DP(3, 10):
        case DP(4, 3):
                if (n < 16)
                        return false;
                dp_guid_args(b, type == 1 ? "VenHw" : type == 3 ? "VenMsg" : "VenMedia", body, n);
                return true;
        case DP(1, 5):
                if (n < 4)
                        return false;
                v[0] = mb_le32(body);
                dp_hexnums(b, "Ctrl", v, 1);
                return true;
        case DP(2, 1):
                return dp_acpi(b, body, n);
        case DP(2, 3):
                if (n < 4)
                        return false;
                v[0] = mb_le32(body);
                dp_hexnums(b, "AcpiAdr", v, 1);
                return true;
        case DP(3, 2):
                if (n < 4)
                        return false;
                v[0] = mb_le16(body);
                v[1] = mb_le16(body + 2);
                dp_hexnums(b, "Scsi", v, 2);
                return true;
        case DP(3, 5):
                if (n < 2)
                        return false;
                v[0] = body[0];
                v[1] = body[1];
                dp_hexnums(b, "USB", v, 2);
                return true;
        case DP(3, 11):
                return dp_mac(b, body, n);
        case DP(3, 18):
                if (n < 6)
                        return false;
                v[0] = mb_le16(body);
                v[1] = mb_le16(body + 2);
                v[2] = mb_le16(body + 4);
                dp_hexnums(b, "Sata", v, 3);
                return true;
        case DP(3, 23):
                return dp_nvme(b, body, n);
        case DP(3, 24):
                if (!dp_printable(body, n))
                        return false;
                mb_strbuf_puts(b, "Uri(");
                mb_strbuf_put(b, (const char *) body, n);
                mb_strbuf_puts(b, ")");
                return true;
        case DP(4, 1):
                return dp_hd(b, body, n);
        case DP(4, 2):
                if (n < 20)
                        return false;
                v[0] = mb_le32(body);
                v[1] = mb_le64(body + 4);
                v[2] = mb_le64(body + 12);
                dp_hexnums(b, "CDROM", v, 3);
                return true;
        case DP(4, 4):
                mb_strbuf_utf16le(b, body, n / 2);
                return true;
        case DP(4, 6):
        case DP(4, 7):
                if (n < 16)
                        return false;
                dp_guid_args(b, sub == 6 ? "FvFile" : "Fv", body, 16);
                return true;
        case DP(4, 8): /* u32 reserved, then start and end offsets */
                if (n < 20)
                        return false;
                v[0] = mb_le64(body + 4);
                v[1] = mb_le64(body + 12);
                dp_hexnums(b, "Offset", v, 2);
                return true;
        }
        return false;
}

/* Text form of a device path of exactly n bytes. Nodes are separated by
 * "/", instances (end-instance nodes, and further paths after an
 * end-entire node as in EFI_LOAD_OPTION.FilePathList) by ",". */
static const char *dp_to_text(mb_strbuf *b, const uint8_t *p, size_t n) {
        evd_rd r = rd_make(p, n);
        bool first = true;
        while (rd_left(&r) > 0) {
                const uint8_t *hdr, *body;
                if (!rd_take(&r, 4, &hdr))
                        return "device path node header truncated";
                uint16_t len = mb_le16(hdr + 2);
                if (len < 4)
                        return "device path node shorter than its header";
                if (!rd_take(&r, len - 4u, &body))
                        return "device path node runs past the end";
                if (hdr[0] == 0x7f) {
                        if (rd_left(&r) > 0)
                                mb_strbuf_puts(b, ",");
                        first = true;
                        continue;
                }
                if (!first)
                        mb_strbuf_puts(b, "/");
                first = false;
                if (!dp_node(b, hdr[0], hdr[1], body, len - 4u))
                        dp_generic(b, hdr[0], hdr[1], body, len - 4u);
        }
        return NULL;
}

static const char *emit_device_path(mb_emit *e, const char *key, const uint8_t *p, size_t n) {
        evd_text t;
        text_init(&t);
        const char *err = dp_to_text(&t.b, p, n);
        text_emit(e, key, &t);
        return err;
}

/* ---- EFI_SIGNATURE_LIST (UEFI 32.4.1) ---------------------------------- */

static void emit_signature(mb_emit *e, const uint8_t *type, const uint8_t *sig, size_t n) {
        mb_emit_begin_obj(e, NULL);
        emit_named_guid(e, "owner", "owner_name", sig);
        if (guid_eq(type, evd_guid_cert_sha256) && n == 16 + 32) {
                mb_emit_hex(e, "sha256", sig + 16, 32);
        } else if (guid_eq(type, evd_guid_cert_x509)) {
                mb_emit_u64(e, "cert_size", n - 16);
                emit_sha256_of(e, "cert_sha256", sig + 16, n - 16);
        } else {
                mb_emit_hex(e, "data", sig + 16, n - 16);
        }
        mb_emit_end_obj(e);
}

/* EFI_SIGNATURE_LISTs, walked by the one parser (src/siglist.c). */
static const char *decode_siglists(mb_emit *e, const uint8_t *p, size_t n) {
        const char *why = NULL;
        size_t off = 0;
        mb_siglist l;
        mb_err r;

        mb_emit_begin_arr(e, "signature_lists");
        while ((r = mb_siglist_next_why(p, n, &off, &l, &why)) == MB_OK) {
                mb_emit_begin_obj(e, NULL);
                emit_named_guid(e, "type", "type_name", l.type.b);
                mb_emit_u64(e, "signature_size", l.sig_size);
                mb_emit_begin_arr(e, "signatures");
                for (uint32_t i = 0; i < l.n_sigs; i++)
                        emit_signature(e, l.type.b, l.sigs + (size_t) i * l.sig_size, l.sig_size);
                mb_emit_end_arr(e);
                mb_emit_end_obj(e);
        }
        mb_emit_end_arr(e);
        return r == MB_END ? NULL : why;
}

/* ---- UEFI variables ---------------------------------------------------- */

static void boot_number(mb_strbuf *b, uint16_t n) {
        static const char dig[] = "0123456789ABCDEF";
        char s[8] = { 'B', 'o', 'o', 't', dig[n >> 12], dig[(n >> 8) & 0xf], dig[(n >> 4) & 0xf], dig[n & 0xf] };
        mb_strbuf_put(b, s, sizeof s);
}

static void emit_boot_number(mb_emit *e, const char *key, uint16_t n) {
        char st[16];
        mb_strbuf b;
        mb_strbuf_init(&b, st, sizeof st);
        boot_number(&b, n);
        mb_emit_str(e, key, st, b.len);
}

static const char *decode_boot_order(mb_emit *e, const uint8_t *p, size_t n) {
        mb_emit_begin_arr(e, "boot_order");
        for (size_t i = 0; i + 1 < n; i += 2)
                emit_boot_number(e, NULL, mb_le16(p + i));
        mb_emit_end_arr(e);
        return n % 2 ? "BootOrder has an odd size" : NULL;
}

/* EFI_LOAD_OPTION, UEFI 3.1.3. */
static const char *decode_load_option(mb_emit *e, const uint8_t *p, size_t n) {
        evd_rd r = rd_make(p, n);
        uint32_t attr;
        uint16_t fpl_len;
        const uint8_t *desc, *fpl, *unit;
        if (!rd_u32(&r, &attr) || !rd_u16(&r, &fpl_len))
                return "load option header truncated";
        mb_emit_u64(e, "attributes", attr);
        mb_emit_bool(e, "active", attr & 1); /* LOAD_OPTION_ACTIVE */
        desc = r.p + r.off;
        size_t units = 0;
        for (;; units++) {
                if (!rd_take(&r, 2, &unit))
                        return "load option description has no NUL";
                if (mb_le16(unit) == 0)
                        break;
        }
        emit_utf16(e, "description", desc, units);
        if (!rd_take(&r, fpl_len, &fpl))
                return "load option device path runs past the data";
        const char *err = emit_device_path(e, "device_path", fpl, fpl_len);
        if (rd_left(&r) > 0)
                mb_emit_hex(e, "optional_data", r.p + r.off, rd_left(&r));
        return err;
}

/* "Boot" followed by four upper-case hex digits (UEFI 3.1.1). */
static bool is_boot_option(const uint8_t *name, size_t units) {
        if (units != 8 || !utf16_eq(name, 4, "Boot"))
                return false;
        for (size_t i = 4; i < 8; i++) {
                uint16_t c = mb_le16(name + 2 * i);
                if (!((c >= '0' && c <= '9') || (c >= 'A' && c <= 'F')))
                        return false;
        }
        return true;
}

typedef enum evd_var_kind {
        VAR_BOOL,       /* one byte, non-zero = enabled */
        VAR_SIGLISTS,   /* a sequence of EFI_SIGNATURE_LIST */
        VAR_BOOT_ORDER, /* u16 option numbers */
        VAR_BOOT_NUM,   /* one u16 option number */
        VAR_TEXT,       /* ASCII */
} evd_var_kind;

typedef struct evd_var {
        const char *name;
        const uint8_t *vendor;
        evd_var_kind kind;
} evd_var;

/* Variables PFP 3.3.4.8 and 8.2 require in PCR 7 and 1, plus shim's. */
static const evd_var evd_vars[] = {
        { "SecureBoot", evd_guid_global, VAR_BOOL },
        { "SetupMode", evd_guid_global, VAR_BOOL },
        { "AuditMode", evd_guid_global, VAR_BOOL },
        { "DeployedMode", evd_guid_global, VAR_BOOL },
        { "PK", evd_guid_global, VAR_SIGLISTS },
        { "KEK", evd_guid_global, VAR_SIGLISTS },
        { "db", evd_guid_image_security, VAR_SIGLISTS },
        { "dbx", evd_guid_image_security, VAR_SIGLISTS },
        { "dbt", evd_guid_image_security, VAR_SIGLISTS },
        { "dbr", evd_guid_image_security, VAR_SIGLISTS },
        { "BootOrder", evd_guid_global, VAR_BOOT_ORDER },
        { "BootNext", evd_guid_global, VAR_BOOT_NUM },
        { "BootCurrent", evd_guid_global, VAR_BOOT_NUM },
        { "MokList", evd_guid_shim, VAR_SIGLISTS },
        { "MokListX", evd_guid_shim, VAR_SIGLISTS },
        { "MokSBState", evd_guid_shim, VAR_BOOL },
        { "MokListTrusted", evd_guid_shim, VAR_BOOL },
        { "SbatLevel", evd_guid_shim, VAR_TEXT },
};

static const evd_var *var_lookup(const uint8_t *guid, const uint8_t *name, size_t units) {
        for (size_t i = 0; i < MB_ARRAY_SIZE(evd_vars); i++)
                if (guid_eq(guid, evd_vars[i].vendor) && utf16_eq(name, units, evd_vars[i].name))
                        return &evd_vars[i];
        return NULL;
}

static const char *decode_var_kind(mb_emit *e, evd_var_kind kind, const uint8_t *p, size_t n) {
        switch (kind) {
        case VAR_BOOL:
                if (n != 1)
                        break;
                mb_emit_bool(e, "enabled", p[0] != 0);
                return NULL;
        case VAR_SIGLISTS:
                return decode_siglists(e, p, n);
        case VAR_BOOT_ORDER:
                return decode_boot_order(e, p, n);
        case VAR_BOOT_NUM:
                if (n != 2)
                        break;
                /* BootNext or BootCurrent: the variable's name says which. */
                emit_boot_number(e, "boot_number", mb_le16(p));
                return NULL;
        case VAR_TEXT:
                if (!looks_ascii(p, n))
                        break;
                mb_emit_str(e, "text", (const char *) p, ascii_len(p, n));
                return NULL;
        }
        mb_emit_hex(e, "data", p, n);
        return NULL;
}

/* EV_EFI_VARIABLE_AUTHORITY (PFP 10.4.4): firmware logs the db entry that
 * verified an image, an EFI_SIGNATURE_DATA {owner GUID, DER certificate};
 * shim logs its vendor certificate ("Shim") as bare DER and its 1-byte
 * and text variables (MokListTrusted, SbatLevel) as themselves. A DER
 * certificate starts with a SEQUENCE tag, 0x30. */
static void decode_authority(mb_emit *e, const uint8_t *p, size_t n) {
        if (n > 16 && p[16] == 0x30) {
                emit_named_guid(e, "owner", "owner_name", p);
                mb_emit_u64(e, "cert_size", n - 16);
                emit_sha256_of(e, "cert_sha256", p + 16, n - 16);
        } else if (n > 0 && p[0] == 0x30) {
                mb_emit_u64(e, "cert_size", n);
                emit_sha256_of(e, "cert_sha256", p, n);
        } else if (n == 1) {
                mb_emit_bool(e, "enabled", p[0] != 0);
        } else {
                emit_text_or_hex(e, p, n);
        }
}

static const char *decode_var_value(mb_emit *e, uint32_t type, const uint8_t *guid,
                                    const uint8_t *name, size_t units, const uint8_t *p, size_t n) {
        const evd_var *v = var_lookup(guid, name, units);
        /* An authority event named "db" holds one entry of db, not db. */
        if (type == MB_EV_EFI_VARIABLE_AUTHORITY) {
                decode_authority(e, p, n);
                return NULL;
        }
        if (v)
                return decode_var_kind(e, v->kind, p, n);
        if (guid_eq(guid, evd_guid_global) && is_boot_option(name, units))
                return decode_load_option(e, p, n);
        mb_emit_hex(e, "data", p, n);
        return NULL;
}

typedef struct evd_var_hdr {
        const uint8_t *guid, *name, *data;
        size_t name_units, data_size;
        size_t trailing; /* bytes after the data: old shim logs its struct padding */
} evd_var_hdr;

/* UEFI_VARIABLE_DATA, PFP 10.4.4; lengths checked against what is left. */
static const char *parse_var(const uint8_t *p, size_t n, evd_var_hdr *ret) {
        evd_rd r = rd_make(p, n);
        evd_var_hdr h;
        uint64_t name_units, data_size;
        if (!rd_take(&r, 16, &h.guid) || !rd_u64(&r, &name_units) || !rd_u64(&r, &data_size))
                return "variable header truncated";
        /* Compared before the multiplication, so name_units * 2 cannot wrap. */
        if (name_units > rd_left(&r) / 2 || !rd_take(&r, (size_t) name_units * 2, &h.name))
                return "variable name runs past the event";
        h.name_units = (size_t) name_units;
        if (data_size > rd_left(&r) || !rd_take(&r, (size_t) data_size, &h.data))
                return "variable data runs past the event";
        h.data_size = (size_t) data_size;
        h.trailing = rd_left(&r);
        *ret = h;
        return NULL;
}

mb_err mb_evdata_variable(const uint8_t *p, size_t n, mb_uefi_variable *ret) {
        evd_var_hdr h;

        if (parse_var(p, n, &h))
                return MB_ERR_TRUNCATED;
        *ret = (mb_uefi_variable) { h.guid, h.name, h.data, h.name_units, h.data_size, h.trailing };
        return MB_OK;
}

static const char *decode_variable(const mb_tcglog_event *ev, mb_emit *e) {
        evd_var_hdr h;
        const char *err = parse_var(ev->data, ev->data_size, &h);
        if (err)
                return err;
        emit_named_guid(e, "guid", "vendor", h.guid);
        emit_utf16(e, "name", h.name, h.name_units);
        mb_emit_u64(e, "data_size", h.data_size);
        if (h.trailing)
                mb_emit_u64(e, "trailing_bytes", h.trailing);
        return decode_var_value(e, ev->type, h.guid, h.name, h.name_units, h.data, h.data_size);
}

/* ---- images, GPT, blobs, tables ---------------------------------------- */

/* UEFI_IMAGE_LOAD_EVENT, PFP 10.4.3. */
static const char *decode_image(const mb_tcglog_event *ev, mb_emit *e) {
        evd_rd r = rd_make(ev->data, ev->data_size);
        uint64_t loc, len, link, dp_len;
        const uint8_t *dp;
        if (!rd_u64(&r, &loc) || !rd_u64(&r, &len) || !rd_u64(&r, &link) || !rd_u64(&r, &dp_len))
                return "image load event header truncated";
        mb_emit_u64(e, "image_location", loc);
        mb_emit_u64(e, "image_length", len);
        mb_emit_u64(e, "link_time_address", link);
        if (dp_len > rd_left(&r) || !rd_take(&r, (size_t) dp_len, &dp))
                return "device path length runs past the event";
        return emit_device_path(e, "device_path", dp, (size_t) dp_len);
}

/* EFI_PARTITION_ENTRY, UEFI 5.3.3: the name is 36 UTF-16 units at 56. */
static void emit_partition(mb_emit *e, const uint8_t *p, size_t n) {
        mb_emit_begin_obj(e, NULL);
        emit_guid(e, "type_guid", p);
        emit_guid(e, "unique_guid", p + 16);
        mb_emit_u64(e, "first_lba", mb_le64(p + 32));
        mb_emit_u64(e, "last_lba", mb_le64(p + 40));
        mb_emit_u64(e, "attributes", mb_le64(p + 48));
        emit_utf16(e, "name", p + 56, (n - 56) / 2 < 36 ? (n - 56) / 2 : 36);
        mb_emit_end_obj(e);
}

/* UEFI_GPT_DATA, PFP 10.4.6: the 92-byte EFI_PARTITION_TABLE_HEADER
 * (UEFI 5.3.2), a u64 count, then that many entries of the header's
 * SizeOfPartitionEntry bytes. */
#define EVD_GPT_HDR_SIZE 92
#define EVD_GPT_ENTRY_MIN 128 /* UEFI 5.3.2: 128 x 2^n */

static const char *decode_gpt(const mb_tcglog_event *ev, mb_emit *e) {
        evd_rd r = rd_make(ev->data, ev->data_size);
        const uint8_t *h, *ent;
        uint64_t count;
        if (!rd_take(&r, EVD_GPT_HDR_SIZE, &h) || !rd_u64(&r, &count))
                return "GPT header truncated";
        if (mb_memcmp(h, "EFI PART", 8) != 0)
                return "GPT header signature is not \"EFI PART\"";
        uint32_t entry_size = mb_le32(h + 84);
        emit_guid(e, "disk_guid", h + 56);
        mb_emit_u64(e, "partition_entry_lba", mb_le64(h + 72));
        mb_emit_u64(e, "number_of_entries", mb_le32(h + 80));
        mb_emit_u64(e, "entry_size", entry_size);
        mb_emit_u64(e, "number_of_partitions", count);
        if (entry_size < EVD_GPT_ENTRY_MIN)
                return "GPT entry size below 128";
        const char *err = NULL;
        mb_emit_begin_arr(e, "partitions");
        for (uint64_t i = 0; i < count; i++) {
                if (!rd_take(&r, entry_size, &ent)) {
                        err = "partition entries run past the event";
                        break;
                }
                emit_partition(e, ent, entry_size);
        }
        mb_emit_end_arr(e);
        return err;
}

/* UEFI_PLATFORM_FIRMWARE_BLOB, PFP 10.4.2. */
static const char *decode_blob_at(evd_rd *r, mb_emit *e) {
        uint64_t base, len;
        if (!rd_u64(r, &base) || !rd_u64(r, &len))
                return "firmware blob truncated";
        mb_emit_u64(e, "base", base);
        mb_emit_u64(e, "length", len);
        return rd_left(r) ? "bytes after the firmware blob" : NULL;
}

/* The u8-size-prefixed ASCII description of the "2" variants (PFP 10.4.2). */
static const char *decode_description(evd_rd *r, mb_emit *e) {
        uint8_t n;
        const uint8_t *d;
        if (!rd_u8(r, &n) || !rd_take(r, n, &d))
                return "description truncated";
        if (looks_ascii(d, n))
                mb_emit_str(e, "description", (const char *) d, ascii_len(d, n));
        else
                mb_emit_hex(e, "description_hex", d, n);
        return NULL;
}

static const char *decode_blob(const mb_tcglog_event *ev, mb_emit *e) {
        evd_rd r = rd_make(ev->data, ev->data_size);
        if (ev->type == MB_EV_EFI_PLATFORM_FIRMWARE_BLOB2) {
                const char *err = decode_description(&r, e);
                if (err)
                        return err;
        }
        return decode_blob_at(&r, e);
}

/* UEFI_HANDOFF_TABLE_POINTERS(2), PFP 10.4.2: {GUID; u64 pointer}[]. */
static const char *decode_handoff(const mb_tcglog_event *ev, mb_emit *e) {
        evd_rd r = rd_make(ev->data, ev->data_size);
        uint64_t count;
        const uint8_t *t;
        const char *err = NULL;
        if (ev->type == MB_EV_EFI_HANDOFF_TABLES2 && (err = decode_description(&r, e)))
                return err;
        if (!rd_u64(&r, &count))
                return "table count truncated";
        mb_emit_u64(e, "number_of_tables", count);
        mb_emit_begin_arr(e, "tables");
        for (uint64_t i = 0; i < count; i++) {
                if (!rd_take(&r, 24, &t)) {
                        err = "tables run past the event";
                        break;
                }
                mb_emit_begin_obj(e, NULL);
                emit_named_guid(e, "guid", "name", t);
                mb_emit_u64(e, "address", mb_le64(t + 16));
                mb_emit_end_obj(e);
        }
        mb_emit_end_arr(e);
        return err;
}

/* ---- small fixed payloads ---------------------------------------------- */

/* PFP 10.4.1: 0 for a normal separator, 0xFFFFFFFF when firmware hit an
 * error before the separator point. */
static const char *decode_separator(const mb_tcglog_event *ev, mb_emit *e) {
        if (ev->data_size != 4)
                return "separator data is not 4 bytes";
        uint32_t v = mb_le32(ev->data);
        mb_emit_u64(e, "value", v);
        if (v == 0 || v == 0xffffffffu)
                mb_emit_cstr(e, "meaning", v ? "error" : "normal");
        return NULL;
}

/* EV_POST_CODE and EV_S_CRTM_CONTENTS are ASCII, or (PFP 10.4.2) a
 * 16-byte UEFI_PLATFORM_FIRMWARE_BLOB. */
static const char *decode_text_or_blob(const mb_tcglog_event *ev, mb_emit *e) {
        if (ev->data_size == 16 && !looks_ascii(ev->data, ev->data_size)) {
                evd_rd r = rd_make(ev->data, ev->data_size);
                return decode_blob_at(&r, e);
        }
        emit_text_or_hex(e, ev->data, ev->data_size);
        return NULL;
}

/* ---- EV_IPL: who logged it ---------------------------------------------- */

static bool starts_with(const uint8_t *p, size_t n, const char *lit) {
        size_t l = mb_strnlen(lit, (size_t) -1);
        return n >= l && mb_memcmp(p, lit, l) == 0;
}

/* The prefixes GRUB puts before the strings it measures into PCR 8. */
static const char *const evd_grub_prefixes[] = {
        "grub_cmd: ", "kernel_cmdline: ", "module_cmdline: ", "grub_kernel_cmdline ",
};

/* Length of the GRUB prefix p starts with, 0 when none. */
static size_t grub_prefix_len(const uint8_t *p, size_t n) {
        for (size_t i = 0; i < MB_ARRAY_SIZE(evd_grub_prefixes); i++)
                if (starts_with(p, n, evd_grub_prefixes[i]))
                        return mb_strnlen(evd_grub_prefixes[i], 32);
        return 0;
}

/* GRUB (grub-core/kern/efi/tpm.c, commands/tpm.c): ASCII in PCR 8
 * (commands, "kernel_cmdline: ...") and PCR 9 (file names).
 * systemd-boot/stub and mshim: UTF-16LE in PCR 12 (older systemd: 8).
 * shim: ASCII variable names in PCR 14. */
static const char *ipl_convention(const mb_tcglog_event *ev) {
        const uint8_t *p = ev->data;
        size_t n = ev->data_size;
        if (looks_utf16(p, n))
                return ev->pcr == 12 || ev->pcr == 8 ? "systemd-utf16" : NULL;
        if (!looks_ascii(p, n))
                return NULL;
        if (ev->pcr == 14 && (starts_with(p, n, "MokList") || starts_with(p, n, "MokSBState")))
                return "shim";
        if (ev->pcr == 8 && grub_prefix_len(p, n) > 0)
                return "grub";
        if (ev->pcr == 9)
                return "grub";
        return NULL;
}

static const char *decode_ipl(const mb_tcglog_event *ev, mb_emit *e) {
        const char *conv = ipl_convention(ev);
        emit_text_or_hex(e, ev->data, ev->data_size);
        if (conv)
                mb_emit_cstr(e, "convention", conv);
        return NULL;
}

/* ---- EV_EVENT_TAG (PFP 10.4.2, TCG_PCClientTaggedEvent) ----------------- */

typedef struct evd_tag {
        uint32_t id;
        const char *name;
} evd_tag;

static const evd_tag evd_tags[] = {
        { MB_TAG_LINUX_INITRD, "Linux initrd" },
        { MB_TAG_LINUX_LOAD_OPTIONS, "LOADED_IMAGE::LoadOptions" },
        { 0xf5bc582au, "systemd-boot loader.conf" },
        { 0x6c46f751u, "systemd devicetree" },
        { MB_TAG_LOADER_CONF, "mshim loader.conf" },
        { MB_TAG_BLS_ENTRY, "mshim BLS entry" },
        { MB_TAG_FILE_ABSENT, "mshim file absent" },
        { MB_TAG_FILE_UNREADABLE, "mshim file unreadable" },
        { MB_TAG_BLS_ENTRY_BAD, "mshim BLS entry unparseable" },
        { MB_TAG_CHAINLOAD, "mshim chainload options" },
        { MB_TAG_EXIT, "mshim returned to firmware" },
        { MB_TAG_TOTP_FENCE, "mshim TOTP fence" },
        { MB_TAG_TOTP_INITRD, "mshim TOTP initrd" },
};

static const char *decode_tag(const mb_tcglog_event *ev, mb_emit *e) {
        evd_rd r = rd_make(ev->data, ev->data_size);
        uint32_t id, size;
        const uint8_t *d;
        if (!rd_u32(&r, &id) || !rd_u32(&r, &size))
                return "tagged event header truncated";
        mb_emit_u64(e, "tag", id);
        for (size_t i = 0; i < MB_ARRAY_SIZE(evd_tags); i++)
                if (evd_tags[i].id == id)
                        mb_emit_cstr(e, "tag_name", evd_tags[i].name);
        if (!rd_take(&r, size, &d))
                return "tagged event data runs past the event";
        emit_text_or_hex(e, d, size);
        return rd_left(&r) ? "bytes after the tagged event data" : NULL;
}

/* ---- EV_NO_ACTION (PFP 10.4.5) ------------------------------------------ */

/* TCG_EfiSpecIDEventStruct, PFP 10.4.5.1. */
static const char *decode_spec_id(evd_rd *r, mb_emit *e) {
        uint32_t platform_class, n_algs;
        uint8_t minor, major, errata, uintn, vendor_size;
        const uint8_t *vendor;
        if (!rd_u32(r, &platform_class) || !rd_u8(r, &minor) || !rd_u8(r, &major) ||
            !rd_u8(r, &errata) || !rd_u8(r, &uintn) || !rd_u32(r, &n_algs))
                return "Spec ID event truncated";
        mb_emit_u64(e, "platform_class", platform_class);
        mb_emit_u64(e, "spec_version_major", major);
        mb_emit_u64(e, "spec_version_minor", minor);
        mb_emit_u64(e, "spec_errata", errata);
        mb_emit_u64(e, "uintn_size", uintn);
        if (n_algs > rd_left(r) / 4)
                return "Spec ID algorithm count runs past the event";
        mb_emit_begin_arr(e, "algorithms");
        for (uint32_t i = 0; i < n_algs; i++) {
                uint16_t alg = 0, size = 0;
                rd_u16(r, &alg);
                rd_u16(r, &size);
                mb_emit_begin_obj(e, NULL);
                mb_emit_u64(e, "alg_id", alg);
                if (mb_hash_name(alg))
                        mb_emit_cstr(e, "alg", mb_hash_name(alg));
                mb_emit_u64(e, "digest_size", size);
                mb_emit_end_obj(e);
        }
        mb_emit_end_arr(e);
        if (!rd_u8(r, &vendor_size) || !rd_take(r, vendor_size, &vendor))
                return "Spec ID vendor info truncated";
        mb_emit_hex(e, "vendor_info", vendor, vendor_size);
        return NULL;
}

static const char *decode_no_action(const mb_tcglog_event *ev, mb_emit *e) {
        evd_rd r = rd_make(ev->data, ev->data_size);
        const uint8_t *sig;
        uint8_t loc;
        if (!rd_take(&r, 16, &sig)) {
                mb_emit_hex(e, "hex", ev->data, ev->data_size);
                return NULL;
        }
        if (looks_ascii(sig, 16))
                mb_emit_str(e, "signature", (const char *) sig, ascii_len(sig, 16));
        else
                mb_emit_hex(e, "signature_hex", sig, 16);
        if (mb_memcmp(sig, "Spec ID Event03", 16) == 0)
                return decode_spec_id(&r, e);
        /* PFP 10.4.5.3 TCG_EfiStartupLocalityEvent: a 16-byte signature then
         * the StartupLocality byte (named after that field, as the
         * documented schema always had it). */
        if (mb_memcmp(sig, "StartupLocality", 16) == 0) {
                if (!rd_u8(&r, &loc))
                        return "StartupLocality byte missing";
                mb_emit_u64(e, "startup_locality", loc);
                return NULL;
        }
        mb_emit_hex(e, "hex", r.p + r.off, rd_left(&r));
        return NULL;
}

static const char *decode_text(const mb_tcglog_event *ev, mb_emit *e) {
        emit_text_or_hex(e, ev->data, ev->data_size);
        return NULL;
}

static const char *decode_hex(const mb_tcglog_event *ev, mb_emit *e) {
        mb_emit_hex(e, "hex", ev->data, ev->data_size);
        return NULL;
}

typedef const char *(*evd_decoder)(const mb_tcglog_event *ev, mb_emit *e);

static evd_decoder decoder_for(uint32_t type) {
        switch (type) {
        case MB_EV_EFI_VARIABLE_DRIVER_CONFIG:
        case MB_EV_EFI_VARIABLE_BOOT:
        case MB_EV_EFI_VARIABLE_BOOT2:
        case MB_EV_EFI_VARIABLE_AUTHORITY:
                return decode_variable;
        case MB_EV_EFI_BOOT_SERVICES_APPLICATION:
        case MB_EV_EFI_BOOT_SERVICES_DRIVER:
        case MB_EV_EFI_RUNTIME_SERVICES_DRIVER:
                return decode_image;
        case MB_EV_EFI_GPT_EVENT:
        case MB_EV_EFI_GPT_EVENT2:
                return decode_gpt;
        case MB_EV_EFI_PLATFORM_FIRMWARE_BLOB:
        case MB_EV_EFI_PLATFORM_FIRMWARE_BLOB2:
                return decode_blob;
        case MB_EV_EFI_HANDOFF_TABLES:
        case MB_EV_EFI_HANDOFF_TABLES2:
                return decode_handoff;
        case MB_EV_SEPARATOR:
                return decode_separator;
        case MB_EV_POST_CODE:
        case MB_EV_S_CRTM_CONTENTS:
                return decode_text_or_blob;
        case MB_EV_EFI_ACTION:
        case MB_EV_ACTION:
        case MB_EV_S_CRTM_VERSION:
        case MB_EV_EFI_HCRTM_EVENT:
                return decode_text;
        case MB_EV_IPL:
                return decode_ipl;
        case MB_EV_EVENT_TAG:
                return decode_tag;
        case MB_EV_NO_ACTION:
                return decode_no_action;
        }
        return decode_hex;
}

void mb_evdata_decode(const mb_tcglog_event *ev, mb_emit *e) {
        mb_emit_begin_obj(e, "payload");
        const char *err = decoder_for(ev->type)(ev, e);
        if (err) {
                mb_emit_cstr(e, "error", err);
                mb_emit_hex(e, "hex", ev->data, ev->data_size);
        }
        mb_emit_end_obj(e);
}

/* ---- integrity ----------------------------------------------------------- */

/* A rule names the bytes a digest must cover: p[0..n) then the constant
 * suffix[0..suffix_n). */
typedef struct evd_rule {
        const char *name;
        const uint8_t *p;
        size_t n;
        const uint8_t *suffix;
        size_t suffix_n;
} evd_rule;

/* Which digests a check leaves to its caller (mb_evdata_check_deferred). */
typedef struct evd_defer_ctx {
        const uint16_t *algs;
        size_t n_algs;
        mb_integrity_deferred *out;
} evd_defer_ctx;

static bool deferred_alg(const evd_defer_ctx *dc, uint16_t alg) {
        for (size_t i = 0; dc && i < dc->n_algs; i++)
                if (dc->algs[i] == alg)
                        return true;
        return false;
}

/* Compare every digest we can compute with the hash of the rule's bytes.
 * NOT_APPLICABLE when the event carries no digest of an algorithm we
 * implement (SM3_256). Digests of deferred algorithms are not computed but
 * listed in dc->out, and count as matching. */
static mb_integrity digests_cover(const mb_tcglog_event *ev, const evd_rule *rule, const evd_defer_ctx *dc) {
        uint8_t d[MB_HASH_MAX];
        uint32_t computed = 0, n_deferred = 0;
        for (uint32_t i = 0; i < ev->n_digests && i < MB_TCGLOG_MAX_ALGS; i++) {
                const mb_tcglog_digest *g = &ev->digests[i];
                mb_hash h;
                if (mb_hash_size(g->alg) == 0 || mb_hash_size(g->alg) != g->size)
                        continue;
                if (deferred_alg(dc, g->alg)) {
                        dc->out->digest_index[n_deferred++] = (uint8_t) i;
                        computed++;
                        continue;
                }
                if (mb_hash_init(&h, g->alg) != MB_OK)
                        continue;
                mb_hash_update(&h, rule->p, rule->n);
                mb_hash_update(&h, rule->suffix, rule->suffix_n);
                mb_hash_final(&h, d);
                if (mb_memcmp(d, g->bytes, g->size) != 0)
                        return MB_INTEGRITY_MISMATCH;
                computed++;
        }
        if (dc) {
                dc->out->n_digests = n_deferred;
                dc->out->p = rule->p;
                dc->out->n = rule->n;
                dc->out->suffix = rule->suffix;
                dc->out->suffix_n = rule->suffix_n;
        }
        return computed ? MB_INTEGRITY_OK : MB_INTEGRITY_NOT_APPLICABLE;
}


/* The first rule whose bytes every computable digest covers wins; with
 * rules to try and none matching, the event is a MISMATCH. */
static mb_integrity try_rules(const mb_tcglog_event *ev, const evd_rule *rules, size_t n_rules,
                              const evd_defer_ctx *dc, const char **ret_convention) {
        for (size_t i = 0; i < n_rules; i++) {
                mb_integrity v = digests_cover(ev, &rules[i], dc);
                if (v == MB_INTEGRITY_MISMATCH)
                        continue;
                *ret_convention = v == MB_INTEGRITY_OK ? rules[i].name : NULL;
                return v;
        }
        return MB_INTEGRITY_MISMATCH;
}

static evd_rule rule(const char *name, const uint8_t *p, size_t n) {
        return (evd_rule) { .name = name, .p = p, .n = n, .suffix = NULL, .suffix_n = 0 };
}

/* PFP 10.4.4 says the variable events' digest covers the whole
 * UEFI_VARIABLE_DATA. EDK2/OVMF and most firmware hash only VariableData for
 * EV_EFI_VARIABLE_BOOT (PCR 1); both are accepted and named. */
static size_t variable_rules(const mb_tcglog_event *ev, evd_rule *rules) {
        evd_var_hdr h;
        size_t n = 0;
        rules[n++] = rule("whole-event", ev->data, ev->data_size);
        if (parse_var(ev->data, ev->data_size, &h))
                return n;
        if (ev->type == MB_EV_EFI_VARIABLE_BOOT)
                rules[n++] = rule("variable-data", h.data, h.data_size);
        /* Old shim sized its EV_EFI_VARIABLE_AUTHORITY event with
         * sizeof(UEFI_VARIABLE_DATA), whose two 1-element arrays leave 5
         * bytes of struct padding, and hashed them (seen in
         * tpm2-tools-event-postcode.bin: 1120 bytes + 5 hashed, 1126 logged). */
        if (ev->type == MB_EV_EFI_VARIABLE_AUTHORITY && h.trailing >= 5)
                rules[n++] = rule("shim-padded", ev->data, ev->data_size - h.trailing + 5);
        return n;
}

/* GRUB (commands/tpm.c) logs "<prefix><string>" but hashes the bare string
 * without prefix or NUL. systemd-boot/stub and mshim hash the UTF-16LE text
 * plus its 2-byte NUL, which is exactly the event data, except in
 * systemd-boot before v250, which logged one byte short. */
static size_t ipl_rules(const mb_tcglog_event *ev, evd_rule *rules) {
        static const uint8_t nul16[2] = { 0, 0 };
        const uint8_t *p = ev->data;
        size_t n = ev->data_size, k = 0;
        if (looks_utf16(p, n)) {
                rules[k] = rule("systemd-utf16", p, utf16_len(p, n));
                rules[k].suffix = nul16;
                rules[k++].suffix_n = 2;
        } else if (looks_ascii(p, n) && grub_prefix_len(p, n) > 0) {
                size_t l = grub_prefix_len(p, n);
                rules[k++] = rule("grub", p + l, ascii_len(p, n) - l);
        }
        rules[k++] = rule("event-data", p, n);
        return k;
}

/* systemd-stub logs these fixed descriptions as EV_IPL data while the
 * digest covers a cpio archive or PE addon that is not in the log
 * (systemd's TPM2_PCR_MEASUREMENTS.md): nothing to check. */
static bool systemd_description(const mb_tcglog_event *ev) {
        static const char *const descs[] = {
                "Credentials initrd", "Global credentials initrd", "System extension initrd",
                "Configuration extension initrd", "PE addon",
        };
        size_t units;

        if (!looks_utf16(ev->data, ev->data_size))
                return false;
        units = utf16_len(ev->data, ev->data_size) / 2;
        for (size_t i = 0; i < MB_ARRAY_SIZE(descs); i++)
                if (utf16_eq(ev->data, units, descs[i]))
                        return true;
        return false;
}

static mb_integrity check(const mb_tcglog_event *ev, const evd_defer_ctx *dc, const char **ret_convention) {
        evd_rule rules[4];
        size_t n_rules = 0;
        const char *conv = NULL;
        mb_integrity v = MB_INTEGRITY_NOT_APPLICABLE;

        switch (ev->type) {
        case MB_EV_SEPARATOR:
        case MB_EV_EFI_ACTION:
        case MB_EV_ACTION:
        case MB_EV_EFI_GPT_EVENT:
        case MB_EV_EFI_GPT_EVENT2:
        /* PFP 3.3.4.1 leaves the S-CRTM version digest to the platform;
         * every log in the corpus hashes the event data. */
        case MB_EV_S_CRTM_VERSION:
                rules[n_rules++] = rule("event-data", ev->data, ev->data_size);
                break;
        case MB_EV_EFI_VARIABLE_DRIVER_CONFIG:
        case MB_EV_EFI_VARIABLE_BOOT:
        case MB_EV_EFI_VARIABLE_BOOT2:
        case MB_EV_EFI_VARIABLE_AUTHORITY:
                n_rules = variable_rules(ev, rules);
                break;
        case MB_EV_IPL:
                if (!systemd_description(ev))
                        n_rules = ipl_rules(ev, rules);
                break;
        }
        if (n_rules > 0) {
                v = try_rules(ev, rules, n_rules, dc, &conv);
                /* EV_IPL outside PCR 8 and 12 (GRUB's files in 9, shim's
                 * MOK variables in 14) covers bytes not in the log. */
                if (v == MB_INTEGRITY_MISMATCH && ev->type == MB_EV_IPL && ev->pcr != 8 && ev->pcr != 12)
                        v = MB_INTEGRITY_NOT_APPLICABLE;
        }
        if (ret_convention)
                *ret_convention = conv;
        return v;
}

mb_integrity mb_evdata_check(const mb_tcglog_event *ev, const char **ret_convention) {
        return check(ev, NULL, ret_convention);
}

mb_integrity mb_evdata_check_deferred(const mb_tcglog_event *ev, const uint16_t *algs, size_t n_algs,
                                      const char **ret_convention, mb_integrity_deferred *ret_deferred) {
        evd_defer_ctx dc = { .algs = algs, .n_algs = n_algs, .out = ret_deferred };

        ret_deferred->n_digests = 0;
        return check(ev, &dc, ret_convention);
}
