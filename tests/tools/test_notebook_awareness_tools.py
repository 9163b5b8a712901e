"""NotebookCells rendering, RunPython's name changes and their undo record (no kernel needed)."""

from __future__ import annotations

import gc
import weakref
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from jupyter_toolagent.tools.namespace_changes import NOT_UNDONE, NameChanges, UndoRecord, UndoStore
from jupyter_toolagent.tools.notebook_cells import (
    DEFAULT_COUNT,
    MAX_CHARS,
    CellRecord,
    NotebookCellsInput,
    render_cells,
    select_cells,
)


class Big:
    """An object that can be weakly referenced (to see when the undo record lets it go)."""


def cells(n: int, failing: int | None = None) -> list[CellRecord]:
    return [CellRecord(i, f"x{i} = {i}", error="KeyError: 'revnue'" if i == failing else None,
                       traceback=f"Traceback (most recent call last):\n  cell {i}\nKeyError: 'revnue'" if i == failing
                       else None) for i in range(1, n + 1)]


def test_no_parameters_shows_the_most_recent_cells_and_the_last_traceback() -> None:
    text = render_cells(cells(30, failing=12), NotebookCellsInput())
    assert f"showing {DEFAULT_COUNT} (the most recent)" in text
    assert "In [30]:" in text and "In [21]:" in text and "In [20]:" not in text
    assert "Last exception (In[12]):\nTraceback" in text  # even when that cell is not listed


def test_a_range_and_a_search_select_cells() -> None:
    records = cells(30, failing=12)
    assert [c.number for c in select_cells(records, NotebookCellsInput(start=5, end=7))] == [5, 6, 7]
    assert [c.number for c in select_cells(records, NotebookCellsInput(search="REVNUE"))] == [12]
    assert "No executed cell matches" in render_cells(records, NotebookCellsInput(start=40))
    with pytest.raises(ValueError):
        NotebookCellsInput(start=9, end=3)


@settings(max_examples=40, deadline=None)
@given(st.lists(st.text(min_size=0, max_size=5000), min_size=1, max_size=60))
def test_the_output_is_bounded_whatever_the_sources(sources: list[str]) -> None:
    records = [CellRecord(i, s, error="E: x" if i % 7 == 0 else None, traceback=s * 3 if i % 7 == 0 else None)
               for i, s in enumerate(sources, 1)]
    for query in (NotebookCellsInput(), NotebookCellsInput(start=1), NotebookCellsInput(search="a")):
        assert len(render_cells(records, query)) <= MAX_CHARS


@given(st.dictionaries(st.sampled_from("abcdefg_"), st.integers(), max_size=7),
       st.dictionaries(st.sampled_from("abcdefg_"), st.integers(), max_size=7))
def test_name_changes_and_undo_restore_the_namespace(before_values: dict[str, int], after_values: dict[str, int]) -> None:
    objects = {name: Big() for name in before_values}
    before = dict(objects)
    after = {name: (objects[name] if name in objects and value % 2 else Big()) for name, value in after_values.items()}
    changes = NameChanges.between(before, after)
    visible = [n for n in set(before) | set(after) if not n.startswith("_")]
    assert set(changes.bound) == {n for n in visible if n not in before}
    assert set(changes.deleted) == {n for n in visible if n not in after}
    assert set(changes.rebound) == {n for n in visible if n in before and n in after and before[n] is not after[n]}
    namespace = dict(after)
    UndoRecord.capture(before, after, changes).apply(namespace)
    assert {k: v for k, v in namespace.items() if not k.startswith("_")} == \
        {k: v for k, v in before.items() if not k.startswith("_")}


def test_a_name_changed_again_after_the_call_is_left_alone() -> None:
    old, new, mine = Big(), Big(), Big()
    before, after = {"df": old}, {"df": new, "w": 1}
    record = UndoRecord.capture(before, after, NameChanges.between(before, after))
    namespace = {"df": mine, "w": 2}
    text = record.apply(namespace)
    assert namespace == {"df": mine, "w": 2} and "left df, w alone" in text and NOT_UNDONE in text


def test_the_store_holds_old_objects_until_the_next_call_and_undoes_once() -> None:
    store = UndoStore()
    old = Big()
    ref = weakref.ref(old)
    namespace: dict[str, Any] = {"df": old}
    before = dict(namespace)
    namespace["df"] = Big()
    store.remember(UndoRecord.capture(before, namespace, NameChanges.between(before, namespace)))
    del before, old
    gc.collect()
    assert ref() is not None  # held by reference for the undo
    before = dict(namespace)
    namespace["x"] = 1
    store.remember(UndoRecord.capture(before, namespace, NameChanges.between(before, namespace)))  # the next call
    del before
    gc.collect()
    assert ref() is None  # released
    assert store.undo(namespace) is not None and "x" not in namespace
    assert store.undo(namespace) is None
