"""`python -m tests.integrity.stage_hook STAGE`: `petrichor build` that announces each stage on stderr
and stops dead inside STAGE, so a test can SIGKILL the build there.

The hold wraps the step functions the assets call (and, for publishing, the middle of the Parquet writes
and the moment between the manifest and `CURRENT`), so the kill lands with the stage's work under way.
"""

from __future__ import annotations

import sys
import threading
import time

_LINES = threading.Lock()


def _say(line: str) -> None:
    """One whole line per write, under a lock: steps run in threads, and `print` writes the text and its
    newline separately, so two threads' lines could run together ("HOLD articlesSTAGE articles")."""
    with _LINES:
        sys.stderr.write(line + "\n")
        sys.stderr.flush()


def _hold(stage: str, target: str) -> None:
    _say(f"STAGE {stage}")
    if stage == target:
        _say(f"HOLD {stage}")
        time.sleep(3600)


def _wrap(module, name: str, stage, target: str) -> None:
    real = getattr(module, name)

    def wrapped(*args, **kwargs):
        _hold(stage(*args) if callable(stage) else stage, target)
        return real(*args, **kwargs)

    setattr(module, name, wrapped)


def main(target: str) -> int:
    from petrichor_core.contract import current as pointer
    from petrichor_pipeline.assets import chunks, embeddings, knowledge, sources
    from petrichor_pipeline.builder import publish

    _wrap(sources, "articles_step", "articles", target)
    _wrap(chunks, "chunks_step", "chunks", target)
    for name in ("questions", "wiki_candidates", "page_index", "wiki_pages"):
        _wrap(knowledge, f"{name}_step", name, target)
    _wrap(embeddings, "vectors_step", lambda ctx, bucket, kind: f"{kind}_vectors", target)
    written = []
    real_parquet = publish.write_parquet_atomic

    def parquet(table, path, **options):
        real_parquet(table, path, **options)
        written.append(path)
        if len(written) == 3:
            _hold("snapshot_files", target)

    publish.write_parquet_atomic = parquet
    real_text = pointer.write_text_atomic

    def text(path, body):
        if path.name == pointer.CURRENT_FILE:
            _hold("snapshot_pointer", target)
        real_text(path, body)

    pointer.write_text_atomic = text
    from petrichor.cli import main as cli

    return cli(["build"])


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
