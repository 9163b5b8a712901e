"""The machine and package versions a result was measured on (printed into RESULTS.md)."""

from __future__ import annotations

import os
import platform
import sys
from importlib import metadata

PACKAGES = (
    "jupyter_toolagent",
    "anthropic",
    "httpx2",
    "pydantic",
    "pydantic-core",
    "pydantic-ai-slim",
    "ipykernel",
    "ipywidgets",
    "jupyter_client",
    "numpy",
    "pandas",
)


def cpu_model() -> str:
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as fh:
            for line in fh:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def memory_gib() -> float | None:
    try:
        with open("/proc/meminfo", encoding="utf-8") as fh:
            for line in fh:
                if line.startswith("MemTotal:"):
                    return int(line.split()[1]) / 1024 / 1024
    except OSError:
        pass
    return None


def package_versions() -> dict[str, str]:
    found: dict[str, str] = {}
    for name in PACKAGES:
        try:
            found[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            found[name] = "not installed"
    return found


def describe() -> dict[str, str]:
    usable = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    mem = memory_gib()
    info = {
        "cores": f"{os.cpu_count()} ({usable} usable by this process)",
        "cpu": cpu_model(),
        "memory": f"{mem:.1f} GiB" if mem else "unknown",
        "os": f"{platform.system()} {platform.release()}",
        "python": f"{platform.python_implementation()} {platform.python_version()} ({sys.executable})",
    }
    for name, version in package_versions().items():
        info[name] = version
    return info
