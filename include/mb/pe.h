/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * PE/COFF images (PE32 and PE32+) parsed from a file buffer without
 * allocation, and their Authenticode image hash.
 *
 * Sources: Microsoft "PE Format" (the PE/COFF specification: MS-DOS stub,
 * COFF file header, optional header, data directories, section table,
 * "The Attribute Certificate Table (Image Only)") and Microsoft "Windows
 * Authenticode Portable Executable Signature Format" ("Calculating the PE
 * Image Hash"). The parser never trusts a size or offset read from the
 * image: everything is checked against the buffer before it is used, so
 * the same code serves the loader (images read from disk) and the host CLI.
 */
#ifndef MB_PE_H
#define MB_PE_H

#include "mb/base.h"

/* The PE/COFF specification: "the Windows loader limits the number of
 * sections to 96". We enforce it so section sorting can be done in place. */
#define MB_PE_MAX_SECTIONS 96

#define MB_PE_MAGIC_PE32     0x10b
#define MB_PE_MAGIC_PE32PLUS 0x20b

/* Data directory indices (PE Format, "Optional Header Data Directories"). */
#define MB_PE_DIR_SECURITY   4   /* the Certificate Table: a FILE offset, not an RVA */
#define MB_PE_DIR_BASERELOC  5

/* WIN_CERTIFICATE (PE Format, "The Attribute Certificate Table"). */
#define MB_PE_WIN_CERT_REVISION_2_0     0x0200
#define MB_PE_WIN_CERT_TYPE_PKCS_SIGNED 0x0002

typedef struct mb_pe {
        const uint8_t *buf;        /* the whole file (borrowed) */
        size_t size;
        uint16_t machine;          /* COFF Machine, e.g. 0x8664 */
        uint16_t magic;            /* MB_PE_MAGIC_PE32 or MB_PE_MAGIC_PE32PLUS */
        uint16_t subsystem;        /* 10 = EFI application */
        uint16_t characteristics;  /* COFF Characteristics */
        uint16_t n_sections;       /* <= MB_PE_MAX_SECTIONS */
        uint32_t entry_point;      /* AddressOfEntryPoint (RVA) */
        uint64_t image_base;
        uint32_t section_alignment, file_alignment;
        uint32_t size_of_image;
        uint32_t size_of_headers;  /* <= size; the section table ends inside it */
        uint32_t n_dirs;           /* data directories present (bounded by SizeOfOptionalHeader) */
        size_t dirs_off;           /* file offset of data directory 0 */
        size_t checksum_off;       /* file offset of the optional header's CheckSum */
        size_t sections_off;       /* file offset of the section table */
        /* The attribute certificate table, a file range; cert_size 0 when
         * the image is unsigned (or has no directory entry 4). */
        uint32_t cert_off, cert_size;
} mb_pe;

typedef struct mb_pe_section {
        uint8_t name[8];           /* NUL-padded, not necessarily NUL-terminated */
        uint32_t virtual_size, virtual_address;
        uint32_t raw_size, raw_offset; /* SizeOfRawData, PointerToRawData: inside the file */
        uint32_t characteristics;
} mb_pe_section;

/*
 * Parse the headers of the image in buf[0..size). ret->buf borrows buf.
 * Errors: MB_ERR_INVALID when this is not a PE image (no "MZ", no
 * "PE\0\0", unknown optional header magic) or its headers contradict each
 * other (section table beyond SizeOfHeaders, section data or certificate
 * table outside the file, a certificate table that is not the last thing
 * in the file, overlapping a section, ...); MB_ERR_TRUNCATED when the file
 * ends inside the headers; MB_ERR_UNSUPPORTED for more than
 * MB_PE_MAX_SECTIONS sections. ret is untouched on failure.
 */
mb_err mb_pe_parse(const void *buf, size_t size, mb_pe *ret);

/*
 * The checks a loader makes before it lays the image out in memory, which
 * mb_pe_parse (the file's own consistency, all that hashing needs) leaves
 * out so that any file sbsign or pesign hash can be hashed here too:
 * SizeOfImage covers the headers (shim's read_header), the entry point is
 * inside the image, and every section's memory range [VirtualAddress,
 * + VirtualSize, or SizeOfRawData when VirtualSize is 0) ends inside
 * SizeOfImage (shim's handle_image, EDK2's PeCoffLoaderLoadImage).
 * MB_ERR_INVALID when one fails.
 */
mb_err mb_pe_check_loadable(const mb_pe *pe);

/* Section header i (0-based); MB_ERR_NOTFOUND when i >= n_sections. */
mb_err mb_pe_section_at(const mb_pe *pe, uint16_t i, mb_pe_section *ret);

/* Data directory entry `index`; MB_ERR_NOTFOUND when the image has fewer
 * directories. */
mb_err mb_pe_data_dir(const mb_pe *pe, uint32_t index, uint32_t *ret_address, uint32_t *ret_size);

/*
 * The file data of the first section called `name` (a name over 8 bytes,
 * at most 63, is looked up in the COFF string table). Its size is
 * VirtualSize bounded by SizeOfRawData: bytes past SizeOfRawData are
 * zero-filled in memory and not stored in the file, bytes past VirtualSize
 * are file alignment padding. MB_ERR_NOTFOUND when there is no such section.
 */
mb_err mb_pe_find_section(const mb_pe *pe, const char *name, const uint8_t **ret_ptr, size_t *ret_size);

/* The attribute certificate table (all WIN_CERTIFICATE entries);
 * MB_ERR_NOTFOUND for an unsigned image. */
mb_err mb_pe_cert_table(const mb_pe *pe, const uint8_t **ret_ptr, size_t *ret_size);

typedef struct mb_pe_cert {
        uint16_t revision;          /* wRevision */
        uint16_t type;              /* wCertificateType */
        const uint8_t *data;        /* bCertificate: for PKCS_SIGNED, a DER PKCS#7 SignedData */
        size_t size;
} mb_pe_cert;

/* Iterate the WIN_CERTIFICATE entries of a certificate table; *offset
 * starts at 0. Entries are 8-byte aligned (PE Format, "The Attribute
 * Certificate Table"). MB_END after the last; MB_ERR_INVALID or
 * MB_ERR_TRUNCATED for a dwLength that is too small or runs past the table. */
mb_err mb_pe_cert_next(const uint8_t *table, size_t size, size_t *offset, mb_pe_cert *ret);

/* The PE CheckSum of buf[0..size) as ImageHlp's CheckSumMappedFile
 * computes it (and sbsign and sbattach write it): the 16-bit one's-
 * complement-style sum, carries folded back, of the file as little-endian
 * words with the CheckSum field itself counted as zero (an odd last byte is
 * a word of its own), plus the file size. checksum_off is mb_pe.checksum_off. */
uint32_t mb_pe_checksum(const uint8_t *buf, size_t size, size_t checksum_off);

/*
 * Remove WIN_CERTIFICATE entry `index` (0-based, in table order, as
 * `pesign -u` and `sbattach --signum` count) from the image in buf[0..size),
 * in place: the entries after it move down, the Certificate Table directory
 * entry shrinks (address and size both 0 once no entry is left) and CheckSum
 * is recomputed, as sbattach --remove does. The table is the end of the file
 * (mb_pe_parse insists), so the file just gets shorter: *ret_size is its new
 * size. MB_ERR_NOTFOUND when the image has no entry `index`; the errors of
 * mb_pe_parse and mb_pe_cert_next for a malformed image or table. buf is
 * untouched on failure.
 */
mb_err mb_pe_remove_cert(uint8_t *buf, size_t size, size_t index, size_t *ret_size);

/*
 * The Authenticode image hash (Authenticode PE, "Calculating the PE Image
 * Hash") with a TPM_ALG_ID from mb/sha.h: the headers up to SizeOfHeaders
 * without the CheckSum field and the Certificate Table directory entry,
 * the sections' raw data in ascending PointerToRawData order, then any
 * extra data from offset SUM_OF_BYTES_HASHED up to the certificate table.
 * This is the digest in a signature's SpcIndirectDataContent, the one
 * firmware logs in PCR 4 and the one db/dbx/MokList hash entries name.
 * ret_digest receives mb_hash_size(alg) bytes. MB_ERR_UNSUPPORTED for an
 * algorithm mb_hash does not implement.
 */
mb_err mb_pe_authenticode_parsed(const mb_pe *pe, uint16_t alg, uint8_t *ret_digest);
/* The same after mb_pe_parse of buf[0..size). */
mb_err mb_pe_authenticode(const void *buf, size_t size, uint16_t alg, uint8_t *ret_digest);

#endif
