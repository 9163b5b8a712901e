#!/usr/bin/env bash
# Install jupyter_toolagent and open JupyterLab on the quickstart notebook.
# Without ANTHROPIC_API_KEY the agent runs offline on the built-in fake server with scripted
# turns (the cell says so); with a key it talks to Claude.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/bootstrap.sh"
install_sandbox || echo "without bubblewrap no Bash command is sandboxed, and every one asks first" >&2
make_venv lab
cd "$ROOT"
args=(--ip=127.0.0.1 --ServerApp.root_dir="$ROOT")
[ "$(id -u)" -eq 0 ] && args+=(--allow-root)
exec "$VENV/bin/jupyter-lab" "${args[@]}" "$@" notebooks/quickstart.ipynb
