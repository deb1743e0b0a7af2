"""The Dagster resource that hands assets their run's build context, and the build's settings as it carries them.

`petrichor build` reads `Settings` once and passes them to its runs as `RunSettings`, typed run config, so a
run (in this process or in the executor's step processes) works with exactly the build's settings. Runs
started by `dagster dev`, sensors and schedules carry none and read the environment when they start.

No `from __future__ import annotations` here: Dagster reads the field types at run time.
"""

import dataclasses
import os
from pathlib import Path
from typing import Any, ClassVar, Optional, get_args, get_type_hints

from dagster import Config, ConfigurableResource, EnvVar, InitResourceContext, ResourceDependency
from pydantic import PrivateAttr

from petrichor_core.config import CREDENTIAL_ENV, NO_API_KEY, BuildLimits, ModelEndpoint, PublishOptions, Settings, load_settings
from petrichor_core.object_store import S3Location
from petrichor_pipeline.builder.context import BuildContext, StageListener


def build_context(data_dir: str = "", corpus_dir: str = "", full_rebuild: bool = False, embed_dim: int | None = None) -> BuildContext:
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


class SettingsRecord(Config):
    """A frozen settings dataclass (`source`) as typed run config, field for field: a path as text, a nested
    dataclass as its own record, a credential (`config.CREDENTIAL_ENV`) as a reference to its environment
    variable. The fields are generated from the dataclass (`settings_record`), so a setting is declared once,
    in `config`, and both directions of the conversion go through every field."""

    source: ClassVar[type]

    @classmethod
    def of(cls, value: Any, path: str = "") -> Any:
        """The record of `value`, found at the dotted `path` of `Settings` (how its credentials are named)."""
        return cls(**{name: _to_config(f"{path}.{name}" if path else name, getattr(value, name)) for name in cls.model_fields})

    def record(self) -> Any:
        """The dataclass this record carries; credentials read back from the environment."""
        hints = get_type_hints(self.source)
        return self.source(**{name: _from_config(name, getattr(self, name), hints[name]) for name in type(self).model_fields})


class _RunSettingsRecord(SettingsRecord):
    def settings(self) -> Settings:
        return self.record()


_RECORDS: dict[type, type[SettingsRecord]] = {}
"""Each nested settings dataclass -> its generated record (`settings_record`)."""
_CREDENTIAL_FIELDS = frozenset(name.rsplit(".", 1)[-1] for name in CREDENTIAL_ENV)


def _optional(hint: Any) -> tuple[Any, bool]:
    """(the type, whether None is allowed) of `X` or `X | None`."""
    args = get_args(hint)
    if type(None) in args:
        (inner,) = (a for a in args if a is not type(None))
        return inner, True
    return hint, False


def _config_type(hint: Any) -> Any:
    """The run config type of a settings field: a path as text, a nested dataclass as its record."""
    inner, optional = _optional(hint)
    inner = str if inner is Path else _RECORDS.get(inner, inner)
    return Optional[inner] if optional else inner


def settings_record(name: str, source: type, doc: str, base: type[SettingsRecord] = SettingsRecord) -> Any:
    """The record class of a settings dataclass: one field per dataclass field, typed for Dagster's run config
    (which reads the annotations, so they are made here rather than written out)."""
    hints = get_type_hints(source)
    annotations = {f.name: _config_type(hints[f.name]) for f in dataclasses.fields(source)}
    namespace = {"__annotations__": annotations, "__module__": __name__, "__qualname__": name, "__doc__": doc, "source": source}
    metaclass: Any = type(base)  # pydantic's model metaclass, through Dagster's Config
    record = metaclass(name, (base,), namespace)
    _RECORDS[source] = record
    return record


def _to_config(dotted: str, value: Any) -> Any:
    if value is None:
        return None
    if dotted in CREDENTIAL_ENV:
        return _credential(dotted, value)
    if isinstance(value, Path):
        return str(value)
    if type(value) in _RECORDS:
        return _RECORDS[type(value)].of(value, dotted)
    return value


def _from_config(name: str, value: Any, hint: Any) -> Any:
    inner, optional = _optional(hint)
    if value is None or (optional and inner is Path and not value):
        return None
    if name in _CREDENTIAL_FIELDS:
        return _secret(value)
    if isinstance(value, SettingsRecord):
        return value.record()
    if inner is Path:
        return Path(value)
    return value


EndpointSettings = settings_record("EndpointSettings", ModelEndpoint, "`config.ModelEndpoint`.")
LimitsSettings = settings_record("LimitsSettings", BuildLimits, "`config.BuildLimits`.")
ObjectStoreSettings = settings_record("ObjectStoreSettings", S3Location, "`object_store.S3Location`.")
RunSettings = settings_record(
    "RunSettings",
    Settings,
    "`config.Settings`, field for field, as typed run config (credentials as environment references).",
    base=_RunSettingsRecord,
)


def _config_value(value):
    """A record as Dagster run config: nested records as mappings, credentials as `{"env": NAME}`."""
    if isinstance(value, EnvVar):
        return {"env": value.env_var_name}
    if isinstance(value, Config):
        return {k: _config_value(getattr(value, k)) for k in type(value).model_fields}
    return value


class PetrichorResource(ConfigurableResource):
    """The build's settings and options for one run; `settings` None reads the environment when the run starts.

    Each run gets its own `BuildContext` in `setup_for_execution`: its model clients, embedder, embedding
    caches, corpus scan and usage meter live and die with that run. `progress` hears each finished stage and
    the long steps' counts (the CLI passes its progress display; other runs' counts go to their run's log).
    """

    settings: Optional[RunSettings] = None  # type: ignore[valid-type]  # a class made at import (`settings_record`); Dagster reads this annotation
    full_rebuild: bool = False
    embed_dim: int = 0
    """The embedding endpoint's dimension when the caller knows it; 0 means the run asks the endpoint."""
    allow_empty: bool = False
    """Let the run publish a knowledge base without articles (`config.PublishOptions`, `publish_guard`)."""
    allow_shrink: bool = False
    """Let the run publish a corpus that drops more than half of the live snapshot's articles."""
    progress: ResourceDependency[StageListener] = StageListener()  # type: ignore[assignment]  # Dagster's way to declare a resource dependency's default
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
