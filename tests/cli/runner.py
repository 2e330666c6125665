"""Running the real `parley` command in a subprocess (`python -m parley.cli`), alone or
several side by side, and what each run left."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).parents[2]
PARLEY = [sys.executable, "-m", "parley.cli"]


@dataclass(frozen=True)
class Run:
    """What one `parley` run left: its exit status and output."""

    code: int
    out: str
    err: str

    @property
    def lines(self) -> list[str]:
        return self.out.splitlines()

    def json(self) -> Any:
        return json.loads(self.out)

    def json_lines(self) -> list[Any]:
        return [json.loads(line) for line in self.lines]


def _environment(extra: dict[str, str] | None = None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("PARLEY_API_KEY", "PARLEY_TOKEN")}
    return env | (extra or {})


def start(*arguments: str, env: dict[str, str] | None = None, **popen: Any) -> Any:
    """Start `parley ARGUMENTS` with its output piped (a `subprocess.Popen`)."""
    options: dict[str, Any] = {"stdout": subprocess.PIPE, "stderr": subprocess.PIPE}
    options |= popen
    return subprocess.Popen(
        [*PARLEY, *arguments], cwd=ROOT, env=_environment(env), encoding="utf-8", **options
    )


def run_all(*commands: list[str], env: dict[str, str] | None = None) -> list[Run]:
    """Run the commands side by side; their results in order."""
    processes = [start(*command, env=env) for command in commands]
    results = []
    for process in processes:
        out, err = process.communicate(timeout=60)
        results.append(Run(process.returncode, out, err))
    return results


def parley(*arguments: str, env: dict[str, str] | None = None) -> Run:
    return run_all(list(arguments), env=env)[0]


def ok(run: Run) -> Run:
    assert (run.code, run.err) == (0, ""), run
    return run
