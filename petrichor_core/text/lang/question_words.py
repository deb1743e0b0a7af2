"""How questions are worded: question words and the phrasings that say what a question asks for, in Chinese
and English.

Each reader of questions has its own list, named for what it decides; lists that look alike differ in their
members because each was tuned on its own reader's questions, so they stay apart (merging two would change
what one of them matches). Patterns keep both languages' alternatives in one regex where the reader asks
one question of both.
"""

from __future__ import annotations

import re

from petrichor_core.text.lang.numbers import MEASURE_WORDS
from petrichor_core.text.lang.script import CJK_CLASS

# The kind of answer a question asks for (`petrichor_serving.answer.answer_types`, `agent.question`, `answer.answers`).

TIME_ASKED = re.compile(
    r"何时|什么时[候间期代]|哪一?年|哪[一个]?(?:时期|时代|年代|朝代|世纪)|何年|哪一?天|哪一?日|几月|几年|几号"
    r"|(?:时间|日期|年份)[?？]?\s*$"
    r"|\bwhen\b|\b(?:what|which)\s+(?:year|date|day|month|decade|century)\b|\bin what year\b|\bdates?\s*\??\s*$",
    re.I,
)
"""Wording asking for a time: when / which year, 何时 / 哪一年 / 几号, or a question ending on 时间 / 日期 / 年份."""
NUMBER_ASKED = re.compile(
    rf"多少|几[{MEASURE_WORDS}]|多[大高长远重久深宽厚]"
    r"|\bhow\s+(?:many|much|long|old|far|big|large|tall|high|often|fast)\b|\bwhat\s+(?:percentage|number|amount)\b|\bnumber of\b",
    re.I,
)
"""Wording asking for a number: how many / how much / how long, 多少, 几 with a measure word, 多大 / 多高."""
PLACE_ASKED = re.compile(
    r"哪里|哪儿|何处|何地|在哪|什么地方|哪[个座一]?(?:国家|城市|地区|省|州|县|市|国)|哪国"
    r"|(?:地点|地址|举办地|所在地|位置)[?？]?\s*$"
    r"|\bwhere\b|\b(?:what|which)\s+(?:country|city|state|region|place|town|province)\b|\b(?:location|venue)\s*\??\s*$",
    re.I,
)
"""Wording asking for a place: where / which country, 哪里 / 在哪 / 哪个城市, or a question ending on 地点 / 位置."""
ALIAS_ASKED = re.compile(
    r"又(?:被)?(?:叫|称|名)|别[称名]是|被称为什么|称作什么|也叫什么"
    r"|\b(?:also|otherwise)\s+(?:known\s+as|called|named)\b|\b(?:what|which)\s+(?:other|another)\s+names?\b",
    re.I,
)
"""Wording asking for another name of what the question names: 又叫什么, 别称是, "also known as"."""
PERSON_ASKED = re.compile(r"谁|哪[一]?位|什么人|\bwho(?:m|se)?\b", re.I)
"""Wording asking for a person: who, 谁 / 哪位 / 什么人."""
ENTITY_ASKED = re.compile(
    r"什么名字|叫什么|名[字称]是什么|名[字称]叫|哪[个家支所部本首款只]"
    r"|\bwhat\s+(?:is|was|are|were)\s+(?:the\s+)?names?\b|\bwhich\s+[a-z]+|\bwhat\s+(?:company|team|organi[sz]ation|group|firm|brand|product|film|movie|book|song|album|game|app|platform)\b",
    re.I,
)
"""A named thing: "which <noun>" asks for one of a kind, "what is the name" / 叫什么 for its name."""
MONEY_ASKED = re.compile(
    r"多少钱|价格|价钱|售价|定价|费用|收费|年费|起售价|\bhow\s+much\b.*\b(?:cost|costs|pay|charge|price)\b|\b(?:price|cost|fee|fees|pricing)\b", re.I
)
VERSION_ASKED = re.compile(r"哪个版本|什么版本|版本号|\b(?:which|what)\s+version\b|\bversion\s+number\b", re.I)
"""Wording asking for an amount of money or a version: a number of a particular kind (`holds_asked`)."""
COUNTS_TIME = re.compile(r"(?:多少|几)(?:个)?(?:年|月|天|日|周|小时|分钟|秒)|多久|how\s+long|how\s+old", re.I)
"""A count question counting time ("多少年", "几个月", "how long"): a date's parts may be its number."""
MEASURE_ASKED = re.compile(rf"(?:多少|几)([{MEASURE_WORDS}])")
"""The measure word a Chinese count question asks with ("多少人" 人, "几项" 项)."""
COUNTED_EN = re.compile(r"\bhow\s+(?:many|much)\s+(?:[a-z]+\s+)?([a-z][a-z-]+)\s+(?:are|is|were|was|do|does|did|can|will|have|has)\b", re.I)
COUNTED_EN_LOOSE = re.compile(r"\bhow\s+(?:many|much)\s+([a-z][a-z-]+)", re.I)
COUNTED_ZH = re.compile(rf"(?:多少|几)[{MEASURE_WORDS}]?([{CJK_CLASS}]{{2,}})")
"""The noun a count question counts ("How many snapshots are kept" → snapshots, "多少个版本" → 版本): the
English patterns in order, then the Chinese one (group 1 is the noun)."""
WHY_ASKED = re.compile(r"\bwhy\b|为什么|为何|何以|原因", re.I)
"""A why-question (why, 为什么, 为何, 原因): answered by a unit that gives a reason (`cues.REASON`)."""

# Yes / no questions, requests put as questions, how-to and definition questions (`answer.answer_types`).

AUX_EN = r"(?:is|are|was|were|does|do|did|can|could|has|have|had|will|would|should|shall|may|might|must)"
"""English auxiliaries, as a regex group: one opening a clause makes a yes/no question."""
YES_NO_EN = re.compile(rf"^\s*{AUX_EN}\b", re.I)
"""An English question opening on an auxiliary ("Is…", "Does…")."""
MAIN_CLAUSE_EN = re.compile(rf",\s*{AUX_EN}\s+[^?]*\?\s*$", re.I)
"""An auxiliary opening the last clause after an opening phrase: "Between A and B, was there a change…?".
Holds on all four dev sets: 21 multihop questions get the undecided line instead of a bare quote, no figure moves."""
WH_CLAUSE_EN = re.compile(r"(?:^|[,;]\s*)(?:what|which|who|whom|whose|when|where|why|how)\b", re.I)
"""A clause led by an English question word: the question asks what, not whether."""
YES_NO_FRAME = re.compile(r"是不是|是否|有没有|能不能|会不会|可不可以|对不对")
"""Chinese frames that ask whether (是不是, 是否, 有没有…): they negate nothing in the question."""
YES_NO_ZH = re.compile(rf"{YES_NO_FRAME.pattern}|吗\s*[？?]?\s*$")
"""A Chinese yes/no question: one of the frames, or 吗 closing it."""
SPEECH_VERBS_EN = (
    r"tell|explain|describe|outline|show|list|give|provide|walk|guide|help|clarify|elaborate|summari[sz]e|detail|"
    r"share|go|break|point|suggest|recommend|advise|compare|define|document|write|draft"
)
"""English speech-act verbs (telling, explaining, listing…), as a regex alternation (`REQUEST_EN`)."""
REQUEST_EN = re.compile(rf"\b(?:can|could|would|will)\s+you\s+(?:please\s+|kindly\s+)?(?:(?:{SPEECH_VERBS_EN})\b|\w+\s+(?:me|us)\b)|\bplease\b", re.I)
"""A request put as a question ("Could you outline…", "can you tell me…", "…, please?"): the user asks the
assistant to speak, about whatever follows, so it is answered as that, never with Yes or No. The verbs are
English's speech-act verbs (telling, explaining, listing…), a closed class, not the phrasing of one set."""
REQUEST_ZH = re.compile(
    r"[你您](?:能|可以|能不能|可不可以|能否)?(?:帮我|给我|为我)?(?:告诉|介绍|解释|说明|讲讲|讲一下|讲解|列出|描述|概括|总结|演示)|请(?:你|您)?(?:告诉|介绍|解释|说明|列出|描述|概括|总结)"
)
"""The Chinese requests of the same verbs ("你能介绍一下…吗", "请说明…")."""
ALTERNATIVE_EN = re.compile(rf"\bor\s+{AUX_EN}\b(?!\s+not\b)", re.I)
"""An alternative question ("Are the plugins preinstalled, or do we need to get them…?"): it asks which, not
whether ("…or not?" still asks whether)."""
WH_DIRECT_EN = re.compile(rf"\bhow\s+(?:{AUX_EN}|to)\b", re.I)
"""A how-question anywhere ("so how do I manage roles…, is it all done in the UI?", "…explain how to
install…"): "how" is never a relative pronoun, so before an auxiliary or an infinitive it always asks."""
HOW_TO = re.compile(
    r"\bhow\s+(?:(?:do|can|could|should|would|shall|may|might|must)\s+(?:i|we|you|one|users?|developers?|admins?|administrators?)|to)\b"
    r"|\b(?:steps?|procedure|instructions?)\s+(?:to|for)\b"
    r"|如何|怎么|怎样|步骤|方法是什么|怎么办",
    re.I,
)
"""How-to wording: "how do I / how can we / how to …" (a person as the doer), "steps to …", 如何 / 怎么 / 怎样 /
步骤. "How does X simplify / work / differ" asks for an explanation, not for steps (rhdh_docs_en: such
questions quoted a prerequisites list); 怎么样 asks for an opinion (`is_how_to`)."""
NOT_HOW_TO_ZH = ("怎么样", "为什么")
"""Chinese wording that asks for an opinion (怎么样) or a reason (为什么) even beside 怎么 / 如何: no how-to."""
DEFINE_EN = re.compile(
    r"^\s*(?:what|who)\s+(?:is|are|was|were)\s+(?:an?\s+|the\s+)?(?P<term>[^?]{1,60}?)\s*(?:(?:,|\s+and)\s+(?:why|how|what|where|when|who)\b[^?]*)?\??\s*$",
    re.I,
)
""""What is RRF (and why is it used)?": a definition question and its term (group `term`)."""
DEFINE_ZH = re.compile(r"^\s*(?:什么是|何为|何谓)(?P<a>[^？?，,]{1,20})|^\s*(?P<b>[^？?，,]{1,20}?)(?:是什么|指的?是什么|是指什么|是什么意思)")
""""什么是主节点？", "主节点是什么？": a Chinese definition question and its term (group `a` or `b`)."""

# The question's class, its answer language and a comparison's items (`agent.question`).

GREETING_OR_THANKS = re.compile(r"^\s*(hi|hello|hey|thanks?|thank you|你好|您好|谢谢|多谢|嗨)[\s!！。.?？]*$", re.I)
"""A message that is only a greeting or thanks: answered directly, nothing searched."""
COMPARISON_ASKED = re.compile(r"(区别|不同|差异|差别|对比|比较|相比|异同|\bvs\.?\b|\bversus\b|difference|differ|compare|comparison|contrast)", re.I)
"""Comparison wording (区别, 对比, vs, difference…): a comparison when its two items are found too."""
CONCEPT_ASKED = re.compile(
    r"(什么是|是什么意思|的概念|的含义|的原理|如何工作|怎么工作|^\s*(what is|what are|explain|define)\b|\bhow does .+ work\b)", re.I
)
"""Wording asking what something is or how it works: a concept question."""
ZH_FUNCTION_WORDS = re.compile(r"(的|了|吗|呢|是|在|和|与|如何|怎么|怎样|什么|哪些|哪个|为什么|需要|可以|多少|几)")
"""A question with Chinese function words is asked in Chinese, however much Latin it names (`Kubernetes`)."""
BETWEEN_EN = re.compile(r"between (?:the )?(?P<a>.+?) and (?:the )?(?P<b>.+?)(?:[?.!]|$| in | for | when )", re.I)
COMPARE_EN = re.compile(
    r"(?:compare|comparing|contrast) (?:the )?(?P<a>.+?) (?:and|with|to|vs\.?|versus) (?:the )?(?P<b>.+?)(?:[?.!]|$| in | for )", re.I
)
DIFFER_EN = re.compile(
    r"(?:how )?(?:does|do|is|are) (?:the )?(?P<a>.+?) (?:differ from|compare (?:to|with)|different from) (?:the )?(?P<b>.+?)(?:[?.!]|$)", re.I
)
VS_EN = re.compile(r"(?P<a>[\w .\-]+?)\s+(?:vs\.?|versus)\s+(?P<b>[\w .\-]+)", re.I)
PAIR_ZH = re.compile(r"^(?:请问)?(?P<a>.+?)(?:和|与|跟|同|及|还是|、)(?P<b>.+?)(?:之间)?(?:的|有|在|相比|比较|对比|哪)")
"""The patterns that find a comparison's two items (groups `a` and `b`), tried in this order: English
"between A and B", "compare A with B", "how does A differ from B", "A vs B", then Chinese "A和B的…"."""

# Question words that say nothing of a question's subject, each list its reader's.

QUESTION_WORDS_ZH = frozenset("多少 什么 怎么 怎样 如何 哪些 哪个 哪里 是否 为什么 几个 几种 可以 能否 需要".split())
"""Words that shape a Chinese question but say nothing about its subject."""
WH_ZH = re.compile(r"哪[里儿些个位种]|多少|什么(?:地方|样)?|怎么样?|怎样|为什么|如何|谁|哪|几|何|怎|[这那][个张位种本部首座条次项家所]")
"""Chinese question words: a token holding one (由谁来, 哪一年) names no subject."""
GLUE_ZH = re.compile(r"多[大高长远重久深宽厚]|[的是了在和与及有为被把由于将对从向之其也都就而吗呢]")
"""Wh-phrases and one-character function words: a phrase across them says nothing about the subject."""
CLAUSE_QUESTION_WORDS = re.compile(r"(是什么|为什么|怎么样|怎么办|如何|怎样|哪些|哪个|多少|吗|呢|？|\?)")
"""Question words the query rewrite removes from each clause it searches on its own (`recall.rewrite`)."""
QUESTION_PREFIXES = ("请问", "想知道", "帮我", "麻烦", "我想", "能否", "可以", "请", "那么", "另外", "以及", "还有")
"""Lead-ins the query rewrite trims from the start of a clause (请问, 我想…), the first that matches."""
WHAT_IS_PHRASING = re.compile(
    r"什么是|是什么|什么叫|何为|何谓|是指什么|指的是什么|指什么|是啥|啥是|的定义|定义|的含义|含义|的概念|概念|"
    r"的意思|意思|的作用|作用|介绍一下|介绍|解释一下|解释|请问|吗|呢|"
    r"\b(?:what|who)(?:'s|\s+(?:is|are|was|were))\b|\b(?:define|definition of|meaning of|explain|describe|"
    r"tell me about|overview of|the|an?)\b",
    re.IGNORECASE,
)
"""Phrasing that asks what something is; what remains of such a question is the subject's name."""
ELLIPTICAL = re.compile(r"^\s*(?:what|how)\s+about\b|^\s*and\s+(?:what|how|in|for|the)\b|呢\s*[？?]?\s*$", re.I)
""""What about 2021?", "And for Splunk?", "上海呢？": the previous question again, with one thing changed."""
QUESTION_LIKE = re.compile(r"[?？]\s*$|^(?:what|how|why|when|which|who)\b|^(?:什么|如何|为什么|怎么|怎样|哪些)", re.IGNORECASE)
"""Text already worded as a question (a question mark, or a question word opening it): the offline model
writes no question around such a heading or topic."""

# Structure questions (`agent.structure`, which stems the word lists; `agent.offline`).

PART_WORDS = (
    "section sections subsection subsections part parts chapter chapters topic topics step steps item items option options "
    "way ways area areas aspect aspects group groups kind kinds type types category categories list lists overview "
    "outline contents under "
    "章节 小节 步骤 部分 目录 大纲 结构 方面 内容 几部分"
)
"""Nouns for the parts of a document, its subdivisions and a listing of them, and "under"."""
COVER_WORDS = (
    "cover covers covered covering include includes contain contains explain explains describe describes discuss discusses "
    "mention mentions address addresses say says summarise summarize organised organized list listed "
    "包括 包含 列出 列举 涵盖 讲了 介绍 讲"
)
"""Verbs of what a text covers (its discourse verbs)."""
FRAME_WORDS = (
    "guide guides reference doc docs documentation article page manual appendix what which whats about over through "
    "have has tell give show see find know learn get there me break breaks walk walks go goes talk talks down us "
    "文档 指南 手册 这篇 文章 一文 一下 什么 哪些 几个 需要 有"
)
"""Words that frame a structure question without naming its subject: the document's kind, question and
light verbs."""
COVER_PHRASES = re.compile(
    r"\b(?:break|breaks)\s+(?:it\s+|this\s+)?down\b|\b(?:walk|walks|go|goes|talk|talks)\s+(?:me\s+|us\s+)?(?:through|over|about)\b", re.I
)
"""Phrasal verbs that say the same ("break down", "walk me through", "go over", "talk about"), matched as
phrases: their words alone ("down", "go") say nothing of the kind. Ablation: no question of the dev sets uses
one (30 of 33 either way, every fact set unchanged); the bundled corpus's own "walk through" question does."""
PLURAL_PART_NOUNS_EN = "sections|subsections|parts|chapters|topics|steps|items|options|ways|areas|aspects"
"""Plural English part nouns, as a regex alternation (`ASKS_FOR_PARTS`)."""
ASKS_FOR_PARTS = re.compile(
    rf"\b(?:which|what)\s+(?:[\w-]+\s+){{0,2}}?(?:{PLURAL_PART_NOUNS_EN})\b|(?:哪些|哪几|几个)(?:章节|小节|步骤|部分|方面)",
    re.I,
)
"""A question word governing a plural part noun ("which sections", "what steps", "哪些步骤"): the question asks
for the parts themselves, so a word of its own may name the section in other words ("快速开始" for 快速上手).
A singular one ("what deployment option") asks for one thing: a fact. Ablation: 28 of 33 structure questions
outlined without it, not 30, and rhdh's six "what are the steps" how-tos not outlined (6 → 0)."""
STEPS_ASKED = re.compile(r"步骤|\bsteps?\b", re.I)
"""A structure question asking for steps, not parts: the listing calls its items steps."""
