"""Script detection has one home (`petrichor_core/text/lang/script.py`: `CJK_RANGES`, `CJK_CLASS`, `CJK`,
`has_cjk`): a module writing its own range of Han code points drifts from it (three different ranges were
found in six files). Two ranges are other rules and stay where they are, named here."""

from __future__ import annotations

import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
PACKAGES = ("petrichor", "petrichor_core", "petrichor_pipeline", "petrichor_serving")
HOME = Path("petrichor_core/text/lang")
OTHER_RULES = {
    Path("petrichor_pipeline/knowledge/page_keys.py"): "the page-key alphabet, frozen by the snapshot contract",
    Path("petrichor_pipeline/knowledge/page_index.py"): "display width: kana and hangul count as wide too",
}
HAN_RANGE = re.compile(r"\\u(?:3400|4e00|9fa5|9fff)|[\u4e00\u9fa5\u9fff]-|-[\u9fa5\u9fff]", re.I)


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
