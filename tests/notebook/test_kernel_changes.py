"""The kernel-change note from namespace snapshots (the kernel path is in tests/kernel)."""

from __future__ import annotations

import types

import numpy as np
import pandas as pd

from jupyter_toolagent.notebook.kernel_changes import MAX_NAMES, KernelWatch, mark_kernel_restarted, watch_for


class Failed:
    number, line = 7, "NameError: name 'sale' is not defined"


def test_nothing_changed_means_no_note() -> None:
    ns = {"df": pd.DataFrame({"a": [1, 2]}), "n": 3}
    watch = KernelWatch()
    assert watch.note(ns, None) is None  # never looked: nothing to compare
    watch.looked(ns, None)
    assert watch.note(ns, None) is None


def test_added_rebound_reshaped_removed_with_types_and_shapes() -> None:
    ns = {"df": pd.DataFrame({"a": range(5)}), "arr": np.zeros((2, 3)), "xs": [1], "gone": "secret text"}
    watch = KernelWatch()
    watch.looked(ns, None)
    ns["df"] = ns["df"].head(2)
    ns["xs"].append(2)
    del ns["gone"]
    ns["new"] = {"k": 1}
    ns["np"] = np  # a module: hidden, as in ListVariables
    ns["_private"] = 1
    note = watch.note(ns, None, previous_error=Failed())
    assert note is not None
    assert "Added: new (dict len 1)" in note
    assert "Rebound: df (pandas DataFrame 5×1 → pandas DataFrame 2×1)" in note
    assert "Changed in place: xs (list len 1 → list len 2)" in note
    assert "Removed: gone (str len 11)" in note and "secret" not in note
    assert "np (" not in note and "_private" not in note and "arr" not in note
    assert "The cell before this one (In[7]) raised NameError: name 'sale' is not defined" in note


def test_many_names_are_capped_and_counted_and_the_note_stays_small() -> None:
    ns: dict[str, object] = {}
    watch = KernelWatch()
    watch.looked(ns, None)
    ns.update({f"variable_with_a_long_name_{i}": types.SimpleNamespace() for i in range(500)})
    note = watch.note(ns, None)
    assert note is not None and f"and {500 - MAX_NAMES} more" in note
    assert len(note.encode()) < 1024


def test_a_restart_is_reported_once() -> None:
    from jupyter_toolagent.core.session import Session

    session = Session("resumed")
    watch = watch_for(session)
    watch.looked({"a": 1}, None)
    mark_kernel_restarted(session)
    note = watch.note({}, None)
    assert note is not None and "kernel was restarted" in note and "Removed" not in note
    watch.looked({}, None)
    assert watch.note({}, None) is None
