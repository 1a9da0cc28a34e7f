/* SPDX-License-Identifier: BSD-2-Clause */
/* mshim verify: its sub-commands in tools/cmd/verify_cred.c, which
 * tools/cmd/verify.c dispatches to. */
#ifndef MB_TOOLS_VERIFY_H
#define MB_TOOLS_VERIFY_H

#include <stddef.h>
#include <stdint.h>

/* mshim verify challenge ... and mshim verify register ... (argv[0] is
 * the sub-command): an exit status. */
int verify_challenge(int argc, char **argv);
int verify_register(int argc, char **argv);

/* The AK of the machine registered in dir (NULL: the default directory)
 * under name (its AK's Name, hex): its TPM2B_PUBLIC in *ret_pub
 * (malloc()ed), and a sentence about the machine in *ret_about
 * (malloc()ed). 0; EXIT_CHECK_FAILED, with why (why_n bytes) saying so,
 * when no such machine is registered; EXIT_BAD_INPUT (a message) when the
 * name or the record is bad. */
int verify_machine_ak(const char *dir, const char *name, uint8_t **ret_pub, size_t *ret_n, char **ret_about,
                      char *why, size_t why_n);

#endif
