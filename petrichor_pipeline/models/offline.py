"""The deterministic offline chat model: the default when no endpoint is configured.

It answers every contract of `ChatModel` from the text it is given, with no network and no randomness:
questions from each chunk's heading path and salient terms, extractive summaries, candidates defined by
their own sentences, relations by co-occurrence, and answers that quote the evidence verbatim. Output is
grounded by construction: every summary, description and quote is a slice of the input text.
"""

from __future__ import annotations

import re
import string
import time
from collections import Counter, defaultdict
from dataclasses import dataclass
from typing import Any, Callable, Sequence

from petrichor_pipeline.models import terms as t
from petrichor_pipeline.models.base import (
    CallContext,
    CandidateRequest,
    EvidenceText,
    PageRequest,
    QuestionChunk,
    TreeNodeText,
    UsageMeter,
    UsageRecord,
)
from petrichor_pipeline.models.prompts import ANSWER, CANDIDATES, CATALOG, PAGES, PROMPT_VERSION, QUESTIONS, TREE_SUMMARIES, heading_label
from petrichor_pipeline.models.usage import record_usage

OFFLINE_VERSION = 1
"""Bumped whenever the offline model's output changes, so derived data built with it goes stale."""

MAX_CANDIDATES = 20
ITEM_LIMIT = 24
SUMMARY_MAX = 500
RELATION_DESCRIPTION_MAX = 300
DOCUMENT_SUMMARY_MAX = {"zh": 260, "en": 600}
TREE_SUMMARY_MAX = {"zh": 60, "en": 160}
PAGE_SUMMARY_MAX = {"zh": 80, "en": 200}
TOPIC_MAX = 30
MAX_TOP_FOLDERS = 6
MAX_PAGE_POINTS = 4
MAX_PAGE_LINKS = 8
MAX_ANSWER_SENTENCES = 3
NOT_FOUND = {
    "zh": "知识库中没有找到能回答这个问题的内容。",
    "en": "Not found in the knowledge base: none of the passages read answers this question.",
}
RELATED = {"zh": "关联", "en": "related"}
OTHER_FOLDER = {"zh": "其他", "en": "Other"}
_FOLDER_SPLIT = re.compile(r"\s*[/／|｜>]\s*")
_KIND_FOLDERS = frozenset({"实体", "概念", "entity", "concept"})


class OfflineChatModel:
    """`ChatModel` without a network: keyword and structure based, deterministic, grounded."""

    fingerprint = f"offline:{OFFLINE_VERSION}:{PROMPT_VERSION}"

    def __init__(self, meter: UsageMeter | None = None):
        self._meter = meter

    def generate_questions(self, chunks: Sequence[QuestionChunk], ctx: CallContext) -> dict[str, Any]:
        return self._timed(QUESTIONS.op, ctx, lambda: {"questions": {c.key: chunk_questions(c) for c in chunks}})

    def extract_candidates(self, req: CandidateRequest, ctx: CallContext) -> dict[str, Any]:
        return self._timed(CANDIDATES.op, ctx, lambda: extract_candidates(req))

    def plan_catalog(self, candidates: Sequence[dict[str, Any]], existing_folders: Sequence[str], ctx: CallContext) -> dict[str, Any]:
        return self._timed(CATALOG.op, ctx, lambda: plan_catalog(candidates, existing_folders))

    def generate_pages(self, req: PageRequest, ctx: CallContext) -> dict[str, Any]:
        return self._timed(PAGES.op, ctx, lambda: generate_pages(req))

    def summarize_tree(self, nodes: Sequence[TreeNodeText], ctx: CallContext) -> dict[str, Any]:
        return self._timed(TREE_SUMMARIES.op, ctx, lambda: {"summaries": {str(n.position): s for n in nodes if (s := node_summary(n))}})

    def answer(self, question: str, evidence: Sequence[EvidenceText], ctx: CallContext) -> dict[str, Any]:
        return self._timed(ANSWER.op, ctx, lambda: answer(question, evidence))

    def _timed(self, op: str, ctx: CallContext, run: Callable[[], dict[str, Any]]) -> dict[str, Any]:
        started = time.perf_counter()
        try:
            return run()
        finally:
            record_usage(self._meter, op, ctx.article_id, UsageRecord(calls=1, latency_s=time.perf_counter() - started))


# --- questions -----------------------------------------------------------------------------------------

_EN_VERBS = ("set up", "install", "configure", "deploy", "run", "start", "enable", "disable", "create", "build",
             "add", "remove", "update", "upgrade", "connect", "publish", "migrate", "rebuild", "call", "use")
_ZH_VERBS = ("安装", "配置", "部署", "启动", "启用", "关闭", "创建", "设置", "构建", "添加", "删除", "更新",
             "升级", "连接", "发布", "迁移", "运行", "调用", "接入", "使用")
_SIGNALS = {
    "default": re.compile(r"\bdefaults?\b|默认", re.IGNORECASE),
    "reason": re.compile(r"\b(?:because|so that|in order to|why|otherwise|avoids?)\b|因为|为了|原因|所以|以便|避免|否则", re.IGNORECASE),
    "settings": re.compile(r"\b(?:settings?|options?|config(?:uration)?|flags?|parameters?|environment variables?)\b|配置|参数|选项|设置|环境变量", re.IGNORECASE),
}

_EN_FORMS = {
    "what": "What is {x}?",
    "what_in": "What is {x} in {topic}?",
    "how_do": "How do I {verb} {x}?",
    "how_work": "How does {x} work?",
    "why": "Why does {topic} rely on {x}?",
    "why_self": "Why is {x} needed?",
    "settings": "Which settings control {x}?",
    "default": "What is the default of {x}?",
    "role": "What role does {x} play in {topic}?",
    "relation": "How is {x} related to {y}?",
    "about": "What does {topic} say about {x}?",
}
_ZH_FORMS = {
    "what": "什么是{x}？",
    "what_in": "{topic}中的{x}指什么？",
    "how_do": "如何{verb}{x}？",
    "how_work": "{x}是如何工作的？",
    "why": "为什么{topic}需要{x}？",
    "why_self": "为什么需要{x}？",
    "settings": "哪些配置控制{x}？",
    "default": "{x}的默认值是什么？",
    "role": "{x}在{topic}中起什么作用？",
    "relation": "{x}和{y}之间有什么关系？",
    "about": "{topic}对{x}有哪些说明？",
}


@dataclass(frozen=True)
class _ChunkView:
    lang: str
    topic: str
    terms: list[str]
    settings: list[str]
    verb: str
    verb_object: str
    signals: frozenset[str]


def chunk_questions(chunk: QuestionChunk) -> list[str]:
    """Exactly three distinct questions about the chunk, in its language, each naming one of its terms."""
    view = _view(chunk)
    forms = _ZH_FORMS if view.lang == "zh" else _EN_FORMS
    terms = list(view.terms)
    out: list[str] = []

    def add(form: str, **values: str) -> bool:
        question = _fill(forms[form], topic=view.topic, **values)
        if len(out) < 3 and question not in out:
            out.append(question)
            return True
        return False

    def next_term(*avoid: str) -> str:
        for term in terms:
            if term not in avoid:
                terms.remove(term)
                return term
        return view.topic

    first = next_term()
    add("what", x=first)
    if view.verb:
        add("how_do", verb=view.verb, x=view.verb_object or next_term(first))
    if "default" in view.signals and view.settings:
        add("default", x=view.settings[0])
    if "settings" in view.signals:
        add("settings", x=view.settings[0] if view.settings else view.topic)
    if "reason" in view.signals:
        x = next_term(first)
        add("why" if x != view.topic else "why_self", x=x)
    for form in ("how_work", "role", "what_in", "relation", "what"):
        if len(out) == 3:
            break
        x = next_term(first)
        add(form, x=x, y=first if x != first else view.topic)
    for x in [*view.terms, view.topic]:  # a chunk with almost no terms still gets three distinct questions
        for form in ("what", "how_work", "role", "why_self", "about"):
            add(form, x=x)
    return out[:3]


def _view(chunk: QuestionChunk) -> _ChunkView:
    text = f"{heading_label(chunk)}\n{chunk.content}"
    lang = t.language_of(text)
    sentences = t.split_sentences(chunk.content)
    ranked = t.salient_terms(sentences, lang).ranked()
    topic = chunk.heading_path[-1] if chunk.heading_path else chunk.heading.strip()
    if not topic or len(topic) > TOPIC_MAX:
        topic = ranked[0].text if ranked else t.cut(topic or chunk.key, TOPIC_MAX)
    names = [term.text for term in ranked if term.text.lower() != topic.lower()]
    names += [h for h in reversed(chunk.heading_path[:-1]) if h not in names and len(h) <= TOPIC_MAX]
    settings = [term.text for term in ranked if term.kind == t.ENTITY and _looks_like_setting(term.text)]
    signals = {name for name, pattern in _SIGNALS.items() if pattern.search(chunk.content)}
    verb, verb_object = _action(sentences, ranked, lang)
    if settings:
        signals.add("settings")
    return _ChunkView(lang, topic, names[:6], settings, verb, verb_object, frozenset(signals))


def _looks_like_setting(name: str) -> bool:
    return bool(re.fullmatch(r"--[\w-]+|[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+|[a-z][a-z0-9]*(?:[_.][a-z0-9]+)+", name))


def _action(sentences: Sequence[t.Sentence], ranked: Sequence[t.Term], lang: str) -> tuple[str, str]:
    """The first task verb of the chunk and a term it acts on in the same sentence ("configure", "PETRICHOR_DATA")."""
    for sentence in sentences:
        lowered = sentence.text.lower()
        for verb in _ZH_VERBS if lang == "zh" else _EN_VERBS:
            at = lowered.find(verb) if lang == "zh" else _word_at(lowered, verb)
            if at < 0:
                continue
            after = sentence.text[at + len(verb) :]
            objects = [term for term in ranked if term.occurs_in(after)]
            if objects:
                return verb, min(objects, key=lambda term: term.find(after)).text
    return "", ""


def _word_at(text: str, word: str) -> int:
    match = re.search(rf"(?<![a-z]){re.escape(word)}(?![a-z])", text)
    return match.start() if match else -1


def _fill(template: str, **values: str) -> str:
    """Format a template, spacing a Latin value from adjacent Han characters ("什么是 Redis？")."""
    out: list[str] = []
    for literal, name, _, _ in string.Formatter().parse(template):
        out.append(literal)
        if name is None:
            continue
        value = values[name]
        before = out[-1][-1:] if out and out[-1] else ""
        if before and t.has_cjk(before) and not t.has_cjk(value[:1]):
            value = " " + value
        out.append(value)
    text = "".join(out)
    return re.sub(rf"(?<=[A-Za-z0-9`)\]_])(?=[{t.CJK_CLASS}])", " ", text) if t.has_cjk(template) else text


# --- candidates ----------------------------------------------------------------------------------------

_DEFINITION_CUE = re.compile(r"\s(?:is|are|means|refers to|stands for|holds|stores)\s|是|指|用于|负责|表示|：|:")
_ACRONYM = re.compile(r"([^\s（(]{2,40}?(?:\s+[^\s（(]+){0,5})\s*[（(]([A-Z][A-Za-z0-9]{1,9})[)）]")


def extract_candidates(req: CandidateRequest) -> dict[str, Any]:
    """Document summary, entities, concepts and co-occurrence relations, all quoted from the document."""
    lang = t.language_of(req.document)
    sentences = t.split_sentences(req.document)
    found = t.salient_terms(sentences, lang)
    aliases = _acronym_aliases(req.document, found.ranked())
    items: list[dict[str, Any]] = []
    selected: list[t.Term] = []
    seen: set[str] = set()
    for term in found.ranked():
        if len(items) >= min(MAX_CANDIDATES, ITEM_LIMIT):
            break
        identity = _identity(term.text)
        alias = aliases.get(term.text, "")
        if not identity or identity in seen or (alias and _identity(alias) in seen):
            continue
        definition = _defining_sentence(term, sentences)
        if definition is None:
            continue
        seen.add(identity)
        selected.append(term)
        items.append(
            {
                "name": term.text,
                "kind": term.kind,
                "pageKey": f"{term.kind}/{term.text}",
                "aliases": [alias] if alias else [],
                "summary": definition.text[:SUMMARY_MAX],
                "headingPath": list(definition.heading_path),
            }
        )
    return {
        "documentSummary": document_summary(sentences, lang),
        "entities": [i for i in items if i["kind"] == t.ENTITY],
        "concepts": [i for i in items if i["kind"] == t.CONCEPT],
        "relations": _relations(req.document, sentences, selected, items, lang),
    }


def _identity(name: str) -> str:
    return re.sub(r"[\s\W_]+", "", name.lower())


def _acronym_aliases(document: str, ranked: Sequence[t.Term]) -> dict[str, str]:
    """"Reciprocal Rank Fusion (RRF)" / "检索增强生成（RAG）": the long form and the acronym name each other."""
    names = {term.text for term in ranked}
    out: dict[str, str] = {}
    for match in _ACRONYM.finditer(document):
        before, short = match.group(1), match.group(2)
        words = before.split()
        long = ""
        if len(words) >= len(short) and "".join(w[0] for w in words[-len(short) :]).upper() == short.upper():
            long = " ".join(words[-len(short) :])
        else:
            tail = t.CJK_RUN.findall(before)
            long = next((n for n in names if tail and tail[-1].endswith(n) and len(n) >= 2), "")
        if long and short in names:
            out.setdefault(short, long)
        if long and long in names:
            out.setdefault(long, short)
    return out


def _defining_sentence(term: t.Term, sentences: Sequence[t.Sentence]) -> t.Sentence | None:
    """The first sentence that defines the term ("X is …", "X 是…"), else the first that mentions it."""
    mentions = [s for s in sentences if term.occurs_in(s.text)]
    for sentence in mentions:
        at = term.find(sentence.text)
        if _DEFINITION_CUE.search(sentence.text[at + len(term.text) : at + len(term.text) + 24]):
            return sentence
    return mentions[0] if mentions else None


def document_summary(sentences: Sequence[t.Sentence], lang: str) -> str:
    """Extractive: the first informative sentences, up to the summary budget."""
    limit = DOCUMENT_SUMMARY_MAX[lang]
    joiner = "" if lang == "zh" else " "
    picked: list[str] = []
    for sentence in sentences:
        if not _substantial(sentence.text, lang):
            continue
        candidate = joiner.join([*picked, sentence.text])
        if picked and len(candidate) > limit:
            break
        picked.append(sentence.text)
        if len(picked) == 3:
            break
    return t.cut(joiner.join(picked), limit)


def _substantial(text: str, lang: str) -> bool:
    if lang == "zh":
        return len(t.CJK.findall(text)) >= 8
    return len(re.findall(r"[A-Za-z]+", text)) >= 6


def _relations(document: str, sentences: Sequence[t.Sentence], selected: Sequence[t.Term], items: Sequence[dict[str, Any]], lang: str) -> list[dict[str, Any]]:
    """Pairs of candidates named in one sentence (else one short paragraph), described by that text."""
    keys = {term.text: item["pageKey"] for term, item in zip(selected, items)}
    pairs: dict[frozenset[str], dict[str, Any]] = {}

    def relate(mentioned: list[tuple[int, t.Term]], description: str) -> None:
        mentioned.sort(key=lambda pair: (pair[0], pair[1].text))
        for i, (_, a) in enumerate(mentioned):
            for _, b in mentioned[i + 1 :]:
                pair = frozenset((a.text, b.text))
                if len(pair) == 2 and pair not in pairs:
                    pairs[pair] = {
                        "fromPageKey": keys[a.text],
                        "toPageKey": keys[b.text],
                        "relationType": RELATED[lang],
                        "description": description,
                    }

    paragraphs: dict[int, list[t.Sentence]] = defaultdict(list)
    for sentence in sentences:
        paragraphs[sentence.paragraph].append(sentence)
        relate(_mentions(sentence.text, selected), sentence.text[:RELATION_DESCRIPTION_MAX])
    for group in paragraphs.values():
        text = document[group[0].start : group[-1].end]
        if len(group) > 1 and len(text) <= RELATION_DESCRIPTION_MAX:
            relate(_mentions(text, selected), text)
    return list(pairs.values())[: 3 * len(selected)]


def _mentions(text: str, selected: Sequence[t.Term]) -> list[tuple[int, t.Term]]:
    return [(at, term) for term in selected if (at := term.find(text)) >= 0]


# --- catalog -------------------------------------------------------------------------------------------


def plan_catalog(candidates: Sequence[dict[str, Any]], existing_folders: Sequence[str]) -> dict[str, Any]:
    """One folder level from the section each candidate was found in (`headingPath`), reusing existing folders.

    The heading levels all candidates share (usually the document title) are skipped; the largest six
    sections become folders, the rest go to "Other"; a folder with many pages and varied subsections
    gets a second level.
    """
    lang = t.language_of(" ".join(str(c.get("name", "")) + str(c.get("summary", "")) for c in candidates))
    paths = [_section_path(c) for c in candidates]
    common = _common_prefix([p for p in paths if p])
    existing = {_identity(parts[-1]): parts for f in existing_folders if (parts := _folder_parts(f))}
    tops: list[str] = []
    subs: list[str] = []
    for path in paths:
        rest = path[len(common) :]
        tops.append(rest[0] if rest else (common[-1] if common else ""))
        subs.append(rest[1] if len(rest) > 1 else "")
    sizes = Counter(top for top in tops if top)
    keep = {top for top, _ in sorted(sizes.items(), key=lambda kv: (-kv[1], tops.index(kv[0])))[:MAX_TOP_FOLDERS - 1]}
    if len(sizes) <= MAX_TOP_FOLDERS:
        keep = set(sizes)
    assignments = []
    for candidate, top, sub in zip(candidates, tops, subs):
        key = str(candidate.get("pageKey") or candidate.get("slug") or "")
        if not key:
            continue
        if not top:
            path: list[str] = []
        elif _identity(top) in existing:
            path = list(existing[_identity(top)])
        elif top not in keep:
            path = [OTHER_FOLDER[lang]]
        else:
            siblings = {s for tp, s in zip(tops, subs) if tp == top and s}
            path = [top, sub] if sub and sizes[top] > MAX_TOP_FOLDERS and len(siblings) > 1 else [top]
        assignments.append({"pageKey": key, "path": path[:2]})
    return {"assignments": assignments}


def _section_path(candidate: dict[str, Any]) -> list[str]:
    raw = candidate.get("headingPath") or candidate.get("section") or []
    parts = _folder_parts(raw) if isinstance(raw, str) else [str(p).strip() for p in raw]
    return [p for p in parts if p and p.lower() not in _KIND_FOLDERS]


def _folder_parts(folder: str) -> list[str]:
    return [p for p in _FOLDER_SPLIT.split(folder.strip()) if p and p.lower() not in _KIND_FOLDERS]


def _common_prefix(paths: Sequence[list[str]]) -> list[str]:
    if len(paths) < 2:
        return []
    prefix: list[str] = []
    for parts in zip(*paths):
        if len(set(parts)) != 1:
            break
        prefix.append(parts[0])
    return prefix


# --- pages ---------------------------------------------------------------------------------------------


def generate_pages(req: PageRequest) -> dict[str, Any]:
    """Per requested page: title, summary, the document's sentences about it, links to co-occurring pages."""
    sentences = t.split_sentences(req.document)
    lang = t.language_of(req.document or " ".join(str(p.get("name", "")) for p in req.requested))
    valid = {str(p.get("pageKey", "")): p for p in req.valid_pages if p.get("pageKey")}
    matchers = {key: [t.term_for(n) for n in _names(page)] for key, page in valid.items()}
    pages = []
    for page in req.requested:
        key = str(page.get("pageKey", ""))
        name = str(page.get("name") or page.get("title") or key)
        own = [t.term_for(n) for n in _names(page)] or [t.term_for(name)]
        about = [s for s in sentences if any(m.occurs_in(s.text) for m in own)]
        summary = str(page.get("summary") or (about[0].text if about else "")).strip()
        links = _page_links(key, about, req.relations, valid, matchers)
        pages.append({"pageKey": key, "summary": t.cut(summary, PAGE_SUMMARY_MAX[lang]), "contentMd": _page_markdown(name, summary, about, links, lang)})
    return {"pages": pages}


def _names(page: dict[str, Any]) -> list[str]:
    names = [str(page.get("name") or page.get("title") or "")] + [str(a) for a in page.get("aliases") or []]
    return [n for n in names if n.strip()]


def _page_links(key: str, about: Sequence[t.Sentence], relations: Sequence[dict[str, Any]], valid: dict[str, dict[str, Any]], matchers: dict[str, list[t.Term]]) -> list[tuple[str, str, str]]:
    """(pageKey, name, why) for valid pages sharing a relation or a sentence with this page; never itself."""
    links: dict[str, tuple[str, str, str]] = {}
    for relation in relations:
        ends = (str(relation.get("fromPageKey", "")), str(relation.get("toPageKey", "")))
        if key in ends:
            other = ends[1] if ends[0] == key else ends[0]
            if other != key and other in valid:
                why = str(relation.get("description") or relation.get("relationType") or "")
                links.setdefault(other, (other, _names(valid[other])[0] if _names(valid[other]) else other, why))
    for sentence in about:
        for other, found in matchers.items():
            if other != key and other not in links and any(m.occurs_in(sentence.text) for m in found):
                links[other] = (other, _names(valid[other])[0], sentence.text[:RELATION_DESCRIPTION_MAX])
    return list(links.values())[:MAX_PAGE_LINKS]


def _page_markdown(name: str, summary: str, about: Sequence[t.Sentence], links: Sequence[tuple[str, str, str]], lang: str) -> str:
    zh = lang == "zh"
    blocks = [f"# {name}", summary or ("暂无足够的原文信息生成详细页面。" if zh else "The source has little to say about this yet.")]
    points = [s.text for s in about if s.text != summary][:MAX_PAGE_POINTS]
    if points:
        blocks.append(("## 原文要点" if zh else "## In the source") + "\n\n" + "\n".join(f"- {p}" for p in points))
    if links:
        lines = [f"- [[{key}|{label}]]" + (f"{'：' if zh else ': '}{why}" if why else "") for key, label, why in links]
        blocks.append(("## 相关知识" if zh else "## Related") + "\n\n" + "\n".join(lines))
    return "\n\n".join(blocks)


# --- tree summaries ------------------------------------------------------------------------------------

_PLAIN_SENTENCE = re.compile(r"[^。！？；!?;]+?(?:[。！？；]|[.!?;](?=\s|$)|$)")


def node_summary(node: TreeNodeText) -> str:
    """One extractive sentence for a section (≤ 60 code points in Chinese, ≤ 160 in English); "" when empty."""
    text = t.plain_text(node.content)
    if not text:
        return ""
    limit = TREE_SUMMARY_MAX[t.language_of(text)]
    parts = [m.group(0).strip() for m in _PLAIN_SENTENCE.finditer(text) if t.informative(m.group(0))]
    summary = parts[0] if parts else text
    for extra in parts[1:]:  # a very short lead sentence ("Overview.") takes the next one along
        if len(summary) >= limit // 3 or len(summary) + len(extra) + 1 > limit:
            break
        summary = f"{summary} {extra}" if not t.has_cjk(summary) else summary + extra
    return t.cut(summary, limit)


# --- answers -------------------------------------------------------------------------------------------


def answer(question: str, evidence: Sequence[EvidenceText]) -> dict[str, Any]:
    """Up to three evidence sentences with the best term overlap, each cited; or an explicit not-found."""
    lang = t.language_of(question)
    wanted = set(t.search_tokens(question))
    scored: list[tuple[float, int, int, t.Sentence]] = []
    pool: list[tuple[int, t.Sentence, set[str]]] = []
    for n, item in enumerate(evidence, start=1):
        for sentence in t.split_sentences(item.content, include_code=True):
            pool.append((n, sentence, set(t.search_tokens(sentence.text))))
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
    chosen: list[tuple[int, t.Sentence]] = []
    for score, _, n, sentence in scored:
        if score < best / 2 or len(chosen) == MAX_ANSWER_SENTENCES:
            break
        if all(sentence.text != other.text for _, other in chosen):
            chosen.append((n, sentence))
    joiner = "" if lang == "zh" else " "
    text = joiner.join(f"{sentence.text} [{n}]" for n, sentence in chosen)
    citations = [{"marker": n, "evidence_id": evidence[n - 1].evidence_id, "quote": sentence.text} for n, sentence in chosen]
    return {"answer": text, "citations": citations}
