"""The deterministic offline chat model: the default when no endpoint is configured.

It answers every contract of `ChatModel` from the text it is given, with no network and no randomness:
questions from each chunk's heading path and salient terms (`questions`), candidates defined by their
own sentences and related by co-occurrence (`candidates`), folders from sections (`catalog`), pages
from the document's sentences (`pages`), extractive section summaries (`tree`) and answers that quote
the evidence verbatim (`answers`). Output is grounded by construction: every summary, description and
quote is a slice of the input text. Text analysis lives in `sentences` and `terms`.
"""

from petrichor_pipeline.models.offline.model import OFFLINE_VERSION, OfflineChatModel

__all__ = ["OFFLINE_VERSION", "OfflineChatModel"]
