/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * PE/COFF header parsing and the Authenticode image hash (see mb/pe.h for
 * the specifications). Offsets below are those of the PE Format document;
 * every one is checked against the buffer before it is read.
 */
#include "mb/pe.h"
#include "mb/sha.h"

/* MS-DOS stub: "MZ" at 0, e_lfanew (offset of "PE\0\0") at 0x3c. */
#define DOS_LFANEW_OFF   0x3c
#define PE_SIG_SIZE      4
/* COFF file header (20 bytes), after the signature. */
#define COFF_SIZE        20
#define COFF_MACHINE     0
#define COFF_NSECTIONS   2
#define COFF_OPTSIZE     16
#define COFF_CHARACT     18
/* Optional header fields; the same offsets in PE32 and PE32+ up to CheckSum. */
#define OPT_MAGIC        0
#define OPT_ENTRY        16
#define OPT_SECT_ALIGN   32
#define OPT_FILE_ALIGN   36
#define OPT_SIZE_IMAGE   56
#define OPT_SIZE_HEADERS 60
#define OPT_CHECKSUM     64
#define OPT_SUBSYSTEM    68
/* Fields whose offset depends on the magic (ImageBase is 4 bytes in PE32,
 * 8 in PE32+, and the stack/heap sizes that follow grow the same way). */
#define OPT32_IMAGE_BASE 28
#define OPT32_NDIRS      92
#define OPT32_DIRS       96
#define OPT64_IMAGE_BASE 24
#define OPT64_NDIRS      108
#define OPT64_DIRS       112
#define DIR_SIZE         8
/* Section table entry (40 bytes). */
#define SECT_SIZE        40
#define SECT_VSIZE       8
#define SECT_VADDR       12
#define SECT_RAWSIZE     16
#define SECT_RAWPTR      20
#define SECT_CHARACT     36
/* WIN_CERTIFICATE header: dwLength, wRevision, wCertificateType. */
#define WIN_CERT_HDR     8

/* The fixed part of the headers: DOS stub, signature, COFF header, the
 * optional header's magic-dependent layout. Fills everything but the data
 * directories, sections and certificate table. */
static mb_err parse_opt_header(const uint8_t *b, size_t size, size_t opt, size_t opt_size, mb_pe *pe) {
        size_t ndirs_off, dirs_off;
        uint32_t ndirs;

        if (mb_out_of_bounds(size, opt, 2))
                return MB_ERR_TRUNCATED;
        pe->magic = mb_le16(b + opt + OPT_MAGIC);
        if (pe->magic == MB_PE_MAGIC_PE32) {
                ndirs_off = OPT32_NDIRS;
                dirs_off = OPT32_DIRS;
        } else if (pe->magic == MB_PE_MAGIC_PE32PLUS) {
                ndirs_off = OPT64_NDIRS;
                dirs_off = OPT64_DIRS;
        } else
                return MB_ERR_INVALID;
        /* SizeOfOptionalHeader must hold every fixed field we read. */
        if (opt_size < dirs_off)
                return MB_ERR_INVALID;
        if (mb_out_of_bounds(size, opt, dirs_off))
                return MB_ERR_TRUNCATED;
        pe->entry_point = mb_le32(b + opt + OPT_ENTRY);
        pe->image_base = pe->magic == MB_PE_MAGIC_PE32 ? mb_le32(b + opt + OPT32_IMAGE_BASE)
                                                       : mb_le64(b + opt + OPT64_IMAGE_BASE);
        pe->section_alignment = mb_le32(b + opt + OPT_SECT_ALIGN);
        pe->file_alignment = mb_le32(b + opt + OPT_FILE_ALIGN);
        pe->size_of_image = mb_le32(b + opt + OPT_SIZE_IMAGE);
        pe->size_of_headers = mb_le32(b + opt + OPT_SIZE_HEADERS);
        pe->subsystem = mb_le16(b + opt + OPT_SUBSYSTEM);
        pe->checksum_off = opt + OPT_CHECKSUM;
        /* NumberOfRvaAndSizes is read from the image: the directories it
         * claims must fit in SizeOfOptionalHeader. */
        ndirs = mb_le32(b + opt + ndirs_off);
        if (ndirs > (opt_size - dirs_off) / DIR_SIZE)
                return MB_ERR_INVALID;
        pe->n_dirs = ndirs;
        pe->dirs_off = opt + dirs_off;
        return MB_OK;
}

static void read_section(const uint8_t *p, mb_pe_section *ret) {
        mb_memcpy(ret->name, p, sizeof(ret->name));
        ret->virtual_size = mb_le32(p + SECT_VSIZE);
        ret->virtual_address = mb_le32(p + SECT_VADDR);
        ret->raw_size = mb_le32(p + SECT_RAWSIZE);
        ret->raw_offset = mb_le32(p + SECT_RAWPTR);
        ret->characteristics = mb_le32(p + SECT_CHARACT);
}

/* The certificate table's directory entry holds a file offset (PE Format,
 * "The Attribute Certificate Table (Image Only)"). It must lie after the
 * headers and be the last thing in the file: the Authenticode hash covers
 * everything before it, and shim and EDK2 refuse data after it. */
static mb_err check_cert_table(const mb_pe *pe, uint32_t off, uint32_t len) {
        if (len == 0)
                return MB_OK;
        if (off < pe->size_of_headers || mb_out_of_bounds(pe->size, off, len))
                return MB_ERR_INVALID;
        if (pe->size - off != len)
                return MB_ERR_INVALID;
        return MB_OK;
}

/* Every section's file data must lie inside the file, after nothing that
 * the hash skips: not overlapping the certificate table. */
static mb_err check_sections(const mb_pe *pe) {
        size_t end = pe->cert_size ? pe->cert_off : pe->size;

        for (uint16_t i = 0; i < pe->n_sections; i++) {
                mb_pe_section s;

                read_section(pe->buf + pe->sections_off + (size_t) i * SECT_SIZE, &s);
                if (s.raw_size && mb_out_of_bounds(end, s.raw_offset, s.raw_size))
                        return MB_ERR_INVALID;
        }
        return MB_OK;
}

mb_err mb_pe_parse(const void *buf, size_t size, mb_pe *ret) {
        const uint8_t *b = buf;
        mb_pe pe = { .buf = b, .size = size };
        size_t coff, opt, opt_size, sect_end;
        uint32_t cert_off = 0, cert_size = 0;
        mb_err r;

        if (mb_out_of_bounds(size, 0, DOS_LFANEW_OFF + 4))
                return size >= 2 && b[0] == 'M' && b[1] == 'Z' ? MB_ERR_TRUNCATED : MB_ERR_INVALID;
        if (b[0] != 'M' || b[1] != 'Z')
                return MB_ERR_INVALID;
        coff = mb_le32(b + DOS_LFANEW_OFF);
        if (mb_out_of_bounds(size, coff, PE_SIG_SIZE + COFF_SIZE))
                return MB_ERR_TRUNCATED;
        if (mb_memcmp(b + coff, "PE\0\0", PE_SIG_SIZE) != 0)
                return MB_ERR_INVALID;
        coff += PE_SIG_SIZE;
        pe.machine = mb_le16(b + coff + COFF_MACHINE);
        pe.n_sections = mb_le16(b + coff + COFF_NSECTIONS);
        pe.characteristics = mb_le16(b + coff + COFF_CHARACT);
        opt_size = mb_le16(b + coff + COFF_OPTSIZE);
        if (pe.n_sections > MB_PE_MAX_SECTIONS)
                return MB_ERR_UNSUPPORTED;
        opt = coff + COFF_SIZE;
        r = parse_opt_header(b, size, opt, opt_size, &pe);
        if (r != MB_OK)
                return r;
        /* The section table follows the optional header and must end
         * inside SizeOfHeaders, which must itself fit in the file
         * (opt + opt_size + 96 * 40 cannot overflow: opt <= size). */
        pe.sections_off = opt + opt_size;
        sect_end = pe.sections_off + (size_t) pe.n_sections * SECT_SIZE;
        if (sect_end > pe.size_of_headers)
                return MB_ERR_INVALID;
        if (pe.size_of_headers > size)
                return MB_ERR_TRUNCATED;
        if (pe.n_dirs > MB_PE_DIR_SECURITY) {
                cert_off = mb_le32(b + pe.dirs_off + MB_PE_DIR_SECURITY * DIR_SIZE);
                cert_size = mb_le32(b + pe.dirs_off + MB_PE_DIR_SECURITY * DIR_SIZE + 4);
        }
        r = check_cert_table(&pe, cert_off, cert_size);
        if (r != MB_OK)
                return r;
        pe.cert_off = cert_size ? cert_off : 0;
        pe.cert_size = cert_size;
        r = check_sections(&pe);
        if (r != MB_OK)
                return r;
        *ret = pe;
        return MB_OK;
}

mb_err mb_pe_check_loadable(const mb_pe *pe) {
        if (pe->size_of_image < pe->size_of_headers || pe->entry_point >= pe->size_of_image)
                return MB_ERR_INVALID;
        for (uint16_t i = 0; i < pe->n_sections; i++) {
                mb_pe_section s;

                read_section(pe->buf + pe->sections_off + (size_t) i * SECT_SIZE, &s);
                /* Old linkers leave VirtualSize 0 and mean SizeOfRawData. */
                if (mb_out_of_bounds(pe->size_of_image, s.virtual_address,
                                     s.virtual_size ? s.virtual_size : s.raw_size))
                        return MB_ERR_INVALID;
        }
        return MB_OK;
}

mb_err mb_pe_section_at(const mb_pe *pe, uint16_t i, mb_pe_section *ret) {
        if (i >= pe->n_sections)
                return MB_ERR_NOTFOUND;
        read_section(pe->buf + pe->sections_off + (size_t) i * SECT_SIZE, ret);
        return MB_OK;
}

mb_err mb_pe_data_dir(const mb_pe *pe, uint32_t index, uint32_t *ret_address, uint32_t *ret_size) {
        const uint8_t *d;

        if (index >= pe->n_dirs)
                return MB_ERR_NOTFOUND;
        d = pe->buf + pe->dirs_off + (size_t) index * DIR_SIZE;
        *ret_address = mb_le32(d);
        *ret_size = mb_le32(d + 4);
        return MB_OK;
}

/* A long section name ("/<decimal>", PE Format "Section Table": names over
 * 8 bytes live in the COFF string table, right after the symbol table, at
 * that offset, NUL-terminated; linkers keep it in images such as shim's
 * ".vendor_cert"): whether it is `name` (n bytes). Fails closed on any
 * offset outside the file. */
static bool long_name_is(const mb_pe *pe, const mb_pe_section *s, const char *name, size_t n) {
        size_t coff = mb_le32(pe->buf + DOS_LFANEW_OFF) + 4, off = 0, str;
        uint32_t symtab = mb_le32(pe->buf + coff + 8), nsym = mb_le32(pe->buf + coff + 12);

        if (s->name[0] != '/' || symtab == 0 || nsym > (SIZE_MAX - symtab) / 18)
                return false;
        for (size_t i = 1; i < sizeof(s->name) && s->name[i]; i++) {
                if (s->name[i] < '0' || s->name[i] > '9' || off > 99999999)
                        return false;
                off = off * 10 + (size_t) (s->name[i] - '0');
        }
        str = (size_t) symtab + (size_t) nsym * 18;
        if (str > pe->size || off > pe->size - str || mb_out_of_bounds(pe->size, str + off, n + 1))
                return false;
        return mb_memcmp(pe->buf + str + off, name, n) == 0 && pe->buf[str + off + n] == 0;
}

/* Section names are 8 bytes, NUL-padded when shorter; longer ones are in
 * the string table. */
static bool section_name_is(const mb_pe *pe, const mb_pe_section *s, const char *name) {
        size_t n = mb_strnlen(name, 64);

        if (n > sizeof(s->name))
                return long_name_is(pe, s, name, n);
        if (mb_memcmp(s->name, name, n) != 0)
                return false;
        for (size_t i = n; i < sizeof(s->name); i++)
                if (s->name[i])
                        return false;
        return true;
}

mb_err mb_pe_find_section(const mb_pe *pe, const char *name, const uint8_t **ret_ptr, size_t *ret_size) {
        for (uint16_t i = 0; i < pe->n_sections; i++) {
                mb_pe_section s;

                read_section(pe->buf + pe->sections_off + (size_t) i * SECT_SIZE, &s);
                if (!section_name_is(pe, &s, name))
                        continue;
                /* mb_pe_parse checked [raw_offset, +raw_size) is in the
                 * file; an empty section (raw_size 0) has no file data. */
                *ret_ptr = s.raw_size ? pe->buf + s.raw_offset : pe->buf;
                *ret_size = s.virtual_size < s.raw_size ? s.virtual_size : s.raw_size;
                return MB_OK;
        }
        return MB_ERR_NOTFOUND;
}

mb_err mb_pe_cert_table(const mb_pe *pe, const uint8_t **ret_ptr, size_t *ret_size) {
        if (pe->cert_size == 0)
                return MB_ERR_NOTFOUND;
        *ret_ptr = pe->buf + pe->cert_off;
        *ret_size = pe->cert_size;
        return MB_OK;
}

mb_err mb_pe_cert_next(const uint8_t *table, size_t size, size_t *offset, mb_pe_cert *ret) {
        size_t off = *offset, len, next;

        if (off >= size)
                return MB_END;
        if (mb_out_of_bounds(size, off, WIN_CERT_HDR))
                return MB_ERR_TRUNCATED;
        /* dwLength counts the 8-byte header plus bCertificate. */
        len = mb_le32(table + off);
        if (len < WIN_CERT_HDR)
                return MB_ERR_INVALID;
        if (mb_out_of_bounds(size, off, len))
                return MB_ERR_TRUNCATED;
        /* The next entry starts at the next 8-byte boundary (the table may
         * end without that padding after the last entry). */
        next = off + len;
        next = next + ((8 - next % 8) % 8);
        *ret = (mb_pe_cert) {
                .revision = mb_le16(table + off + 4),
                .type = mb_le16(table + off + 6),
                .data = table + off + WIN_CERT_HDR,
                .size = len - WIN_CERT_HDR,
        };
        *offset = next;
        return MB_OK;
}

/* The section with the smallest (PointerToRawData, index) after `prev`,
 * by repeated min-selection: the Authenticode order (ascending
 * PointerToRawData) without allocating a sorted copy; O(n^2), n <= 96.
 * Sections without file data are skipped (Authenticode PE, step 11).
 * Returns false when no section is left. */
static bool next_section(const mb_pe *pe, bool first, uint32_t prev_off, uint16_t prev_i,
                         mb_pe_section *ret, uint16_t *ret_i) {
        bool found = false;

        for (uint16_t i = 0; i < pe->n_sections; i++) {
                mb_pe_section s;

                read_section(pe->buf + pe->sections_off + (size_t) i * SECT_SIZE, &s);
                if (s.raw_size == 0)
                        continue;
                if (!first && (s.raw_offset < prev_off || (s.raw_offset == prev_off && i <= prev_i)))
                        continue;
                if (found && s.raw_offset >= ret->raw_offset)
                        continue;
                *ret = s;
                *ret_i = i;
                found = true;
        }
        return found;
}

mb_err mb_pe_authenticode_parsed(const mb_pe *pe, uint16_t alg, uint8_t *ret_digest) {
        size_t hdr = pe->size_of_headers, sum, end;
        mb_pe_section s = { 0 };
        uint16_t si = 0;
        mb_hash h;
        mb_err r;

        r = mb_hash_init(&h, alg);
        if (r != MB_OK)
                return r;
        /* Steps 3-7: the headers without CheckSum and, when present, the
         * Certificate Table directory entry. mb_pe_parse checked that the
         * optional header lies below SizeOfHeaders. */
        mb_hash_update(&h, pe->buf, pe->checksum_off);
        if (pe->n_dirs > MB_PE_DIR_SECURITY) {
                size_t dir = pe->dirs_off + MB_PE_DIR_SECURITY * DIR_SIZE;

                mb_hash_update(&h, pe->buf + pe->checksum_off + 4, dir - (pe->checksum_off + 4));
                mb_hash_update(&h, pe->buf + dir + DIR_SIZE, hdr - (dir + DIR_SIZE));
        } else
                mb_hash_update(&h, pe->buf + pe->checksum_off + 4, hdr - (pe->checksum_off + 4));
        /* Steps 8-13: SUM_OF_BYTES_HASHED starts at SizeOfHeaders; each
         * section's raw data is hashed in file order. At most 97 terms
         * below 2^32 each: no overflow in a 64-bit size_t. */
        sum = hdr;
        for (bool first = true; next_section(pe, first, s.raw_offset, si, &s, &si); first = false) {
                mb_hash_update(&h, pe->buf + s.raw_offset, s.raw_size);
                sum += s.raw_size;
        }
        /* Step 14: extra data begins at file offset SUM_OF_BYTES_HASHED and
         * ends where the certificate table begins (mb_pe_parse made sure the
         * table is the end of the file). A SUM beyond that (overlapping
         * sections counted twice) leaves no extra data, as in shim and EDK2. */
        end = pe->cert_size ? pe->cert_off : pe->size;
        if (sum < end)
                mb_hash_update(&h, pe->buf + sum, end - sum);
        mb_hash_final(&h, ret_digest);
        return MB_OK;
}

mb_err mb_pe_authenticode(const void *buf, size_t size, uint16_t alg, uint8_t *ret_digest) {
        mb_pe pe;
        mb_err r;

        if (mb_hash_size(alg) == 0)
                return MB_ERR_UNSUPPORTED;
        r = mb_pe_parse(buf, size, &pe);
        if (r != MB_OK)
                return r;
        return mb_pe_authenticode_parsed(&pe, alg, ret_digest);
}

/* A byte of the file with the CheckSum field read as zero (the field is
 * 2-byte aligned only when e_lfanew is even, so the test is per byte). */
static uint32_t checksum_byte(const uint8_t *buf, size_t i, size_t checksum_off) {
        return i >= checksum_off && i - checksum_off < 4 ? 0 : buf[i];
}

uint32_t mb_pe_checksum(const uint8_t *buf, size_t size, size_t checksum_off) {
        uint32_t sum = 0;

        for (size_t i = 0; i < size; i += 2) {
                sum += checksum_byte(buf, i, checksum_off);
                if (i + 1 < size)
                        sum += checksum_byte(buf, i + 1, checksum_off) << 8;
                sum = (sum & 0xffff) + (sum >> 16);
        }
        return sum + (uint32_t) size;
}

mb_err mb_pe_remove_cert(uint8_t *buf, size_t size, size_t index, size_t *ret_size) {
        const uint8_t *table;
        size_t tsize, off = 0, start = 0, end, n = 0, dir, new_size;
        mb_pe_cert c;
        mb_pe pe;
        mb_err r;

        r = mb_pe_parse(buf, size, &pe);
        if (r == MB_OK)
                r = mb_pe_cert_table(&pe, &table, &tsize);
        if (r != MB_OK)
                return r;
        /* Walk the whole table first: a malformed entry anywhere refuses
         * the edit, so the result never keeps half of a bad table. */
        while ((r = mb_pe_cert_next(table, tsize, &off, &c)) == MB_OK)
                if (n++ == index)
                        start = (size_t) (c.data - WIN_CERT_HDR - table);
        if (r != MB_END)
                return r;
        if (index >= n)
                return MB_ERR_NOTFOUND;
        /* Entry `index` spans [start, end): its dwLength rounded up to the
         * next 8-byte boundary, or to the end of the table for a last
         * entry stored without that padding. */
        off = start;
        mb_pe_cert_next(table, tsize, &off, &c);
        end = off < tsize ? off : tsize;
        for (size_t i = 0; end + i < tsize; i++)
                buf[pe.cert_off + start + i] = buf[pe.cert_off + end + i];
        tsize -= end - start;
        new_size = pe.cert_off + tsize;
        dir = pe.dirs_off + MB_PE_DIR_SECURITY * DIR_SIZE;
        mb_put_le32(buf + dir, tsize ? pe.cert_off : 0);
        mb_put_le32(buf + dir + 4, (uint32_t) tsize);
        mb_put_le32(buf + pe.checksum_off, mb_pe_checksum(buf, new_size, pe.checksum_off));
        *ret_size = new_size;
        return MB_OK;
}
