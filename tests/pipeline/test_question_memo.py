"""The questions step's memo is a cache: whatever a damaged one holds, it yields remembered questions or none."""

from __future__ import annotations

import pytest

from petrichor_pipeline.builder.steps.questions import _remembered


def test_remembered_questions_are_read_back() -> None:
    assert _remembered({"k": ["a?", "b?", "c?"]}, "k") == ("a?", "b?", "c?")


@pytest.mark.parametrize("known", [None, [], "k", {"k": "a?"}, {"k": []}, {"k": ["a?", 3]}, {"k": [None]}, {"other": ["a?"]}])
def test_a_damaged_or_missing_entry_gives_none(known) -> None:
    assert _remembered(known, "k") == ()
