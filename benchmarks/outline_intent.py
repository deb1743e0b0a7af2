"""Which questions the agent routes to a section outline, with each word class of the outline intent left out.

    python benchmarks/outline_intent.py --set rhdh_structure=<data of rhdh_docs_en>:benchmarks/data/rhdh_structure.jsonl \
        --set rhdh=<data of rhdh_docs_en>:../shared/eval/rhdh_docs_en/qa.jsonl --set cmrc=<data>:<qa.jsonl> ...

A set named `*_structure` asks for outlines (every question should be routed there); every other set asks
facts, so a question routed to an outline there is a false outline. Each variant empties one word class of
`petrichor_serving.agent.structure` (or switches off one pattern) and counts both, so each class's docstring can
state what it buys on every set. No answer is computed: the route is decided before any tool runs.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from petrichor_serving.agent import loop, structure  # noqa: E402
from petrichor_serving.agent.router import QuestionClass  # noqa: E402
from petrichor_serving.recall.access import Scope  # noqa: E402
from petrichor_serving.snapshot import SnapshotStore  # noqa: E402

_NEVER = re.compile(r"(?!x)x")


def _emptied(name: str) -> Callable[[], dict[str, object]]:
    def patch() -> dict[str, object]:
        out: dict[str, object] = {name: frozenset()}
        classes = {n: frozenset() if n == name else getattr(structure, n) for n in ("PART_WORDS", "COVER_WORDS", "FRAME_WORDS")}
        out["STRUCTURE_WORDS"] = frozenset().union(*classes.values())
        return out

    return patch


VARIANTS: dict[str, Callable[[], dict[str, object]]] = {
    "default": dict,
    "no_part_words": _emptied("PART_WORDS"),
    "no_cover_words": _emptied("COVER_WORDS"),
    "no_frame_words": _emptied("FRAME_WORDS"),
    "no_cover_phrases": lambda: {"COVER_PHRASES": _NEVER},
    "no_asks_for_parts": lambda: {"ASKS_FOR_PARTS": _NEVER},
}


@contextmanager
def patched(values: dict[str, object]) -> Iterator[None]:
    saved = {name: getattr(structure, name) for name in values}
    for name, value in values.items():
        setattr(structure, name, value)
    structure._cache.clear()
    try:
        yield
    finally:
        for name, value in saved.items():
            setattr(structure, name, value)
        structure._cache.clear()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--set", action="append", required=True, help="NAME=DATA_DIR:QUESTIONS_JSONL")
    args = parser.parse_args(argv)
    sets = []
    for spec in args.set:
        name, _, rest = spec.partition("=")
        data, _, questions = rest.rpartition(":")
        store = SnapshotStore(Path(data))
        store.refresh()
        if store.current is None:
            raise SystemExit(f"no snapshot in {data}")
        rows = [json.loads(line) for line in Path(questions).read_text(encoding="utf-8").splitlines() if line.strip()]
        sets.append((name, store.current, [r["question"] for r in rows if r.get("answerable", True)]))
    report: dict[str, dict[str, str]] = {}
    for variant, patch in VARIANTS.items():
        with patched(patch()):
            row = {}
            for name, snap, questions in sets:
                routed = sum(loop._route(snap, Scope(), q).kind == QuestionClass.STRUCTURE for q in questions)
                row[name] = f"{routed}/{len(questions)}"
            report[variant] = row
            print(json.dumps({"variant": variant, **row}), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
