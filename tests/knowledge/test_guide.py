from petrichor_pipeline.knowledge.guide import prepare_guide


def test_strips_comments_and_empty_sections_and_collapses_blank_runs():
    raw = (
        "<!-- 作者备注：发布前删除 -->\n"
        "# 领域\n\n面向运维工程师。\n\n\n\n"
        "# 读者\n\n   \n"
        "# 抽取偏好\n\n## 实体\n\n<!-- 待补充 -->\n\n## 概念\n\n只抽取可复用的方法。\n"
        "# 目录约定\n\n## 一级\n\n## 二级\n"
    )
    assert prepare_guide(raw) == "# 领域\n\n面向运维工程师。\n\n# 抽取偏好\n\n## 概念\n\n只抽取可复用的方法。"


def test_heading_only_means_no_body_before_next_same_or_higher_heading():
    # "# A" has a filled subsection, so it stays; its empty sibling subsection goes
    assert prepare_guide("# A\n## B\n## C\ntext\n") == "# A\n## C\ntext"
    # a trailing heading with nothing after it goes
    assert prepare_guide("正文\n\n# 结尾\n") == "正文"


def test_fenced_hash_lines_are_body_not_headings():
    raw = "# 示例\n```\n# not a heading\n```\n# 空\n"
    assert prepare_guide(raw) == "# 示例\n```\n# not a heading\n```"


def test_multiline_and_unclosed_comments():
    assert prepare_guide("保留\n<!--\n多行\n-->\n其余\n<!-- 未闭合\n# 标题\n内容") == "保留\n\n其余"


def test_empty_guide():
    assert prepare_guide("") == ""
    assert prepare_guide("<!-- only -->\n# 空\n") == ""


def test_prepared_guide_sits_between_rules_and_contract_line():
    from petrichor_core.models.prompts import CONTRACT_WINS_LINE, QUESTIONS, system_prompt

    prompt = system_prompt(QUESTIONS.system, prepare_guide("<!-- 备注 -->\n# 读者\n\n运维工程师。\n# 空\n"))
    assert "备注" not in prompt and "# 空" not in prompt and "运维工程师" in prompt
    assert prompt.endswith(CONTRACT_WINS_LINE)
