#!/usr/bin/env bash
# Install everything the tests need (Chromium and ripgrep from Debian, the project with its test
# extras) and run every test. Exit code 5 from pytest (no tests collected) is a failure.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/bootstrap.sh"
apt_install chromium ripgrep
make_venv test
cd "$ROOT"
set +e
"$VENV/bin/python" -m pytest -p no:cacheprovider "$@"
rc=$?
set -e
if [ "$rc" -eq 5 ]; then
    echo "pytest collected no tests: failing" >&2
    exit 1
fi
exit "$rc"
