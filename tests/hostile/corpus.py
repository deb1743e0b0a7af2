"""The hostile corpus, generated: every kind of bad input beside articles that must still build.

`HOSTILE` maps each hostile file to what the build must say about it: an error (the file is left out) or
a warning (the article builds, with its trouble named). `GOOD` are the articles that must build and be
found whatever their neighbours hold. Sizes stay modest (a few hundred KB) so that the shared build is
quick: every chunk and window of it is embedded, cold, in every CI run. So each oversized shape is just
past the limit it trips and repeats one unit (a line of code, a clause, a heading name), which makes most
of its chunks and windows the same text, embedded once; the unit tests in `test_limits.py` push them to
megabytes and 10,000 distinct headings.
"""

from __future__ import annotations

import contextlib
import os
import stat
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pymupdf

from petrichor_core.text.chunking import LONG_LINE_CHARS, MAX_WHOLE_FENCE_CHARS
from petrichor_pipeline.sources.corpus import DEFAULT_MAX_FILE_BYTES
from tests.sources.helpers import add_image_page, add_text_page, write

KB = "hostile"
BAD_DATE_KB = "dated"
"""A knowledge base whose `_kb.yaml` holds an impossible unquoted date under a key it does not use."""
OUTSIDE_SECRET = "root:x:0:0:OUTSIDESECRET:/root:/bin/bash"
FENCE_TAIL = "FENCETAILMARKER after the unclosed fence"
LINE_TAIL = "LONGLINETAILMARKER"


@dataclass(frozen=True)
class Expect:
    outcome: str
    """"error": one error, no article; "warning": the article builds with a warning; "builds": it just builds."""
    says: str
    """A phrase of the English reason or warning."""


GOOD = {
    f"{KB}/good/install.md": (
        "# Installing the tide gauge\n\nMount the tide gauge on the pier and calibrate the pressure sensor before the first reading.\n",
        "calibrate the pressure sensor",
    ),
    f"{KB}/good/mixed-endings.md": ("# Mixed endings\r\nThe barometer log\rkeeps hourly readings\nof the harbour wind.\r\n", "barometer log"),
    f"{KB}/good/中文.md": ("# 潮汐记录\n\n潮位计每小时记录一次海港水位。\n", "潮位计"),
}

HOSTILE = {
    f"{KB}/passwd.md": Expect("error", "outside the corpus folder"),
    f"{KB}/outside-dir": Expect("error", "outside the corpus folder"),
    f"{KB}/invalid-utf8.md": Expect("error", "invalid UTF-8"),
    f"{KB}/binary.md": Expect("error", "binary content"),
    f"{KB}/empty.md": Expect("error", "empty file"),
    f"{KB}/oversized.md": Expect("error", "file too large"),
    f"{KB}/broken-front-matter.md": Expect("error", "front matter"),
    f"{KB}/encrypted.pdf": Expect("error", "encrypted PDF"),
    f"{KB}/corrupt.pdf": Expect("error", "PDF"),
    f"{KB}/image-only.pdf": Expect("error", "no text"),
    f"{KB}/heading-bomb.md": Expect("warning", "line(s) longer than"),
    f"{KB}/unclosed-fence.md": Expect("warning", "never closed"),
    f"{KB}/long-line.md": Expect("warning", "line(s) longer than"),
    f"{KB}/nested-headings.md": Expect("builds", ""),
    f"{KB}/unknown-key.md": Expect("warning", "unknown front matter key"),
    # each of these stopped every build once: a crash, a hang, or a file from outside published
    f"{KB}/bad-name-\\xff.md": Expect("error", "file name is not valid UTF-8"),
    f"{KB}/bad-date.md": Expect("error", "invalid share_expires_at: '2020-13-45'"),
    f"{KB}/bad-date-unknown-key.md": Expect("warning", "unknown front matter key 'reviewed'"),
    f"{KB}/fifo.md": Expect("error", "not a regular file (a FIFO (named pipe))"),
    f"{KB}/socket.md": Expect("error", "not a regular file (a socket)"),
    f"{KB}/device.md": Expect("error", "not a regular file (a character device)"),
    f"{KB}/hard-link.md": Expect("error", "hard link: 2 names share this file and only 1 of them"),
    f"{KB}/unreadable.md": Expect("error", "unreadable file: Permission denied"),
    f"{BAD_DATE_KB}/dated.md": Expect("builds", ""),
}
"""Paths as the build reports them: a name that is not UTF-8 shows its byte as `\\xff`."""

HEADING_BOMB_CHARS = 56_400


def heading_bomb() -> str:
    return "# " + "tidal " * (HEADING_BOMB_CHARS // 6) + "\n\nThe body under the bomb names the SEICHEWORD.\n"


FENCE_LINE = "reading = sensor.read()"
LINE_UNIT = "waves grow with the fetch and wind; "


def unclosed_fence() -> str:
    """A fence that never closes, just over `MAX_WHOLE_FENCE_CHARS`, so it is split with a warning."""
    code = "\n".join([FENCE_LINE] * (MAX_WHOLE_FENCE_CHARS // (len(FENCE_LINE) + 1) + 40))
    return "# Fence\n\nBefore the code.\n\n```python\n" + code + "\n\n# not a heading, still code\n" + FENCE_TAIL + "\n"


def long_line() -> str:
    """One line just over `LONG_LINE_CHARS`, so it gets the long-line warning."""
    return "# Line\n\n" + LINE_UNIT * (LONG_LINE_CHARS // len(LINE_UNIT) + 20) + LINE_TAIL + "\n"


def nested_headings(count: int = 10_000, name: str | None = None) -> str:
    """`count` headings nested five deep under one title, again and again: `h0`, `h1`, … or, with `name`,
    all called the same (as "Example" sections are), which node keys must still tell apart."""
    return "# Nested\n\n" + "".join(f"{'#' * (i % 5 + 2)} {name or f'h{i}'}\n" for i in range(count))


UNREADABLE = "unreadable.md"


def write_unbuildable_files(kb: Path, outside_file: Path) -> None:
    """The files that once stopped every build, beside articles in `kb`: a name that is not UTF-8, an
    impossible date, a FIFO, a socket, a device, a hard link to a file outside, a file nobody may read.

    A character device needs CAP_MKNOD; without it (an unprivileged run) a second FIFO takes its name.
    """
    write(kb, os.fsdecode(b"bad-name-\xff.md"), "# Bad name\n\nThe name is not UTF-8.\n")
    write(kb, "bad-date.md", "---\nshare_expires_at: 2020-13-45\n---\n\nExpires on no day at all.\n")
    write(kb, "bad-date-unknown-key.md", "---\nreviewed: 2020-13-45\n---\n\nThe hygrometer dries out.\n")
    os.mkfifo(kb / "fifo.md")
    _socket_file(kb / "socket.md")
    try:
        os.mknod(kb / "device.md", stat.S_IFCHR | 0o644, os.makedev(1, 3))  # /dev/null's numbers
    except PermissionError:
        os.mkfifo(kb / "device.md")
    os.link(outside_file, kb / "hard-link.md")
    write(kb, UNREADABLE, "# Unreadable\n\nNobody may read this.\n").chmod(0)


def _socket_file(path: Path) -> None:
    import socket

    with socket.socket(socket.AF_UNIX) as sock:
        sock.bind(str(path))  # the socket file stays after the socket is closed


@contextlib.contextmanager
def unreadable_even_for_root(corpus: Path) -> Iterator[None]:
    """`chmod 000` stops everyone but root, and the suite may run as root: there, opening the
    `UNREADABLE` files of `corpus` is made to fail as the kernel would fail it for anyone else."""
    if os.geteuid() != 0:
        yield
        return
    real_open = os.open

    def open_(path, flags, *args, **kwargs):
        if Path(os.fsdecode(path)).name == UNREADABLE and Path(os.fsdecode(path)).resolve().is_relative_to(corpus.resolve()):
            raise PermissionError(13, "Permission denied", os.fsdecode(path))
        return real_open(path, flags, *args, **kwargs)

    os.open = open_
    try:
        yield
    finally:
        os.open = real_open


def _pdfs(kb: Path) -> None:
    doc = pymupdf.open()
    add_text_page(doc, "Secret", "Only with the password.")
    write(kb, "encrypted.pdf", doc.tobytes(encryption=pymupdf.PDF_ENCRYPT_AES_256, user_pw="user", owner_pw="owner"))
    write(kb, "corrupt.pdf", b"%PDF-1.7\n1 0 obj <<>> garbage \x00\xff" * 50)
    doc = pymupdf.open()
    add_image_page(doc)
    write(kb, "image-only.pdf", doc.tobytes())


def make_hostile_corpus(root: Path) -> Path:
    """Write the corpus under `root/corpus` (and its outside targets beside it); returns the corpus folder."""
    corpus, outside = root / "corpus", root / "outside"
    write(outside, "passwd", OUTSIDE_SECRET + "\n")
    write(outside, "dir/secret.md", f"# Secret\n\n{OUTSIDE_SECRET}\n")
    kb = corpus / KB
    for relpath, (text, _) in GOOD.items():
        write(corpus, relpath, text)
    os.symlink(outside / "passwd", kb / "passwd.md")
    os.symlink(outside / "dir", kb / "outside-dir")
    os.symlink(kb / "good", kb / "inside-link")  # followed: its target is inside the corpus
    os.symlink(kb, kb / "good" / "loop")  # a loop back up: walked once
    write(kb, "invalid-utf8.md", b"# Bad bytes\n\nvalid then \xff\xfe invalid\n")
    write(kb, "binary.md", bytes(range(256)) * 64)
    write(kb, "empty.md", b"")
    write(kb, "oversized.md", b"# Big\n\n" + b"a" * DEFAULT_MAX_FILE_BYTES)
    write(kb, "broken-front-matter.md", "---\ntitle: [unclosed\nvisibility: public\n---\n\nBody.\n")
    write(kb, "unknown-key.md", "---\ntitle: Known\ncolour: blue\n---\n\nThe anemometer spins.\n")
    write(kb, "heading-bomb.md", heading_bomb())
    write(kb, "unclosed-fence.md", unclosed_fence())  # over MAX_WHOLE_FENCE_CHARS: split, with a warning
    write(kb, "long-line.md", long_line())
    write(kb, "nested-headings.md", nested_headings(2_000, name="part"))
    _pdfs(kb)
    write_unbuildable_files(kb, outside / "passwd")
    write(corpus, f"{BAD_DATE_KB}/_kb.yaml", "name: Dated\nreviewed: 2020-13-45\n")
    write(corpus, f"{BAD_DATE_KB}/dated.md", "# Dated\n\nThe rain gauge overflows in spring.\n")
    return corpus
