"""The offline build: corpus sources, the knowledge steps, the builder and the Dagster layer over them.

Importing the package imports no Dagster (the definitions live in `definitions.py`); what it shares with
serving (text, the snapshot contract, the models, config) is `petrichor_core`.
"""
