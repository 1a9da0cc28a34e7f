/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The .sbat section: shim (15.3+) finds it by name in the PE section table
 * and checks each CSV line's generation against the SbatLevel revocations
 * (shim's SBAT.md). The CSV text is generated from efi/sbat.csv.in so that
 * it carries the build's version; MSHIM_SBAT_CSV is its path.
 * efi/mshim.lds gives the section its own page-aligned place in the image.
 */
        .section .sbat, "a"
        .incbin MSHIM_SBAT_CSV

        /* No executable stack wanted (silences ld's warning). */
        .section .note.GNU-stack, "", @progbits
