#!/usr/bin/env bash
# Shared set-up for a fresh Debian machine (root): system packages and the project virtualenv.
# Sourced by quickstart.sh and test.sh; every step is idempotent.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
VENV="${TOOLAGENT_VENV:-$ROOT/.venv}"
PYTHON="${PYTHON:-python3}"

_apt_updated=0
apt_install() {  # apt_install PACKAGE... — only what is missing
    local missing=()
    for pkg in "$@"; do
        dpkg -s "$pkg" >/dev/null 2>&1 || missing+=("$pkg")
    done
    [ "${#missing[@]}" -eq 0 ] && return 0
    if [ "$(id -u)" -ne 0 ]; then
        echo "missing system packages: ${missing[*]} (run as root, or install them)" >&2
        return 1
    fi
    if [ "$_apt_updated" -eq 0 ]; then
        DEBIAN_FRONTEND=noninteractive apt-get update -qq
        _apt_updated=1
    fi
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}"
}

install_sandbox() {  # bubblewrap: every Bash command the agent runs is confined by it (SPEC 5.5)
    case "$(uname -s)" in
        Linux) apt_install bubblewrap ;;
        *) : ;;  # macOS ships sandbox-exec
    esac
}

make_venv() {  # make_venv EXTRAS — the project installed editable with the given extras
    local extras="$1"
    if ! "$PYTHON" -c 'import venv, ensurepip' >/dev/null 2>&1; then
        apt_install python3-venv
    fi
    [ -x "$VENV/bin/python" ] || "$PYTHON" -m venv "$VENV"
    "$VENV/bin/python" -m pip install -q --upgrade pip
    "$VENV/bin/python" -m pip install -q -e "$ROOT[$extras]"
}

NPM_CACHE="${TOOLAGENT_NPM_CACHE:-${HOME}/.cache/jupyter_toolagent-test/npm}"
SERVER_EVERYTHING="@modelcontextprotocol/server-everything@2026.8.31"
npm_test_servers() {  # the third-party MCP reference server the tests run (into a cache folder)
    command -v node >/dev/null 2>&1 || apt_install nodejs
    command -v npm >/dev/null 2>&1 || apt_install npm
    if [ ! -x "$NPM_CACHE/node_modules/.bin/mcp-server-everything" ]; then
        mkdir -p "$NPM_CACHE"
        npm install --no-audit --no-fund --silent --prefix "$NPM_CACHE" "$SERVER_EVERYTHING"
    fi
    export TOOLAGENT_SERVER_EVERYTHING="$NPM_CACHE/node_modules/.bin/mcp-server-everything"
}
