"""The question-answering page: static files shipped inside the package, served at `/` and `/static/`.

The page is plain HTML, CSS and JavaScript (no build step); it talks to the JSON API only, so it sees
exactly what a key, or an anonymous caller in public mode, may see.
"""

from __future__ import annotations

from pathlib import Path

from starlette.requests import Request
from starlette.responses import FileResponse
from starlette.routing import BaseRoute, Mount, Route
from starlette.staticfiles import StaticFiles

STATIC = Path(__file__).resolve().parent / "static"


async def index(request: Request) -> FileResponse:
    return FileResponse(STATIC / "index.html", media_type="text/html; charset=utf-8")


def routes() -> list[BaseRoute]:
    return [Route("/", index, methods=["GET"]), Mount("/static", StaticFiles(directory=STATIC), name="static")]
