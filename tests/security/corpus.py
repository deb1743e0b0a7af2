"""The two-tenant corpus of the isolation matrix, generated: every article carries a unique marker.

Tenant alpha has two knowledge bases (`alpha-docs`, `alpha-notes`), tenant beta one (`beta-docs`). Each
tenant's `*-docs` holds a private article, a public share, an expired share and a password-protected share,
all on the same subject (tide ledgers, harbour gauges) so that any query ranks every article of the corpus
and a scope that let one through would show it. A marker is a token found in one article's text only.
"""

from __future__ import annotations

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


def make_tenant_corpus(root: Path) -> Path:
    corpus = root / "corpus"
    for kb, tenant in KBS.items():
        (corpus / kb).mkdir(parents=True)
        (corpus / kb / "_kb.yaml").write_text(f"name: {kb}\ntenant: {tenant}\n", encoding="utf-8")
    for article in ARTICLES:
        (corpus / article.relpath).write_text(article.markdown(), encoding="utf-8")
    return corpus
