/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * libFuzzer target: device paths as the loader's volume reports them.
 * mb_devpath_gpt_partuuid on the input; a GUID it returns must be 16
 * bytes of the input (inside a hard drive node), and its
 * LoaderDevicePartUUID text is built and read. A failure leaves the
 * output untouched.
 */
#include <stdlib.h>
#include <string.h>

#include "mb/devpath.h"
#include "sink.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        uint8_t guid[16], var[MB_PARTUUID_VAR_SIZE];
        static const uint8_t poison[16] = { 0xa5, 0xa5, 0xa5, 0xa5, 0xa5, 0xa5, 0xa5, 0xa5,
                                            0xa5, 0xa5, 0xa5, 0xa5, 0xa5, 0xa5, 0xa5, 0xa5 };
        bool inside = false;

        memcpy(guid, poison, sizeof(guid));
        if (mb_devpath_gpt_partuuid(data, size, guid) != MB_OK) {
                if (memcmp(guid, poison, sizeof(guid)) != 0)
                        abort();
                return 0;
        }
        /* The GUID is input bytes: a hard drive node's signature field. */
        for (size_t off = 24; off + 16 <= size && !inside; off++)
                inside = memcmp(data + off, guid, 16) == 0;
        if (!inside)
                abort();
        mb_devpath_partuuid_var(guid, var);
        if (var[MB_PARTUUID_VAR_SIZE - 1] != 0 || var[MB_PARTUUID_VAR_SIZE - 2] != 0)
                abort();
        fuzz_read(var, sizeof(var));
        return 0;
}
