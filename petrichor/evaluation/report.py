"""Present a report: rich tables for people, Recall@K charts as PNG files."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from petrichor.evaluation.scoring import CURVE_KS

METHOD_ROWS = (
    ("doc", "recall@1"),
    ("doc", "recall@5"),
    ("doc", "recall@10"),
    ("doc", "mrr@10"),
    ("chunk", "recall@5"),
    ("chunk", "recall@10"),
    ("chunk", "reachable"),
    ("section", "recall@5"),
    ("section", "recall@10"),
    ("latency_ms", "p50"),
    ("latency_ms", "p95"),
    ("recall_ms", "p50"),
    ("recall_ms", "p95"),
)
ANSWER_ROWS = ("exact_match", "f1", "citation_precision", "citation_doc_precision", "citations_per_answer")
ABLATION_COLUMNS = (
    ("doc", "recall@1", "doc R@1"),
    ("doc", "recall@5", "doc R@5"),
    ("doc", "recall@10", "doc R@10"),
    ("doc", "mrr@10", "doc MRR"),
    ("chunk", "recall@5", "chunk R@5"),
    ("chunk", "recall@10", "chunk R@10"),
    ("section", "recall@5", "sect. R@5"),
    ("section", "recall@10", "sect. R@10"),
    ("recall_ms", "p50", "ms p50"),
)
LEVEL_TITLES = {"doc": "document", "passage": "passage (chunk)", "section": "section (chunk)"}


def _fmt(value: Any, group: str = "") -> str:
    if value is None:
        return "–"
    if isinstance(value, float):
        return f"{value:.1f}" if group.endswith("_ms") or value >= 10 else f"{value:.3f}"
    return str(value)


def _get(block: dict[str, Any], group: str, key: str) -> Any:
    return (block.get(group) or {}).get(key)


def print_report(report: dict[str, Any], console: Console) -> None:
    methods = report["methods"]
    snap = report["snapshot"]
    table = Table(title=f"{report['dataset']}: {report['questions']} questions, snapshot {snap['version']}")
    table.add_column("metric")
    for name in methods:
        table.add_column(name, justify="right")
    for group, key in METHOD_ROWS:
        values = [_get(m, group, key) for m in methods.values()]
        if any(v is not None for v in values):
            table.add_row(f"{group} {key}", *(_fmt(v, group) for v in values))
    for key in ANSWER_ROWS:
        values = [_get(m, "answer", key) for m in methods.values()]
        if any(v is not None for v in values):
            table.add_row(f"answer {key}", *map(_fmt, values))
    console.print(table)
    console.print(
        f"articles {snap['articles']}, chunks {snap['chunks']}, questions {snap['questions']}, "
        f"naive chunks {snap['naive_chunks']}; build {snap['build_seconds']}s, run {report['seconds']}s"
    )
    if report.get("ablation"):
        print_ablation(report["ablation"], console)


def print_ablation(ablation: dict[str, Any], console: Console) -> None:
    """One row per variant; each figure with its change against the full pipeline underneath."""
    columns = [c for c in ABLATION_COLUMNS if any(_get(v, c[0], c[1]) is not None for v in ablation.values())]
    table = Table(title="ablation (petrichor)")
    table.add_column("variant", no_wrap=True)
    for _, _, header in columns:
        table.add_column(header, justify="right", no_wrap=True)
    full = ablation["full"]
    for name, block in ablation.items():
        cells = []
        for group, key, _ in columns:
            value, base = _get(block, group, key), _get(full, group, key)
            cell = _fmt(value, group)
            if name != "full" and group != "recall_ms" and value is not None and base is not None and value != base:
                cell += f"\n{value - base:+.3f}"
            cells.append(cell)
        table.add_row(name, *cells)
    console.print(table)


def write_plots(report: dict[str, Any], directory: Path) -> list[Path]:
    """One PNG per gold level: Recall@1..10 of every method."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    directory.mkdir(parents=True, exist_ok=True)
    written = []
    levels = dict.fromkeys(level for curves in report["curves"].values() for level in curves)
    for level in levels:
        fig, ax = plt.subplots(figsize=(6, 4), dpi=120)
        for method, curves in report["curves"].items():
            if level in curves:
                ax.plot(CURVE_KS, curves[level], marker="o", label=method)
        ax.set_xlabel("K")
        ax.set_ylabel("Recall@K")
        ax.set_ylim(0, 1)
        ax.set_xticks(CURVE_KS)
        ax.grid(True, alpha=0.3)
        ax.set_title(f"{report['dataset']}: {LEVEL_TITLES[level]} Recall@K")
        ax.legend()
        path = directory / f"{report['dataset']}-{level}-recall.png"
        fig.tight_layout()
        fig.savefig(path)
        plt.close(fig)
        written.append(path)
    return written
