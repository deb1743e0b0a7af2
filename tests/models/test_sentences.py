from __future__ import annotations

import pytest

from petrichor_core.text.prose import cut, split_sentences, strip_section_number

DOC = """导语一段。

# 安装

## Docker

1. 使用 `docker compose up -d` 启动。默认端口是 6379；可以修改。
- Run the server. Then open the page!

```bash
# not a heading
docker ps
```

| 参数 | 作用 |
|---|---|
| REDIS_PORT | 监听端口 |
"""


def test_sentences_are_verbatim_slices_with_their_heading_path() -> None:
    sentences = split_sentences(DOC)
    for s in sentences:
        assert DOC[s.start : s.end] == s.text
    texts = [s.text for s in sentences]
    assert texts == [
        "导语一段。",
        "使用 `docker compose up -d` 启动。",
        "默认端口是 6379；",
        "可以修改。",
        "Run the server.",
        "Then open the page!",
        "参数",
        "作用",
        "REDIS_PORT",
        "监听端口",
    ]
    assert sentences[0].heading_path == ()
    assert all(s.heading_path == ("安装", "Docker") for s in sentences[1:])


def test_code_lines_are_sentences_only_on_request() -> None:
    code = [s for s in split_sentences(DOC, include_code=True) if s.code]
    assert [s.text for s in code] == ["# not a heading", "docker ps"]
    assert all(DOC[s.start : s.end] == s.text for s in code)


@pytest.mark.parametrize(
    "heading,topic",
    [("5.1 参数", "参数"), ("三、部署", "部署"), ("1. Intro", "Intro"), ("2024 Roadmap", "2024 Roadmap"), ("Docker", "Docker")],
)
def test_strip_section_number(heading: str, topic: str) -> None:
    assert strip_section_number(heading) == topic


def test_cut_stays_within_the_limit() -> None:
    assert cut("短句。", 60) == "短句。"
    assert len(cut("字" * 100, 60)) == 60 and cut("字" * 100, 60).endswith("…")
    english = cut("The snapshot manifest is written last because a failed build keeps the old one", 40)
    assert len(english) <= 40 and english.endswith("…") and not english[:-1].endswith(" ")
