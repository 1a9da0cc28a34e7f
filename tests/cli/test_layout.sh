#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# The source layout's rules (docs/DESIGN.md "Layout"): the core includes only
# the core and freestanding headers, so the loader, the CLI and the tests
# build the same code; each CLI command lives in tools/cmd/, what commands
# share in tools/lib/.
set -u
cd "$(dirname "$0")/../.." || exit 1
. tests/cli/lib.sh
cli_init layout

# Every #include of src/ and include/mb/: "mb/..." or a freestanding header.
bad=$(grep -Hn '^[[:space:]]*#[[:space:]]*include' src/*.c include/mb/*.h |
      grep -vE '#[[:space:]]*include[[:space:]]*("mb/[a-z0-9_]+\.h"|<std(int|def|bool|align|arg)\.h>|<limits\.h>)')
if [ -z "$bad" ]; then pass "src/ and include/mb/ include only the core and freestanding headers"
else fail "src/ and include/mb/ include only the core and freestanding headers" "$bad"; fi

# No libc I/O or allocation in the core, by name (a call, not a comment).
bad=$(grep -HnE '\b(malloc|calloc|realloc|free|printf|fprintf|fopen|fread|fwrite|open|read|write|mmap)[[:space:]]*\(' src/*.c |
      grep -vE '^[^:]+:[0-9]+:[[:space:]]*(/?\*|//)')
if [ -z "$bad" ]; then pass "the core calls no libc I/O or allocator"
else fail "the core calls no libc I/O or allocator" "$bad"; fi

# Each command of the dispatcher's table is defined in tools/cmd/, and
# tools/lib/ defines none.
missing=
for c in $(sed -n 's/^ *{ *"[a-z-]*", *\(cmd_[a-z_]*\) *},.*/\1/p' tools/mshim.c); do
        grep -qE "^int $c\(" tools/cmd/*.c || missing="$missing $c"
done
if [ -z "$missing" ]; then pass "every command of tools/mshim.c is defined in tools/cmd/"
else fail "every command of tools/mshim.c is defined in tools/cmd/" "missing:$missing"; fi
bad=$(grep -HnE '^int cmd_[a-z_]*\(' tools/lib/*.c)
if [ -z "$bad" ]; then pass "tools/lib/ defines no command"
else fail "tools/lib/ defines no command" "$bad"; fi
bad=$(ls tools/*.c tools/*.h 2>/dev/null | grep -v '^tools/mshim\.c$')
if [ -z "$bad" ]; then pass "tools/ holds only the dispatcher beside cmd/ and lib/"
else fail "tools/ holds only the dispatcher beside cmd/ and lib/" "$bad"; fi

# What commands share lives in tools/lib/: a file of tools/cmd/ defines its
# command and, beyond it, only what the files of that one command share
# through a header of tools/cmd/ (totp.h), never what another command uses.
bad=
for f in tools/cmd/*.c; do
        for fn in $(grep -vE '^(static|typedef)' "$f" | sed -nE 's/^[a-z][a-z0-9_ ]*[ *]([a-z_][a-z0-9_]*)\(.*/\1/p' | grep -v '^cmd_'); do
                grep -qE "[ *]$fn\(" tools/cmd/*.h 2>/dev/null || bad="$bad $f:$fn"
        done
done
if [ -z "$bad" ]; then pass "tools/cmd/ exports only commands and what one command's files share"
else fail "tools/cmd/ exports only commands and what one command's files share" "not in a tools/cmd/ header:$bad"; fi
