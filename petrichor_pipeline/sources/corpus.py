"""The corpus folder as typed articles: `<corpus>/<kb_id>/**/*.md|*.markdown|*.pdf`.

The first folder under the root is the knowledge base; `<kb>/_kb.yaml` (optional `name`, `tenant`) and
`<kb>/_compile-guide.md` configure it. Names starting with `_` or `.` are never articles. A file that cannot
be read becomes one `SourceError` and the scan goes on; everything comes out sorted by relative path, so two
scans of the same folder are equal.

Nothing outside the corpus root is ever read: a symbolic link (to a file or a folder) is followed only when
its resolved target lies inside the root; one pointing outside is skipped and reported as a `SourceError` on
the link's own path. A folder reached twice through links (a loop) is walked once.
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

import yaml

from petrichor_pipeline.sources.decode import decode_text
from petrichor_pipeline.sources.errors import RejectedFile
from petrichor_pipeline.sources.identity import article_id_of, article_version, bucket_of
from petrichor_pipeline.sources.markdown import read_markdown
from petrichor_pipeline.sources.pdf import PageTranscriber, read_pdf
from petrichor_pipeline.text.limits import MAX_TITLE_CHARS, capped

DEFAULT_TENANT = "default"
DEFAULT_MAX_FILE_BYTES = 5 * 1024 * 1024
KB_SETTINGS_FILE = "_kb.yaml"
COMPILE_GUIDE_FILE = "_compile-guide.md"
MARKDOWN_SUFFIXES = (".md", ".markdown")
PDF_SUFFIXES = (".pdf",)


@dataclass(frozen=True, slots=True)
class KnowledgeBase:
    kb_id: str
    name: str
    tenant: str
    guide_raw: str
    """The compile guide as written (normalised newlines); the knowledge layer decides what reaches prompts."""


@dataclass(frozen=True, slots=True)
class SourceArticle:
    article_id: str
    kb_id: str
    path: str
    """Posix path relative to the corpus root, e.g. `petrichor-zh/guides/install.md`."""
    title: str
    content: str
    """Normalised Markdown body without front matter; chunk and citation offsets point into it."""
    tenant: str
    visibility: str
    share_expires_at: str | None
    password_protected: bool
    article_version: str
    source_sha256: str
    """sha256 of the raw file bytes."""
    bucket: str
    warnings: tuple[str, ...]
    kind: str
    """Either "markdown" or "pdf"."""


@dataclass(frozen=True, slots=True)
class SourceError:
    path: str
    reason: str


@dataclass(frozen=True, slots=True)
class CorpusScan:
    kbs: dict[str, KnowledgeBase]
    articles: tuple[SourceArticle, ...]
    errors: tuple[SourceError, ...]


def scan_corpus(
    corpus_dir: Path,
    *,
    max_file_bytes: int = DEFAULT_MAX_FILE_BYTES,
    pdf_transcriber: PageTranscriber | None = None,
) -> CorpusScan:
    """Every article under `corpus_dir`, with one error per file that could not become an article."""
    kbs: dict[str, KnowledgeBase] = {}
    articles: list[SourceArticle] = []
    errors: list[SourceError] = []
    by_kb: dict[str, list[str]] = {kb_id: [] for kb_id in _kb_folders(corpus_dir)}
    for relpath in _article_paths(corpus_dir, errors):
        kb_id, *rest = PurePosixPath(relpath).parts
        if rest:
            by_kb.setdefault(kb_id, []).append(relpath)
        else:
            errors.append(SourceError(relpath, "not inside a knowledge-base folder"))
    for kb_id, relpaths in sorted(by_kb.items()):
        kb = _load_kb(corpus_dir, kb_id, max_file_bytes, errors, article_count=len(relpaths))
        if kb is None:
            continue
        kbs[kb_id] = kb
        for relpath in relpaths:
            try:
                articles.append(_load_article(corpus_dir, relpath, kb, max_file_bytes, pdf_transcriber))
            except RejectedFile as exc:
                errors.append(SourceError(relpath, exc.reason))
    return CorpusScan(
        kbs=kbs,
        articles=tuple(sorted(articles, key=lambda a: a.path)),
        errors=tuple(sorted(errors, key=lambda e: (e.path, e.reason))),
    )


def _hidden(name: str) -> bool:
    return name.startswith(("_", "."))


def _is_article_file(name: str) -> bool:
    return not _hidden(name) and PurePosixPath(name).suffix.lower() in MARKDOWN_SUFFIXES + PDF_SUFFIXES


def _kind(name: str) -> str:
    return "pdf" if PurePosixPath(name).suffix.lower() in PDF_SUFFIXES else "markdown"


def _kb_folders(corpus_dir: Path) -> list[str]:
    if not corpus_dir.is_dir():
        return []
    root = corpus_dir.resolve()
    return sorted(
        entry.name
        for entry in os.scandir(corpus_dir)
        if entry.is_dir() and not _hidden(entry.name) and _inside(root, Path(entry.path))
    )


def _inside(root: Path, path: Path) -> bool:
    """Whether `path`, with every link resolved, is `root` or lies under it (`root` is resolved)."""
    return path.resolve().is_relative_to(root)


OUTSIDE_LINK = "symbolic link to a target outside the corpus folder; not read"


def _article_paths(corpus_dir: Path, errors: list[SourceError]) -> list[str]:
    """Relative posix paths of Markdown and PDF files, pruning `_`/`.` folders before walking into them.

    Links are followed only inside the root (module docstring); each one pointing outside adds an error.
    """
    root = corpus_dir.resolve()
    found: list[str] = []
    seen: set[Path] = set()
    for dirpath, dirs, files in os.walk(corpus_dir, followlinks=True):
        here = Path(dirpath)
        rel_root = here.relative_to(corpus_dir)
        real = here.resolve()
        if real in seen:
            dirs[:] = []
            continue
        seen.add(real)
        kept = []
        for name in sorted(d for d in dirs if not _hidden(d)):
            if _inside(root, here / name):
                kept.append(name)
            else:
                errors.append(SourceError((rel_root / name).as_posix(), OUTSIDE_LINK))
        dirs[:] = kept
        for name in files:
            if not _is_article_file(name):
                continue
            if _inside(root, here / name):
                found.append((rel_root / name).as_posix())
            else:
                errors.append(SourceError((rel_root / name).as_posix(), OUTSIDE_LINK))
    return sorted(found)


def _load_kb(
    corpus_dir: Path, kb_id: str, max_file_bytes: int, errors: list[SourceError], *, article_count: int
) -> KnowledgeBase | None:
    """None when `_kb.yaml` is broken: guessing the tenant could show the articles to the wrong readers.

    An unreadable compile guide only costs the guide.
    """
    settings_path = f"{kb_id}/{KB_SETTINGS_FILE}"
    try:
        settings = _kb_settings(_within(corpus_dir, settings_path), max_file_bytes)
    except RejectedFile as exc:
        reason = f"broken knowledge-base settings: {exc.reason}; {article_count} article(s) left out"
        errors.append(SourceError(settings_path, reason))
        return None
    guide_path = f"{kb_id}/{COMPILE_GUIDE_FILE}"
    try:
        guide = _compile_guide(_within(corpus_dir, guide_path), max_file_bytes)
    except RejectedFile as exc:
        errors.append(SourceError(guide_path, f"compile guide not used: {exc.reason}"))
        guide = ""
    return KnowledgeBase(
        kb_id=kb_id,
        name=settings.get("name", kb_id),
        tenant=settings.get("tenant", DEFAULT_TENANT),
        guide_raw=guide,
    )


def _kb_settings(path: Path, max_file_bytes: int) -> dict[str, str]:
    """`name` and `tenant` from `_kb.yaml` (both optional, non-empty text when given)."""
    if not path.is_file():
        return {}
    try:
        loaded = yaml.safe_load(decode_text(_read_limited(path, max_file_bytes)))
    except yaml.YAMLError as exc:
        raise RejectedFile(" ".join(str(exc).split())) from None
    if loaded is None:
        return {}
    if not isinstance(loaded, dict):
        raise RejectedFile("expected a mapping of keys")
    settings: dict[str, str] = {}
    for key in ("name", "tenant"):
        value = loaded.get(key)
        if value is None:
            continue
        if not (isinstance(value, str) and value.strip()):
            raise RejectedFile(f"{key} must be non-empty text")
        settings[key] = value.strip()
    return settings


def _compile_guide(path: Path, max_file_bytes: int) -> str:
    return decode_text(_read_limited(path, max_file_bytes)) if path.is_file() else ""


def _within(corpus_dir: Path, relpath: str) -> Path:
    """`corpus_dir / relpath`, refused when a link takes it outside the corpus."""
    path = corpus_dir / relpath
    if (path.is_symlink() or path.exists()) and not _inside(corpus_dir.resolve(), path):
        raise RejectedFile(OUTSIDE_LINK)
    return path


def _read_limited(path: Path, max_file_bytes: int) -> bytes:
    try:
        size = path.stat().st_size
        if size > max_file_bytes:
            raise RejectedFile(f"file too large: {size} bytes (limit {max_file_bytes})")
        return path.read_bytes()
    except OSError as exc:
        raise RejectedFile(f"unreadable file: {exc.strerror or exc}") from None


def _load_article(
    corpus_dir: Path, relpath: str, kb: KnowledgeBase, max_file_bytes: int, transcriber: PageTranscriber | None
) -> SourceArticle:
    data = _read_limited(corpus_dir / relpath, max_file_bytes)
    if not data:
        raise RejectedFile("empty file")
    stem = PurePosixPath(relpath).stem
    kind = _kind(relpath)
    if kind == "pdf":
        pdf = read_pdf(data, stem, transcriber)
        title, content, warnings = pdf.title, pdf.content, pdf.warnings
        tenant, visibility, expires, protected = kb.tenant, "private", None, False
    else:
        md = read_markdown(data, stem)
        front = md.front
        title, content, warnings = md.title, md.content, front.warnings
        tenant, visibility = front.tenant or kb.tenant, front.visibility
        expires, protected = front.share_expires_at, front.password_protected
    title = capped(title, MAX_TITLE_CHARS)
    article_id = article_id_of(relpath)
    return SourceArticle(
        article_id=article_id,
        kb_id=kb.kb_id,
        path=relpath,
        title=title,
        content=content,
        tenant=tenant,
        visibility=visibility,
        share_expires_at=expires,
        password_protected=protected,
        article_version=article_version(title, content),
        source_sha256=hashlib.sha256(data).hexdigest(),
        bucket=bucket_of(article_id),
        warnings=tuple(warnings),
        kind=kind,
    )
