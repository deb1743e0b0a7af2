import threading

import pytest

from petrichor_core.text.lang import NOT_FOUND, has_cjk, init_jieba, language_of, segmenter


@pytest.mark.parametrize(
    "text,expected",
    [
        ("Redis 怎么部署", "zh"),
        ("使用 PETRICHOR_DATA 环境变量", "zh"),
        ("How do I deploy Redis?", "en"),
        ("What does 缓存 mean here?", "en"),
        ("", "en"),
        ("12345 !?", "en"),
        ("㐀", "zh"),  # Extension A counts as Han
    ],
)
def test_language_of(text: str, expected: str) -> None:
    assert language_of(text) == expected


def test_one_han_character_weighs_three_latin_letters() -> None:
    assert language_of("部abc") == "zh"
    assert language_of("部abcd") == "en"


@pytest.mark.parametrize("text,expected", [("abc", False), ("部署", True), ("\u3000", False), ("かな", False), ("鿿", True)])
def test_has_cjk(text: str, expected: bool) -> None:
    assert has_cjk(text) is expected


def test_not_found_texts_exist_in_both_languages_and_follow_the_guess() -> None:
    assert set(NOT_FOUND) == {"zh", "en"}
    assert language_of(NOT_FOUND["zh"]) == "zh"
    assert language_of(NOT_FOUND["en"]) == "en"


def test_jieba_is_initialised_once_across_threads(monkeypatch: pytest.MonkeyPatch) -> None:
    import jieba

    calls: list[int] = []
    real = jieba.initialize
    monkeypatch.setattr(segmenter, "_jieba", None)
    monkeypatch.setattr(jieba, "initialize", lambda *a, **k: (calls.append(1), real(*a, **k)))
    results: list[object] = []
    threads = [threading.Thread(target=lambda: results.append(init_jieba())) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert calls == [1]
    assert all(r is jieba for r in results)
    assert init_jieba().lcut("部署缓存") == ["部署", "缓存"]


def test_jieba_starts_without_pkg_resources_and_loads_its_whole_dictionary(tmp_path) -> None:
    """In a fresh process: jieba's dictionary cache is read whole (`_WholeFileMarshal`) into the same
    dictionary jieba's own loader gives, its words segment as before, and `pkg_resources` stays unimported."""
    import subprocess
    import sys

    script = (
        "import sys\n"
        "from petrichor_core.text.lang import init_jieba\n"
        "jieba = init_jieba()\n"
        "import jieba.posseg\n"
        "words = jieba.lcut('我们在北京大学学习自然语言处理')\n"
        "fresh = jieba.Tokenizer()\n"
        "fresh.tmp_dir = sys.argv[1]\n"  # builds the dictionary from dict.txt, then caches it in tmp_path
        "fresh.initialize()\n"
        "assert fresh.FREQ == jieba.dt.FREQ and fresh.total == jieba.dt.total, 'dictionaries differ'\n"
        "print(words, 'pkg_resources' in sys.modules, [p.flag for p in jieba.posseg.cut('主节点地址')])\n"
    )
    out = subprocess.run([sys.executable, "-c", script, str(tmp_path)], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "['我们', '在', '北京大学', '学习', '自然语言', '处理'] False ['b', 'n', 'n']"


def test_posseg_tables_from_the_pickles_equal_the_modules() -> None:
    """In a fresh process: `init_jieba` puts the part-of-speech tables into `sys.modules` from jieba's
    pickles, and each equals what importing its module gives (read here from its source file)."""
    import subprocess
    import sys

    script = (
        "import importlib.util, sys\n"
        "from pathlib import Path\n"
        "from petrichor_core.text.lang import POSSEG_TABLES, init_jieba\n"
        "jieba = init_jieba()\n"
        "import jieba.posseg\n"
        "for name in POSSEG_TABLES:\n"
        "    seeded = sys.modules['jieba.posseg.' + name]\n"
        "    assert not hasattr(seeded, '__file__'), name + ' was imported, not seeded'\n"
        "    path = Path(jieba.__file__).parent / 'posseg' / (name + '.py')\n"
        "    spec = importlib.util.spec_from_file_location('source_' + name, path)\n"
        "    module = importlib.util.module_from_spec(spec)\n"
        "    spec.loader.exec_module(module)\n"
        "    assert module.P == seeded.P, name\n"
        "print([(p.word, p.flag) for p in jieba.posseg.cut('我们在北京大学学习')])\n"
    )
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert "('北京大学', 'nt')" in out.stdout


_CACHED_TABLES_SCRIPT = (
    "import sys, tempfile\n"
    "tempfile.tempdir = sys.argv[1]\n"  # where jieba's and these caches go
    "from petrichor_core.text.lang import idf_table, init_posseg\n"
    "posseg = init_posseg()\n"
    "freq, median = idf_table()\n"
    "import jieba.analyse\n"  # jieba's own readers, for the comparison only
    "from jieba.posseg import POSTokenizer\n"
    "own = POSTokenizer.__new__(POSTokenizer)\n"
    "own.load_word_tag(posseg.dt.tokenizer.get_dict_file())\n"
    "assert posseg.dt.word_tag_tab == own.word_tag_tab, 'tags differ'\n"
    "assert (freq, median) == jieba.analyse.default_tfidf.idf_loader.get_idf(), 'idf differs'\n"
    "print([(p.word, p.flag) for p in posseg.cut('我们在北京大学学习')])\n"
)


def test_posseg_tags_and_idf_come_from_caches_equal_to_jiebas_own_tables(tmp_path) -> None:
    """In fresh processes: the word tags and the IDF table equal what jieba's own readers give, whether parsed
    (first process, which writes the caches), read from the caches, or parsed again after a cache was cut short."""
    import subprocess
    import sys

    def run() -> str:
        out = subprocess.run([sys.executable, "-c", _CACHED_TABLES_SCRIPT, str(tmp_path)], capture_output=True, text=True, timeout=120)
        assert out.returncode == 0, out.stderr
        return out.stdout

    first = run()
    caches = {p.name.split(".")[0]: p for p in tmp_path.glob("petrichor-jieba-*.cache")}
    assert set(caches) == {"petrichor-jieba-tags", "petrichor-jieba-idf"}
    written = {name: p.stat().st_mtime_ns for name, p in caches.items()}
    assert run() == first
    assert {name: p.stat().st_mtime_ns for name, p in caches.items()} == written  # read, not rewritten
    tags = caches["petrichor-jieba-tags"]
    tags.write_bytes(tags.read_bytes()[:1000])
    assert run() == first
    assert tags.stat().st_size > 1000  # parsed again and rewritten whole
    assert "('北京大学', 'nt')" in first
    assert not list(tmp_path.glob("*.tmp"))


def test_a_cache_another_user_owns_is_not_read(tmp_path) -> None:
    """The caches may sit in a shared /tmp: a table planted there under another owner is parsed over, not read."""
    import marshal
    import os
    import subprocess
    import sys

    if not hasattr(os, "getuid") or os.getuid() != 0:
        pytest.skip("needs root to give the planted file another owner")
    out = subprocess.run([sys.executable, "-c", _CACHED_TABLES_SCRIPT, str(tmp_path)], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    tags = next(tmp_path.glob("petrichor-jieba-tags.*.cache"))
    tags.write_bytes(marshal.dumps({"北京大学": "planted"}))
    os.chown(tags, 4242, 4242)
    again = subprocess.run([sys.executable, "-c", _CACHED_TABLES_SCRIPT, str(tmp_path)], capture_output=True, text=True, timeout=120)
    assert again.returncode == 0, again.stderr  # the script asserts the tags equal jieba's own
    assert again.stdout == out.stdout
