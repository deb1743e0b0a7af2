"""The PageIndex tree of one article: its heading outline with a summary per section.

The tree serves structural questions ("which sections…", "summarise in order"), which similarity search
answers badly. Node keys are `a{articleId}-{position}` with positions in document order.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from petrichor_core.models.protocols import CallContext, ChatModel, ModelError, TreeNodeText
from petrichor_core.text.lang.texts import UNTITLED_DOCUMENT, UNTITLED_SECTION
from petrichor_core.text.markdown import Line, scan_lines
from petrichor_core.text.normalize import sha256_hex
from petrichor_pipeline.knowledge.document import clip, plain_text

MODEL_SUMMARY_MAX_NODES = 40
LOCAL_SUMMARY_CHARS = 120


@dataclass(frozen=True)
class TreeNode:
    position: int
    depth: int
    """0 for the root, else the heading level 1–6 (not the nesting depth)."""
    parent: int
    """The parent's position; -1 for the root."""
    title: str
    content: str
    start_line: int
    end_line: int
    article_id: str
    path: tuple[str, ...] = ()
    """Titles from the first-level heading down to this one; () for the root."""
    occurrence: int = 0
    """How many earlier nodes share this path (two sections may carry the same headings)."""

    @property
    def node_key(self) -> str:
        return node_key(self.article_id, self.path, self.occurrence)


def node_key(article_id: str, path: Sequence[str], occurrence: int = 0) -> str:
    """A key from the heading path, not the position: inserting a heading renames no other node."""
    if not path:
        return f"a{article_id}-root"
    digest = sha256_hex("\x1f".join(path))[:10]
    return f"a{article_id}-{digest}" + (f"-{occurrence + 1}" if occurrence else "")


def parse_markdown_tree(markdown: str, root_title: str, article_id: str) -> list[TreeNode]:
    """`parseMarkdownTree`: a root for the text before the first heading, then one node per heading.

    A heading's parent is the nearest earlier heading of a smaller level (else the root); its content
    is the text up to the next heading, the heading line excluded. Lines inside code fences are never
    headings; fence lines stay in the content. Lines are 1-based: a node spans `start_line..end_line`.
    """
    lines = list(scan_lines(markdown.replace("\r\n", "\n")))
    headings = [ln for ln in lines if ln.level]
    first = headings[0].line_no if headings else len(lines)
    nodes = [TreeNode(0, 0, -1, root_title.strip() or UNTITLED_DOCUMENT, _body(lines, 0, first), 1, first, article_id)]
    stack: list[tuple[int, int, str]] = []  # (level, position, title) of open headings
    seen: dict[tuple[str, ...], int] = {}
    for i, heading in enumerate(headings):
        position = i + 1
        end = headings[i + 1].line_no if i + 1 < len(headings) else len(lines)
        while stack and stack[-1][0] >= heading.level:
            stack.pop()
        parent = stack[-1][1] if stack else 0
        title = heading.title or UNTITLED_SECTION.format(position=position)
        stack.append((heading.level, position, title))
        path = tuple(t for _, _, t in stack)
        occurrence = seen.get(path, 0)
        seen[path] = occurrence + 1
        content = _body(lines, heading.line_no + 1, end)
        nodes.append(TreeNode(position, heading.level, parent, title, content, heading.line_no + 1, end, article_id, path, occurrence))
    return nodes


def _body(lines: list[Line], start: int, end: int) -> str:
    return "\n".join(ln.text for ln in lines[start:end]).strip()


def tree_hash(nodes: Sequence[TreeNode]) -> str:
    """The whole tree's fingerprint, stored as the root's content hash so an unchanged tree is skipped."""
    return sha256_hex("\n--\n".join(f"{n.position}|{n.depth}|{n.title}|{n.content}" for n in nodes))


def local_tree_summary(node: TreeNode, limit: int = LOCAL_SUMMARY_CHARS) -> str:
    """`localTreeSummary`: the section's plain words cut to `limit` + `...`, or its title when it has none."""
    return clip(plain_text(node.content), limit, "...") or node.title


def token_estimate(text: str) -> int:
    """CJK, kana and Hangul count 1 token each, anything else 1/4; rounded up."""
    wide = sum(1 for ch in text if "\u4e00" <= ch <= "\u9fff" or "\u3040" <= ch <= "\u30ff" or "\uac00" <= ch <= "\ud7af")
    return wide + math.ceil((len(text) - wide) / 4)


@dataclass(frozen=True)
class TreeSummaries:
    summaries: dict[int, str]
    """position -> summary, for every node."""
    warnings: tuple[str, ...]
    model_calls: int


def summarize_tree(nodes: Sequence[TreeNode], model: ChatModel | None, ctx: CallContext) -> TreeSummaries:
    """Section summaries: one model call when 1–40 sections have content, local summaries otherwise.

    Local summaries fill in for sections the reply leaves out, for every section when there is no model
    or more than 40 sections, and after a failed call (with a warning).
    """
    local = {n.position: local_tree_summary(n) for n in nodes}
    summarizable = [n for n in nodes if n.content]
    if model is None or not summarizable or len(summarizable) > MODEL_SUMMARY_MAX_NODES:
        return TreeSummaries(local, (), 0)
    request = [TreeNodeText(n.position, n.depth, n.title, n.content) for n in summarizable]
    try:
        reply = model.summarize_tree(request, ctx)
    except ModelError as exc:
        return TreeSummaries(local, (f"outline summary generation failed, local summaries used: {exc.reason}",), 1)
    given = reply.get("summaries") if isinstance(reply, Mapping) else None
    if not isinstance(given, Mapping):
        return TreeSummaries(local, ("outline summary reply is not valid JSON, local summaries used",), 1)
    summaries = dict(local)
    for n in summarizable:
        value = given.get(str(n.position), given.get(n.position))
        if isinstance(value, str) and value.strip():
            summaries[n.position] = value.strip()
    return TreeSummaries(summaries, (), 1)


def tree_node_rows(nodes: Sequence[TreeNode], summaries: Mapping[int, str], *, kb_id: str, tenant: str) -> list[dict[str, Any]]:
    """Rows of the `tree_nodes` snapshot table; the root's `content_hash` is the tree hash."""
    root_hash = tree_hash(nodes)
    keys = {n.position: n.node_key for n in nodes}
    return [
        {
            "node_key": n.node_key,
            "parent_key": keys[n.parent] if n.parent >= 0 else None,
            "article_id": n.article_id,
            "kb_id": kb_id,
            "tenant": tenant,
            "depth": n.depth,
            "position": n.position,
            "title": n.title,
            "summary": summaries.get(n.position, ""),
            "content": n.content,
            "start_line": n.start_line,
            "end_line": n.end_line,
            "token_estimate": token_estimate(n.content),
            "content_hash": root_hash if n.position == 0 else sha256_hex(n.content),
        }
        for n in nodes
    ]


@dataclass(frozen=True)
class PageIndexResult:
    rows: list[dict[str, Any]]
    warnings: tuple[str, ...]
    model_calls: int


def build_page_index(
    markdown: str, title: str, model: ChatModel | None, ctx: CallContext, *, article_id: str, kb_id: str, tenant: str
) -> PageIndexResult:
    """Parse, summarise and lay out one article's tree as `tree_nodes` rows."""
    nodes = parse_markdown_tree(markdown, title, article_id)
    summaries = summarize_tree(nodes, model, ctx)
    return PageIndexResult(tree_node_rows(nodes, summaries.summaries, kb_id=kb_id, tenant=tenant), summaries.warnings, summaries.model_calls)
