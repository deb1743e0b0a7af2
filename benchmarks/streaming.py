"""Time to the first and to the last token of a streamed answer, beside the same answer not streamed.

    python benchmarks/streaming.py [--data DIR] [--rounds 3]

Builds the bundled corpus into a temporary folder (or uses `--data`, a `PETRICHOR_DATA` holding it), starts
`petrichor serve` on 127.0.0.1 with the offline agent, and asks each question of `agent.py`'s bundled set,
in turn, through `POST /v1/chat/completions` with `stream: true`, the same without, and
`POST /api/assistant/chat`. Streamed: first token = the first content delta, last = `data: [DONE]`; not
streamed, both are the whole reply. Goal: the streamed last token no more than 10 % after the non-streamed one.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

import httpx

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from benchmarks.agent import BUNDLED_QUESTIONS  # noqa: E402
from tests.conftest import CORPUS, EMBED_CACHE, run_cli_build  # noqa: E402
from tests.serving.live import petrichor_serve, serving_env  # noqa: E402

AUTH = {"Authorization": "Bearer acme-key"}


def _streamed(client: httpx.Client, question: str) -> tuple[float, float]:
    started = time.perf_counter()
    first = None
    body = {"model": "petrichor", "messages": [{"role": "user", "content": question}], "stream": True}
    with client.stream("POST", "/v1/chat/completions", json=body, headers=AUTH) as res:
        res.raise_for_status()
        for line in res.iter_lines():
            if not line.startswith("data: "):
                continue
            if line == "data: [DONE]":
                break
            delta = json.loads(line[6:])["choices"][0]["delta"]
            if first is None and delta.get("content"):
                first = time.perf_counter() - started
    last = time.perf_counter() - started
    return first if first is not None else last, last


def _whole(client: httpx.Client, path: str, body: dict) -> tuple[float, float]:
    started = time.perf_counter()
    res = client.post(path, json=body, headers=AUTH)
    res.raise_for_status()
    took = time.perf_counter() - started
    return took, took


def measure(url: str, rounds: int) -> dict[str, dict[str, float]]:
    paths = {
        "/v1/chat/completions stream": lambda c, q: _streamed(c, q),
        "/v1/chat/completions": lambda c, q: _whole(c, "/v1/chat/completions", {"model": "petrichor", "messages": [{"role": "user", "content": q}]}),
        "/api/assistant/chat": lambda c, q: _whole(c, "/api/assistant/chat", {"question": q}),
    }
    times: dict[str, dict[str, list[float]]] = {name: {"first": [], "last": []} for name in paths}
    with httpx.Client(base_url=url, timeout=300) as client:
        for q in BUNDLED_QUESTIONS:  # warm-up: embedder, jieba, page cache
            _whole(client, "/api/assistant/chat", {"question": q})
        for _ in range(rounds):
            for q in BUNDLED_QUESTIONS:
                for name, fn in paths.items():  # interleaved, so load drifts hit all three alike
                    first, last = fn(client, q)
                    times[name]["first"].append(first * 1000)
                    times[name]["last"].append(last * 1000)
    return {
        name: {
            "first_p50_ms": statistics.median(t["first"]),
            "last_p50_ms": statistics.median(t["last"]),
            "last_mean_ms": statistics.fmean(t["last"]),
            "n": len(t["last"]),
        }
        for name, t in times.items()
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, help="a PETRICHOR_DATA that holds the built bundled corpus")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="petrichor-streaming-") as tmp:
        work = Path(tmp)
        data = args.data
        if data is None:
            data = work / "data"
            summary = run_cli_build(data, CORPUS, work / "dagster_home")
            if summary["_exit_code"] != 0:
                print(json.dumps(summary, indent=2), file=sys.stderr)
                return 1
        load_before = os.getloadavg()[0]
        with petrichor_serve(serving_env(data, CORPUS, EMBED_CACHE, work)) as server:
            figures = measure(server.url, args.rounds)
        load_after = os.getloadavg()[0]
    stream, whole = figures["/v1/chat/completions stream"], figures["/v1/chat/completions"]
    ratio = stream["last_mean_ms"] / whole["last_mean_ms"]
    if args.json:
        print(
            json.dumps(
                {"figures": figures, "stream_last_over_whole": ratio, "cpu_count": os.cpu_count(), "load": [load_before, load_after]}, indent=2
            )
        )
        return 0
    print(
        f"os.cpu_count() = {os.cpu_count()}, 1-minute load average {load_before:.1f} → {load_after:.1f}, {len(BUNDLED_QUESTIONS)} questions × {args.rounds} rounds"
    )
    print(f"{'path':<30} {'first token p50':>16} {'last token p50':>15} {'last token mean':>16}")
    for name, f in figures.items():
        print(f"{name:<30} {f['first_p50_ms']:>13.1f} ms {f['last_p50_ms']:>12.1f} ms {f['last_mean_ms']:>13.1f} ms")
    print(f"streamed last token / non-streamed reply (means): {ratio:.3f} (goal ≤ 1.10)")
    return 0 if ratio <= 1.10 else 1


if __name__ == "__main__":
    sys.exit(main())
