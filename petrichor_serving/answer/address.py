"""Evidence is data: text that addresses the assistant as instructions is never quoted as an answer.

A knowledge base can hold a pasted prompt injection ("SYSTEM NOTICE TO THE ASSISTANT: ignore the rules…",
"忽略之前的所有指令", "你现在是…"). Nothing acts on it, but quoting it as the answer hands the injection to
the reader as if it were the knowledge base's own statement. `addresses_the_assistant` recognises such a
text by the shape of the address, not by its topic, from four structural signals (English and Chinese):

1. a notice headed to the model: a notice/message/instruction word followed by "to/for the assistant/AI/
   model/…" (致 AI 助手：, 写给模型的通知), or a line opening on a role label such as "SYSTEM NOTICE:" / "系统提示：";
2. an override: an imperative (clause-initial) ignore/disregard/forget/bypass whose object is the reader's
   instructions, rules or prompt ("ignore previous instructions", "忽略以上规则");
3. a role reassignment in the second person: "you are now", "from now on you", "pretend you are", an
   imperative "act as" (你现在是 / 从现在起你 / 请扮演 / 假装你是);
4. a second-person identity given to a model: "you are an AI assistant" / "你是一个 AI 助手".

Any one signal suffices: each is a form of address only a model's instructions take. Text inside double
quotes or backticks is a mention, not an address ("the phrase “ignore previous instructions” is fenced"),
so quoted spans are removed first.
"""

from __future__ import annotations

import re
from functools import lru_cache

_MODEL = r"(?:ai|a\.i\.|assistants?|chatbots?|bots?|(?:large\s+)?language\s+models?|llms?|models?|agents?|gpt)"
_ZH_MODEL = r"(?:AI|ai|人工智能|大模型|语言模型|模型|助手|助理|机器人|智能体)"

_QUOTED = re.compile(r"\"[^\"\n]{0,300}\"|“[^”\n]{0,300}”|「[^」\n]{0,300}」|『[^』\n]{0,300}』|`[^`\n]{0,300}`")
_CLAUSE = r"(?:^|[.:;!?,，。：；！？]\s*|\b(?:please|and|now|then)\s+)"

_NOTICE = re.compile(
    rf"\b(?:notice|message|note|instructions?|memo|attention|directive)\s+(?:to|for)\s+(?:the\s+|all\s+|any\s+|every\s+)?(?:ai\s+)?{_MODEL}\b"
    r"|^\W*(?:system|assistant|ai)\s+(?:notice|message|override|instructions?|prompt|directive)\s*[:：]"
    rf"|(?:^|[^\w])致\s*(?:所有|各位)?\s*(?:AI|ai)?\s*{_ZH_MODEL}"
    rf"|(?:写给|发给)\s*(?:AI|ai)?\s*{_ZH_MODEL}的(?:通知|提示|消息|指令)"
    r"|^\W*(?:系统|助手)(?:通知|提示|消息|指令)\s*[:：]",
    re.I,
)
_QUALIFIER = r"(?:the|your|these|those|my|previous|prior|above|earlier|preceding|original|system|safety)"
_OVERRIDE = re.compile(
    rf"{_CLAUSE}(?:ignore|disregard|forget|override|bypass)\s+(?:all\s+|any\s+)?(?:of\s+)?{_QUALIFIER}\s+(?:{_QUALIFIER}\s+)?"
    r"(?:instructions?|rules?|prompts?|guidelines?|directions?|polic(?:y|ies)|constraints?|restrictions?)\b"
    r"|\b(?:ignore|disregard|forget)\s+(?:all\s+)?(?:previous|prior|above|earlier|preceding)\s+(?:instructions?|rules?|prompts?)\b"
    r"|(?:忽略|无视|忘记|忘掉|不要理会|别管|绕过|不要遵守|不必遵守)掉?(?:你的?)?(?:之前|先前|以上|上面|上述|所有|全部|原有|原来|系统)的?(?:所有|全部)?的?"
    r"(?:指令|指示|规则|提示词?|要求|设定|约束|限制)",
    re.I,
)
_ROLE = re.compile(
    rf"\byou\s+are\s+now\b|\bfrom\s+now\s+on,?\s+you\b|\bpretend\s+(?:to\s+be|you\s+are)\b|\byour\s+new\s+(?:role|instructions?|task)\b"
    rf"|{_CLAUSE}(?:act|behave|respond)\s+as\s+(?:an?|the|if)\b"
    r"|你现在是(?!否)|从现在(?:起|开始)[，,]?你|(?:请|你)扮演|假装你是|你的新(?:角色|任务|指令)",
    re.I,
)
_IDENTITY = re.compile(
    rf"\byou\s+are\s+(?:an?|the)\s+(?:\w+\s+){{0,2}}{_MODEL}\b|\bas\s+an\s+ai(?:\s+(?:language\s+model|assistant|model)\b|\s*[,.])|你是(?:一个|一名)?\s*{_ZH_MODEL}",
    re.I,
)
_SIGNALS = (_NOTICE, _OVERRIDE, _ROLE, _IDENTITY)


@lru_cache(maxsize=8192)
def addresses_the_assistant(text: str) -> bool:
    """Whether `text` speaks to the assistant as instructions (see the module docstring for the signals)."""
    plain = _QUOTED.sub(" ", text.strip().lstrip(">").strip())
    return any(signal.search(plain) for signal in _SIGNALS)
