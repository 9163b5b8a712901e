"""Driving one notebook in JupyterLab through Playwright: open, run, click, read outputs.

Cells are located by index among ``.jp-Notebook .jp-Cell``; the agent's widgets by the CSS
classes the display gives them (``jp-toolagent-*``) and by their button labels.
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass
from typing import Any

PAGE_READY_TIMEOUT_MS = 60_000
DONE_PROMPT = re.compile(r"\[\d+\]")


@dataclass
class Click:
    """When a widget button was clicked, in the browser's epoch clock (seconds)."""

    at: float


class LabNotebook:
    def __init__(self, page: Any, url: str) -> None:
        self.page = page
        self.url = url
        self.ready_seconds: float | None = None

    # --- opening and running -----------------------------------------------------------------
    def open(self) -> "LabNotebook":
        started = time.monotonic()
        self.page.goto(self.url)
        self.page.wait_for_selector(".jp-Notebook .jp-Cell", timeout=PAGE_READY_TIMEOUT_MS)
        self.page.wait_for_selector('.jp-Notebook-ExecutionIndicator[data-status="idle"]', timeout=PAGE_READY_TIMEOUT_MS)
        # remember the real time of every click (capture phase: before any widget handler)
        self.page.evaluate(
            "() => { window.__clicks = []; document.addEventListener('click', "
            "e => window.__clicks.push({t: performance.timeOrigin + performance.now(), text: (e.target.innerText || '')}), true); }"
        )
        self.ready_seconds = time.monotonic() - started
        return self

    def cells(self) -> Any:
        return self.page.locator(".jp-Notebook .jp-Cell")

    def cell(self, index: int) -> Any:
        return self.cells().nth(index)

    def prompt(self, index: int) -> str:
        return self.cell(index).locator(".jp-InputPrompt").inner_text().strip()

    def _menu(self, menu: str, command: str, timeout: float = 20.0) -> None:
        """Open a main menu and run the item bound to a JupyterLab command id.

        Items stay disabled until the notebook's kernel session is ready: a click on a disabled
        item does nothing, so wait (closing and reopening the menu) until it is enabled."""
        deadline = time.monotonic() + timeout
        while True:
            self.page.locator(".lm-MenuBar-itemLabel", has_text=re.compile(rf"^{menu}$")).click()
            item = self.page.locator(f'.lm-Menu-item[data-command="{command}"]').first
            item.wait_for(state="visible")
            if "lm-mod-disabled" not in (item.get_attribute("class") or ""):
                item.click()
                return
            self.page.keyboard.press("Escape")
            if time.monotonic() > deadline:
                raise AssertionError(f"menu item {command} stayed disabled for {timeout:.0f} s")
            time.sleep(0.25)

    def _any_cell_started(self, timeout_ms: int) -> bool:
        try:
            self.page.wait_for_function(
                "() => [...document.querySelectorAll('.jp-Notebook .jp-InputPrompt')]"
                ".some(p => /\\[(\\*|\\d+)\\]/.test(p.innerText))",
                timeout=timeout_ms,
            )
            return True
        except Exception:  # noqa: BLE001 - playwright's TimeoutError
            return False

    def _focus_notebook(self) -> None:
        """Make the notebook JupyterLab's current widget: menu commands act on that one."""
        self.cell(0).locator(".jp-InputPrompt").click()
        self.page.wait_for_function(
            "() => document.activeElement && document.activeElement.closest('.jp-NotebookPanel')", timeout=10_000
        )

    def run_all(self) -> None:
        """Menu Run → Run All Cells; retried once if no cell was queued (a lost menu click)."""
        self._focus_notebook()
        self._menu("Run", "runmenu:run-all")
        if not self._any_cell_started(10_000):
            prompts = [self.prompt(i) for i in range(self.cells().count())]
            print(f"Run All Cells: no cell started (prompts {prompts}); retrying once")
            self._focus_notebook()
            self._menu("Run", "runmenu:run-all")
            assert self._any_cell_started(10_000), "Run All Cells did not start the notebook"

    def run_cell(self, index: int) -> None:
        """Select a cell (command mode) and run it with Shift+Enter."""
        self.cell(index).locator(".jp-InputPrompt").click()
        self.page.keyboard.press("Shift+Enter")

    def interrupt_kernel(self) -> None:
        self._menu("Kernel", "kernelmenu:interrupt")

    def wait_cell_done(self, index: int, timeout: float = 60.0) -> float:
        """Wait until the cell shows an execution count; return the seconds waited."""
        started = time.monotonic()
        self.page.wait_for_function(
            "(i) => { const c = document.querySelectorAll('.jp-Notebook .jp-Cell')[i];"
            " return c && /\\[\\d+\\]/.test(c.querySelector('.jp-InputPrompt').innerText); }",
            arg=index,
            timeout=timeout * 1000,
        )
        return time.monotonic() - started

    def wait_all_done(self, timeout: float = 60.0) -> None:
        for index in range(self.cells().count()):
            self.wait_cell_done(index, timeout)

    def execution_count(self, index: int) -> int:
        match = DONE_PROMPT.search(self.prompt(index))
        assert match, f"cell {index} has not run: {self.prompt(index)!r}"
        return int(match.group(0)[1:-1])

    def output_text(self, index: int) -> str:
        outputs = self.cell(index).locator(".jp-OutputArea")
        return outputs.inner_text() if outputs.count() else ""

    def error_text(self, index: int) -> str | None:
        errors = self.cell(index).locator('.jp-OutputArea-output[data-mime-type="application/vnd.jupyter.stderr"]')
        return errors.first.inner_text() if errors.count() else None

    # --- the agent's widgets -----------------------------------------------------------------
    def button(self, index: int, label: str) -> Any:
        return self.cell(index).locator("button.jupyter-button", has_text=re.compile(rf"^\s*{re.escape(label)}\s*$"))

    def _wait_in_cell(self, index: int, locator: Any, what: str, timeout: float) -> Any:
        """Wait for ``locator`` in a cell; fail at once, with the traceback, if the cell errors."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if locator.is_visible():
                return locator
            error = self.error_text(index)
            if error is not None:
                raise AssertionError(f"cell {index} failed instead of showing {what}:\n{error}")
            time.sleep(0.05)
        raise AssertionError(f"no {what} in cell {index} after {timeout:.0f} s:\n{self.output_text(index)}")

    def wait_button(self, index: int, label: str, timeout: float = 60.0) -> Any:
        return self._wait_in_cell(index, self.button(index, label).first, f"{label!r} button", timeout)

    def click(self, locator: Any) -> Click:
        locator.click()
        clicks = self.page.evaluate("() => window.__clicks")
        return Click(at=clicks[-1]["t"] / 1000.0)

    def card(self, index: int) -> Any:
        return self.cell(index).locator(".jp-toolagent-card")

    def card_status(self, card: Any) -> str:
        return card.locator(".jp-toolagent-badge").first.get_attribute("data-status") or ""

    def wait_card_status(self, index: int, status: str, timeout: float = 30.0) -> None:
        badge = self.cell(index).locator(f'.jp-toolagent-badge[data-status="{status}"]').first
        self._wait_in_cell(index, badge, f"a card that is {status!r}", timeout)

    def decided_at(self, index: int, timeout: float = 30.0) -> float:
        """Epoch seconds at which the kernel-side approver returned (from the card's DOM)."""
        decision = self.cell(index).locator(".jp-toolagent-decision[data-decided-by='user']").first
        decision.wait_for(timeout=timeout * 1000)
        return float(decision.get_attribute("data-decided-at"))

    def buttons_all_disabled(self, index: int) -> bool:
        """The approval buttons of cell ``index`` are drawn and none can be clicked any more."""
        buttons = [b for b in self.cell(index).locator("button.jupyter-button").all() if b.is_visible()]
        return bool(buttons) and all(b.is_disabled() for b in buttons)


def open_notebook(page: Any, lab: Any, name: str, cells: list[str]) -> LabNotebook:
    """Write a notebook of ``cells`` into the running JupyterLab and open it in ``page``."""
    lab.write_notebook(name, cells)
    notebook = LabNotebook(page, lab.notebook_url(name)).open()
    print(f"\npage ready in {notebook.ready_seconds:.1f} s")
    return notebook


class Notebook7Page(LabNotebook):
    """The same page object for Notebook 7, which uses JupyterLab's notebook widgets (same cells,
    prompts, outputs and menus) on a one-document page; the kernel's readiness is read from the
    server's sessions API rather than from a toolbar indicator Notebook 7 may not show."""

    def __init__(self, page: Any, url: str, api: str, token: str) -> None:
        super().__init__(page, url)
        self.api, self.token = api, token

    def open(self) -> "LabNotebook":
        import json
        import urllib.request

        started = time.monotonic()
        self.page.goto(self.url)
        self.page.wait_for_selector(".jp-Notebook .jp-Cell", timeout=PAGE_READY_TIMEOUT_MS)
        deadline = time.monotonic() + PAGE_READY_TIMEOUT_MS / 1000
        while True:
            with urllib.request.urlopen(f"{self.api}/api/sessions?token={self.token}", timeout=5) as response:
                sessions = json.load(response)
            if any((s.get("kernel") or {}).get("execution_state") == "idle" for s in sessions):
                break
            if time.monotonic() > deadline:
                raise AssertionError(f"Notebook 7: no idle kernel after {PAGE_READY_TIMEOUT_MS / 1000:.0f} s: {sessions}")
            time.sleep(0.25)
        self.page.evaluate(
            "() => { window.__clicks = []; document.addEventListener('click', "
            "e => window.__clicks.push({t: performance.timeOrigin + performance.now(), text: (e.target.innerText || '')}), true); }"
        )
        self.ready_seconds = time.monotonic() - started
        return self


def open_in_notebook7(page: Any, server: Any, name: str, cells: list[str]) -> LabNotebook:
    """Write a notebook into the running Notebook 7 server and open it in ``page``."""
    server.write_notebook(name, cells)
    notebook = Notebook7Page(page, server.notebook7_url(name), server.url, server.token).open()
    print(f"\nNotebook 7 page ready in {notebook.ready_seconds:.1f} s")
    return notebook


def cell_source(notebook: LabNotebook, index: int) -> str:
    """The code of a cell as its editor shows it (CodeMirror 6 lines)."""
    return notebook.cell(index).locator(".jp-InputArea-editor .cm-content").inner_text()
