"""State the notebook layer keeps beside an object it does not own (a shell, a session).

The sessions of a shell, its MCP servers, its undo records and the kernel watch of a session
are not attributes of IPython's or the core's objects: they are held in a weak mapping keyed
by the owner, created on first use, and gone when the owner is (a test shell or a dropped
session leaves nothing behind).
"""

from __future__ import annotations

import weakref
from typing import Any, Callable, Generic, TypeVar

__all__ = ["PerOwner"]

T = TypeVar("T")


class PerOwner(Generic[T]):
    """One ``T`` per owner, made by ``factory`` the first time the owner asks."""

    def __init__(self, factory: Callable[[], T]) -> None:
        self._factory = factory
        self._items: "weakref.WeakKeyDictionary[Any, T]" = weakref.WeakKeyDictionary()

    def get(self, owner: Any) -> T:
        item = self._items.get(owner)
        if item is None:
            item = self._items[owner] = self._factory()
        return item

    def pop(self, owner: Any) -> T | None:
        """Forget the owner's ``T`` (None when it had none yet)."""
        return self._items.pop(owner, None)
