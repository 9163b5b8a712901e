"""Suite-wide rules.

* No test can reach the real API with a real key: credentials are removed from the
  environment before anything runs (tests talk to `FakeAnthropicServer` on 127.0.0.1).
* Real-browser tests run last: Playwright's sync API keeps an event loop running on the main
  thread for the session-scoped browser, and asyncio tests collected after it could not start
  their own loop.
"""

from __future__ import annotations

import os

import pytest

for _name in ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN"):
    os.environ.pop(_name, None)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    items.sort(key=lambda item: item.get_closest_marker("browser") is not None)
