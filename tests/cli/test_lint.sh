#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# make lint: clang's static analyser and cppcheck over src/ and efi/ find
# nothing (false positives are suppressed one by one, with their reason, in
# tests/lint/cppcheck.supp or next to the line). And the same make rules,
# pointed at files with planted defects, do find them: proof that the
# analysers run with their checks on, for both the core's and the loader's
# flags.
set -u
cd "$(dirname "$0")/../.."
. tests/cli/lib.sh
B=${B:-build}
T=$(mktemp -d)
cli_init lint "$T"

cli_need make clang cppcheck
# Our own make, not make check's: its job server is not ours to join.
lint() { env -u MAKEFLAGS -u MAKELEVEL make -s --no-print-directory -j2 "$@" lint; }

# ---- the tree is clean -------------------------------------------------------
# The analysers take minutes on the whole tree. make's stamps ($B/lint/)
# skip files older than their last clean run; a checkout, a merge or a
# rebase touches files whose bytes did not change, so the clean result is
# also kept under the hash of everything the analysers read: the sources
# and headers, gnu-efi's headers, the Makefile (the flags), the
# suppressions, the analysers' versions. The same bytes passed before: the
# verdict stands (a fresh clone has no $B/lint and runs everything).
lint_key=$({ cat src/*.c efi/*.c include/mb/*.h efi/*.h tests/lint/cppcheck.supp Makefile
        find /usr/include/efi -type f -print0 2>/dev/null | LC_ALL=C sort -z | xargs -0r cat
        clang --version; cppcheck --version; } | sha256sum | cut -c1-32)
if [ -f "$B/lint/clean-$lint_key" ]; then
        pass "make lint: clang --analyze and cppcheck find nothing in src/ and efi/"
        echo "  (these very sources passed make lint before: $B/lint/clean-$lint_key)"
elif lint -k B="$B" > "$T/out" 2>&1; then
        pass "make lint: clang --analyze and cppcheck find nothing in src/ and efi/"
        rm -f "$B"/lint/clean-* && touch "$B/lint/clean-$lint_key"
else
        fail "make lint: clang --analyze and cppcheck find nothing in src/ and efi/"
        sed 's/^/  /' "$T/out" | head -60
fi

# ---- planted defects are found -----------------------------------------------
cat > "$T/core_bug.c" <<'EOF'
#include "mb/base.h"
/* A NULL that reaches a dereference, and a value read uninitialised. */
int lint_core_null(int *p, int x) {
        int *q = NULL;
        if (x)
                q = p;
        return *q;
}
int lint_core_uninit(int x) {
        int v;
        if (x > 0)
                v = 1;
        return v;
}
EOF
cat > "$T/efi_bug.c" <<'EOF'
#include "mshim.h"
/* The same defects written against gnu-efi's types, under the loader's flags. */
CHAR16 lint_efi_null(CHAR16 *path, BOOLEAN found) {
        CHAR16 *p = NULL;
        if (found)
                p = path;
        return *p;
}
UINTN lint_efi_uninit(UINTN n) {
        UINTN size;
        if (n > 0)
                size = n;
        return size;
}
EOF
lint -k B="$T/b" LINT_CORE="$T/core_bug.c" LINT_EFI="$T/efi_bug.c" > "$T/bug" 2>&1
rc=$?
# found NAME FILE PATTERN: the analyser's report names the file and the defect.
found() {
        if grep -E "$2:[0-9]+:[0-9]+: .*$3" "$T/bug" >/dev/null; then pass "$1"
        else fail "$1 (no '$3' for $(basename "$2") in: $(head -c 400 "$T/bug"))"; fi
}
if [ "$rc" != 0 ]; then pass "make lint fails on planted defects"
else fail "make lint fails on planted defects (exit 0)"; fi
found "clang --analyze finds a NULL dereference (core flags)" "$T/core_bug.c" 'core\.NullDereference'
found "clang --analyze finds an uninitialised read (core flags)" "$T/core_bug.c" 'core\.uninitialized'
found "clang --analyze finds a NULL dereference (loader flags)" "$T/efi_bug.c" 'core\.NullDereference'
found "clang --analyze finds an uninitialised read (loader flags)" "$T/efi_bug.c" 'core\.uninitialized'
found "cppcheck finds a NULL dereference (core)" "$T/core_bug.c" '\[nullPointer'
found "cppcheck finds an uninitialised read (core)" "$T/core_bug.c" '\[(uninitvar|legacyUninitvar)'
found "cppcheck finds a NULL dereference (loader)" "$T/efi_bug.c" '\[nullPointer'
found "cppcheck finds an uninitialised read (loader)" "$T/efi_bug.c" '\[(uninitvar|legacyUninitvar)'
