"""The offline chat model: deterministic, grounded in its input, useful enough to build a knowledge base."""

from __future__ import annotations

import re

import jieba
import pytest

from petrichor_core.models.offline.model import OfflineChatModel
from petrichor_core.models.protocols import (
    CallContext,
    CandidateRequest,
    EvidenceText,
    PageRequest,
    QuestionChunk,
    TreeNodeText,
    UsageMeter,
)
from petrichor_core.text.lang import NOT_FOUND, has_cjk, init_jieba
from petrichor_core.versions import CHAT_PROMPT_VERSION, OFFLINE_MODEL_VERSION
from petrichor_serving.answer.answerer import OfflineAnswerer

ANSWERER = OfflineAnswerer()
"""The offline answers are serving's (`petrichor_serving.answer`); the build's offline model does not answer."""

EN_DOC = """# Operating the pipeline

The pipeline compiles Markdown articles into an immutable snapshot. Set PETRICHOR_DATA to choose the data folder; the default is `./data`.
Run `petrichor build --force` to rebuild every partition after changing the chunker.

## Snapshots

The snapshot manifest is written last, because a failed build must leave the previous snapshot serving.
Each snapshot manifest records the embedding fingerprint and the row counts of every table.
Serving replicas load the snapshot manifest through the /api/snapshot endpoint.

## Partitions

Each hash bucket holds the articles whose article_id hashes to it. Hash buckets keep a change local:
only the bucket whose articles changed is materialized again. LanceDB tables are opened at the version
recorded in the snapshot manifest.
"""

ZH_DOC = """# Redis 运维手册

本文介绍 Redis 的部署、持久化与故障转移，面向负责缓存集群的运维工程师。

## 部署

使用 `docker compose up -d` 启动 Redis 服务。默认端口是 6379，可以通过 REDIS_PORT 环境变量修改。
生产环境建议开启持久化，并把数据目录挂载到独立磁盘。

## 持久化

Redis 提供 RDB 快照和 AOF 日志两种持久化方式。RDB 快照体积小、恢复快，适合备份；AOF 日志记录每次写入，数据更完整。
同时开启 RDB 快照和 AOF 日志时，重启后优先使用 AOF 日志恢复数据。

## 故障转移

Redis Sentinel 负责监控主节点，在主节点故障时自动把从节点提升为新的主节点。故障转移完成后，客户端通过 Sentinel 获取新的主节点地址。
"""

ZH_CHUNKS = [
    QuestionChunk("chunk-001", "部署", ("Redis 运维手册", "部署"), ZH_DOC[ZH_DOC.index("## 部署") : ZH_DOC.index("## 持久化")].strip()),
    QuestionChunk("chunk-002", "持久化", ("Redis 运维手册", "持久化"), ZH_DOC[ZH_DOC.index("## 持久化") : ZH_DOC.index("## 故障转移")].strip()),
    QuestionChunk("chunk-003", "故障转移", ("Redis 运维手册", "故障转移"), ZH_DOC[ZH_DOC.index("## 故障转移") :].strip()),
]
EN_CHUNKS = [
    QuestionChunk("chunk-001", "Operating the pipeline", ("Operating the pipeline",), EN_DOC[: EN_DOC.index("## Snapshots")].strip()),
    QuestionChunk(
        "chunk-002",
        "Snapshots",
        ("Operating the pipeline", "Snapshots"),
        EN_DOC[EN_DOC.index("## Snapshots") : EN_DOC.index("## Partitions")].strip(),
    ),
    QuestionChunk("chunk-003", "Partitions", ("Operating the pipeline", "Partitions"), EN_DOC[EN_DOC.index("## Partitions") :].strip()),
]
# Terms a reader would say each chunk is about (a hand-made oracle, not the model's own term list).
CHUNK_TERMS = {
    ("zh", "chunk-001"): ["Redis", "docker compose up -d", "REDIS_PORT", "端口", "持久化", "数据目录", "部署", "生产环境"],
    ("zh", "chunk-002"): ["RDB", "AOF", "快照", "日志", "持久化", "数据"],
    ("zh", "chunk-003"): ["Redis Sentinel", "Sentinel", "主节点", "从节点", "故障转移", "客户端"],
    ("en", "chunk-001"): ["PETRICHOR_DATA", "petrichor build --force", "snapshot", "Markdown", "pipeline", "data folder", "partition", "chunker"],
    ("en", "chunk-002"): [
        "serving",
        "snapshot manifest",
        "snapshot",
        "/api/snapshot",
        "embedding fingerprint",
        "row counts",
        "failed build",
        "Snapshots",
    ],
    ("en", "chunk-003"): ["hash", "hash bucket", "article_id", "LanceDB", "bucket", "snapshot manifest", "Partitions"],
}

CTX = CallContext(article_id="art-1")


@pytest.fixture(scope="module")
def model() -> OfflineChatModel:
    return OfflineChatModel()


def test_fingerprint() -> None:
    assert OfflineChatModel.fingerprint == f"offline:{OFFLINE_MODEL_VERSION}:{CHAT_PROMPT_VERSION}"


def test_same_input_gives_the_same_output(model: OfflineChatModel) -> None:
    other = OfflineChatModel()
    assert model.generate_questions(ZH_CHUNKS + EN_CHUNKS, CTX) == other.generate_questions(ZH_CHUNKS + EN_CHUNKS, CTX)
    for doc in (ZH_DOC, EN_DOC):
        req = CandidateRequest("kb", "t", doc)
        first = model.extract_candidates(req, CTX)
        assert first == other.extract_candidates(req, CTX)
        candidates = first["entities"] + first["concepts"]
        assert model.plan_catalog(candidates, [], CTX) == other.plan_catalog(candidates, [], CTX)
        page_req = PageRequest("t", doc, candidates, first["relations"], candidates[:4])
        assert model.generate_pages(page_req, CTX) == other.generate_pages(page_req, CTX)
    evidence = [EvidenceText("e1", "t", (), ZH_DOC)]
    assert ANSWERER.answer("Redis 默认端口是多少？", evidence, CTX) == ANSWERER.answer("Redis 默认端口是多少？", evidence, CTX)


@pytest.mark.parametrize("lang,chunks", [("zh", ZH_CHUNKS), ("en", EN_CHUNKS)])
def test_three_distinct_questions_per_chunk_about_its_own_terms(model: OfflineChatModel, lang: str, chunks: list[QuestionChunk]) -> None:
    questions = model.generate_questions(chunks, CTX)["questions"]
    assert list(questions) == [c.key for c in chunks]
    for chunk in chunks:
        asked = questions[chunk.key]
        assert len(asked) == 3 and len(set(asked)) == 3, asked
        for question in asked:
            assert any(term.lower() in question.lower() for term in CHUNK_TERMS[(lang, chunk.key)]), question
            assert question.endswith("？" if lang == "zh" else "?")
            assert question.rstrip("？?") not in chunk.content, "a question must not be a sentence of the chunk"
            if lang == "zh":
                assert has_cjk(question)
    assert any(q.startswith("What is the default of PETRICHOR_DATA") for q in model.generate_questions(EN_CHUNKS, CTX)["questions"]["chunk-001"])


def test_a_chunk_with_almost_no_text_still_gets_three_questions(model: OfflineChatModel) -> None:
    chunk = QuestionChunk("chunk-001", "部署指南", (), "导语一段。")
    asked = model.generate_questions([chunk], CTX)["questions"]["chunk-001"]
    assert len(set(asked)) == 3


@pytest.mark.parametrize("doc,relation_type", [(ZH_DOC, "关联"), (EN_DOC, "related")])
def test_candidates_are_within_limits_and_grounded(model: OfflineChatModel, doc: str, relation_type: str) -> None:
    reply = model.extract_candidates(CandidateRequest("kb", "title", doc), CTX)
    items = reply["entities"] + reply["concepts"]
    assert 5 <= len(items) <= 24
    keys = {item["pageKey"] for item in items}
    assert len(keys) == len(items)
    for item in reply["entities"]:
        assert item["kind"] == "entity" and item["pageKey"] == f"entity/{item['name']}"
    for item in reply["concepts"]:
        assert item["kind"] == "concept" and item["pageKey"] == f"concept/{item['name']}"
    for item in items:
        assert item["summary"] and item["summary"] in doc
        assert item["name"].lower() in item["summary"].lower()
    assert reply["relations"]
    for relation in reply["relations"]:
        assert relation["fromPageKey"] in keys and relation["toPageKey"] in keys
        assert relation["fromPageKey"] != relation["toPageKey"]
        assert relation["relationType"] == relation_type
        assert relation["description"] in doc
    summary = reply["documentSummary"]
    assert summary and summary.split("。")[0].split(". ")[0] in doc


def test_candidates_find_the_identifiers_and_names(model: OfflineChatModel) -> None:
    en = {i["name"] for i in model.extract_candidates(CandidateRequest("kb", "t", EN_DOC), CTX)["entities"]}
    assert {"PETRICHOR_DATA", "petrichor build --force", "/api/snapshot", "article_id", "LanceDB"} <= en
    zh = model.extract_candidates(CandidateRequest("kb", "t", ZH_DOC), CTX)
    names = {i["name"] for i in zh["entities"] + zh["concepts"]}
    assert {"Redis", "REDIS_PORT", "RDB", "AOF"} <= names
    assert names & {"主节点", "快照", "日志", "持久化"}


def test_catalog_groups_by_section_in_at_most_two_levels(model: OfflineChatModel) -> None:
    reply = model.extract_candidates(CandidateRequest("kb", "t", EN_DOC), CTX)
    candidates = reply["entities"] + reply["concepts"]
    plan = model.plan_catalog(candidates, ["Storage / Partitions"], CTX)["assignments"]
    assert [a["pageKey"] for a in plan] == [c["pageKey"] for c in candidates]
    by_key = {a["pageKey"]: a["path"] for a in plan}
    for path in by_key.values():
        assert len(path) <= 2 and not {"实体", "概念", "entity", "concept"} & {p.lower() for p in path}
    assert by_key["entity//api/snapshot"] == ["Snapshots"]
    assert by_key["entity/article_id"] == ["Storage", "Partitions"], "an existing folder is reused"
    assert len({p[0] for p in by_key.values() if p}) <= 6


def test_pages_link_only_to_valid_co_occurring_pages(model: OfflineChatModel) -> None:
    reply = model.extract_candidates(CandidateRequest("kb", "t", ZH_DOC), CTX)
    candidates = reply["entities"] + reply["concepts"]
    requested = candidates[:4]
    pages = model.generate_pages(PageRequest("t", ZH_DOC, candidates, reply["relations"], requested), CTX)["pages"]
    assert [p["pageKey"] for p in pages] == [c["pageKey"] for c in requested]
    valid = {c["pageKey"] for c in candidates}
    linked_any = False
    for page, candidate in zip(pages, requested):
        assert page["contentMd"].startswith(f"# {candidate['name']}\n\n")
        assert 0 < len(page["summary"]) <= 80
        links = re.findall(r"\[\[([^|\]]+)\|([^\]]+)\]\]", page["contentMd"])
        for key, _ in links:
            assert key in valid and key != page["pageKey"]
        linked_any = linked_any or bool(links)
    assert linked_any


def test_tree_summaries_are_one_short_extractive_sentence(model: OfflineChatModel) -> None:
    nodes = [
        TreeNodeText(0, 0, "Redis 运维手册", ""),
        TreeNodeText(1, 2, "持久化", ZH_DOC[ZH_DOC.index("Redis 提供") : ZH_DOC.index("## 故障转移")]),
        TreeNodeText(2, 2, "Snapshots", EN_DOC[EN_DOC.index("The snapshot manifest") : EN_DOC.index("## Partitions")]),
        TreeNodeText(3, 2, "Long", "这是一个很长的句子" * 20 + "。"),
    ]
    summaries = model.summarize_tree(nodes, CTX)["summaries"]
    assert set(summaries) == {"1", "2", "3"}
    assert summaries["1"] == "Redis 提供 RDB 快照和 AOF 日志两种持久化方式。"
    assert summaries["2"].startswith("The snapshot manifest is written last") and len(summaries["2"]) <= 160
    assert len(summaries["3"]) <= 60 and summaries["3"].endswith("…")


def test_answer_quotes_are_verbatim_and_cited(model: OfflineChatModel) -> None:
    evidence = [
        EvidenceText("chunk-a", "运维", ("部署",), ZH_CHUNKS[0].content),
        EvidenceText("chunk-b", "运维", ("持久化",), ZH_CHUNKS[1].content),
    ]
    reply = ANSWERER.answer("Redis 的默认端口是多少？", evidence, CTX)
    assert reply["citations"]
    assert "6379" in reply["citations"][0]["quote"]
    by_id = {e.evidence_id: (n, e) for n, e in enumerate(evidence, start=1)}
    for citation in reply["citations"]:
        n, item = by_id[citation["evidence_id"]]
        assert citation["marker"] == n
        assert citation["quote"] in item.content
        assert f"{citation['quote']} [{n}]" in reply["answer"]
    en = ANSWERER.answer("What is the default data folder?", [EvidenceText("e1", "Ops", (), EN_CHUNKS[0].content)], CTX)
    assert any("Set PETRICHOR_DATA to choose the data folder; the default is `./data`." == c["quote"] for c in en["citations"])


def test_answer_says_not_found_when_nothing_overlaps(model: OfflineChatModel) -> None:
    evidence = [EvidenceText("chunk-a", "运维", ("部署",), ZH_CHUNKS[0].content)]
    assert ANSWERER.answer("What is the capital of France?", evidence, CTX) == {"answer": NOT_FOUND["en"], "citations": []}
    assert ANSWERER.answer("法国的首都是哪里？", evidence, CTX) == {"answer": NOT_FOUND["zh"], "citations": []}
    assert ANSWERER.answer("Redis 端口？", [], CTX)["citations"] == []


def test_jieba_is_initialised_once_per_process(model: OfflineChatModel, monkeypatch: pytest.MonkeyPatch) -> None:
    init_jieba()

    def fail() -> None:
        raise AssertionError("jieba initialised again")

    monkeypatch.setattr(jieba, "initialize", fail)
    model.generate_questions(ZH_CHUNKS[:1], CTX)
    ANSWERER.answer("Redis 端口？", [EvidenceText("e", "t", (), ZH_DOC)], CTX)


def test_offline_calls_are_metered_per_article() -> None:
    meter = UsageMeter()
    model = OfflineChatModel(meter)
    model.generate_questions(EN_CHUNKS[:1], CallContext(article_id="a"))
    model.summarize_tree([TreeNodeText(1, 1, "x", "Some text here.")], CallContext(article_id="b"))
    assert meter.by_article["a"].calls == 1 and meter.by_article["b"].calls == 1
    assert meter.by_op["kb.build.questions"].calls == 1 and meter.total.prompt_tokens == 0


def test_acronym_and_long_form_become_one_candidate_with_an_alias(model: OfflineChatModel) -> None:
    doc = (
        "# Fusion\n\nSearch results are merged with Reciprocal Rank Fusion (RRF). Reciprocal Rank Fusion adds "
        "1/(60 + rank) for every list a document appears in.\nRRF rewards documents found by several routes."
    )
    items = model.extract_candidates(CandidateRequest("kb", "t", doc), CTX)["entities"]
    fusion = [i for i in items if "RRF" in [i["name"], *i["aliases"]]]
    assert len(fusion) == 1
    assert {fusion[0]["name"], *fusion[0]["aliases"]} == {"Reciprocal Rank Fusion", "RRF"}


def test_questions_keep_mixed_script_terms_intact(model: OfflineChatModel) -> None:
    chunk = QuestionChunk("chunk-001", "模型", ("模型",), "我们默认使用 GPT-4o模型 处理问答，`gpt_model` 配置项控制模型名称。")
    asked = model.generate_questions([chunk], CTX)["questions"]["chunk-001"]
    assert len(set(asked)) == 3
    assert any("gpt_model" in q for q in asked)


def test_catalog_without_sections_groups_pages_under_the_names_they_mention(model: OfflineChatModel) -> None:
    reply = model.extract_candidates(CandidateRequest("kb", "t", ZH_DOC), CTX)
    keys = ("pageKey", "kind", "name", "aliases", "summary")  # what the knowledge layer sends
    candidates = [{k: c[k] for k in keys} for c in reply["entities"] + reply["concepts"]]
    plan = model.plan_catalog(candidates, [], CTX)["assignments"]
    folders: dict[tuple[str, ...], list[str]] = {}
    for item in plan:
        assert 1 <= len(item["path"]) <= 2
        folders.setdefault(tuple(item["path"]), []).append(item["pageKey"])
    assert 2 <= len(folders) <= 6
    for path, members in folders.items():
        assert path == ("其他",) or len(members) >= 2, "no folder per page"
    by_key = {item["pageKey"]: item["path"] for item in plan}
    assert by_key["concept/主节点"] == by_key["entity/Redis"], "a page sits with the page its summary names"


@pytest.mark.parametrize(
    "path,expected",
    [
        (("Guide", "Configuring the logo in the global header"), "What are the steps for configuring the logo in the global header?"),
        (("About feedback collection",), "What is feedback collection?"),
        (("Snapshots",), "What are Snapshots?"),
        (("Spring Boot starter",), "What is Spring Boot starter?"),
        (("Redis 运维手册", "部署 Redis"), "如何部署 Redis？"),
        (("3.1 持久化",), "什么是持久化？"),
        (("What does the cache hold?",), ""),
        (("x" * 121,), ""),
    ],
)
def test_the_heading_becomes_the_first_question(path: tuple[str, ...], expected: str) -> None:
    from petrichor_core.models.offline.questions import chunk_questions, heading_question

    lang = "zh" if has_cjk(path[-1]) else "en"
    content = "使用 docker compose up -d 启动 Redis 服务。" if lang == "zh" else "Set fullLogoWidth to change the logo width."
    chunk = QuestionChunk("chunk-001", path[-1], path, content)
    assert heading_question(chunk, lang) == expected
    if expected:
        assert chunk_questions(chunk)[0] == expected


def test_sections_of_one_manual_get_distinct_questions(model: OfflineChatModel) -> None:
    body = "Install Red Hat Developer Hub with the Operator, then configure it in the {} panel."
    chunks = [
        QuestionChunk(f"chunk-00{i}", h, ("Installing Red Hat Developer Hub", h), body.format(h.split()[-1]))
        for i, h in enumerate(["Configuring the sidebar", "Enabling the theme", "Adding a logo"], 1)
    ]
    asked = model.generate_questions(chunks, CTX)["questions"]
    firsts = [asked[c.key][0] for c in chunks]
    assert len(set(firsts)) == 3 and all(c.heading.lower() in q for c, q in zip(chunks, firsts))


def test_answer_prefers_the_higher_ranked_evidence_among_equal_matches(model: OfflineChatModel) -> None:
    first, second, unrelated = "Redis 默认监听 6379 端口。", "Redis 默认监听 6380 端口。", "日志保存七天。"
    question = "Redis 默认监听哪个端口？"

    def cited(*texts: str) -> list[str]:
        evidence = [EvidenceText(f"e{n}", "t", (), text) for n, text in enumerate(texts, 1)]
        return [c["quote"] for c in ANSWERER.answer(question, evidence, CTX)["citations"]]

    assert cited(first, unrelated, second) == [first]
    assert cited(second, unrelated, first) == [second]
    assert cited(first, second) == [first]  # a further passage holding no question word the first lacks is not quoted


@pytest.mark.parametrize("doc", [ZH_DOC, EN_DOC], ids=["zh", "en"])
def test_offline_replies_meet_the_same_contracts_as_a_model_endpoint(doc: str) -> None:
    from petrichor_core.models import prompts

    model = OfflineChatModel()
    ctx = CallContext(article_id="a1")
    chunks = [QuestionChunk("chunk-001", "部署", ("Redis", "部署"), doc)]
    extraction = model.extract_candidates(CandidateRequest("运维", "Redis", doc), ctx)
    candidates = [{**item, "kind": kind} for kind, group in (("entity", "entities"), ("concept", "concepts")) for item in extraction[group]]
    replies = {
        prompts.QUESTIONS: model.generate_questions(chunks, ctx),
        prompts.CANDIDATES: extraction,
        prompts.CATALOG: model.plan_catalog(candidates, [], ctx),
        prompts.PAGES: model.generate_pages(PageRequest("Redis", doc, candidates, extraction["relations"], candidates[:4]), ctx),
        prompts.TREE_SUMMARIES: model.summarize_tree([TreeNodeText(1, 1, "部署", doc)], ctx),
        prompts.ANSWER: ANSWERER.answer("默认端口是多少？", [EvidenceText("e1", "Redis", ("部署",), doc)], ctx),
    }
    for prompt, reply in replies.items():
        assert prompt.contract.violation(reply) is None, prompt.op
