# SPDX-License-Identifier: BSD-2-Clause
"""PASS:/FAIL: reporting shared by the Python CLI tests (tests/run-all.sh
counts the lines)."""
import sys


class Report:
    def __init__(self, prefix):
        self.prefix = prefix
        self.failed = 0

    def __call__(self, ok, name, detail=""):
        print(("PASS: " if ok else "FAIL: ") + self.prefix + name)
        if not ok:
            self.failed += 1
            if detail:
                print("  " + str(detail)[:3000].replace("\n", "\n  "), file=sys.stderr)
