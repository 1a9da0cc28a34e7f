# SPDX-License-Identifier: BSD-2-Clause
# Sourced by tests/run-all.sh, tests/cli/lib.sh and tests/integration/lib.sh.
#
# A python3 found through a version manager's shim (pyenv's is a bash
# script that runs several more before Python starts) costs about a second
# a call on a busy 2-core machine, and the suite calls Python thousands of
# times (oracles, fixtures, parsers). When python3 is such a shim, put a
# link to an interpreter first on PATH: the distribution's /usr/bin/python3
# when there is one (the Python the Debian package runs with, and what
# python3 is on a machine without a version manager; a version manager's
# own build can start ten times slower: 0.45 s of CPU a call against
# 0.045 s measured here, a 23 MB libpython with its debug information),
# else the very interpreter the shim resolves to. MB_PYTHON, when set,
# names the interpreter instead. Any other python3 (Debian's, a venv's) is
# left as it is.
case "${MB_PYTHON:+set}$(command -v python3)" in
set*|*/shims/python3)
        mb_py=${MB_PYTHON:-}
        [ -n "$mb_py" ] || { [ -x /usr/bin/python3 ] && mb_py=/usr/bin/python3; }
        [ -n "$mb_py" ] || mb_py=$(python3 -c 'import sys; print(sys.executable)' 2>/dev/null)
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
