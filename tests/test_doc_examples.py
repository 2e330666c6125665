"""The Python examples of the README and the docs type-check under `mypy --strict` as a
user's own code would (`from parley import ...`, no access to the project's config).

Each ```python block is a module of its own. A block with a top-level `await` (as in an
async REPL) is checked as the body of an `async def`. What a block takes from the text
around it goes in an HTML comment just before it, invisible on the rendered page:

    <!-- mypy-prelude
    from parley import Client
    client: Client
    -->

and a block that is only a fragment is marked `<!-- mypy: skip -->` (keep it rare).
"""

from __future__ import annotations

import ast
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).parents[1]
CHECKED = [
    "README.md",
    "docs/a2a-1.1-draft.md",
    "docs/adapters.md",
    "docs/agents.md",
    "docs/check.md",
    "docs/client.md",
    "docs/deploy.md",
    "docs/embedding.md",
    "docs/exec.md",
    "docs/grpc.md",
    "docs/mcp.md",
    "docs/migrating.md",
    "docs/observability.md",
    "docs/proxy.md",
    "docs/push-ssrf.md",
    "docs/push.md",
    "docs/security-jwt.md",
    "docs/security-mtls.md",
    "docs/security.md",
]
"""The pages whose examples are held to it: every page with Python examples."""

BLOCK = re.compile(
    r"(?:<!-- mypy-prelude\n(?P<prelude>.*?)-->\n|<!-- mypy: (?P<skip>skip) -->\n)?"
    r"^```python\n(?P<code>.*?)^```",
    re.S | re.M,
)


def _awaits_at_top(code: str) -> bool:
    compiled = compile(code, "<doc>", "exec", flags=ast.PyCF_ALLOW_TOP_LEVEL_AWAIT)
    return bool(compiled.co_flags & 0x80)  # CO_COROUTINE: a top-level await


def examples(page: str) -> list[tuple[str, str]]:
    """(name, module source) of each checked block of `page`."""
    found = []
    text = (ROOT / page).read_text()
    for number, match in enumerate(BLOCK.finditer(text)):
        if match["skip"]:
            continue
        prelude, code = match["prelude"] or "", match["code"]
        if _awaits_at_top(code):
            code = "async def example() -> None:\n" + textwrap.indent(code, "    ")
        name = re.sub(r"\W", "_", Path(page).stem) + f"_{number}"
        found.append((name, prelude + code))
    return found


def test_the_examples_type_check_as_user_code(tmp_path: Path) -> None:
    for page in CHECKED:
        for name, source in examples(page):
            (tmp_path / f"{name}.py").write_text(source)
    assert list(tmp_path.iterdir()), "no examples found"
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "mypy",
            "--strict",
            "--no-error-summary",
            "--cache-dir",
            str(tmp_path / ".mypy_cache"),
            *sorted(str(path.name) for path in tmp_path.glob("*.py")),
        ],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr


@pytest.mark.parametrize("page", CHECKED)
def test_every_checked_page_has_examples_or_says_why(page: str) -> None:
    assert examples(page) or "mypy: skip" in (ROOT / page).read_text()
