"""English suffix lists: the inflections light stemming and spelling correction strip.

Three lists, one per reader, because each strips a different set and a merged one would change what
matches: the stemmer's default, the agent's (no bare "e") and the spelling corrector's (the inflections
that still name the same word).
"""

from __future__ import annotations

STEM_SUFFIXES = ("ing", "ed", "es", "s", "e")
"""The offline model's suffixes (`text.stem.stem`'s default): "configure" and "configured" both become "configur"."""
AGENT_SUFFIXES = ("ing", "ed", "es", "s")
"""The agent's stemming keeps a final "e": heading words are matched whole more often than inflected, so a
heading word like "release" stays whole."""
SPELLING_SUFFIXES = ("s", "es", "ed", "d", "ing", "er", "ly")
"""Inflections the spelling corrector treats as the same word as their stem (`recall.spelling`)."""
