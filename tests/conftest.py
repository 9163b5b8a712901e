"""Suite-wide rules.

* No test can reach the real API with a real key: credentials are removed from the
  environment before anything runs (tests talk to `FakeAnthropicServer` on 127.0.0.1).
* With ``CI`` set (``scripts/test.sh`` sets it), a skipped test fails the run: a test that
  cannot run there is a broken set-up, not a pass.
* The reliability counts tests report (`suite_counts.report`) are printed at the end of the run
  and written to ``test-artifacts/reliability/counts.json``.
* Real-browser tests run last: Playwright's sync API keeps an event loop running on the main
  thread for the session-scoped browser, and asyncio tests collected after it could not start
  their own loop.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Iterator

import pytest

from suite_counts import COUNTS, write_counts

from jupyter_toolagent.testing import FakeAnthropicServer

for _name in ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN"):
    os.environ.pop(_name, None)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    items.sort(key=lambda item: item.get_closest_marker("browser") is not None)


def pytest_terminal_summary(terminalreporter: Any) -> None:
    if not COUNTS:
        return
    terminalreporter.section("reliability counts")
    for key in sorted(COUNTS):
        terminalreporter.write_line(f"{key}: {COUNTS[key]}")
    path = write_counts()
    if path is not None:
        terminalreporter.write_line(f"written to {path}")


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    if not os.environ.get("CI") or exitstatus != 0:
        return
    reporter = session.config.pluginmanager.get_plugin("terminalreporter")
    skipped = reporter.stats.get("skipped", []) if reporter is not None else []
    if skipped:
        reporter.write_line(f"{len(skipped)} test(s) skipped under CI: failing the run", red=True)
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


# Everything the SDK reads to find credentials or a profile.
ENV_CREDENTIALS = ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_PROFILE", "ANTHROPIC_CUSTOM_HEADERS",
                   "ANTHROPIC_IDENTITY_TOKEN", "ANTHROPIC_IDENTITY_TOKEN_FILE", "ANTHROPIC_FEDERATION_RULE_ID",
                   "ANTHROPIC_ORGANIZATION_ID", "ANTHROPIC_CONFIG_DIR")


@pytest.fixture
def no_real_api(monkeypatch: pytest.MonkeyPatch, tmp_path: Any) -> None:
    """A model built without an explicit ``base_url`` fails fast instead of calling out: no
    credentials, no profile (``HOME`` is a fresh directory), ``ANTHROPIC_BASE_URL`` a closed port.
    Folders whose tests build SDK clients use it for every test (see their conftest)."""
    for name in ENV_CREDENTIALS:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("ANTHROPIC_BASE_URL", "http://127.0.0.1:9")
    monkeypatch.setenv("HOME", str(tmp_path))  # no credentials profile under ~/.config/anthropic


@pytest.fixture
def server() -> Iterator[FakeAnthropicServer]:
    with FakeAnthropicServer() as srv:
        yield srv


@pytest.fixture
def no_anthropic_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """No Anthropic or product setting in the environment (a test sets what it needs itself)."""
    for name in ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_BASE_URL", "TOOLAGENT_MODEL",
                 "TOOLAGENT_MAX_TOOL_USE_CONCURRENCY"):
        monkeypatch.delenv(name, raising=False)


@pytest.fixture
def agent_shell(no_anthropic_env: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    """The shared in-process IPython test shell with the extension loaded, in an empty working
    directory (so nothing a test does lands in the checkout) and with saving sessions off (the
    tests of saving switch it on). Afterwards the extension is unloaded, its sessions are
    dropped and the names the test defined are removed, so no test sees another's state."""
    from IPython.testing.globalipapp import get_ipython

    monkeypatch.chdir(tmp_path)
    shell = get_ipython()  # starts the shared test shell once
    names = set(shell.user_ns)
    shell.run_line_magic("load_ext", "jupyter_toolagent")
    shell.run_line_magic("config", "AgentMagics.save_sessions = False")
    try:
        yield shell
    finally:
        shell.run_line_magic("unload_ext", "jupyter_toolagent")
        from jupyter_toolagent.notebook.sessions import registry_for

        registry_for(shell).clear()
        for name in set(shell.user_ns) - names:  # the functions and variables a test defined
            del shell.user_ns[name]
