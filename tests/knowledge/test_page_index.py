import hashlib

from petrichor_core.contract.schemas import to_table
from petrichor_core.models.protocols import CallContext
from petrichor_pipeline.knowledge.page_index import (
    build_page_index,
    local_tree_summary,
    node_key,
    parse_markdown_tree,
    summarize_tree,
    token_estimate,
    tree_hash,
    tree_node_rows,
)

from .doubles import ScriptedChatModel, fails, returns

CTX = CallContext()
DOC = "导语\n\n# 安装\n\n## Docker\n```bash\n# not a heading\n```\n### 细节\n## 源码\n步骤 B\n# 运维\n内容 C"


def sha(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def test_tree_structure_positions_levels_and_lines():
    nodes = parse_markdown_tree(DOC, "部署指南", "42")
    table = [(n.position, n.depth, n.parent, n.title, n.content, n.start_line, n.end_line) for n in nodes]
    assert table == [
        (0, 0, -1, "部署指南", "导语", 1, 2),
        (1, 1, 0, "安装", "", 3, 4),
        (2, 2, 1, "Docker", "```bash\n# not a heading\n```", 5, 8),
        (3, 3, 2, "细节", "", 9, 9),
        (4, 2, 1, "源码", "步骤 B", 10, 11),
        (5, 1, 0, "运维", "内容 C", 12, 13),
    ]
    assert nodes[0].node_key == "a42-root"
    assert nodes[1].node_key == node_key("42", ("安装",)) and nodes[2].node_key == node_key("42", ("安装", "Docker"))


def test_root_title_fallback_and_no_headings():
    nodes = parse_markdown_tree("\r\n只有正文\r\n", " ", "7")
    assert len(nodes) == 1 and nodes[0].title == "（无标题文档）" and nodes[0].content == "只有正文"
    assert (nodes[0].start_line, nodes[0].end_line) == (1, 3)


def test_parent_skips_levels_and_fullwidth_space_is_not_a_heading():
    nodes = parse_markdown_tree("### 深\n# 浅\n#\u3000不是标题\n#### 更深", "T", "1")
    assert [(n.title, n.depth, n.parent) for n in nodes[1:]] == [("深", 3, 0), ("浅", 1, 0), ("更深", 4, 2)]
    assert nodes[2].content == "#\u3000不是标题"


def test_unclosed_fence_swallows_later_headings():
    nodes = parse_markdown_tree("# A\n~~~\n# B\n", "T", "1")
    assert [n.title for n in nodes] == ["T", "A"]


def test_token_estimate():
    assert token_estimate("") == 0
    assert token_estimate("中文かな한") == 5
    assert token_estimate("abcde") == 2
    assert token_estimate("中a") == 2
    assert token_estimate("中" + "a" * 8) == 3


def test_local_tree_summary():
    nodes = parse_markdown_tree("# 标题\n" + "**字**" * 200 + "\n# 空\n", "T", "1")
    assert local_tree_summary(nodes[1]) == "字" * 120 + "..."
    assert local_tree_summary(nodes[2]) == "空"


def test_one_model_call_for_up_to_40_sections_missing_ones_local():
    nodes = parse_markdown_tree(DOC, "部署指南", "42")
    model = ScriptedChatModel(summarize_tree=returns({"summaries": {"0": "导语摘要", "2": " Docker 安装 ", "4": ""}}))
    res = summarize_tree(nodes, model, CTX)
    assert res.model_calls == 1 and res.warnings == ()
    assert [n.position for n in model.calls[0][1]] == [0, 2, 4, 5]
    assert res.summaries == {0: "导语摘要", 1: "安装", 2: "Docker 安装", 3: "细节", 4: "步骤 B", 5: "内容 C"}


def sections(n: int) -> str:
    return "\n".join(f"# S{i}\n正文{i}" for i in range(n))


def test_forty_sections_use_the_model_forty_one_do_not():
    model = ScriptedChatModel(summarize_tree=returns({"summaries": {}}))
    assert summarize_tree(parse_markdown_tree(sections(40), "T", "1"), model, CTX).model_calls == 1
    res = summarize_tree(parse_markdown_tree(sections(41), "T", "1"), model, CTX)
    assert res.model_calls == 0 and len(model.calls) == 1
    assert res.summaries[41] == "正文40"


def test_no_model_or_failure_gives_local_summaries():
    nodes = parse_markdown_tree(DOC, "部署指南", "42")
    assert summarize_tree(nodes, None, CTX).summaries[4] == "步骤 B"
    failed = summarize_tree(nodes, ScriptedChatModel(summarize_tree=fails("tree", "timeout")), CTX)
    assert failed.summaries[4] == "步骤 B" and failed.warnings == ("outline summary generation failed, local summaries used: timeout",)
    assert summarize_tree(parse_markdown_tree("# A\n# B", "T", "1"), ScriptedChatModel(), CTX).model_calls == 0


def test_rows_match_the_contract_and_hash_rules():
    nodes = parse_markdown_tree(DOC, "部署指南", "42")
    rows = tree_node_rows(nodes, {n.position: f"s{n.position}" for n in nodes}, kb_id="ops", tenant="default")
    assert rows[0]["content_hash"] == tree_hash(nodes) == sha("\n--\n".join(f"{n.position}|{n.depth}|{n.title}|{n.content}" for n in nodes))
    assert rows[4]["content_hash"] == sha("步骤 B") and rows[4]["token_estimate"] == 3
    assert rows[0]["parent_key"] is None and rows[3]["parent_key"] == rows[2]["node_key"]
    assert rows[3]["summary"] == "s3"
    assert to_table("tree_nodes", rows).num_rows == 6


def test_build_page_index():
    res = build_page_index(DOC, "部署指南", None, CTX, article_id="42", kb_id="ops", tenant="t")
    assert res.model_calls == 0 and len({r["node_key"] for r in res.rows}) == 6
    assert {r["tenant"] for r in res.rows} == {"t"}


def test_node_keys_survive_an_inserted_heading():
    """Keys come from heading paths, not positions: a new section renames no other node."""
    before = parse_markdown_tree("# A\n\na\n\n# B\n\nb\n\n## C\n\nc", "T", "7")
    after = parse_markdown_tree("# New\n\nn\n\n# A\n\na\n\n# B\n\nb\n\n## C\n\nc", "T", "7")
    assert {n.title: n.node_key for n in before}.items() <= {n.title: n.node_key for n in after}.items()


def test_repeated_heading_paths_get_distinct_keys():
    nodes = parse_markdown_tree("# A\n\n## Notes\n\nx\n\n## Notes\n\ny", "T", "7")
    assert len({n.node_key for n in nodes}) == len(nodes)
