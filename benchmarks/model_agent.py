"""The agent with a real chat model, beside a naive RAG answer from the same model in the same run (not in CI).

    python benchmarks/model_agent.py --gguf /path/qwen2.5-coder-1.5b-instruct-q4_k_m.gguf \\
        --llama-python /path/llama-venv/bin/python --bundled-data /tmp/bundled \\
        --eval-data /path/to/data/eval --eval ../shared/eval --out /tmp/model_agent.json

It starts llama-cpp-python's OpenAI-compatible server (`python -m llama_cpp.server`, its own process group,
killed at the end) on the GGUF, behind a small forwarding proxy on 127.0.0.1 that caps each reply's tokens
(`--max-tokens`, when the request sets none) and counts the calls and tokens of each question. For each set it
serves a copy of the set's built snapshot with `petrichor serve` configured to use that endpoint as its chat
model, and asks each sampled question twice:

- **agent**: `POST /api/assistant/chat`; the model drives Search / Outline / Read through function calling,
  the server checks its citations (the trace at `/api/traces/{id}` says how many model turns it took);
- **naive RAG**: the naive hybrid of the eval harness (`petrichor.evaluation.hybrid`: 512-code-point windows,
  bm25s + dense, RRF) retrieves the top 5 windows, and the same model answers once over them with the ANSWER
  prompt, asked to cite (`OpenAIChatModel.answer`, structured output negotiated as for the agent); a
  citation counts when its quote is verbatim in the window it names.

Per set and method: the share of answerable questions answered with ≥ 1 verified citation, answer-holds-gold
(`petrichor.evaluation.answers.answer_contains`, where the set has short answers), not-found on unanswerable
questions (MultiHop-RAG's `null_query`, and questions of another set asked of this corpus), the agent's stop
reasons (fallbacks to the offline answer and why), model calls per answer and p50 latency.

The sets' snapshots are built beforehand (`petrichor eval` builds them under `<eval-data>/<set>`); the
bundled corpus is built with `PETRICHOR_DATA=<bundled-data> petrichor build`. The eval data is read from
`--eval` (default `../shared/eval`) and never copied. A real model on a small CPU answers at a few tokens
a second: keep the samples small (`--bundled`, `--per-set`, `--unanswerable`) and `--deadline-min` bounds
the whole run (questions not started by then are skipped and the report says so).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

SETS = ("rhdh_docs_en", "cmrc2018_zh", "multihop_rag_en", "rgb_zh")
CROSS_FROM = {"rhdh_docs_en": "cmrc2018_zh", "cmrc2018_zh": "rhdh_docs_en", "multihop_rag_en": "rgb_zh", "rgb_zh": "multihop_rag_en"}
"""Whose questions are asked of each set's corpus as unanswerable ones (another language, another domain)."""
BUNDLED = (
    ("What is the default RRF constant?", ("60",)),
    ("快照默认保留多少个版本？", ("5",)),
    ("Which command starts the HTTP service?", ("petrichor serve",)),
)
BUNDLED_UNANSWERABLE = ("What is the capital of Mongolia?", "谁发明了电话？")
NAIVE_TOP = 5
FALLBACKS = ("offline_fallback", "model_error_fallback", "budget", "no_progress")


def log(msg: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_http(url: str, timeout_s: float, proc: subprocess.Popen, ok=(200,)) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise SystemExit(f"{proc.args[0]} exited with {proc.returncode} before {url} answered")
        try:
            with urllib.request.urlopen(url, timeout=5) as r:
                if r.status in ok:
                    return
        except (urllib.error.URLError, OSError):
            pass
        time.sleep(1.0)
    raise SystemExit(f"{url} did not answer within {timeout_s:.0f}s")


def start(cmd: list[str], env: dict[str, str], log_path: Path) -> subprocess.Popen:
    fh = log_path.open("ab")
    return subprocess.Popen(cmd, env=env, stdout=fh, stderr=subprocess.STDOUT, start_new_session=True)


def stop(proc: subprocess.Popen | None) -> None:
    """Ends the process group the benchmark started (`start_new_session`), by its id."""
    if proc is None or proc.poll() is not None:
        return
    try:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(timeout=15)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=5)
    except ProcessLookupError:
        pass


class Proxy:
    """Forwards `/v1/*` to the model server, adding `max_tokens` where a chat request has none, and records
    each call: whether it offered tools, its response_format type, tokens in and out, and seconds."""

    def __init__(self, upstream: str, max_tokens: int):
        self.upstream = upstream.rstrip("/")
        self.max_tokens = max_tokens
        self.calls: list[dict[str, Any]] = []
        self._lock = threading.Lock()
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def _forward(self, body: bytes | None) -> None:
                started = time.perf_counter()
                record: dict[str, Any] = {"path": self.path}
                if body is not None and self.path.endswith("/chat/completions"):
                    req = json.loads(body or b"{}")
                    req.setdefault("max_tokens", proxy.max_tokens)
                    record.update(
                        tools=bool(req.get("tools")),
                        response_format=(req.get("response_format") or {}).get("type"),
                        tool_choice=req.get("tool_choice"),
                    )
                    body = json.dumps(req).encode()
                request = urllib.request.Request(
                    proxy.upstream + self.path, data=body, method=self.command, headers={"content-type": "application/json"}
                )
                try:
                    with urllib.request.urlopen(request, timeout=3600) as r:
                        status, data = r.status, r.read()
                except urllib.error.HTTPError as e:
                    status, data = e.code, e.read()
                record.update(status=status, seconds=round(time.perf_counter() - started, 2))
                try:
                    usage = json.loads(data).get("usage") or {}
                    record.update(prompt_tokens=usage.get("prompt_tokens"), completion_tokens=usage.get("completion_tokens"))
                except (ValueError, AttributeError):
                    pass
                if "tools" in record or status != 200:
                    with proxy._lock:
                        proxy.calls.append(record)
                try:
                    self.send_response(status)
                    self.send_header("content-type", "application/json")
                    self.send_header("content-length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):
                    pass

            def do_POST(self) -> None:  # noqa: N802
                self._forward(self.rfile.read(int(self.headers.get("content-length") or 0)))

            def do_GET(self) -> None:  # noqa: N802
                self._forward(None)

            def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
                return

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}/v1"

    def mark(self) -> int:
        with self._lock:
            return len(self.calls)

    def since(self, mark: int) -> list[dict[str, Any]]:
        with self._lock:
            return list(self.calls[mark:])


def post(url: str, payload: dict[str, Any], timeout_s: float) -> dict[str, Any]:
    req = urllib.request.Request(url, data=json.dumps(payload).encode(), method="POST", headers={"content-type": "application/json"})
    with urllib.request.urlopen(req, timeout=timeout_s) as r:
        return json.loads(r.read())


def get(url: str, timeout_s: float = 30) -> dict[str, Any]:
    with urllib.request.urlopen(url, timeout=timeout_s) as r:
        return json.loads(r.read())


def spread(items: list[Any], n: int) -> list[Any]:
    if n <= 0 or not items:
        return []
    step = max(1, len(items) // n)
    return items[::step][:n]


def bundled_docs() -> list[Any]:
    from petrichor.evaluation.dataset import EvalDoc

    root = REPO / "data" / "corpus"
    return [
        EvalDoc(str(p.relative_to(root)), p.stem, p.read_text(encoding="utf-8")) for p in sorted(root.rglob("*.md")) if not p.name.startswith("_")
    ]


def sample(args: argparse.Namespace) -> dict[str, dict[str, Any]]:
    """Per set: its data dir, docs (for the naive windows) and questions `{qid, question, answers, lang, kind}`."""
    from petrichor.evaluation.dataset import cross_questions, load_dataset
    from petrichor_core.text.lang import has_cjk

    out: dict[str, dict[str, Any]] = {}
    if args.bundled > 0 or args.unanswerable > 0:
        qs = [
            {"qid": f"b{i}", "question": q, "answers": list(a), "lang": "zh" if has_cjk(q) else "en", "kind": "answerable"}
            for i, (q, a) in enumerate(BUNDLED[: args.bundled], 1)
        ]
        qs += [
            {"qid": f"u{i}", "question": q, "answers": [], "lang": "zh" if has_cjk(q) else "en", "kind": "unanswerable"}
            for i, q in enumerate(BUNDLED_UNANSWERABLE[: args.unanswerable], 1)
        ]
        out["bundled"] = {"data": args.bundled_data, "docs": bundled_docs(), "questions": qs}
    for name in args.sets:
        ds = load_dataset(args.eval / name)
        answerable = [q for q in ds.questions if q.answers_all] or list(ds.questions)
        picked = spread(answerable, args.per_set)
        unanswerable = list(ds.unanswerable) or list(cross_questions(args.eval / CROSS_FROM[name], max(args.unanswerable, 1) * 5))
        picked_u = spread(unanswerable, args.unanswerable)
        qs = [{"qid": q.qid, "question": q.question, "answers": list(q.answers_all), "lang": q.lang, "kind": "answerable"} for q in picked]
        qs += [
            {"qid": q.qid, "question": q.question, "answers": [], "lang": q.lang, "kind": q.subset if q.subset.startswith("cross:") else "null_query"}
            for q in picked_u
        ]
        out[name] = {"data": args.eval_data / name, "docs": list(ds.docs), "questions": qs}
    return out


def naive_windows(sets: dict[str, dict[str, Any]], cache_dir: Path) -> None:
    """The naive hybrid's top windows for every sampled question, computed before the model server starts."""
    from petrichor.evaluation.baselines import NaiveVectorRetriever, QueryEmbeddings, chunk_corpus, embed_chunks
    from petrichor.evaluation.hybrid import NaiveHybridRetriever
    from petrichor_core.config import load_settings
    from petrichor_core.models.providers import make_embedder

    embedder = make_embedder(load_settings())
    for name, s in sets.items():
        started = time.perf_counter()
        windows = chunk_corpus(s["docs"])
        vectors = embed_chunks(windows, embedder, cache_dir)
        hybrid = NaiveHybridRetriever(windows, NaiveVectorRetriever(windows, vectors, QueryEmbeddings(embedder)))
        titles = {d.doc_id: d.title for d in s["docs"]}
        for q in s["questions"]:
            items = [i for i in hybrid.retrieve(q["question"]).items if i.is_chunk][:NAIVE_TOP]
            q["naive"] = [
                {"doc_id": i.doc_id, "title": titles.get(i.doc_id or "", ""), "heading_path": list(i.heading_path), "text": i.text} for i in items
            ]
        log(f"{name}: {len(windows)} naive windows, top {NAIVE_TOP} for {len(s['questions'])} questions in {time.perf_counter() - started:.0f}s")


def naive_answer(chat: Any, q: dict[str, Any]) -> dict[str, Any]:
    from petrichor_core.models.protocols import CallContext, EvidenceText, ModelError

    evidence = [EvidenceText(f"e{n}", w["title"], tuple(w["heading_path"]), w["text"]) for n, w in enumerate(q["naive"], 1)]
    started = time.perf_counter()
    reply: dict[str, Any] = {"answer": "", "citations": []}
    error = None
    try:
        reply = chat.answer(q["question"], evidence, CallContext(kb_id="bench"))
    except ModelError as exc:
        error = str(exc)[:300]
    seconds = time.perf_counter() - started
    by_id = {e.evidence_id: e for e in evidence}
    verified = [
        c
        for c in reply.get("citations") or []
        if isinstance(c, dict)
        and isinstance(c.get("quote"), str)
        and c["quote"].strip()
        and (e := by_id.get(str(c.get("evidence_id", "")))) is not None
        and c["quote"] in e.content
    ]
    return {
        "answer": str(reply.get("answer") or ""),
        "cited": len(reply.get("citations") or []),
        "verified": len(verified),
        "error": error,
        "seconds": round(seconds, 1),
    }


def agent_answer(base: str, q: dict[str, Any], timeout_s: float) -> dict[str, Any]:
    started = time.perf_counter()
    try:
        doc = post(f"{base}/api/assistant/chat", {"question": q["question"]}, timeout_s)
    except (urllib.error.URLError, OSError, TimeoutError) as exc:
        return {
            "answer": "",
            "verified": 0,
            "stop_reason": f"http_error: {exc}"[:200],
            "seconds": round(time.perf_counter() - started, 1),
            "model_turns": None,
        }
    seconds = time.perf_counter() - started
    trace = get(f"{base}/api/traces/{doc['trace_id']}")
    turns = [s for s in trace["steps"] if s["tool"] == "answer"]
    return {
        "answer": doc["answer"],
        "verified": len(doc["citations"]),
        "stop_reason": doc["stop_reason"],
        "seconds": round(seconds, 1),
        "model_turns": len(turns),
        "tools": [s["tool"] for s in trace["steps"] if s["tool"] != "answer"],
        "turn_errors": [s["error"] for s in trace["steps"] if s.get("error")],
        "notes": trace.get("notes", [])[-4:],
    }


def summarise(rows: list[dict[str, Any]], method: str) -> dict[str, Any]:
    answerable = [r for r in rows if r["kind"] == "answerable"]
    unanswerable = [r for r in rows if r["kind"] != "answerable"]
    gold = [r for r in answerable if r["answers"]]
    m = [r[method] for r in rows]

    def share(values: list[bool]) -> float | None:
        return round(sum(values) / len(values), 2) if values else None

    out = {
        "answerable": len(answerable),
        "unanswerable": len(unanswerable),
        "cited": share([r[method]["verified"] > 0 for r in answerable]),
        "holds_gold": share([r[method]["holds_gold"] for r in gold]),
        "gold_questions": len(gold),
        "not_found_unanswerable": share([r[method]["verified"] == 0 for r in unanswerable]),
        "calls_per_answer": round(statistics.mean(x["calls"] for x in m), 2) if m else None,
        "p50_s": round(statistics.median(x["seconds"] for x in m), 1) if m else None,
    }
    if method == "agent":
        reasons: dict[str, int] = {}
        for x in m:
            reasons[x["stop_reason"]] = reasons.get(x["stop_reason"], 0) + 1
        out["stop_reasons"] = reasons
        out["fallbacks"] = sum(n for r, n in reasons.items() if r in FALLBACKS)
    return out


def serve_set(args: argparse.Namespace, name: str, s: dict[str, Any], proxy: Proxy, chat: Any, work: Path, deadline: float) -> list[dict[str, Any]]:
    from petrichor.evaluation.answers import answer_contains

    data = work / name
    shutil.copytree(s["data"], data, ignore=shutil.ignore_patterns("dagster_home", "corpus", "cache"))
    port = free_port()
    env = {
        **os.environ,
        "PETRICHOR_DATA": str(data),
        "PETRICHOR_LLM_BASE_URL": proxy.base_url,
        "PETRICHOR_LLM_MODEL": "qwen",
        "PETRICHOR_LLM_API_KEY": "unused",
        "PETRICHOR_LLM_TIMEOUT": str(args.call_timeout),
        "PETRICHOR_LLM_MAX_RETRIES": "0",
        "PETRICHOR_RELOAD_INTERVAL": "3600",
    }
    env.pop("PETRICHOR_API_KEYS", None)
    app = start(
        [str(Path(sys.executable).parent / "petrichor"), "serve", "--host", "127.0.0.1", "--port", str(port)], env, work / f"{name}.serve.log"
    )
    rows = []
    try:
        base = f"http://127.0.0.1:{port}"
        wait_http(f"{base}/healthz", 600, app)
        for q in s["questions"]:
            if time.monotonic() > deadline:
                log(f"{name}: deadline reached, {q['qid']} and later questions skipped")
                break
            mark = proxy.mark()
            a = agent_answer(base, q, args.question_timeout)
            a["calls"] = len(proxy.since(mark))
            a["tokens"] = [(c.get("prompt_tokens"), c.get("completion_tokens")) for c in proxy.since(mark)]
            mark = proxy.mark()
            n = naive_answer(chat, q)
            n["calls"] = len(proxy.since(mark))
            for x in (a, n):
                x["holds_gold"] = bool(q["answers"]) and answer_contains(x["answer"], q["answers"], q["lang"])
            row = {"set": name, **{k: q[k] for k in ("qid", "question", "answers", "kind")}, "agent": a, "naive_rag": n}
            rows.append(row)
            if args.out:
                with args.out.with_suffix(".rows.jsonl").open("a", encoding="utf-8") as fh:
                    fh.write(json.dumps(row, ensure_ascii=False) + "\n")
            log(
                f"{name} {q['qid']} ({q['kind']}): agent {a['stop_reason']} cited={a['verified']} gold={a['holds_gold']} turns={a['model_turns']} {a['seconds']}s | naive cited={n['verified']} gold={n['holds_gold']} {n['seconds']}s"
            )
    finally:
        stop(app)
        shutil.rmtree(data, ignore_errors=True)
    return rows


def markdown(report: dict[str, Any]) -> str:
    def pct(v: Any) -> str:
        return "–" if v is None else f"{v:.0%}"

    lines = [
        "| set | questions (ans. + unans.) | method | ≥ 1 verified citation | answer holds gold | not-found on unanswerable | fallbacks (why) | model calls / answer | p50 latency |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for name, s in report["sets"].items():
        a, n = s["agent"], s["naive_rag"]
        why = ", ".join(f"{r} {c}" for r, c in sorted(a["stop_reasons"].items()) if r in FALLBACKS) or "none"
        q = f"{a['answerable']} + {a['unanswerable']}"
        lines.append(
            f"| {name} | {q} | agent | {pct(a['cited'])} | {pct(a['holds_gold'])} | {pct(a['not_found_unanswerable'])} | {a['fallbacks']} ({why}) | {a['calls_per_answer']} | {a['p50_s']} s |"
        )
        lines.append(
            f"| | | naive RAG | {pct(n['cited'])} | {pct(n['holds_gold'])} | {pct(n['not_found_unanswerable'])} | – | {n['calls_per_answer']} | {n['p50_s']} s |"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--gguf", required=True, type=Path)
    parser.add_argument("--llama-python", required=True, help="a Python with llama-cpp-python[server] installed")
    parser.add_argument("--bundled-data", type=Path, required=True, help="PETRICHOR_DATA of the built bundled corpus")
    parser.add_argument("--eval-data", type=Path, required=True, help="folder holding each set's built data dir (<set>/snapshots/...)")
    parser.add_argument("--eval", type=Path, default=REPO.parent / "shared" / "eval", help="the eval sets (docs.jsonl, qa.jsonl)")
    parser.add_argument("--embed-cache", type=Path, default=None, help="vector cache for the naive windows (default: a temporary folder)")
    parser.add_argument("--sets", nargs="*", default=list(SETS))
    parser.add_argument("--bundled", type=int, default=2, help="answerable bundled-corpus questions")
    parser.add_argument("--per-set", type=int, default=2, help="answerable questions per dev set")
    parser.add_argument("--unanswerable", type=int, default=1, help="unanswerable questions per set")
    parser.add_argument("--n-ctx", type=int, default=8192)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--max-tokens", type=int, default=256, help="reply cap where a request sets none")
    parser.add_argument("--call-timeout", type=float, default=900.0, help="PETRICHOR_LLM_TIMEOUT: one model call")
    parser.add_argument("--question-timeout", type=float, default=1800.0)
    parser.add_argument("--deadline-min", type=float, default=50.0, help="no question starts after this many minutes")
    parser.add_argument("--out", type=Path, default=None, help="write the JSON report here (rewritten after every set)")
    args = parser.parse_args(argv)
    args.sets = [s for s in args.sets if s != "bundled"]

    started = time.monotonic()
    deadline = started + args.deadline_min * 60
    work = Path(tempfile.mkdtemp(prefix="model-agent-"))
    sets = sample(args)
    naive_windows(sets, args.embed_cache or work / "embedding_cache")

    from petrichor_core.config import ModelEndpoint
    from petrichor_core.models.chat import OpenAIChatModel

    llama_port = free_port()
    # No `--cache`: llama-cpp-python's prompt cache keeps each state with its logits (n_ctx × vocabulary
    # floats), and with it the server grew past 22 GB and was killed within two questions.
    llama = start(
        [
            args.llama_python,
            "-m",
            "llama_cpp.server",
            "--model",
            str(args.gguf),
            "--model_alias",
            "qwen",
            "--host",
            "127.0.0.1",
            "--port",
            str(llama_port),
            "--n_ctx",
            str(args.n_ctx),
            "--n_threads",
            str(args.threads),
            "--n_threads_batch",
            str(args.threads),
        ],
        dict(os.environ),
        work / "llama.log",
    )
    report: dict[str, Any] = {
        "gguf": args.gguf.name,
        "gguf_bytes": args.gguf.stat().st_size,
        "n_ctx": args.n_ctx,
        "threads": args.threads,
        "max_tokens": args.max_tokens,
        "cpu_count": os.cpu_count(),
        "sets": {},
        "rows": [],
    }
    try:
        wait_http(f"http://127.0.0.1:{llama_port}/v1/models", 600, llama)
        proxy = Proxy(f"http://127.0.0.1:{llama_port}", args.max_tokens)
        chat = OpenAIChatModel(ModelEndpoint(base_url=proxy.base_url, model="qwen", api_key="unused", timeout_s=args.call_timeout, max_retries=0))
        report["load_average_start"] = round(os.getloadavg()[0], 2)
        for name, s in sets.items():
            rows = serve_set(args, name, s, proxy, chat, work, deadline)
            report["rows"].extend(rows)
            if rows:
                report["sets"][name] = {"agent": summarise(rows, "agent"), "naive_rag": summarise(rows, "naive_rag")}
            report["response_format"] = chat.response_formats.known((proxy.base_url, "qwen"))
            report["minutes"] = round((time.monotonic() - started) / 60, 1)
            report["load_average_end"] = round(os.getloadavg()[0], 2)
            if args.out:
                args.out.write_text(json.dumps(report, ensure_ascii=False, indent=2), encoding="utf-8")
    finally:
        stop(llama)
        shutil.rmtree(work, ignore_errors=True)
    print(markdown(report))
    print(json.dumps({k: v for k, v in report.items() if k != "rows"}, ensure_ascii=False, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
