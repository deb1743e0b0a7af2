"""`petrichor`: build, search, ask, serve, mcp, eval. `--json` prints one JSON document on stdout; logs go to stderr."""

from __future__ import annotations

import argparse
import json
import logging
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from rich.console import Console
from rich.table import Table

if TYPE_CHECKING:
    from pydantic import BaseModel

    from petrichor_core.config import Settings
    from petrichor_pipeline.builder.issues import FileError

Request = TypeVar("Request", bound="BaseModel")

err = Console(stderr=True)
out = Console(highlight=False)


def _dagster_home(settings: Settings) -> None:
    """Point Dagster at the instance of the build's data folder unless the caller chose one (`DAGSTER_HOME`).

    Partition state belongs to a data folder: the repository's `./dagster_home` is the instance of its default
    data folder `./data` (what the README's `dagster dev` command opens), any other data folder keeps its own in
    `<data>/dagster_home`. One instance shared by two data folders made each build of one find the buckets
    recorded from the other's files, and rebuild all 16."""
    if os.environ.get("DAGSTER_HOME"):
        home = Path(os.environ["DAGSTER_HOME"]).resolve()  # Dagster refuses a relative DAGSTER_HOME
        home.mkdir(parents=True, exist_ok=True)
        os.environ["DAGSTER_HOME"] = str(home)
        return
    from petrichor_pipeline.instance import write_instance_yaml

    home = Path("dagster_home")
    if not ((home / "dagster.yaml").exists() and settings.data_dir.resolve() == Path("data").resolve()):
        home = settings.data_dir / "dagster_home"
        home.mkdir(parents=True, exist_ok=True)
        write_instance_yaml(home)
    os.environ["DAGSTER_HOME"] = str(home.resolve())


def cmd_build(args: argparse.Namespace) -> int:
    from petrichor_core.config import load_settings
    from petrichor_pipeline.builder.preflight import build_folders, unwritable, write_problems

    settings = load_settings()  # once: the build's runs get these (`resources.RunSettings`)
    problems = write_problems(build_folders(settings))
    if not problems:
        try:
            _dagster_home(settings)
        except OSError as exc:
            problems = [unwritable(exc.filename or os.environ.get("DAGSTER_HOME", "dagster_home"), exc)]
    if problems:
        return _build_refused(args, problems)
    logging.getLogger("dagster").setLevel(logging.ERROR)
    from petrichor.build_progress import BuildProgress
    from petrichor_core.config import PublishOptions
    from petrichor_pipeline.builder.context import BuildContext
    from petrichor_pipeline.runner import run_build

    publish = PublishOptions(allow_empty=args.allow_empty, allow_shrink=args.allow_shrink)
    ctx = BuildContext(settings=settings, full_rebuild=args.full, publish=publish)
    with BuildProgress(err, live=sys.stderr.isatty()) as progress:
        summary = run_build(ctx, on_progress=progress.on_stage, on_count=progress.on_count, lock_wait_s=max(args.wait, 0.0))
    doc = summary.to_json()
    if args.json:
        print(json.dumps(doc, ensure_ascii=False, indent=2))
    elif summary.refused:
        serving = f"; {summary.snapshot_version} keeps serving" if summary.snapshot_version else ""
        err.print(f"[red]build refused[/red]: {summary.failed_run}; nothing was published{serving}", highlight=False, soft_wrap=True)
    else:
        table = Table(title="petrichor build")
        for col in ("stage", "rows", "articles built", "articles skipped", "seconds"):
            table.add_column(col, justify="right" if col != "stage" else "left")
        for stage, s in summary.stages.items():
            table.add_row(stage, str(s["rows"]), str(s["articles_built"]), str(s["articles_skipped"]), f"{s['seconds']:.2f}")
        out.print(table)
        a = summary.articles
        out.print(f"articles: {a['total']} total, {a['built']} built, {a['skipped']} skipped, {a['failed']} failed")
        out.print(f"partitions: {len(summary.materialized)} materialized, {len(summary.skipped)} skipped")
        out.print(f"model calls: {summary.model_calls}, embedded texts: {summary.embedded_texts}")
        for e in summary.errors:
            out.print(f"[red]error[/red] {e.path}: {e.reason}")
        for w in summary.warnings[:20]:
            out.print(f"[yellow]warning[/yellow] {w}")
        state = "published" if summary.published else "unchanged"
        failed = f" [red]— {a['failed']} file(s) failed, listed above[/red]" if a["failed"] else ""
        out.print(f"snapshot: {summary.snapshot_version} ({state}) in {summary.seconds:.1f}s{failed}")
        if summary.failed_run:
            out.print(f"[red]build failed[/red]: {summary.failed_run}; the previous snapshot keeps serving")
    return 0 if summary.ok else 1


def _build_refused(args: argparse.Namespace, problems: list[FileError]) -> int:
    """A build that cannot start: the summary's shape with the folders in `errors`, exit 1, no traceback."""
    from petrichor_pipeline.runner import BuildSummary

    first = problems[0]
    summary = BuildSummary(errors=problems, failed_run=f"cannot write to {first.path}: {first.reason}")
    if args.json:
        print(json.dumps(summary.to_json(), ensure_ascii=False, indent=2))
    else:
        for p in problems:
            err.print(f"[red]error[/red] {p.path}: {p.reason}")
        err.print("[red]build not started[/red]: nothing was written; the previous snapshot keeps serving")
    return 1


def _serving_dir(settings, *, watch: bool = False) -> Path:
    """The local folder serving reads: the data dir, or the verified mirror of the object store's snapshots
    (synced now; followed in the background when `watch`)."""
    if settings.object_store is None:
        return settings.data_dir
    from petrichor_core.object_store import ObjectStore, SnapshotMirror

    mirror = SnapshotMirror(ObjectStore(settings.object_store), settings.replica_dir, keep=settings.keep_snapshots)
    try:
        mirror.sync()
    except Exception as exc:  # the store unreachable or a bad snapshot: serve the local copy, retry on the next poll
        err.print(f"[yellow]warning[/yellow] cannot mirror {settings.object_store.uri}: {type(exc).__name__}: {exc}")
    if watch:
        mirror.watch(settings.reload_interval_s)
    return settings.replica_dir


def _open_snapshot():
    from petrichor_core.config import load_settings
    from petrichor_core.models.providers import make_answer_model, make_embedder
    from petrichor_serving.snapshot import SnapshotStore

    settings = load_settings()
    chat = make_answer_model(settings)
    embedder = make_embedder(settings) if settings.embed_enabled else None
    store = SnapshotStore(_serving_dir(settings), embed_fingerprint=embedder.fingerprint if embedder else None)
    store.refresh()
    if store.current is None:
        status = store.status()
        reason = status["refused"]["error"] if status["refused"] else "no snapshot published yet"
        where = settings.object_store.uri if settings.object_store else settings.data_dir
        raise SystemExit(f"petrichor: cannot open a snapshot in {where}: {reason}; run `petrichor build`")
    return settings, store.current, embedder, chat


def _request(args: argparse.Namespace, model: type[Request], **fields: Any) -> Request:
    """The command's input as the HTTP endpoint's request model takes it (`petrichor_serving.schema`): the
    same limits and the same one-line error, given as a usage error (exit 2); fields left None are absent."""
    from pydantic import ValidationError

    from petrichor_serving.errors import validation_message

    try:
        return model.model_validate({name: value for name, value in fields.items() if value is not None})
    except ValidationError as exc:
        usage: argparse.ArgumentParser = args.usage
        usage.error(validation_message(exc))


def _scope(kb_ids: list[str] | None):
    from petrichor_serving.auth import LOCAL

    return LOCAL.scope(kb_ids=kb_ids or None)


def cmd_search(args: argparse.Namespace) -> int:
    from petrichor_serving.agent import tools
    from petrichor_serving.schema import SearchRequest

    request = _request(args, SearchRequest, query=args.query, kb_ids=args.kb, limit=args.limit)
    _, snap, embedder, _ = _open_snapshot()
    doc = tools.search(snap, _scope(request.kb_ids), request.query, embedder=embedder, limit=request.limit)
    if args.json:
        print(json.dumps(doc, ensure_ascii=False, indent=2))
        return 0
    table = Table(title=f"{request.query}  (snapshot {snap.version})")
    for col in ("#", "score", "title", "heading path", "routes", "locator"):
        table.add_column(col)
    for i, c in enumerate(doc["candidates"], 1):
        loc = c.get("chunk_id") or c.get("page_key") or c.get("node_key") or ""
        table.add_row(str(i), f"{c['score']:.4f}", c["title"], " > ".join(c["heading_path"]), ",".join(c["routes"]), loc)
    out.print(table)
    return 0


def cmd_ask(args: argparse.Namespace) -> int:
    from petrichor_serving.agent import loop
    from petrichor_serving.schema import ChatRequest

    request = _request(args, ChatRequest, question=args.question, kb_ids=args.kb)
    _, snap, embedder, chat = _open_snapshot()
    doc = loop.answer(snap, request.question, _scope(request.kb_ids), chat=chat, embedder=embedder)
    trace = doc.pop("trace")
    if args.json:
        print(json.dumps({**doc, "trace": trace} if args.trace else doc, ensure_ascii=False, indent=2))
        return 0
    if args.trace:
        err.print(
            f"plan ({trace['question_class']}): {' → '.join(trace['plan']) or 'no tools'}; stop: {trace['stop_reason']}; {trace['total_ms']:.0f} ms"
        )
        for step in trace["steps"]:
            shown = ", ".join(step["locators"][:6]) + (" …" if len(step["locators"]) > 6 else "")
            err.print(
                f"  {step['tool']}({json.dumps(step['arguments'], ensure_ascii=False)[:120]}) {step['ms']:.0f} ms → {shown or step.get('error') or '-'}"
            )
        for note in trace["notes"]:
            err.print(f"  note: {note}")
    out.print(f"[bold]Q:[/bold] {request.question}\n")
    out.print(doc["answer"] + "\n")
    for c in doc["citations"]:
        path = " > ".join(c["heading_path"]) or c["title"]
        out.print(
            f"[{c['marker']}] {c['title']} › {path}  ({c['chunk_id']}, chars {c['quote_start']}–{c['quote_end']}, version {c['article_version'][:12]})"
        )
        out.print(f"    “{c['quote']}”")
    return 0


def _services(settings):
    """What `serve` and `mcp` serve: the snapshot store, the key file and the model clients from `settings`;
    over an object store, the local mirror it keeps following."""
    from petrichor_core.models.providers import make_answer_model, make_embedder
    from petrichor_serving.services import ServingSettings, build_services

    serving = ServingSettings(
        data_dir=_serving_dir(settings, watch=True), api_keys_file=settings.api_keys_file, reload_interval_s=settings.reload_interval_s
    )
    embedder = make_embedder(settings) if settings.embed_enabled else None
    return build_services(serving, chat=make_answer_model(settings), embedder=embedder)


def cmd_serve(args: argparse.Namespace) -> int:
    import uvicorn

    from petrichor_core.config import load_settings
    from petrichor_serving.app import create_app
    from petrichor_serving.http_deadlines import HeaderDeadlineProtocol, ReadDeadlines

    settings = load_settings()
    host = args.host
    if settings.api_keys_file is None:
        if host not in ("127.0.0.1", "localhost", "::1"):
            err.print(f"no API key file configured (PETRICHOR_API_KEYS): refusing to listen on {host}; using 127.0.0.1")
            host = "127.0.0.1"
        err.print("single-user local mode: no API key file, every tenant is readable, listening on 127.0.0.1 only")
    given = {"header_s": args.header_timeout, "body_s": args.body_timeout}
    deadlines = ReadDeadlines(**{k: v for k, v in given.items() if v is not None})
    app = create_app(_services(settings), deadlines=deadlines)
    uvicorn.run(app, host=host, port=args.port, log_level="info", http=HeaderDeadlineProtocol.with_deadline(deadlines.header_s))
    return 0


def cmd_mcp(args: argparse.Namespace) -> int:
    """The MCP tools over stdio, scoped by `PETRICHOR_API_KEY` (stdout carries the protocol only)."""
    import anyio

    from petrichor_core.config import load_settings
    from petrichor_serving.mcp_server import build_server, key_principal

    settings = load_settings()
    services = _services(settings)
    try:
        principal = key_principal(services, settings.api_key)
    except PermissionError as exc:
        raise SystemExit(f"petrichor mcp: {exc}") from None
    services.store.refresh()
    services.store.watch(settings.reload_interval_s)
    try:
        anyio.run(build_server(services, lambda _ctx: principal).run_stdio_async)
    finally:
        services.store.stop()
    return 0


def cmd_eval(args: argparse.Namespace) -> int:
    from petrichor.evaluation.cli import run_eval_command

    return run_eval_command(args)


def _positive(raw: str) -> int:
    """An argparse type: a whole number of at least 1, else a usage error instead of a traceback."""
    try:
        value = int(raw)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {raw[:40]!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError("must be at least 1")
    return value


def _seconds(raw: str) -> float:
    """An argparse type: a positive number of seconds."""
    try:
        value = float(raw)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {raw[:40]!r}") from None
    if not value > 0:
        raise argparse.ArgumentTypeError("must be more than 0")
    return value


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="petrichor", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser("build", help="materialize what is stale and publish a snapshot")
    p.add_argument("--full", action="store_true", help="rebuild every bucket, ignoring the skip logic")
    p.add_argument(
        "--wait",
        type=float,
        default=0.0,
        metavar="SECONDS",
        help="one build runs per data folder: wait this long for a running one to finish (default 0: exit at once with a message)",
    )
    p.add_argument("--allow-empty", action="store_true", help="publish even when the corpus folder is missing or holds no articles")
    p.add_argument(
        "--allow-shrink",
        action="store_true",
        help="publish even when the corpus would drop more than half of the live snapshot's articles",
    )
    p.add_argument("--json", action="store_true", help="print the summary as one JSON document on stdout (progress stays on stderr)")
    p.set_defaults(fn=cmd_build)

    p = sub.add_parser("search", help="hybrid search over the current snapshot")
    p.add_argument("query")
    p.add_argument("--limit", type=_positive, help="results to list (default: the search's own, 10)")
    p.add_argument("--kb", action="append", help="limit to a knowledge base (repeatable)")
    p.add_argument("--json", action="store_true")
    p.set_defaults(fn=cmd_search, usage=p)

    p = sub.add_parser("ask", help="answer a question with citations")
    p.add_argument("question")
    p.add_argument("--kb", action="append", help="limit to a knowledge base (repeatable)")
    p.add_argument("--json", action="store_true")
    p.add_argument("--trace", action="store_true", help="show the plan the agent took (stderr; inside --json as `trace`)")
    p.set_defaults(fn=cmd_ask, usage=p)

    p = sub.add_parser("serve", help="serve the HTTP API (uvicorn + Starlette)")
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, default=8000)
    p.add_argument("--header-timeout", type=_seconds, help="seconds a client may take to send a request's headers, then 408 and closed (default 10)")
    p.add_argument("--body-timeout", type=_seconds, help="seconds a client may take to send a request's body, then 408 and closed (default 30)")
    p.set_defaults(fn=cmd_serve)

    p = sub.add_parser("mcp", help="serve the knowledge tools over MCP on stdio (key: PETRICHOR_API_KEY)")
    p.set_defaults(fn=cmd_mcp)

    from petrichor.evaluation.cli import add_arguments as add_eval_arguments

    p = sub.add_parser("eval", help="evaluate retrieval and answers on a dataset (docs.jsonl + qa.jsonl)")
    add_eval_arguments(p)
    p.set_defaults(fn=cmd_eval)

    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr, format="%(levelname)s %(name)s: %(message)s")
    from petrichor_core.models.providers import UnknownProviderError

    try:
        return int(args.fn(args) or 0)
    except UnknownProviderError as exc:
        raise SystemExit(f"petrichor: {exc}") from None


if __name__ == "__main__":
    sys.exit(main())
