/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * libFuzzer target: the sealed-file and approval codecs (src/sealfile.c).
 * Every input goes to both parsers. Whatever a parser accepts, its writer
 * must write (the two share their rules), and the written text must parse
 * back to the same structure and write again to the same bytes.
 */
#include <stdlib.h>
#include <string.h>

#include "mb/sealfile.h"
#include "sink.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The largest sealed file: 512 states and four full blobs, in hex. */
#define OUT_MAX (MB_SEAL_STATE_MAX * (8 + 2 * MB_SEAL_VALUES_MAX) + 6 * MB_SEAL_LINE_MAX)

static uint8_t states[MB_SEAL_STATE_MAX * MB_SEAL_VALUES_MAX], states2[sizeof(states)];
static char out[OUT_MAX], out2[OUT_MAX];

static void sealed(const char *buf, size_t size) {
        static mb_sealed s, back;
        size_t line = 0, len, len2;

        if (mb_sealed_parse(buf, size, states, sizeof(states), &s, &line) != MB_OK) {
                if (line > size + 1)
                        abort();        /* an error line past the input */
                return;
        }
        if (s.n_states) {
                fuzz_inside(states, sizeof(states), s.states, s.n_states * mb_sealed_state_size(s.bank, s.pcrs));
                fuzz_read(s.states, s.n_states * mb_sealed_state_size(s.bank, s.pcrs));
        }
        if (mb_sealed_write(&s, out, sizeof(out), &len) != MB_OK || len != size ||
            mb_sealed_parse(out, len, states2, sizeof(states2), &back, &line) != MB_OK ||
            back.n_states != s.n_states || (s.n_states && memcmp(states, states2, s.n_states * mb_sealed_state_size(s.bank, s.pcrs))) ||
            mb_sealed_write(&back, out2, sizeof(out2), &len2) != MB_OK || len2 != len || memcmp(out, out2, len))
                abort();
}

static void approval(const char *buf, size_t size) {
        static mb_approval a, back;
        size_t line = 0, len, len2;
        uint8_t r[32], s[32];

        if (mb_approval_parse(buf, size, &a, &line) != MB_OK) {
                if (line > size + 1)
                        abort();
                return;
        }
        if (mb_approval_sig_rs(a.signature, a.signature_size, r, s) != MB_OK ||
            mb_approval_write(&a, out, sizeof(out), &len) != MB_OK || len != size ||
            mb_approval_parse(out, len, &back, &line) != MB_OK || memcmp(&a, &back, sizeof(a)) != 0 ||
            mb_approval_write(&back, out2, sizeof(out2), &len2) != MB_OK || len2 != len || memcmp(out, out2, len))
                abort();
        fuzz_read(r, sizeof(r));
        fuzz_read(s, sizeof(s));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        char *buf = malloc(size ? size : 1);   /* exactly size bytes, no NUL */

        if (!buf)
                return 0;
        memcpy(buf, data, size);
        sealed(buf, size);
        approval(buf, size);
        free(buf);
        return 0;
}
