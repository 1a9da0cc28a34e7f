/* SPDX-License-Identifier: BSD-2-Clause */
#include "cli.h"
int cmd_status(int argc, char **argv) { (void) argc; (void) argv; return 0; }
