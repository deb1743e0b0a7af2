"""Chunker v2, one test per rule; expected values are computed by hand from the reference rules."""

from __future__ import annotations

import hashlib
import json
import random

from petrichor_core.text.chunking import ChunkResult, chunk_key, chunk_markdown
from petrichor_core.text.limits import MAX_HEADING_CHARS, capped
from petrichor_core.versions import CHUNK_ALGORITHM_VERSION


def _check_offsets(result: ChunkResult) -> None:
    for chunk in result.chunks:
        assert result.text[chunk.start : chunk.end] == chunk.content


def _contents(markdown: str, title: str = "标题") -> list[str]:
    result = chunk_markdown(markdown, title)
    _check_offsets(result)
    return [c.content for c in result.chunks]


def _spans(markdown: str) -> list[tuple[int, int]]:
    result = chunk_markdown(markdown, "标题")
    _check_offsets(result)
    return [(c.start, c.end) for c in result.chunks]


def _samples() -> list[tuple[str, str]]:
    """(markdown, title) articles that exercise every rule: nested headings, fences, short sections that merge,
    sections past the target and the cap that split, a preamble, Chinese and English text."""
    rng = random.Random(20261207)
    words = ["Redis", "哨兵", "副本", "failover", "集群", "the", "primary", "节点", "切换", "snapshot", "。", ".", "\n"]
    articles = []
    for n in range(12):
        parts = [" ".join(rng.choices(words, k=rng.randint(3, 40)))] if n % 3 else []
        for s in range(rng.randint(1, 7)):
            parts.append("#" * rng.randint(1, 4) + f" 第{s}节 section {s}")
            if rng.random() < 0.2:
                parts.append("```\n# not a heading\n" + " ".join(rng.choices(words, k=20)) + "\n```")
            parts.append(" ".join(rng.choices(words, k=rng.choice([5, 60, 400, 1500]))))
        articles.append(("\n\n".join(parts), f"文章 {n}" if n % 4 else ""))
    return articles


CHUNKER_OUTPUT = {2: "dba2bfc366c2ae45c1b765913d8f238a1adc2d7245a8119aff8e08dff5dd99d2"}
"""`CHUNK_ALGORITHM_VERSION` -> the sha256 of the chunker's output over `_samples()`. Chunks are reused by the
version, so output that changes under the same version would mix two chunkings in one knowledge base."""


def test_the_chunker_output_changes_only_with_its_algorithm_version() -> None:
    out = [[(c.key, c.position, c.heading, c.heading_path, c.start, c.end) for c in chunk_markdown(md, t).chunks] for md, t in _samples()]
    digest = hashlib.sha256(json.dumps(out, ensure_ascii=False).encode()).hexdigest()
    assert CHUNK_ALGORITHM_VERSION in CHUNKER_OUTPUT, "a new CHUNK_ALGORITHM_VERSION records its output's digest here"
    assert digest == CHUNKER_OUTPUT[CHUNK_ALGORITHM_VERSION], f"the chunker's output changed ({digest}): raise CHUNK_ALGORITHM_VERSION"


def test_chunk_keys() -> None:
    assert chunk_key(0) == "chunk-001"
    assert chunk_key(98) == "chunk-099"
    assert chunk_key(999) == "chunk-1000"


def test_reference_worked_example() -> None:
    markdown = "导语一段。\n\n# 安装\n\n## Docker\n\n步骤 A\n\n## 源码\n\n步骤 B\n\n# 运维\n\n内容 C\n"
    result = chunk_markdown(markdown, "部署指南")
    _check_offsets(result)
    assert [(c.key, c.position, c.heading, c.heading_path, c.content) for c in result.chunks] == [
        ("chunk-001", 0, "部署指南", (), "导语一段。"),
        ("chunk-002", 1, "安装", ("安装",), "# 安装\n\n## Docker\n\n步骤 A\n\n## 源码\n\n步骤 B"),
        ("chunk-003", 2, "运维", ("运维",), "# 运维\n\n内容 C"),
    ]
    assert [(c.start, c.end) for c in result.chunks] == [(0, 5), (7, 41), (43, 53)]
    assert result.warnings == ()
    assert result.text == markdown


def test_empty_input_gives_no_chunks() -> None:
    assert chunk_markdown("", "标题") == ChunkResult(chunks=(), warnings=(), text="")
    assert chunk_markdown(" \n\t\n", "标题").chunks == ()


def test_preamble_is_named_after_the_article_or_a_default() -> None:
    titled = chunk_markdown("只有导语。", "部署指南").chunks[0]
    assert (titled.heading, titled.heading_path) == ("部署指南", ())
    untitled = chunk_markdown("只有导语。", "  ").chunks[0]
    assert (untitled.heading, untitled.heading_path) == ("文档正文", ())


def test_heading_lines_inside_fences_are_not_headings() -> None:
    markdown = "# 安装\n\n```bash\n# 这是注释\n## 也不是标题\necho hi\n```\n\n~~~\n# 注释\n~~~\n\n结尾"
    result = chunk_markdown(markdown, "标题")
    assert len(result.chunks) == 1
    chunk = result.chunks[0]
    assert (chunk.heading, chunk.heading_path, chunk.content) == ("安装", ("安装",), markdown)


def test_any_fence_marker_toggles_the_fence() -> None:
    # As in the reference, "~~~" closes a "```" fence, so the following heading is real.
    markdown = "# A\n\n```\ncode\n~~~\n# B\n\ntext"
    chunks = chunk_markdown(markdown, "标题").chunks
    assert [c.heading_path for c in chunks] == [("A",), ("B",)]


def test_heading_pattern_details() -> None:
    # `\s` is ASCII whitespace only: U+3000 after the hashes does not make a heading.
    assert [c.heading for c in chunk_markdown("#\u3000全角\n\n正文", "T").chunks] == ["T"]
    # Seven hashes or no space after the hashes: not headings. Trailing hashes are dropped. An empty heading
    # title falls back to the article title.
    markdown = "# A\n\n" + "x" * 1300 + "\n####### seven\n#no\n## B ##\n" + "y" * 1300 + "\n##  \n" + "z" * 1300
    chunks = chunk_markdown(markdown, "T").chunks
    assert [(c.heading, c.heading_path) for c in chunks] == [("A", ("A",)), ("B", ("A", "B")), ("T", ("A", "T"))]
    assert chunks[0].content.endswith("####### seven\n#no")


def test_leading_whitespace_before_the_first_heading_is_ignored() -> None:
    result = chunk_markdown("  \n   # 安装\n步骤", "标题")
    _check_offsets(result)
    assert [(c.heading_path, c.content, c.start) for c in result.chunks] == [(("安装",), "# 安装\n步骤", 6)]


def test_nested_headings_build_the_path() -> None:
    markdown = "\n\n".join(["# A", "a" * 1300, "## B", "b" * 1300, "### C", "c" * 1300, "## D", "d" * 1300])
    assert [c.heading_path for c in chunk_markdown(markdown, "T").chunks] == [
        ("A",),
        ("A", "B"),
        ("A", "B", "C"),
        ("A", "D"),
    ]


def test_merge_never_crosses_a_top_level_topic() -> None:
    # All sections are tiny, yet the preamble, topic A (with its h2) and topic B stay apart; the
    # small-group fallback does not merge across topics either.
    markdown = "导语\n\n# A\n\naaaa\n\n## A1\n\na1\n\n# B\n\nb"
    result = chunk_markdown(markdown, "T")
    assert [(c.heading_path, c.content) for c in result.chunks] == [
        ((), "导语"),
        (("A",), "# A\n\naaaa\n\n## A1\n\na1"),
        (("B",), "# B\n\nb"),
    ]


def test_merged_group_keeps_the_original_separators() -> None:
    markdown = "# A\nx\n## B\n\n\n\ny"
    chunk = chunk_markdown(markdown, "T").chunks[0]
    assert (chunk.content, chunk.start, chunk.end) == (markdown, 0, len(markdown))


def test_greedy_merge_closes_a_group_past_the_target() -> None:
    # 1005 + 206 + 1 > 1200 and the current group is neither small nor made of short sections.
    first = "# A\n\n" + "甲" * 1000
    second = "## B\n\n" + "乙" * 1000
    assert _contents(first + "\n\n" + second) == [first, second]
    # 505 + 606 + 1 <= 1200: merged.
    small_first = "# A\n\n" + "甲" * 500
    small_second = "## B\n\n" + "乙" * 600
    assert _contents(small_first + "\n\n" + small_second) == [small_first + "\n\n" + small_second]


def test_merge_respects_the_3200_cap() -> None:
    small = "# A\n\n" + "甲" * 295  # 300 code points, under the 400 small-group threshold
    fits = "## B\n\n" + "乙" * 2794  # 300 + 2800 + 1 <= 3200: a small group may grow past the target
    assert _contents(small + "\n\n" + fits) == [small + "\n\n" + fits]
    too_big = "## B\n\n" + "乙" * 2944  # 300 + 2950 + 1 > 3200, and 300 + 2950 > 3200 for the fallback
    assert _contents(small + "\n\n" + too_big) == [small, too_big]


def test_short_sections_merge_without_a_size_cap_then_split() -> None:
    # "# 总" and 40 sections of 107 code points under it: every one is short-heading-only, so the greedy pass
    # never closes the group, and none is substantial, so the first section names it. The 4363-character
    # group is then split as a long section.
    sections = [f"## S{i:02d}\n" + "字" * 100 for i in range(40)]
    markdown = "# 总\n\n" + "\n\n".join(sections)
    assert len(markdown) == 4363
    result = chunk_markdown(markdown, "T")
    _check_offsets(result)
    # Section k starts at 5 + 109 k. The last blank line before 3200 precedes section 29, at 3164. The
    # overlap would start at 3164 - 320 = 2844, inside the heading line of section 26 (2839..2844), and
    # moves to the start of the following line, 2846.
    assert [(c.start, c.end) for c in result.chunks] == [(0, 3164), (2846, 4363)]
    assert result.chunks[0].content == "# 总\n\n" + "\n\n".join(sections[:29])
    assert {(c.heading, c.heading_path) for c in result.chunks} == {("总", ("总",))}


def test_small_tail_merges_forward_first() -> None:
    # Greedy: [A] closes at B (1005 + 300 + 1 > 1200); [B] closes at C (300 + 2900 + 1 > 3200).
    # Fallback from the end: C is large; B (300 < 400) may merge forward (300 + 2900 <= 3200) and also
    # backward (300 + 1005 <= 3200); forward wins.
    a = "# A\n\n" + "甲" * 1000
    b = "## B\n\n" + "乙" * 294
    c = "## C\n\n" + "丙" * 1500 + "\n\n" + "丁" * 1392
    assert (len(a), len(b), len(c)) == (1005, 300, 2900)
    markdown = a + "\n\n" + b + "\n\n" + c
    result = chunk_markdown(markdown, "T")
    _check_offsets(result)
    # The merged group B+C is 3202 code points with its separator, so stage 3 splits it at the blank line
    # inside C at 302 + 6 + 1500 = 1808 (> 1760) of the group; the overlap starts at 1808 - 320 = 1488, with
    # no newline in [1488, 1808) to snap to. C holds >= 60 % of the group and names both pieces.
    group = b + "\n\n" + c
    assert [(x.heading, x.heading_path, x.content) for x in result.chunks] == [
        ("A", ("A",), a),
        ("C", ("A", "C"), group[:1808]),
        ("C", ("A", "C"), group[1488:]),
    ]


def test_small_tail_merges_backward_when_forward_is_too_big() -> None:
    a = "# A\n\n" + "甲" * 1000  # 1005
    b = "## B\n\n" + "乙" * 294  # 300
    c = "## C\n\n" + "丙" * 2944  # 2950: 300 + 2950 > 3200
    markdown = a + "\n\n" + b + "\n\n" + c
    assert _contents(markdown) == [a + "\n\n" + b, c]


def test_small_tail_merges_backward_at_the_end_of_a_topic() -> None:
    a = "# A\n\n" + "甲" * 1000
    b = "## B\n\n" + "乙" * 294
    z = "# Z\n\n" + "丙" * 500
    result = chunk_markdown(a + "\n\n" + b + "\n\n" + z, "T")
    assert [(c.heading_path, c.content) for c in result.chunks] == [(("A",), a + "\n\n" + b), (("Z",), z)]
    # A group of exactly 400 is not small.
    b400 = "## B\n\n" + "乙" * 394
    assert _contents(a + "\n\n" + b400 + "\n\n" + z) == [a, b400, z]


def test_title_from_a_section_holding_60_percent() -> None:
    # A (105, short) + B (306) + C (56) = 467; 0.6 * 467 = 280.2 and B has 306.
    markdown = "# A\n\n" + "甲" * 100 + "\n\n## B\n\n" + "乙" * 300 + "\n\n## C\n\n" + "丙" * 50
    chunk = chunk_markdown(markdown, "T").chunks[0]
    assert (chunk.heading, chunk.heading_path, chunk.content) == ("B", ("A", "B"), markdown)


def test_title_60_percent_rule_beats_first_substantial_section() -> None:
    # A (105) + B (206) + C (1006) = 1317; C holds >= 790.2, although B is the first section over 120.
    markdown = "# A\n\n" + "甲" * 100 + "\n\n## B\n\n" + "乙" * 200 + "\n\n## C\n\n" + "丙" * 1000
    chunk = chunk_markdown(markdown, "T").chunks[0]
    assert (chunk.heading, chunk.heading_path) == ("C", ("A", "C"))


def test_title_falls_back_to_first_substantial_section() -> None:
    # A (105) + B (206) + C (206) = 517; no section reaches 310.2; B is the first over 120.
    markdown = "# A\n\n" + "甲" * 100 + "\n\n## B\n\n" + "乙" * 200 + "\n\n## C\n\n" + "丙" * 200
    chunk = chunk_markdown(markdown, "T").chunks[0]
    assert (chunk.heading, chunk.heading_path) == ("B", ("A", "B"))


def test_title_falls_back_to_the_first_section() -> None:
    # Every section is short and none holds 60 %: the anchor is the first section (rule 4).
    markdown = "# A\n\n" + "甲" * 50 + "\n\n## B\n\n" + "乙" * 50 + "\n\n## C\n\n" + "丙" * 50
    chunk = chunk_markdown(markdown, "T").chunks[0]
    assert (chunk.heading, chunk.heading_path) == ("A", ("A",))


def test_long_split_prefers_a_blank_line() -> None:
    # Blank line at 2500, newline at 3000, sentence end at 3100: the blank line wins.
    markdown = "甲" * 2500 + "\n\n" + "乙" * 498 + "\n" + "丙" * 99 + "。" + "丁" * 1000
    assert len(markdown) == 4101
    # Overlap from 2500 - 320 = 2180; no newline in [2180, 2500) so it is not moved.
    assert _spans(markdown) == [(0, 2500), (2180, 4101)]


def test_long_split_prefers_a_newline_over_a_sentence_end() -> None:
    markdown = "甲" * 2500 + "\n" + "乙" * 599 + "。" + "丙" * 1000
    assert _spans(markdown) == [(0, 2500), (2180, 4101)]


def test_long_split_at_the_last_sentence_end() -> None:
    # No newline: break after the last sentence end (Chinese or English) in the window, i.e. at match end.
    markdown = "甲" * 1999 + "。" + "乙" * 999 + "?" + "丙" * 1101
    assert _spans(markdown) == [(0, 3000), (2680, 4101)]
    assert chunk_markdown(markdown, "T").chunks[0].content.endswith("?")


def test_long_split_at_the_window_edge() -> None:
    assert _spans("甲" * 4101) == [(0, 3200), (2880, 4101)]


def test_long_split_searches_only_the_second_half_of_the_window() -> None:
    # A blank line before cursor + 1760 and a newline at or after cursor + 3200 are both ignored.
    markdown = "甲" * 1000 + "\n\n" + "乙" * 2199 + "\n" + "丙" * 900
    assert markdown.index("\n", 1002) == 3201
    assert _spans(markdown)[0] == (0, 3200)
    # A sentence end just before the floor is ignored, one at the floor counts.
    assert _spans("甲" * 1759 + "。" + "乙" * 2500)[0] == (0, 3200)
    assert _spans("甲" * 1760 + "。" + "乙" * 2500)[0] == (0, 1761)
    # A blank line exactly at the floor is not a candidate; its second newline (1761) is, as a plain newline.
    assert _spans("甲" * 1760 + "\n\n" + "乙" * 2500) == [(0, 1760), (1762, 4262)]


def test_long_split_floor_moves_with_the_cursor() -> None:
    # Window 1 ends at its edge (3200); window 2 starts at 2880 and searches only [4640, 6080), so the blank
    # line at 3880 is ignored.
    markdown = "甲" * 3880 + "\n\n" + "乙" * 4000
    assert _spans(markdown) == [(0, 3200), (2880, 6080), (5760, 7882)]


def test_overlap_is_snapped_to_the_next_line_start() -> None:
    # 50 lines of 99 characters: the last newline before 3200 is at 3199; the overlap would start at 2879
    # and moves to the start of the next line, 2900.
    markdown = ("甲" * 99 + "\n") * 50
    assert _spans(markdown) == [(0, 3199), (2900, 4999)]


def test_overlap_start_inside_a_fence_moves_past_it() -> None:
    body = "甲" * 2700 + "\n```\n" + "x" * 400 + "\n```\n\n" + "丙" * 2000
    fence_start, fence_end = 2701, 3109
    assert body[fence_start:fence_end] == "```\n" + "x" * 400 + "\n```"
    # Break at the blank line right after the fence (3109); 3109 - 320 falls inside the fence, so the next
    # window starts at the fence end.
    assert _spans(body) == [(0, 3109), (3111, len(body))]


def test_no_break_inside_a_fence() -> None:
    code = "\n".join(["x = 1", "", "y = 2"] * 200)  # blank lines inside the fence
    markdown = "甲" * 2000 + "。\n```\n" + code + "\n```\n" + "乙" * 1000
    fence_start = markdown.index("```")
    fence_end = markdown.rindex("```") + 3
    spans = _spans(markdown)
    # The only candidate outside the fence in the first window is the sentence end at 2001.
    assert spans[0] == (0, 2001)
    for start, end in spans:
        assert not fence_start < start < fence_end
        assert not fence_start < end < fence_end
    assert any(start <= fence_start and fence_end <= end for start, end in spans)


def test_fence_longer_than_the_cap_stays_whole() -> None:
    fence = "```\n" + "code line\n" * 500 + "```"
    assert len(fence) > 3200
    markdown = "intro\n\n" + fence + "\n\nafter"
    result = chunk_markdown(markdown, "T")
    _check_offsets(result)
    assert [c.content for c in result.chunks] == ["intro\n\n" + fence, "after"]


def test_reference_case_1_keeps_the_tail_beyond_the_former_limit() -> None:
    """An article of more than 120 chunks keeps every one: there is no cap on chunks per article."""
    sections = [f"# 章节 {i}\n\n" + ("TAIL_SENTINEL" if i == 140 else f"SECTION_{i}") + " 这一节的完整内容。" * 80 for i in range(1, 141)]
    assert min(map(len, sections)) == 817 and max(map(len, sections)) == 823
    result = chunk_markdown("\n\n".join(sections), "超长文档")
    _check_offsets(result)
    assert [c.key for c in result.chunks] == [f"chunk-{i:03d}" for i in range(1, 141)]
    assert [c.position for c in result.chunks] == list(range(140))
    assert [c.content for c in result.chunks] == sections
    last = result.chunks[-1]
    assert "TAIL_SENTINEL" in last.content and last.key == "chunk-140" and last.position == 139
    assert result.warnings == ()


def test_crlf_bom_and_control_characters_are_normalised() -> None:
    markdown = "\ufeff# 安装\r\n\r\n步骤\x00 A\r\n\r# 运维\r内容\r\n"
    result = chunk_markdown(markdown, "T")
    assert result.text == "# 安装\n\n步骤 A\n\n# 运维\n内容\n"
    _check_offsets(result)
    assert [(c.content, c.start, c.end) for c in result.chunks] == [
        ("# 安装\n\n步骤 A", 0, 10),
        ("# 运维\n内容", 12, 19),
    ]


def test_offsets_index_already_normalised_input() -> None:
    markdown = "\n\n前言\n\n# A\n\n" + "甲" * 5000 + "\n"
    for chunk in chunk_markdown(markdown, "T").chunks:
        assert markdown[chunk.start : chunk.end] == chunk.content


def test_a_long_run_of_spaces_in_a_heading_line_is_linear() -> None:
    # A backtracking evaluation of the heading pattern takes minutes on this line.
    # The heading text is capped (`text.limits`), so only its head reaches the heading path.
    name = "a" + " " * 50_000 + "b"
    assert chunk_markdown("# " + name + " ##\n\n正文", "T").chunks[0].heading_path == (capped(name, MAX_HEADING_CHARS),)


def test_algorithm_version_is_importable_from_the_chunker() -> None:
    """`ALGORITHM_VERSION` is part of the chunker's contract with outside tools (ARCHITECTURE.md)."""
    from petrichor_core.text.chunking import ALGORITHM_VERSION
    from petrichor_core.versions import CHUNK_ALGORITHM_VERSION

    assert ALGORITHM_VERSION == CHUNK_ALGORITHM_VERSION == 2


def test_the_contract_path_is_the_core_chunker() -> None:
    """Outside tools import `petrichor_pipeline.text.chunking` (ARCHITECTURE.md, "Contracts other tools rely
    on"): that path re-exports `petrichor_core.text.chunking`'s function and constant, the same objects."""
    from petrichor_core.text import chunking as core
    from petrichor_pipeline.text.chunking import ALGORITHM_VERSION, ChunkResult, chunk_markdown

    assert chunk_markdown is core.chunk_markdown
    assert ChunkResult is core.ChunkResult
    assert ALGORITHM_VERSION == core.ALGORITHM_VERSION == 2
    result = chunk_markdown("# 安装\n\n步骤 A", "指南")
    assert isinstance(result, ChunkResult) and result.chunks[0].heading_path == ("安装",)
