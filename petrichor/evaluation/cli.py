"""`petrichor eval --dataset DIR [--json] [--answers] [--plot DIR] [--limit N] [--no-ablation]
[--unanswerable-from OTHER_SET_DIR ...] [--unanswerable-sample N] [--signals FILE] [--leave-gold-out N]
[--followups N]`.

With `--answers`, not-found is measured on in-domain unanswerable questions (the set's own questions without
gold: MultiHop-RAG's null queries, `rgb_zh_reject`'s unanswerable half; with `--leave-gold-out N`, about N
questions whose gold evidence a corpus variant lacks) and off-topic ones (a sample of each
`--unanswerable-from` set's questions, asked of this set's corpus); `--followups N` asks N follow-ups built
from the set's questions with the first question and its answer as history, and a set's `followups.jsonl`.

The set is built into `<PETRICHOR_DATA>/eval/<set name>/` (the leave-gold-out variant into
`<set name>.leave-gold-out/`); vectors are cached in `PETRICHOR_EMBED_CACHE`, by default
`<PETRICHOR_DATA>/eval/embedding_cache/`, shared by every set and every run, so a variant embeds only what changed.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

from rich.console import Console


def _count(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be 0 or more: {value}")
    return value


def add_arguments(p: argparse.ArgumentParser) -> None:
    """The `petrichor eval` options."""
    p.add_argument("--dataset", required=True, help="a set folder: qa.jsonl with docs.jsonl, or with source.json naming a corpus folder")
    p.add_argument("--json", action="store_true")
    p.add_argument("--answers", action="store_true", help="also run the agent and score answers")
    p.add_argument("--plot", metavar="DIR", help="write Recall@K charts as PNG into DIR")
    p.add_argument("--limit", type=int, default=0, help="evaluate only the first N questions")
    p.add_argument("--no-ablation", action="store_true")
    p.add_argument(
        "--unanswerable-from",
        action="append",
        default=[],
        metavar="DIR",
        help="with --answers: ask a sample of another set's questions of this set's corpus, as off-topic unanswerable questions (repeatable)",
    )
    p.add_argument("--unanswerable-sample", type=int, default=50, metavar="N", help="questions taken from each --unanswerable-from set (default 50)")
    p.add_argument("--signals", metavar="FILE", help="with --answers: write Petrichor's answerability signals per question as JSON lines")
    p.add_argument(
        "--leave-gold-out",
        type=_count,
        default=0,
        metavar="N",
        help="with --answers: evaluate on a corpus variant without the gold passage (cmrc: the paragraph; rhdh: "
        "the gold sections, the rest of the guide kept) of about N questions, evenly spread, which must then "
        'get "not found" (in-domain); built in <PETRICHOR_DATA>/eval/<set>.leave-gold-out/',
    )
    p.add_argument(
        "--followups",
        type=_count,
        default=0,
        metavar="N",
        help="with --answers: ask N follow-ups built from pairs of the set's questions on the same evidence "
        "(the second's subject replaced by it/that/它 or dropped), with the first question and its answer "
        "as history; a set's followups.jsonl is asked whenever --answers is given",
    )
    p.add_argument(
        "--variants",
        metavar="A,B",
        help="run only these ablation variants (comma-separated names of petrichor/evaluation/ablation.py), e.g. learned_ranker",
    )
    p.add_argument(
        "--ranker-features",
        metavar="FILE",
        help="also write every rerank pool of the set's questions and of generated questions of its build, each "
        "candidate's feature row and label, as JSON lines: the learned ranker's training data (ranker_fit)",
    )


def run_eval_command(args: argparse.Namespace) -> int:
    from petrichor.evaluation.dataset import corpus_source, has_set_files
    from petrichor.evaluation.harness import EvalConfig, run_eval
    from petrichor.evaluation.leave_gold_out import SUFFIX
    from petrichor.evaluation.report import print_report, write_plots
    from petrichor_core.config import load_settings

    err = Console(stderr=True)
    dataset_dir = Path(args.dataset)
    others = [Path(p) for p in getattr(args, "unanswerable_from", None) or ()]
    for directory in [dataset_dir, *others]:
        if not has_set_files(directory):
            err.print(f"petrichor eval: {directory} needs qa.jsonl and docs.jsonl (or source.json naming a corpus folder)")
            return 2
    leave_out, followups = getattr(args, "leave_gold_out", 0) or 0, getattr(args, "followups", 0) or 0
    if (others or getattr(args, "signals", None) or leave_out or followups) and not args.answers:
        err.print("petrichor eval: --unanswerable-from, --signals, --leave-gold-out and --followups need --answers")
        return 2
    try:
        from_corpus = not (dataset_dir / "docs.jsonl").is_file() and corpus_source(dataset_dir) is not None
    except ValueError as exc:
        err.print(f"petrichor eval: {exc}")
        return 2
    if leave_out and from_corpus:
        err.print(f"petrichor eval: --leave-gold-out needs a set with docs.jsonl; {dataset_dir} is built from its corpus folder as it is")
        return 2
    settings = load_settings()
    eval_root = settings.data_dir / "eval"
    if not os.environ.get("PETRICHOR_EMBED_CACHE"):
        os.environ["PETRICHOR_EMBED_CACHE"] = str((eval_root / "embedding_cache").resolve())
    config = EvalConfig(
        dataset_dir=dataset_dir,
        root=eval_root / (dataset_dir.resolve().name + (SUFFIX if leave_out else "")),
        embed_cache_dir=Path(os.environ["PETRICHOR_EMBED_CACHE"]),
        limit=max(0, args.limit or 0),
        answers=args.answers,
        ablation=not args.no_ablation,
        unanswerable_from=tuple(others),
        unanswerable_sample=max(0, getattr(args, "unanswerable_sample", 50)),
        signals_path=Path(args.signals) if getattr(args, "signals", None) else None,
        leave_gold_out=leave_out,
        followups=followups,
        ranker_features=Path(args.ranker_features) if getattr(args, "ranker_features", None) else None,
        variants=tuple(v.strip() for v in (getattr(args, "variants", None) or "").split(",") if v.strip()),
    )
    report = run_eval(config, log=lambda message: err.print(message, highlight=False))
    if args.plot:
        for path in write_plots(report, Path(args.plot)):
            err.print(f"wrote {path}")
    if args.json:
        json.dump(report, sys.stdout, ensure_ascii=False, indent=2)
        sys.stdout.write("\n")
    else:
        print_report(report, Console(highlight=False))
    return 0
