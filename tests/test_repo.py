"""Repository contracts: CI runs exactly the test command README.md gives a newcomer."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _readme_commands() -> list[str]:
    blocks = re.findall(r"```bash\n(.*?)```", (ROOT / "README.md").read_text(), flags=re.DOTALL)
    return [line.strip() for block in blocks for line in block.splitlines() if line.strip()]


def test_ci_runs_the_readme_test_command() -> None:
    commands = _readme_commands()
    test_cmd = next(c for c in commands if c.endswith("-m pytest"))
    ci_lines = [line.strip() for line in (ROOT / ".ci" / "run").read_text().splitlines()]
    assert test_cmd in ci_lines


def test_readme_demo_command_runs_the_demo() -> None:
    assert any(c.endswith("attune demo") and "pip install" in c for c in _readme_commands())
