/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Approvals signed on another machine (tools/lib/request.c, docs/SEALING.md
 * "Signing elsewhere"): the request `mshim policy approve --request OUT`
 * writes, what `mshim policy sign` signs and `policy approve --signature`
 * installs.
 */
#ifndef MB_REQUEST_H
#define MB_REQUEST_H

#include "sealcmd.h"

/* An approval without its signature, with what a signer needs to check
 * it without a TPM: its kind, the counter's Name its policy was computed
 * with, the Name of the policy key that must sign it, and aHash. */
typedef struct approval_request {
        seal_kind kind;
        TPM2B_NAME nv_name;
        TPM2B_NAME key_name;
        uint8_t ahash[MB_POLICY_SIZE];
        approval a;             /* signature_size 0 */
} approval_request;

/* The request's text, malloc()ed (NULL with a message). */
char *request_format(const approval_request *q);
/* Read and parse the request at path; its bytes in *ret_file (NULL: not
 * kept; else cli_file_free it). -1 with a message naming path (and line). */
int request_load(const char *path, approval_request *ret, cli_file *ret_file);
/* Its fields agree: policy is approvedPolicy of its epoch, PCRs and values
 * with its counter Name, and ahash kind's aHash over it. -1 with a message. */
int request_check(const char *path, approval_request *q);
/* Where the machine that asked keeps its copy: DIR/requests/NAME.request
 * (NAME as the approval's file name), malloc()ed. */
char *request_pending_path(const char *state_dir, const approval *a);

#endif
