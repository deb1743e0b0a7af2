"""The language module (`petrichor_core/text/lang/`) is the one home of what depends on the language a text is
written in: script detection (`script.py`), function words (`stopwords.py`), question words
(`question_words.py`), numerals and units (`numbers.py`), cue words (`cues.py`), suffix lists (`suffixes.py`)
and the fixed texts a reader sees (`texts.py`). A copy elsewhere drifts from it: three different ranges of
Han code points were found in six files, and five Chinese question-word lists, three suffix lists and the
answer texts in as many modules.

Checked here, over every module of the four packages:

- no module writes its own range of Han code points (two ranges are other rules, named in `OTHER_RULES`);
- no string literal outside the language module holds a Han character (docstrings and comments may quote
  Chinese examples); the few places where Chinese is not a language rule are named in `HAN_ALLOWED`, each
  with its reason;
- no module outside the language module lists English question words (in a regex alternation, a tuple or
  set of strings, or a word list).
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from pathlib import Path

from petrichor_core.text.lang import CJK

REPO = Path(__file__).resolve().parents[2]
PACKAGES = ("petrichor", "petrichor_core", "petrichor_pipeline", "petrichor_serving")
HOME = Path("petrichor_core/text/lang")

OTHER_RULES = {
    Path("petrichor_pipeline/knowledge/page_keys.py"): "the page-key alphabet, frozen by the snapshot contract",
    Path("petrichor_pipeline/knowledge/page_index.py"): "display width: kana and hangul count as wide too",
}
"""Han ranges that are rules of their own, not script detection."""
HAN_RANGE = re.compile(r"\\u(?:3400|4e00|9fa5|9fff)|[\u4e00\u9fa5\u9fff]-|-[\u9fa5\u9fff]", re.I)

HAN_ALLOWED = {
    "petrichor_core/models/prompts.py": "the chat model's prompt templates and the catalog lines they carry: the "
    "protocol with the model, written in Chinese, versioned by CHAT_PROMPT_VERSION (part of the chat fingerprint) "
    "beside their JSON reply contracts; no reader of text uses them",
    "petrichor_pipeline/knowledge/page_keys.py::_key_char": "the page-key alphabet (U+4E00–U+9FA5 as escapes), "
    "frozen by the snapshot contract (`OTHER_RULES`)",
    "petrichor_pipeline/knowledge/page_index.py::token_estimate": "display width as escapes: CJK, kana and hangul "
    "count one token each (`OTHER_RULES`)",
    "petrichor/evaluation/": "the yardstick, not the product: the follow-up questions it writes (它, 介绍一下…), its "
    "warm-up query and its help text are evaluation data, kept apart from the product's word lists so that "
    "changing one cannot move what is measured",
}
"""Where a string literal may hold a Han character outside the language module: a file, a folder (ending in
`/`), or one top-level definition (`file::name`)."""

_WH = "what|which|who|whom|whose|when|where|why|how"
WH_WORD = re.compile(rf"\b(?:{_WH})\b", re.I)
WH_ALTERNATIVE = re.compile(rf"(?:^|[|(:])({_WH})(?=[|)])", re.I)
"""An English question word as an alternative of a regex group (`(?:what|which)`, `…|when|…`)."""


def _modules() -> Iterator[tuple[Path, ast.Module]]:
    for package in PACKAGES:
        for path in sorted((REPO / package).rglob("*.py")):
            rel = path.relative_to(REPO)
            if HOME not in rel.parents:
                yield rel, ast.parse(path.read_text(encoding="utf-8"))


def _literals(tree: ast.Module) -> Iterator[tuple[str, ast.expr]]:
    """Every string literal and collection literal outside docstrings, with the name of the top-level
    definition holding it ("" for a bare statement)."""
    docstrings = {id(n.value) for n in ast.walk(tree) if isinstance(n, ast.Expr) and isinstance(n.value, ast.Constant)}
    for top in tree.body:
        if isinstance(top, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            name = top.name
        elif isinstance(top, (ast.Assign, ast.AnnAssign)):
            targets = top.targets if isinstance(top, ast.Assign) else [top.target]
            name = next((t.id for t in targets if isinstance(t, ast.Name)), "")
        else:
            name = ""
        for node in ast.walk(top):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings:
                yield name, node
            elif isinstance(node, (ast.Tuple, ast.List, ast.Set)):
                yield name, node


def _allowed(rel: Path, name: str) -> bool:
    return any(key == str(rel) or key == f"{rel}::{name}" or (key.endswith("/") and str(rel).startswith(key)) for key in HAN_ALLOWED)


def _han_literals() -> list[tuple[Path, str, int, str]]:
    return [
        (rel, name, node.lineno, node.value)
        for rel, tree in _modules()
        for name, node in _literals(tree)
        if isinstance(node, ast.Constant) and CJK.search(node.value)
    ]


def test_no_module_but_lang_writes_a_han_range() -> None:
    found = []
    for package in PACKAGES:
        for path in sorted((REPO / package).rglob("*.py")):
            rel = path.relative_to(REPO)
            if HOME in rel.parents or rel in OTHER_RULES:
                continue
            for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
                if HAN_RANGE.search(line):
                    found.append(f"{rel}:{n}: {line.strip()}")
    assert found == [], "use petrichor_core.text.lang (CJK_CLASS, CJK, has_cjk):\n" + "\n".join(found)


def test_the_named_exceptions_still_hold_their_own_rule() -> None:
    for rel in OTHER_RULES:
        assert HAN_RANGE.search((REPO / rel).read_text(encoding="utf-8")), f"{rel} no longer needs its exception"


def test_no_string_literal_outside_lang_holds_a_han_character() -> None:
    """A Chinese word list, pattern or answer text belongs in the language module (`petrichor_core.text.lang`):
    `question_words`, `stopwords`, `numbers`, `cues` or `texts`, imported from there."""
    found = [f"{rel}:{line} ({name or 'module'}): {value[:60]!r}" for rel, name, line, value in _han_literals() if not _allowed(rel, name)]
    assert found == [], "move these to petrichor_core/text/lang/ (or name the exception in HAN_ALLOWED):\n" + "\n".join(found)


def test_each_han_exception_is_still_needed() -> None:
    held = [(rel, name) for rel, name, _, _ in _han_literals()]
    for key in HAN_ALLOWED:
        path, _, name = key.partition("::")
        if path.endswith("/"):
            assert any(str(rel).startswith(path) for rel, _ in held), f"{key} no longer holds Chinese: drop its exception"
        else:
            assert any(str(rel) == path and (not name or n == name) for rel, n in held), f"{key} no longer holds Chinese: drop its exception"


def test_no_module_outside_lang_lists_english_question_words() -> None:
    """Question words (what, which, who, … how) listed as a regex's alternatives, as elements of a tuple or a
    set, or three of them in one word list are a question-word list: `lang.question_words` holds them."""
    found = []
    for rel, tree in _modules():
        for name, node in _literals(tree):
            if isinstance(node, ast.Constant):
                alternatives = {m.lower() for m in WH_ALTERNATIVE.findall(node.value)}
                words = {m.lower() for m in WH_WORD.findall(node.value)}
                listed = len(alternatives) >= 2 or (len(words) >= 3 and not re.search(r"[.,;:]\s", node.value))
            else:
                elements = [e.value.lower() for e in node.elts if isinstance(e, ast.Constant) and isinstance(e.value, str)]
                listed = len({e for e in elements if WH_WORD.fullmatch(e)}) >= 2
            if listed:
                found.append(f"{rel}:{node.lineno} ({name or 'module'})")
    assert found == [], "move these to petrichor_core/text/lang/question_words.py:\n" + "\n".join(found)
