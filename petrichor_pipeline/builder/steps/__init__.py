"""One plain function per asset, one module per step (mirroring `assets/`); the Dagster assets only call these.

Each bucket step reads its inputs from the warehouse, reuses unchanged articles' rows and writes its bucket.
"""
