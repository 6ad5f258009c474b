"""The cheap tier's outputs are byte-identical to the committed golden digests (see tests/_scoring_golden.py).

The digests were generated before the scorer speed-ups; a mismatch means an output changed. To see which
records, dump both versions (``tests/_scoring_golden.py --dump DIR``) and diff the files.
"""

from __future__ import annotations

import orjson
import pytest
from _scoring_golden import GOLDEN, PARTS, available, digest


@pytest.mark.parametrize("part", PARTS)
def test_outputs_match_golden(part: str) -> None:
    if not available(part):
        pytest.skip(f"{part} corpus not present")
    want = orjson.loads(GOLDEN.read_bytes())[part]
    got, n = digest(part)
    assert (got, n) == (want["sha256"], want["lines"])
