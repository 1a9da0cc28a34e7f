/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * mshim fence: the initramfs's PCR 15 events (docs/MEASUREMENTS.md "PCR 15:
 * the unseal fence and the opened volume"). Without --volume, the unseal
 * fence: after it no disk key's policy holds for the rest of the boot
 * (docs/SEALING.md "The unseal fence"). With --volume, which LUKS volume
 * the initramfs opens: its name, UUID and an HMAC keyed by its volume key.
 * Each is one TPM2_PCR_Event (TPM 2.0 Part 3 §22.5): the TPM hashes the
 * event data with every active bank's algorithm and extends PCR 15 with
 * it, so no bank is left out and no bank list is needed. The event data is
 * printed on standard output, one line, for the initramfs's log.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <string.h>
#include <unistd.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <tss2/tss2_rc.h>
#include "sealcmd.h"

#define VOLUME_PREFIX "mshim-volume:"
/* A volume key: LUKS2 keys are at most 512 bits for XTS, more with
 * authenticated encryption (a cipher key and an integrity key). */
#define VOLUME_KEY_MAX 1024u
/* A crypttab name in the event: printable ASCII without ':' (the field
 * separator), at most this long, so that the event fits TPM2B_EVENT
 * (1024 bytes, Part 2 §10.4.7). */
#define VOLUME_NAME_MAX 128u
#define UUID_LEN 36u

typedef struct fence_opts {
        const char *volume, *uuid, *key_file;
} fence_opts;

static bool name_ok(const char *s) {
        size_t n = strlen(s);

        if (n == 0 || n > VOLUME_NAME_MAX)
                return false;
        for (; *s; s++)
                if (*s <= 0x20 || *s >= 0x7f || *s == ':')
                        return false;
        return true;
}

/* A UUID as cryptsetup luksUUID prints it: 8-4-4-4-12 lower-case hex. */
static bool uuid_ok(const char *s) {
        if (strlen(s) != UUID_LEN)
                return false;
        for (size_t i = 0; i < UUID_LEN; i++) {
                bool dash = i == 8 || i == 13 || i == 18 || i == 23;
                if (dash ? s[i] != '-' : !((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
                        return false;
        }
        return true;
}

/* The volume key, 1..VOLUME_KEY_MAX bytes, into key (read, not mapped, so
 * that it can be wiped). */
static int key_read(const char *path, uint8_t key[VOLUME_KEY_MAX + 1], size_t *ret_n) {
        int fd = open(path, O_RDONLY | O_CLOEXEC), err = 0;
        size_t n = 0;

        if (fd < 0) {
                cli_error("%s: cannot open the volume key: %s", path, strerror(errno));
                return -1;
        }
        while (n <= VOLUME_KEY_MAX) {
                ssize_t k = read(fd, key + n, VOLUME_KEY_MAX + 1 - n);
                if (k < 0 && errno == EINTR)
                        continue;
                if (k < 0)
                        err = errno;
                if (k <= 0)
                        break;
                n += (size_t) k;
        }
        close(fd);
        if (err)
                cli_error("%s: cannot read the volume key: %s", path, strerror(err));
        else if (n == 0 || n > VOLUME_KEY_MAX)
                cli_error("%s: a volume key must be 1 to %u bytes", path, VOLUME_KEY_MAX);
        if (err || n == 0 || n > VOLUME_KEY_MAX)
                return -1;
        *ret_n = n;
        return 0;
}

/* "mshim-volume:NAME:UUID:" then the hex of HMAC-SHA256(volume key,
 * "mshim-volume:NAME:UUID"): the volume key itself never leaves, but only
 * its holder can make the digest (docs/MEASUREMENTS.md). */
static int volume_event(const fence_opts *o, char *ev, size_t cap) {
        uint8_t key[VOLUME_KEY_MAX + 1], mac[EVP_MAX_MD_SIZE];
        unsigned int mac_n = 0;
        size_t n = 0, k;
        int r = -1;

        if (key_read(o->key_file, key, &n) < 0)
                goto out;
        k = (size_t) snprintf(ev, cap, VOLUME_PREFIX "%s:%s", o->volume, o->uuid);
        if (!HMAC(EVP_sha256(), key, (int) n, (const uint8_t *) ev, k, mac, &mac_n) || cap < k + 2 + 2 * mac_n) {
                cli_error("cannot compute the volume's HMAC-SHA256");
                goto out;
        }
        ev[k++] = ':';
        for (unsigned int i = 0; i < mac_n; i++, k += 2)
                snprintf(ev + k, cap - k, "%02x", mac[i]);
        r = 0;
out:
        OPENSSL_cleanse(key, sizeof(key));
        return r;
}

static int extend(const char *ev) {
        TPM2B_EVENT data = { .size = (UINT16) strlen(ev) };
        TPML_DIGEST_VALUES *out = NULL;
        cli_tpm t;
        TSS2_RC rc;

        memcpy(data.buffer, ev, data.size);
        if (cli_tpm_connect(&t) < 0)
                return EXIT_BAD_INPUT;
        /* PCR 15's authValue is empty (Part 1 §17.6.7: PCRs 0-15 take no
         * authorization value at locality 0): a password session. */
        rc = Esys_PCR_Event(t.esys, ESYS_TR_PCR0 + MB_UNSEAL_FENCE_PCR, ESYS_TR_PASSWORD, ESYS_TR_NONE, ESYS_TR_NONE,
                            &data, &out);
        Esys_Free(out);
        cli_tpm_disconnect(&t);
        if (rc != TSS2_RC_SUCCESS) {
                cli_error("extending PCR %u (PCR_Event) failed: %s", MB_UNSEAL_FENCE_PCR, Tss2_RC_Decode(rc));
                return EXIT_BAD_INPUT;
        }
        printf("%s\n", ev);
        return fflush(stdout) == 0 ? 0 : EXIT_BAD_INPUT;
}

int cmd_fence(int argc, char **argv) {
        static const struct option longopts[] = {
                { "volume", required_argument, NULL, 'V' },
                { "uuid", required_argument, NULL, 'U' },
                { "volume-key-file", required_argument, NULL, 'K' },
                { "help", no_argument, NULL, 'h' },
                { 0 },
        };
        char ev[sizeof(((TPM2B_EVENT *) 0)->buffer) + 1];
        fence_opts o = { 0 };
        int c;

        optind = 1;
        while ((c = cli_getopt(argc, argv, "h", longopts, "fence")) != -1) {
                int once = 0;

                switch (c) {
                case 'V': once = cli_opt_once(&o.volume, "--volume", optarg); break;
                case 'U': once = cli_opt_once(&o.uuid, "--uuid", optarg); break;
                case 'K': once = cli_opt_once(&o.key_file, "--volume-key-file", optarg); break;
                case 'h': cli_help(stdout, "fence"); return 0;
                default: return EXIT_BAD_INPUT;
                }
                if (once < 0)
                        return EXIT_BAD_INPUT;
        }
        if (optind < argc)
                return cli_usage_error("fence", "unexpected argument '%s'", argv[optind]);
        if (!o.volume && !o.uuid && !o.key_file)
                return extend(MB_UNSEAL_FENCE_EVENT);
        if (!o.volume || !o.uuid || !o.key_file)
                return cli_usage_error("fence", "--volume, --uuid and --volume-key-file go together");
        if (!name_ok(o.volume))
                return cli_usage_error("fence", "--volume '%s': 1 to %u printable characters, no ':' or space", o.volume,
                                       VOLUME_NAME_MAX);
        if (!uuid_ok(o.uuid))
                return cli_usage_error("fence", "--uuid '%s': want a LUKS UUID, 8-4-4-4-12 lower-case hex digits", o.uuid);
        if (volume_event(&o, ev, sizeof(ev)) < 0)
                return EXIT_BAD_INPUT;
        return extend(ev);
}
