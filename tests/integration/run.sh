#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# make integration: only the QEMU/OVMF/swtpm tests; ends with "N passed, N failed".
set -u
cd "$(dirname "$0")/../.." || exit 1
log=$(mktemp); trap 'rm -f "$log"' EXIT
for t in tests/integration/test_*.sh; do
        echo "== $t"
        start=$SECONDS
        out=$(mktemp)
        bash "$t" 2>&1 | tee "$out"
        rc=${PIPESTATUS[0]}
        cat "$out" >> "$log"
        if [ "$rc" != 0 ] && ! grep -q '^FAIL: ' "$out"; then
                echo "FAIL: $t exited with status $rc" | tee -a "$log"
        fi
        rm -f "$out"
        echo "== $t: $((SECONDS - start)) s"
done
p=$(grep -c '^PASS: ' "$log"); f=$(grep -c '^FAIL: ' "$log")
echo
echo "$p passed, $f failed"
[ "$f" = 0 ] && [ "$p" -gt 0 ]
