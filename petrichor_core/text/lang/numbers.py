"""Numbers, dates, units and money as Chinese and English write them: numerals and their values, measure
words, magnitudes, currencies and the shapes of years, dates, counts and amounts.
"""

from __future__ import annotations

import re

from petrichor_core.text.lang.script import CJK_CLASS

# Numerals and magnitudes.

ZH_NUMERAL_CHARS = "零〇一二三四五六七八九十百千万亿两"
"""Chinese numeral characters: the digits (〇 and 零 for zero, 两 for two) and the magnitudes. One set for the
question's numbers and the answer spans (the answerer's class listed the same 17 characters in another order)."""
_ZH_DIGIT = {"零": 0, "〇": 0, "一": 1, "二": 2, "两": 2, "三": 3, "四": 4, "五": 5, "六": 6, "七": 7, "八": 8, "九": 9}
"""Each Chinese digit's value."""
_ZH_SMALL = {"十": 10, "百": 100, "千": 1000}
"""Magnitudes inside a section of four digits."""
_ZH_BIG = {"万": 10_000, "亿": 100_000_000}
"""Magnitudes that close a section of four digits."""


def cn_number(text: str) -> float | None:
    """The value of a Chinese numeral ("十三" 13, "两千零二十一" 2021, "一万四" 14000), or of a digit-by-digit
    one ("二〇二一" 2021); None when `text` is not one."""
    if not text or any(c not in ZH_NUMERAL_CHARS for c in text):
        return None
    if all(c in _ZH_DIGIT for c in text) and len(text) > 1:
        return float("".join(str(_ZH_DIGIT[c]) for c in text))
    total, section, digit, last_unit = 0, 0, None, 1
    for c in text:
        if c in _ZH_DIGIT:
            digit = _ZH_DIGIT[c]
        elif c in _ZH_SMALL:
            section += (1 if digit is None else digit) * _ZH_SMALL[c]
            digit, last_unit = None, _ZH_SMALL[c]
        else:
            section += digit or 0
            total += (section or 1) * _ZH_BIG[c]
            section, digit, last_unit = 0, None, _ZH_BIG[c]
    if digit is not None:  # "一万四" is 14000: a trailing digit counts in the unit below the last one
        section += digit * (last_unit // 10 if last_unit >= 10 and not section and total else 1)
    return float(total + section)


MAGNITUDE_CHARS = "百千万亿"
"""Chinese magnitudes: a run of them without a digit is a word ("百分之", "千万"), not a number."""
MAGNITUDES = {"万": 1e4, "亿": 1e8, "千": 1e3, "百": 1e2, "thousand": 1e3, "million": 1e6, "billion": 1e9, "k": 1e3, "m": 1e6, "bn": 1e9}
"""Magnitude words after a number and their factors (1.4万 is 14000, 3 million is 3,000,000)."""
NUMBER_WORDS_EN = r"one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|twenty|thirty|forty|fifty|hundred|thousand|million|billion"
"""English number words, as a regex alternation."""
DECIMAL = r"\d+(?:[.,:]\d+)*"
"""A number written in digits, with its separators (1,024, 3.5, 12:30), as a regex."""

# Measure words and units.

MEASURE_WORDS = "个种次位名条本部座人项家所只天岁倍卷届层级场首集张台辆架艘"
"""Chinese measure words (classifiers) that follow a count: 3个, 5位, 2艘. Each pattern that takes a measure
word after a number adds the units it also takes there (`UNIT_CHARS`, `UNITS`)."""
GENERIC_MEASURE_WORD = "个"
"""The measure word that counts anything: a question asking with it asks for no particular measure."""
UNIT_CHARS = MEASURE_WORDS + "米里克元吨亩度分秒年月日周"
"""One-character units after a number: the measure words, metres, li, grams, yuan, tons, mu, degrees and
units of time."""
UNIT_AT_END = re.compile(rf"[{UNIT_CHARS}]$")
"""A span ending on a one-character unit (the answerer's count spans)."""
UNITS = (
    r"%|‰|percent|平方公里|平方千米|平方米|公里|千米|公顷|公斤|千克|毫米|厘米|万亿|美元|欧元|英镑|日元|港元|人民币|元|块|"
    rf"[{MEASURE_WORDS}米里克吨亩度分秒周号期代枚块颗篇章节版线路]|"
    r"kb|mb|gb|tb|ms|seconds?|minutes?|hours?|days?|weeks?|months?|years?|km|kg|dollars?|usd|eur|rmb|yuan|times|people|percent"
)
"""Units and measure words a question's number may carry (`NUMBER_WITH_UNIT`'s `unit` group), as a regex
alternation: percent, area, length, weight, currencies, measure words, sizes and time."""
UNITS_ZH = rf"平方公里|平方千米|平方米|公里|千米|公顷|公斤|千克|毫米|厘米|字节|[{UNIT_CHARS}]"
"""Chinese units after a number in an answer span (`NUMBER_SPAN`), as a regex alternation."""
UNITS_EN = r"%|percent|per cent|[kmgt]i?b|bytes?|ms|seconds?|minutes?|hours?|days?|weeks?|months?|years?|km|kg|mb|gb"
"""English units after a number in an answer span (`NUMBER_SPAN`), as a regex alternation."""

# Years, dates and times.

YEAR = re.compile(
    rf"(?<!\d)(?<!\d[.,])(?P<y>1[5-9]\d\d|20\d\d)(?!\d|[.,]\d|\s?(?:[万亿千百%‰余多个人次元米吨辆件]|million|billion|thousand|percent))|(?P<cn>[{''.join(_ZH_DIGIT)}]{{4}})年"
)
"""A year: 1500–2099 in digits not followed by a magnitude, unit or decimal ("2021", "2021年"), or four
Chinese digits before 年 ("二〇二一年", group `cn`)."""
YEAR_MARK = "年"
"""The character that follows a year ("2021年"), taken into the year's surface form."""
DATE = re.compile(
    r"(?:(?P<y>\d{4})\s?年\s?)?(?P<m>\d{1,2})\s?月\s?(?P<d>\d{1,2})\s?[日号]"
    r"|(?P<iy>\d{4})-(?P<im>\d{1,2})-(?P<id>\d{1,2})"
    r"|\b(?P<em>jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\.?\s+(?P<ed>\d{1,2})(?:st|nd|rd|th)?\b"
    r"|\b(?P<ed2>\d{1,2})(?:st|nd|rd|th)?\s+(?P<em2>jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\b",
    re.I,
)
"""A month and day: 1月5日 / 2022年1月5日, 2022-01-05, January 5, 5 Jan (the year too where written)."""
DATE_PART = re.compile(r"\d{1,4}\s*[年月日号]")
"""A date's part written in digits (2021年, 12月, 10日): a number that is a date, not a count."""
DATE_SHOWN_ZH = "{month}月{day}日"
"""How a (month, day) pair is shown in a trace."""
MONTH_ABBREVIATIONS = ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec")
"""English month names by their first three letters, in order (`DATE`'s month groups)."""
MONTH_NAMES = "january|february|march|april|may|june|july|august|september|october|november|december"
"""English month names, as a regex alternation."""

# Money.

CURRENCY_UNITS = frozenset(
    {"元", "块", "美元", "欧元", "英镑", "日元", "港元", "人民币", "dollar", "dollars", "usd", "eur", "rmb", "yuan", "$", "€", "£", "¥"}
)
"""Units that make a number an amount of money: currency words and signs, lower-cased."""
MONEY_MARK = re.compile(r"^[$€£¥]|(?:元|美元|欧元|英镑|日元|港元|人民币|\s?(?:dollars?|usd|eur|euros?|rmb|yuan|cents?))$", re.I)
"""A span that is an amount of money: a currency sign before it or a currency word closing it."""
CURRENCY_AFTER = re.compile(r"\s?(?:元|美元|欧元|英镑|日元|港元|人民币|dollars?\b|usd\b|eur\b|euros?\b|rmb\b|yuan\b)", re.I)
"""A currency word right after a number, taken into the money span."""

# What a question's numbers are matched against (`agent.question`) and what can answer a count, a time or an amount (`answer.answer_types`).

NUMBER_WITH_UNIT = re.compile(
    rf"(?P<ord>第|No\.?\s?)?(?P<cur>[$€£¥])?(?P<num>\d+(?:,\d{{3}})*(?:\.\d+)?|[{ZH_NUMERAL_CHARS}]+)"
    rf"\s?(?P<mag>万|亿|千|百|thousand|million|billion|bn|k\b|m\b)?\s?(?P<unit>{UNITS})?",
    re.I,
)
"""A number in a question or a passage: an ordinal mark (第, No.), a currency sign, digits or Chinese
numerals, a magnitude and a unit (groups `ord`, `cur`, `num`, `mag`, `unit`)."""
TIME_HELD = re.compile(
    rf"\d{{1,4}}\s*[年月日]|\d[\d.]*\s?[万亿]?年前|[{ZH_NUMERAL_CHARS}]{{2,4}}年|世纪|年代|朝|\b1[0-9]{{3}}\b|\b20[0-9]{{2}}\b|\b(?:{MONTH_NAMES})\b|\byears?\s+ago\b",
    re.I,
)
"""Text that can answer a time question (a date's parts, 年前, 世纪, a year, a month name)."""
NUMBER_HELD = re.compile(
    rf"\d+(?:[.,]\d+)*|[{ZH_NUMERAL_CHARS}]+[{MEASURE_WORDS}米里克元]|\b(?:one|two|three|four|five|six|seven|eight|nine|ten|hundred|thousand|million|billion)\b",
    re.I,
)
"""Text that can answer a count question (digits, Chinese numerals with a measure word, number words)."""
NUMBER_SPAN = re.compile(
    rf"(?:{DECIMAL}|[{ZH_NUMERAL_CHARS}]+)\s?[万亿千百]?(?:余|多)?\s?(?:{UNITS_ZH})[‰%]?"
    rf"|[$€£¥]?{DECIMAL}\s?(?:(?:{UNITS_EN}|million|billion|thousand)\b|[万亿]|[‰%])?"
    rf"|\b(?:{NUMBER_WORDS_EN})\b",
    re.I,
)
"""A count or amount as an answer span: a number with its magnitude and unit."""
TIME_SPAN = re.compile(
    rf"\d[\d.]*\s?[万亿]?年前|(?:公元前?)?\d{{1,4}}\s?年(?:\s?\d{{1,2}}\s?月(?:\s?\d{{1,2}}\s?[日号])?)?|\d{{1,2}}\s?月\s?\d{{1,2}}\s?[日号]|\d{{1,2}}\s?月"
    rf"|[{ZH_NUMERAL_CHARS}]{{2,4}}年|\d{{1,2}}\s?世纪|\d{{2,4}}\s?年代|[{CJK_CLASS}]{{1,2}}[朝代]"
    rf"|\b(?:{MONTH_NAMES})\s+\d{{1,2}}(?:st|nd|rd|th)?,?\s+\d{{4}}|\b\d{{1,2}}\s+(?:{MONTH_NAMES})\s+\d{{4}}|\b(?:{MONTH_NAMES})\s+\d{{4}}"
    rf"|\b(?:1[0-9]|20)\d{{2}}s?\b|\b\d{{4}}-\d{{2}}-\d{{2}}\b",
    re.I,
)
"""A time as an answer span: years, dates, months, centuries, decades, dynasties."""
DOTTED_NUMBER = re.compile(r"\bv?\d+\.\d+(?:\.\d+)*\b|版本\s*\d+")
"""A version number: dotted digits (v1.8.2) or 版本 with a number."""

# Section numbers before a heading's words (`text.prose`).

SECTION_NUMBER = re.compile(r"^\s*(?:\d{1,2}(?:\.\d{1,2})*(?:[.、)](?!\d)\s*|\s+)|[一二三四五六七八九十]+[、.]\s*)(?=\S)")
"""A section number opening a heading ("2.1 ", "3、", "一、"): not part of its name."""
