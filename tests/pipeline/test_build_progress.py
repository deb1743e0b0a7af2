"""Progress on every long build: the embedding steps count their texts, the CLI shows the counts on stderr
(plain lines at least every `PROGRESS_LINE_S` outside a terminal) and the Dagster run logs them."""

from __future__ import annotations

import io
import json
import re
import time

import pytest
from dagster import DagsterInstance
from rich.console import Console

from petrichor import build_progress
from petrichor.build_progress import BuildProgress
from petrichor.cli import main
from petrichor_pipeline.builder.context import StageListener, StepCount, StepCounter
from petrichor_pipeline.resources import build_context
from petrichor_pipeline.runner import run_build
from tests.conftest import isolated_env
from tests.pipeline.tiny_corpus import write_corpus

COUNT_LINE = re.compile(r"chunk_vectors: embedding (\d+)/(\d+) texts")


def test_a_count_line_says_counts_rate_and_eta():
    assert StepCount("chunk_vectors", "embedding", 1240, 2963, 110.0).line() == "chunk_vectors: embedding 1,240/2,963 texts, 11/s, ETA 3m"
    assert StepCount("window_vectors", "embedding", 3, 9, 2.0).line() == "window_vectors: embedding 3/9 texts, 1.5/s, ETA 4s"
    assert StepCount("chunk_vectors", "embedding", 0, 64, 0.0).line() == "chunk_vectors: embedding 0/64 texts"


def test_a_count_line_reads_back_from_a_run_log():
    line = StepCount("window_vectors", "embedding", 1240, 2963, 110.0).line()
    assert StepCount.parse(line) == StepCount("window_vectors", "embedding", 1240, 2963, 0.0)
    assert StepCount.parse("chunk_vectors: embedding 0/64 texts") == StepCount("chunk_vectors", "embedding", 0, 64, 0.0)
    assert StepCount.parse('Started execution of run for "__ASSET_JOB".') is None


def test_the_counter_sums_buckets_hears_every_change_and_logs_a_bounded_number():
    heard: list[StepCount] = []
    logged: list[str] = []
    counter = StepCounter(StageListener(counts=heard.append), logged.append)
    with counter.counting("chunk_vectors", "embedding", 100) as first, counter.counting("chunk_vectors", "embedding", 50) as second:
        for _ in range(100):
            first(1)
        second(20)  # then its call fails: the 30 it never did leave the total
    assert (heard[-1].done, heard[-1].total) == (120, 120)
    assert len(heard) == 1 + 1 + 100 + 1 + 1
    assert len(logged) <= 3 and logged[-1].startswith("chunk_vectors: embedding 120/120 texts")


def test_outside_a_terminal_a_line_comes_at_least_every_interval(monkeypatch, capsys):
    monkeypatch.setattr(build_progress, "PROGRESS_LINE_S", 0.05)
    with BuildProgress(None, live=False) as progress:  # type: ignore[arg-type]
        progress.on_stage("chunks", 16, 16)
        time.sleep(0.2)  # scanning or publishing: no stage runs, a heartbeat still comes
        progress.on_count(StepCount("chunk_vectors", "embedding", 64, 300, 4.0))
        time.sleep(0.2)
    lines = capsys.readouterr().err.splitlines()
    assert lines[0] == "chunks: 16/16 buckets done, 0s into the build"
    assert any(line.startswith("build: ") and line.endswith("s elapsed") for line in lines)
    assert sum(line.startswith("chunk_vectors: embedding 64/300 texts, 16/s, ETA 15s (0s into the build)") for line in lines) >= 2


def test_in_a_terminal_the_lines_are_redrawn_as_the_build_goes_on(monkeypatch):
    monkeypatch.setattr(build_progress, "LIVE_REFRESH_S", 0.05)
    screen = io.StringIO()
    with BuildProgress(Console(file=screen, force_terminal=True, width=160), live=True) as progress:
        progress.on_count(StepCount("chunk_vectors", "embedding", 64, 300, 4.0))
        time.sleep(1.2)
    shown = screen.getvalue()
    assert "chunk_vectors: embedding 64/300 texts, 16/s, ETA 15s (0s into the build)" in shown
    assert "chunk_vectors: embedding 64/300 texts, 16/s, ETA 15s (1s into the build)" in shown  # redrawn
    assert "build: 1s elapsed" in shown


def _fresh_build_env(tmp_path, monkeypatch):
    corpus = write_corpus(tmp_path / "corpus")
    home = tmp_path / "home"
    home.mkdir()
    (home / "dagster.yaml").write_text("telemetry:\n  enabled: false\n", encoding="utf-8")
    isolated_env(monkeypatch, tmp_path / "data", corpus, home)
    monkeypatch.setenv("PETRICHOR_EMBED_CACHE", str(tmp_path / "vectors"))  # nothing cached: every text is embedded
    return corpus, home


@pytest.mark.slow
def test_a_build_outside_a_terminal_shows_embedding_counts_on_stderr_and_in_its_run(tmp_path, monkeypatch, capsys):
    _, home = _fresh_build_env(tmp_path, monkeypatch)
    monkeypatch.setattr(build_progress, "PROGRESS_LINE_S", 0.1)
    assert main(["build", "--json"]) == 0
    captured = capsys.readouterr()
    doc = json.loads(captured.out)  # stdout is the one JSON document
    assert doc["published"] and doc["embedded_texts"] > 0
    counts = [tuple(map(int, m.groups())) for m in map(COUNT_LINE.match, captured.err.splitlines()) if m]
    assert counts and all(done <= total for done, total in counts), captured.err
    with DagsterInstance.from_config(str(home)) as instance:
        logged = [e.user_message for e in instance.all_logs(doc_run_id(instance)) if e.dagster_event is None]
    assert any(COUNT_LINE.match(message) for message in logged), logged


def doc_run_id(instance: DagsterInstance) -> str:
    """The build's bucket run: the one that ran `chunk_vectors`."""
    for run in instance.get_runs():
        if "chunk_vectors" in {e.step_key for e in instance.all_logs(run.run_id) if e.step_key}:
            return run.run_id
    raise AssertionError("no run embedded chunks")


@pytest.mark.slow
def test_a_multiprocess_build_is_followed_while_its_steps_run(tmp_path, monkeypatch):
    """Its steps run in processes of their own: the build hears their counts and finished buckets from the
    run's event log while the run goes on, not when it ends."""
    corpus, home = _fresh_build_env(tmp_path, monkeypatch)
    stages: list[tuple[str, int, int]] = []
    counts: list[tuple[float, StepCount]] = []
    with DagsterInstance.from_config(str(home)) as instance:
        summary = run_build(
            build_context(str(tmp_path / "data"), str(corpus)),
            instance=instance,
            parallel=True,
            on_progress=lambda *stage: stages.append(stage),
            on_count=lambda c: counts.append((time.time(), c)),
        )
        assert summary.ok and summary.published, summary.to_json()
        ended = instance.get_run_stats(summary.runs[0].run_id).end_time
    vectors = [c for _, c in counts if c.asset == "chunk_vectors"]
    assert vectors and vectors[-1].done == vectors[-1].total > 0
    assert any(heard < ended for heard, _ in counts)  # heard while the run went on
    stale = len(summary.materialized)
    assert [s for s in stages if s[0] == "chunk_vectors"] == [("chunk_vectors", n, stale) for n in range(1, stale + 1)]
