"""The YAML front matter of a Markdown article: split off the body, then checked key by key.

A value that would change who may read an article (visibility, tenant, expiry, password) is never guessed:
a wrong one refuses the file. Unknown keys only warn, so a typo is seen without losing the article.

YAML is read by `load_yaml`: an unquoted timestamp that is no real date (`2020-13-45`) stays text instead
of raising from deep inside the loader, so it is refused only where a date is needed (`share_expires_at`)
and is harmless under any other key.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date, datetime
from typing import Any

import yaml

from petrichor_pipeline.sources.errors import RejectedFile

VISIBILITIES = ("private", "public")
KNOWN_KEYS = ("title", "visibility", "tenant", "share_expires_at", "password_protected")

_YAML_FAILURES = (yaml.YAMLError, ValueError, TypeError, RecursionError)
"""What loading hostile YAML can raise besides its own errors (deep nesting, odd scalars)."""


class _Loader(getattr(yaml, "CSafeLoader", yaml.SafeLoader)):  # type: ignore[misc]
    """The safe loader (libyaml's parser where PyYAML has it: front matter of 10,000 articles parsed in a fifth
    of the time), except that an impossible timestamp is kept as the text written."""


def _timestamp_or_text(loader: _Loader, node: yaml.ScalarNode) -> Any:
    try:
        return loader.construct_yaml_timestamp(node)
    except ValueError:  # e.g. "month must be in 1..12"
        return loader.construct_scalar(node)


_Loader.add_constructor("tag:yaml.org,2002:timestamp", _timestamp_or_text)


def load_yaml(text: str) -> Any:
    """`text` as YAML data; any failure is a `RejectedFile` whose reason is one line."""
    try:
        return yaml.load(text, Loader=_Loader)  # noqa: S506 - a SafeLoader subclass
    except _YAML_FAILURES as exc:
        raise RejectedFile(_one_line(exc)) from None


_BLOCK = re.compile(r"\A---[ \t]*\n(.*?)^---[ \t]*(?:\n|\Z)", re.DOTALL | re.MULTILINE)


@dataclass(frozen=True, slots=True)
class FrontMatter:
    title: str | None = None
    visibility: str = "private"
    tenant: str | None = None
    """None means the knowledge base's tenant."""
    share_expires_at: str | None = None
    password_protected: bool = False
    warnings: tuple[str, ...] = ()


def split_front_matter(text: str) -> tuple[dict[str, Any], str]:
    """The leading `---` YAML block as a mapping, and the body after it (the text itself when there is none)."""
    match = _BLOCK.match(text)
    if match is None:
        return {}, text
    try:
        data = load_yaml(match.group(1))
    except RejectedFile as exc:
        raise RejectedFile(f"broken front matter: {exc.reason}") from None
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise RejectedFile(f"broken front matter: expected a mapping of keys, got {type(data).__name__}")
    return data, text[match.end() :]


def parse_front_matter(data: dict[str, Any]) -> FrontMatter:
    """Check each known key; a missing or null key takes its default."""
    unknown = sorted(str(key) for key in data if key not in KNOWN_KEYS)
    return FrontMatter(
        title=_title(data.get("title")),
        visibility=_visibility(data.get("visibility")),
        tenant=_tenant(data.get("tenant")),
        share_expires_at=_expiry(data.get("share_expires_at")),
        password_protected=_flag(data.get("password_protected")),
        warnings=tuple(f"unknown front matter key {key!r} ignored" for key in unknown),
    )


def _title(value: Any) -> str | None:
    if value is None:
        return None
    if isinstance(value, (dict, list)):
        raise RejectedFile("invalid title: expected text")
    return str(value).strip() or None


def _visibility(value: Any) -> str:
    if value is None:
        return "private"
    if isinstance(value, str) and value.strip().lower() in VISIBILITIES:
        return value.strip().lower()
    raise RejectedFile(f"invalid visibility: {value!r} (expected private or public)")


def _tenant(value: Any) -> str | None:
    if value is None:
        return None
    if isinstance(value, (str, int)) and not isinstance(value, bool) and str(value).strip():
        return str(value).strip()
    raise RejectedFile(f"invalid tenant: {value!r}")


def _expiry(value: Any) -> str | None:
    """ISO 8601 kept as written; YAML turns unquoted timestamps into date/datetime, which go back to ISO text."""
    if value is None:
        return None
    if isinstance(value, (date, datetime)):
        return value.isoformat()
    if isinstance(value, str) and value.strip():
        text = value.strip()
        try:
            datetime.fromisoformat(text[:-1] + "+00:00" if text.endswith(("Z", "z")) else text)
        except ValueError:
            pass
        else:
            return text
    raise RejectedFile(f"invalid share_expires_at: {value!r} (expected an ISO 8601 date-time)")


def _flag(value: Any) -> bool:
    if value is None:
        return False
    if isinstance(value, bool):
        return value
    raise RejectedFile(f"invalid password_protected: {value!r} (expected true or false)")


def _one_line(exc: Exception) -> str:
    return " ".join(str(exc).split())[:300] or type(exc).__name__
