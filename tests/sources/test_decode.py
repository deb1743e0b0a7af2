"""The binary sniff counts control bytes exactly as its rule says (a C pass stands in for a byte loop)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from petrichor_pipeline.sources.decode import MAX_CONTROL_SHARE, SNIFF_BYTES, looks_binary

_TEXT_CONTROLS = set(b"\t\n\r\f\x1b")


def _rule(data: bytes) -> bool:
    head = data[:SNIFF_BYTES]
    if 0 in head:
        return True
    controls = sum(1 for b in head if (b < 0x20 or b == 0x7F) and b not in _TEXT_CONTROLS)
    return bool(head) and controls / len(head) > MAX_CONTROL_SHARE


@given(st.binary(max_size=300), st.integers(min_value=0, max_value=SNIFF_BYTES + 50))
def test_sniff_matches_the_rule(data: bytes, pad: int):
    for sample in (data, b"a" * pad + data, data * 40):
        assert looks_binary(sample) == _rule(sample)


def test_only_the_first_8_kb_count():
    assert not looks_binary(b"x" * SNIFF_BYTES + b"\x01" * SNIFF_BYTES)
    assert looks_binary(b"\x01" * 100 + b"x" * 100)
    assert not looks_binary(b"tab\tand\nnewline\r\n\x1b[0m" * 10)
