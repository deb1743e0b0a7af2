"""Versioned prompt templates and their JSON reply contracts.

`versions.CHAT_PROMPT_VERSION` is part of the chat fingerprint: changing any wording here must bump it, so that
questions, candidates and pages built with the old wording are re-derived.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from petrichor_core.models.protocols import (
    CandidateRequest,
    EvidenceText,
    PageRequest,
    QuestionChunk,
    TreeNodeText,
)
from petrichor_core.models.reply_contract import INTEGER, STRING, Contract, arr, keyed, obj

NO_EXISTING_PAGES = "（暂无既有页面）"
ALIASES_LABEL = "别名："
SUMMARY_LABEL = "摘要："
FOLDER_LABEL = "目录："
"""The labels of a page line in the `<existing_pages>` and `<valid_wiki_pages>` catalogs."""
TREE_BODY_MAX_CHARS = 400
CATALOG_FOLDER_LIMIT = 120
EXISTING_PAGES_LINE_LIMIT = 300

CONTRACT_WINS_LINE = "无论上面的编译说明书写了什么，都必须严格遵守本提示前面给出的 JSON 输出协议，只输出该 JSON。"
CONTRACT_RETRY_LINE = "上一条回复不符合 JSON 输出协议（{detail}）。请重新回答，只输出符合协议的 JSON。"
"""The follow-up sent once after a reply of valid JSON in the wrong shape. Only retries see it, and a
retry's reply meets the same contract, so its wording is outside `CHAT_PROMPT_VERSION`."""


@dataclass(frozen=True)
class Prompt:
    """One model operation: its op name (for usage accounting), system rules and reply contract.

    `contract` is the one declaration of the reply's shape: the structured-output schema sent to the
    endpoint and the check of every reply both derive from it (`reply_contract`).
    """

    op: str
    system: str
    contract: Contract


_CANDIDATE = obj({"name": STRING, "pageKey": STRING, "aliases": arr(STRING), "summary": STRING}, required=["name"])
_RELATION = obj(
    {"fromPageKey": STRING, "toPageKey": STRING, "relationType": STRING, "description": STRING},
    required=["fromPageKey", "toPageKey"],
)

QUESTIONS = Prompt(
    op="kb.build.questions",
    system="\n".join(
        [
            "你是知识库问题生成器。为每个 Markdown 切片生成恰好 3 个用户可能提出的推荐问题。",
            "heading 是该切片在文档中的完整标题路径（用 > 分隔），可据此判断切片所处的语境层级。",
            "问题必须能仅依据对应切片回答，具体、互不重复，不要输出答案。",
            '只输出 JSON：{"questions":{"chunk-001":["问题1","问题2","问题3"]}}。',
        ]
    ),
    contract=Contract("questions", obj({"questions": keyed(arr(STRING))}, required=["questions"])),
)

CANDIDATES = Prompt(
    op="kb.build.extraction",
    system="\n".join(
        [
            "你是知识库编译器，从一篇完整文档中抽取可以独立成页的 Wiki 候选。",
            "实体（entities）：具体、可独立识别的对象，例如产品、服务、组件、命令、配置项、接口、人物或组织。",
            "概念（concepts）：可以被解释、复用的知识点，例如方法、原理、流程、策略或术语。",
            "不要把章节标题本身当成页面；只抽取文档中有实质内容支撑的条目，通常 5–20 个，最多 24 个。",
            "每个条目只能属于一个类别；同一对象不要重复抽取。",
            "existing_pages 中已有合适页面时，复用它的 pageKey，不要新建重复页面。",
            "pageKey 形如 entity/名称 或 concept/名称；summary 用一两句话说明该条目在本文中的含义。",
            "relations 只能连接本次抽取出的候选，必须有原文依据，description 说明依据。",
            "documentSummary 概括整篇文档的主题与要点。",
            "只输出 JSON："
            '{"documentSummary":"...",'
            '"entities":[{"name":"","pageKey":"entity/...","aliases":[],"summary":""}],'
            '"concepts":[{"name":"","pageKey":"concept/...","aliases":[],"summary":""}],'
            '"relations":[{"fromPageKey":"...","toPageKey":"...","relationType":"实现","description":"..."}]}。',
        ]
    ),
    contract=Contract(
        "candidates",
        obj(
            {
                "documentSummary": STRING,
                "entities": arr(_CANDIDATE),
                "concepts": arr(_CANDIDATE),
                "relations": arr(_RELATION),
            },
            required=["entities", "concepts"],
        ),
    ),
)

CATALOG = Prompt(
    op="kb.build.taxonomy",
    system="\n".join(
        [
            "你是知识库目录规划器，为一批 Wiki 页面规划浅层、可复用的目录。",
            "目录最多两级，优先一级；顶层目录通常不超过 6 个。",
            "不要建立“实体”“概念”这样的根目录，也不要为每个页面单独建目录。",
            "existing_folders 中已有合适目录时优先复用。",
            '只输出 JSON：{"assignments":[{"pageKey":"entity-xxx","path":["一级","二级"]}]}。',
        ]
    ),
    contract=Contract(
        "catalog", obj({"assignments": arr(obj({"pageKey": STRING, "path": arr(STRING)}, required=["pageKey", "path"]))}, required=["assignments"])
    ),
)

PAGES = Prompt(
    op="kb.build.pages",
    system="\n".join(
        [
            "你是知识库 Wiki 页面写作者，依据文档为 requested_pages 中的每个候选写一页独立的 Markdown。",
            "页面以“# 页面标题”开头，只写文档支持的内容，不要编造。",
            "正文第一次提到 valid_wiki_pages 中的相关页面时，写成 [[pageKey|显示名称]] 链接。",
            "不要编造 pageKey，不要链接到页面自身。",
            "不要出现切片编号（chunk-001 之类）或处理过程说明。",
            "summary 是 15–80 字、可独立阅读的摘要。",
            '只输出 JSON：{"pages":[{"pageKey":"","summary":"15-80字独立摘要","contentMd":"完整 Markdown"}]}。',
        ]
    ),
    contract=Contract(
        "pages",
        obj({"pages": arr(obj({"pageKey": STRING, "summary": STRING, "contentMd": STRING}, required=["pageKey", "contentMd"]))}, required=["pages"]),
    ),
)

TREE_SUMMARIES = Prompt(
    op="kb.wiki.tree.summary",
    system="\n".join(
        [
            "你是文档目录摘要器。为下面每个章节写一句中文摘要，不超过 60 字，只依据该章节正文。",
            "章节以 [位置] 开头，# 的个数表示标题层级。",
            '只输出 JSON：{"summaries":{"<位置>":"摘要"}}。',
        ]
    ),
    contract=Contract("tree_summaries", obj({"summaries": keyed(STRING)}, required=["summaries"])),
)

ANSWER = Prompt(
    op="agent.answer",
    system="\n".join(
        [
            "你是知识库问答助手，只能依据下面编号的证据段落回答问题，不得使用证据以外的知识。",
            "用与问题相同的语言作答；每个依据证据的论断后面标注引用标记 [n]，n 是证据编号。",
            "每条引用的 quote 必须从该证据正文中逐字复制，不改写、不拼接、不省略。",
            "问题问的是数量、日期、地点、人物、名称或是否时，answer 先用你自己的话给出简短答案（如“5 个”“2001年”“是”“否”），再写出带引用标记的依据。",
            "如果证据不能回答问题，明确说明知识库中没有找到答案，citations 为空数组。",
            '只输出 JSON：{"answer":"...","citations":[{"marker":1,"evidence_id":"...","quote":"..."}]}。',
        ]
    ),
    contract=Contract(
        "answer",
        obj(
            {"answer": STRING, "citations": arr(obj({"marker": INTEGER, "evidence_id": STRING, "quote": STRING}, required=["evidence_id", "quote"]))},
            required=["answer"],
        ),
    ),
)


def system_prompt(base: str, guide: str) -> str:
    """Rules first, then the compile guide in its own delimited section, then the contract reminder last.

    `guide` arrives cleaned (`petrichor_pipeline.knowledge.guide.prepare_guide`: no HTML comments, no heading-only sections).
    """
    parts = [base.strip()]
    cleaned = guide.strip()
    if cleaned:
        parts.append(f"<compile_guide>\n{cleaned}\n</compile_guide>")
    parts.append(CONTRACT_WINS_LINE)
    return "\n\n".join(parts)


def heading_label(chunk: QuestionChunk) -> str:
    return " > ".join(chunk.heading_path) if chunk.heading_path else chunk.heading


def questions_user_message(chunks: Sequence[QuestionChunk]) -> str:
    return "\n\n".join(f'<chunk id="{c.key}" heading="{heading_label(c)}">\n{c.content}\n</chunk>' for c in chunks)


def candidates_user_message(req: CandidateRequest) -> str:
    existing = req.existing_pages.strip() or NO_EXISTING_PAGES
    existing = "\n".join(existing.split("\n")[:EXISTING_PAGES_LINE_LIMIT])
    return "\n\n".join(
        [
            f"知识库：{req.kb_name}",
            f"文档标题：{req.title}",
            f"<existing_pages>\n{existing}\n</existing_pages>",
            f"<document_markdown>\n{req.document}\n</document_markdown>",
        ]
    )


def catalog_user_message(candidates: Sequence[Mapping[str, Any]], existing_folders: Sequence[str]) -> str:
    folders = sorted({f.strip() for f in existing_folders if f.strip()})[:CATALOG_FOLDER_LIMIT]
    pages = "\n".join(_page_line(c) for c in candidates)
    return "\n\n".join(
        [
            "<existing_folders>\n" + ("\n".join(f"- {f}" for f in folders) or "（暂无目录）") + "\n</existing_folders>",
            f"<pages>\n{pages}\n</pages>",
        ]
    )


def pages_user_message(req: PageRequest) -> str:
    relations = "\n".join(
        f"{r.get('fromPageKey', '')} --{r.get('relationType', '')}--> {r.get('toPageKey', '')}：{r.get('description', '')}" for r in req.relations
    )
    return "\n\n".join(
        [
            f"文档标题：{req.title}",
            "<valid_wiki_pages>\n" + "\n".join(_page_line(p) for p in req.valid_pages) + "\n</valid_wiki_pages>",
            f"<relations>\n{relations or '（无）'}\n</relations>",
            "<requested_pages>\n" + "\n".join(_page_line(p, summary=True) for p in req.requested) + "\n</requested_pages>",
            f"<document_markdown>\n{req.document}\n</document_markdown>",
        ]
    )


def tree_user_message(nodes: Sequence[TreeNodeText]) -> str:
    blocks = []
    for node in nodes:
        body = node.content.strip()
        if len(body) > TREE_BODY_MAX_CHARS:
            body = body[:TREE_BODY_MAX_CHARS] + "…"
        blocks.append(f"[{node.position}] {'#' * max(node.depth, 1)} {node.title}\n{body}")
    return "\n\n".join(blocks)


def answer_user_message(question: str, evidence: Sequence[EvidenceText]) -> str:
    passages = "\n\n".join(
        f'<evidence n="{n}" id="{e.evidence_id}" title="{e.title}" path="{" > ".join(e.heading_path)}">\n{e.content}\n</evidence>'
        for n, e in enumerate(evidence, start=1)
    )
    return f"<question>\n{question}\n</question>\n\n{passages or '（没有证据）'}"


def _page_line(page: Mapping[str, Any], summary: bool = False) -> str:
    fields = [str(page.get("pageKey", "")), str(page.get("kind", "")), str(page.get("name") or page.get("title", ""))]
    aliases = page.get("aliases") or []
    if aliases:
        fields.append(ALIASES_LABEL + "、".join(str(a) for a in aliases))
    if summary and page.get("summary"):
        fields.append(f"{SUMMARY_LABEL}{page['summary']}")
    return "- " + " | ".join(fields)
