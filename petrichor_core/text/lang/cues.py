"""Cue words in running text: the words that signal a reason, a negation, a definition, an alias, a place,
a clause joined to another, words addressed to the assistant, and the like, in Chinese and English.
"""

from __future__ import annotations
