"""`petrichor eval`: retrieval and answer metrics on a dataset, with naive baselines measured in the same run.

Imported lazily by the CLI; nothing here is needed to build or serve.
"""
