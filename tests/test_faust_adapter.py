"""The Faust adapter (streams/_faust): the one place that knows Faust's and aiokafka's internals.

The canary: every private name the adapter touches still exists in the installed versions, and the list of
them is complete (read off the adapter's source). Outside the adapter nothing imports Faust.
"""

from __future__ import annotations

import ast
import importlib
import inspect
import logging
from pathlib import Path

import pytest

from streams._faust import _versions
from streams._faust._versions import INTERNALS, VERIFIED, UnverifiedVersionError, check_versions

ROOT = Path(__file__).resolve().parent.parent
ADAPTER = ROOT / "streams" / "_faust"


def _resolve(owner: str) -> type:
    module, _, name = owner.partition(":")
    return getattr(importlib.import_module(module), name)


def _assigned_in_init(klass: type, attr: str) -> bool:
    """``attr`` is set on instances by ``__init__``/``__post_init__`` of ``klass`` or a base, or annotated there."""
    for base in klass.__mro__:
        if attr in getattr(base, "__annotations__", {}):
            return True
        for method in ("__init__", "__post_init__"):  # mode's Service calls __post_init__ from __init__
            init = base.__dict__.get(method)
            if init is None:
                continue
            src = inspect.getsource(init)
            if f"self.{attr} =" in src or f"self.{attr}:" in src:
                return True
    return False


@pytest.mark.parametrize("internal", INTERNALS, ids=lambda i: f"{i.owner}.{i.attr}")
def test_every_internal_still_exists(internal: _versions.Internal) -> None:
    klass = _resolve(internal.owner)
    if internal.kind == "class":
        assert hasattr(klass, internal.attr), f"{internal.owner} has no {internal.attr} (used by {internal.used_by})"
    else:
        assert _assigned_in_init(klass, internal.attr), (
            f"{internal.owner} no longer sets self.{internal.attr} (used by {internal.used_by})"
        )


def _private_reads(path: Path) -> set[str]:
    """Private attributes read on objects other than the module's own ``self``/``cls``."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if not isinstance(node, ast.Attribute):
            continue
        name = node.attr
        if not name.startswith("_") or name.startswith("__"):
            continue
        if isinstance(node.value, ast.Name) and node.value.id in {"self", "cls"}:
            continue
        if isinstance(node.value, ast.Name) and (node.value.id, name) == ("os", "_exit"):
            continue  # documented stdlib API (exit without cleanup: streams._faust.fatal), not an internal
        found.add(name)
    return found


def test_internals_list_is_complete_and_current() -> None:
    """Every private attribute the adapter reads on a library object is declared, and every declared one is
    still used (so the canary checks exactly what the code relies on)."""
    declared = {i.attr for i in INTERNALS}
    sources = sorted(ADAPTER.glob("*.py"))
    read = set().union(*(_private_reads(p) for p in sources))
    own = {"_APPLIED", "_OrjsonCodec"}  # the adapter's own module-level names
    assert read - own <= declared, f"undeclared internals: {sorted(read - own - declared)}"
    text = "\n".join(p.read_text() for p in sources if p.name != "_versions.py")
    unused = sorted(a for a in declared if a not in text)
    assert not unused, f"declared but no longer used: {unused}"


def test_nothing_outside_the_adapter_imports_faust() -> None:
    offenders = []
    for top in ("streams", "scorers", "schemas", "attune", "examples"):
        for path in (ROOT / top).rglob("*.py"):
            if ADAPTER in path.parents:
                continue
            for node in ast.walk(ast.parse(path.read_text())):
                names = []
                if isinstance(node, ast.Import):
                    names = [a.name for a in node.names]
                elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                    names = [node.module]
                if any(n == "faust" or n.startswith("faust.") for n in names):
                    offenders.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    assert not offenders, offenders


def test_installed_versions_are_the_verified_ones() -> None:
    assert _versions.installed() == VERIFIED
    check_versions()


def test_unverified_versions_refused_with_what_to_do(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(VERIFIED, "faust-streaming", "0.99.0")
    monkeypatch.delenv(_versions.ALLOW_ENV, raising=False)
    with pytest.raises(UnverifiedVersionError) as err:
        check_versions()
    msg = str(err.value)
    assert "faust-streaming==0.99.0" in msg and "faust-streaming==0.15.3" in msg
    assert "tests/test_faust_adapter.py" in msg and _versions.ALLOW_ENV in msg

    from streams import StreamSettings, create_app

    with pytest.raises(UnverifiedVersionError):
        create_app(StreamSettings(broker="kafka://127.0.0.1:1"), evaluator=object())


def test_unverified_versions_allowed_for_a_trial(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setitem(VERIFIED, "aiokafka", "9.9.9")
    monkeypatch.setenv(_versions.ALLOW_ENV, "1")
    with caplog.at_level(logging.WARNING, logger="attune.streams"):
        check_versions()
    assert any("aiokafka==9.9.9" in r.getMessage() for r in caplog.records)
