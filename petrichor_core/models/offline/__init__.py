"""The deterministic offline chat model: the build's default when no endpoint is configured.

It answers every knowledge-build contract of `ChatModel` from the text it is given, with no network and
no randomness: questions from each chunk's heading path and salient terms (`questions`), candidates
defined by their own sentences and related by co-occurrence (`candidates`), folders from sections
(`catalog`), pages from the document's sentences (`pages`) and extractive section summaries (`tree`).
Output is grounded by construction: every summary and description is a slice of the input text. Text
analysis lives in `terms` and in `petrichor_core.text.prose` (sentences, shared with serving).

Answering questions is serving's (`petrichor_serving.answer`); the build never answers.
"""
