"""Build steps behind the Dagster assets: warehouse, per-article reuse, embeddings, publish (no Dagster here)."""
