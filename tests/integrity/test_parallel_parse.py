"""A snapshot load reads `.npy` headers on several threads and imports pandera on another; each builds a Python
AST, and Python 3.11 fails two threads that do so at once ("AST constructor recursion depth mismatch",
CPython gh-106905), which once refused a good snapshot. `PARSER_LOCK` keeps them to one at a time."""

from __future__ import annotations

import subprocess
import sys

# A fresh process (pandera not yet imported) counts the threads inside `ast.parse` at once, each call held
# open for 5 ms so that threads able to overlap do: eight threads load `.npy` files while the main thread
# validates a table, whose first call imports pandera.
_SCRIPT = """
import ast, sys, threading, time
from pathlib import Path

import numpy as np
import pyarrow as pa

inside, most = [0], [0]
counter = threading.Lock()
real_parse = ast.parse

def parse(*args, **kwargs):
    with counter:
        inside[0] += 1
        most[0] = max(most[0], inside[0])
    try:
        time.sleep(0.005)
        return real_parse(*args, **kwargs)
    finally:
        with counter:
            inside[0] -= 1

ast.parse = parse
from petrichor_core.contract.files import load_npy, save_npy
from petrichor_core.contract.schemas import SCHEMAS, validate_table

path = Path(sys.argv[1]) / "m.npy"
save_npy(str(path), np.arange(12, dtype=np.float32).reshape(3, 4))
stop = threading.Event()
loaded = []

def reader():
    while not stop.is_set():
        loaded.append(float(load_npy(path, mmap=True).sum()) + float(load_npy(path).sum()))

threads = [threading.Thread(target=reader) for _ in range(8)]
for t in threads:
    t.start()
assert "pandera" not in sys.modules
validate_table("lexical_index", SCHEMAS["lexical_index"].empty_table())
stop.set()
for t in threads:
    t.join()
assert "pandera" in sys.modules and loaded and set(loaded) == {132.0}
print(most[0])
"""


def test_threads_never_build_an_ast_at_once(tmp_path):
    out = subprocess.run([sys.executable, "-c", _SCRIPT, str(tmp_path)], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert int(out.stdout.strip()) == 1
