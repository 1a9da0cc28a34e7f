/* SPDX-License-Identifier: BSD-2-Clause */
/* mshim verify: its sub-commands in tools/cmd/verify_cred.c, verify_ima.c and verify_keylime.c, which
 * tools/cmd/verify.c dispatches to. */
#ifndef MB_TOOLS_VERIFY_H
#define MB_TOOLS_VERIFY_H

/* mshim verify challenge ... and mshim verify register ... (argv[0] is
 * the sub-command): an exit status. */
int verify_challenge(int argc, char **argv);
int verify_register(int argc, char **argv);
/* mshim verify ima ... (tools/cmd/verify_ima.c). */
int verify_ima(int argc, char **argv);
/* mshim verify keylime-refstate ... (tools/cmd/verify_keylime.c). */
int verify_keylime_refstate(int argc, char **argv);

#endif
