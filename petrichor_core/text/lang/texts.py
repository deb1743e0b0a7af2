"""Fixed texts a reader sees, in each language the product answers in: one home for every wording.

Each text is here once, named for what it says; the modules that show it import it. A text in both
languages is a `{"zh": …, "en": …}` mapping; one the build writes only in Chinese (its wiki pages are
Chinese) is a plain string.
"""

from __future__ import annotations

from petrichor_core.text.lang.script import Language

NOT_FOUND: dict[Language, str] = {
    "zh": "知识库中没有找到能回答这个问题的内容。",
    "en": "The knowledge base has nothing that answers this question.",
}
"""The answer when the evidence answers nothing: the agent's and the offline model's, in each language."""
