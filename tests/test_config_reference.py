"""docs/configuration.md documents every setting: a new flag, field or env var without an entry fails here."""

from __future__ import annotations

import argparse
import dataclasses
import re
from collections.abc import Iterator
from pathlib import Path

from pydantic import BaseModel

from attune.cli import build_parser
from schemas import Limits
from scorers.judges._config import JudgeConfig
from streams import StreamSettings, Timeouts

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "configuration.md"
SOURCES = ("attune", "schemas", "scorers", "streams", "bench")
#: How code reads environment variables (``os.environ.get("X"``, ``getenv("X"``) and names key variables.
ENV_PATTERNS = (
    re.compile(r"""(?:environ\.get|getenv|environ\[)\(?\s*["']([A-Z][A-Z0-9_]+)["']"""),
    re.compile(r"""(?:key_env|api_key_env)\s*(?::[^=]*)?=\s*["']([A-Z][A-Z0-9_]+)["']"""),
    re.compile(r"""_key_env\s*=\s*api_key_env\s+or\s+["']([A-Z][A-Z0-9_]+)["']"""),
)


def subcommands(parser: argparse.ArgumentParser, prefix: tuple[str, ...] = ()) -> Iterator[tuple[str, ...]]:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield (*prefix, name)
                yield from subcommands(sub, (*prefix, name))


def parser_of(path: tuple[str, ...]) -> argparse.ArgumentParser:
    p = build_parser()
    for name in path:
        p = next(a for a in p._actions if isinstance(a, argparse._SubParsersAction)).choices[name]
    return p


def sections() -> dict[str, str]:
    """``### `attune worker` `` heading → its text (up to the next heading of level 2 or 3)."""
    text = DOC.read_text(encoding="utf-8")
    out: dict[str, str] = {}
    for m in re.finditer(r"^### `attune ([a-z -]+)`\s*$(.*?)(?=^##)", text + "\n##", re.M | re.S):
        out[m.group(1).strip()] = m.group(2)
    return out


def model_fields(model: type[BaseModel], seen: set[type] | None = None) -> Iterator[str]:
    """Field names of a pydantic model and of the models nested in it."""
    seen = seen if seen is not None else set()
    if model in seen:
        return
    seen.add(model)
    for name, info in model.model_fields.items():
        yield name
        for arg in (info.annotation, *getattr(info.annotation, "__args__", ())):
            if isinstance(arg, type) and issubclass(arg, BaseModel):
                yield from model_fields(arg, seen)


def test_every_option_of_every_subcommand_is_documented_in_its_section() -> None:
    docs = sections()
    missing: list[str] = []
    for path in subcommands(build_parser()):
        p = parser_of(path)
        has_sub = any(isinstance(a, argparse._SubParsersAction) for a in p._actions)
        name = " ".join(path)
        options = [a for a in p._actions if not isinstance(a, argparse._HelpAction | argparse._SubParsersAction)]
        if has_sub and not options:
            continue  # a group like `attune annotate` only holds subcommands
        if name not in docs:
            missing.append(f"section `attune {name}`")
            continue
        for action in options:
            names = [s for s in action.option_strings if s.startswith("--")] or [action.dest]
            for flag in names:
                if f"`{flag}`" not in docs[name] and f"`{flag} " not in docs[name]:
                    missing.append(f"attune {name} {flag}")
    assert not missing, "undocumented in docs/configuration.md: " + ", ".join(missing)


def test_every_settings_field_is_documented() -> None:
    text = DOC.read_text(encoding="utf-8")
    fields = {
        "StreamSettings": [f.name for f in dataclasses.fields(StreamSettings)],
        "Timeouts": [f.name for f in dataclasses.fields(Timeouts)],
        "Limits": [f.name for f in dataclasses.fields(Limits)],
        "JudgeConfig": list(model_fields(JudgeConfig)),
    }
    missing = [f"{owner}.{name}" for owner, names in fields.items() for name in names if f"`{name}`" not in text]
    assert not missing, "undocumented in docs/configuration.md: " + ", ".join(missing)


def test_every_environment_variable_read_by_the_code_is_documented() -> None:
    text = DOC.read_text(encoding="utf-8")
    found: set[str] = set()
    for top in SOURCES:
        for path in (ROOT / top).rglob("*.py"):
            src = path.read_text(encoding="utf-8")
            for pattern in ENV_PATTERNS:
                found.update(pattern.findall(src))
    assert {"ATTUNE_BROKER", "OPENAI_API_KEY", "ANTHROPIC_API_KEY"} <= found  # the scan itself works
    missing = sorted(v for v in found if f"`{v}`" not in text)
    assert not missing, "undocumented in docs/configuration.md: " + ", ".join(missing)


def test_version_flag_is_the_package_version(capsys) -> None:
    import tomllib

    import pytest

    with pytest.raises(SystemExit) as exc:
        build_parser().parse_args(["--version"])
    assert exc.value.code == 0
    version = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]
    assert capsys.readouterr().out.strip() == f"attune {version}"


def test_help_shows_every_set_default() -> None:
    """``attune COMMAND --help`` names each option's default, as docs/configuration.md does."""
    parser = build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    missing = []
    for name, command in sub.choices.items():
        text = " ".join(command.format_help().split())
        for action in command._actions:
            unset = action.default in (None, False, [], argparse.SUPPRESS)
            if action.option_strings and not unset and str(action.default) not in text:
                missing.append(f"{name} {action.option_strings[0]} (default {action.default})")
    assert not missing, missing
