"""RunPython in a real ipykernel with the inline backend: the plot comes back inside the tool
result, and no separate figure is drawn into the cell (the runner never calls run_cell)."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")
pytest.importorskip("matplotlib_inline")

pytestmark = pytest.mark.kernel

PROJECT = Path(__file__).resolve().parents[2]

RUN_CELL = '''
from jupyter_toolagent import Agent, PermissionDecision
from jupyter_toolagent.models import ScriptedModel, tool_use_block
from jupyter_toolagent.notebook.python_runner import IPythonRunner
from jupyter_toolagent.tools.options import BuiltinToolOptions

async def allow(call, ctx, *, hook_decision):
    return PermissionDecision.allow("test")

code = "import matplotlib.pyplot as plt\\nplt.plot([1, 4, 2])\\nshown = %who_ls\\nprint('plotted')"
model = ScriptedModel([[tool_use_block("RunPython", {"code": code}, id="toolu_plot")], "Done."])
shell = get_ipython()
agent = Agent(model, builtin_tools=True, namespace=shell.user_ns, can_use_tool=allow,
              plugin_options=[BuiltinToolOptions(python_runner=IPythonRunner(shell), hidden_names=shell.user_ns_hidden)])
count_before = shell.execution_count
record = await agent.run("plot it")
result = agent.messages[2]["content"][0]
print("SUMMARY", json.dumps({
    "finish": record.finish_reason,
    "types": [b["type"] for b in result["content"]],
    "text": result["content"][0].get("text"),
    "count_unchanged": shell.execution_count == count_before,
    "open_figures": plt.get_fignums(),
}))
'''


def test_a_plot_returns_in_the_result_and_not_in_the_cell(tmp_path: Path) -> None:
    spec_dir = tmp_path / "kernels" / "toolagent-tools-test"
    spec_dir.mkdir(parents=True)
    (spec_dir / "kernel.json").write_text(json.dumps({
        "argv": [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
        "display_name": "tools test", "language": "python",
    }))
    from jupyter_client import KernelManager
    from jupyter_client.kernelspec import KernelSpecManager

    ksm = KernelSpecManager()
    ksm.kernel_dirs = [str(tmp_path / "kernels")]
    ksm.ensure_native_kernel = False
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "MPLBACKEND", "JPY_"))}
    env["PYTHONPATH"] = str(PROJECT)
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(s) for s in (
        "%matplotlib inline\nimport json\nimport matplotlib.pyplot as plt", RUN_CELL)]
    km = KernelManager(kernel_name="toolagent-tools-test", kernel_spec_manager=ksm)
    client = nbclient.NotebookClient(nb, km=km, timeout=90, allow_errors=True, kernel_name="toolagent-tools-test",
                                     resources={"metadata": {"path": str(tmp_path)}})
    client.execute(env=env, cwd=str(tmp_path))
    outputs = nb.cells[1].outputs
    errors = [o for o in outputs if o.output_type == "error"]
    assert not errors, errors
    assert not [o for o in outputs if o.output_type in ("display_data", "execute_result")], outputs
    printed = "".join(o.text for o in outputs if o.output_type == "stream")
    summary = json.loads(printed.split("SUMMARY", 1)[1])
    assert summary == {
        "finish": "end_turn", "types": ["text", "image"], "text": "Names: bound shown\nplotted", "count_unchanged": True, "open_figures": [],
    }
