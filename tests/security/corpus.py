"""The two-tenant corpus of the isolation matrix, generated: every article carries a unique marker.

Tenant alpha has two knowledge bases (`alpha-docs`, `alpha-notes`), tenant beta one (`beta-docs`). Each
tenant's `*-docs` holds a private article, a public share, an expired share and a password-protected share,
all on the same subject (tide ledgers, harbour gauges) so that any query ranks every article of the corpus
and a scope that let one through would show it. A marker is a token found in one article's text only.

The past pair (`PAST`, `NOW`) is a smaller corpus built twice, once as it was and once after the edits of
`CHANGES`, each of which takes an article away from some caller: naming the first snapshot must not give
it back. The articles keep their texts (only front matter, a `_kb.yaml` or a deletion changes), so the
second build embeds nothing new.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

TOPIC = (
    "The tide ledger records every harbour gauge reading with its time, its height and the keeper who read it. "
    "Keepers check the gauge at high water and low water, and the ledger keeps a correction when a reading drifts."
)


@dataclass(frozen=True)
class Article:
    relpath: str
    tenant: str
    kb_id: str
    title: str
    marker: str
    front_matter: str
    """Extra front-matter lines: visibility and share settings."""

    def markdown(self) -> str:
        head = f"---\ntitle: {self.title}\n{self.front_matter}---\n\n"
        return (
            f"{head}# {self.title}\n\n{TOPIC} The {self.marker} entry of this ledger is kept here.\n\n"
            f"## Gauge readings\n\nEach gauge reading in the {self.marker} ledger names the harbour, the tide height "
            f"and the keeper. {TOPIC}\n\n## Corrections\n\nA correction in the tide ledger quotes the reading it "
            f"replaces and the reason, so the {self.marker} record stays complete. {TOPIC}\n"
        )


PUBLIC = "visibility: public\n"
EXPIRED = "visibility: public\nshare_expires_at: '2001-01-01T00:00:00+00:00'\n"
LOCKED = "visibility: public\npassword_protected: true\n"


def _docs(tenant: str, code: str) -> list[Article]:
    kb = f"{tenant}-docs"
    return [
        Article(f"{kb}/private.md", tenant, kb, f"{tenant.title()} private tide ledger", f"QX{code}PRIVQX", ""),
        Article(f"{kb}/public.md", tenant, kb, f"{tenant.title()} public tide ledger", f"QX{code}PUBLQX", PUBLIC),
        Article(f"{kb}/expired.md", tenant, kb, f"{tenant.title()} expired tide ledger", f"QX{code}EXPDQX", EXPIRED),
        Article(f"{kb}/locked.md", tenant, kb, f"{tenant.title()} locked tide ledger", f"QX{code}LOCKQX", LOCKED),
    ]


ARTICLES: tuple[Article, ...] = (
    *_docs("alpha", "AL"),
    Article("alpha-notes/harbour-notes.md", "alpha", "alpha-notes", "Alpha harbour notes", "QXALNOTEQX", ""),
    *_docs("beta", "BE"),
)
KBS = {"alpha-docs": "alpha", "alpha-notes": "alpha", "beta-docs": "beta"}


def write_corpus(corpus: Path, kbs: Mapping[str, str], articles: Iterable[Article]) -> Path:
    """`corpus` holding exactly `articles`, each knowledge base with the tenant `kbs` gives it."""
    articles = list(articles)
    for kb, tenant in kbs.items():
        (corpus / kb).mkdir(parents=True, exist_ok=True)
        (corpus / kb / "_kb.yaml").write_text(f"name: {kb}\ntenant: {tenant}\n", encoding="utf-8")
    for article in articles:
        (corpus / article.relpath).write_text(article.markdown(), encoding="utf-8")
    kept = {a.relpath for a in articles}
    for old in corpus.glob("*/*.md"):
        if old.relative_to(corpus).as_posix() not in kept:
            old.unlink()
    return corpus


def make_tenant_corpus(root: Path) -> Path:
    return write_corpus(root / "corpus", KBS, ARTICLES)


# --- the past pair: the same texts before and after edits that take articles away ------------------------

GONE = "gamma"
"""The tenant articles and knowledge bases move to: no key of the matrix holds it, so between the two builds
every caller only loses articles, and what a caller may read now is also what it may read in the past."""


def _as(relpath: str, front_matter: str | None = None, tenant: str | None = None) -> Article:
    article = next(a for a in ARTICLES if a.relpath == relpath)
    return dataclasses.replace(article, front_matter=article.front_matter if front_matter is None else front_matter, tenant=tenant or article.tenant)


PAST_KBS = {"alpha-docs": "alpha", "alpha-notes": "alpha", "beta-docs": "beta"}
NOW_KBS = {**PAST_KBS, "alpha-notes": GONE}
PAST: tuple[Article, ...] = (
    _as("alpha-docs/private.md"),
    _as("alpha-docs/locked.md", ""),
    _as("alpha-docs/public.md"),
    _as("alpha-docs/expired.md", PUBLIC),
    _as("alpha-notes/harbour-notes.md"),
    _as("beta-docs/private.md"),
    _as("beta-docs/public.md"),
)
NOW: tuple[Article, ...] = (
    _as("alpha-docs/private.md"),
    _as("alpha-docs/locked.md", f"tenant: {GONE}\n", tenant=GONE),
    _as("alpha-docs/public.md", ""),
    _as("alpha-docs/expired.md", EXPIRED),
    _as("alpha-notes/harbour-notes.md", tenant=GONE),
    _as("beta-docs/public.md"),
)
CHANGES: dict[str, tuple[str, tuple[str, ...]]] = {
    "moved tenant": ("alpha-docs/locked.md", ("alpha",)),
    "withdrawn share": ("alpha-docs/public.md", ("public",)),
    "expired share": ("alpha-docs/expired.md", ("public",)),
    "knowledge base left the key's scope": ("alpha-notes/harbour-notes.md", ("alpha", "alpha-notes")),
    "deleted": ("beta-docs/private.md", ("beta",)),
}
"""Each edit between the builds: the article it changes and the callers (matrix principals) who lose it."""
