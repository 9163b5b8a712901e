"""SPEC §5.6: InspectVariable's path language is a wall — a generated family of hostile paths
(random chains of attribute, index and slice steps from modules, IPython's objects, ``_`` names,
the product's own objects, the environment and protected text) against a real IPython shell's
namespace, judged by an independent oracle on the raw tool text (before the scrubber); and the
everyday paths that must keep working.
"""

from __future__ import annotations

from typing import Any, Iterator

import pytest
from inspect_family import (
    KEY,
    TOKEN,
    bypass_of,
    everyday_path,
    family,
    hostile_path,
    inspect_raw,
    make_shell,
)
from suite_counts import report

from jupyter_toolagent.core.secrets import SecretScrubber

pytest.importorskip("pandas")

HOSTILE_COUNT = 600
EVERYDAY_COUNT = 100


@pytest.fixture(scope="module")
def shell() -> Iterator[Any]:
    import os

    saved = {k: os.environ.get(k) for k in ("ANTHROPIC_API_KEY", "MY_SERVICE_TOKEN")}
    shell = make_shell()
    try:
        yield shell
    finally:
        from IPython.core.interactiveshell import InteractiveShell

        InteractiveShell.clear_instance()
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def scrubber() -> SecretScrubber:
    return SecretScrubber([KEY, TOKEN])


@pytest.mark.asyncio
async def test_no_hostile_path_gets_through(shell: Any) -> None:
    paths = family(HOSTILE_COUNT, 1400, hostile_path)
    bypasses = {}
    for path in paths:
        why = await bypass_of(path, shell.user_ns, shell.user_ns_hidden, scrubber())
        if why:
            bypasses[path] = why
    report("inspect_hostile_paths", len(paths), "generated InspectVariable paths from modules, IPython, product objects")
    report("inspect_hostile_bypasses", len(bypasses), "paths that showed a protected run or landed on a forbidden object")
    assert bypasses == {}


@pytest.mark.asyncio
async def test_refusals_say_what_is_not_allowed_and_why(shell: Any) -> None:
    cases = {
        "os": "not one of the user's variables",
        "exit": "not one of the user's variables",
        "get_ipython": "not one of the user's variables",
        "exit._ip": "starts with '_'",
        "func.__globals__": "starts with '_'",
        "holder.os.environ": "holder.os is not inspected: it is the module 'os'",
        "env_alias['ANTHROPIC_API_KEY']": "env_alias is not inspected: it is the process environment",
        "holder.client.api_key": "runtime's own objects (Anthropic from anthropic",
        "client": "runtime's own objects",
        "holder.model": "runtime's own objects",
        "holder.session.messages": "runtime's own objects",
        "keys['api'][0:7]": "holds a protected value",
        "secret_text[6:13]": "holds a protected value",
        "secret_bytes[0:40]": "holds a protected value",
        "gen.gi_frame.f_globals": "interpreter internal",
        "g['os']": "g is not inspected: it is the notebook namespace",
        "holder.g": "notebook namespace",
        "builtin_of_os": "function of the module 'posix'",
    }
    for path, reason in cases.items():
        is_error, text = await inspect_raw(path, shell.user_ns, shell.user_ns_hidden, scrubber())
        assert is_error and reason in text, (path, text)


@pytest.mark.asyncio
async def test_everyday_paths_keep_working(shell: Any) -> None:
    paths = family(EVERYDAY_COUNT, 1401, everyday_path)
    broken = {}
    for path in paths:
        is_error, text = await inspect_raw(path, shell.user_ns, shell.user_ns_hidden, scrubber())
        if is_error:
            broken[path] = text
    assert len(paths) >= 60
    report("inspect_everyday_paths", len(paths), "ordinary paths into user data")
    report("inspect_everyday_refused", len(broken))
    assert broken == {}
    _, text = await inspect_raw("df['col'][0:5]", shell.user_ns, shell.user_ns_hidden, scrubber())
    assert "1.5" in text and "5.5" in text
    _, text = await inspect_raw("d['k'][2]", shell.user_ns, shell.user_ns_hidden, scrubber())
    assert "30" in text
    _, text = await inspect_raw("obj.attr.sub", shell.user_ns, shell.user_ns_hidden, scrubber())
    assert "42" in text
    _, text = await inspect_raw("df.columns", shell.user_ns, shell.user_ns_hidden, scrubber())
    assert "col" in text and "b" in text


@pytest.mark.asyncio
async def test_a_container_holding_a_key_is_refused_and_its_other_parts_are_not(shell: Any) -> None:
    from tool_support import call, make_ctx, text_of

    shell.user_ns["mixed"] = {"api": KEY, "rows": 12, "name": "report"}
    ctx = make_ctx(namespace=shell.user_ns, hidden_names=frozenset(shell.user_ns_hidden)).replace(scrubber=scrubber())
    refused = await call(ctx, "InspectVariable", path="mixed")
    assert refused.is_error and "would show a protected value" in text_of(refused)
    assert KEY[-20:] not in text_of(refused)
    fine = await call(ctx, "InspectVariable", path="mixed['rows']")
    assert not fine.is_error and "12" in text_of(fine)


def _step_text(step: Any) -> str:
    from inspect_family import key_text

    return "." + step if isinstance(step, str) else key_text(step)


@pytest.mark.asyncio
async def test_hypothesis_chains_from_hostile_roots_never_get_through(shell: Any) -> None:
    """The same oracle over chains hypothesis builds (and shrinks, should one get through)."""
    from hypothesis import HealthCheck, given, settings
    from hypothesis import strategies as st
    from inspect_family import HOSTILE_ATTRIBUTES, HOSTILE_KEYS, HOSTILE_ROOTS

    steps = st.one_of(st.sampled_from(HOSTILE_ATTRIBUTES), st.sampled_from(HOSTILE_KEYS),
                      st.builds(slice, st.integers(-40, 40), st.integers(-40, 60)))
    bypasses: list[tuple[str, str]] = []

    @settings(max_examples=300, derandomize=True, deadline=None, suppress_health_check=list(HealthCheck))
    @given(st.sampled_from(HOSTILE_ROOTS), st.lists(steps, max_size=5))
    def check(root: str, chain: list[Any]) -> None:
        import asyncio

        path = root + "".join(_step_text(s) for s in chain)
        why = asyncio.new_event_loop().run_until_complete(
            bypass_of(path, shell.user_ns, shell.user_ns_hidden, scrubber()))
        if why:
            bypasses.append((path, why))
        assert why is None, (path, why)

    import threading

    errors: list[BaseException] = []

    def run() -> None:  # hypothesis drives its own loop; keep it off the test's running loop
        try:
            check()
        except BaseException as exc:  # noqa: BLE001 - re-raised below
            errors.append(exc)

    worker = threading.Thread(target=run)
    worker.start()
    worker.join(timeout=240)
    report("inspect_hypothesis_bypasses", len(bypasses))
    assert not worker.is_alive() and not errors, errors[:1]


@pytest.mark.asyncio
async def test_a_slice_of_a_huge_text_is_checked_where_it_cuts(shell: Any) -> None:
    at = 250_000
    shell.user_ns["big"] = "x" * at + KEY + "y" * 250_000
    for path in (f"big[{at}:{at + 7}]", f"big[{at + 30}:{at + 36}]", f"big[{at - 3}:{at + 4}]", f"big[{at + 5}]"):
        is_error, text = await inspect_raw(path, shell.user_ns, shell.user_ns_hidden, scrubber())
        assert is_error and "holds a protected value" in text, (path, text)
    is_error, text = await inspect_raw("big[0:100]", shell.user_ns, shell.user_ns_hidden, scrubber())
    assert not is_error and "xxxx" in text
