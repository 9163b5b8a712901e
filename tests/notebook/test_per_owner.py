"""State kept beside a shell or a session: one per owner, made on first use, gone with the owner."""

from __future__ import annotations

import gc

from jupyter_toolagent.notebook.per_owner import PerOwner


class Owner:
    pass


def test_one_item_per_owner_made_on_first_use() -> None:
    made: list[list[str]] = []

    def factory() -> list[str]:
        made.append([])
        return made[-1]

    state: PerOwner[list[str]] = PerOwner(factory)
    a, b = Owner(), Owner()
    assert state.get(a) is state.get(a) and state.get(a) is not state.get(b)
    assert len(made) == 2


def test_pop_forgets_and_the_next_get_makes_a_new_one() -> None:
    state: PerOwner[list[str]] = PerOwner(list)
    owner = Owner()
    first = state.get(owner)
    assert state.pop(owner) is first and state.pop(owner) is None
    assert state.get(owner) is not first


def test_the_item_goes_with_its_owner() -> None:
    state: PerOwner[list[str]] = PerOwner(list)
    owner = Owner()
    state.get(owner).append("x")
    del owner
    gc.collect()
    assert len(state._items) == 0
