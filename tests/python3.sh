# SPDX-License-Identifier: BSD-2-Clause
# Sourced by tests/run-all.sh, tests/cli/lib.sh and tests/integration/lib.sh.
#
# A python3 found through a version manager's shim (pyenv's is a bash
# script that runs several more before Python starts) costs about a second
# a call on a busy 2-core machine, and the suite calls Python thousands of
# times (oracles, fixtures, parsers). When python3 is such a shim, put a
# link to the very interpreter it resolves to first on PATH: the same
# Python with the same modules, only the shim's start-up goes. Any other
# python3 (Debian's, a venv's) is left as it is.
case "$(command -v python3)" in
*/shims/python3)
        mb_py=$(python3 -c 'import sys; print(sys.executable)' 2>/dev/null)
        mb_pybin=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)/${B:-build}/python3-bin
        case "${B:-build}" in /*) mb_pybin=$B/python3-bin ;; esac
        if [ -x "$mb_py" ] && mkdir -p "$mb_pybin" &&
           ln -sfn "$mb_py" "$mb_pybin/python3.$$" && mv -fT "$mb_pybin/python3.$$" "$mb_pybin/python3"; then
                PATH=$mb_pybin:$PATH
                export PATH
        fi
        unset mb_py mb_pybin
        ;;
esac
