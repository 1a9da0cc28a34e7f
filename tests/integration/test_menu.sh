#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# The boot menu (efi/menu.c) on OVMF's serial console, driven by
# mok_console.py as a person at the keyboard. Two entries, "timeout 30",
# default mshim-test (listed 1: BLS order by id, newest first) and
# mshim-alt (listed 2, its own options). Two boots, side by side:
#   number   the key "2": mshim-alt boots: /proc/cmdline holds its options,
#            PCR 5's log holds loader.conf and mshim-alt.conf (no other
#            entry), PCR 12 is its options' EV_IPL alone (expected values
#            from the files and python hashlib: oracle.py);
#   edit     "e", then " mshim.edited=1" typed and Enter: the default boots
#            with the edited line: /proc/cmdline holds it, PCR 12 is the
#            edited line's EV_IPL (so a secret sealed to the unedited line
#            stays shut: SEALING.md), PCR 5 the unedited entry file.
# LoaderEntrySelected after a menu choice is checked in the firmware
# harness (tests/efiharness/test_efi_menu.c). lib.sh's two banks: bank
# coverage is test_measured_boot.sh's.
set -u
. "$(dirname "$0")/lib.sh"
T=menu
it_init "$T"
if ! it_require "$IT_EFI" "$IT_KERNEL"; then
        it_fail "$T: prerequisites"; exit 1
fi
num=$(it_newboot number) && ed=$(it_newboot edit) || { it_fail "$T: set-up"; exit 1; }
ALT_OPTIONS="$IT_OPTIONS mshim.menu=alt"
EDITED="$IT_OPTIONS mshim.edited=1"
for d in "$num" "$ed"; do
        printf '# mshim menu test\ntimeout 30\ndefault mshim-test\n' > "$d/esp/loader/loader.conf"
        sed -e 's/^title .*/title mshim menu alternative/' -e "s|^options .*|options $ALT_OPTIONS|" \
                "$d/esp/loader/entries/mshim-test.conf" > "$d/esp/loader/entries/mshim-alt.conf"
done
# The menu is up once its countdown shows; keys go one at a time (send),
# as the firmware's terminal driver reads them.
cat > "$num/console.script" <<'S'
expect 120 booting the default in
send 2
S
cat > "$ed/console.script" <<'S'
expect 120 booting the default in
send e
expect 60 edit the command line
send  mshim.edited=1
send <enter>
S

it_boot_all "$num" "$ed"
for x in number edit; do
        if [ "$(cat "$IT_DIR/$x/boot.rc" 2>/dev/null)" = 0 ]; then
                it_pass "$T: boot $x"
        else
                it_fail "$T: boot $x"
        fi
done
[ "$IT_FAILED" = 0 ] || exit 1

cmdline_has() {         # DIR TEXT NAME
        local c
        c=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["cmdline"])' "$1/result/result.json")
        case " $c " in
        *" $2 "*) it_pass "$3" ;;
        *) it_fail "$3"; echo "  /proc/cmdline: '$c', expected to hold: '$2'" >&2 ;;
        esac
}
cmdline_has "$num" "$ALT_OPTIONS" "$T: number key 2: the kernel has the second entry's options"
it_oracle check-pcr5 --result "$num/result" --name "$T: number key 2" \
        --loader-conf "$num/esp/loader/loader.conf" --entry "$num/esp/loader/entries/mshim-alt.conf" || IT_FAILED=1
it_oracle check-pcr12 --result "$num/result" --name "$T: number key 2" --options "$ALT_OPTIONS" || IT_FAILED=1

cmdline_has "$ed" "$EDITED" "$T: e and typing: the kernel has the edited line"
it_oracle check-pcr5 --result "$ed/result" --name "$T: edited" \
        --loader-conf "$ed/esp/loader/loader.conf" --entry "$ed/esp/loader/entries/mshim-test.conf" || IT_FAILED=1
it_oracle check-pcr12 --result "$ed/result" --name "$T: edited line measured" --options "$EDITED" || IT_FAILED=1
exit "$IT_FAILED"
