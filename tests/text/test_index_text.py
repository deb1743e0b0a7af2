from __future__ import annotations

from petrichor_core.text.index_text import index_text


def test_title_first_two_heading_levels_and_body() -> None:
    text = index_text("部署指南", ("安装", "Docker Compose", "HTTPS"), "  docker compose up -d \n")
    assert text == "部署指南\n安装\nDocker Compose\ndocker compose up -d"


def test_repeats_and_blank_parts_are_dropped() -> None:
    assert index_text("安装", ("安装", " 安装 ", "Docker"), "正文") == "安装\n正文"
    assert index_text("  ", ("", "Docker"), "正文") == "Docker\n正文"
    assert index_text("部署指南", ("安装",), "  \n") == "部署指南\n安装"


def test_empty_path_uses_only_the_title() -> None:
    assert index_text("部署指南", (), "导语一段。") == "部署指南\n导语一段。"


def test_the_body_is_kept_even_when_it_repeats_a_heading() -> None:
    assert index_text("安装", ("安装",), "安装") == "安装\n安装"


def test_cut_to_the_limit_in_code_points() -> None:
    text = index_text("标题", ("章",), "字" * 5000)
    assert len(text) == 4000
    assert text.startswith("标题\n章\n字")
    assert index_text("标题", (), "正文很长", limit=5) == "标题\n正文"
