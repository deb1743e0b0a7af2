"""The `load` marker: its tests run only when `-m` names it.

Not an `addopts = -m "not load"`: a `-m` given on the command line replaces the one in addopts, so
`-m "not slow"` would then pull the minute-long load run into the quick suite.
"""

from __future__ import annotations

import pytest


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if "load" in (config.getoption("markexpr") or ""):
        return
    kept = [item for item in items if item.get_closest_marker("load") is None]
    if len(kept) != len(items):
        config.hook.pytest_deselected(items=[item for item in items if item.get_closest_marker("load") is not None])
        items[:] = kept
