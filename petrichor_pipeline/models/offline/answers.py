"""Answers quoted from the evidence: the best-matching sentences, each cited, or an explicit not-found."""

from __future__ import annotations

from collections import Counter
from typing import Any, Sequence

from petrichor_pipeline.models.base import EvidenceText
from petrichor_pipeline.models.offline.sentences import Sentence, language_of, split_sentences
from petrichor_pipeline.models.offline.terms import search_tokens

MAX_ANSWER_SENTENCES = 3
NOT_FOUND = {
    "zh": "知识库中没有找到能回答这个问题的内容。",
    "en": "Not found in the knowledge base: none of the passages read answers this question.",
}


def answer(question: str, evidence: Sequence[EvidenceText]) -> dict[str, Any]:
    """Up to three evidence sentences with the best term overlap, each cited; or an explicit not-found."""
    lang = language_of(question)
    wanted = set(search_tokens(question))
    scored: list[tuple[float, int, int, Sentence]] = []
    pool: list[tuple[int, Sentence, set[str]]] = []
    for n, item in enumerate(evidence, start=1):
        for sentence in split_sentences(item.content, include_code=True):
            pool.append((n, sentence, set(search_tokens(sentence.text))))
    document_frequency = Counter(tok for _, _, toks in pool for tok in toks)
    for order, (n, sentence, toks) in enumerate(pool):
        overlap = wanted & toks
        if overlap:
            score = sum(1.0 / document_frequency[tok] for tok in overlap) + len(overlap)
            scored.append((score, order, n, sentence))
    if not scored:
        return {"answer": NOT_FOUND[lang], "citations": []}
    scored.sort(key=lambda s: (-s[0], s[1]))
    best = scored[0][0]
    chosen: list[tuple[int, Sentence]] = []
    for score, _, n, sentence in scored:
        if score < best / 2 or len(chosen) == MAX_ANSWER_SENTENCES:
            break
        if all(sentence.text != other.text for _, other in chosen):
            chosen.append((n, sentence))
    joiner = "" if lang == "zh" else " "
    text = joiner.join(f"{sentence.text} [{n}]" for n, sentence in chosen)
    citations = [{"marker": n, "evidence_id": evidence[n - 1].evidence_id, "quote": sentence.text} for n, sentence in chosen]
    return {"answer": text, "citations": citations}
