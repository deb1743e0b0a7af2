"""Every part of Petrichor that reads Markdown headings sees the same titles in the same tricky document.

The document holds what the heading rules disagree about elsewhere: a title ending in `#` (`C#`), a
`#hashtag` line, headings inside ``` and ~~~ fences, closing `#` runs with and without a space, and CJK
headings. Each section is long enough that the chunker gives it a chunk of its own, so the chunk headings
list every section.
"""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from petrichor_core.text.chunking import chunk_markdown
from petrichor_core.text.markdown import has_title_heading, headings, is_title_line
from petrichor_core.text.prose import drop_headings, split_sentences
from petrichor_pipeline.knowledge.guide import prepare_guide
from petrichor_pipeline.knowledge.page_index import parse_markdown_tree
from petrichor_pipeline.sources.markdown import first_heading, read_markdown
from petrichor_serving.answer.answers import answer_units

EN_FILLER = ("This paragraph explains the section in plain words for the reader. " * 10).strip()
ZH_FILLER = "在服务器上部署缓存服务并检查监听端口。" * 32

# (line, title if the line is a heading outside fences else None)
LINES: list[tuple[str, str | None]] = [
    ("# Title ##", "Title"),
    ("", None),
    (EN_FILLER, None),
    ("", None),
    ("## Using C#", "Using C#"),
    ("", None),
    ("#hashtag is a tag, not a heading.", None),
    ("", None),
    ("```bash", None),
    ("# a shell comment, not a heading", None),
    ("## Not a heading either", None),
    ("```", None),
    ("", None),
    ("~~~", None),
    ("# fenced with tildes", None),
    ("~~~", None),
    ("", None),
    (EN_FILLER, None),
    ("", None),
    ("### Closing hashes ###", "Closing hashes"),
    ("", None),
    (EN_FILLER, None),
    ("", None),
    ("## 部署 Redis", "部署 Redis"),
    ("", None),
    (ZH_FILLER, None),
    ("", None),
    ("## F# and C# #", "F# and C#"),
    ("", None),
    (EN_FILLER, None),
    ("", None),
    ("#\u3000全角空格不是标题", None),
    ("", None),
    ("# 第二部分：运维", "第二部分：运维"),
    ("", None),
    (ZH_FILLER, None),
]
DOC = "\n".join(line for line, _ in LINES)
TITLES = [title for _, title in LINES if title is not None]


def _distinct_last(paths: list[tuple[str, ...]]) -> list[str]:
    """The innermost heading of each run of equal paths, in document order."""
    out: list[str] = []
    for path in paths:
        if path and (not out or out[-1] != path[-1]):
            out.append(path[-1])
    return out


def test_the_scanner_reads_the_titles_the_document_was_written_with() -> None:
    assert [h.title for h in headings(DOC)] == TITLES


def test_chunker_sections_carry_the_same_titles() -> None:
    result = chunk_markdown(DOC, "Article")
    assert [c.heading for c in result.chunks] == TITLES
    assert result.chunks[1].heading_path == ("Title", "Using C#")


def test_sources_find_each_title_after_the_one_before() -> None:
    assert read_markdown(DOC.encode(), "stem").title == "Title"
    heading_lines = [i for i, (_, title) in enumerate(LINES) if title is not None]
    found = []
    for i in [-1, *heading_lines[:-1]]:
        rest = "\n".join(line for line, _ in LINES[i + 1 :])
        found.append(first_heading(rest))
    assert found == TITLES


def test_page_index_nodes_carry_the_same_titles() -> None:
    nodes = parse_markdown_tree(DOC, "Article", "1")
    assert [n.title for n in nodes[1:]] == TITLES
    assert [n.depth for n in nodes[1:]] == [1, 2, 3, 2, 2, 1]


def test_guide_cleaner_keeps_every_heading_with_a_body() -> None:
    assert prepare_guide(DOC) == DOC


def test_offline_sentences_and_answer_units_sit_under_the_same_titles() -> None:
    assert _distinct_last([s.heading_path for s in split_sentences(DOC, include_code=True)]) == TITLES
    assert _distinct_last([u.heading_path for u in answer_units(DOC)]) == TITLES


def test_offline_summaries_drop_exactly_the_heading_lines() -> None:
    assert drop_headings(DOC) == "\n".join(line for line, title in LINES if title is None)


def test_a_page_names_itself_only_with_a_real_title_heading() -> None:
    assert has_title_heading(DOC)
    assert not has_title_heading("```\n# in a fence\n```\n#hashtag\n## Section\n")


@given(st.text(alphabet="# \t\u3000a#`~x", max_size=12))
def test_one_line_is_a_title_exactly_when_the_page_scan_says_so(line: str) -> None:
    line = line.replace("\n", "")
    assert is_title_line(line) == has_title_heading(line)
