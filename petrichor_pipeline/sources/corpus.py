"""The corpus folder as typed articles: `<corpus>/<kb_id>/**/*.md|*.markdown|*.pdf`.

The first folder under the root is the knowledge base; `<kb>/_kb.yaml` (optional `name`, `tenant`) and
`<kb>/_compile-guide.md` configure it. Names starting with `_` or `.` are never articles. A file that cannot
be read becomes one `SourceError` and the scan goes on; everything comes out sorted by relative path, so two
scans of the same folder are equal.

Nothing outside the corpus root is ever read: a symbolic link (to a file or a folder) is followed only when
its resolved target lies inside the root; one pointing outside is skipped and reported as a `SourceError` on
the link's own path. A folder reached twice through links (a loop) is walked once.

Only regular files are opened: a FIFO, socket or device file is refused from its `stat` before any `open`
(opening a FIFO would wait for a writer for ever; opening a device can act on it), and the open itself is
non-blocking and checked again on the descriptor. A hard link cannot be told from its target, so a file
with several names is read only when every one of them lies inside the corpus: the scan counts the names
of each (device, inode) it meets while walking the corpus's non-hidden folders, and a file whose link
count is higher (a link to `/etc/passwd`, or to a file in an older backup) is refused. Hard links inside
`_`/`.` folders are not counted, so such a file is refused too, which can only leave out, never let in.

Every failure of one file (reading, decoding, front matter, identity, or anything unforeseen) is that
file's `SourceError`; the scan itself fails only when the corpus folder cannot be listed. A file or folder
name that is not UTF-8 is refused (an article's id, citations and the build summary are text), with its
bytes shown as `\\xNN` in the error's path. A broken `_kb.yaml` refuses its whole knowledge base, with an
error on the settings file and one on each of its articles: built with defaults, they could reach readers
(another tenant's) the settings meant to keep out.
"""

from __future__ import annotations

import errno
import hashlib
import os
import stat
from dataclasses import dataclass, field
from pathlib import Path

from petrichor_core.text.limits import MAX_TITLE_CHARS, capped
from petrichor_pipeline.sources.decode import decode_text
from petrichor_pipeline.sources.errors import RejectedFile
from petrichor_pipeline.sources.frontmatter import load_yaml
from petrichor_pipeline.sources.identity import article_id_of, article_version, bucket_of
from petrichor_pipeline.sources.markdown import read_markdown
from petrichor_pipeline.sources.pdf import PageTranscriber, read_pdf

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
    census = _Census(corpus_dir.resolve())
    by_kb: dict[str, list[str]] = {kb_id: [] for kb_id in _kb_folders(corpus_dir)}
    for relpath in _article_paths(corpus_dir, errors, census):
        kb_id, *rest = relpath.split("/")  # a relative posix path as the walk writes it
        if rest:
            by_kb.setdefault(kb_id, []).append(relpath)
        else:
            errors.append(SourceError(relpath, "not inside a knowledge-base folder"))
    reader = _Reader(corpus_dir, max_file_bytes, census)
    for kb_id, relpaths in sorted(by_kb.items()):
        kb = _load_kb(reader, kb_id, errors, article_count=len(relpaths))
        if kb is None:
            settings = f"{kb_id}/{KB_SETTINGS_FILE}"
            errors.extend(SourceError(relpath, KB_REFUSED.format(settings=settings)) for relpath in relpaths)
            continue
        kbs[kb_id] = kb
        for relpath in relpaths:
            try:
                articles.append(_load_article(reader, relpath, kb, pdf_transcriber))
            except RejectedFile as exc:
                errors.append(SourceError(relpath, exc.reason))
            except Exception as exc:  # noqa: BLE001 - whatever one file does, it costs that file alone
                errors.append(SourceError(relpath, _unforeseen(exc)))
    return CorpusScan(
        kbs=kbs,
        articles=tuple(sorted(articles, key=lambda a: a.path)),
        errors=tuple(sorted(errors, key=lambda e: (e.path, e.reason))),
    )


KB_REFUSED = "not built: {settings} is broken, and the defaults could show the article to the wrong readers"
OUTSIDE_LINK = "symbolic link to a target outside the corpus folder; not read"
HARD_LINK = "hard link: {names} names share this file and only {inside} of them lie inside the corpus folder; not read"
BAD_FILE_NAME = "file name is not valid UTF-8; not read (rename the file)"
BAD_FOLDER_NAME = "folder name is not valid UTF-8; nothing under it is read (rename the folder)"
REPLACED = "the file was replaced while it was being read; not read"
_KINDS = (
    (stat.S_ISFIFO, "a FIFO (named pipe)"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
    (stat.S_ISDIR, "a folder"),
)


def _unforeseen(exc: BaseException) -> str:
    """An unexpected failure of one file as a one-line English reason (ASCII, so any byte shows as an escape)."""
    detail = " ".join(str(exc).split())[:200]
    text = f"could not be read: {type(exc).__name__}" + (f": {detail}" if detail else "")
    return text.encode("ascii", "backslashreplace").decode("ascii")


def _hidden(name: str) -> bool:
    return name.startswith(("_", "."))


def _is_article_file(name: str) -> bool:
    return not _hidden(name) and _suffix(name).lower() in MARKDOWN_SUFFIXES + PDF_SUFFIXES


def _kind(name: str) -> str:
    return "pdf" if _suffix(name).lower() in PDF_SUFFIXES else "markdown"


def _suffix(name: str) -> str:
    """`PurePosixPath(name).suffix` of a file name, without building the path."""
    dot = name.rfind(".")
    return name[dot:] if 0 < dot < len(name) - 1 else ""


def _stem(relpath: str) -> str:
    """`PurePosixPath(relpath).stem` of a relative posix path, without building the path."""
    name = relpath.rpartition("/")[2]
    return name[: len(name) - len(_suffix(name))]


def _utf8(name: str) -> bool:
    """Whether a name from the file system is UTF-8 (`os` keeps other bytes as lone surrogates)."""
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _shown(path: str) -> str:
    """A path as text for errors: bytes that are not UTF-8 written as `\\xNN`."""
    return os.fsencode(path).decode("utf-8", "backslashreplace")


def _kb_folders(corpus_dir: Path) -> list[str]:
    if not corpus_dir.is_dir():
        return []
    root = corpus_dir.resolve()
    return sorted(
        entry.name
        for entry in os.scandir(corpus_dir)
        if entry.is_dir() and not _hidden(entry.name) and _utf8(entry.name) and _inside(root, Path(entry.path))
    )


def _inside(root: Path, path: Path) -> bool:
    """Whether `path`, with every link resolved, is `root` or lies under it (`root` is resolved)."""
    return _within(str(root), os.path.realpath(path))


def _within(root: str, real: str) -> bool:
    """Whether a resolved path is the resolved `root` or lies under it, by whole names (`Path.is_relative_to`)."""
    return real == root or real.startswith(root.rstrip(os.sep) + os.sep)


@dataclass
class _Census:
    """The names inside the corpus of each regular file met while walking it, by (device, inode).

    A file's link count above its names here means a hard link from elsewhere (module docstring). Paths are
    handled as strings: the scan resolves and tests every file's path, and `pathlib` objects for them cost a
    10,000-article scan a third of its time.
    """

    root: Path
    names: dict[tuple[int, int], set[str]] = field(default_factory=dict)
    folders: dict[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self._root = str(self.root)

    def real(self, path: str) -> str:
        """`os.path.realpath(path)`, each folder resolved once per scan: a file that is not itself a link lies
        where its folder really is (three resolutions of every file cost 0.9 s of a 10,000-article scan's 2.3 s)."""
        if os.path.islink(path):
            return os.path.realpath(path)
        parent, name = os.path.split(path)
        real_parent = self.folders.get(parent)
        if real_parent is None:
            real_parent = self.folders[parent] = os.path.realpath(parent)
        return os.path.join(real_parent, name)

    def holds(self, real: str) -> bool:
        """Whether a resolved path is the root or lies under it (`Path.is_relative_to`, by whole names)."""
        return _within(self._root, real)

    def inside(self, path: str) -> bool:
        """Whether `path`, with every link resolved, is the root or lies under it."""
        return self.holds(self.real(path))

    def add(self, path: str) -> None:
        real = self.real(path)
        if not self.holds(real):
            return  # a symbolic link out of the corpus names nothing inside it
        try:
            st = os.stat(real)
        except OSError:
            return
        if stat.S_ISREG(st.st_mode):
            self.names.setdefault((st.st_dev, st.st_ino), set()).add(real)

    def names_inside(self, st: os.stat_result) -> int:
        return len(self.names.get((st.st_dev, st.st_ino), ()))


def _article_paths(corpus_dir: Path, errors: list[SourceError], census: _Census) -> list[str]:
    """Relative posix paths of Markdown and PDF files, pruning `_`/`.` folders before walking into them.

    Links are followed only inside the root (module docstring); each one pointing outside adds an error,
    and so does each folder that cannot be listed and each name that is not UTF-8. Every regular file
    walked past is counted in `census`.
    """
    root = corpus_dir.resolve()
    found: list[str] = []
    seen: set[Path] = set()

    def unlisted(exc: OSError) -> None:
        if exc.filename is not None and Path(exc.filename) != corpus_dir:
            rel = Path(exc.filename).relative_to(corpus_dir).as_posix()
            errors.append(SourceError(_shown(rel), f"folder not readable: {exc.strerror or exc}; nothing under it is read"))

    for dirpath, dirs, files in os.walk(corpus_dir, followlinks=True, onerror=unlisted):
        here = Path(dirpath)
        rel_root = here.relative_to(corpus_dir)
        real = here.resolve()
        if real in seen:
            dirs[:] = []
            continue
        seen.add(real)
        kept = []
        for name in sorted(d for d in dirs if not _hidden(d)):
            rel = (rel_root / name).as_posix()
            if not _utf8(name):
                errors.append(SourceError(_shown(rel), BAD_FOLDER_NAME))
            elif _inside(root, here / name):
                kept.append(name)
            else:
                errors.append(SourceError(rel, OUTSIDE_LINK))
        dirs[:] = kept
        rel_folder = "" if rel_root == Path(".") else f"{rel_root.as_posix()}/"
        for name in files:
            full = os.path.join(dirpath, name)
            census.add(full)
            if not _is_article_file(name):
                continue
            rel = rel_folder + name
            if not _utf8(name):
                errors.append(SourceError(_shown(rel), BAD_FILE_NAME))
            elif census.inside(full):
                found.append(rel)
            else:
                errors.append(SourceError(rel, OUTSIDE_LINK))
    return sorted(found)


@dataclass(frozen=True)
class _Reader:
    """Reads the corpus's files by relative path, opening nothing but regular files inside it."""

    corpus_dir: Path
    max_file_bytes: int
    census: _Census

    def within(self, relpath: str) -> str:
        """`corpus_dir / relpath`, refused when a link takes it outside the corpus."""
        path = os.path.join(self.corpus_dir, relpath)
        if (os.path.islink(path) or _exists(path)) and not self.census.inside(path):
            raise RejectedFile(OUTSIDE_LINK)
        return path

    def read(self, relpath: str) -> bytes:
        """The file's bytes, or `RejectedFile` for anything but a readable regular file of the corpus
        (checked on its `stat` before opening and again on the open descriptor) within the size limit."""
        path, limit = self.within(relpath), self.max_file_bytes
        try:
            before = os.stat(path)
            _refuse_unless_regular(before)
            if before.st_nlink > 1 and before.st_nlink > (inside := self.census.names_inside(before)):
                raise RejectedFile(HARD_LINK.format(names=before.st_nlink, inside=inside))
            if before.st_size > limit:
                raise RejectedFile(f"file too large: {before.st_size} bytes (limit {limit})")
            fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC)
            with os.fdopen(fd, "rb") as handle:
                opened = os.fstat(fd)
                if (opened.st_dev, opened.st_ino) != (before.st_dev, before.st_ino) or not stat.S_ISREG(opened.st_mode):
                    raise RejectedFile(REPLACED)
                data = handle.read(limit + 1)
        except OSError as exc:
            raise RejectedFile(f"unreadable file: {exc.strerror or exc}") from None
        if len(data) > limit:
            raise RejectedFile(f"file too large: over {limit} bytes (limit {limit})")
        return data

    def read_if_present(self, relpath: str) -> bytes | None:
        """`read`, or None when nothing (not even a dangling link) has that name."""
        path = self.corpus_dir / relpath
        return self.read(relpath) if path.is_symlink() or path.exists() else None


_MISSING = (errno.ENOENT, errno.ENOTDIR, errno.EBADF, errno.ELOOP)


def _exists(path: str) -> bool:
    """`Path.exists`: False for a name that leads nowhere, the error raised for any other failure."""
    try:
        os.stat(path)
    except OSError as exc:
        if exc.errno in _MISSING:
            return False
        raise
    except ValueError:
        return False
    return True


def _refuse_unless_regular(st: os.stat_result) -> None:
    if not stat.S_ISREG(st.st_mode):
        kind = next((name for test, name in _KINDS if test(st.st_mode)), "not a regular file")
        raise RejectedFile(f"not a regular file ({kind}); not read")


def _load_kb(reader: _Reader, kb_id: str, errors: list[SourceError], *, article_count: int) -> KnowledgeBase | None:
    """None when `_kb.yaml` is broken: guessing the tenant could show the articles to the wrong readers.

    An unreadable compile guide only costs the guide.
    """
    settings_path = f"{kb_id}/{KB_SETTINGS_FILE}"
    try:
        settings = _kb_settings(reader.read_if_present(settings_path))
    except Exception as exc:  # noqa: BLE001 - any failure refuses this knowledge base alone
        why = exc.reason if isinstance(exc, RejectedFile) else _unforeseen(exc)
        reason = f"broken knowledge-base settings: {why}; {article_count} article(s) left out"
        errors.append(SourceError(settings_path, reason))
        return None
    guide_path = f"{kb_id}/{COMPILE_GUIDE_FILE}"
    try:
        data = reader.read_if_present(guide_path)
        guide = decode_text(data) if data is not None else ""
    except Exception as exc:  # noqa: BLE001 - the guide is optional: losing it costs the guide alone
        why = exc.reason if isinstance(exc, RejectedFile) else _unforeseen(exc)
        errors.append(SourceError(guide_path, f"compile guide not used: {why}"))
        guide = ""
    return KnowledgeBase(
        kb_id=kb_id,
        name=settings.get("name", kb_id),
        tenant=settings.get("tenant", DEFAULT_TENANT),
        guide_raw=guide,
    )


def _kb_settings(data: bytes | None) -> dict[str, str]:
    """`name` and `tenant` from `_kb.yaml` (both optional, non-empty text when given)."""
    if data is None:
        return {}
    loaded = load_yaml(decode_text(data))
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


def _load_article(reader: _Reader, relpath: str, kb: KnowledgeBase, transcriber: PageTranscriber | None) -> SourceArticle:
    data = reader.read(relpath)
    if not data:
        raise RejectedFile("empty file")
    stem = _stem(relpath)
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
