"""Stable wiki page keys: the same object gets the same key in every article and build.

Keys are what links, source refs and the existing-pages catalog agree on, so the rule is applied to
every key a model returns, never trusted as given: a model-made key must also be derived from the
candidate's name (or one of its aliases) or reuse an existing page's key, else the name's key replaces it.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Sequence
from dataclasses import dataclass

KINDS = ("entity", "concept")

_KIND_PREFIX = re.compile(r"^(entity|concept)[/\-:]+")
_CONCEPT_PREFIX = re.compile(r"^concept[/\-:]", re.IGNORECASE)
_TO_DASH = str.maketrans({c: "-" for c in " /\\#?&="})
_DASH_RUN = re.compile(r"-{2,}")

_FNV64_OFFSET = 0xCBF29CE484222325
_FNV64_PRIME = 0x100000001B3


def fnv_hash(text: str) -> str:
    """FNV-1a 64-bit of the UTF-8 bytes, 16 lowercase hex digits (the reference's short `fnvHash8` digest)."""
    h = _FNV64_OFFSET
    for byte in text.encode("utf-8"):
        h = ((h ^ byte) * _FNV64_PRIME) & 0xFFFFFFFFFFFFFFFF
    return f"{h:016x}"


def _key_char(ch: str) -> bool:
    return ("a" <= ch <= "z") or ("0" <= ch <= "9") or ("\u4e00" <= ch <= "\u9fa5") or ch in "._-"


def normalize_page_key(raw: object, kind: str, name: str) -> str:
    """`normalizePageKeyForKind`: `{kind}-{slug}`, the slug lowercased and limited to safe characters.

    The `entity/`-style prefix is stripped case-sensitively (so `Concept:RAG` becomes
    `concept-conceptrag`); a name with no safe characters falls back to the first 12 hex digits of its hash.
    """
    base = (raw.strip() if isinstance(raw, str) else "") or f"{kind}-{name}"
    slug = "".join(ch for ch in _KIND_PREFIX.sub("", base).lower().translate(_TO_DASH) if _key_char(ch))
    slug = _DASH_RUN.sub("-", slug).strip("-")
    return f"{kind}-{slug or fnv_hash(name)[:12]}"


def infer_kind(raw_key: str) -> str:
    """The kind a bare key names: `concept` for `concept/…`, `concept-…`, `concept:…`, otherwise `entity`."""
    return "concept" if _CONCEPT_PREFIX.match(raw_key) else "entity"


def normalize_any_page_key(raw: object) -> str:
    """A key whose kind is known only from the key itself (relation ends, taxonomy assignments)."""
    text = raw.strip() if isinstance(raw, str) else ""
    if not text:
        return ""
    return normalize_page_key(text, infer_kind(text), text)


_SEPARATORS = str.maketrans("", "", "-_.")


@dataclass(frozen=True)
class CandidateKey:
    key: str
    rejected: str = ""
    """The model's key when it was replaced (not derived from the name), else ""."""


def candidate_page_key(raw: object, kind: str, name: str, aliases: Sequence[str] = (), known: Collection[str] = ()) -> CandidateKey:
    """The key of a model-proposed candidate: the model's key only when it is derived from the name.

    Derived means its slug spells the name or an alias, separators aside (`entity/Redis_Sentinel` for
    "Redis Sentinel"), or it is the key of an existing page (`known`), which the extraction prompt asks
    the model to reuse. Anything else (`entity-concepts-1` for "Redis Sentinel") is replaced by the
    name's own key, and the rejected key is reported so the build can warn.
    """
    from_name = normalize_page_key("", kind, name)
    if not (isinstance(raw, str) and raw.strip()):
        return CandidateKey(from_name)
    key = normalize_page_key(raw, kind, name)
    if key in known or _spelling(key, kind) in {_spelling(normalize_page_key("", kind, n), kind) for n in (name, *aliases)}:
        return CandidateKey(key)
    return CandidateKey(from_name, rejected=key)


def _spelling(key: str, kind: str) -> str:
    return key[len(kind) + 1 :].translate(_SEPARATORS)
