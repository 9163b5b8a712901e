"""ListVariables and InspectVariable through the tool pipeline."""

from __future__ import annotations

import asyncio
import time
from typing import Any, Iterator

import pytest

from jupyter_toolagent import tool
from jupyter_toolagent.tools.bounded import DEFAULT_TIMEOUT

from tool_support import call, text_of

np = pytest.importorskip("numpy")
pd = pytest.importorskip("pandas")


class Tripwire:
    """Fails the test if anything calls its repr, len or a property."""

    calls: list[str] = []

    def __repr__(self) -> str:
        Tripwire.calls.append("repr")
        return "Tripwire()"

    def __len__(self) -> int:
        Tripwire.calls.append("len")
        return 0

    @property
    def value(self) -> int:
        Tripwire.calls.append("property")
        return 1


# --- ListVariables -------------------------------------------------------------------------------
@pytest.mark.asyncio
async def test_list_variables_hides_modules_internals_and_product_objects(ctx_in: Any) -> None:
    import json as json_module

    from jupyter_toolagent import Agent

    namespace = {
        "df": pd.DataFrame({"a": range(3)}), "n": 3, "name": "secret-looking text", "json": json_module,
        "_private": 1, "In": [], "Out": {}, "get_ipython": lambda: None, "exit": None, "quit": None, "_oh": {},
        "Agent": Agent, "startup_thing": 5, "changed_startup_name": 6,
    }
    hidden = {"startup_thing": namespace["startup_thing"], "changed_startup_name": "original value"}
    outcome = await call(ctx_in(namespace, hidden_names=hidden), "ListVariables")
    text = text_of(outcome)
    assert outcome.status == "done"
    assert "df: pandas DataFrame 3×1" in text and "n: int = 3" in text
    assert "name: str, 19 characters" in text and "secret-looking" not in text
    assert "changed_startup_name" in text  # IPython's rule: hidden only while it holds its startup value
    for absent in ("json", "_private", "In:", "Out:", "get_ipython", "exit", "quit", "_oh", "Agent", "startup_thing"):
        assert absent not in text, absent


@pytest.mark.asyncio
async def test_list_variables_runs_no_user_code(ctx_in: Any) -> None:
    Tripwire.calls.clear()
    outcome = await call(ctx_in({"t": Tripwire()}), "ListVariables")
    assert "t: " in text_of(outcome) and "Tripwire" in text_of(outcome)
    assert Tripwire.calls == []


@pytest.mark.asyncio
async def test_tool_functions_are_listed_under_their_own_heading(ctx_in: Any) -> None:
    @tool(read_only=True)
    def lookup(key: str, limit: int = 3) -> str:
        """Look a key up in the table.

        Args:
            key: The key.
        """
        return key

    outcome = await call(ctx_in({"lookup": lookup, "x": 1}), "ListVariables")
    text = text_of(outcome)
    variables, tools = text.split("Tools defined in the notebook")
    assert "x: int = 1" in variables and "lookup" not in variables
    assert "call them as tools, not through RunPython" in tools
    assert "lookup(key: str, limit: int = 3) — Look a key up in the table." in tools


@pytest.mark.asyncio
async def test_list_variables_pattern_and_empty_namespace(ctx_in: Any) -> None:
    text = text_of(await call(ctx_in({"df_a": 1, "df_b": 2, "other": 3}), "ListVariables", pattern="df_*"))
    assert "df_a" in text and "df_b" in text and "other" not in text
    assert "No user variables" in text_of(await call(ctx_in({}), "ListVariables"))
    outcome = await call(ctx_in(None), "ListVariables")
    assert outcome.is_error and "No Python namespace" in text_of(outcome)


# --- InspectVariable -------------------------------------------------------------------------------
@pytest.mark.asyncio
async def test_inspect_follows_a_path(ctx_in: Any) -> None:
    namespace = {"df": pd.DataFrame({"price": [1.5, 2.5], "city": ["a", "b"]}), "arr": np.arange(100)}
    text = text_of(await call(ctx_in(namespace), "InspectVariable", path="df['price']"))
    assert text.startswith("df['price']: pandas Series 'price': 2 values, dtype float64")
    text = text_of(await call(ctx_in(namespace), "InspectVariable", path="arr[10:13]"))
    assert "shape (3,)" in text and "[10 11 12]" in text


@pytest.mark.asyncio
async def test_inspect_refuses_code_and_dunders_before_running(ctx_in: Any) -> None:
    ran: list[str] = []
    namespace = {"f": lambda: ran.append("called"), "obj": object()}
    for path in ("f()", "obj.__class__.__subclasses__()", "obj.__class__"):
        outcome = await call(ctx_in(namespace), "InspectVariable", path=path)
        assert outcome.status == "invalid" and outcome.is_error
    assert ran == []


@pytest.mark.asyncio
async def test_unknown_names_and_failed_steps_are_errors_that_help(ctx_in: Any) -> None:
    namespace = {"revenue": 1, "d": {"a": 1}}
    outcome = await call(ctx_in(namespace), "InspectVariable", path="revenu")
    assert outcome.is_error and "Similar names: revenue" in text_of(outcome) and "ListVariables" in text_of(outcome)
    outcome = await call(ctx_in(namespace), "InspectVariable", path="d['b']")
    assert outcome.is_error and "d['b'] failed: KeyError" in text_of(outcome)


@pytest.mark.asyncio
async def test_budget_precedence_input_then_extra_then_default(ctx_in: Any) -> None:
    namespace = {"text": "q" * 100_000}
    default = text_of(await call(ctx_in(namespace), "InspectVariable", path="text"))
    configured = text_of(await call(ctx_in(namespace, inspect_max_chars=1_000), "InspectVariable", path="text"))
    explicit = text_of(await call(ctx_in(namespace, inspect_max_chars=1_000), "InspectVariable", path="text",
                                  max_chars=9_000))
    assert 3_000 < len(default) <= 4_000
    assert 500 < len(configured) <= 1_000
    assert 8_000 < len(explicit) <= 9_000
    outcome = await call(ctx_in(namespace), "InspectVariable", path="text", max_chars=10)
    assert outcome.status == "invalid"


@pytest.mark.asyncio
async def test_inspect_refuses_to_show_the_products_credentials(ctx_in: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test-0123456789")
    text = text_of(await call(ctx_in({"cfg": {"key": "sk-ant-test-0123456789"}}), "InspectVariable", path="cfg"))
    assert "sk-ant-test-0123456789" not in text and "would show a protected value" in text


# --- bounds on large and hostile values (allocated once per module) ------------------------------
@pytest.fixture(scope="module")
def big_values() -> Iterator[dict[str, Any]]:
    rows = 2_000_000
    rng = np.random.default_rng(0)

    class RaisesOnRepr:
        def __repr__(self) -> str:
            raise RuntimeError("refuses to be printed")

    class SleepsOnRepr:
        def __repr__(self) -> str:
            time.sleep(30)
            return "late"

    def naturals() -> Iterator[int]:
        n = 0
        while True:
            yield n
            n += 1

    values = {
        "df": pd.DataFrame({"id": np.arange(rows), "value": rng.standard_normal(rows),
                            "group": pd.Categorical.from_codes(rng.integers(0, 3, rows), ["a", "b", "c"])}),
        "arr": rng.standard_normal(20_000_000).astype(np.float32),
        "mapping": {f"key{i}": i for i in range(300_000)},
        "text": "lorem ipsum " * 3_000_000,
        "gen": naturals(),
        "raising": RaisesOnRepr(),
        "sleeping": SleepsOnRepr(),
    }
    yield values
    values.clear()


@pytest.mark.asyncio
@pytest.mark.parametrize("name", ["df", "arr", "mapping", "text", "gen", "raising"])
async def test_large_values_are_summarised_quickly_within_budget(ctx_in: Any, big_values: dict, name: str) -> None:
    start = time.perf_counter()
    outcome = await call(ctx_in(big_values), "InspectVariable", path=name)
    elapsed = time.perf_counter() - start
    text = text_of(outcome)
    assert outcome.status == "done", text
    assert len(text) <= 4_000
    assert elapsed < 2.0, f"{name} took {elapsed:.2f} s"
    expected = {
        "df": "2,000,000 rows × 3 columns", "arr": "20,000,000 elements", "mapping": "300,000 keys",
        "text": "36,000,000 characters", "gen": "not read", "raising": "RuntimeError: refuses to be printed",
    }[name]
    assert expected in text


@pytest.mark.asyncio
async def test_inspecting_the_generator_did_not_advance_it(ctx_in: Any, big_values: dict) -> None:
    await call(ctx_in(big_values), "InspectVariable", path="gen")
    assert next(big_values["gen"]) == 0


@pytest.mark.asyncio
async def test_a_sleeping_repr_is_abandoned_and_the_loop_never_stalls(ctx_in: Any, big_values: dict) -> None:
    gaps: list[float] = []

    async def heartbeat() -> None:
        last = time.perf_counter()
        while True:
            await asyncio.sleep(0.02)
            now = time.perf_counter()
            gaps.append(now - last)
            last = now

    beat = asyncio.ensure_future(heartbeat())
    start = time.perf_counter()
    outcome = await call(ctx_in(big_values), "InspectVariable", path="sleeping")
    elapsed = time.perf_counter() - start
    beat.cancel()
    assert f"did not finish within {DEFAULT_TIMEOUT:g} s" in text_of(outcome)
    assert elapsed < DEFAULT_TIMEOUT + 1.5
    assert max(gaps) < 0.5
