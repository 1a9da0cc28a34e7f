/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The .mpolicy section: mshim's built-in boot policy (docs/CONFIG.md), a
 * fixed-size (MB_BOOT_POLICY_SIZE) NUL-padded text. It is part of the
 * image, so the Authenticode signature covers it and nobody with only ESP
 * write access can change it; `mshim boot-policy` shows it and, before
 * signing, rewrites it in place. MSHIM_POLICY_BIN is the padded text the
 * Makefile made from MSHIM_POLICY. efi/mshim.lds gives it its own page.
 */
        .section .mpolicy, "a"
        .globl mshim_boot_policy_text
mshim_boot_policy_text:
        .incbin MSHIM_POLICY_BIN

        .section .note.GNU-stack, "", @progbits
