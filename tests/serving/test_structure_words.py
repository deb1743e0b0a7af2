"""How the outline intent reads words: phrasal cues as phrases, typos at one edit for words long enough."""

from __future__ import annotations

import pytest

from petrichor_serving.agent.structure import COVER_PHRASES, _one_typo_apart


@pytest.mark.parametrize(
    ("a", "b", "same"),
    [
        ("keycloak", "keycloack", True),  # a letter added
        ("enable", "enabl", True),  # the stem
        ("install", "isntall", True),  # two letters swapped
        ("config", "confirm", False),  # two edits
        ("port", "post", False),  # too short to tell a typo from another word
        ("配置", "配制", False),  # Han words are matched by containment, not edits
    ],
)
def test_one_typo_apart(a, b, same):
    assert _one_typo_apart(a, b) is same


@pytest.mark.parametrize(
    ("question", "cue"),
    [
        ("Can you break down the authentication guide?", True),
        ("Walk me through the upgrade section.", True),
        ("What does the release notes guide go over?", True),
        ("Why does the server go down after an upgrade?", False),  # "down" and "go" alone cue nothing
        ("How do I turn the sync down?", False),
    ],
)
def test_phrasal_cues_are_phrases(question, cue):
    assert bool(COVER_PHRASES.search(question)) is cue
