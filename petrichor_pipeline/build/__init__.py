"""Build steps behind the Dagster assets: warehouse, per-article reuse, embeddings, publish, the CLI runner."""
