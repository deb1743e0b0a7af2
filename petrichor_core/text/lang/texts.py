"""Fixed texts a reader sees, in each language the product answers in: one home for every wording.

Each text is here once, named for what it says; the modules that show it import it. A text in both
languages is a `{"zh": …, "en": …}` mapping (templates take their values by name: `.format(item=…)`); one the
build writes only in Chinese (its wiki pages are Chinese) is a plain string.
"""

from __future__ import annotations

from petrichor_core.text.lang.script import Language

# Answers (`petrichor_serving.answer.answers`, `agent.offline`, the offline model).

NOT_FOUND: dict[Language, str] = {
    "zh": "知识库中没有找到能回答这个问题的内容。",
    "en": "The knowledge base has nothing that answers this question.",
}
"""The answer when the evidence answers nothing: the agent's and the offline model's, in each language."""
NOTHING_READ_MENTIONS = {"zh": "没有读到与“{missing}”相关的内容。", "en": " Nothing read mentions: {missing}."}
"""Added to the not-found answer: the question's words that nothing read contains (joined by `ENUMERATION_COMMA`)."""
ENUMERATION_COMMA = {"zh": "、", "en": ", "}
"""Between the items of an inline list."""
UNDECIDED = {
    "en": "The evidence read bears on this but settles it neither way; the closest statement is:",
    "zh": "证据未直接回答；最相关的陈述：",
}
"""What a yes/no answer opens with when the evidence read settles the question neither way."""
YES_NO = {"en": ("Yes", "No"), "zh": ("是", "否")}
"""A yes/no answer's opening: (yes, no)."""
SEPARATOR = {"en": " — ", "zh": "——"}
"""Between a short answer and the quote it comes from ("5 — …", "是——…")."""
GREETING = {"zh": "你好！请直接提出关于知识库内容的问题。", "en": "Hello! Ask me anything about the knowledge base."}
"""The answer to a greeting or thanks."""
NOTHING_FOUND_FOR_ITEM = {"zh": "{item}：知识库中没有找到相关内容", "en": "{item}: nothing found in the knowledge base"}
"""A comparison's line for an item nothing was found for."""
LABEL_COLON = {"zh": "：", "en": ": "}
"""Between a label and what it labels (a compared item and its statement, a link and why it is there)."""
ARTICLE_HEAD = {"zh": "《{title}》", "en": "{title}"}
SECTION_HEAD = {"zh": "《{title}》的“{section}”", "en": "The “{section}” section of {title}"}
"""What a structure answer lists the parts of: an article, or a section of it."""
LISTED_KINDS = {"zh": {"steps": "步骤", "parts": "部分"}, "en": {"steps": "steps", "parts": "parts"}}
"""What a structure answer calls the parts it lists: steps when the question asks for steps."""
LISTING = {"zh": "{head}包含以下{kind}（按顺序）：{parts}。", "en": "{head} has these {kind}, in order: {parts}."}
LISTING_SEPARATOR = {"zh": "；", "en": "; "}
"""A structure answer: the article or section, what its parts are called, and the parts, in order."""
ASKED_AS = {"zh": "用户问法：", "en": "Asked as: "}
"""Before a generated question a search hit was found through, in its snippet (by the question's script)."""

# The wiki the build writes (`petrichor_pipeline.knowledge`, and the offline model's pages in either language).

KIND_NAMES_ZH = {"entity": "实体", "concept": "概念"}
"""The page kinds' Chinese names."""
KIND_HEADINGS = {kind: f"## {name}" for kind, name in KIND_NAMES_ZH.items()}
"""A source page's heading over the pages of each kind it gave."""
KIND_FOLDER_NAMES = frozenset({*KIND_NAMES_ZH.values(), *KIND_NAMES_ZH})
"""The kinds' names in either language: never a folder of the catalog (a model's folder path drops them)."""
BUILD_NOTE = "构建知识：{title}"
"""The note on the source references an article's knowledge pages record."""
SUMMARY_HEADING = "## 文档摘要"
NO_SUMMARY = "暂无摘要。"
RELATIONS_HEADING = "## 知识关系"
QUESTIONS_HEADING = "## 切片推荐问题"
SOURCE_HEADING = "## 来源"
SOURCE_LINES = "- 文章：{title}（{article_id}）\n- 版本：{version}"
"""A source page's sections: the document's summary (or that it has none), its relations, the questions
suggested per chunk, and the article and version it comes from."""
NO_DETAIL = "暂无详细说明。"
"""A generated page's body when the model wrote none and the candidate has no summary."""
NO_SOURCE_TEXT = {"zh": "暂无足够的原文信息生成详细页面。", "en": "The source has little to say about this yet."}
"""A page's body when the source says too little to write one: the build's fallback page and the offline
model's page without a summary."""
RELATED_SECTION = {"zh": "## 相关知识", "en": "## Related"}
"""The section listing a page's related pages."""
IN_THE_SOURCE_SECTION = {"zh": "## 原文要点", "en": "## In the source"}
"""The offline model's section of what the source says about the page's subject."""
RELATION_RELATED = {"zh": "关联", "en": "related"}
"""The relation type when none more specific is given: the offline model's and the build's default."""
OTHER_FOLDER = {"zh": "其他", "en": "Other"}
"""The catalog folder of pages no other folder takes."""
UNTITLED_DOCUMENT = "（无标题文档）"
"""The title of a document's tree root when the document has no title."""
UNTITLED_SECTION = "章节 {position}"
"""The title of a section whose heading has no text."""
UNTITLED_HEADING = "文档正文"
"""The heading of a document's preamble when the document has no title."""
OMISSION_MARKER = "\n\n<!-- 文档过长，中间内容已省略；以下继续保留文档末尾 -->\n\n"
"""Where the middle of a document too long for one model call was left out."""

# Questions the build writes (`petrichor_pipeline.knowledge.questions`, `models.offline.questions`).

TEMPLATE_QUESTIONS_ZH = ("{h} 主要讲了什么？", "{h} 中有哪些关键结论？", "如何理解并应用 {h}？")
TEMPLATE_QUESTIONS_EN = ("What is {h} mainly about?", "What are the key conclusions of {h}?", "How do I understand and apply {h}?")
"""The three template questions about a chunk's heading (`{h}`), when the model gave none: Chinese,
or English for a mostly English chunk."""
QUESTION_FORMS_EN = {
    "what": "What is {x}?",
    "what_plural": "What are {x}?",
    "what_in": "What is {x} in {topic}?",
    "does": "What does {x} do?",
    "how_do": "How do I {verb} {x}?",
    "how_work": "How does {x} work?",
    "how_work_plural": "How do {x} work?",
    "why": "Why is {x} used in {topic}?",
    "why_self": "Why is {x} needed?",
    "settings": "Which settings control {x}?",
    "default": "What is the default of {x}?",
    "role": "What role does {x} play in {topic}?",
    "relation": "How is {x} related to {y}?",
    "about": "What does the {topic} section say about {x}?",
}
QUESTION_FORMS_ZH = {
    "what": "什么是{x}？",
    "what_in": "{topic}中的{x}指什么？",
    "does": "{x}有什么作用？",
    "how_do": "如何{verb}{x}？",
    "how_work": "{x}是如何工作的？",
    "why": "为什么{topic}需要{x}？",
    "why_self": "为什么需要{x}？",
    "settings": "哪些配置控制{x}？",
    "default": "{x}的默认值是什么？",
    "role": "{x}在{topic}中起什么作用？",
    "relation": "{x}和{y}之间有什么关系？",
    "about": "{topic}对{x}有哪些说明？",
}
"""The offline model's question forms, by what they ask (`x` a term, `topic` the heading, `verb` a task verb,
`y` a second term); English has plural forms besides."""
TASK_HEADING_QUESTION_ZH = "如何{x}？"
"""The question a Chinese heading that opens on a task verb becomes ("安装 Redis" → "如何安装 Redis？")."""
