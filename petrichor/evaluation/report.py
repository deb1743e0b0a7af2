"""Present a report: rich tables for people, Recall@K charts as PNG files."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from petrichor.evaluation.scoring import CURVE_KS

BAR = "naive_hybrid"
"""The baseline every table sets Petrichor against, with the difference beside it."""
METHOD_ROWS = (
    ("doc", "recall@1"),
    ("doc", "recall@5"),
    ("doc", "recall@10"),
    ("doc", "mrr@10"),
    ("all_gold", "recall@5"),
    ("all_gold", "recall@10"),
    ("all_gold", "mrr@10"),
    ("all_gold", "passage_recall@5"),
    ("all_gold", "passage_recall@10"),
    ("all_gold", "questions"),
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
ANSWER_ROWS = (
    "questions",
    "exact_match",
    "f1",
    "answer_contains_gold",
    "short_answer_questions",
    "short_exact_match",
    "short_f1",
    "lead_ins",
    "wrong_lead_ins",
    "reference_questions",
    "reference_f1",
    "citation_precision",
    "citation_doc_precision",
    "citations_per_answer",
    "false_not_found",
)
"""`answer_contains_gold` is answer-holds-gold: the normalised answer contains a gold short answer."""
NOT_FOUND_FIRST = ("in_domain", "off_topic")
ANCHORS = (
    "short_exact_match / short_f1: the lead-in where the answer has one (lead_ins), else the answer text; "
    "Chinese scored as CMRC 2018's official script scores. Anchor: a BERT-base reader scores 65.5 EM / 84.5 F1 on "
    "CMRC 2018 dev. wrong_lead_ins: lead-ins that are not a gold short answer, over the questions with one."
)
ABLATION_COLUMNS = (
    ("doc", "recall@1", "doc R@1"),
    ("doc", "recall@5", "doc R@5"),
    ("doc", "recall@10", "doc R@10"),
    ("doc", "mrr@10", "doc MRR"),
    ("all_gold", "recall@5", "all R@5"),
    ("all_gold", "recall@10", "all R@10"),
    ("chunk", "recall@5", "chunk R@5"),
    ("chunk", "recall@10", "chunk R@10"),
    ("section", "recall@5", "sect. R@5"),
    ("section", "recall@10", "sect. R@10"),
    ("recall_ms", "p50", "ms p50"),
)
LEVEL_TITLES = {
    "doc": "document",
    "all_doc": "all gold documents",
    "passage": "passage (chunk)",
    "section": "section (chunk)",
}


def _fmt(value: Any, group: str = "") -> str:
    if value is None:
        return "–"
    if isinstance(value, float):
        return f"{value:.1f}" if group.endswith("_ms") or value >= 10 else f"{value:.3f}"
    return str(value)


def _get(block: dict[str, Any], group: str, key: str) -> Any:
    return (block.get(group) or {}).get(key)


def _difference(value: Any, bar: Any, group: str) -> str:
    """Petrichor − naive_hybrid; for times also the ratio, the form the latency target takes."""
    if not isinstance(value, (int, float)) or not isinstance(bar, (int, float)) or isinstance(value, bool):
        return "–"
    if group.endswith("_ms"):
        return f"{value - bar:+.1f} (×{value / bar:.2f})" if bar else f"{value - bar:+.1f}"
    if isinstance(value, int) and isinstance(bar, int):
        return "" if value == bar else f"{value - bar:+d}"
    return f"{value - bar:+.3f}"


def _ordered(methods: dict[str, Any]) -> list[str]:
    """Petrichor, the bar, then every other method in report order."""
    first = [m for m in ("petrichor", BAR) if m in methods]
    return first + [m for m in methods if m not in first]


def comparison_table(title: str, methods: dict[str, dict[str, Any]], rows: Any = METHOD_ROWS) -> Table:
    """One column per method, Petrichor first with its difference from naive_hybrid right after the bar."""
    names = _ordered(methods)
    with_bar = "petrichor" in methods and BAR in methods
    table = Table(title=title)
    table.add_column("metric")
    for name in names:
        table.add_column(name, justify="right")
        if with_bar and name == BAR:
            table.add_column(f"petrichor − {BAR}", justify="right")
    for group, key in rows:
        values = {n: _get(methods[n], group, key) for n in names}
        if all(v is None for v in values.values()):
            continue
        cells = []
        for name in names:
            cells.append(_fmt(values[name], group))
            if with_bar and name == BAR:
                cells.append(_difference(values["petrichor"], values[BAR], group))
        table.add_row(f"{group} {key}", *cells)
    return table


def print_report(report: dict[str, Any], console: Console) -> None:
    methods = report["methods"]
    snap = report["snapshot"]
    skipped = report.get("skipped_questions") or 0
    title = f"{report['dataset']}: {report['questions']} questions"
    title += f" ({skipped} without gold skipped)" if skipped else ""
    console.print(comparison_table(f"{title}, snapshot {snap['version']}", methods))
    answers = {n: m["answer"] for n, m in methods.items() if m.get("answer")}
    if report.get("answer_baseline"):
        answers[report["answer_baseline"]["name"]] = report["answer_baseline"]
    if answers.get("petrichor", {}).get("without_gate"):
        answers["petrichor without gate"] = answers["petrichor"]["without_gate"]
    if answers:
        blocks = {n: {"answer": _flat_answer(a)} for n, a in answers.items()}
        kinds = list(dict.fromkeys(k for a in answers.values() for k in a.get("not_found") or {}))
        kinds = [k for k in NOT_FOUND_FIRST if k in kinds] + [k for k in kinds if k not in NOT_FOUND_FIRST]
        rows = [("answer", key) for key in ANSWER_ROWS] + [("answer", f"not_found {k}") for k in kinds]
        unanswerable = report.get("unanswerable_questions") or {}
        counts = ", ".join(f"{k} {v}" for k, v in unanswerable.items() if v)
        console.print(comparison_table(f"answers (unanswerable questions: {counts or 'none'})", blocks, rows))
        console.print(ANCHORS)
        print_followups(answers, console)
    for subset in dict.fromkeys(s for per_method in (report.get("subsets") or {}).values() for s in per_method):
        blocks = {n: per[subset] for n, per in report["subsets"].items() if subset in per}
        count = next(iter(blocks.values())).get("questions")
        console.print(comparison_table(f"subset {subset}: {count} questions", blocks))
    console.print(
        f"articles {snap['articles']}, chunks {snap['chunks']}, questions {snap['questions']}, "
        f"naive chunks {snap['naive_chunks']}; build {snap['build_seconds']}s, run {report['seconds']}s"
    )
    if report.get("ablation"):
        print_ablation(report["ablation"], console, methods)


def print_followups(answers: dict[str, Any], console: Console) -> None:
    """Follow-up hit per source of follow-ups: Petrichor with history, without it, and the answer baseline."""
    sources = list(dict.fromkeys(s for a in answers.values() for s in a.get("followups") or {}))
    for source in sources:
        blocks: dict[str, Any] = {}
        for name, a in answers.items():
            block = (a.get("followups") or {}).get(source)
            if block:
                blocks[name] = {"followup": block}
                if block.get("without_history"):
                    blocks[f"{name} without history"] = {"followup": block["without_history"]}
        rows = [("followup", k) for k in ("questions", "hit", "not_found")]
        console.print(comparison_table(f"follow-ups ({source})", blocks, rows))


def _flat_answer(answer: dict[str, Any]) -> dict[str, Any]:
    """An answer block with its not-found rates as `not_found <kind>` rows."""
    out = {k: v for k, v in answer.items() if k not in ("not_found", "without_gate", "followups")}
    for kind, block in (answer.get("not_found") or {}).items():
        out[f"not_found {kind}"] = block.get("rate")
    return out


def print_ablation(ablation: dict[str, Any], console: Console, methods: dict[str, Any] | None = None) -> None:
    """One row per variant; under each figure its change against the full pipeline (`·`: none), then
    against naive_hybrid (`h`); the baselines' own rows close the table."""
    methods = methods or {}
    bar = methods.get(BAR)
    baselines = {n: methods[n] for n in _ordered(methods) if n != "petrichor"}
    rows = {**ablation, **baselines}
    columns = [c for c in ABLATION_COLUMNS if any(_get(v, c[0], c[1]) is not None for v in rows.values())]
    table = Table(title="ablation (petrichor); under each figure: − full (· unchanged), then h: − naive_hybrid")
    table.add_column("variant", no_wrap=True)
    for _, _, header in columns:
        table.add_column(header, justify="right", no_wrap=True)
    full = ablation["full"]
    for name, block in rows.items():
        cells = []
        for group, key, _ in columns:
            value, base = _get(block, group, key), _get(full, group, key)
            cell = _fmt(value, group)
            if name in ablation and group != "recall_ms" and value is not None:
                if name != "full" and base is not None:
                    cell += f"\n{value - base:+.3f}" if value != base else "\n·"
                hybrid = _get(bar, group, key) if bar else None
                if hybrid is not None:
                    cell += f"\nh {value - hybrid:+.3f}"
            cells.append(cell)
        table.add_row(name, *cells, end_section=name == next(reversed(ablation)))
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
