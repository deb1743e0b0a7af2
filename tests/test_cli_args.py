"""Command-line arguments: bad values are usage errors (exit 2, one line), never a traceback."""

from __future__ import annotations

import pytest

from petrichor.cli import main


@pytest.mark.parametrize("limit", ["0", "-3", "ten"])
def test_search_limit_must_be_a_positive_whole_number(limit: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["search", "anything", "--limit", limit])
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert "--limit" in err and "Traceback" not in err
