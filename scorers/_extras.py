"""Messages for optional extras that are not installed (a clear error instead of a traceback)."""

from __future__ import annotations


def missing_extra(extra: str, error: ImportError) -> str:
    """Which extra to install for the module ``error`` could not import."""
    return f"this needs the {extra!r} extra (could not import {error.name or error}): pip install 'attune[{extra}]'"
