from petrichor_pipeline.knowledge.document import (
    OMISSION_MARKER,
    local_document_summary,
    plain_text,
    whole_document_context,
)


def test_short_documents_are_kept_whole_after_newline_normalisation():
    assert whole_document_context("  \r\n# 标题\r\n正文\r末行\n\n") == "# 标题\n正文\n末行"
    exact = "字" * 72000
    assert whole_document_context(exact) == exact


def test_long_documents_keep_62_percent_head_and_38_percent_tail_around_the_marker():
    head, middle, tail = "首" * 44640, "略" * 10000, "尾" * 27360
    context = whole_document_context("HEAD" + head + middle + tail + "TAIL")
    assert OMISSION_MARKER == "\n\n<!-- 文档过长，中间内容已省略；以下继续保留文档末尾 -->\n\n"
    before, after = context.split(OMISSION_MARKER)
    assert len(before) == 44640 and len(after) == 27360
    assert before.startswith("HEAD首") and after.endswith("尾TAIL")
    assert before.count("略") == 0 and after.count("略") == 0


def test_one_code_point_over_the_budget_is_truncated():
    text = "a" * 72001
    context = whole_document_context(text)
    assert len(context) == 72000 + len(OMISSION_MARKER)


def test_plain_text_drops_markup():
    md = "# 标题\n\n**粗体** 和 `code` 见[文档](http://x)。\n\n![图](a.png)<br/>\n```bash\nrm -rf /\n```\n- 项目 | 表格\n[[entity-redis|Redis]]"
    assert plain_text(md) == "标题 粗体 和 code 见文档。 项目 表格 Redis"


def test_local_document_summary_is_cut_to_260_with_ellipsis():
    assert local_document_summary("短文") == "短文"
    summary = local_document_summary("# 标题\n\n" + "长" * 300)
    assert summary == "标题 " + "长" * 257 + "…"
    assert len(summary) == 261
