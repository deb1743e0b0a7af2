"""The leave-gold-out variant: the sampled questions' gold evidence is gone, everything else is kept."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from petrichor.evaluation.dataset import Dataset, EvalDoc, EvalQuestion, GoldSection, load_dataset
from petrichor.evaluation.leave_gold_out import (
    SUBSET,
    drop_sections,
    evenly_spread,
    leave_gold_out,
    sections,
    variant_dataset,
)
from petrichor.evaluation.metrics import GoldPassage
from tests.conftest import SHARED_EVAL

GUIDE = """# Guide

Intro line.

## Install

Run the installer.

```bash
# not a heading: a shell comment
make install
```

### Offline install

Copy the wheel first.

## Configure

Set the variable.
"""


def test_sections_follow_headings_not_code_comments():
    found = {s.path: (s.start, s.end) for s in sections(GUIDE)}
    assert ("Guide", "Install", "Offline install") in found
    assert not any("not a heading" in " ".join(p) for p in found)
    assert len(found) == 4


def test_drop_sections_removes_a_section_own_text_and_keeps_the_rest():
    out = drop_sections(GUIDE, [("Install",)])
    assert "Run the installer." not in out and "make install" not in out
    assert "Copy the wheel first." in out  # its subsection is a section of its own
    assert "Set the variable." in out and "Intro line." in out
    both = drop_sections(GUIDE, [("Install",), ("Install", "Offline install")])
    assert "Copy the wheel first." not in both


def _cmrc_like(n_docs: int, sampled: int) -> tuple[Dataset, list[EvalDoc]]:
    docs = [EvalDoc(f"D{i}", f"标题{i}", f"第{i}段的内容。答案是甲{i}乙。其余文字{i}。") for i in range(n_docs)]
    questions = tuple(
        EvalQuestion(f"Q{i}", f"问题{i}？", (f"D{i}",), answers_all=(f"甲{i}乙",), gold_passages=(f"答案是甲{i}乙。",), lang="zh")
        for i in range(n_docs)
    )
    return Dataset("set", tuple(docs), questions), docs


@settings(max_examples=40, deadline=None)
@given(n_docs=st.integers(min_value=1, max_value=60), count=st.integers(min_value=1, max_value=80))
def test_the_variant_never_holds_a_sampled_gold_passage_and_keeps_every_other_document(n_docs, count):
    dataset, docs = _cmrc_like(n_docs, count)
    made = leave_gold_out(dataset, count)
    kept = {d.doc_id: d for d in made.docs}
    by_id = {q.qid: q for q in dataset.questions}
    assert len(made.sampled) == min(count, n_docs)
    for qid in made.sampled:
        passage = GoldPassage.of(by_id[qid].gold_passages[0], "zh")
        assert not any(passage.found_in(d.content) for d in made.docs)
    gone = {g for qid in made.sampled for g in by_id[qid].gold_doc_ids}
    assert [d for d in docs if d.doc_id not in gone] == list(made.docs)  # every other document, unchanged, in order
    assert {q.qid for q in made.unanswerable} == set(made.sampled)
    assert all(q.subset == SUBSET for q in made.unanswerable)
    assert all(set(q.gold_doc_ids) <= set(kept) for q in made.answerable)


def test_questions_sharing_a_passage_leave_together_and_a_repeated_passage_is_passed_over():
    shared = "The backup runs every night at two."
    docs = (
        EvalDoc("a", "A", f"# A\n\n## Backups\n\n{shared}\n\n## Restore\n\nRestore from the newest copy."),
        EvalDoc("b", "B", f"# B\n\n## Copy\n\nThe primary copy of the text: {shared}"),
        EvalDoc("c", "C", "# C\n\n## Ports\n\nThe service listens on port eight thousand and one."),
    )
    questions = (
        EvalQuestion("q1", "When does the backup run?", ("a",), gold_passages=(shared,), gold_sections=(GoldSection("a", ("Backups",)),)),
        EvalQuestion(
            "q2",
            "Which port?",
            ("c",),
            gold_passages=("The service listens on port eight thousand and one.",),
            gold_sections=(GoldSection("c", ("Ports",)),),
        ),
        EvalQuestion(
            "q3",
            "What port is used?",
            ("c",),
            gold_passages=("The service listens on port eight thousand and one.",),
            gold_sections=(GoldSection("c", ("Ports",)),),
        ),
    )
    made = leave_gold_out(Dataset("s", docs, questions), 2)
    assert made.passed_over == 1  # q1's passage is repeated in b: not unanswerable there
    assert made.sampled == ("q2",)
    assert {q.qid for q in made.unanswerable} == {"q2", "q3"}
    assert [q.qid for q in made.answerable] == ["q1"]
    assert [d.doc_id for d in made.docs] == ["a", "b", "c"]
    assert "eight thousand" not in made.docs[2].content and "# C" in made.docs[2].content
    assert made.docs[0] == docs[0] and made.docs[1] == docs[1]


def test_every_prefix_of_the_spread_covers_the_set():
    items = [EvalQuestion(str(i), "q", ("d",)) for i in range(100)]
    order = [int(q.qid) for q in evenly_spread(items)]
    assert sorted(order) == list(range(100))
    first = sorted(order[:10])
    assert first[0] == 0 and first[-1] >= 80  # ten picks reach the end of the set, not just its start


def test_variant_dataset_names_the_variant_and_asks_the_left_out_as_unanswerable():
    dataset, _ = _cmrc_like(10, 3)
    variant, made = variant_dataset(dataset, 3)
    assert variant.name == "set.leave-gold-out"
    assert {q.qid for q in variant.unanswerable} == set(made.sampled)
    assert len(variant.questions) == 7


def test_zero_is_refused():
    dataset, _ = _cmrc_like(3, 1)
    with pytest.raises(ValueError):
        leave_gold_out(dataset, 0)


@pytest.mark.parametrize("name", ["cmrc2018_zh", "rhdh_docs_en"])
def test_shared_sets(name):
    directory = Path(SHARED_EVAL) / name
    if not (directory / "qa.jsonl").is_file():
        pytest.skip(f"{directory} is not here")
    dataset = load_dataset(directory)
    made = leave_gold_out(dataset, 40)
    assert len(made.unanswerable) >= 40
    assert len(made.answerable) + len(made.unanswerable) == len(dataset.questions)
    by_id = {q.qid: q for q in dataset.questions}
    for qid in made.sampled:
        q = by_id[qid]
        for p in q.gold_passages:
            assert not any(GoldPassage.of(p, q.lang).found_in(f"{d.title}\n{d.content}") for d in made.docs)
    assert len(made.docs) >= len(dataset.docs) - len(made.sampled)


def test_limit_changes_neither_the_variant_corpus_nor_the_follow_ups(tmp_path):
    import json

    from petrichor.evaluation.harness import EvalConfig, prepare

    dataset, docs = _cmrc_like(12, 0)
    folder = tmp_path / "set"
    folder.mkdir()
    (folder / "docs.jsonl").write_text("\n".join(json.dumps(d.__dict__, ensure_ascii=False) for d in docs), encoding="utf-8")
    rows = [
        {
            "qid": q.qid,
            "question": f"标题{q.qid[1:]}的答案是什么？",
            "answers_all": list(q.answers_all),
            "gold_doc_ids": list(q.gold_doc_ids),
            "gold_passages": list(q.gold_passages),
        }
        for q in dataset.questions
    ]
    (folder / "qa.jsonl").write_text("\n".join(json.dumps(r, ensure_ascii=False) for r in rows), encoding="utf-8")

    def run(limit):
        config = EvalConfig(
            dataset_dir=folder, root=tmp_path / "root", embed_cache_dir=tmp_path, limit=limit, answers=True, leave_gold_out=3, followups=4
        )
        return prepare(config, log=lambda _: None)

    whole, info, pairs = run(0)
    part, info_part, pairs_part = run(2)
    assert whole.docs == part.docs and info == info_part and pairs == pairs_part and len(pairs) == 4
    assert len(whole.questions) == 9 and len(part.questions) == 2 and len(part.unanswerable) == 2
