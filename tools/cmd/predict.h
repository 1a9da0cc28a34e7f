/* SPDX-License-Identifier: BSD-2-Clause */
/* What tools/cmd/predict.c offers other commands. */
#ifndef MB_TOOLS_PREDICT_H
#define MB_TOOLS_PREDICT_H

#include <stddef.h>
#include <stdint.h>

/* The next boot's sha256 values at the TOTP point (`mshim predict --esp ESP
 * --totp-point --select MASK`: the same engine and rules), the PCRs of
 * mask in ascending order, SEAL_PCR_VALUE bytes each, into values. conf:
 * loader.conf's bytes as they will be (NULL: the ESP's file); log: the
 * baseline event log (NULL: this boot's), checked against the TPM's PCRs.
 * 0, or an exit status with a message (an unpredictable PCR of mask, an
 * ESP that would start nothing). */
int predict_totp_values(const char *esp, const char *log, const void *conf, size_t conf_size, uint32_t mask,
                        uint8_t *values);

#endif
