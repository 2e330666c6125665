"""A tiny timer (best of several repeats, in microseconds per call) and an instruction
counter (one benchmark module's run under valgrind's callgrind)."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import timeit
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def per_call_us(function: Callable[[], object], *, budget_s: float = 0.4, repeat: int = 5) -> float:
    """Best-of-`repeat` time per call, each repeat running about `budget_s` seconds."""
    timer = timeit.Timer(function)
    number, _ = timer.autorange()
    number = max(1, int(number * budget_s / 0.2))
    return min(timer.repeat(repeat=repeat, number=number)) / number * 1e6


def callgrind_total(module: str, src: str, *arguments: str) -> int:
    """Instructions of one run of `python -m module --src src *arguments` under callgrind,
    with Parley imported from `src` and a fixed hash seed (the count repeats exactly)."""
    with tempfile.TemporaryDirectory() as folder:
        out = Path(folder) / "callgrind.out"
        command = [
            "valgrind", "--tool=callgrind", f"--callgrind-out-file={out}",
            sys.executable, "-m", module, "--src", src, *arguments,
        ]  # fmt: skip
        env = {**os.environ, "PYTHONPATH": f"{src}{os.pathsep}{ROOT}", "PYTHONHASHSEED": "0"}
        subprocess.run(command, check=True, capture_output=True, env=env, cwd=ROOT)
        for line in out.read_text().splitlines():
            if line.startswith(("summary:", "totals:")):
                return int(line.split()[1])
    raise RuntimeError("no totals in callgrind's output")
