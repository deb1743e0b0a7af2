"""The layer the build (`petrichor_pipeline`) and serving (`petrichor_serving`) both stand on; it imports neither.

- `text/`: Markdown scanning and normalisation, the chunker, sentences, languages, tokenizers, BM25;
- `contract/`: the snapshot contract (schemas, manifest, reader, `CURRENT`, history, vector and lexical files);
- `models/`: the model protocols, the chat and embedding clients, the providers and the offline model;
- `versions.py`: every version constant; `config.py`: the one place that reads the environment;
- `object_store.py`: snapshots in an object store; `memory.py`: process memory settings.

Importing the package switches Arrow to the system allocator (`memory`), so every Petrichor process uses it.
"""

from petrichor_core.memory import use_system_allocator

use_system_allocator()
