"""Three questions per chunk, from its heading path and salient terms, in the chunk's language."""

from __future__ import annotations

import re
import string
from collections.abc import Sequence
from dataclasses import dataclass

from petrichor_core.models.offline.terms import CONCEPT, ENTITY, Term, salient_terms, zh_words
from petrichor_core.models.prompts import heading_label
from petrichor_core.models.protocols import QuestionChunk
from petrichor_core.text.lang import has_cjk, language_of
from petrichor_core.text.lang.cues import CHUNK_SIGNALS, TASK_LEADS_ZH, TASK_VERBS_EN, TASK_VERBS_ZH
from petrichor_core.text.lang.question_words import QUESTION_LIKE
from petrichor_core.text.lang.texts import QUESTION_FORMS_EN, QUESTION_FORMS_ZH, TASK_HEADING_QUESTION_ZH
from petrichor_core.text.prose import Sentence, cut, split_sentences, strip_section_number

TOPIC_MAX = 30
HEADING_QUESTION_MAX = 120
"""Longest heading turned into a question of its own; longer ones are sentences, not section names."""

_EN_INSTRUCTION = {verb: re.compile(rf"(?:^|\bto |\b(?:can|should|must|then|and) ){re.escape(verb)}(?![a-z])") for verb in TASK_VERBS_EN}


@dataclass(frozen=True)
class _ChunkView:
    lang: str
    topic: str
    terms: list[str]
    commands: frozenset[str]
    concepts: frozenset[str]
    """Lowercase English key phrases, which read as "the hash bucket" in a question."""
    concept: str
    default_setting: str
    verb: str
    verb_object: str
    signals: frozenset[str]


def chunk_questions(chunk: QuestionChunk) -> list[str]:
    """Exactly three distinct questions about the chunk, in its language, each naming one of its terms."""
    view = _view(chunk)
    forms = QUESTION_FORMS_ZH if view.lang == "zh" else QUESTION_FORMS_EN
    terms = list(view.terms)
    heading = heading_question(chunk, view.lang)
    out: list[str] = [heading] if heading else []

    def add(form: str, **values: str) -> None:
        x = values.get("x")
        if "{topic}" in forms[form] and (x == view.topic or QUESTION_LIKE.search(view.topic)):
            return  # "What role does Installation play in Installation?", "… in What each locator reads?"
        if x == values.get("y"):
            return
        if f"{form}_plural" in forms and x in view.concepts and _PLURAL_PHRASE.fullmatch(x):
            form = f"{form}_plural"  # "How do the hash buckets work?"
        shown = {k: f"the {v}" if view.lang == "en" and k in ("x", "y") and v in view.concepts else v for k, v in values.items()}
        question = _fill(forms[form], topic=view.topic, **shown)
        if len(out) < 3 and question not in out:
            out.append(question)

    def next_term(*avoid: str) -> str:
        for term in terms:
            if term not in avoid:
                terms.remove(term)
                return term
        return view.topic

    if "default" in view.signals and view.default_setting:
        add("default", x=view.default_setting)
    first = next_term()
    add("does" if first in view.commands else "what", x=first)
    if view.verb:
        add("how_do", verb=view.verb, x=view.verb_object or next_term(first))
    if "settings" in view.signals:
        add("settings", x=view.concept)
        if view.concept in terms:
            terms.remove(view.concept)
    if "reason" in view.signals:
        x = next_term(first)
        add("why" if x != view.topic else "why_self", x=x)
    for form in ("how_work", "role", "what_in", "relation", "what"):
        if len(out) == 3:
            break
        x = next_term(first)
        add("does" if x in view.commands else form, x=x, y=first if x != first else view.topic)
    for x in [*view.terms, view.topic]:  # a chunk with almost no terms still gets three distinct questions
        for form in ("what", "how_work", "role", "why_self", "about"):
            add(form, x=x)
    return out


_EN_GERUND = re.compile(r"([A-Z][a-z]+)ing\b")
"""A heading opening with a gerund names a task; a stem without a vowel is a word like "Spring" or "String"."""
_EN_ABOUT = re.compile(r"(?:about|overview of|introduction to|understanding)\s+(?=\S)", re.IGNORECASE)


def heading_question(chunk: QuestionChunk, lang: str) -> str:
    """The question the section's own heading answers: "Configuring the global header" → "What are the steps
    for configuring the global header?", "About feedback collection" → "What is feedback collection?",
    "部署 Redis" → "如何部署 Redis？", "持久化" → "什么是持久化？", "Snapshots" → "What are Snapshots?".

    Documentation headings name the task or topic a reader asks about, in the reader's words; term-based
    questions alone turned into the same few generic questions across a manual's chunks ("How do I install
    Red Hat Developer Hub?") and matched every query equally. Empty when the heading is missing, already a
    question, or too long to be a section name.
    """
    heading = strip_section_number(chunk.heading_path[-1] if chunk.heading_path else chunk.heading)
    if not heading or len(heading) > HEADING_QUESTION_MAX or QUESTION_LIKE.search(heading):
        return ""
    if lang == "zh":
        task = heading.startswith(TASK_VERBS_ZH)
        return _fill(TASK_HEADING_QUESTION_ZH if task else QUESTION_FORMS_ZH["what"], x=heading)
    gerund = _EN_GERUND.match(heading)
    if gerund and re.search(r"[aeiouy]", gerund.group(1).lower()):
        return f"What are the steps for {heading[0].lower()}{heading[1:]}?"
    topic = _EN_ABOUT.sub("", heading, count=1)
    return _fill(QUESTION_FORMS_EN["what_plural" if _PLURAL_PHRASE.fullmatch(topic.lower()) else "what"], x=topic)


_ASCII = re.compile(r"[!-~]")
_PLURAL_PHRASE = re.compile(r"[a-z][a-z ]*[^s]s")
_OBJECT_REACH = {"zh": 6, "en": 30}
"""How far after a task verb its object may start ("启动 Redis", "configure the data folder")."""


def _view(chunk: QuestionChunk) -> _ChunkView:
    text = f"{heading_label(chunk)}\n{chunk.content}"
    lang = language_of(text)
    sentences = split_sentences(chunk.content)
    ranked = salient_terms(sentences, lang).ranked()
    topic = strip_section_number(chunk.heading_path[-1] if chunk.heading_path else chunk.heading)
    if not topic or len(topic) > TOPIC_MAX:
        topic = ranked[0].text if ranked else cut(topic or chunk.key, TOPIC_MAX)
    names = [term.text for term in ranked if _singular(term.text) != _singular(topic)]
    names += [h for h in reversed(chunk.heading_path[:-1]) if h not in names and len(h) <= TOPIC_MAX]
    settings = [term.text for term in ranked if term.kind == ENTITY and _looks_like_setting(term.text)]
    commands = frozenset(term.text for term in ranked if term.kind == ENTITY and (" " in term.text or term.text.startswith("--")))
    concept = next((term.text for term in ranked if term.kind == CONCEPT and term.text != topic), topic)
    concepts = frozenset(term.text for term in ranked if term.kind == CONCEPT and term.text[:1].islower())
    signals = {name for name, pattern in CHUNK_SIGNALS.items() if pattern.search(chunk.content)}
    if any(not name[0].islower() for name in settings):
        signals.add("settings")  # flags and environment variables are settings by their looks
    verb, verb_object = _action(sentences, ranked, lang)
    default_setting = _default_setting(sentences, settings)
    return _ChunkView(lang, topic, names[:6], commands, concepts, concept, default_setting, verb, verb_object, frozenset(signals))


def _singular(name: str) -> str:
    """ "Snapshots" and "snapshot" name the same topic."""
    lowered = name.lower()
    return lowered[:-1] if lowered.endswith("s") and not lowered.endswith("ss") else lowered


def _looks_like_setting(name: str) -> bool:
    """Flags, environment variables and snake_case keys: the things a default belongs to."""
    return bool(re.fullmatch(r"--[\w-]+|[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+|[a-z][a-z0-9]*(?:_[a-z0-9]+)+", name))


def _default_setting(sentences: Sequence[Sentence], settings: Sequence[str]) -> str:
    """The setting a "default" is stated for: named near the cue in the same paragraph (a sentence before it,
    or a few after, as in a table whose header has a 默认值 / Default column)."""
    cue = CHUNK_SIGNALS["default"]
    for i, sentence in enumerate(sentences):
        match = cue.search(sentence.text)
        if not match:
            continue
        near = [s for s in sentences[max(0, i - 1) : i + 5] if s.paragraph == sentence.paragraph]
        at = sentence.start + match.start()
        spots = [(abs(s.start + s.text.find(name) - at), name) for s in near for name in settings if name in s.text]
        if spots:
            return min(spots)[1]
    return ""


def _action(sentences: Sequence[Sentence], ranked: Sequence[Term], lang: str) -> tuple[str, str]:
    """The first instruction in the chunk: a task verb and the term it acts on ("configure", "PETRICHOR_DATA")."""
    for sentence in sentences:
        for at, verb in _task_verbs(sentence.text, lang):
            after = sentence.text[at + len(verb) :]
            if lang == "zh" and has_cjk(after[:1]):
                continue  # a Han word glued to the verb usually makes one noun with it (构建 + 产物 = build artifacts)
            objects = [term for term in ranked if _within(term, after, _OBJECT_REACH[lang])]
            if objects:
                return verb, min(objects, key=lambda term: term.find(after)).text
    return "", ""


def _within(term: Term, text: str, reach: int) -> bool:
    """`0 <= term.find(text) <= reach`, searching only the head of `text` that can hold such a mention
    (one character past it, so the word boundary after a mention at `reach` is still checked)."""
    match = term.pattern.search(text, 0, reach + len(term.text) + 1)
    return match is not None and match.start() <= reach


def _task_verbs(text: str, lang: str) -> list[tuple[int, str]]:
    """Task verbs used as instructions: "Run …", "… to configure …", "可以通过 … 修改", "使用 X 启动 …".

    Elsewhere the word is usually a noun ("a failed build") or part of one (配置文件), and makes no
    "How do I" question; Chinese is checked on jieba's words for that reason.
    """
    if lang == "en":
        lowered = text.lower()
        found = [(m.end() - len(verb), verb) for verb in TASK_VERBS_EN if verb in lowered and (m := _EN_INSTRUCTION[verb].search(lowered))]
        return sorted(found)
    if not any(verb in text for verb in TASK_VERBS_ZH):
        return []  # no verb to find: spare the segmentation
    out, pos, previous = [], 0, ""
    for word in zh_words(text):
        if word in TASK_VERBS_ZH and (not previous or previous.isspace() or previous in TASK_LEADS_ZH):
            out.append((pos, word))
        pos += len(word)
        previous = word
    return out


def _fill(template: str, **values: str) -> str:
    """Format a template with a space where Han characters meet ASCII ("什么是 Redis？")."""
    text = ""
    for literal, name, _, _ in string.Formatter().parse(template):
        text = _join(text, literal)
        if name is None:
            continue
        text = _join(text, values[name])
    return text


def _join(left: str, right: str) -> str:
    """Only the seam between template and value is spaced; a value's own text is never changed."""
    if not left or not right:
        return left + right
    if (has_cjk(left[-1]) and _ASCII.match(right)) or (_ASCII.match(left[-1]) and has_cjk(right[0])):
        return f"{left} {right}"
    return left + right
