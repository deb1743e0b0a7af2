"""`petrichor_pipeline.text.chunking.chunk_markdown` and `ALGORITHM_VERSION`, the import path outside tools
rely on (ARCHITECTURE: "Contracts other tools rely on"): the chunker itself is `petrichor_core.text.chunking`."""

from petrichor_core.text.chunking import ALGORITHM_VERSION, Chunk, ChunkResult, chunk_markdown

__all__ = ["ALGORITHM_VERSION", "Chunk", "ChunkResult", "chunk_markdown"]
