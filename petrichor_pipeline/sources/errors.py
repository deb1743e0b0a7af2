"""The one way a file is refused: its reason is reported against its path and the scan moves on."""

from __future__ import annotations


class RejectedFile(Exception):
    """A file that cannot become an article; `reason` is the text shown to the user."""

    def __init__(self, reason: str):
        super().__init__(reason)
        self.reason = reason
