#!/usr/bin/env bash
# Set up a fresh machine and run the whole test suite (README command 2; CI runs this).
# Installs what the tests need; safe to rerun.
set -euo pipefail
cd "$(dirname "$0")/.."

python3 -m pip install --quiet --upgrade pip
python3 -m pip install --quiet -e ".[dev]"

python3 -m pytest "$@"
