"""Per-article knowledge build steps as plain functions over plain data (no Dagster, no file I/O).

`guide` cleans the compile guide; `questions` writes three retrieval questions per chunk; `wiki` turns
one article into its wiki contribution (via `candidates`, `taxonomy`, `pages`) and `aggregate` merges
the contributions of a knowledge base into snapshot rows; `page_index` builds the heading tree.
"""
