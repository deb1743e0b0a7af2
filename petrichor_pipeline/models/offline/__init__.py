"""The deterministic offline chat model: the default when no endpoint is configured.

It answers every contract of `ChatModel` from the text it is given, with no network and no randomness:
questions from each chunk's heading path and salient terms (`questions`), candidates defined by their
own sentences and related by co-occurrence (`candidates`), folders from sections (`catalog`), pages
from the document's sentences (`pages`), extractive section summaries (`tree`) and answers that quote
the evidence verbatim (`answers`). Output is grounded by construction: every summary, description and
quote is a slice of the input text. Text analysis lives in `sentences`, `terms` and `overlap`.

`answerer.OfflineAnswerer` is the answering half alone (what serving loads); `model.OfflineChatModel`
adds the build operations. Nothing is imported here, so loading the answerer loads no build code.
"""
