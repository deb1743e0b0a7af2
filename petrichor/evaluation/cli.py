"""`petrichor eval --dataset DIR [--json] [--answers] [--plot DIR] [--limit N] [--no-ablation]
[--unanswerable-from OTHER_SET_DIR ...] [--unanswerable-sample N] [--signals FILE]`.

With `--answers`, the set's own questions without gold (MultiHop-RAG's null queries) and a sample of each
`--unanswerable-from` set's questions, asked of this set's corpus, measure the not-found rate.

The set is built into `<PETRICHOR_DATA>/eval/<set name>/`; vectors are cached in `PETRICHOR_EMBED_CACHE`,
by default `<PETRICHOR_DATA>/eval/embedding_cache/`, shared by every set and every run.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

from rich.console import Console


def run_eval_command(args: argparse.Namespace) -> int:
    from petrichor_pipeline.config import load_settings
    from petrichor.evaluation.harness import EvalConfig, run_eval
    from petrichor.evaluation.report import print_report, write_plots

    err = Console(stderr=True)
    dataset_dir = Path(args.dataset)
    others = [Path(p) for p in getattr(args, "unanswerable_from", None) or ()]
    for directory in [dataset_dir, *others]:
        if not (directory / "docs.jsonl").is_file() or not (directory / "qa.jsonl").is_file():
            err.print(f"petrichor eval: {directory} needs docs.jsonl and qa.jsonl")
            return 2
    if (others or getattr(args, "signals", None)) and not args.answers:
        err.print("petrichor eval: --unanswerable-from and --signals need --answers")
        return 2
    settings = load_settings()
    eval_root = settings.data_dir / "eval"
    if not os.environ.get("PETRICHOR_EMBED_CACHE"):
        os.environ["PETRICHOR_EMBED_CACHE"] = str((eval_root / "embedding_cache").resolve())
    config = EvalConfig(
        dataset_dir=dataset_dir,
        root=eval_root / dataset_dir.resolve().name,
        embed_cache_dir=Path(os.environ["PETRICHOR_EMBED_CACHE"]),
        limit=max(0, args.limit or 0),
        answers=args.answers,
        ablation=not args.no_ablation,
        unanswerable_from=tuple(others),
        unanswerable_sample=max(0, getattr(args, "unanswerable_sample", 50)),
        signals_path=Path(args.signals) if getattr(args, "signals", None) else None,
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
