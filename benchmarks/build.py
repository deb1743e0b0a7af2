"""Full and incremental `petrichor build` of a generated corpus with the offline models.

Generates N deterministic Chinese/English articles in two knowledge bases (see `_corpus.py`), runs a full
build, a rebuild with nothing changed, then edits a fraction of the articles and rebuilds. Each build is
`run_build` in a fresh process (as `petrichor build` is), on a Dagster instance, data folder and vector
cache of its own under the work folder. Reported per build: wall time, articles/s, peak RSS, per-stage
seconds, model calls and embedded texts; for the no-change and incremental builds also their wall time
relative to the full build (goals: at most 3 % and under 5 %) and whether its model calls and embeddings are exactly those the edited
articles need: calls attributed to unchanged articles must be zero, and embedded texts must equal the
edited articles' chunk and window texts that the full build had not embedded.

    .venv/bin/python benchmarks/build.py [--articles 1000] [--embed on|off] [--changed-fraction 0.01]
                                         [--seed 7] [--workdir DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from _corpus import change_articles, write_corpus  # noqa: E402

EMBED_STAGES = ("chunk_vectors", "window_vectors", "question_vectors")
REMOTE_SETTINGS = ("PETRICHOR_LLM_BASE_URL", "PETRICHOR_EMBED_BASE_URL", "PETRICHOR_VISION_BASE_URL")
"""Unset for the builds: the benchmark measures the offline chat model and the bundled embedder."""


@dataclass(frozen=True)
class Layout:
    root: Path

    @property
    def corpus(self) -> Path:
        return self.root / "corpus"

    @property
    def data(self) -> Path:
        return self.root / "data"

    @property
    def dagster_home(self) -> Path:
        return self.root / "dagster_home"

    @property
    def embed_cache(self) -> Path:
        return self.root / "embed_cache"


# ------------------------------------------------------------------------------------------ child


def count_corpus_scans() -> dict[str, float]:
    """Count and time the corpus scans in this process (`BuildContext.scan()`): one per build, since the
    build's runs work from the planning scan (`builder.scan_handoff`)."""
    import threading

    from petrichor_pipeline.builder import context

    stats = {"calls": 0, "seconds": 0.0}
    lock = threading.Lock()
    original = context.scan_corpus

    def counted(corpus_dir: Path, **kw: Any):
        started = time.perf_counter()
        try:
            return original(corpus_dir, **kw)
        finally:
            with lock:
                stats["calls"] += 1
                stats["seconds"] += time.perf_counter() - started

    context.scan_corpus = counted
    return stats


def child_build(layout: Layout, result_file: Path) -> None:
    """One `petrichor build` in this process; writes its summary, usage per article, wall time and peak RSS."""
    import logging

    from petrichor_pipeline.resources import build_context
    from petrichor_pipeline.runner import run_build

    logging.getLogger("dagster").setLevel(logging.ERROR)
    scans = count_corpus_scans()
    load_before = os.getloadavg()
    started = time.perf_counter()
    ctx = build_context(str(layout.data), str(layout.corpus), False)
    summary = run_build(ctx)
    wall = time.perf_counter() - started
    doc = summary.to_json()
    doc["warnings"] = doc["warnings"][:5]
    result = {
        "summary": doc,
        "warning_count": len(summary.warnings),
        "wall_s": wall,
        "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
        "calls_by_article": {aid: n for run in summary.runs for aid, n in run.calls_by_article.items()},
        "calls_total": summary.model_calls,
        "load": [load_before, os.getloadavg()],
        "corpus_scans": scans,
    }
    result_file.write_text(json.dumps(result), encoding="utf-8")


# ------------------------------------------------------------------------------------------ parent


def run_child(layout: Layout, embed: str, name: str) -> dict[str, Any]:
    env = {k: v for k, v in os.environ.items() if k not in REMOTE_SETTINGS}
    env.update(
        DAGSTER_HOME=str(layout.dagster_home),
        PETRICHOR_EMBED=embed,
        PETRICHOR_EMBED_CACHE=str(layout.embed_cache),
        PETRICHOR_DATA=str(layout.data),
        PETRICHOR_CORPUS=str(layout.corpus),
    )
    result_file = layout.root / f"result-{name}.json"
    cmd = [sys.executable, __file__, "--workdir", str(layout.root), "--child", str(result_file)]
    started = time.perf_counter()
    subprocess.run(cmd, env=env, check=True, cwd=REPO)
    result = json.loads(result_file.read_text(encoding="utf-8"))
    result["process_s"] = time.perf_counter() - started
    if result["summary"]["failed_run"]:
        raise SystemExit(f"{name} build failed: {result['summary']['failed_run']} {result['summary']['errors'][:3]}")
    print(f"  {name}: {result['process_s']:.1f} s", flush=True)
    return result


def content_hashes(layout: Layout, article_ids: set[str] | None = None) -> set[str]:
    """Content hashes of the texts a build embeds (chunks and their child windows; the offline model's
    questions are not searched, so not embedded), of `article_ids` if given."""
    from petrichor_core.config import BUCKETS
    from petrichor_core.contract.schemas import SCHEMAS
    from petrichor_pipeline.builder.warehouse import Warehouse

    wh = Warehouse(layout.data / "warehouse")
    out: set[str] = set()
    for asset in ("chunks", "chunk_windows"):
        table = wh.read_all_buckets(asset, BUCKETS, SCHEMAS[asset]).select(["article_id", "content_hash"])
        for aid, h in zip(table.column("article_id").to_pylist(), table.column("content_hash").to_pylist()):
            if article_ids is None or aid in article_ids:
                out.add(h)
    return out


def prepare(layout: Layout, articles: int, seed: int) -> list[Path]:
    for path in (layout.corpus, layout.data, layout.dagster_home, layout.embed_cache):
        shutil.rmtree(path, ignore_errors=True)
    layout.dagster_home.mkdir(parents=True)
    (layout.dagster_home / "dagster.yaml").write_text("telemetry:\n  enabled: false\n", encoding="utf-8")
    return write_corpus(layout.corpus, articles, seed)


def stage_rows(results: dict[str, dict[str, Any]]) -> list[tuple[str, list[float]]]:
    names: list[str] = []
    for r in results.values():
        names += [s for s in r["summary"]["stages"] if s not in names]
    rows = [(s, [r["summary"]["stages"].get(s, {}).get("seconds", 0.0) for r in results.values()]) for s in names]
    rows.append(
        ("other (Dagster runs, scan, I/O)", [r["wall_s"] - sum(v["seconds"] for v in r["summary"]["stages"].values()) for r in results.values()])
    )
    rows.append(("run_build wall", [r["wall_s"] for r in results.values()]))
    rows.append(("process wall (with imports)", [r["process_s"] for r in results.values()]))
    rows.append(("incl. the corpus scan", [r.get("corpus_scans", {}).get("seconds", 0.0) for r in results.values()]))
    return rows


def report(args: argparse.Namespace, corpus_mb: float, results: dict[str, dict[str, Any]], check: dict[str, Any]) -> None:
    cores = os.cpu_count() or 1
    full = results["full"]
    print()
    print(
        f"os.cpu_count() = {cores}; articles = {args.articles} ({corpus_mb:.1f} MB); embedding {args.embed}; "
        f"changed fraction {args.changed_fraction} ({check['changed']} articles); corpus scans per build: "
        + ", ".join(f"{name} {r.get('corpus_scans', {}).get('calls', 0)}" for name, r in results.items())
    )
    header = f"{'build':<12} {'wall s':>8} {'articles/s':>10} {'peak RSS MB':>11} {'buckets run':>11} {'built':>6} {'model calls':>11} {'embedded':>8} {'load avg (1 min) before/after':>30}"
    print(header)
    print("-" * len(header))
    for name, r in results.items():
        s = r["summary"]
        rate = f"{s['articles']['total'] / r['wall_s']:.2f}" if name == "full" else "-"
        load = f"{r['load'][0][0]:.2f} / {r['load'][1][0]:.2f}"
        print(
            f"{name:<12} {r['wall_s']:>8.1f} {rate:>10} {r['peak_rss_mb']:>11.0f} {len(s['partitions']['materialized']):>11} "
            f"{s['stages'].get('chunks', {}).get('articles_built', 0):>6} {s['model_calls']:>11} {s['embedded_texts']:>8} {load:>30}"
        )
    print(
        "built: articles the chunks stage rebuilt; buckets run: buckets the one Dagster bucket run covered (plus one publish run when anything changed)"
    )
    print()
    header = f"{'stage seconds':<34}" + "".join(f"{name:>12}" for name in results)
    print(header)
    print("-" * len(header))
    for stage, values in stage_rows(results):
        print(f"{stage:<34}" + "".join(f"{v:>12.1f}" for v in values))
    print()
    embed_s = sum(full["summary"]["stages"].get(s, {}).get("seconds", 0.0) for s in EMBED_STAGES)
    if args.embed == "on":
        texts = full["summary"]["embedded_texts"]
        print(
            f"embedding share of the full build: {embed_s:.1f} s of {full['wall_s']:.1f} s "
            f"({100 * embed_s / full['wall_s']:.0f} %), {texts} texts, {texts / embed_s if embed_s else 0:.1f} texts/s"
        )
    same = results["no-change"]["wall_s"] / full["wall_s"]
    print(f"no-change / full wall time: {100 * same:.2f} % (goal <= 3 %: {'met' if same <= 0.03 else 'NOT met'})")
    incr = results["incremental"]
    ratio = incr["wall_s"] / full["wall_s"]
    print(f"incremental / full wall time: {100 * ratio:.2f} % (goal < 5 %: {'met' if ratio < 0.05 else 'NOT met'})")
    print(
        f"incremental model calls: {incr['calls_total']} = {check['calls_changed']} for edited articles + "
        f"{check['calls_unchanged']} for unchanged ones (goal 0) + {check['calls_unattributed']} unattributed; "
        f"the full build spent {check['calls_changed_full']} on the same articles before the edit"
    )
    print(
        f"incremental embedded texts: {incr['summary']['embedded_texts']}; needed (new chunk, window and question texts of "
        f"edited articles): {check['needed_embeddings'] if args.embed == 'on' else 0}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--articles", type=int, default=1000)
    parser.add_argument("--embed", choices=("on", "off"), default="on")
    parser.add_argument("--changed-fraction", type=float, default=0.01)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--workdir", type=Path, help="kept afterwards; default: a temporary folder")
    parser.add_argument("--child", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()

    if args.child:
        child_build(Layout(args.workdir.resolve()), args.child)
        return

    with tempfile.TemporaryDirectory(prefix="petrichor-build-bench-") as tmp:
        layout = Layout((args.workdir or Path(tmp)).resolve())
        layout.root.mkdir(parents=True, exist_ok=True)
        started = time.perf_counter()
        paths = prepare(layout, args.articles, args.seed)
        corpus_mb = sum(p.stat().st_size for p in paths) / 1e6
        print(f"generated {len(paths)} articles ({corpus_mb:.1f} MB) in {time.perf_counter() - started:.1f} s under {layout.root}", flush=True)

        results = {"full": run_child(layout, args.embed, "full")}
        results["no-change"] = run_child(layout, args.embed, "no-change")
        before = content_hashes(layout)
        changed = change_articles(paths, args.changed_fraction, args.seed)
        results["incremental"] = run_child(layout, args.embed, "incremental")

        from petrichor_pipeline.sources.identity import article_id_of

        changed_ids = {article_id_of(p.relative_to(layout.corpus).as_posix()) for p in changed}
        calls = results["incremental"]["calls_by_article"]
        full_calls = results["full"]["calls_by_article"]
        check = {
            "changed": len(changed),
            "calls_changed": sum(n for aid, n in calls.items() if aid in changed_ids),
            "calls_unchanged": sum(n for aid, n in calls.items() if aid not in changed_ids),
            "calls_unattributed": results["incremental"]["calls_total"] - sum(calls.values()),
            "calls_changed_full": sum(n for aid, n in full_calls.items() if aid in changed_ids),
            "needed_embeddings": len(content_hashes(layout, changed_ids) - before),
        }
        report(args, corpus_mb, results, check)
        (layout.root / "report.json").write_text(
            json.dumps(
                {"args": vars(args) | {"workdir": str(layout.root), "child": None}, "results": results, "check": check}, indent=1, default=str
            ),
            encoding="utf-8",
        )


if __name__ == "__main__":
    main()
