"""Dagster assets: thin wrappers that call the plain build steps in `petrichor_pipeline.build`."""
