"""Cue words in running text: the words that signal a reason, a negation, a definition, an alias, a place,
a clause joined to another, words addressed to the assistant, and the like, in Chinese and English.
"""

from __future__ import annotations

import re

# What an answer's unit holds (`answer.answer_types`, `answer.answers`).

PLACE_HELD = re.compile(r"位于|坐落|地处|分布|[省市县州国镇村岛洋洲区]|\b(?:in|at|near|from)\s+[A-Z]")
"""Text that can answer a place question: 位于 / 坐落, a place-name suffix (省, 市, 县…), "in" / "at" before a name."""
ALIAS_HELD = re.compile(
    r"又[名称叫]|亦[称名]|别[称名]|简称|俗称|也[叫称]|[被又]?称为|称作|叫做|\ba\.?k\.?a\.?(?=\s)|\b(?:also\s+)?(?:known\s+as|called)\b",
    re.I,
)
"""An alias cue (又名, 亦称, 简称, "also known as"): the unit that gives another name."""
NEGATION = re.compile(r"\b(?:not|no|never|none|neither|nor|without|cannot)\b|n't\b|不|没有|没|未|无|非|别|否", re.I)
"""Negation cues: a unit negates a claim when one sits in the clause holding the claim's words."""
STATE_ON = re.compile(r"\b(?:on|enabled?|active|allowed|turned on|switched on)\b|开着|开启|打开|启用|开放|允许", re.I)
STATE_OFF = re.compile(r"\b(?:off|disabled?|inactive|denied|turned off|switched off)\b|关着|关闭|禁用|停用|禁止", re.I)
"""A setting's two states as text says them: a yes/no question that asks whether something is in one state is
answered No by a clause that puts it in the other (`answers._yes_no`: 默认处于关闭状态 for "默认是开着的吗")."""
REASON = re.compile(
    r"\b(?:because|since|so that|therefore|thus|hence|which is why|in order to|the reason)\b|因为|所以|因此|由于|为了|以便|从而|以免", re.I
)
"""Reason cues (because, so that, 因为, 因此…): a unit that gives a reason answers a why-question."""
DEFINITION_VERBS_EN = r"(?:is|are|was|were|stands for|means|refers to|denotes)\b"
DEFINITION_VERBS_ZH = r"(?:是|指|即|意为|就是|为)"
"""A copula or definition verb after a term (and its parenthesis): the sentence defines the term (the
answerer's `defines`), as regex groups."""

# Clauses of a compound question (`recall.rewrite`).

CLAUSE_CONJUNCTION = re.compile(r"(，以及|，还有|，并且|，同时|以及|、并|；|;|，再|，然后|\band\b)", re.IGNORECASE | re.ASCII)
"""Conjunctions that join the clauses of a compound question, each searched on its own; its word boundaries
are ASCII (re.ASCII), as RE2's are."""

DISTRIBUTIVE = re.compile(r"分别|各自|\s*\brespectively\b", re.IGNORECASE)
"""Words that distribute a question over its coordinated values ("分别是多少", "respectively"): meaningless
once each value is asked about alone (`recall.coordinated`)."""
COORDINATOR = re.compile(r"\s*(?:和|与|及|以及|跟|同|、|,|，|/|&|\band(?:\s+the)?\b|\bor\b)\s*", re.IGNORECASE)
"""What alone may stand between two values of one kind for them to be coordinated ("2022年和2023年",
"香港、澳门", "Fortune and TechCrunch"; `recall.coordinated`): the coordinating conjunctions, a closed class."""

# Words addressed to the assistant inside the evidence (`answer.address`).

MODEL_EN = r"(?:ai|a\.i\.|assistants?|chatbots?|bots?|(?:large\s+)?language\s+models?|llms?|models?|agents?|gpt)"
"""Names for an AI model or assistant, as a regex group."""
MODEL_ZH = r"(?:AI|ai|人工智能|大模型|语言模型|模型|助手|助理|机器人|智能体)"
"""The Chinese names for an AI model or assistant, as a regex group."""
ADDRESS_CLAUSE = r"(?:^|[.:;!?,，。：；！？]\s*|\b(?:please|and|now|then)\s+)"
"""Where an instruction may start: the text's start, after punctuation, or after please / and / now / then."""
QUALIFIER_EN = r"(?:the|your|these|those|my|previous|prior|above|earlier|preceding|original|system|safety)"
"""Words before "instructions" that point at the assistant's own ("your previous instructions")."""
NOTICE = re.compile(
    rf"\b(?:notice|message|note|instructions?|memo|attention|directive)\s+(?:to|for)\s+(?:the\s+|all\s+|any\s+|every\s+)?(?:ai\s+)?{MODEL_EN}\b"
    r"|^\W*(?:system|assistant|ai)\s+(?:notice|message|override|instructions?|prompt|directive)\s*[:：]"
    rf"|(?:^|[^\w])致\s*(?:所有|各位)?\s*(?:AI|ai)?\s*{MODEL_ZH}"
    rf"|(?:写给|发给)\s*(?:AI|ai)?\s*{MODEL_ZH}的(?:通知|提示|消息|指令)"
    r"|^\W*(?:系统|助手)(?:通知|提示|消息|指令)\s*[:：]",
    re.I,
)
"""A notice addressed to the model ("note to the AI", "system message:", "致所有AI助手")."""
OVERRIDE = re.compile(
    rf"{ADDRESS_CLAUSE}(?:ignore|disregard|forget|override|bypass)\s+(?:all\s+|any\s+)?(?:of\s+)?{QUALIFIER_EN}\s+(?:{QUALIFIER_EN}\s+)?"
    r"(?:instructions?|rules?|prompts?|guidelines?|directions?|polic(?:y|ies)|constraints?|restrictions?)\b"
    r"|\b(?:ignore|disregard|forget)\s+(?:all\s+)?(?:previous|prior|above|earlier|preceding)\s+(?:instructions?|rules?|prompts?)\b"
    r"|(?:忽略|无视|忘记|忘掉|不要理会|别管|绕过|不要遵守|不必遵守)掉?(?:你的?)?(?:之前|先前|以上|上面|上述|所有|全部|原有|原来|系统)的?(?:所有|全部)?的?"
    r"(?:指令|指示|规则|提示词?|要求|设定|约束|限制)",
    re.I,
)
"""An order to drop the instructions given ("ignore all previous instructions", "忽略之前的所有指令")."""
ROLE = re.compile(
    rf"\byou\s+are\s+now\b|\bfrom\s+now\s+on,?\s+you\b|\bpretend\s+(?:to\s+be|you\s+are)\b|\byour\s+new\s+(?:role|instructions?|task)\b"
    rf"|{ADDRESS_CLAUSE}(?:act|behave|respond)\s+as\s+(?:an?|the|if)\b"
    r"|你现在是(?!否)|从现在(?:起|开始)[，,]?你|(?:请|你)扮演|假装你是|你的新(?:角色|任务|指令)",
    re.I,
)
"""A new role handed to the assistant ("you are now", "pretend to be", "你现在是", "请扮演")."""
IDENTITY = re.compile(
    rf"\byou\s+are\s+(?:an?|the)\s+(?:\w+\s+){{0,2}}{MODEL_EN}\b|\bas\s+an\s+ai(?:\s+(?:language\s+model|assistant|model)\b|\s*[,.])|你是(?:一个|一名)?\s*{MODEL_ZH}",
    re.I,
)
"""Telling the assistant what it is ("you are an AI assistant", "as an AI,", "你是一个AI助手")."""
ADDRESS_SIGNALS = (NOTICE, OVERRIDE, ROLE, IDENTITY)
"""Each a form of address only a model's instructions take: any one marks a unit as addressed to the
assistant (`answer.address.addresses_the_assistant`)."""

# What a chunk or a document says, as the offline model reads it (`models.offline.questions`, `models.offline.candidates`).

TASK_VERBS_EN = (
    "set up",
    "install",
    "configure",
    "deploy",
    "run",
    "start",
    "enable",
    "disable",
    "create",
    "build",
    "add",
    "remove",
    "update",
    "upgrade",
    "connect",
    "publish",
    "migrate",
    "rebuild",
    "call",
    "use",
)
"""Verbs of a task a reader performs (install, configure, deploy…): "How do I <verb> X?"."""
TASK_VERBS_ZH = (
    "安装",
    "配置",
    "部署",
    "启动",
    "启用",
    "关闭",
    "创建",
    "设置",
    "构建",
    "添加",
    "删除",
    "更新",
    "升级",
    "连接",
    "发布",
    "迁移",
    "运行",
    "调用",
    "接入",
    "使用",
)
"""The Chinese task verbs (安装, 配置, 部署…): "如何<verb>X？"."""
TASK_LEADS_ZH = frozenset({"请", "先", "再", "然后", "可以", "需要", "并", "即可", "要", "，", "；", "：", "、"})
"""What may stand right before a Chinese task verb for it to be an instruction (请, 先, 然后, punctuation)."""
CHUNK_SIGNALS = {
    "default": re.compile(r"\bdefaults?\b|默认", re.IGNORECASE),
    "reason": re.compile(r"\b(?:because|so that|in order to|why|otherwise|avoids?)\b|因为|为了|原因|所以|以便|避免|否则", re.IGNORECASE),
    "settings": re.compile(
        r"\b(?:settings?|options?|config(?:uration)?|flags?|parameters?|environment variables?)\b"
        r"|配置|参数|选项|设置|环境变量",
        re.IGNORECASE,
    ),
}
"""What a chunk talks about besides its terms: a default, a reason, settings (each chooses question forms)."""
DEFINITION_CUE = re.compile(r"\s(?:is|are|means|refers to|stands for|holds|stores)\s|是|指|用于|负责|表示|：|:")
"""A sentence that defines what opens it ("X is…", "X是…", "X：…")."""
DEFINITION_LEAD = re.compile(r"[\s*_`\"'“‘「【\[(（-]*(?:(?:the|an?)\s+)?", re.IGNORECASE)
"""What may come before a term a sentence defines: markers, quotes, bold, an article."""
DEFINITION_TAIL = re.compile(
    r"[*_`\"'”’」】\]]*\s*(?:[（(][^）)\n]{0,60}[)）])?[*_`]*\s*"
    r"(?:(?:is|are|means|refers to|stands for|denotes)\s|是|指|即|用于|负责|表示|[：:]|[—–]|-\s)",
    re.IGNORECASE,
)
"""What follows a defined term: "X is a …", "X（…）是…", "X：…", "X — …", parenthetical aside allowed."""

# What a model writes that a page must not keep (`petrichor_pipeline.knowledge.pages`).

PROCESS_NOTE_LEAD = "依据切片"
"""How a model's process note opens ("依据切片…", "based on chunk…"): a generated page drops such lines."""
