/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The ESP's partition GUID from the loader's device path, and its
 * LoaderDevicePartUUID text (include/mb/devpath.h). Source: UEFI 2.10,
 * 10.3.1 (generic node header, end nodes) and 10.3.5.1 (hard drive media
 * node).
 */
#include "mb/devpath.h"
#include "mb/emit.h"

#define DP_TYPE_MEDIA      0x04
#define DP_SUB_HARD_DRIVE  0x01
#define DP_TYPE_END        0x7f
#define DP_SUB_END_ENTIRE  0xff
/* Hard drive node body (after the 4-byte header): PartitionNumber (4),
 * PartitionStart (8), PartitionSize (8), PartitionSignature (16),
 * PartitionFormat (1), SignatureType (1). */
#define DP_HD_BODY         38
#define DP_HD_SIGNATURE    20
#define DP_HD_FORMAT       36
#define DP_HD_SIG_TYPE     37
#define DP_HD_FORMAT_GPT   0x02
#define DP_HD_SIG_GUID     0x02

mb_err mb_devpath_gpt_partuuid(const uint8_t *p, size_t n, uint8_t ret_guid[16]) {
        size_t off = 0;

        for (;;) {
                if (mb_out_of_bounds(n, off, 4))
                        return MB_ERR_TRUNCATED;        /* no end node: not a whole path */
                const uint8_t *node = p + off;
                uint16_t len = mb_le16(node + 2);
                if (len < 4)
                        return MB_ERR_INVALID;          /* would never advance */
                if (mb_out_of_bounds(n, off, len))
                        return MB_ERR_TRUNCATED;
                if (node[0] == DP_TYPE_END && node[1] == DP_SUB_END_ENTIRE)
                        return MB_ERR_NOTFOUND;
                /* A shorter hard drive node is malformed; so is one that
                 * claims GPT with another signature type: neither names a
                 * partition, so the search goes on (as it does for MBR). */
                if (node[0] == DP_TYPE_MEDIA && node[1] == DP_SUB_HARD_DRIVE && len - 4u >= DP_HD_BODY &&
                    node[4 + DP_HD_FORMAT] == DP_HD_FORMAT_GPT && node[4 + DP_HD_SIG_TYPE] == DP_HD_SIG_GUID) {
                        mb_memcpy(ret_guid, node + 4 + DP_HD_SIGNATURE, 16);
                        return MB_OK;
                }
                off += len;
        }
}

void mb_devpath_partuuid_var(const uint8_t guid[16], uint8_t out[MB_PARTUUID_VAR_SIZE]) {
        char text[MB_PARTUUID_TEXT_UNITS + 1];
        mb_strbuf b;

        /* mb_strbuf_guid writes lower-case hex; LoaderDevicePartUUID is
         * upper case, as systemd-boot writes it. */
        mb_strbuf_init(&b, text, sizeof(text));
        mb_strbuf_guid(&b, guid);
        for (size_t i = 0; i < MB_PARTUUID_TEXT_UNITS; i++) {
                char c = text[i];
                if (c >= 'a' && c <= 'f')
                        c = (char) (c - 'a' + 'A');
                mb_put_le16(out + 2 * i, (uint16_t) (uint8_t) c);
        }
        mb_put_le16(out + 2 * MB_PARTUUID_TEXT_UNITS, 0);
}
