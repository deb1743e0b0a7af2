import re

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from petrichor_core.text.limits import MAX_HEADING_CHARS, capped
from petrichor_core.text.markdown import (
    Fence,
    Heading,
    LineKind,
    drop_code_blocks,
    heading_of,
    headings,
    is_table_rule,
    scan_lines,
    scan_marks,
)

# The rule as one regex: the oracle.
ORACLE_HEADING = re.compile(r"^(#{1,6})[\t\n\f\r ]+(.+?)(?:[\t\n\f\r ]+#+)?[\t\n\f\r ]*$")
ORACLE_FENCE = re.compile(r"^[\t\n\f\r ]*(```|~~~)")


@pytest.mark.parametrize(
    "line,expected",
    [
        ("## Using C#", (2, "Using C#")),
        ("# Title ##", (1, "Title")),
        ("# Title#", (1, "Title#")),
        ("### a # #\t", (3, "a #")),
        ("## 部署 Redis", (2, "部署 Redis")),
        ("#\tTabbed", (1, "Tabbed")),
        ("###### six", (6, "six")),
        ("#  ", (1, "")),
        ("# \u3000", (1, "")),
        ("# ##", (1, "##")),
        ("#hashtag", None),
        ("####### seven", None),
        ("# ", None),
        ("#", None),
        ("#\u3000全角", None),
        (" # indented", None),
    ],
)
def test_heading_rules(line: str, expected: tuple[int, str] | None) -> None:
    assert heading_of(line) == expected


def test_marks_carry_line_numbers_and_offsets() -> None:
    text = "intro\n# A\n```\n# no\n~~~\n## B ##\n  ```py\nx"
    assert list(scan_marks(text)) == [
        Heading(1, 1, "A", 6, 9),
        Fence(2, True, 10, 13),
        Fence(4, False, 19, 22),  # any fence line closes, whatever its kind
        Heading(5, 2, "B", 23, 30),
        Fence(6, True, 31, 38),
    ]
    kinds = [line.kind for line in scan_lines(text)]
    assert kinds == [LineKind.BODY, LineKind.HEADING, LineKind.FENCE, LineKind.CODE, LineKind.FENCE, LineKind.HEADING, LineKind.FENCE, LineKind.CODE]


def test_drop_code_blocks_replaces_each_block_and_an_unclosed_tail() -> None:
    assert drop_code_blocks("a\n```\ncode\n```\nb\n~~~\nrest") == "a\n \nb\n "
    assert drop_code_blocks("no fences") == "no fences"


def test_table_rules() -> None:
    assert is_table_rule("|---|:--:|")
    assert is_table_rule(" --- | --- ")
    assert not is_table_rule("| a | b |")
    assert not is_table_rule("|  |")


def test_a_long_run_of_spaces_is_linear() -> None:
    line = "# x" + " " * 200_000 + "y"
    # The text is capped (`text.limits`); the scan of the whole line stays linear.
    assert heading_of(line) == (1, capped("x" + " " * 200_000 + "y", MAX_HEADING_CHARS))


line_text = st.one_of(
    st.text(alphabet="# \tab中`~\u3000", max_size=12),
    st.sampled_from(["```", "~~~", " ```py", "~~~~", "## Using C#", "# T ##", "#tag", "", "  "]),
)


@settings(max_examples=400, deadline=None)
@given(lines=st.lists(line_text, max_size=30))
@example(lines=["```", "# in", "~~~", "# out ##"])
def test_scanner_matches_the_oracle_and_never_sees_a_heading_inside_a_fence(lines: list[str]) -> None:
    text = "\n".join(lines)
    scanned = list(scan_lines(text))
    assert [line.text for line in scanned] == text.split("\n")
    assert all(text[line.start : line.start + len(line.text)] == line.text for line in scanned)

    in_fence = False
    expected: list[tuple[int, int, str]] = []
    for no, line in enumerate(lines if lines else [""]):
        if ORACLE_FENCE.match(line):
            in_fence = not in_fence
            assert scanned[no].kind is LineKind.FENCE
            continue
        match = None if in_fence else ORACLE_HEADING.match(line)
        if match:
            expected.append((no, len(match.group(1)), match.group(2).strip()))
        else:
            assert scanned[no].kind is (LineKind.CODE if in_fence else LineKind.BODY)
    assert [(h.line_no, h.level, h.title) for h in headings(text)] == expected
    assert [(ln.line_no, ln.level, ln.title) for ln in scanned if ln.heading] == expected
