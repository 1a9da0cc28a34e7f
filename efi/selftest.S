/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The deliberately unsigned EFI application mshim's SHIM_LOCK self-test
 * hands to the firmware's LoadImage (efi/shimlock.c). It is built by the
 * Makefile from efi/selftest/unsigned.c with gnu-efi, never signed, and
 * included here byte for byte; MSHIM_SELFTEST_EFI is its path.
 */
        .section .rodata
        .balign 16
        .globl mshim_selftest_unsigned
mshim_selftest_unsigned:
        .incbin MSHIM_SELFTEST_EFI
        .globl mshim_selftest_unsigned_end
mshim_selftest_unsigned_end:
        /* Its size as data: C may not subtract two symbols' addresses
         * (they are different objects to it). */
        .balign 8
        .globl mshim_selftest_unsigned_size
mshim_selftest_unsigned_size:
        .quad mshim_selftest_unsigned_end - mshim_selftest_unsigned

        .section .note.GNU-stack, "", @progbits
