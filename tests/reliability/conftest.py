"""Fixtures of the reliability suite (its counts are reported by the suite's conftest)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any, Iterator

import pytest

HERE = Path(__file__).resolve().parent
for shared in (HERE.parent / "permissions", HERE.parent / "kernel"):
    if str(shared) not in sys.path:
        sys.path.append(str(shared))  # corpus_data / fakes / kernel_harness are reused as they are


from jupyter_toolagent.hooks import HookRegistry, default_registry  # noqa: E402


@pytest.fixture
def clean_default_registry() -> Iterator[HookRegistry]:
    """The process-wide hook registry, emptied before and after the test (``RunConfig(hooks=None)``
    reads it, so a hook registered here must never outlive the test)."""
    saved = list(default_registry)
    default_registry.clear()
    try:
        yield default_registry
    finally:
        default_registry.clear()
        for spec in saved:
            default_registry.add(spec.event, spec.func, spec.matcher, timeout=spec.timeout)


@pytest.fixture
def no_anthropic_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_BASE_URL", "TOOLAGENT_MODEL",
                 "TOOLAGENT_MAX_TOOL_USE_CONCURRENCY"):
        monkeypatch.delenv(name, raising=False)


@pytest.fixture
def agent_shell(no_anthropic_env: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    """The shared in-process IPython test shell with the extension loaded, in an empty working
    directory; its sessions are dropped afterwards."""
    from IPython.testing.globalipapp import get_ipython

    monkeypatch.chdir(tmp_path)
    shell = get_ipython()
    names = set(shell.user_ns)
    shell.run_line_magic("load_ext", "jupyter_toolagent")
    try:
        yield shell
    finally:
        shell.run_line_magic("unload_ext", "jupyter_toolagent")
        from jupyter_toolagent.notebook.sessions import registry_for

        registry_for(shell).clear()
        for name in set(shell.user_ns) - names:  # the functions and variables a test defined
            del shell.user_ns[name]
