"""jieba, started once per process: its dictionary, its part-of-speech tagger and its IDF table, each read
from a cache where jieba's own loader is slow.

Nothing here segments by itself: `petrichor_core.text.tokenize` and the readers of Chinese text call
`init_jieba` / `init_posseg` / `idf_table` and use what they return.
"""

from __future__ import annotations

import hashlib
import importlib
import io
import logging
import marshal
import os
import pickle
import sys
import tempfile
import threading
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any, BinaryIO, TypeVar, cast

_jieba_lock = threading.Lock()
_jieba: ModuleType | None = None
_tables_lock = threading.RLock()  # the IDF table's first load imports the tagger under it
_posseg: ModuleType | None = None
_idf: tuple[dict[str, float], float] | None = None
T = TypeVar("T")


class _WholeFileMarshal:
    """jieba's `marshal` with `load` reading the file in one call: `marshal.load` on a file object reads
    each of the dictionary cache's ~500,000 entries with its own small read (1.1 s on 2 cores against 0.4 s
    for `marshal.loads` of the same bytes)."""

    dump = staticmethod(marshal.dump)
    dumps = staticmethod(marshal.dumps)
    loads = staticmethod(marshal.loads)

    @staticmethod
    def load(file: BinaryIO) -> object:
        return marshal.loads(file.read())


POSSEG_TABLES = ("char_state_tab", "prob_start", "prob_trans", "prob_emit")
"""jieba's part-of-speech model: four modules of one dict `P` each, shipped also as pickles of the same dicts."""


def _seed_posseg_tables(package_dir: Path) -> None:
    """Put jieba's part-of-speech tables into `sys.modules` from the pickles it ships beside their modules
    (the form jieba itself reads on Jython), so that `import jieba.posseg` finds them there. Importing the
    modules builds 8 MB of dict literals op by op: 0.33 s against 0.08 s for the pickles. A table whose pickle
    cannot be read is left to the import."""
    for name in POSSEG_TABLES:
        qualified = f"jieba.posseg.{name}"
        if qualified in sys.modules:
            continue
        try:
            with open(package_dir / "posseg" / f"{name}.p", "rb") as fh:
                table = pickle.load(fh)
        except (OSError, pickle.UnpicklingError, EOFError):
            continue
        module = ModuleType(qualified)
        module.P = table  # type: ignore[attr-defined]
        sys.modules[qualified] = module


def _import_jieba() -> ModuleType:
    """`import jieba` without `pkg_resources`, which jieba imports only to open its own package files and
    falls back from to plain paths: importing setuptools' `pkg_resources` costs every process about 0.25 s."""
    if "pkg_resources" in sys.modules:
        import jieba
    else:
        sys.modules["pkg_resources"] = None  # type: ignore[assignment]  # `import pkg_resources` raises ImportError
        try:
            import jieba
        finally:
            if sys.modules.get("pkg_resources", 0) is None:
                del sys.modules["pkg_resources"]
    jieba.marshal = _WholeFileMarshal
    _seed_posseg_tables(Path(jieba.__file__).parent)
    return jieba


def init_jieba() -> ModuleType:
    """jieba with its dictionary loaded (~0.4 s), quietly; once per process, safe from several threads.

    Called lazily by whatever segments Chinese first, or at start-up to take the cost before the first request.
    """
    global _jieba
    if _jieba is None:
        with _jieba_lock:
            if _jieba is None:
                jieba = _import_jieba()
                jieba.setLogLevel(logging.WARNING)
                jieba.initialize()
                _jieba = jieba
    return _jieba


def jieba_loaded() -> bool:
    """Whether this process has loaded jieba's dictionary (`init_jieba`)."""
    return _jieba is not None


def init_posseg() -> ModuleType:
    """`jieba.posseg`, its word tags read from a marshal cache; once per process, safe from several threads.

    Importing `jieba.posseg` parses the whole dictionary file (349,000 lines) for the tags, 0.21 s; the cache
    gives the same table in about half that. The import is handed an empty dictionary file while its module
    tagger is built, and the tagger then takes the cached table (read by jieba's own reader when the cache
    is missing). A dictionary other than jieba's own is imported as jieba does it."""
    global _posseg
    if _posseg is None:
        jieba: Any = init_jieba()  # an untyped library, read as `import jieba` gives it
        with _tables_lock:
            if _posseg is None:
                if "jieba.posseg" in sys.modules or jieba.dt.dictionary != jieba.DEFAULT_DICT:
                    importlib.import_module("jieba.posseg")
                else:
                    source = Path(jieba.__file__).parent / jieba.DEFAULT_DICT_NAME
                    jieba.dt.get_dict_file = lambda: io.BytesIO()  # shadows the method for the import only
                    try:
                        importlib.import_module("jieba.posseg")
                    finally:
                        del jieba.dt.get_dict_file

                    def word_tags() -> dict[str, str]:
                        reader = jieba.posseg.POSTokenizer.__new__(jieba.posseg.POSTokenizer)
                        reader.load_word_tag(open(source, "rb"))  # noqa: SIM115 - jieba's reader closes it
                        return reader.word_tag_tab

                    jieba.posseg.dt.word_tag_tab = _cached_table("tags", source, word_tags, lambda v: isinstance(v, dict))
                _posseg = jieba.posseg
    return _posseg


def idf_table() -> tuple[dict[str, float], float]:
    """jieba's IDF table and its median (what `jieba.analyse`'s TF-IDF scores with), through a marshal cache:
    importing `jieba.analyse` parses the 270,000-line file, 0.20 s, the cache takes about half, and the import
    happens only when the cache is missing."""
    global _idf
    if _idf is None:
        jieba: Any = init_jieba()  # an untyped library, read as `import jieba` gives it
        with _tables_lock:
            if _idf is None:

                def jiebas_own() -> tuple[dict[str, float], float]:
                    init_posseg()  # `jieba.analyse` imports the tagger: the cached tags, not a second parse
                    import jieba.analyse

                    return jieba.analyse.default_tfidf.idf_loader.get_idf()

                valid = lambda v: isinstance(v, tuple) and len(v) == 2 and isinstance(v[0], dict) and isinstance(v[1], float)  # noqa: E731
                freq, median = _cached_table("idf", Path(jieba.__file__).parent / "analyse" / "idf.txt", jiebas_own, valid)
                _idf = freq, median
    return _idf


def _cached_table(name: str, source: Path, load: Callable[[], T], valid: Callable[[Any], bool]) -> T:
    """`load()` kept as a marshal file beside jieba's own dictionary cache, named for `source`'s path, size
    and modification time and jieba's version, so an upgraded jieba never reads an old table. Only a cache
    this user owns and `valid` accepts is read (the folder may be a shared /tmp, and marshal trusts what it
    reads); a missing, foreign or unreadable cache is loaded again and rewritten. The cache only saves time,
    so a failed write is ignored (logged at debug level: it would repeat in every process). Written by hand
    rather than with `contract.files.write_atomic`: `text/` imports nothing of ours but itself."""
    jieba = sys.modules["jieba"]
    stat = source.stat()
    key = hashlib.sha1(f"{source}|{stat.st_size}|{stat.st_mtime_ns}|{jieba.__version__}".encode()).hexdigest()[:16]
    path = Path(jieba.dt.tmp_dir or tempfile.gettempdir()) / f"petrichor-jieba-{name}.{key}.cache"
    try:
        with open(path, "rb") as fh:
            if os.fstat(fh.fileno()).st_uid == os.getuid():
                value = marshal.loads(fh.read())
                if valid(value):
                    return value
    except (OSError, EOFError, ValueError, TypeError):
        pass
    value = load()
    try:
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f"{path.name}.", suffix=".tmp")
        try:
            with os.fdopen(fd, "wb") as fh:
                marshal.dump(cast(Any, value), fh)  # `load` returns a table marshal writes (dicts, floats)
            os.replace(tmp, path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
    except OSError as exc:
        logging.getLogger(__name__).debug("jieba %s cache not written to %s: %s", name, path.parent, exc)
    return value
