"""`docs/scaling.md` shows the deployment files the distributed test runs with, not a retyped copy: each block
after an `<!-- include: deploy/FILE -->` line is that file, byte for byte. After editing a file under `deploy/`,
refresh the document with `python -m tests.distributed.test_deploy_docs`."""

from __future__ import annotations

import re
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
DOC = REPO / "docs" / "scaling.md"
INCLUDE = re.compile(r"<!-- include: (?P<path>deploy/[\w./-]+) -->\n```(?P<lang>\w*)\n(?P<body>.*?)```\n", re.S)


def rendered(text: str) -> str:
    """The document with every included block replaced by its file's current text."""

    def block(m: re.Match) -> str:
        return f"<!-- include: {m['path']} -->\n```{m['lang']}\n{(REPO / m['path']).read_text(encoding='utf-8')}```\n"

    return INCLUDE.sub(block, text)


def test_the_scaling_doc_includes_the_deploy_files_the_test_uses():
    text = DOC.read_text(encoding="utf-8")
    included = {m["path"] for m in INCLUDE.finditer(text)}
    assert included >= {"deploy/dagster.yaml", "deploy/celery.yaml"}, included
    assert all((REPO / path).is_file() for path in included), included
    assert rendered(text) == text, "docs/scaling.md shows an old copy of a deploy/ file: python -m tests.distributed.test_deploy_docs"


if __name__ == "__main__":
    DOC.write_text(rendered(DOC.read_text(encoding="utf-8")), encoding="utf-8")
    sys.exit(0)
