"""What the knowledge build reads from a chunk: any object with the chunker's attributes will do."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol


class ChunkLike(Protocol):
    """The fields of `petrichor_core.text.chunking` chunks (ARCHITECTURE: chunk_markdown contract)."""

    @property
    def key(self) -> str: ...
    @property
    def position(self) -> int: ...
    @property
    def heading(self) -> str: ...
    @property
    def heading_path(self) -> Sequence[str]: ...
    @property
    def content(self) -> str: ...
    @property
    def start(self) -> int: ...
    @property
    def end(self) -> int: ...


def heading_label(chunk: ChunkLike) -> str:
    """The chunk's place in the document, `A > B > C`, or its heading when it sits before any heading."""
    return " > ".join(chunk.heading_path) or chunk.heading
