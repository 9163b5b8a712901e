"""While RunPython collects display outputs, ipykernel still calls
``shell.display_pub.set_parent`` for every incoming shell message (a widget click, the Stop
button). The collecting publisher must accept it, or the click is lost."""

from __future__ import annotations

from IPython.core.interactiveshell import InteractiveShell

from jupyter_toolagent.notebook.python_runner import IPythonRunner


def test_collecting_publisher_accepts_set_parent_and_still_collects() -> None:
    shell = InteractiveShell.instance()
    runner = IPythonRunner(shell)
    with runner.displays() as blocks:
        shell.display_pub.set_parent({"header": {"msg_id": "click"}})  # as ipykernel does
        shell.display_pub.publish({"text/plain": "shown"})
    assert any("shown" in str(b) for b in blocks)
