"""Real-browser fixtures: one JupyterLab + one headless Chromium for the whole session.

JupyterLab's kernels reach the model through ``ANTHROPIC_BASE_URL`` = a `FakeAnthropicServer`
running in this pytest process. Every test scripts its own conversation: its prompt carries a
unique tag, and the server's turn function hands each request to the script registered for the
tag found in the conversation's first user message (`FakeApi.script`).

Chromium is the Debian package (``/usr/bin/chromium``); Playwright never downloads a browser.
When ``CI`` is set, a missing Chromium or a JupyterLab that does not start fails the tests;
elsewhere they are skipped.
"""

from __future__ import annotations

import json
import os
import re
import secrets
import socket
import subprocess
import sys
import threading
import time
import urllib.request
import uuid
from pathlib import Path
from typing import Any, Callable, Iterator

import nbformat
import pytest

REPO_ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = REPO_ROOT / "test-artifacts" / "browser"
CHROMIUM = os.environ.get("TOOLAGENT_CHROMIUM", "/usr/bin/chromium")
JUPYTER_LAB = Path(sys.executable).with_name("jupyter-lab")
JUPYTER_NOTEBOOK = Path(sys.executable).with_name("jupyter-notebook")
CHROMIUM_FLAGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
LAB_START_TIMEOUT = 90.0


def unavailable(reason: str) -> None:
    """Fail under CI (a broken browser setup must not pass as skipped), skip elsewhere."""
    if os.environ.get("CI"):
        pytest.fail(f"browser tests cannot run: {reason}", pytrace=False)
    pytest.skip(reason)


# --- the fake API ---------------------------------------------------------------------------------
TAG = re.compile(r"\[bt:([0-9a-f]{12})\]")


def _first_user_text(body: dict[str, Any]) -> str:
    for message in body.get("messages", []):
        if message.get("role") != "user":
            continue
        content = message.get("content")
        if isinstance(content, str):
            return content
        return " ".join(b.get("text", "") for b in content if isinstance(b, dict) and b.get("type") == "text")
    return ""


class FakeApi:
    """The session's fake Messages API, shared by all tests, with one script per test tag."""

    def __init__(self) -> None:
        from jupyter_toolagent.testing import FakeAnthropicServer

        self._scripts: dict[str, Callable[[dict[str, Any]], Any]] = {}
        self._answered: dict[str, list[dict[str, Any]]] = {}
        self._lock = threading.Lock()
        self.server = FakeAnthropicServer(turns=self._turn, event_delay=0.005)

    def _turn(self, body: dict[str, Any]) -> Any:
        """Called by the server only for requests that passed its validation (the API's 400s
        for a broken transcript come before): so answered requests are the valid ones."""
        match = TAG.search(_first_user_text(body))
        script = self._scripts.get(match.group(1)) if match else None
        if script is None:
            return "No script for this conversation."
        with self._lock:
            self._answered.setdefault(f"[bt:{match.group(1)}]", []).append(body)
        return script(body)

    def script(self, turns: Callable[[dict[str, Any]], Any]) -> str:
        """Register a conversation; return the tag its first prompt must contain."""
        tag = uuid.uuid4().hex[:12]
        with self._lock:
            self._scripts[tag] = turns
        return f"[bt:{tag}]"

    def requests_for(self, tag: str) -> list[Any]:
        """Requests of one conversation, in arrival order (`RecordedRequest`s)."""
        return [r for r in list(self.server.requests) if isinstance(r.body, dict) and tag in _first_user_text(r.body)]

    def answered_for(self, tag: str) -> list[dict[str, Any]]:
        """Bodies of the requests of one conversation that were valid and got a reply."""
        with self._lock:
            return list(self._answered.get(tag, []))

    def bodies(self, tag: str, expected: int | None = None) -> list[dict[str, Any]]:
        """The conversation's request bodies, after checking that every request was valid
        (none was refused with a 400) and, if given, how many there were."""
        sent = [r.body for r in self.requests_for(tag)]
        answered = self.answered_for(tag)
        assert len(sent) == len(answered), f"{len(sent) - len(answered)} of {len(sent)} requests were refused"
        if expected is not None:
            assert len(sent) == expected, f"expected {expected} requests, the model got {len(sent)}"
        return sent


@pytest.fixture(scope="session")
def fake_api() -> Iterator[FakeApi]:
    api = FakeApi()
    api.server.start()
    try:
        yield api
    finally:
        api.server.stop(timeout=5)


# --- JupyterLab -----------------------------------------------------------------------------------
def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Lab:
    def __init__(self, url: str, token: str, root: Path, process: subprocess.Popen, log: Path) -> None:
        self.url, self.token, self.root, self.process, self.log = url, token, root, process, log

    def write_notebook(self, name: str, cells: list[str]) -> str:
        nb = nbformat.v4.new_notebook()
        nb.cells = [nbformat.v4.new_code_cell(src) for src in cells]
        nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3 (ipykernel)", "language": "python"}
        nbformat.write(nb, self.root / name)
        return name

    def notebook_url(self, name: str) -> str:
        workspace = f"w{uuid.uuid4().hex[:10]}"  # fresh tabs: no layout restored from another test
        return f"{self.url}/lab/workspaces/{workspace}/tree/{name}?reset&token={self.token}"

    def notebook7_url(self, name: str) -> str:
        """The page of one notebook in Notebook 7 (one document per page: no layout to reset)."""
        return f"{self.url}/notebooks/{name}?token={self.token}"


def _wait_for_lab(url: str, token: str, process: subprocess.Popen, log: Path) -> None:
    deadline = time.monotonic() + LAB_START_TIMEOUT
    while time.monotonic() < deadline:
        if process.poll() is not None:
            unavailable(f"jupyter-lab exited with {process.returncode}: {log.read_text()[-2000:]}")
        try:
            with urllib.request.urlopen(f"{url}/api/status?token={token}", timeout=2) as response:
                if response.status == 200:
                    return
        except OSError:
            pass
        time.sleep(0.25)
    unavailable(f"jupyter-lab did not answer within {LAB_START_TIMEOUT:.0f} s: {log.read_text()[-2000:]}")


def _stop(process: subprocess.Popen, timeout: float = 15.0) -> None:
    if process.poll() is not None:
        return
    process.terminate()  # jupyter-lab shuts its kernels down on SIGTERM
    try:
        process.wait(timeout)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait(5)


@pytest.fixture(scope="session")
def jupyter_lab(fake_api: FakeApi, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Lab]:
    yield from _jupyter_server(JUPYTER_LAB, fake_api, tmp_path_factory.mktemp("lab"))


@pytest.fixture(scope="session")
def jupyter_notebook7(fake_api: FakeApi, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Lab]:
    """Notebook 7, started the same way as JupyterLab (its own ``jupyter-notebook`` process)."""
    yield from _jupyter_server(JUPYTER_NOTEBOOK, fake_api, tmp_path_factory.mktemp("notebook7"))


def _jupyter_server(executable: Path, fake_api: FakeApi, base: Path) -> Iterator[Lab]:
    if not executable.exists():
        unavailable(f"{executable} not found (pip install jupyterlab notebook)")
    root = base / "notebooks"
    root.mkdir()
    port, token = _free_port(), secrets.token_hex(16)
    env = {
        **os.environ,
        "ANTHROPIC_BASE_URL": fake_api.server.base_url,
        "ANTHROPIC_API_KEY": "test-key-not-secret",
        "TOOLAGENT_MODEL": "claude-sonnet-4-5",
        "PATH": f"{executable.parent}{os.pathsep}{os.environ.get('PATH', '')}",
        "IPYTHONDIR": str(base / "ipython"),
        "JUPYTER_CONFIG_DIR": str(base / "jupyter_config"),
        "JUPYTER_RUNTIME_DIR": str(base / "runtime"),
        "JUPYTERLAB_SETTINGS_DIR": str(base / "lab_settings"),
        "JUPYTERLAB_WORKSPACES_DIR": str(base / "lab_workspaces"),
        "NO_PROXY": "127.0.0.1,localhost",
    }
    for name in ("HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy", "ALL_PROXY", "all_proxy"):
        env.pop(name, None)
    # no news / update checks: nothing leaves the machine, no toast covers the notebook
    settings = Path(env["JUPYTERLAB_SETTINGS_DIR"]) / "@jupyterlab" / "apputils-extension"
    settings.mkdir(parents=True)
    (settings / "notification.jupyterlab-settings").write_text(json.dumps({"fetchNews": "false", "checkForUpdates": False}))
    log = base / f"{executable.name}.log"
    cmd = [
        str(executable), "--no-browser", "--ip=127.0.0.1", f"--port={port}", f"--ServerApp.token={token}",
        "--allow-root", f"--ServerApp.root_dir={root}", "--ServerApp.open_browser=False",
    ]
    if executable == JUPYTER_LAB:
        cmd += ["--LabApp.news_url=", "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate"]
    with open(log, "wb") as out:
        process = subprocess.Popen(cmd, env=env, stdout=out, stderr=subprocess.STDOUT, cwd=root)
    try:
        url = f"http://127.0.0.1:{port}"
        _wait_for_lab(url, token, process, log)
        yield Lab(url, token, root, process, log)
    finally:
        _stop(process)


# --- Chromium ---------------------------------------------------------------------------------------
@pytest.fixture(scope="session")
def browser(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    if not Path(CHROMIUM).exists():
        unavailable(f"{CHROMIUM} not found (apt-get install -y chromium)")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        unavailable("playwright (python) is not installed")
    profile = tmp_path_factory.mktemp("chromium-profile")
    with sync_playwright() as pw:
        try:
            context = pw.chromium.launch_persistent_context(
                str(profile), executable_path=CHROMIUM, headless=True, args=CHROMIUM_FLAGS,
                viewport={"width": 1280, "height": 1400},
            )
        except Exception as exc:  # noqa: BLE001 - any launch failure means "no browser"
            unavailable(f"Chromium did not start: {exc}")
        try:
            yield context
        finally:
            context.close()


@pytest.fixture
def page(browser: Any, request: pytest.FixtureRequest) -> Iterator[Any]:
    """A fresh tab; a screenshot of it is kept as ``test-artifacts/browser/<test>.png``."""
    tab = browser.new_page()
    try:
        yield tab
    finally:
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        name = re.sub(r"[^A-Za-z0-9_.-]", "_", request.node.name)
        try:
            tab.screenshot(path=str(ARTIFACTS / f"{name}.png"), full_page=True)
        except Exception:  # noqa: BLE001 - a failed screenshot must not hide the test's result
            pass
        tab.close()


@pytest.fixture(scope="session")
def latency_log() -> Iterator[list[dict[str, Any]]]:
    """Click → decision latencies measured by the tests, written out for benchmark B9."""
    records: list[dict[str, Any]] = []
    yield records
    if records:
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        (ARTIFACTS / "approval_latency.json").write_text(json.dumps(records, indent=2))
