# SPDX-License-Identifier: BSD-2-Clause
# mshim: measured-boot UEFI loader, host CLI, and the tests that prove them.
#
#   make            build/mshimx64.efi, build/mshim, its manual pages and completion
#   make install    into $(DESTDIR)$(PREFIX) (PREFIX=/usr/local); make uninstall
#   make check      unit tests (ASan/UBSan) + integration tests under QEMU/OVMF/swtpm
#   make check-quick the same without the boots: unit, harness, CLI, fuzz-corpus replay
#                   (the CLI files against build/mshim: MB_SANITIZE=1 for the sanitized one)
#   make lint       clang --analyze and cppcheck over src/ and efi/
#   make demo       boot the demo VM through mshim and print the PCR table
#   make fuzz       libFuzzer targets (clang)
#   make bench      mshim log vs tpm2_eventlog, predict vs openssl, unseal vs clevis and systemd-cryptenroll,
#                   the loader's time vs systemd-boot

# Plain `make` builds the loader and the CLI, whatever rule comes first.
.DEFAULT_GOAL := all

B        ?= build
CC       ?= cc
CLANG    ?= clang
VERSION  := 0.1.0

CORE_SRC  := $(sort $(wildcard src/*.c))
# The CLI: tools/mshim.c dispatches to one file per command in tools/cmd/;
# what commands share is in tools/lib/ (docs/DESIGN.md "Layout").
# tools/lib/sha_openssl.c is the host CLI's SHA engine in place of
# src/sha_engine.c (include/mb/sha.h), in the release and the sanitized CLI
# alike: the CLI tests run the engine users get. The unit tests and the
# fuzzers keep the portable one under ASan, as the loader uses it.
TOOL_SRC  := $(sort $(filter-out tools/lib/sha_openssl.c,$(wildcard tools/*.c tools/cmd/*.c tools/lib/*.c)))
TOOL_H    := $(wildcard tools/cmd/*.h tools/lib/*.h)
TOOL_INC  := -Itools/lib -Itools/cmd
EFI_SRC   := $(sort $(wildcard efi/*.c))
UNIT_SRC  := $(sort $(wildcard tests/unit/test_*.c))
FUZZ_SRC  := $(sort $(wildcard tests/fuzz/fuzz_*.c))

WARN      := -Wall -Wextra -Wshadow -Wno-unused-parameter -Wvla -Wpointer-arith -Wstrict-prototypes
INC       := -Iinclude

# ---- host CLI -------------------------------------------------------------
HOST_CFLAGS  := -std=gnu11 -O2 -g $(WARN) $(INC) -DMB_VERSION=\"$(VERSION)\" -D_FORTIFY_SOURCE=2 $(CFLAGS)
HOST_LIBS    := -pthread -lcrypto -ltss2-esys -ltss2-tctildr -ltss2-mu -ltss2-rc -lqrencode
HOST_CORE_O  := $(filter-out $(B)/host/src/sha_engine.o,$(CORE_SRC:src/%.c=$(B)/host/src/%.o))
HOST_TOOL_O  := $(TOOL_SRC:tools/%.c=$(B)/host/tools/%.o) $(B)/host/tools/lib/sha_openssl.o $(B)/host/gen/help.o

# ---- manual pages, --help texts and bash completion: one source, man/*.txt ----
# scripts/mkman.py turns each page source into roff and writes every
# command's --help text into $(GEN)/help.c (compiled into each CLI build) and
# the completion: `mshim X --help` and mshim-X(1) cannot disagree. To
# document a new option, add it to the OPTIONS list of man/mshim-X.1.txt.
MAN_SRC      := $(sort $(wildcard man/*.txt))
GEN          := $(B)/gen
MAN_PAGES    := $(MAN_SRC:man/%.txt=$(GEN)/man/%)
# The pages' date: the last commit's, so a build of one commit is reproducible.
MAN_DATE     ?= $(shell git log -1 --format=%cs 2>/dev/null)
$(GEN)/help.c $(GEN)/mshim.bash $(MAN_PAGES) &: scripts/mkman.py $(MAN_SRC) Makefile
	python3 scripts/mkman.py --version $(VERSION) --date "$(MAN_DATE)" --out $(GEN) $(MAN_SRC)

# ---- sanitized core for unit tests and fuzz corpus replay -----------------
# -static-libubsan: GCC's shared libubsan has a 6 MB .bss, which
# LeakSanitizer scans at every exit (about 1,500 page faults, a quarter of a
# sanitized `mshim` run); linked in, UBSan shares ASan's runtime pieces.
# -no-pie: UBSan's 2 MB of check-site records hold pointers that a
# position-independent program relocates at every start, writing (and so
# faulting in) each of their pages; at a fixed address they are never
# written, and LeakSanitizer's exit scan reads them from the page cache
# (a sixth fewer page faults a run: page faults are most of what a short
# sanitized run costs on a virtual machine).
SAN          := -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer -static-libubsan \
                -fno-pie -no-pie
TEST_CFLAGS  := -std=gnu11 -O1 -g $(WARN) $(INC) -Itests/unit $(SAN) -DMB_VERSION=\"$(VERSION)\"
TEST_CORE_O  := $(CORE_SRC:src/%.c=$(B)/test/src/%.o)
UNIT_BIN     := $(UNIT_SRC:tests/unit/%.c=$(B)/test/%)
TEST_TOOL_O  := $(TOOL_SRC:tools/%.c=$(B)/test/tools/%.o) $(B)/test/tools/lib/sha_openssl.o $(B)/test/gen/help.o

# ---- the loader (gnu-efi) -------------------------------------------------
EFI_INC      := /usr/include/efi
EFI_LIB      := /usr/lib
EFI_CFLAGS   := -std=gnu11 -O2 -g $(WARN) $(INC) -I$(EFI_INC) -I$(EFI_INC)/x86_64 \
                -ffreestanding -fno-builtin -fpic -fshort-wchar -fno-stack-protector -fno-stack-check \
                -fno-strict-aliasing -mno-red-zone -maccumulate-outgoing-args -mno-sse -mno-mmx \
                -DGNU_EFI_USE_MS_ABI -DMB_VERSION=\"$(VERSION)\" -DMB_EFI \
                -ffile-prefix-map=$(CURDIR)=.
# efi/mshim.lds: gnu-efi's layout plus a page-aligned .sbat section.
EFI_LDFLAGS  := -nostdlib -znocombreloc -T efi/mshim.lds -shared -Bsymbolic \
                --no-undefined -L$(EFI_LIB)
# The predictor (src/predict*.c) and the attestation parsers (src/attest.c,
# src/ima.c: mshim verify's) are the host's: the loader never links them.
# The sealed-file codec (src/sealfile.c) is linked for the TOTP enrolment
# file the loader reads (mb_totp_enrol_parse).
EFI_CORE_O   := $(filter-out $(B)/efi/src/predict%.o $(B)/efi/src/attest.o $(B)/efi/src/ima.o,$(CORE_SRC:src/%.c=$(B)/efi/src/%.o))
# efi/bench.c (phase timestamps) is the benchmark build's alone: the
# release loader has no timing code (make bench-efi below).
EFI_O        := $(filter-out $(B)/efi/efi/bench.o,$(EFI_SRC:efi/%.c=$(B)/efi/efi/%.o))
EFI_SBAT_O   := $(B)/efi/efi/sbat.o $(B)/efi/efi/mpolicy.o
# The built-in boot policy (docs/CONFIG.md): a packager or admin may build
# with another file, e.g. make MSHIM_POLICY=/etc/mshim/boot-policy.conf.
MSHIM_POLICY ?= efi/boot-policy.conf
# The unsigned EFI application SHIM_LOCK's self-test embeds (efi/selftest.S).
EFI_SELFTEST_O := $(B)/efi/efi/selftest.o

.PHONY: all binaries build-deps check check-quick check-system check-debian check-build unit integration demo fuzz bench clean deps kernel install uninstall lint
# Plain `make` on a fresh Debian 12 machine first installs what the build
# itself needs (scripts/deps.sh --build: gnu-efi, the libraries' -dev
# packages, the compilers; quiet when all are there, no download), then
# builds both binaries.
all: build-deps
	@$(MAKE) --no-print-directory binaries
binaries: $(B)/mshimx64.efi $(B)/mshim $(MAN_PAGES) $(GEN)/mshim.bash
build-deps:
	@scripts/deps.sh --build

$(B)/host/%.o: %.c $(wildcard include/mb/*.h) $(TOOL_H)
	@mkdir -p $(dir $@)
	$(CC) $(HOST_CFLAGS) $(TOOL_INC) -c $< -o $@

$(B)/host/gen/help.o: $(GEN)/help.c tools/lib/help.h
	@mkdir -p $(dir $@)
	$(CC) $(HOST_CFLAGS) $(TOOL_INC) -c $< -o $@

$(B)/mshim: $(HOST_TOOL_O) $(HOST_CORE_O)
	$(CC) $(HOST_CFLAGS) -o $@ $^ $(HOST_LIBS)

$(B)/test/src/%.o: src/%.c $(wildcard include/mb/*.h)
	@mkdir -p $(dir $@)
	$(CC) $(TEST_CFLAGS) -c $< -o $@

$(B)/test/tools/%.o: tools/%.c $(wildcard include/mb/*.h) $(TOOL_H)
	@mkdir -p $(dir $@)
	$(CC) $(TEST_CFLAGS) $(TOOL_INC) -c $< -o $@

$(B)/test/gen/help.o: $(GEN)/help.c tools/lib/help.h
	@mkdir -p $(dir $@)
	$(CC) $(TEST_CFLAGS) $(TOOL_INC) -c $< -o $@

# The CLI again, under ASan/UBSan: tests/cli runs this one.
$(B)/test/mshim: $(TEST_TOOL_O) $(filter-out $(B)/test/src/sha_engine.o,$(TEST_CORE_O))
	$(CC) $(TEST_CFLAGS) -o $@ $^ $(HOST_LIBS)

# And under ThreadSanitizer, for `mshim log`'s threads (tools/lib/logwork.c).
TSAN_CFLAGS  := -std=gnu11 -O1 -g $(WARN) $(INC) -fsanitize=thread -DMB_VERSION=\"$(VERSION)\"
TSAN_O       := $(TOOL_SRC:tools/%.c=$(B)/tsan/tools/%.o) $(CORE_SRC:src/%.c=$(B)/tsan/src/%.o) $(B)/tsan/gen/help.o
$(B)/tsan/%.o: %.c $(wildcard include/mb/*.h) $(TOOL_H)
	@mkdir -p $(dir $@)
	$(CC) $(TSAN_CFLAGS) $(TOOL_INC) -c $< -o $@
$(B)/tsan/gen/help.o: $(GEN)/help.c tools/lib/help.h
	@mkdir -p $(dir $@)
	$(CC) $(TSAN_CFLAGS) $(TOOL_INC) -c $< -o $@
$(B)/tsan/mshim: $(TSAN_O)
	$(CC) $(TSAN_CFLAGS) -o $@ $^ $(HOST_LIBS)

# The host CLI's eight-lane SHA-512 and batched replay are tools/ code.
X8_TEST_O    := $(B)/test/tools/lib/sha512x8.o $(B)/test/tools/lib/replay_batch.o
$(B)/test/test_sha512x8: tests/unit/test_sha512x8.c tests/unit/testlib.h $(TEST_CORE_O) $(X8_TEST_O)
	$(CC) $(TEST_CFLAGS) $(TOOL_INC) -o $@ $< $(TEST_CORE_O) $(X8_TEST_O) -lcrypto

# test_tpm2 checks src/tpm2.c's bytes against tpm2-tss's own marshaller.
$(B)/test/test_tpm2: tests/unit/test_tpm2.c tests/unit/testlib.h $(TEST_CORE_O)
	@mkdir -p $(dir $@)
	$(CC) $(TEST_CFLAGS) -o $@ $< $(TEST_CORE_O) -lcrypto -ltss2-mu

# src/tpm2.c's bytes sent to swtpm through a TCTI, nothing else of tpm2-tss
# (tests/cli/test_tpm2_swtpm.sh runs it).
$(B)/test/tpm2_swtpm: tests/tpm/tpm2_swtpm.c $(TEST_CORE_O)
	@mkdir -p $(dir $@)
	$(CC) $(TEST_CFLAGS) -o $@ $< $(TEST_CORE_O) -ltss2-tctildr
check-build: $(B)/test/tpm2_swtpm
# The same on /dev/tpm0, static, for the test guest (test_totp.sh: the
# fence seen from inside the booted system).
$(B)/it/tpm2_dev: tests/tpm/tpm2_swtpm.c $(CORE_SRC)
	@mkdir -p $(dir $@)
	$(CC) -std=gnu11 -O2 -Wall -Wextra -Wno-unused-parameter -Iinclude -DTPM2_DEV -static -o $@ $< $(CORE_SRC)
check-build: $(B)/it/tpm2_dev

$(B)/test/test_%: tests/unit/test_%.c tests/unit/testlib.h $(TEST_CORE_O)
	@mkdir -p $(dir $@)
	$(CC) $(TEST_CFLAGS) -o $@ $< $(TEST_CORE_O) -lcrypto

# src/policy.c against the TPM's PolicyGetDigest in trial and policy
# sessions (tests/tpm/policy_trial.c, run by tests/cli/test_policy_tpm.sh
# on a swtpm). Not test_*: it needs a TPM, so run-all.sh must not start it.
$(B)/test/policy_trial: tests/tpm/policy_trial.c $(TEST_CORE_O)
	@mkdir -p $(dir $@)
	$(CC) $(TEST_CFLAGS) -o $@ $< $(TEST_CORE_O) $(HOST_LIBS)
check-build: $(B)/test/policy_trial

$(B)/efi/%.o: %.c $(wildcard include/mb/*.h) $(wildcard efi/*.h)
	@mkdir -p $(dir $@)
	$(CC) $(EFI_CFLAGS) -Iefi -c $< -o $@

# The SBAT CSV (shim's SBAT.md) carries this build's version.
$(B)/efi/sbat.csv: efi/sbat.csv.in Makefile
	@mkdir -p $(dir $@)
	sed 's/@VERSION@/$(VERSION)/g' $< > $@

$(B)/efi/efi/sbat.o: efi/sbat.S $(B)/efi/sbat.csv
	@mkdir -p $(dir $@)
	$(CC) -DMSHIM_SBAT_CSV='"$(B)/efi/sbat.csv"' -c $< -o $@

# The policy text NUL-padded to the section's fixed size (512 bytes,
# MB_BOOT_POLICY_SIZE); a longer text, or one with a NUL, is refused here.
$(B)/efi/policy.bin: $(MSHIM_POLICY) Makefile
	@mkdir -p $(dir $@)
	@test "$$(wc -c < $<)" -lt 512 || { echo "$<: the boot policy must be under 512 bytes" >&2; exit 1; }
	@test "$$(tr -d '\000' < $< | wc -c)" = "$$(wc -c < $<)" || { echo "$<: NUL byte in the boot policy" >&2; exit 1; }
	cp $< $@.tmp && truncate -s 512 $@.tmp && mv $@.tmp $@

$(B)/efi/efi/mpolicy.o: efi/mpolicy.S $(B)/efi/policy.bin
	@mkdir -p $(dir $@)
	$(CC) -DMSHIM_POLICY_BIN='"$(B)/efi/policy.bin"' -c $< -o $@

# Built like any gnu-efi program and never signed: mshim asks the firmware
# to refuse it (docs/SHIM_LOCK.md, "Self-test").
$(B)/efi/selftest/unsigned.so: $(B)/efi/efi/selftest/unsigned.o efi/mshim.lds
	@mkdir -p $(dir $@)
	$(LD) $(EFI_LDFLAGS) $(EFI_LIB)/crt0-efi-x86_64.o $< -o $@ -lgnuefi
$(B)/efi/selftest/unsigned.efi: $(B)/efi/selftest/unsigned.so
	$(EFI_OBJCOPY) $< $@

$(EFI_SELFTEST_O): efi/selftest.S $(B)/efi/selftest/unsigned.efi
	@mkdir -p $(dir $@)
	$(CC) -DMSHIM_SELFTEST_EFI='"$(B)/efi/selftest/unsigned.efi"' -c $< -o $@

$(B)/mshimx64.so: $(EFI_O) $(EFI_CORE_O) $(EFI_SBAT_O) $(EFI_SELFTEST_O) efi/mshim.lds
	$(LD) $(EFI_LDFLAGS) $(EFI_LIB)/crt0-efi-x86_64.o $(EFI_O) $(EFI_CORE_O) $(EFI_SBAT_O) $(EFI_SELFTEST_O) \
	  -o $@ -lefi -lgnuefi $(shell $(CC) -print-libgcc-file-name)

# ELF shared object -> PE32+ EFI application (subsystem 10), without the
# COFF symbol table (--strip-all; sbsign warns about one), then
# scripts/efi-finish.py: NX_COMPAT once the layout is checked W^X and
# page-aligned, TimeDateStamp 0, CheckSum (docs/REPRODUCIBLE.md).
EFI_OBJCOPY  := objcopy --strip-all -j .text -j .rodata -j .sdata -j .data -j .dynamic -j .dynsym -j .rel -j .rela \
                -j '.rel.*' -j '.rela.*' -j .reloc -j .sbat -j .mpolicy --target efi-app-x86_64 --subsystem=10
EFI_PE       = $(EFI_OBJCOPY) $< $@.tmp && python3 scripts/efi-finish.py $@.tmp && mv $@.tmp $@

$(B)/mshimx64.efi: $(B)/mshimx64.so scripts/efi-finish.py
	$(EFI_PE)

unit: $(UNIT_BIN) $(B)/test/mshim
	@MB_ONLY=unit tests/run-all.sh

DEPS_ENV := KDIR=$(B)/kernel KCLOUDDIR=$(B)/kernel-cloud KRTDIR=$(B)/kernel-rt EFIROOT=$(B)/debian-efi
deps:
	@$(DEPS_ENV) scripts/deps.sh

# The build runs JOBS compilers at once (default: one per CPU); the tests
# then pace themselves (tests/run-all.sh, MB_JOBS). The downloads (kernels,
# Debian's EFI images: scripts/deps.sh --fetch) run beside the build, which
# needs none of them: on a fresh clone they are mostly waiting on the
# network. Both must succeed before any test starts.
JOBS ?= $(shell nproc 2>/dev/null || echo 2)
check:
	@$(DEPS_ENV) scripts/deps.sh --packages
	@$(DEPS_ENV) scripts/deps.sh --fetch & fetch=$$!; \
	$(MAKE) --no-print-directory -j$(JOBS) check-build; built=$$?; \
	wait $$fetch && [ $$built = 0 ]
	@tests/run-all.sh

check-build: binaries $(UNIT_BIN) $(B)/test/mshim $(B)/tsan/mshim

# The edit-test loop: unit programs, the firmware harness, the CLI files and
# the fuzz-corpus replay, no boot (under 3 minutes on 2 cores). The CLI
# files run against $(B)/mshim, the build users run (tests/run-all.sh:
# AddressSanitizer's start-up was a quarter of the time); make check runs
# them against the sanitized one, with LeakSanitizer. MB_SANITIZE=1 keeps
# the sanitized CLI here (without LeakSanitizer: MB_LEAKS=1 adds it).
check-quick: deps
	@$(MAKE) --no-print-directory -j$(JOBS) check-build
	@MB_ONLY=quick tests/run-all.sh

# The whole-system tests (tests/system/): the Debian package built with
# dpkg-buildpackage and checked by lintian. Slower than make check, so a
# target of their own; .ci/run runs both.
check-system: all
	@EXTRA_PKGS="debhelper lintian" $(DEPS_ENV) scripts/deps.sh
	@MB_ONLY=system tests/run-all.sh

# The real-Debian tests (tests/debian/, issue 23): a Debian 12 system built
# with debootstrap (cached under build/debian-sys/), booted under QEMU with
# OVMF in Secure Boot and swtpm. Slower still: a target of its own, which
# .ci/run runs after check-system (docs/TESTING.md).
check-debian: all
	@EXTRA_PKGS="debhelper debootstrap" $(DEPS_ENV) scripts/deps.sh
	@MB_ONLY=debian tests/run-all.sh

integration: deps binaries
	@tests/integration/run.sh

demo: deps binaries
	@scripts/demo.sh

clean:
	rm -rf $(B)

# ---- install (packagers' conventions: PREFIX, DESTDIR, the *DIR variables) ----
PREFIX       ?= /usr/local
BINDIR       ?= $(PREFIX)/bin
LIBDIR       ?= $(PREFIX)/lib/mshim
MANDIR       ?= $(PREFIX)/share/man
# Keylime's measured-boot policy module for mshim boots (docs/ATTESTATION.md
# "Keylime"): the verifier's measured_boot_imports names this file.
KEYLIMEDIR   ?= $(PREFIX)/share/mshim/keylime
# mshim install looks for the loader and the kernel hook in /usr/lib/mshim
# (the package's), then here (a `make install`).
$(B)/host/tools/cmd/install.o: HOST_CFLAGS += -DMB_LIBDIR=\"$(LIBDIR)\"
$(B)/test/tools/cmd/install.o: TEST_CFLAGS += -DMB_LIBDIR=\"$(LIBDIR)\"
$(B)/tsan/tools/cmd/install.o: TSAN_CFLAGS += -DMB_LIBDIR=\"$(LIBDIR)\"
BASHCOMPDIR  ?= $(PREFIX)/share/bash-completion/completions
# initramfs-tools reads hooks from /usr/share (packages) and /etc (the
# admin's): an install under /usr/local is the admin's.
INITRAMFSHOOKDIR ?= $(if $(filter /usr,$(PREFIX)),/usr/share/initramfs-tools/hooks,/etc/initramfs-tools/hooks)
# `mshim luks enroll` writes the keyscript's installed path into crypttab.
$(B)/host/tools/cmd/luks.o: HOST_CFLAGS += -DMB_LIBDIR=\"$(LIBDIR)\"
# Every installed file as SOURCE:DESTINATION:MODE; uninstall removes exactly
# these, then the directories of LIBDIR if nothing else is left in them.
INSTALL_LIST  = $(B)/mshim:$(BINDIR)/mshim:755 \
                $(B)/mshimx64.efi:$(LIBDIR)/mshimx64.efi:644 \
                hooks/README:$(LIBDIR)/hooks/README:644 \
                hooks/cryptroot-unseal:$(LIBDIR)/cryptroot-unseal:755 \
                hooks/initramfs-tools.hook:$(INITRAMFSHOOKDIR)/mshim:755 \
                $(foreach p,$(MAN_PAGES),$(p):$(MANDIR)/man$(subst .,,$(suffix $(p)))/$(notdir $(p)):644) \
                $(GEN)/mshim.bash:$(BASHCOMPDIR)/mshim:644 \
                keylime/mshim_policy.py:$(KEYLIMEDIR)/mshim_policy.py:644

# The kernel hooks, the prune unit (docs/UPGRADES.md) and the bless unit
# (mshim-bless(1)), installed with
# @BINDIR@, @LIBDIR@ and @SYSCONFDIR@ replaced. Debian runs hooks from /etc
# whatever the PREFIX; kernel-install and systemd also read PREFIX/lib.
# hook.conf is installed only when absent and removed only when unchanged
# (an admin's settings survive both). ENABLE_PRUNE=yes also enables the
# unit (the symbolic link `systemctl enable` makes); ENABLE_BLESS=yes (the
# default) enables the bless unit: the hook gives new entries a boot
# counter (hook.conf's TRIES=3), and with no unit to drop it after a good
# boot an entry would run out of tries and the loader fall back to an older
# kernel. The Debian package's postinst enables it instead.
SYSCONFDIR   ?= /etc
KERNELINSTALLDIR ?= $(PREFIX)/lib/kernel/install.d
SYSTEMDUNITDIR   ?= $(PREFIX)/lib/systemd/system
ENABLE_PRUNE ?= no
ENABLE_BLESS ?= yes
HOOK_SED      = sed -e 's|@BINDIR@|$(BINDIR)|g' -e 's|@LIBDIR@|$(LIBDIR)|g' -e 's|@SYSCONFDIR@|$(SYSCONFDIR)|g'
HOOK_LIST     = hooks/kernel-hook:$(LIBDIR)/kernel-hook:755 \
                hooks/zz-mshim.postinst:$(SYSCONFDIR)/kernel/postinst.d/zz-mshim:755 \
                hooks/zz-mshim.postrm:$(SYSCONFDIR)/kernel/postrm.d/zz-mshim:755 \
                hooks/mshim.post-update:$(SYSCONFDIR)/initramfs/post-update.d/mshim:755 \
                hooks/90-mshim.install:$(KERNELINSTALLDIR)/90-mshim.install:755 \
                hooks/mshim-prune.service:$(SYSTEMDUNITDIR)/mshim-prune.service:644 \
                hooks/mshim-bless.service:$(SYSTEMDUNITDIR)/mshim-bless.service:644
HOOK_CONF     = $(DESTDIR)$(SYSCONFDIR)/mshim/hook.conf
PRUNE_WANTS   = $(DESTDIR)$(SYSCONFDIR)/systemd/system/multi-user.target.wants/mshim-prune.service
BLESS_WANTS   = $(DESTDIR)$(SYSCONFDIR)/systemd/system/basic.target.wants/mshim-bless.service

install: all
	@set -e; for f in $(INSTALL_LIST); do \
		src=$${f%%:*}; rest=$${f#*:}; dst=$${rest%:*}; \
		echo "install $$src $(DESTDIR)$$dst"; \
		install -D -m $${rest##*:} "$$src" "$(DESTDIR)$$dst"; \
	done
	@set -e; tmp=$$(mktemp); trap 'rm -f "$$tmp"' EXIT; for f in $(HOOK_LIST); do \
		src=$${f%%:*}; rest=$${f#*:}; dst=$${rest%:*}; \
		echo "install $$src $(DESTDIR)$$dst"; \
		$(HOOK_SED) "$$src" >"$$tmp"; install -D -m $${rest##*:} "$$tmp" "$(DESTDIR)$$dst"; \
	done; \
	if [ -e "$(HOOK_CONF)" ]; then echo "keep $(HOOK_CONF) (exists)"; \
	else echo "install hooks/hook.conf $(HOOK_CONF)"; $(HOOK_SED) hooks/hook.conf >"$$tmp"; \
		install -D -m 644 "$$tmp" "$(HOOK_CONF)"; fi; \
	if [ "$(ENABLE_PRUNE)" = yes ]; then echo "enable mshim-prune.service: $(PRUNE_WANTS)"; \
		mkdir -p "$$(dirname "$(PRUNE_WANTS)")"; ln -sfn "$(SYSTEMDUNITDIR)/mshim-prune.service" "$(PRUNE_WANTS)"; fi; \
	if [ "$(ENABLE_BLESS)" = yes ]; then echo "enable mshim-bless.service: $(BLESS_WANTS)"; \
		mkdir -p "$$(dirname "$(BLESS_WANTS)")"; ln -sfn "$(SYSTEMDUNITDIR)/mshim-bless.service" "$(BLESS_WANTS)"; fi

uninstall:
	@set -e; for f in $(HOOK_LIST); do \
		rest=$${f#*:}; dst=$${rest%:*}; \
		echo "rm $(DESTDIR)$$dst"; rm -f "$(DESTDIR)$$dst"; \
	done; \
	if [ -L "$(PRUNE_WANTS)" ]; then echo "rm $(PRUNE_WANTS)"; rm -f "$(PRUNE_WANTS)"; fi; \
	if [ -L "$(BLESS_WANTS)" ]; then echo "rm $(BLESS_WANTS)"; rm -f "$(BLESS_WANTS)"; fi; \
	if [ -e "$(HOOK_CONF)" ] && ! $(HOOK_SED) hooks/hook.conf | cmp -s - "$(HOOK_CONF)"; then \
		echo "keep $(HOOK_CONF) (changed)"; else echo "rm $(HOOK_CONF)"; rm -f "$(HOOK_CONF)"; fi; \
	[ ! -d "$(DESTDIR)$(SYSCONFDIR)/mshim" ] || rmdir --ignore-fail-on-non-empty "$(DESTDIR)$(SYSCONFDIR)/mshim"
	@set -e; for f in $(INSTALL_LIST); do \
		rest=$${f#*:}; dst=$${rest%:*}; \
		echo "rm $(DESTDIR)$$dst"; rm -f "$(DESTDIR)$$dst"; \
	done; \
	for d in "$(DESTDIR)$(LIBDIR)/hooks" "$(DESTDIR)$(LIBDIR)" "$(DESTDIR)$(KEYLIMEDIR)" "$(DESTDIR)$$(dirname $(KEYLIMEDIR))"; do \
		[ ! -d "$$d" ] || rmdir --ignore-fail-on-non-empty "$$d"; \
	done

# ---- static analysis: make lint (tests/cli/test_lint.sh runs it in make check) ----
# clang's static analyser, its findings (and clang's warnings) made errors, on
# every file with the flags it is built with; cppcheck over each tree.
# tests/lint/cppcheck.supp lists the false positives, each with its
# reason. LINT_CORE and LINT_EFI name the files (test_lint.sh points them at
# planted defects).
LINT_CORE    ?= $(CORE_SRC)
LINT_EFI     ?= $(EFI_SRC)
ANALYZE      := --analyze -Werror -Xclang -analyzer-werror -Xclang -analyzer-output=text
# gcc-only code-generation option; clang rejects it and it changes nothing
# the analyser sees.
LINT_EFI_CFLAGS := $(filter-out -maccumulate-outgoing-args,$(EFI_CFLAGS)) -Iefi
# cppcheck predefines no compiler macros: gnu-efi's efibind.h wants the
# compiler (__GNUC__ >= 4.7 for the MS ABI) and the architecture.
CPPCHECK     := cppcheck -q --std=c11 --enable=warning,style,portability,performance \
                --inline-suppr --suppressions-list=tests/lint/cppcheck.supp --error-exitcode=1
LINT_OK      := $(LINT_CORE:%.c=$(B)/lint/core/%.ok) $(LINT_EFI:%.c=$(B)/lint/efi/%.ok) \
                $(B)/lint/cppcheck-core.ok $(B)/lint/cppcheck-efi.ok
LINT_HDR     := $(wildcard include/mb/*.h) $(wildcard efi/*.h)

lint: $(LINT_OK)

$(B)/lint/core/%.ok: %.c $(LINT_HDR)
	@mkdir -p $(dir $@)
	$(CLANG) $(ANALYZE) -std=gnu11 $(WARN) $(INC) -o /dev/null $<
	@touch $@

$(B)/lint/efi/%.ok: %.c $(LINT_HDR)
	@mkdir -p $(dir $@)
	$(CLANG) $(ANALYZE) $(LINT_EFI_CFLAGS) -o /dev/null $<
	@touch $@

$(B)/lint/cppcheck-core.ok: $(LINT_CORE) $(LINT_HDR) tests/lint/cppcheck.supp
	@mkdir -p $(dir $@)
	$(CPPCHECK) $(INC) $(LINT_CORE)
	@touch $@

$(B)/lint/cppcheck-efi.ok: $(LINT_EFI) $(LINT_HDR) tests/lint/cppcheck.supp
	@mkdir -p $(dir $@)
	$(CPPCHECK) $(filter -D% -I%,$(LINT_EFI_CFLAGS)) -D__GNUC__=12 -D__x86_64__ $(LINT_EFI)
	@touch $@

# ---- fuzzing and benchmark (tests/fuzz, docs/FUZZING.md, scripts/bench.sh) ----
FUZZ_CFLAGS  := -std=gnu11 -O1 -g $(WARN) $(INC) -fsanitize=fuzzer,address,undefined \
                -fno-sanitize-recover=all -fno-omit-frame-pointer
FUZZ_BIN     := $(FUZZ_SRC:tests/fuzz/%.c=$(B)/fuzz/%)
REPLAY_BIN   := $(FUZZ_SRC:tests/fuzz/fuzz_%.c=$(B)/test/replay_%)
FUZZ_SECONDS ?= 60
FUZZ_H       := $(wildcard tests/fuzz/*.h)

$(B)/fuzz/fuzz_%: tests/fuzz/fuzz_%.c $(FUZZ_H) $(CORE_SRC) $(wildcard include/mb/*.h)
	@mkdir -p $(dir $@)
	$(CLANG) $(FUZZ_CFLAGS) -o $@ $< $(CORE_SRC)

# The same targets under gcc's ASan/UBSan with a plain main(): make check
# replays tests/fuzz/corpus through them (tests/cli/test_fuzz_replay.sh).
$(B)/test/replay_%: tests/fuzz/fuzz_%.c tests/fuzz/replay_main.c $(FUZZ_H) $(TEST_CORE_O)
	@mkdir -p $(dir $@)
	$(CC) $(TEST_CFLAGS) -o $@ $< tests/fuzz/replay_main.c $(TEST_CORE_O)

.PHONY: fuzz-run
fuzz: $(FUZZ_BIN)
fuzz-run: $(FUZZ_BIN)
	@B=$(B) FUZZ_SECONDS=$(FUZZ_SECONDS) tests/fuzz/run.sh
# The IMA comparison runs Keylime's own code (python3-lark, python3-gpg,
# python3-yaml, python3-packaging are its imports: scripts/bench/ima.sh).
bench: $(B)/mshim $(B)/mshimx64.efi $(B)/bench/mshimx64.efi
	@EXTRA_PKGS="python3-lark python3-gpg python3-yaml python3-packaging" KDIR=$(B)/kernel KCLOUDDIR=$(B)/kernel-cloud KRTDIR=$(B)/kernel-rt \
		EFIROOT=$(B)/debian-efi scripts/deps.sh
	@B=$(B) scripts/bench.sh

# The loader-time benchmark's build (scripts/bench/loadtime.sh): the same
# loader with -DMB_BENCH, which prints each phase's time on the console
# before StartImage (efi/bench.c). Never installed; the ratio against
# systemd-boot is taken with the release build.
.PHONY: bench-efi
bench-efi: $(B)/bench/mshimx64.efi
BENCH_EFI_O  := $(EFI_SRC:efi/%.c=$(B)/bench/efi/%.o)
$(B)/bench/efi/%.o: efi/%.c $(wildcard include/mb/*.h) $(wildcard efi/*.h)
	@mkdir -p $(dir $@)
	$(CC) $(EFI_CFLAGS) -DMB_BENCH -Iefi -c $< -o $@
$(B)/bench/mshimx64.so: $(BENCH_EFI_O) $(EFI_CORE_O) $(EFI_SBAT_O) $(EFI_SELFTEST_O) efi/mshim.lds
	$(LD) $(EFI_LDFLAGS) $(EFI_LIB)/crt0-efi-x86_64.o $(BENCH_EFI_O) $(EFI_CORE_O) $(EFI_SBAT_O) $(EFI_SELFTEST_O) \
	  -o $@ -lefi -lgnuefi $(shell $(CC) -print-libgcc-file-name)
$(B)/bench/mshimx64.efi: $(B)/bench/mshimx64.so scripts/efi-finish.py
	$(EFI_PE)
check-build: $(REPLAY_BIN)

# ---- test-only EFI stage: TCG2 fault injection (tests/efi/tcg2_fault.c) ----
# Started by the firmware in place of mshim, it hooks the firmware's
# EFI_TCG2_PROTOCOL.HashLogExtendEvent and starts \EFI\mshim\mshimx64.efi
# (tests/integration/test_tcg2_faults.sh). gnu-efi only: no src/ code.
TCG2_FAULT_EFI := $(B)/test/tcg2_fault.efi

$(B)/test/efi/tcg2_fault.o: tests/efi/tcg2_fault.c efi/tcg2.h
	@mkdir -p $(dir $@)
	$(CC) $(EFI_CFLAGS) -Iefi -c $< -o $@

$(B)/test/tcg2_fault.so: $(B)/test/efi/tcg2_fault.o efi/mshim.lds
	$(LD) $(EFI_LDFLAGS) $(EFI_LIB)/crt0-efi-x86_64.o $< -o $@ -lefi -lgnuefi \
	  $(shell $(CC) -print-libgcc-file-name)

$(TCG2_FAULT_EFI): $(B)/test/tcg2_fault.so scripts/efi-finish.py
	$(EFI_PE)


# ---- the loader on the host: efi/*.c against a fake firmware (tests/efiharness) ----
# Every efi/*.c, compiled for the host under ASan/UBSan with gnu-efi's headers
# (MS ABI for firmware calls, 16-bit wchar_t for L"" strings), linked with the
# fake boot services, file system and TCG2 and the sanitized core. Each
# tests/efiharness/test_efi_*.c becomes build/test/test_efi_*, which
# tests/run-all.sh runs with the unit tests. docs/DESIGN.md, "Tests".
EFIH_SRC     := $(sort $(wildcard tests/efiharness/test_efi_*.c))
EFIH_BIN     := $(EFIH_SRC:tests/efiharness/%.c=$(B)/test/%)
EFIH_LIB_SRC := $(sort $(wildcard tests/efiharness/fh_*.c))
EFIH_CFLAGS  := -std=gnu11 -O1 -g $(WARN) $(INC) -I$(EFI_INC) -I$(EFI_INC)/x86_64 -Iefi -Itests/efiharness \
                -fshort-wchar -DGNU_EFI_USE_MS_ABI -DGNU_EFI_USE_EXTERNAL_STDARG \
                -DMB_VERSION=\"$(VERSION)\" -DMB_EFI $(SAN)
EFIH_O       := $(EFI_SRC:efi/%.c=$(B)/test/efih/efi/%.o) $(EFIH_LIB_SRC:tests/efiharness/%.c=$(B)/test/efih/lib/%.o)

$(B)/test/efih/efi/%.o: efi/%.c $(wildcard include/mb/*.h) $(wildcard efi/*.h)
	@mkdir -p $(dir $@)
	$(CC) $(EFIH_CFLAGS) -c $< -o $@

$(B)/test/efih/lib/%.o: tests/efiharness/%.c $(wildcard tests/efiharness/*.h) $(wildcard efi/*.h)
	@mkdir -p $(dir $@)
	$(CC) $(EFIH_CFLAGS) -c $< -o $@

$(B)/test/test_efi_%: tests/efiharness/test_efi_%.c $(EFIH_O) $(TEST_CORE_O) $(wildcard tests/efiharness/*.h)
	@mkdir -p $(dir $@)
	$(CC) $(EFIH_CFLAGS) -o $@ $< $(EFIH_O) $(TEST_CORE_O) -lcrypto

# Objects only a pattern rule names are intermediate to make: keep them.
.SECONDARY: $(EFIH_O)
efiharness: $(EFIH_BIN)
unit check-build: $(EFIH_BIN)
.PHONY: efiharness

# The SHIM_LOCK probe (tests/efi/shimlock_probe.c): started by mshim as an
# efi entry, it calls Verify and prints the answers
# (tests/integration/test_shimlock_verify.sh). gnu-efi only.
SHIMLOCK_PROBE_EFI := $(B)/test/shimlock_probe.efi

$(B)/test/efi/shimlock_probe.o: tests/efi/shimlock_probe.c
	@mkdir -p $(dir $@)
	$(CC) $(EFI_CFLAGS) -c $< -o $@

$(B)/test/shimlock_probe.so: $(B)/test/efi/shimlock_probe.o efi/mshim.lds
	$(LD) $(EFI_LDFLAGS) $(EFI_LIB)/crt0-efi-x86_64.o $< -o $@ -lefi -lgnuefi \
	  $(shell $(CC) -print-libgcc-file-name)

$(SHIMLOCK_PROBE_EFI): $(B)/test/shimlock_probe.so
	$(EFI_OBJCOPY) $< $@

check integration: $(TCG2_FAULT_EFI) $(SHIMLOCK_PROBE_EFI)
