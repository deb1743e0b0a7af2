"""The text layer lives in `petrichor_core.text`; this path is kept for the chunker contract (`chunking`)."""
