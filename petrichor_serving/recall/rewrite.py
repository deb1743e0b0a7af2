"""Deterministic query rewrite: split a compound question into at most three sub-queries.

No model is called: a simple question stays exactly as asked. Two rules, switched separately:

- *clauses* (the reference's): a long question with several clauses or a conjunction also gets each clause
  searched on its own, so that both halves of "compare A, and explain B" can find their sections;
- *coordination*: a Chinese question that asks one thing of several subjects (北京冬奥会和冬残奥会的开幕日期,
  ChatGPT和GPT4的发布时间) also gets the question asked of each subject alone. Each subject's answer lives in
  its own article, and the question as a whole ranks the articles that name both above either answer.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from petrichor_core.text.lang import CJK_CLASS, init_jieba
from petrichor_serving.recall.query import Query

MAX_CLAUSES = 3
"""Clauses the rewrite searches besides the question itself."""
MIN_REWRITE_CHARS = 18
MIN_CLAUSE_CHARS = 4

# RE2's `\s` is ASCII whitespace only, hence the explicit class; `\b` is ASCII too (re.ASCII).
_QUESTION_SPLIT = re.compile(r"[，,；;。？?！!]+[\t\n\f\r ]*")
_CONJUNCTION = re.compile(r"(，以及|，还有|，并且|，同时|以及|、并|；|;|，再|，然后|\band\b)", re.IGNORECASE | re.ASCII)
_CLAUSE_SPLIT = re.compile(r"[|，,；;。？?！!]+")
_QUESTION_WORDS = re.compile(r"(是什么|为什么|怎么样|怎么办|如何|怎样|哪些|哪个|多少|吗|呢|？|\?)")
_PREFIXES = ("请问", "想知道", "帮我", "麻烦", "我想", "能否", "可以", "请", "那么", "另外", "以及", "还有")


# A conjunction between two subjects: 和 / 与 / 及 / 跟 / 、 with a letter, digit or CJK character either side.
_CONJOINED = re.compile(f"(?<=[{CJK_CLASS}0-9A-Za-z])(?:和|与|及|跟|、)(?=[{CJK_CLASS}0-9A-Za-z])")
# Where the last subject ends and what is asked of the subjects begins.
_PREDICATE = re.compile("的|分别|都|各|是|中|有|在|谁|哪|什么|多少|何|几|吗|呢")
_TITLE = re.compile("《[^》]*》")
"""A work's title: a conjunction inside it (《速度与激情10》) joins no subjects."""


_DIGITS = re.compile(r"[0-9]+")


def _words(text: str) -> list[str]:
    """jieba's words of `text`, a one-character word (年, 棒, 的, 了) joined to the word before it: a unit or a
    particle, not a subject of its own (`2022年澳网男单` gives 2022年 / 澳网 / 男单)."""
    words: list[str] = []
    for word in init_jieba().lcut(text):
        if words and len(word) == 1 and not _DIGITS.fullmatch(word):
            words[-1] += word
        else:
            words.append(word)
    return words


def _shared_head(left: str) -> list[str]:
    """The words of `left` (what precedes the first conjunction) before the first subject, its last word:
    `2022年澳网男单` gives 2022年 / 澳网; without them the later subject's question (女单冠军是谁) loses the year
    and the event."""
    return _words(left)[:-1]


def _shared_tail(later: str) -> str:
    """What a later half asks of every subject when no predicate marks it: its words after its first
    (`美国经济增速` gives `经济增速`, `2022年全国棉花产量` gives `全国棉花产量`), so that the first half
    (`2022年中国`) becomes a question too."""
    return "".join(_words(later)[1:])


def _joined(head: list[str], subject: str) -> str:
    """`subject` after the shared words, less a last shared word the subject repeats (奥斯卡最佳 + 最佳男主角)."""
    if head and subject.startswith(head[-1]):
        head = head[:-1]
    return "".join(head) + subject


def coordination_queries(query: str) -> list[str]:
    """The question asked of each of its coordinated subjects (at most `MAX_CLAUSES`); empty when it has none.

    `P A和B S` gives `P A S` and `P B S`: the words before the first subject (`_shared_head`: 2023年澳网 …)
    are asked of every subject, so is the predicate `S`, and 分别 ("respectively") is dropped. Where no
    predicate follows the subjects, the question is cut at the conjunction into its two halves: the later one
    gets the shared words and lends the first its words after its subject (`_shared_tail`: 2022年中国和美国
    经济增速 gives 2022年中国经济增速 and 2022年美国经济增速). A question of several clauses is left to the
    clause rule."""
    text = query.rstrip("？?")
    if sum(1 for part in _CLAUSE_SPLIT.split(text) if part.strip()) > 1:
        return []
    masked = _TITLE.sub(lambda m: "\x00" * len(m.group()), text)
    cuts = list(_CONJOINED.finditer(masked))
    if not cuts:
        return []
    first = cuts[0]
    left = text[: first.start()]
    predicate = _PREDICATE.search(masked, first.end())
    head = _shared_head(left)
    if predicate is None or predicate.start() == first.end():
        later = text[first.end() :]
        tail = _shared_tail(later)
        parts = [left if left.endswith(tail) else left + tail, _joined(head, later)]
    else:
        rest = text[predicate.start() :].replace("分别", "")
        subjects = [text[a.end() : b.start()] for a, b in zip(cuts, [*cuts[1:], predicate]) if a.end() < predicate.start()]
        parts = [left + rest, *(_joined(head, subject) + rest for subject in subjects)]
    out = list(dict.fromkeys(p.strip() for p in parts if len(p.strip()) >= 2))
    return out[:MAX_CLAUSES] if len(out) > 1 else []


def _trim_prefix(clause: str) -> str:
    for prefix in _PREFIXES:
        if clause.startswith(prefix):
            return clause[len(prefix) :].strip()
    return clause


def rewrite_query(query: str) -> list[str]:
    """The clauses of a compound question (the reference's rule); empty for a short or simple one."""
    text = query
    if len(text) < MIN_REWRITE_CHARS:
        return []
    long_parts = sum(1 for part in _QUESTION_SPLIT.split(text) if len(part.strip()) >= MIN_CLAUSE_CHARS)
    if long_parts < 2 and not _CONJUNCTION.search(text):
        return []
    out: list[str] = []
    for clause in _CLAUSE_SPLIT.split(_CONJUNCTION.sub("|", text)):
        clause = _trim_prefix(clause.strip())
        clause = _QUESTION_WORDS.sub(" ", clause).strip()
        if len(clause) < MIN_CLAUSE_CHARS or clause == text or clause in out:
            continue
        out.append(clause)
        if len(out) >= MAX_CLAUSES:
            break
    return out


def build_queries(primary: Query, sub_queries: Sequence[str] | None = None, *, clauses: bool = True, coordination: bool = True) -> list[str]:
    """`[primary, *extra]`: explicit sub-queries (as many as the caller gives, each trimmed) win over the
    rules' (the clauses first, then the coordinated subjects, each rule only when switched on); repeats
    (ignoring case) and one-character values are dropped. `queries[1:]` are the rewritten ones."""
    extra = list(sub_queries or ()) or (rewrite_query(primary) if clauses else []) or (coordination_queries(primary) if coordination else [])
    queries: list[str] = [primary]
    seen = {primary.lower()}
    for value in extra:
        value = value.strip()
        if len(value) < 2 or value.lower() in seen:
            continue
        seen.add(value.lower())
        queries.append(value)
    return queries
