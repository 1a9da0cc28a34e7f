#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# SM3 banks, `mshim log -`, and `log diff` over shared banks, on crafted logs
# (tests/cli/log_formats.py).
cd "$(dirname "$0")/../.." && exec python3 tests/cli/log_formats.py
