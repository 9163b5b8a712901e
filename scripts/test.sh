#!/usr/bin/env bash
# Install everything the tests need (Chromium and ripgrep from Debian, the project with its test
# extras, Node.js and the npm MCP reference server), type-check the package with mypy (any error
# fails the run before a test starts) and run every test. Exit code 5 from pytest (no tests
# collected) is a failure.
set -euo pipefail
# This is the CI command: tests that would skip without a browser, ripgrep or the ipykernel 6
# virtualenv fail instead, and so does any other skip (tests/conftest.py).
export CI="${CI:-true}"
source "$(dirname "${BASH_SOURCE[0]}")/bootstrap.sh"
apt_install chromium ripgrep
install_sandbox
make_venv test
npm_test_servers
cd "$ROOT"
# The flags and per-module settings are in pyproject.toml ([tool.mypy]); `files` names the package.
"$VENV/bin/python" -m mypy
set +e
"$VENV/bin/python" -m pytest -p no:cacheprovider "$@"
rc=$?
set -e
if [ "$rc" -eq 5 ]; then
    echo "pytest collected no tests: failing" >&2
    exit 1
fi
exit "$rc"
