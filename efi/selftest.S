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

        .section .note.GNU-stack, "", @progbits
