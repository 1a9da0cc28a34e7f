/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The TOTP code at boot (efi/totp.c) on the fake firmware: the code shown
 * is HMAC-SHA1 (OpenSSL, here) of the time step with the fake TPM's key,
 * truncated per RFC 4226 (written out here); a policy the TPM refuses
 * gives the warning, and with "totp require" nothing starts; the fence
 * (its bytes spelled out from docs/MEASUREMENTS.md) is extended into PCR
 * 12 in every path, before the kernel, and into PCR 13 (the lock) before
 * every kernel, whatever loader.conf says; a malformed TPM answer is a
 * refusal, never a crash (ASan). The enrolled state is what the fake TPM's
 * PCRs are at the TOTP point, learned from a first boot in a child process
 * (the enrolment file is not measured, so both boots measure the same).
 */
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include "harness.h"

#define EV_EVENT_TAG 0x00000006
#define EV_IPL       0x0000000d
#define CC_HMAC 0x155u
#define CC_FLUSH_CONTEXT 0x165u
#define CC_POLICY_OR 0x171u
#define CC_START_AUTH_SESSION 0x176u
#define CC_POLICY_PCR 0x17Fu
#define MASK ((1u << 4) | (1u << 5) | (1u << 7) | (1u << 12))
#define N_PCRS 4
#define JAN1_2026 1767225600ull

static const uint8_t FENCE[] = { 0x08, 0x68, 0x73, 0x6d, 17, 0, 0, 0, 'm', 's', 'h', 'i', 'm', ' ', 'T', 'O', 'T',
                                 'P', ' ', 'f', 'e', 'n', 'c', 'e', 0 };

/* What the kernel saw when it started: the fences already in PCR 12, and
 * (with an initrd) what its stub got through LoadFile2. */
static struct {
        bool started;
        size_t fences;
        EFI_STATUS initrd_status;
        char initrd[64];
        size_t initrd_size;
} k;

/* Set by the next scenario's users: the initrd file is replaced by this
 * text when the kernel starts, before its stub asks for the initrd. */
static const char *swap_text;

/* The fences in pcr (12 or 13). */
static size_t fences_in(uint32_t pcr) {
        size_t n[2] = { 0, 0 };

        for (size_t i = 0; i < fh_n_events(); i++) {
                const fh_event *e = fh_event_at(i);
                bool fence = e->type == EV_EVENT_TAG && !EFI_ERROR(e->status) && e->event_size == sizeof(FENCE) &&
                             memcmp(e->event, FENCE, sizeof(FENCE)) == 0 && e->data_size == sizeof(FENCE) &&
                             memcmp(e->data, FENCE, sizeof(FENCE)) == 0;
                if (fence && (e->pcr == 12 || e->pcr == 13))
                        n[e->pcr - 12]++;
        }
        return n[pcr - 12];
}

/* The fences in PCR 12. */
static size_t count_fences(void) {
        return fences_in(12);
}

static EFI_STATUS kernel_entry(EFI_HANDLE image, EFI_SYSTEM_TABLE *st) {
        k.started = true;
        k.fences = count_fences();
        /* Whatever loader.conf says: the lock is in PCR 13, once, before
         * any image starts (docs/MEASUREMENTS.md "The TOTP fence"). */
        FH_CHECK_EQ(fences_in(13), 1);
        if (swap_text)
                fh_file_str("/initrd.img", swap_text);
        k.initrd_status = fh_stub_load_initrd(k.initrd, sizeof(k.initrd), &k.initrd_size);
        return EFI_LOAD_ERROR;
}

static const fh_image_spec kernel = { .entry = kernel_entry };

static void hex(const uint8_t *p, size_t n, char *out) {
        for (size_t i = 0; i < n; i++)
                sprintf(out + 2 * i, "%02x", p[i]);
}

/* The entry's initrd (NULL: none) and whether it boots an EFI program
 * (efi /app.efi) instead of linux, for the next scenario. */
static const char *initrd_text;
static bool efi_entry;
/* The kernel is a Linux image whose stub measures the initrd itself (6.1)
 * rather than a file mshim knows nothing of. */
static bool stub_kernel;

/* The ESP: loader.conf, one entry, the kernel, the clock at 2026-01-01
 * 00:00:00 UTC; the enrolment file with these states (NULL: none). */
static void scenario(const char *conf, const uint8_t *states, size_t n_states) {
        static char text[8192];
        int off;

        fh_file_str("/loader/loader.conf", conf);
        snprintf(text, sizeof(text), "title A\n%s\n%soptions quiet\n", efi_entry ? "efi /app.efi" : "linux /vmlinuz",
                 initrd_text ? "initrd /initrd.img\n" : "");
        fh_file_str("/loader/entries/a.conf", text);
        if (stub_kernel) {
                static uint8_t img[FH_LINUX_IMAGE_MIN + 16];

                fh_image_bytes("/vmlinuz", img, fh_linux_image(img, sizeof(img), "6.1.0"), &kernel);
        } else {
                fh_image(efi_entry ? "/app.efi" : "/vmlinuz", &kernel);
        }
        if (initrd_text)
                fh_file_str("/initrd.img", initrd_text);
        fh_clock(2026, 1, 1, 0, 0, 0, 0x7ff);
        if (!states)
                return;
        off = snprintf(text, sizeof(text),
                       "mshim-totp 1\nhandle 0x81004d54\nname 000b%064d\npolicy %064d\nmode literal\nbank sha256\npcrs 4,5,7,12\n",
                       0, 0);
        for (size_t i = 0; i < n_states; i++) {
                off += snprintf(text + off, sizeof(text) - off, "state ");
                hex(states + i * N_PCRS * 32, N_PCRS * 32, text + off);
                off += 2 * N_PCRS * 32;
                off += snprintf(text + off, sizeof(text) - off, "\n");
        }
        fh_file_str("/loader/mshim/totp", text);
}

/* The PCRs at the TOTP point of a boot of this loader.conf, from a boot
 * in a child whose enrolment holds a state that cannot match. */
static void learn_state(const char *conf, uint8_t out[N_PCRS * 32]) {
        int fd[2];
        pid_t pid;
        ssize_t got;

        if (pipe(fd) != 0 || (pid = fork()) < 0)
                abort();
        if (pid == 0) {
                uint8_t junk[N_PCRS * 32] = { 1 }, v[N_PCRS * 32];

                close(fd[0]);
                scenario(conf, junk, 1);
                fh_clock(2026, 1, 1, 0, 0, 0, 0);       /* a known offset for "rtc local" */
                /* Call 1 is the boot menu's look at the keyboard
                 * (menu-hidden, efi/menu.c); the TOTP screen's first is 2. */
                fh_key_after(2);
                fh_boot();
                if (fh_tpm_policy_pcr_values(MASK, v) && write(fd[1], v, sizeof(v)) == (ssize_t) sizeof(v))
                        _exit(0);
                _exit(1);
        }
        close(fd[1]);
        got = read(fd[0], out, N_PCRS * 32);
        close(fd[0]);
        waitpid(pid, NULL, 0);
        FH_CHECK_EQ(got, N_PCRS * 32);
}

/* One more boot for a case (fh_boot runs once a process): body(arg) in a
 * child; its failure fails the case, naming what and arg. */
static void in_child(void (*body)(size_t), size_t arg, const char *what) {
        int status = 0;
        pid_t pid = fork();

        if (pid == 0) {
                body(arg);
                fflush(stderr);
                _exit(fh_case_ok() ? 0 : 1);
        }
        waitpid(pid, &status, 0);
        if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
                fh_fail(__FILE__, __LINE__, "%s %zu failed", what, arg);
}

/* RFC 6238 with RFC 4226's truncation, from OpenSSL's HMAC-SHA1. */
static unsigned expected_code(uint64_t unix_time) {
        uint8_t msg[8], mac[20];
        uint64_t t = unix_time / 30;
        unsigned len = 0, off;

        for (int i = 7; i >= 0; i--, t >>= 8)
                msg[i] = (uint8_t) t;
        HMAC(EVP_sha1(), fh_tpm_hmac_key, sizeof(fh_tpm_hmac_key), msg, sizeof(msg), mac, &len);
        off = mac[19] & 0xf;
        return (((unsigned) (mac[off] & 0x7f) << 24) | ((unsigned) mac[off + 1] << 16) |
                ((unsigned) mac[off + 2] << 8) | mac[off + 3]) % 1000000;
}

static bool shows(unsigned code, const char *when) {
        char line[128];

        snprintf(line, sizeof(line), "mshim: TOTP %06u for %s", code, when);
        return fh_console_has(line);
}

static void check_commands(const uint32_t *want, size_t n) {
        FH_CHECK_EQ(fh_tpm_n_commands(), n);
        for (size_t i = 0; i < n && i < fh_tpm_n_commands(); i++)
                FH_CHECK_EQ(fh_tpm_command_at(i)->code, want[i]);
        FH_CHECK_EQ(fh_tpm_open_sessions(), 0);
}

static const char SHOW45[] = "totp show\ntotp-timeout 45\n";

/* The enrolled boot: the code of each step the 45 s spanned, big and on
 * its line, 3 TPM commands each; the fence before the kernel. */
FH_CASE(code_shown_and_refreshed) {
        /* One state: PolicyOR of the leaf with itself (mb_policy_tree_root). */
        static const uint32_t want[] = { CC_START_AUTH_SESSION, CC_POLICY_PCR, CC_POLICY_OR, CC_HMAC,
                                         CC_START_AUTH_SESSION, CC_POLICY_PCR, CC_POLICY_OR, CC_HMAC };
        uint8_t st[N_PCRS * 32];

        learn_state(SHOW45, st);
        scenario(SHOW45, st, 1);
        fh_boot();
        FH_CHECK(shows(expected_code(JAN1_2026), "2026-01-01 00:00:00 UTC"));
        FH_CHECK(shows(expected_code(JAN1_2026 + 30), "2026-01-01 00:00:30 UTC"));
        FH_CHECK(!fh_console_has("not the enrolled one"));
        /* The big digits: a row of blocks two characters wide per dot. */
        FH_CHECK(fh_console_has("##"));
        check_commands(want, 2 * 4);
        FH_CHECK_EQ(fh_clock_stalled_us(), 45ull * 1000000);
        FH_CHECK(k.started);
        FH_CHECK_EQ(k.fences, 1);
        FH_CHECK_CLEAN();
}

/* A key ends the wait at once; several states: the matching one's
 * PolicyPCR after a refused one, then its PolicyOR path. */
FH_CASE(key_and_or_path) {
        static const uint32_t want[] = { CC_START_AUTH_SESSION, CC_POLICY_PCR, CC_POLICY_PCR, CC_POLICY_OR, CC_HMAC };
        uint8_t st[3 * N_PCRS * 32];

        learn_state("totp require\ntotp-timeout 0\n", st + N_PCRS * 32);
        memset(st, 0x11, N_PCRS * 32);
        memset(st + 2 * N_PCRS * 32, 0x22, N_PCRS * 32);
        scenario("totp require\ntotp-timeout 0\n", st, 3);
        fh_key_after(4);        /* the TOTP screen's third poll (call 1: the menu's look) */
        fh_boot();
        FH_CHECK(shows(expected_code(JAN1_2026), "2026-01-01 00:00:00 UTC"));
        check_commands(want, 5);
        FH_CHECK_EQ(fh_clock_stalled_us(), 2ull * 100000);
        FH_CHECK(k.started);
        FH_CHECK_EQ(k.fences, 1);
        FH_CHECK_CLEAN();
}

/* Another boot (the state is not this one's): the warning, a wait, the
 * fence, and the kernel starts; 3 commands, the session flushed. */
FH_CASE(refused_warns) {
        static const uint32_t want[] = { CC_START_AUTH_SESSION, CC_POLICY_PCR, CC_FLUSH_CONTEXT };
        uint8_t st[N_PCRS * 32];

        memset(st, 0x33, sizeof(st));
        scenario("totp show\ntotp-timeout 2\n", st, 1);
        fh_boot();
        FH_CHECK(fh_console_has("mshim: this boot is not the enrolled one: do not type secrets"));
        FH_CHECK(!fh_console_has("mshim: TOTP "));
        check_commands(want, 3);
        FH_CHECK_EQ(fh_tpm_command_at(1)->rc & 0xbf, 0x84);      /* TPM_RC_VALUE */
        FH_CHECK_EQ(fh_clock_stalled_us(), 2ull * 1000000);
        FH_CHECK(k.started);
        FH_CHECK_EQ(k.fences, 1);
        FH_CHECK_CLEAN();
}

/* totp require and a refusal: no StartImage, the fence extended all the same. */
FH_CASE(require_refused_starts_nothing) {
        uint8_t st[N_PCRS * 32];

        memset(st, 0x33, sizeof(st));
        scenario("totp require\n", st, 1);
        fh_boot();
        FH_CHECK(fh_console_has("not the enrolled one"));
        FH_CHECK(fh_console_has("totp require: refusing to boot"));
        FH_CHECK_EQ(fh_calls("StartImage"), 0);
        FH_CHECK(!k.started);
        FH_CHECK_EQ(count_fences(), 1);
        FH_CHECK_CLEAN();
}

/* No enrolment: show boots after the warning, require does not; both fence. */
static void no_enrolment_show(size_t unused) {
        scenario("totp show\ntotp-timeout 1\n", NULL, 0);
        fh_boot();
        FH_CHECK(fh_console_has("no enrolment"));
        FH_CHECK(fh_console_has("no TOTP code could be made: do not type secrets"));
        FH_CHECK(k.started && k.fences == 1);
        FH_CHECK_EQ(fh_tpm_n_commands(), 0);
        FH_CHECK_CLEAN();
}

FH_CASE(no_enrolment_file) {
        in_child(no_enrolment_show, 0, "totp show without an enrolment");
        scenario("totp require\n", NULL, 0);
        fh_boot();
        FH_CHECK_EQ(fh_calls("StartImage"), 0);
        FH_CHECK_EQ(count_fences(), 1);
        FH_CHECK_CLEAN();
}

static void size_too_big(uint8_t *rsp, size_t cap) {
        rsp[2] = 0x7f;
}

static void size_too_small(uint8_t *rsp, size_t cap) {
        rsp[2] = rsp[3] = rsp[4] = 0;
        rsp[5] = 4;
}

static void hmac_short(uint8_t *rsp, size_t cap) {
        if (rsp[9] == 0 && rsp[5] > 20)
                rsp[15] = 19;   /* outHMAC's size: one byte short of SHA-1's */
}

/* A TPM answer whose size field is above the buffer, below a header, or
 * whose HMAC has the wrong length: no code (the warning), no crash; with
 * require nothing starts. */
static const struct { uint32_t cc; fh_tpm_tamper_fn fn; } tampering[] = {
        { CC_HMAC, size_too_big }, { CC_START_AUTH_SESSION, size_too_small }, { CC_HMAC, hmac_short },
        { CC_POLICY_PCR, size_too_big },
};
static uint8_t learned[N_PCRS * 32];

static void tampered_boot(size_t i) {
        scenario("totp require\n", learned, 1);
        fh_tpm_tamper(tampering[i].cc, tampering[i].fn);
        fh_boot();
        FH_CHECK(fh_console_has("no TOTP code could be made"));
        FH_CHECK(!fh_console_has("mshim: TOTP "));
        FH_CHECK_EQ(fh_calls("StartImage"), 0);
        FH_CHECK_EQ(count_fences(), 1);
        FH_CHECK_CLEAN();
}

FH_CASE(malformed_answers_refuse) {
        learn_state("totp require\n", learned);
        for (size_t i = 0; i < sizeof(tampering) / sizeof(tampering[0]); i++)
                in_child(tampered_boot, i, "tampering");
}

/* The fence is a measurement like the others: when it fails, nothing starts. */
FH_CASE(fence_fails_closed) {
        uint8_t st[N_PCRS * 32];

        learn_state("totp show\ntotp-timeout 1\n", st);
        scenario("totp show\ntotp-timeout 1\n", st, 1);
        /* loader.conf, the entry, the command line, the initrd event, then
         * the fence. */
        fh_tpm_fail(5, EFI_DEVICE_ERROR);
        fh_boot();
        FH_CHECK(fh_console_has("the TPM failed to measure the TOTP fence into PCR 12"));
        FH_CHECK_EQ(fh_calls("StartImage"), 0);
        FH_CHECK_CLEAN();
}

/* The initrd event cannot be measured: no code, nothing starts. */
FH_CASE(initrd_event_fails_closed) {
        scenario("totp show\ntotp-timeout 1\n", NULL, 0);
        fh_tpm_fail(4, EFI_DEVICE_ERROR);
        fh_boot();
        FH_CHECK(fh_console_has("the TPM failed to measure the initrd for the TOTP code into PCR 12"));
        FH_CHECK(!fh_console_has("mshim: TOTP 0"));
        FH_CHECK_EQ(fh_calls("StartImage"), 0);
        FH_CHECK_CLEAN();
}

/* The TOTP initrd event as docs/MEASUREMENTS.md spells it: tag "msh" 9,
 * 40 bytes: the size (u64 LE), SHA-256 of the initrd (OpenSSL's). */
static void initrd_event(const char *initrd, uint8_t out[48]) {
        static const uint8_t head[8] = { 0x09, 0x68, 0x73, 0x6d, 40, 0, 0, 0 };
        size_t n = initrd ? strlen(initrd) : 0;
        unsigned len = 0;

        memcpy(out, head, 8);
        for (int i = 0; i < 8; i++)
                out[8 + i] = (uint8_t) ((uint64_t) n >> (8 * i));
        EVP_Digest(initrd ? initrd : "", n, out + 16, &len, EVP_sha256(), NULL);
}

/* PCR 12 holds, in order: the command line, this initrd's event (data
 * and digest input both the 48 bytes), the fence (then, the fake kernel
 * having returned, mshim's exit marker). */
static void check_pcr12(const char *initrd) {
        uint8_t want[48];
        size_t seen = 0;

        initrd_event(initrd, want);
        for (size_t i = 0; i < fh_n_events() && seen < 3; i++) {
                const fh_event *e = fh_event_at(i);
                if (e->pcr != 12 || EFI_ERROR(e->status))
                        continue;
                if (seen == 0)
                        FH_CHECK_EQ(e->type, EV_IPL);
                if (seen == 1)
                        FH_CHECK(e->type == EV_EVENT_TAG && e->event_size == 48 && memcmp(e->event, want, 48) == 0 &&
                                 e->data_size == 48 && memcmp(e->data, want, 48) == 0);
                if (seen == 2)
                        FH_CHECK(e->event_size == sizeof(FENCE) && memcmp(e->event, FENCE, sizeof(FENCE)) == 0);
                seen++;
        }
        FH_CHECK_EQ(seen, 3);
}

static const char GOOD_INITRD[] = "the enrolled initramfs", EVIL_INITRD[] = "an evil maid's initramfs";

static void enrolled_initrd(size_t unused) {
        uint8_t st[N_PCRS * 32];

        learn_state("totp show\ntotp-timeout 1\n", st);
        scenario("totp show\ntotp-timeout 1\n", st, 1);
        fh_boot();
        FH_CHECK(shows(expected_code(JAN1_2026), "2026-01-01 00:00:00 UTC"));
        check_pcr12(GOOD_INITRD);
        FH_CHECK(k.started && k.fences == 1);
        FH_CHECK_CLEAN();
}

/* Issue 20, finding 1: the initrd is swapped on the ESP after the
 * enrolment (same kernel, same command line): the code is refused, because
 * PCR 12 binds the initrd before the code. An entry without initrd gets
 * the event over zero bytes. */
FH_CASE(evil_initrd_no_code) {
        uint8_t st[N_PCRS * 32];

        initrd_text = GOOD_INITRD;
        in_child(enrolled_initrd, 0, "the enrolled initrd gives the code");
        learn_state("totp show\ntotp-timeout 1\n", st);
        initrd_text = EVIL_INITRD;
        scenario("totp show\ntotp-timeout 1\n", st, 1);
        fh_boot();
        initrd_text = NULL;
        FH_CHECK(fh_console_has("mshim: this boot is not the enrolled one: do not type secrets"));
        FH_CHECK(!fh_console_has("mshim: TOTP 0") && !shows(expected_code(JAN1_2026), "2026-01-01 00:00:00 UTC"));
        check_pcr12(EVIL_INITRD);
        FH_CHECK(k.started && k.fences == 1);
        FH_CHECK_CLEAN();
}

/* The kernel's stub measures the initrd into PCR 9 itself, but only after
 * the code was shown: mshim reads it before the code all the same and
 * serves that very buffer, so an initrd swapped on the ESP once the code
 * is on the screen, before the stub asks, never reaches the kernel. */
static void swap_after_the_code(size_t unused) {
        uint8_t st[N_PCRS * 32];

        stub_kernel = true;
        initrd_text = GOOD_INITRD;
        learn_state("totp show\ntotp-timeout 1\n", st);
        scenario("totp show\ntotp-timeout 1\n", st, 1);
        swap_text = EVIL_INITRD;
        fh_boot();
        FH_CHECK(shows(expected_code(JAN1_2026), "2026-01-01 00:00:00 UTC"));
        check_pcr12(GOOD_INITRD);
        FH_CHECK(k.started);
        FH_CHECK_EQ(k.initrd_status, EFI_SUCCESS);
        FH_CHECK(k.initrd_size == strlen(GOOD_INITRD) && memcmp(k.initrd, GOOD_INITRD, k.initrd_size) == 0);
        FH_CHECK_EQ(fh_count_events(9, 0), 0);          /* the stub's to make */
        FH_CHECK_CLEAN();
}

FH_CASE(initrd_swapped_after_the_code_never_reaches_the_kernel) {
        in_child(swap_after_the_code, 0, "a 6.1 stub, the initrd swapped after the code");
}

static void no_initrd(size_t unused) {
        scenario("totp show\ntotp-timeout 1\n", NULL, 0);
        fh_boot();
        check_pcr12(NULL);
        FH_CHECK_CLEAN();
}

/* An efi entry: the program loads what it likes after the code, so none
 * is made: with show the warning says so and it starts (fenced); with
 * require nothing starts. No TPM command at all. */
static void efi_entry_boot(size_t require) {
        uint8_t st[N_PCRS * 32];

        /* Any enrolment: no code is even attempted. */
        memset(st, 0x44, sizeof(st));
        efi_entry = true;
        scenario(require ? "totp require\n" : "totp show\ntotp-timeout 1\n", st, 1);
        fh_boot();
        FH_CHECK(fh_console_has("starts an EFI program: it loads what it likes after the code"));
        FH_CHECK(fh_console_has("no TOTP code could be made: do not type secrets"));
        FH_CHECK(!fh_console_has("mshim: TOTP 0"));
        FH_CHECK_EQ(fh_tpm_n_commands(), 0);
        FH_CHECK_EQ(count_fences(), 1);
        FH_CHECK_EQ(fh_calls("StartImage"), require ? 0 : 1);
        if (require)
                FH_CHECK(fh_console_has("totp require: refusing to boot"));
        FH_CHECK_CLEAN();
}

FH_CASE(efi_entry_no_code) {
        in_child(no_initrd, 0, "an entry without initrd");
        in_child(efi_entry_boot, 0, "an efi entry, totp show");
        in_child(efi_entry_boot, 1, "an efi entry, totp require");
}

/* Issue 20, finding 7: the built-in policy's "totp require" is a floor
 * loader.conf's "totp no" cannot lower: no enrolment, nothing starts. */
static void floor_boot(size_t conf_no) {
        fh_boot_policy("tpm-required no\ntpm-failure refuse\ntotp require\n");
        scenario(conf_no ? "totp no\n" : "timeout 0\n", NULL, 0);
        fh_boot();
        FH_CHECK(fh_console_has("no enrolment"));
        FH_CHECK(fh_console_has("totp require: refusing to boot"));
        FH_CHECK_EQ(fh_calls("StartImage"), 0);
        FH_CHECK_EQ(count_fences(), 1);
        FH_CHECK_CLEAN();
}

FH_CASE(builtin_totp_floor) {
        in_child(floor_boot, 1, "built-in totp require, loader.conf totp no");
        in_child(floor_boot, 0, "built-in totp require, no totp in loader.conf");
}

/* No entries: the chainload path has its TOTP point too (after its PCR 12
 * event), so "totp require" cannot be escaped by deleting the entries; it
 * makes no code (GRUB loads a kernel and initrd after it), only the
 * warning saying why, and the fence. */
static const fh_image_spec grub = { .entry = NULL };

/* No entries, GRUB next to mshim; totp show (0) or require (1). */
static void chainload_boot(size_t require) {
        fh_file_str("/loader/loader.conf", require ? "totp require\n" : "totp show\ntotp-timeout 1\n");
        fh_image("/EFI/BOOT/grubx64.efi", &grub);
        fh_clock(2026, 1, 1, 0, 0, 0, 0);
        fh_boot();
}

static void chainload_show(size_t unused) {
        chainload_boot(0);
        FH_CHECK(fh_console_has("starts an EFI program: it loads what it likes after the code"));
        FH_CHECK(fh_console_has("no TOTP code could be made"));
        FH_CHECK_EQ(fh_tpm_n_commands(), 0);
        FH_CHECK_EQ(fh_calls("StartImage"), 1);
        FH_CHECK_EQ(count_fences(), 1);
        FH_CHECK_CLEAN();
}

FH_CASE(chainload_path) {
        in_child(chainload_show, 0, "totp show on the chainload path");
        chainload_boot(1);
        FH_CHECK(fh_console_has("totp require: refusing to boot"));
        FH_CHECK_EQ(fh_calls("StartImage"), 0);
        FH_CHECK_EQ(count_fences(), 1);
        FH_CHECK_CLEAN();
}

/* totp require under memory pressure: whichever allocation fails, the
 * kernel never starts silently: after its code, or (when loader.conf
 * itself could not be read, and its defaults say "totp show") after the
 * warning; nothing leaks. */
static void require_scenario(void) {
        scenario("totp require\ntotp-timeout 1\n", learned, 1);
        fh_boot();
        if (fh_calls("StartImage"))
                FH_CHECK(shows(expected_code(JAN1_2026), "2026-01-01 00:00:00 UTC") ||
                         fh_console_has("do not type secrets"));
        FH_CHECK(count_fences() <= 1 && fences_in(13) <= 1);
        FH_CHECK_CLEAN();
}

FH_CASE(require_under_allocation_failures) {
        learn_state("totp require\ntotp-timeout 1\n", learned);
        fh_each_alloc_failure(require_scenario);
}

/* totp no (the default, or written there by root): no TPM command, no
 * fence in PCR 12, but the lock in PCR 13 before the kernel (checked in
 * kernel_entry, and here once more). */
FH_CASE(totp_off) {
        scenario("timeout 0\n", NULL, 0);
        fh_boot();
        FH_CHECK_EQ(fh_tpm_n_commands(), 0);
        FH_CHECK_EQ(count_fences(), 0);
        FH_CHECK(k.started);
        FH_CHECK_EQ(fences_in(13), 1);
        FH_CHECK_CLEAN();
}

/* The RTC in local time: the firmware's TimeZone (Localtime = UTC -
 * TimeZone) or rtc-offset; with neither known, no code. */
static void local_clock_boot(size_t i) {
        static const char *const confs[] = { "totp show\ntotp-timeout 1\nrtc local\n",
                                             "totp show\ntotp-timeout 1\nrtc-offset +01:00\n",
                                             "totp show\ntotp-timeout 1\nrtc local\n" };
        static const int16_t tz[] = { -60, 0x7ff, 0x7ff };
        uint8_t st[N_PCRS * 32] = { 0 };

        if (i < 2)
                learn_state(confs[i], st);
        scenario(confs[i], st, 1);
        fh_clock(2026, 1, 1, 1, 0, 0, tz[i]);   /* 01:00 local */
        fh_boot();
        if (i < 2)
                FH_CHECK(shows(expected_code(JAN1_2026), "2026-01-01 00:00:00 UTC"));
        else
                FH_CHECK(fh_console_has("set rtc-offset in loader.conf"));
        FH_CHECK_CLEAN();
}

FH_CASE(rtc_local_time) {
        for (size_t i = 0; i < 3; i++)
                in_child(local_clock_boot, i, "clock configuration");
}

/* Signed mode with no approval that can hold: one that does not parse,
 * one for other PCRs. Each is skipped with its reason, no TPM command is
 * sent, the warning says there are none, the fence comes all the same;
 * show boots, require does not. (The TPM side of the signed mode needs a
 * real TPM: tests/integration/test_totp.sh.) */
static void signed_no_approval(size_t require) {
        char text[1024];

        scenario(require ? "totp require\n" : "totp show\ntotp-timeout 1\n", NULL, 0);
        snprintf(text, sizeof(text),
                 "mshim-totp 1\nhandle 0x81004d54\nname 000b%064d\npolicy %064d\nmode signed\nbank sha256\n"
                 "pcrs 4,5,7,12\npolicy-key 0006%012d\nnv-index 0x01804d53\nnv-name 000b%064d\n", 0, 0, 0, 0);
        fh_file_str("/loader/mshim/totp", text);
        fh_file_str("/loader/mshim/totp-approvals/broken.approval", "mshim-approval 1\nepoch x\n");
        snprintf(text, sizeof(text),
                 "mshim-approval 1\nepoch 0\nbank sha256\npcrs 7\nvalues %064d\npolicy %064d\n"
                 "signature 3006020101020101\ncreated 2026-01-01T00:00:00Z\n", 0, 0);
        fh_file_str("/loader/mshim/totp-approvals/other.approval", text);
        fh_boot();
        FH_CHECK(fh_console_has("broken.approval: "));
        FH_CHECK(fh_console_has("other.approval: not for the enrolled PCRs; skipped"));
        FH_CHECK(fh_console_has("TOTP: no approvals in \\loader\\mshim\\totp-approvals"));
        FH_CHECK(fh_console_has("this boot is not the enrolled one: do not type secrets"));
        FH_CHECK_EQ(fh_tpm_n_commands(), 0);
        FH_CHECK_EQ(count_fences(), 1);
        FH_CHECK_EQ(fh_calls("StartImage"), require ? 0 : 1);
        FH_CHECK_CLEAN();
}

/* A TPM whose largest command and answer are under 4096 bytes (QEMU's
 * CRB TPM reports 3968; discrete TPMs 2048 or 1024): the loader offers
 * SubmitCommand an answer buffer no larger than that, which the firmware
 * otherwise refuses (EFI_INVALID_PARAMETER: no code, found booting with
 * a CRB TPM), and the code is shown. */
static void small_tpm(size_t max) {
        uint8_t st[N_PCRS * 32];

        learn_state(SHOW45, st);
        scenario(SHOW45, st, 1);
        fh_tpm_max_sizes((uint16_t) max, (uint16_t) max);
        fh_boot();
        FH_CHECK(shows(expected_code(JAN1_2026), "2026-01-01 00:00:00 UTC"));
        FH_CHECK(!fh_console_has("did not take"));
        FH_CHECK(k.started);
        FH_CHECK_CLEAN();
}

FH_CASE(small_tpm_buffers) {
        in_child(small_tpm, 3968, "TPM buffers of");
        in_child(small_tpm, 1024, "TPM buffers of");
}

/* A TPM that takes commands of at most 12 bytes (less than
 * StartAuthSession): nothing is sent, the reason is said, no code is
 * shown, and the boot goes on with the warning, as for any TPM failure. */
FH_CASE(command_over_tpm_limit) {
        uint8_t st[N_PCRS * 32];

        memset(st, 0x44, sizeof(st));
        scenario("totp show\ntotp-timeout 2\n", st, 1);
        fh_tpm_max_sizes(12, 4096);
        fh_boot();
        FH_CHECK(fh_console_has("the TPM takes at most 12"));
        FH_CHECK(fh_console_has("do not type secrets"));
        /* No command reached the TPM, so no code can have been made. */
        FH_CHECK_EQ(fh_tpm_n_commands(), 0);
        FH_CHECK(k.started);
        FH_CHECK_CLEAN();
}

FH_CASE(signed_without_approvals) {
        in_child(signed_no_approval, 0, "signed, totp show");
        in_child(signed_no_approval, 1, "signed, totp require");
}

int main(void) {
        FH_RUN(code_shown_and_refreshed);
        FH_RUN(key_and_or_path);
        FH_RUN(refused_warns);
        FH_RUN(require_refused_starts_nothing);
        FH_RUN(no_enrolment_file);
        FH_RUN(malformed_answers_refuse);
        FH_RUN(fence_fails_closed);
        FH_RUN(initrd_event_fails_closed);
        FH_RUN(evil_initrd_no_code);
        FH_RUN(initrd_swapped_after_the_code_never_reaches_the_kernel);
        FH_RUN(efi_entry_no_code);
        FH_RUN(builtin_totp_floor);
        FH_RUN(chainload_path);
        FH_RUN(require_under_allocation_failures);
        FH_RUN(totp_off);
        FH_RUN(rtc_local_time);
        FH_RUN(signed_without_approvals);
        FH_RUN(small_tpm_buffers);
        FH_RUN(command_over_tpm_limit);
        return fh_exit_status();
}
