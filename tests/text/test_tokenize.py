from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from petrichor_core.text.lang import init_jieba
from petrichor_core.text.tokenize import (
    changed_line_pieces,
    get_tokenizer,
    index_tokens,
    jieba_index_tokens,
    jieba_query_tokens,
    line_pieces,
    query_tokens,
)


@pytest.mark.parametrize(
    "text, tokens",
    [
        # derived by hand from the bigram rule
        ("Redis 消费幂等", ["redis", "消费", "费幂", "幂等"]),
        ("GPT-4o模型", ["gpt", "4o", "模型"]),
        ("处理重复消费", ["处理", "理重", "重复", "复消", "消费"]),
        ("a 中", ["中"]),
    ],
)
def test_reference_examples(text, tokens):
    assert index_tokens(text) == tokens


def test_punctuation_and_symbols_split_everything_else_stays():
    assert index_tokens("snake_case.file-name，中文。x+y=z") == ["snake", "case", "file", "name", "中文"]
    # only space, tab, LF and CR are whitespace splits (as in the reference); other spaces join
    assert index_tokens("ab\u3000cd") == ["ab\u3000cd"]
    # astral symbols split like BMP ones
    assert index_tokens("ab😀cd 中😀文") == ["ab", "cd", "中", "文"]


def test_mixed_runs_and_lowercase():
    assert index_tokens("  Kafka消费者Group  ") == ["kafka", "消费", "费者", "group"]
    assert index_tokens("") == [] and index_tokens(" \t\n") == []


def test_query_tokens_dedupe_keeping_first_occurrence():
    assert query_tokens("Redis 消费 redis 消费幂等") == ["redis", "消费", "费幂", "幂等"]


def test_jieba_segments_cjk_runs_with_the_same_latin_rules():
    init_jieba()
    tokens = jieba_index_tokens("Redis 持久化方案，GPT-4o模型 a")
    assert tokens[0] == "redis"
    assert "持久" in tokens and "方案" in tokens
    assert "gpt" in tokens and "4o" in tokens and "a" not in tokens
    assert len(jieba_query_tokens("方案 方案")) == 1


def test_get_tokenizer():
    assert get_tokenizer("bigram").index("中文") == ["中文"]
    assert get_tokenizer("jieba").name == "jieba"
    with pytest.raises(ValueError):
        get_tokenizer("whitespace")


# ------------------------------------------------------------------ MediaWiki language-variant markup


from petrichor_core.text.tokenize import REVISION, TOKENIZERS  # noqa: E402

_HAN = st.text(alphabet=st.characters(min_codepoint=0x4E00, max_codepoint=0x4E80), max_size=8)


@pytest.mark.parametrize(
    "marked, plain",
    [
        ("郭-{麐}-字祥伯", "郭麐字祥伯"),  # cmrc2018: the article writes the name this way
        ("拉里·德米特-{}-里克", "拉里·德米特里克"),
        ("入替-{zh-hans:卡尔顿;zh-hk:卡顿;zh-tw:卡尔顿;}-出场", "入替卡尔顿 卡顿出场"),
        ("身长约30-{zh-cn:厘米; zh-tw:公分}-", "身长约30厘米 公分"),
    ],
)
def test_wiki_variant_markup_reads_as_the_text_it_marks(marked, plain):
    assert index_tokens(marked) == index_tokens(plain)
    assert query_tokens(marked) == query_tokens(plain)
    assert jieba_index_tokens(marked) == jieba_index_tokens(plain)


def test_latin_braces_are_not_markup():
    """A template placeholder between hyphens is text: its words stay apart."""
    assert index_tokens("backstage-{cr-name}-myclaim1") == ["backstage", "cr", "name", "myclaim1"]


@given(_HAN, _HAN.filter(bool), _HAN)
def test_marking_han_text_never_moves_a_token(before, marked, after):
    assert index_tokens(f"{before}-{{{marked}}}-{after}") == index_tokens(before + marked + after)


def test_every_tokenizer_records_its_revision():
    assert {t.key for t in TOKENIZERS.values()} == {f"bigram/{REVISION}", f"jieba/{REVISION}"}


# ------------------------------------------------------------------ token sets for similarity

from petrichor_core.text.lang import CJK_RANGES  # noqa: E402
from petrichor_core.text.tokenize import token_set  # noqa: E402

_MIXED = st.text(alphabet=st.sampled_from("知识检索切片㐀鿿豈 abcXYZé12-_.,。，!？{}\n\t😀𝔘-{}"), max_size=60) | st.text(max_size=40)


def _coded(token: str) -> str | int:
    if len(token) <= 2 and all(any(lo <= ord(c) <= hi for lo, hi in CJK_RANGES) for c in token):
        return ord(token) if len(token) == 1 else ord(token[0]) << 21 | ord(token[1])
    return token


@given(_MIXED)
def test_token_set_is_the_query_tokens_set_one_to_one(text):
    assert token_set(text) == frozenset(_coded(t) for t in query_tokens(text))


@given(_MIXED, _MIXED)
def test_token_sets_overlap_as_the_token_sets_do(a, b):
    tokens_a, tokens_b = set(query_tokens(a)), set(query_tokens(b))
    assert len(token_set(a) & token_set(b)) == len(tokens_a & tokens_b)
    assert TOKENIZERS["jieba"].token_set(a) == set(jieba_index_tokens(a))


LINE_TEXT = st.lists(
    st.sampled_from([*"ab Z9-_.,\t\r{}\n", "\u3000", "\xa0", "\x85", "\u2028", "Σ", "中", "文", "字", "。", "\U0001f600", "İ", "-{", "}-"]),
    max_size=40,
).map("".join)


@pytest.mark.parametrize("name", ["bigram", "jieba"])
@settings(max_examples=400, deadline=None)
@given(text=LINE_TEXT)
def test_a_texts_tokens_are_its_line_pieces_tokens(name, text):
    """What lets an edited wiki page be counted from its earlier counts: tokenising the text whole and
    tokenising its pieces give the same tokens (lines that start or end in whitespace the tokenizer keeps,
    final sigma, astral symbols), or there are no pieces (variant markup may span lines)."""
    tok = get_tokenizer(name)
    pieces = line_pieces(text)
    if pieces is None:
        assert "-{" in text
        return
    assert len(pieces) == len(text.strip().split("\n"))
    assert Counter(tok.index(text)) == sum((Counter(tok.index(p)) for p in pieces), Counter())


EDIT_LINES = st.lists(st.sampled_from(["a", "b", " a", "", "缓存", "x-{y}-"]), max_size=6).map("\n".join)


@settings(max_examples=300, deadline=None)
@given(old=EDIT_LINES, new=EDIT_LINES, head=EDIT_LINES, tail=EDIT_LINES)
def test_changed_pieces_differ_as_the_whole_texts_pieces(old, new, head, tail):
    """Setting aside the shared leading and trailing lines changes nothing in the difference of the pieces'
    multisets (texts that share a start, an end, both or neither)."""
    before, after = f"{head}\n{old}\n{tail}", f"{head}\n{new}\n{tail}"
    for a, b in ((before, after), (old, new), (f"{head}{old}", f"{head}{new}"), (f"{old}{tail}", f"{new}{tail}")):
        whole_a, whole_b = line_pieces(a), line_pieces(b)
        changed = changed_line_pieces(a, b)
        if whole_a is None or whole_b is None:
            assert changed is None
            continue
        was, now = Counter(changed[0]), Counter(changed[1])
        assert (was - now, now - was) == (Counter(whole_a) - Counter(whole_b), Counter(whole_b) - Counter(whole_a))
