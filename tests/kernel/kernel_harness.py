"""Real kernels for the notebook front end's tests: ipykernel 7 (this environment) and 6.29.

The ipykernel 6 kernel runs from its own virtualenv, cached under
``~/.cache/jupyter_toolagent-test/`` and rebuilt when the project's dependencies change. Both
kernels import the project from this checkout (``PYTHONPATH``), so they always run the code
under test. Every kernel is started with an explicit environment: the fake server's base URL,
a dummy key, and nothing else of the test process's Anthropic settings.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import queue
import shutil
import subprocess
import sys
import time
import tomllib
from pathlib import Path
from typing import Any, Iterator

import nbformat
from jupyter_client import KernelManager
from jupyter_client.kernelspec import KernelSpecManager
from nbclient import NotebookClient

PROJECT = Path(__file__).resolve().parents[2]
CACHE = Path(os.environ.get("TOOLAGENT_TEST_CACHE", Path.home() / ".cache" / "jupyter_toolagent-test"))
IPYKERNEL6 = "ipykernel==6.29.5"
TEST_KEY = "sk-test-kernel-0123456789"


def ipykernel6_venv() -> Path:
    """The python of a cached virtualenv with ipykernel 6.29 and the project's dependencies.

    Built once (about 30 s) and reused while the dependency list is unchanged."""
    deps = tomllib.loads((PROJECT / "pyproject.toml").read_text())["project"]["dependencies"]
    key = hashlib.sha256(json.dumps([IPYKERNEL6, sys.version_info[:2], sorted(deps)]).encode()).hexdigest()[:12]
    home = CACHE / f"ipykernel6-{key}"
    python = home / "bin" / "python"
    if (home / ".complete").exists() and python.exists():
        return python
    shutil.rmtree(home, ignore_errors=True)  # an interrupted build
    CACHE.mkdir(parents=True, exist_ok=True)
    subprocess.run([sys.executable, "-m", "venv", str(home)], check=True, capture_output=True, timeout=120)
    result = subprocess.run(
        [str(home / "bin" / "python"), "-m", "pip", "install", "--disable-pip-version-check", "-q", IPYKERNEL6, *deps],
        capture_output=True, text=True, timeout=900,
    )
    if result.returncode != 0:
        shutil.rmtree(home, ignore_errors=True)
        raise RuntimeError(f"could not build the ipykernel 6 virtualenv:\n{result.stdout[-3000:]}\n{result.stderr[-3000:]}")
    (home / ".complete").write_text(IPYKERNEL6 + "\n")
    return python


def kernel_env(base_url: str | None, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("ANTHROPIC_", "TOOLAGENT_")) and k not in ("PYTHONPATH", "JPY_PARENT_PID")}
    env["PYTHONPATH"] = str(PROJECT)
    env["MPLBACKEND"] = "Agg"
    if base_url is not None:
        env["ANTHROPIC_BASE_URL"] = base_url
        env["ANTHROPIC_API_KEY"] = TEST_KEY
    env.update(extra)
    return env


def kernel_spec_manager(python: str, workdir: Path) -> tuple[KernelSpecManager, str]:
    """A kernelspec for ``python`` in a private directory (the user's kernels are not used)."""
    name = "toolagent-test"
    spec_dir = workdir / "kernels" / name
    spec_dir.mkdir(parents=True, exist_ok=True)
    (spec_dir / "kernel.json").write_text(json.dumps({
        "argv": [python, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
        "display_name": "toolagent test", "language": "python",
    }))
    ksm = KernelSpecManager()
    ksm.kernel_dirs = [str(workdir / "kernels")]
    ksm.ensure_native_kernel = False
    return ksm, name


def run_notebook(sources: list[str], python: str, env: dict[str, str], workdir: Path,
                 timeout: float = 60) -> nbformat.NotebookNode:
    """Execute cells one by one as nbclient does (``allow_stdin=False``); errors are kept."""
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(src) for src in sources]
    ksm, name = kernel_spec_manager(python, workdir)
    km = KernelManager(kernel_name=name, kernel_spec_manager=ksm)
    client = NotebookClient(nb, km=km, timeout=timeout, allow_errors=True, kernel_name=name,
                            resources={"metadata": {"path": str(workdir)}})
    client.execute(env=env, cwd=str(workdir))
    return nb


def cell_text(cell: Any) -> str:
    """Everything a cell showed as text: streams, text/plain results, error name and value."""
    parts: list[str] = []
    previous = None
    for out in cell.get("outputs", []):
        if out.output_type == "stream":
            # One print can arrive as several stream messages (e.g. 'DELETED' then ' True\n'):
            # consecutive stream text is joined as the front end shows it, not split by lines.
            if previous is not None and previous.output_type == "stream" and previous.name == out.name:
                parts[-1] += out.text
            else:
                parts.append(out.text)
        elif out.output_type in ("execute_result", "display_data"):
            parts.append(str(out.get("data", {}).get("text/plain", "")))
        elif out.output_type == "error":
            parts.append(f"{out.ename}: {out.evalue}")
        previous = out
    return "\n".join(parts)


def cell_errors(cell: Any) -> list[Any]:
    return [o for o in cell.get("outputs", []) if o.output_type == "error"]


@contextlib.contextmanager
def running_kernel(python: str, env: dict[str, str], workdir: Path) -> Iterator[tuple[KernelManager, Any]]:
    """A started kernel and a blocking client, shut down afterwards."""
    ksm, name = kernel_spec_manager(python, workdir)
    km = KernelManager(kernel_name=name, kernel_spec_manager=ksm)
    km.start_kernel(env=env, cwd=str(workdir))
    kc = km.client()
    kc.start_channels()
    try:
        kc.wait_for_ready(timeout=60)
        yield km, kc
    finally:
        kc.stop_channels()
        km.shutdown_kernel(now=True)


def execute_and_wait(kc: Any, code: str, timeout: float = 60, **kw: Any) -> tuple[dict[str, Any], str]:
    """Run ``code``; return its execute_reply content and the text it printed."""
    msg_id = kc.execute(code, **kw)
    return wait_reply(kc, msg_id, timeout), collect_output(kc, msg_id, timeout)


def wait_reply(kc: Any, msg_id: str, timeout: float = 60) -> dict[str, Any]:
    deadline = time.monotonic() + timeout
    while True:
        reply = kc.get_shell_msg(timeout=max(0.1, deadline - time.monotonic()))
        if reply["parent_header"].get("msg_id") == msg_id:
            return reply["content"]


def collect_output(kc: Any, msg_id: str, timeout: float = 30) -> str:
    """Text published for ``msg_id`` on iopub until its idle status."""
    parts: list[str] = []
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            msg = kc.get_iopub_msg(timeout=0.5)
        except queue.Empty:
            continue
        if msg["parent_header"].get("msg_id") != msg_id:
            continue
        kind, content = msg["msg_type"], msg["content"]
        if kind == "stream":
            parts.append(content["text"])
        elif kind in ("execute_result", "display_data"):
            parts.append(str(content.get("data", {}).get("text/plain", "")))
        elif kind == "error":
            parts.append(f"{content['ename']}: {content['evalue']}")
        elif kind == "status" and content["execution_state"] == "idle":
            return "".join(parts)
    raise TimeoutError(f"no idle status for {msg_id}; got so far: {''.join(parts)!r}")
