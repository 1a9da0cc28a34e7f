#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# Reproducible loader (docs/REPRODUCIBLE.md): build/mshimx64.efi as make
# built it in this tree, and a clean build of a copy of the tree at another
# path, with SOURCE_DATE_EPOCH set, in another time zone, locale and umask
# and some seconds later, are byte-identical; so are the ELF files they come
# from (debug info included), which hold neither build path. When this
# tree's loader is missing or older than its sources, a second copy is built
# instead (make check has always just built it: one compiler run of the
# loader saved).
set -u
cd "$(dirname "$0")/../.."
. tests/cli/lib.sh
T=$(mktemp -d)
cli_init reproducible "$T"


# The tree as a reviewer gets it: tracked and new (not ignored) files, no
# build/ (a tarball of a release has none either).
copy_tree() {
        mkdir -p "$1"
        if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
                git ls-files -z --cached --others --exclude-standard |
                        while IFS= read -r -d '' f; do [ -e "$f" ] && printf '%s\0' "$f"; done |
                        tar -c --null -T - | tar -x -C "$1"
        else
                tar -c --exclude=./build . | tar -x -C "$1"
        fi
}
if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
        SDE=$(git log -1 --format=%ct)
else
        SDE=1700000000
fi

# build DIR TZ LOCALE UMASK: make the loader alone, in its own make (not
# make check's job server).
build() {
        copy_tree "$1"
        (cd "$1" && umask "$4" && env -u MAKEFLAGS -u MAKELEVEL TZ="$2" LC_ALL="$3" \
                SOURCE_DATE_EPOCH="$SDE" make -s -j2 build/mshimx64.efi) > "$1.log" 2>&1
}
# other_than VALUE A B: A, or B when VALUE is A (the copy's build differs
# from this tree's).
other_than() { if [ "$1" = "$2" ]; then echo "$3"; else echo "$2"; fi; }
Z=$T/second-build-at-a-longer/path
if env -u MAKEFLAGS -u MAKELEVEL make -q build/mshimx64.efi build/mshimx64.so 2>/dev/null &&
   [ -f build/mshimx64.efi ] && [ -f build/mshimx64.so ]; then
        A=$PWD
        echo "  (the first build: this tree's, made by make at $A)"
else
        A=$T/a
        if ! build "$A" UTC C 022; then fail "build in $A"; sed 's/^/  /' "$A.log" | tail -20; exit 1; fi
        sleep 2         # a clock that leaks in shows up as a difference
fi
if ! build "$Z" "$(other_than "${TZ:-}" Pacific/Auckland UTC)" "$(other_than "${LC_ALL:-}" C.UTF-8 C)" \
        "$(other_than "$(umask)" 0077 0022)"; then
        fail "build in $Z"; sed 's/^/  /' "$Z.log" | tail -20; exit 1
fi

check "mshimx64.efi byte-identical ($(sha256sum < "$A/build/mshimx64.efi" | cut -c1-16)...)" \
        cmp "$A/build/mshimx64.efi" "$Z/build/mshimx64.efi"
check "mshimx64.so (with debug info) byte-identical" cmp "$A/build/mshimx64.so" "$Z/build/mshimx64.so"
check "no build path in mshimx64.so" \
        bash -c "! grep -aqF -e '$A' -e '$Z' -e '$T' '$A/build/mshimx64.so' '$Z/build/mshimx64.so'"
# And the result is the committed layout, not a fluke of two broken builds.
check "the rebuilt image passes the efi-image checks" \
        bash -c "python3 tests/cli/pe_layout.py '$A/build/mshimx64.efi' >/dev/null"
