"""API keys and the access scope derived from them.

The key file stores only sha256 hashes: `{"keys": [{"sha256": "<hex>", "tenant": "...", "kbs": [...] | "*"}]}`.
The tenant always comes from the key, never from the request body. With no key file the service runs in
single-user local mode: every tenant is readable and the server binds to 127.0.0.1 only.
"""

from __future__ import annotations

import hashlib
import hmac
import json
from dataclasses import dataclass
from pathlib import Path

from petrichor_serving.recall.access import Scope


class KeyFileError(ValueError):
    pass


@dataclass(frozen=True)
class Principal:
    name: str
    tenant: str | None
    kb_ids: frozenset[str] | None

    def scope(self, *, kb_ids: list[str] | None = None, article_id: str | None = None) -> Scope:
        """The principal's scope, narrowed (never widened) by what the request asks for."""
        allowed = self.kb_ids
        if kb_ids:
            wanted = frozenset(kb_ids)
            allowed = wanted if allowed is None else allowed & wanted
        return Scope(tenant=self.tenant, kb_ids=allowed, public_only=False, article_id=article_id)


LOCAL = Principal(name="local", tenant=None, kb_ids=None)


def public_scope(*, kb_ids: list[str] | None = None, article_id: str | None = None) -> Scope:
    return Scope(tenant=None, kb_ids=frozenset(kb_ids) if kb_ids else None, public_only=True, article_id=article_id)


@dataclass(frozen=True)
class KeyStore:
    keys: dict[str, Principal]
    """sha256 hex of the key -> principal"""

    @classmethod
    def load(cls, path: Path) -> KeyStore:
        try:
            raw = json.loads(Path(path).read_text(encoding="utf-8"))
        except (OSError, json.JSONDecodeError) as exc:
            raise KeyFileError(f"cannot read API key file {path}: {exc}") from exc
        entries = raw.get("keys") if isinstance(raw, dict) else None
        if not isinstance(entries, list):
            raise KeyFileError(f'{path}: expected {{"keys": [...]}}')
        keys: dict[str, Principal] = {}
        for i, e in enumerate(entries):
            digest = str(e.get("sha256", "")).lower()
            tenant = e.get("tenant")
            kbs = e.get("kbs", "*")
            if len(digest) != 64 or not isinstance(tenant, str) or not tenant:
                raise KeyFileError(f"{path}: key #{i} needs a 64-hex sha256 and a tenant")
            if kbs != "*" and not (isinstance(kbs, list) and all(isinstance(k, str) for k in kbs)):
                raise KeyFileError(f'{path}: key #{i}: kbs must be a list of ids or "*"')
            keys[digest] = Principal(name=e.get("name", f"key-{digest[:8]}"), tenant=tenant, kb_ids=None if kbs == "*" else frozenset(kbs))
        return cls(keys)

    def authenticate(self, authorization: str | None) -> Principal | None:
        if not authorization or not authorization.lower().startswith("bearer "):
            return None
        digest = hashlib.sha256(authorization[7:].strip().encode()).hexdigest()
        for known, principal in self.keys.items():
            if hmac.compare_digest(known, digest):
                return principal
        return None
