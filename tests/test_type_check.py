"""The mypy configuration in ``pyproject.toml`` catches the kinds of slips found in the package.

`scripts/test.sh` runs mypy on the package before pytest; these tests pin what that run is
strict enough to catch. Each planted slip must be reported with its error code at its line,
and its everyday counterpart (the fixed form) must pass — so a weakened flag fails here
instead of silently letting the slip back in. The runs use the project's configuration file
and the package as it is in this checkout (``MYPYPATH``), so `Tool`'s generic input model is
checked against the real base class.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CONFIG = ROOT / "pyproject.toml"
MARK = re.compile(r"#\s*expect:\s*([a-z-]+)")

# Each module holds slips (a line marked `# expect: CODE`) beside their fixed forms (unmarked
# lines, which must raise nothing). The module names matter: the core package gets stricter
# settings than the rest.
PLANTED = {
    # the slip of core/pairing/check.py: a value read from a dict (maybe None) used as a str
    "planted/optional_misuse.py": """
        from typing import Any

        def label(tool_use_id: str) -> str:
            return "id " + tool_use_id

        def slip(block: dict[str, Any]) -> str:
            return label(block.get("id"))  # expect: arg-type

        def fixed(block: dict[str, Any]) -> str:
            return label(str(block.get("id")))

        def default_slip(name: str = None) -> str:  # expect: assignment
            return name or ""

        def default_fixed(name: str | None = None) -> str:
            return name or ""
    """,
    # the slip of models/turns.py: a dict whose value type was inferred from its first literal
    "planted/inferred_dict.py": """
        from typing import Any

        def slip(stop_reason: str | None) -> dict[str, str]:
            message = {"type": "message"}
            message["stop_reason"] = stop_reason  # expect: assignment
            return message

        def fixed(stop_reason: str | None) -> dict[str, Any]:
            message: dict[str, Any] = {"type": "message"}
            message["stop_reason"] = stop_reason
            return message
    """,
    "planted/annotations.py": """
        def slip(x):  # expect: no-untyped-def
            return x

        def partial(x: int, y):  # expect: no-untyped-def
            return x

        def fixed(x: int) -> int:
            return x
    """,
    "planted/suppressions.py": """
        def number() -> int:
            return 1

        bare: str = number()  # type: ignore  # expect: ignore-without-code
        named: str = number()  # type: ignore[assignment]  # a deliberate, named suppression
        stale: int = number()  # type: ignore[assignment]  # expect: unused-ignore
    """,
    "planted/equality.py": """
        def slip(count: int) -> bool:
            return count == "3"  # expect: comparison-overlap

        def fixed(count: int) -> bool:
            return count == 3
    """,
    "planted/casts.py": """
        from typing import cast

        def slip(name: str) -> str:
            return cast(str, name)  # expect: redundant-cast

        def fixed(name: object) -> str:
            return cast(str, name)
    """,
    "planted/branches.py": """
        def slip(flag: bool) -> int:
            if flag:
                value = 1
            return value  # expect: possibly-undefined

        def fixed(flag: bool) -> int:
            value = 0
            if flag:
                value = 1
            return value
    """,
    # Tool is generic over its input model: a method taking another model is an error
    "planted/tools.py": """
        from typing import Any

        from pydantic import BaseModel

        from jupyter_toolagent.core.tool import Progress, Tool, ToolUseContext

        class ReadInput(BaseModel):
            file_path: str

        class OtherInput(BaseModel):
            pattern: str

        class Slip(Tool[ReadInput]):
            input_model = ReadInput

            async def call(self, input: OtherInput, ctx: ToolUseContext, progress: Progress) -> Any:  # expect: override
                return input.pattern

        class Fixed(Tool[ReadInput]):
            input_model = ReadInput

            async def call(self, input: ReadInput, ctx: ToolUseContext, progress: Progress) -> Any:
                return input.file_path

        def parsed(tool: Fixed) -> str:
            return tool.parse_input({"file_path": "a"}).file_path

        def parsed_slip(tool: Fixed) -> str:
            return tool.parse_input({"file_path": "a"}).pattern  # expect: attr-defined
    """,
}

# The core package: a precise return type may not be fed an `Any` (elsewhere it may).
PLANTED_CORE = {
    "jupyter_toolagent/core/planted_any.py": """
        import json

        def slip(text: str) -> dict[str, int]:
            return json.loads(text)  # expect: no-any-return

        def fixed(text: str) -> dict[str, int]:
            value: dict[str, int] = json.loads(text)
            return value
    """,
    "jupyter_toolagent/views/planted_any.py": """
        import json

        def allowed_outside_core(text: str) -> dict[str, int]:
            return json.loads(text)
    """,
}


def _write(root: Path, files: dict[str, str]) -> list[Path]:
    written = []
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        for parent in path.relative_to(root).parents:
            if parent != Path("."):
                (root / parent / "__init__.py").touch()
        path.write_text(textwrap.dedent(text).lstrip())
        written.append(path)
    return written


def _expected(paths: list[Path], root: Path) -> set[tuple[str, int, str]]:
    found = set()
    for path in paths:
        for number, line in enumerate(path.read_text().splitlines(), start=1):
            match = MARK.search(line)
            if match:
                found.add((path.relative_to(root).as_posix(), number, match.group(1)))
    return found


def _mypy(root: Path, paths: list[Path], *, mypypath: Path | None) -> tuple[set[tuple[str, int, str]], str]:
    env = {k: v for k, v in os.environ.items() if k != "MYPYPATH"}
    if mypypath is not None:
        env["MYPYPATH"] = str(mypypath)
    proc = subprocess.run(
        [sys.executable, "-m", "mypy", "--config-file", str(CONFIG), "--cache-dir", str(root / ".mypy_cache"),
         "--no-error-summary", "--show-absolute-path", "--follow-imports=silent", *map(str, paths)],
        cwd=root, env=env, capture_output=True, text=True, timeout=240,
    )
    reported = set()
    for line in proc.stdout.splitlines():
        match = re.match(r"(.+?):(\d+): error: .*\[([a-z-]+)\]$", line)
        if match:
            path = Path(match.group(1))
            name = path.relative_to(root).as_posix() if path.is_relative_to(root) else path.as_posix()
            reported.add((name, int(match.group(2)), match.group(3)))
    return reported, proc.stdout + proc.stderr


def test_the_configuration_reports_each_planted_slip_and_passes_its_fixed_form(tmp_path: Path) -> None:
    paths = _write(tmp_path, PLANTED)
    expected = _expected(paths, tmp_path)
    assert len(expected) == 12  # the marks themselves are counted, so a lost case is noticed
    reported, output = _mypy(tmp_path, paths, mypypath=ROOT)
    assert reported == expected, output


def test_core_modules_may_not_return_any_where_other_layers_may(tmp_path: Path) -> None:
    paths = _write(tmp_path, PLANTED_CORE)
    expected = _expected(paths, tmp_path)
    assert expected == {("jupyter_toolagent/core/planted_any.py", 4, "no-any-return")}
    reported, output = _mypy(tmp_path, paths, mypypath=None)
    assert reported == expected, output
