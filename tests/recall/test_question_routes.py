"""The question routes run over questions a configured model wrote and stay off over the offline model's
(near-copies of chunk sentences, which cost recall on every evaluation set); `question_routes="always"`
turns them on regardless."""

from __future__ import annotations

from petrichor_core.contract.manifest import OFFLINE_CHAT_PREFIX, generated_by_model
from petrichor_serving.recall import RecallConfig, Scope, search

from .synthetic import SnapshotRows

SECTIONS = [(("部署",), "使用 Docker Compose 启动服务。", ["怎么在本地起一套环境"])]


def _index(fingerprint: str):
    rows = SnapshotRows()
    rows.article("ops", "运维手册", sections=SECTIONS, chat_fingerprint=fingerprint)
    return rows.index()


def test_offline_questions_leave_the_question_routes_off():
    offline = _index(f"{OFFLINE_CHAT_PREFIX}4:7")
    result = search(offline, "本地起一套环境", scope=Scope())
    assert result.diagnostics["questionBm25Keys"] == []
    forced = search(offline, "本地起一套环境", scope=Scope(), config=RecallConfig(question_routes="always"))
    assert forced.diagnostics["questionBm25Keys"]


def test_model_questions_are_searched():
    result = search(_index("openai:gpt-x:3"), "本地起一套环境", scope=Scope())
    assert result.diagnostics["questionBm25Keys"]


def test_who_wrote_the_questions():
    assert not generated_by_model(f"{OFFLINE_CHAT_PREFIX}4:7")
    assert not generated_by_model("") and not generated_by_model(None)
    assert generated_by_model("openai:gpt-x:3")
