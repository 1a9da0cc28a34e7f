#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# Every --json output against docs/schema/*.schema.json with Debian's
# python3-jsonschema (tests/cli/json_schema.py).
cd "$(dirname "$0")/../.." || exit 1
# Debian's interpreter and its python3-jsonschema when installed (the
# validator scripts/deps.sh installs), else whatever python3 has one.
py=python3
/usr/bin/python3 -c 'import jsonschema' 2>/dev/null && py=/usr/bin/python3
exec "$py" tests/cli/json_schema.py
