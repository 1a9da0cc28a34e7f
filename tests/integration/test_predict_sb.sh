#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# mshim predict with Secure Boot on, proven by booting (issue 10): keys
# enrolled as test_secureboot.sh does (it_sb_keys, it_sb_sign), boot A
# (signed mshim -> signed kernel), then predict on the host from A's log
# and PCRs:
#   db    `--db-append db.esl`: one EFI_SIGNATURE_LIST (X.509, a second
#         certificate, other.pem), built here from the UEFI spec layout
#   dbx   `--dbx-append dbx.auth`: an EFI_VARIABLE_AUTHENTICATION_2 payload
#         (EFI_TIME, WIN_CERTIFICATE_UEFI_GUID with a PKCS#7 signature by the
#         KEK key, then an EFI_CERT_SHA256 list of a hash no image has)
# and apply the same appends to copies of A's variable store with `mshim
# vars append`. The store is edited offline: the path a real update takes
# (SetVariable with EFI_VARIABLE_APPEND_WRITE, checked against KEK by the
# firmware) cannot be driven from the test, so what is proven is that the
# firmware measures the appended db/dbx and the unchanged authority event
# as predicted. Boot B (db) and B' (dbx), two at a time, and compare every
# active bank's PCRs 0-15 except 10 with the predictions (only PCR 7 may
# change). On A's real log, without booting: a dbx append of the kernel's
# Authenticode SHA-256 and of the db certificate are refused (no boot),
# a kernel signed by the same db key keeps PCR 7, and one signed by a key
# in no db is refused.
set -u
. "$(dirname "$0")/lib.sh"
T=predict-sb
it_init "$T"
k=$IT_DIR/keys
it_sb_setup "$T" "$k" || exit 1
it_sb_sign "$IT_EFI" "$k/mshim-signed.efi" "$k" db &&
        it_sb_sign "$IT_KERNEL" "$k/vmlinuz-signed" "$k" db &&
        it_sb_sign "$IT_KERNEL" "$k/vmlinuz-other" "$k" other || { it_fail "$T: set-up (mshim sign)"; exit 1; }

a=$(it_newboot a "$k/mshim-signed.efi") || { it_fail "$T: set-up"; exit 1; }
cp "$k/vmlinuz-signed" "$a/esp/vmlinuz"
if it_boot "$a"; then it_pass "$T: boot A (Secure Boot on)"; else it_fail "$T: boot A (Secure Boot on)"; exit 1; fi
it_pcrs_file "$a" > "$a/pcrs.txt"

# The updates (it_sb_update_files: from the UEFI spec, not by mshim).
UNRELATED=$(printf 'no image has this hash' | sha256sum | cut -d' ' -f1)
it_sb_update_files "$k" "$UNRELATED" || { it_fail "$T: set-up (update files)"; exit 1; }

b=$(it_newboot db "$k/mshim-signed.efi") && bx=$(it_newboot dbx "$k/mshim-signed.efi") ||
        { it_fail "$T: set-up"; exit 1; }
cp "$k/vmlinuz-signed" "$b/esp/vmlinuz"
cp "$k/vmlinuz-signed" "$bx/esp/vmlinuz"
"$IT_CLI" vars append "$k/sb.fd" --db "$k/other.pem" --owner "$IT_SB_OWNER" -o "$b/vars.in.fd" &&
        "$IT_CLI" vars append "$k/sb.fd" --dbx-hash "$UNRELATED" --owner "$IT_SB_OWNER" -o "$bx/vars.in.fd" ||
        { it_fail "$T: set-up (mshim vars append)"; exit 1; }
base=(--log "$a/result/eventlog.bin" --pcrs "$a/pcrs.txt" --json)
for c in db dbx; do
        d=$IT_DIR/$c
        case $c in
        db) args=(--db-append "$k/db.esl") ;;
        dbx) args=(--dbx-append "$k/dbx.auth") ;;
        esac
        if "$IT_CLI" predict "${base[@]}" "${args[@]}" > "$d/predict.json" 2> "$d/predict.err"; then
                it_pass "$T: predict $c on the host"
        else
                it_fail "$T: predict $c on the host"; cat "$d/predict.err" >&2
        fi
done

# On A's log alone: what no boot can show.
# expect NAME RC KEY PATTERN ARGS...: exit status RC and PATTERN in the JSON's
# KEY ("refused", or unpredictable's "7").
expect() {
        local name=$1 want=$2 key=$3 pat=$4 rc; shift 4
        "$IT_CLI" predict "${base[@]}" "$@" > "$IT_DIR/x.json" 2> "$IT_DIR/x.err"; rc=$?
        if [ "$rc" = "$want" ] && python3 - "$IT_DIR/x.json" "$key" "$pat" <<'PY'
import json, re, sys
j = json.load(open(sys.argv[1]))
if not sys.argv[2]:     # everything predicted
    sys.exit(1 if j["unpredictable"] or "refused" in j else 0)
v = j.get("refused") if sys.argv[2] == "refused" else j["unpredictable"].get(sys.argv[2])
sys.exit(0 if v and re.search(sys.argv[3], v) else 1)
PY
        then it_pass "$T: $name"
        else it_fail "$T: $name (exit $rc)"; cat "$IT_DIR/x.json" "$IT_DIR/x.err" >&2; fi
}
"$IT_CLI" vars append "$k/sb.fd" --dbx-image "$k/vmlinuz-signed" -o "$IT_DIR/revoked.fd" >/dev/null &&
        "$IT_CLI" vars get "$IT_DIR/revoked.fd" dbx -o "$k/dbx-kernel.esl" >/dev/null ||
        { it_fail "$T: set-up (dbx of the kernel)"; exit 1; }
python3 - "$k" "$IT_SB_OWNER" <<'PY' || { it_fail "$T: set-up (dbx of the db certificate)"; exit 1; }
import struct, sys, uuid
k, owner = sys.argv[1], uuid.UUID(sys.argv[2]).bytes_le
der = open(k + "/db.der", "rb").read()
X509 = uuid.UUID("a5c059a1-94e4-4aa7-87b5-ab155c2bf072").bytes_le
open(k + "/dbx-dbcert.esl", "wb").write(X509 + struct.pack("<III", 44 + len(der), 0, 16 + len(der)) + owner + der)
PY
expect "dbx revoking the kernel's Authenticode SHA-256: no boot (refused)" 1 refused \
        "refuse an image this boot starts" --dbx-append "$k/dbx-kernel.esl"
expect "dbx revoking the db certificate of the authority event: no boot (refused)" 1 refused \
        "db certificate that verified" --dbx-append "$k/dbx-dbcert.esl"
expect "a new kernel signed by the same db key: PCR 7 predicted" 0 "" "" --kernel "$k/vmlinuz-signed"
expect "a new kernel signed by a key in no db: no boot (refused)" 1 refused \
        "refuse the new kernel: no db entry verifies" --kernel "$k/vmlinuz-other"
expect "that kernel with its key appended to db: another db entry verifies it, PCR 7 unpredictable" 1 7 \
        "another db entry" --kernel "$k/vmlinuz-other" --db-append "$k/db.esl"

IT_JOBS=2 it_boot_all "$b" "$bx"
for d in "$b" "$bx"; do
        if [ "$(cat "$d/boot.rc" 2>/dev/null)" = 0 ]; then
                it_pass "$T: boot $(basename "$d")"
                it_predict_check "$T: $(basename "$d")" "$a" "$d" "$d/predict.json" || IT_FAILED=1
        else
                it_fail "$T: boot $(basename "$d")"
        fi
done
exit "$IT_FAILED"
