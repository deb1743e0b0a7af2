"""The Dagster resource that hands assets their run's build context, and the build's settings as it carries them.

`petrichor build` reads `Settings` once and passes them to its runs as `RunSettings`, typed run config, so a
run (in this process or in the executor's step processes) works with exactly the build's settings. Runs
started by `dagster dev`, sensors and schedules carry none and read the environment when they start.

No `from __future__ import annotations` here: Dagster reads the field types at run time.
"""

import os
from pathlib import Path
from typing import Optional, Union

from dagster import Config, ConfigurableResource, EnvVar, InitResourceContext, ResourceDependency
from pydantic import PrivateAttr

from petrichor_pipeline.build.context import BuildContext, StageListener
from petrichor_pipeline.config import CREDENTIAL_ENV, NO_API_KEY, BuildLimits, ModelEndpoint, PublishOptions, Settings, load_settings
from petrichor_pipeline.object_store import S3Location


def build_context(
    data_dir: str = "", corpus_dir: str = "", full_rebuild: bool = False, embed_dim: int | None = None
) -> BuildContext:
    """A fresh context over the environment's settings, with the given paths in place of theirs."""
    settings = load_settings()
    if data_dir or corpus_dir:
        settings = settings.with_paths(data_dir or settings.data_dir, corpus_dir or None)
    return BuildContext(settings=settings, full_rebuild=full_rebuild, embed_dim=embed_dim)


def _credential(field: str, value: Optional[str]) -> Optional[str]:
    """A credential as run config carries it: a reference to the environment variable it came from, never
    its value (Dagster stores run config and resource values with the run and shows them in its UI). The
    step processes inherit the environment, so they read the same value."""
    if not value or value == NO_API_KEY:
        return value
    var = CREDENTIAL_ENV[field]
    if os.environ.get(var, "").strip() != value:
        raise ValueError(f"the build's {field} must come from the environment ({var}), so no run record stores it")
    return EnvVar(var)


def _secret(value: Optional[str]) -> Optional[str]:
    """A credential read back: in a run Dagster has resolved the reference (unstripped), outside one it is
    still an `EnvVar`."""
    if isinstance(value, EnvVar):
        value = value.get_value()
    return value.strip() if value else value


class EndpointSettings(Config):
    """`config.ModelEndpoint`."""

    base_url: str
    model: str
    api_key: str
    timeout_s: float
    max_retries: int
    provider: str
    response_format: str
    input_type: str

    @classmethod
    def of(cls, name: str, endpoint: ModelEndpoint) -> "EndpointSettings":
        fields = {k: getattr(endpoint, k) for k in cls.model_fields}
        return cls(**{**fields, "api_key": _credential(f"{name}.api_key", endpoint.api_key)})

    def endpoint(self) -> ModelEndpoint:
        return ModelEndpoint(**{**{k: getattr(self, k) for k in type(self).model_fields}, "api_key": _secret(self.api_key)})


class LimitsSettings(Config):
    """`config.BuildLimits`."""

    article_concurrency: int
    article_timeout_s: float
    question_batch_concurrency: int
    page_batch_concurrency: int
    model_concurrency: int
    max_file_bytes: int
    embed_batch_size: int
    embed_concurrency: int

    @classmethod
    def of(cls, limits: BuildLimits) -> "LimitsSettings":
        return cls(**{k: getattr(limits, k) for k in cls.model_fields})

    def limits(self) -> BuildLimits:
        return BuildLimits(**{k: getattr(self, k) for k in type(self).model_fields})


OBJECT_STORE_CREDENTIALS = ("access_key_id", "secret_access_key", "session_token")


class ObjectStoreSettings(Config):
    """`object_store.S3Location`."""

    bucket: str
    prefix: str
    endpoint_url: str
    region: str
    access_key_id: str
    secret_access_key: str
    session_token: str

    @classmethod
    def of(cls, store: S3Location) -> "ObjectStoreSettings":
        fields = {k: getattr(store, k) for k in cls.model_fields}
        return cls(**{**fields, **{k: _credential(f"object_store.{k}", fields[k]) for k in OBJECT_STORE_CREDENTIALS}})

    def location(self) -> S3Location:
        fields = {k: getattr(self, k) for k in type(self).model_fields}
        return S3Location(**{**fields, **{k: _secret(fields[k]) for k in OBJECT_STORE_CREDENTIALS}})


def _config_value(value):
    """A record as Dagster run config: nested records as mappings, credentials as `{"env": NAME}`."""
    if isinstance(value, EnvVar):
        return {"env": value.env_var_name}
    if isinstance(value, Config):
        return {k: _config_value(getattr(value, k)) for k in type(value).model_fields}
    return value


def _path(value: Union[Path, str, None]) -> Optional[str]:
    return None if value is None else str(value)


class RunSettings(Config):
    """`config.Settings`, field for field, as typed run config (credentials as environment references)."""

    data_dir: str
    corpus_dir: str
    api_keys_file: Optional[str]
    api_key: Optional[str]
    chat: EndpointSettings
    embed: EndpointSettings
    vision: EndpointSettings
    limits: LimitsSettings
    keep_snapshots: int
    history_keep_days: float
    history_pin_days: float
    reload_interval_s: float
    lexical_tokenizer: str
    embed_enabled: bool
    embed_cache: Optional[str]
    question_routes: str
    object_store: Optional[ObjectStoreSettings]
    build_workers: int

    @classmethod
    def of(cls, s: Settings) -> "RunSettings":
        return cls(
            data_dir=str(s.data_dir),
            corpus_dir=str(s.corpus_dir),
            api_keys_file=_path(s.api_keys_file),
            api_key=_credential("api_key", s.api_key),
            chat=EndpointSettings.of("chat", s.chat),
            embed=EndpointSettings.of("embed", s.embed),
            vision=EndpointSettings.of("vision", s.vision),
            limits=LimitsSettings.of(s.limits),
            keep_snapshots=s.keep_snapshots,
            history_keep_days=s.history_keep_days,
            history_pin_days=s.history_pin_days,
            reload_interval_s=s.reload_interval_s,
            lexical_tokenizer=s.lexical_tokenizer,
            embed_enabled=s.embed_enabled,
            embed_cache=_path(s.embed_cache),
            question_routes=s.question_routes,
            object_store=ObjectStoreSettings.of(s.object_store) if s.object_store else None,
            build_workers=s.build_workers,
        )

    def settings(self) -> Settings:
        return Settings(
            data_dir=Path(self.data_dir),
            corpus_dir=Path(self.corpus_dir),
            api_keys_file=Path(self.api_keys_file) if self.api_keys_file else None,
            api_key=_secret(self.api_key),
            chat=self.chat.endpoint(),
            embed=self.embed.endpoint(),
            vision=self.vision.endpoint(),
            limits=self.limits.limits(),
            keep_snapshots=self.keep_snapshots,
            history_keep_days=self.history_keep_days,
            history_pin_days=self.history_pin_days,
            reload_interval_s=self.reload_interval_s,
            lexical_tokenizer=self.lexical_tokenizer,
            embed_enabled=self.embed_enabled,
            embed_cache=Path(self.embed_cache) if self.embed_cache else None,
            question_routes=self.question_routes,
            object_store=self.object_store.location() if self.object_store else None,
            build_workers=self.build_workers,
        )


class PetrichorResource(ConfigurableResource):
    """The build's settings and options for one run; `settings` None reads the environment when the run starts.

    Each run gets its own `BuildContext` in `setup_for_execution`: its model clients, embedder, embedding
    caches, corpus scan and usage meter live and die with that run. `progress` hears each finished stage and
    the long steps' counts (the CLI passes its progress display; other runs' counts go to their run's log).
    """

    settings: Optional[RunSettings] = None
    full_rebuild: bool = False
    embed_dim: int = 0
    """The embedding endpoint's dimension when the caller knows it; 0 means the run asks the endpoint."""
    allow_empty: bool = False
    """Let the run publish a knowledge base without articles (`config.PublishOptions`, `publish_guard`)."""
    allow_shrink: bool = False
    """Let the run publish a corpus that drops more than half of the live snapshot's articles."""
    progress: ResourceDependency[StageListener] = StageListener()
    _context: Optional[BuildContext] = PrivateAttr(default=None)

    @classmethod
    def for_build(cls, ctx: BuildContext, progress: Optional[StageListener] = None) -> "PetrichorResource":
        """The resource of a build's runs: its settings, switches and known embedding dimension."""
        options = {"progress": progress} if progress is not None else {}
        return cls(
            settings=RunSettings.of(ctx.settings),
            full_rebuild=ctx.full_rebuild,
            embed_dim=ctx.known_embed_dim() or 0,
            allow_empty=ctx.publish.allow_empty,
            allow_shrink=ctx.publish.allow_shrink,
            **options,
        )

    def run_config(self) -> dict:
        """This resource's configuration as a run's `resources` config: how the build's settings reach the
        step processes of the multiprocess executor, which rebuild the resource from run config."""
        fields = ("full_rebuild", "embed_dim", "allow_empty", "allow_shrink")
        return {"petrichor": {"config": {"settings": _config_value(self.settings), **{name: getattr(self, name) for name in fields}}}}

    def setup_for_execution(self, context: InitResourceContext) -> None:
        settings = self.settings.settings() if self.settings is not None else load_settings()
        self._context = BuildContext(
            settings=settings,
            full_rebuild=self.full_rebuild,
            embed_dim=self.embed_dim or None,
            on_stage=self.progress,
            run_log=context.log.info if context.log is not None else None,
            publish=PublishOptions(allow_empty=self.allow_empty, allow_shrink=self.allow_shrink),
        )

    def teardown_after_execution(self, context: InitResourceContext) -> None:
        self._context = None

    def context(self) -> BuildContext:
        if self._context is None:
            raise RuntimeError("PetrichorResource.context() is only available inside a run")
        return self._context
