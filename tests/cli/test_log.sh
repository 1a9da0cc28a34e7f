#!/usr/bin/env bash
# mshim log against EXPECTED.json and tpm2_eventlog (tests/cli/log_oracle.py).
cd "$(dirname "$0")/../.." && exec python3 tests/cli/log_oracle.py
