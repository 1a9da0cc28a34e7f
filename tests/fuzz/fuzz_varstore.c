/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * libFuzzer target: OVMF variable store images. mb_varstore_open on the
 * input; on success every record (mb_varstore_next), mb_varstore_find on
 * the first live ones, the FTW pending check, and the EFI_SIGNATURE_LIST
 * decoder (src/siglist.c) over every variable's data. Then, on a copy of
 * the image: add a variable, replace the first live one, delete the second
 * live one; the edited copy must open again and show exactly those changes.
 */
#include <stdlib.h>
#include <string.h>

#include "mb/varstore.h"
#include "sink.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);


/* Cap the work per input: is_live() rescans the store, so find is O(n^2). */
#define MAX_FINDS 8

static void siglists(const uint8_t *p, size_t n) {
        size_t off = 0, count = 0;
        mb_siglist l;

        while (mb_siglist_next(p, n, &off, &l) == MB_OK) {
                if (off > n || ++count > n / 28 + 1)
                        abort();
                fuzz_inside(p, n, l.header, l.header_size);
                if (l.sig_size == 0 || (uint64_t) l.n_sigs * l.sig_size > n)
                        abort();
                fuzz_inside(p, n, l.sigs, (size_t) l.n_sigs * l.sig_size);
                fuzz_read(l.header, l.header_size);
                fuzz_read(l.sigs, (size_t) l.n_sigs * l.sig_size);
        }
}

/* Live copies of (name, guid), counted by iteration. */
static size_t live_copies(const mb_varstore *vs, const uint8_t *name, size_t name_size, const mb_guid *g) {
        size_t cursor = 0, n = 0;
        mb_var v;

        while (mb_varstore_next(vs, &cursor, &v) == MB_OK)
                if (v.live && v.name_size == name_size && mb_guid_eq(&v.guid, g) &&
                    memcmp(v.name, name, name_size) == 0)
                        n++;
        return n;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        static const uint8_t new_name[] = { 'F', 0, 'u', 0, 'z', 0, 'z', 0, 0, 0 };
        static const uint8_t new_data[] = { 1, 2, 3, 4, 5 };
        static const uint8_t repl_data[] = { 0x42 };
        uint8_t *buf = malloc(size ? size : 1), *copy;
        mb_varstore vs, vs2;
        mb_var v, first = { 0 }, second = { 0 };
        size_t cursor = 0, count = 0, nlive = 0, finds = 0, prev = 0;
        uint8_t digest[32];
        mb_err r;

        if (!buf)
                return 0;
        memcpy(buf, data, size);
        if (mb_varstore_open(buf, size, &vs) != MB_OK) {
                free(buf);
                return 0;
        }
        if (vs.img != buf || vs.size != size || vs.vars_off > vs.vars_end || vs.free_off > vs.vars_end ||
            vs.vars_end > size || vs.ftw_off > size)
                abort();
        while ((r = mb_varstore_next(&vs, &cursor, &v)) == MB_OK) {
                if (cursor <= prev || cursor > size + 3 || ++count > size / 60 + 1)
                        abort(); /* no progress */
                prev = cursor;
                fuzz_inside(buf, size, v.name, v.name_size);
                fuzz_inside(buf, size, v.data, v.data_size);
                fuzz_read(v.name, v.name_size);
                fuzz_read(v.data, v.data_size);
                siglists(v.data, v.data_size);
                if (v.data_size < 4096 && mb_mok_auth(v.data, v.data_size, "pw", 2, digest) == MB_OK)
                        fuzz_read(digest, sizeof(digest));
                if (!v.live)
                        continue;
                if (nlive == 0)
                        first = v;
                else if (nlive == 1)
                        second = v;
                nlive++;
                if (finds++ < MAX_FINDS) {
                        mb_var w;

                        if (mb_varstore_find(&vs, v.name, v.name_size, &v.guid, &w) != MB_OK || !w.live ||
                            w.off > v.off)
                                abort(); /* a live variable GetVariable cannot see */
                }
        }
        fuzz_checksum += mb_varstore_ftw_pending(&vs);

        /* Edit a copy; the original must stay as it was. */
        copy = malloc(size);
        if (!copy)
                abort();
        memcpy(copy, buf, size);
        if (mb_varstore_open(copy, size, &vs2) != MB_OK)
                abort();
        bool added = false, replaced = false, deleted = false;
        size_t first_copies = nlive ? live_copies(&vs, first.name, first.name_size, &first.guid) : 0;
        size_t second_copies = nlive > 1 ? live_copies(&vs, second.name, second.name_size, &second.guid) : 0;
        bool second_same_as_first = nlive > 1 && second.name_size == first.name_size &&
                mb_guid_eq(&second.guid, &first.guid) && memcmp(second.name, first.name, first.name_size) == 0;

        r = mb_varstore_set(&vs2, new_name, sizeof(new_name), &MB_GUID_SHIM_LOCK,
                            MB_VAR_NON_VOLATILE | MB_VAR_BOOTSERVICE_ACCESS, NULL, new_data, sizeof(new_data));
        if (r == MB_OK)
                added = true;
        else if (r != MB_ERR_NOSPACE && r != MB_ERR_UNSUPPORTED && r != MB_ERR_INVALID)
                abort();
        if (nlive && first.name_size < 1024) {
                /* first.name points into buf, which the edits do not touch. */
                r = mb_varstore_set(&vs2, first.name, first.name_size, &first.guid, first.attributes,
                                    first.timestamp, repl_data, sizeof(repl_data));
                replaced = r == MB_OK;
        }
        if (nlive > 1 && !second_same_as_first) {
                r = mb_varstore_delete(&vs2, second.name, second.name_size, &second.guid);
                deleted = r == MB_OK;
        }
        if (memcmp(buf, data, size) != 0)
                abort(); /* editing the copy wrote to the original */

        /* The edited image must open again and read back the edits. */
        mb_varstore vs3;
        if (mb_varstore_open(copy, size, &vs3) != MB_OK)
                abort();
        cursor = 0;
        count = 0;
        while (mb_varstore_next(&vs3, &cursor, &v) == MB_OK)
                if (++count > size / 60 + 1)
                        abort();
        if (added) {
                bool new_is_first = nlive && first.name_size == sizeof(new_name) &&
                        mb_guid_eq(&first.guid, &MB_GUID_SHIM_LOCK) && memcmp(first.name, new_name, sizeof(new_name)) == 0;
                if (mb_varstore_find(&vs3, new_name, sizeof(new_name), &MB_GUID_SHIM_LOCK, &v) != MB_OK)
                        abort();
                if (!(new_is_first && replaced) &&
                    (v.data_size != sizeof(new_data) || memcmp(v.data, new_data, sizeof(new_data)) != 0))
                        abort();
        }
        if (replaced && first_copies == 1) {
                if (mb_varstore_find(&vs3, first.name, first.name_size, &first.guid, &v) != MB_OK ||
                    v.data_size != sizeof(repl_data) || v.data[0] != repl_data[0])
                        abort();
                if (live_copies(&vs3, first.name, first.name_size, &first.guid) != 1)
                        abort(); /* the replaced record is still live */
        }
        if (deleted && second_copies == 1 &&
            mb_varstore_find(&vs3, second.name, second.name_size, &second.guid, &v) != MB_ERR_NOTFOUND)
                abort();
        free(copy);
        free(buf);
        return 0;
}
