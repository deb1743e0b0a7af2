"""`petrichor eval` end to end on a three-document set: build, search, baselines, answers, ablation, JSON, plots."""

from __future__ import annotations

import json

import pytest

from petrichor.cli import main
from tests.conftest import EMBED_CACHE

# The ids are chosen so that all three articles fall into one hash bucket: one Dagster bucket run, not three.
DOCS = [
    {
        "doc_id": "ops/redis-9",
        "title": "Redis operations",
        "content": "# Redis operations\n\nHow we run Redis.\n\n## Failover\n\nWhen the primary fails, Sentinel elects a "
        "new primary and tells every client the new address within thirty seconds.\n\n## Backups\n\nSnapshots are "
        "written every hour and kept for seven days on object storage.\n",
    },
    {
        "doc_id": "kafka0",
        "title": "Kafka basics",
        "content": "# Kafka basics\n\n## Consumer groups\n\nInside one consumer group every partition is read by exactly "
        "one consumer, so adding consumers beyond the partition count does not add throughput.\n",
    },
    {"doc_id": "DEV_0", "title": "马齐", "content": "马齐是清朝大臣。\n\n乾隆四年以87岁高龄去世，加太傅，谥文穆。"},
]
QUESTIONS = [
    {
        "qid": "en-1",
        "question": "How long does Sentinel take to announce the new primary after a failover?",
        "answer": "Within thirty seconds.",
        "gold_doc_ids": ["ops/redis-9"],
        "gold_passages": ["Sentinel elects a new primary and tells every client the new address within thirty seconds."],
        "gold_sections": [{"doc_id": "ops/redis-9", "heading_path": "Redis operations > Failover"}],
        "lang": "en",
    },
    {
        "qid": "en-2",
        "question": "Does adding consumers beyond the partition count add throughput, and how long are Redis snapshots kept?",
        "answer": "No; seven days.",
        "gold_doc_ids": ["kafka0", "ops/redis-9"],
        "gold_match": "all",
        "lang": "en",
    },
    {
        "qid": "zh-1",
        "question": "马齐去世后的谥号是什么？",
        "answer": "文穆",
        "answers_all": ["文穆"],
        "gold_doc_ids": ["DEV_0"],
        "gold_passages": ["乾隆四年以87岁高龄去世，加太傅，谥文穆。"],
        "lang": "zh",
    },
]

OTHER_QUESTIONS = [
    {"qid": "o1", "question": "What is the boiling point of mercury?", "answer": "357 °C", "gold_doc_ids": ["x"]},
    {"qid": "o2", "question": "北京冬奥会在哪一年举办？", "answer": ["2022年"], "gold_doc_ids": ["x"]},
]


@pytest.mark.slow
def test_eval_command(tmp_path, monkeypatch, capsys):
    dataset = tmp_path / "tiny_set"
    dataset.mkdir()
    (dataset / "docs.jsonl").write_text("\n".join(json.dumps(d, ensure_ascii=False) for d in DOCS), encoding="utf-8")
    (dataset / "qa.jsonl").write_text("\n".join(json.dumps(q, ensure_ascii=False) for q in QUESTIONS), encoding="utf-8")
    monkeypatch.setenv("PETRICHOR_DATA", str(tmp_path / "data"))
    monkeypatch.setenv("PETRICHOR_EMBED_CACHE", str(EMBED_CACHE))
    for name in ("PETRICHOR_LLM_BASE_URL", "PETRICHOR_EMBED_BASE_URL", "PETRICHOR_API_KEYS"):
        monkeypatch.delenv(name, raising=False)

    other = tmp_path / "other_set"  # its questions are unanswerable from tiny_set's corpus
    other.mkdir()
    (other / "docs.jsonl").write_text(json.dumps({"doc_id": "x", "title": "x", "content": "x"}) + "\n", encoding="utf-8")
    (other / "qa.jsonl").write_text("\n".join(json.dumps(q, ensure_ascii=False) for q in OTHER_QUESTIONS), encoding="utf-8")
    signals = tmp_path / "signals.jsonl"
    assert (
        main(
            [
                "eval",
                "--dataset",
                str(dataset),
                "--json",
                "--answers",
                "--plot",
                str(tmp_path / "plots"),
                "--unanswerable-from",
                str(other),
                "--unanswerable-sample",
                "2",
                "--signals",
                str(signals),
            ]
        )
        == 0
    )
    report = json.loads(capsys.readouterr().out)
    assert report["unanswerable_questions"] == {"null": 0, "leave-gold-out": 0, "cross:other_set": 2}
    for name in ("petrichor", "naive_hybrid"):
        assert report["methods"][name]["answer"]["not_found"]["cross:other_set"]["questions"] == 2
    assert report["methods"]["petrichor"]["answer"]["not_found"]["all"]["rate"] == 1.0
    assert report["answer_baseline"]["name"] == "naive_top_sentence" and report["answer_baseline"]["not_found"]["all"]["rate"] == 0.0
    assert report["methods"]["petrichor"]["answer"]["without_gate"]["questions"] == 3
    rows = [json.loads(line) for line in signals.read_text(encoding="utf-8").splitlines()]
    assert [r["kind"] for r in rows] == ["answerable"] * 3 + ["cross:other_set"] * 2

    assert report["dataset"] == "tiny_set" and report["questions"] == 3
    assert set(report["methods"]) == {"petrichor", "naive_hybrid", "naive_vector", "naive_bm25"}
    for method in report["methods"].values():
        assert set(method["doc"]) == {"recall@1", "recall@5", "recall@10", "mrr@10"}
        assert {"recall@5", "recall@10"} <= set(method["chunk"])
        assert set(method["section"]) == {"recall@5", "recall@10"}
        assert set(method["latency_ms"]) == {"p50", "p95"}
        assert method["answer"]["exact_match"] is not None and method["answer"]["f1"] is not None
    for method in report["methods"].values():  # en-2 needs both of its documents
        assert method["all_gold"]["questions"] == 1 and method["all_gold"]["recall@5"] is not None
    petrichor = report["methods"]["petrichor"]
    assert petrichor["doc"]["recall@5"] == 1.0, petrichor
    assert petrichor["chunk"]["recall@5"] == 1.0 and petrichor["section"]["recall@5"] == 1.0, petrichor
    assert petrichor["answer"]["f1"] > 0, petrichor["answer"]
    assert {"full", "no_chunk_vector", "wiki_on", "no_questions", "no_rerank", "no_dense_rerank", "tokenizer_jieba"} <= set(report["ablation"])
    assert (tmp_path / "data" / "eval" / "tiny_set" / "corpus" / "eval").is_dir()
    assert sorted(p.name for p in (tmp_path / "plots").iterdir()) == [
        "tiny_set-all_doc-recall.png",
        "tiny_set-doc-recall.png",
        "tiny_set-passage-recall.png",
        "tiny_set-section-recall.png",
    ]

    # a second run over the unchanged set publishes nothing new and skips the ablation as asked
    assert main(["eval", "--dataset", str(dataset), "--json", "--no-ablation", "--limit", "1"]) == 0
    again = json.loads(capsys.readouterr().out)
    assert again["snapshot"]["version"] == report["snapshot"]["version"]
    assert again["questions"] == 1 and again["ablation"] == {}

    # the leave-gold-out variant: built beside the set, the left-out question asked as in-domain unanswerable
    assert main(["eval", "--dataset", str(dataset), "--json", "--no-ablation", "--answers", "--leave-gold-out", "1", "--followups", "1"]) == 0
    variant = json.loads(capsys.readouterr().out)
    assert variant["dataset"] == "tiny_set.leave-gold-out" and variant["leave_gold_out"]["sampled"] == 1
    left = variant["unanswerable_questions"]["leave-gold-out"]
    assert left >= 1 and variant["questions"] == 3 - left
    assert variant["methods"]["petrichor"]["answer"]["not_found"]["in_domain"]["questions"] == left
    assert (tmp_path / "data" / "eval" / "tiny_set.leave-gold-out" / "corpus" / "eval").is_dir()


def _tiny(tmp_path):
    dataset = tmp_path / "tiny_set"
    dataset.mkdir()
    (dataset / "docs.jsonl").write_text("\n".join(json.dumps(d, ensure_ascii=False) for d in DOCS), encoding="utf-8")
    (dataset / "qa.jsonl").write_text("\n".join(json.dumps(q, ensure_ascii=False) for q in QUESTIONS), encoding="utf-8")
    return dataset


@pytest.mark.parametrize("option", ["--leave-gold-out", "--followups"])
def test_new_options_need_answers(tmp_path, capsys, option):
    assert main(["eval", "--dataset", str(_tiny(tmp_path)), option, "3"]) == 2
    assert "need --answers" in " ".join(capsys.readouterr().err.split())


@pytest.mark.parametrize("value", ["-1", "two"])
def test_counts_must_be_whole_and_not_negative(tmp_path, capsys, value):
    with pytest.raises(SystemExit) as exc:
        main(["eval", "--dataset", str(_tiny(tmp_path)), "--answers", "--leave-gold-out", value])
    assert exc.value.code == 2
    assert "--leave-gold-out" in capsys.readouterr().err


def test_a_corpus_folder_set_cannot_leave_gold_out(capsys):
    from tests.conftest import REPO

    assert main(["eval", "--dataset", str(REPO / "tests" / "fixtures" / "bundled_eval"), "--answers", "--leave-gold-out", "5"]) == 2
    assert "needs a set with docs.jsonl" in " ".join(capsys.readouterr().err.split())


def test_a_set_without_its_documents_is_refused(tmp_path, capsys):
    folder = tmp_path / "half"
    folder.mkdir()
    (folder / "qa.jsonl").write_text("{}\n", encoding="utf-8")
    assert main(["eval", "--dataset", str(folder)]) == 2
    assert "needs qa.jsonl and docs.jsonl (or source.json" in " ".join(capsys.readouterr().err.split())


def test_help_documents_the_options(capsys):
    with pytest.raises(SystemExit):
        main(["eval", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "--leave-gold-out N" in text and "--followups N" in text and "leave-gold-out/" in text
