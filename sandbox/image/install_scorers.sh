#!/usr/bin/env bash
# Install the sandbox's third-party scorer packages (scorers.txt) into a folder of their own, for the
# Python that will run them there: the sandbox's python3 never sees the host's packages.
#
# Usage: install_scorers.sh TARGET [PYTHON]
#   TARGET  the folder (the image's or this machine's /opt/rewardsmith/scorers)
#   PYTHON  the interpreter that will import them (default python3); its pip installs them, or, when it
#           has none, this machine's python3 when both are the same Python version (wheels are per version)
# Idempotent: does nothing when TARGET already holds what scorers.txt names.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
target="${1:?usage: install_scorers.sh TARGET [PYTHON]}"
python="${2:-python3}"
stamp="$target/.scorers.txt"
if [ -f "$stamp" ] && cmp -s "$stamp" "$here/scorers.txt"; then
    echo "[install_scorers] $target is up to date"
    exit 0
fi
version() { "$1" -c 'import sys; print("%d.%d" % sys.version_info[:2])'; }
pip=("$python" -m pip)
if ! "$python" -m pip --version >/dev/null 2>&1; then
    if [ "$(version python3)" != "$(version "$python")" ]; then
        echo "[install_scorers] ERROR: $python has no pip and this machine's python3 is another version;" \
             "install pip for $python and rerun" >&2
        exit 1
    fi
    pip=(python3 -m pip)
fi
rm -rf "$target"
mkdir -p "$target"
"${pip[@]}" install --quiet --no-compile --disable-pip-version-check --target "$target" -r "$here/scorers.txt"
rm -rf "$target/bin"
# Bytecode now: on a read-only root the sandbox's Python could not write it, and every job would
# recompile sympy and numpy's Python parts (seconds) before scoring anything.
"$python" -m compileall -q "$target" >/dev/null 2>&1 || python3 -m compileall -q -j0 "$target" >/dev/null
chmod -R a+rX "$target"
cp "$here/scorers.txt" "$stamp"
echo "[install_scorers] installed $(grep -v '^#' "$here/scorers.txt" | xargs) into $target"
