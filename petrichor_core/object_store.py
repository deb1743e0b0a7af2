"""Snapshots on S3-compatible object storage: the one home of the storage rule for `PETRICHOR_DATA=s3://…`.

The build works in a local staging folder as it does for a local data dir (Dagster instance, warehouse,
LanceDB tables, embedding cache) and *publishes* to the store: the snapshot folder's files (manifest last),
then the article history records the store lacks, then `snapshots/CURRENT` with a conditional write —
`If-None-Match: *` for the first publish, `If-Match: <ETag>` of the pointer read when publishing began after
that — so of two builders publishing at once exactly one moves `CURRENT`; the other gets `PublishConflict`,
removes what it uploaded, and its build fails. Serving replicas mirror the store into a local folder
(`SnapshotMirror`): a new snapshot's files are downloaded and checked against the manifest's checksums,
the history records follow, and only then the local `CURRENT` moves, so `SnapshotStore` swaps as it does
over a local folder (memory-mapping the local copy).

The layout under the prefix is the local one: `snapshots/CURRENT`, `snapshots/<version>/…`,
`history/articles/<2 hex>/<article_version>.json`.
"""

from __future__ import annotations

import logging
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

from petrichor_core.contract.current import CURRENT_FILE, MAX_CURRENT_BYTES, collect_garbage, parse_pointer, point_current, read_current
from petrichor_core.contract.files import write_atomic
from petrichor_core.contract.history import HISTORY_DIR, article_record_path, record_name
from petrichor_core.contract.manifest import MANIFEST_FILE, IntegrityError, Manifest, file_entry, write_manifest

log = logging.getLogger(__name__)

SCHEME = "s3://"
LOOPBACK = ("127.0.0.1", "localhost", "::1")


class PublishConflict(RuntimeError):
    """Another build moved `CURRENT` on the object store while this one was publishing: this one lost."""


@dataclass(frozen=True)
class S3Location:
    """Where snapshots live on an S3-compatible store and how to reach it (from the AWS environment variables)."""

    bucket: str
    prefix: str = ""
    endpoint_url: str = ""
    region: str = ""
    access_key_id: str = ""
    secret_access_key: str = ""
    session_token: str = ""

    @property
    def uri(self) -> str:
        return f"{SCHEME}{self.bucket}/{self.prefix}".rstrip("/")

    def key(self, *parts: str) -> str:
        return "/".join(p.strip("/") for p in (self.prefix, *parts) if p.strip("/"))


def is_object_uri(value: str) -> bool:
    return "://" in value


def parse_location(
    uri: str, *, endpoint_url: str = "", region: str = "", access_key_id: str = "", secret_access_key: str = "", session_token: str = ""
) -> S3Location:
    """An `s3://bucket/prefix` URI; any other scheme, or plain http to a host that is not this machine, is refused."""
    if not uri.startswith(SCHEME):
        raise ValueError(f"PETRICHOR_DATA {uri!r}: only s3:// object storage is supported (or a local folder)")
    bucket, _, prefix = uri[len(SCHEME) :].partition("/")
    if not bucket:
        raise ValueError(f"PETRICHOR_DATA {uri!r}: no bucket named (s3://bucket/prefix)")
    if endpoint_url:
        url = urlparse(endpoint_url)
        if url.scheme not in ("http", "https") or not url.hostname:
            raise ValueError(f"AWS_ENDPOINT_URL {endpoint_url!r}: expected http(s)://host[:port]")
        if url.scheme == "http" and url.hostname not in LOOPBACK:
            raise ValueError(f"AWS_ENDPOINT_URL {endpoint_url!r}: plain http only to this machine (127.0.0.1); use https")
    return S3Location(bucket, prefix.strip("/"), endpoint_url, region, access_key_id, secret_access_key, session_token)


@dataclass(frozen=True)
class Pointer:
    """What `snapshots/CURRENT` on the store names, and its ETag (None: nothing published yet)."""

    version: str | None
    etag: str | None


class ObjectStore:
    """Files through `pyarrow.fs.S3FileSystem`; the pointer through boto3, which has the conditional put."""

    def __init__(self, location: S3Location):
        self.location = location
        self._fs: Any = None
        self._client: Any = None

    @property
    def fs(self) -> Any:
        if self._fs is None:
            from pyarrow import fs

            loc = self.location
            kwargs: dict[str, Any] = {}
            if loc.endpoint_url:
                url = urlparse(loc.endpoint_url)
                kwargs.update(endpoint_override=url.netloc, scheme=url.scheme)
            if loc.access_key_id:
                kwargs.update(access_key=loc.access_key_id, secret_key=loc.secret_access_key, session_token=loc.session_token or None)
            self._fs = fs.S3FileSystem(region=loc.region or None, **kwargs)
        return self._fs

    @property
    def client(self) -> Any:
        if self._client is None:
            import boto3

            loc = self.location
            kwargs: dict[str, Any] = {"region_name": loc.region or None, "endpoint_url": loc.endpoint_url or None}
            if loc.access_key_id:
                kwargs.update(
                    aws_access_key_id=loc.access_key_id, aws_secret_access_key=loc.secret_access_key, aws_session_token=loc.session_token or None
                )
            self._client = boto3.client("s3", **kwargs)
        return self._client

    def path(self, *parts: str) -> str:
        """The pyarrow path (`bucket/key`) of a key under the prefix."""
        return f"{self.location.bucket}/{self.location.key(*parts)}"

    # ------------------------------------------------------------------------------------------ pointer

    def read_pointer(self) -> Pointer:
        from botocore.exceptions import ClientError

        try:
            got = self.client.get_object(Bucket=self.location.bucket, Key=self.location.key("snapshots", CURRENT_FILE))
        except ClientError as exc:
            if exc.response.get("Error", {}).get("Code") in ("NoSuchKey", "404"):
                return Pointer(None, None)
            raise
        parsed = parse_pointer(got["Body"].read(MAX_CURRENT_BYTES + 1))  # the local CURRENT's rule: a bad one names nothing
        if parsed.refused:
            log.warning("%s/snapshots/%s refused: %s", self.location.uri, CURRENT_FILE, parsed.refused)
        return Pointer(parsed.version, got["ETag"])

    def swap_pointer(self, version: str, expected: Pointer) -> None:
        """Point `CURRENT` at `version` only if it still is `expected`; `PublishConflict` otherwise."""
        from botocore.exceptions import ClientError

        condition = {"IfMatch": expected.etag} if expected.etag else {"IfNoneMatch": "*"}
        try:
            self.client.put_object(
                Bucket=self.location.bucket, Key=self.location.key("snapshots", CURRENT_FILE), Body=(version + "\n").encode(), **condition
            )
        except ClientError as exc:
            if exc.response.get("Error", {}).get("Code") in ("PreconditionFailed", "ConditionalRequestConflict", "412", "409"):
                now = self.read_pointer().version
                raise PublishConflict(
                    f"another build published {now or 'a snapshot'} to {self.location.uri} while this one was publishing "
                    f"{version} (CURRENT was {expected.version or 'unset'}); {version} was not published"
                ) from None
            raise

    # -------------------------------------------------------------------------------------------- files

    def upload(self, local: Path, *parts: str) -> None:
        with open(local, "rb") as src, self.fs.open_output_stream(self.path(*parts)) as dst:
            while block := src.read(1 << 22):
                dst.write(block)

    def read_bytes(self, *parts: str) -> bytes:
        with self.fs.open_input_stream(self.path(*parts)) as src:
            return src.read()

    def download(self, local: Path, *parts: str) -> None:
        """Into a temporary name beside `local`, then renamed: a reader never sees a partial file."""

        def fetch(tmp: str) -> None:
            with open(tmp, "wb") as dst, self.fs.open_input_stream(self.path(*parts)) as src:
                while block := src.read(1 << 22):
                    dst.write(block)

        write_atomic(local, fetch, durable=False)  # a copy every reader checks: the manifest's sha256, a history record's name

    def list_files(self, *parts: str, recursive: bool = True) -> list[str]:
        """Keys under `parts`, relative to it (folders too when not recursive)."""
        from pyarrow import fs

        base = self.path(*parts)
        infos = self.fs.get_file_info(fs.FileSelector(base, recursive=recursive, allow_not_found=True))
        return sorted(i.path[len(base) + 1 :] for i in infos if recursive is False or i.type == fs.FileType.File)

    def delete_dir(self, *parts: str) -> None:
        self.fs.delete_dir(self.path(*parts))


def snapshot_files(manifest: Manifest) -> list[dict[str, Any]]:
    """Every file of a snapshot folder but the manifest, with its recorded `file`, `bytes` and `sha256`."""
    entries = [{k: v for k, v in info.items() if k != "mapped"} for info in manifest.tables.values()]
    entries += [dict(info["mapped"]) for info in manifest.tables.values() if "mapped" in info]
    entries += [dict(e) for e in manifest.lexical.get("files", {}).values()]
    for name, info in manifest.vector_tables.items():
        if "compact" not in info:
            raise IntegrityError(f"vector table {name} has no compact files: object storage serves only snapshot files")
        entries += [dict(e) for e in info["compact"]["files"].values()]
    return entries


# ---------------------------------------------------------------------------------------------- build


def publish_remote(store: ObjectStore, data_dir: Path, manifest: Manifest, expected: Pointer) -> None:
    """Upload the local snapshot folder (manifest last) and the history records it cites, then move `CURRENT`.

    On `PublishConflict` the uploaded folder is removed again, so a loser leaves no complete snapshot behind.
    """
    folder = Path(data_dir) / "snapshots" / manifest.version
    for entry in snapshot_files(manifest):
        store.upload(folder / entry["file"], "snapshots", manifest.version, entry["file"])
    store.upload(folder / MANIFEST_FILE, "snapshots", manifest.version, MANIFEST_FILE)
    _upload_history(store, data_dir)
    try:
        store.swap_pointer(manifest.version, expected)
    except PublishConflict:
        store.delete_dir("snapshots", manifest.version)
        raise


def _upload_history(store: ObjectStore, data_dir: Path) -> int:
    """The staging folder's article records the store lacks (records are immutable: same name, same bytes)."""
    root = Path(data_dir) / HISTORY_DIR / "articles"
    if not root.exists():
        return 0
    remote = set(store.list_files(HISTORY_DIR, "articles"))
    sent = 0
    for path in sorted(root.glob("*/*.json")):
        rel = f"{path.parent.name}/{path.name}"
        if rel not in remote:
            store.upload(path, HISTORY_DIR, "articles", rel)
            sent += 1
    return sent


def collect_remote(store: ObjectStore, keep: int) -> list[str]:
    """Remove all but the newest `keep` complete snapshots on the store (never CURRENT's), and abandoned
    folders without a manifest older than the newest complete one (a newer one may be an upload in flight).
    History records stay: a record is small and a replica may still cite it."""
    current = store.read_pointer().version
    folders = [f for f in store.list_files("snapshots", recursive=False) if f != CURRENT_FILE]
    files = set(store.list_files("snapshots"))
    complete = sorted(f for f in folders if f"{f}/{MANIFEST_FILE}" in files)
    newest = complete[-1] if complete else ""
    keep_names = set(complete[-keep:]) | ({current} if current else set())
    removed = []
    for f in sorted(folders):
        if f in keep_names or (f not in complete and f > newest):
            continue
        store.delete_dir("snapshots", f)
        removed.append(f)
    return removed


# -------------------------------------------------------------------------------------------- serving


class SnapshotMirror:
    """Keeps a local folder a verified copy of the store's current snapshot and the history it cites.

    `sync()` downloads a new `CURRENT`'s files, checks each against the manifest (bytes and sha256), writes
    the manifest, fetches history records not held yet, and moves the local `CURRENT` last; a snapshot
    that fails is not pointed at (and retried on the next poll). `SnapshotStore` over `local_dir` does the rest.
    """

    def __init__(self, store: ObjectStore, local_dir: Path, *, keep: int = 3):
        self.store = store
        self.local_dir = Path(local_dir)
        self.keep = max(keep, 2)  # the snapshot still serving while the next one loads stays on disk
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    @property
    def snapshots_dir(self) -> Path:
        return self.local_dir / "snapshots"

    def sync(self) -> bool:
        """True when the local `CURRENT` moved to the store's."""
        version = self.store.read_pointer().version
        if version is None or version == read_current(self.snapshots_dir):
            return False
        self._fetch_snapshot(version)
        self._fetch_history()
        point_current(self.snapshots_dir, version)
        collect_garbage(self.snapshots_dir, self.keep)
        log.info("mirrored snapshot %s from %s", version, self.store.location.uri)
        return True

    def _fetch_snapshot(self, version: str) -> None:
        manifest = Manifest.from_json(self.store.read_bytes("snapshots", version, MANIFEST_FILE).decode("utf-8"))
        if manifest.version != version:
            raise IntegrityError(f"manifest under {version} names {manifest.version}")
        folder = self.snapshots_dir / version
        for entry in snapshot_files(manifest):
            path = folder / entry["file"]
            if path.exists() and file_entry(path) == {"bytes": entry["bytes"], "sha256": entry["sha256"]}:
                continue  # an earlier, interrupted sync got this one
            self.store.download(path, "snapshots", version, entry["file"])
            found = file_entry(path)
            if found != {"bytes": entry["bytes"], "sha256": entry["sha256"]}:
                path.unlink(missing_ok=True)
                raise IntegrityError(f"{version}/{entry['file']}: downloaded {found['bytes']} bytes that differ from the manifest's checksum")
        write_manifest(self.snapshots_dir, manifest)

    def _fetch_history(self) -> int:
        got = 0
        for rel in self.store.list_files(HISTORY_DIR, "articles"):
            if (key := record_name(rel)) is None:
                continue  # not a record of the layout: never a local path of the store's choosing
            path = article_record_path(self.local_dir, *key)
            if not path.exists():
                self.store.download(path, HISTORY_DIR, "articles", rel)
                got += 1
        return got

    def watch(self, interval_s: float) -> None:
        """Poll the store's `CURRENT` in a daemon thread until `stop()`."""

        def loop() -> None:
            while not self._stop.wait(interval_s):
                try:
                    self.sync()
                except Exception:  # the mirror must outlive a failed poll or a bad snapshot
                    log.exception("mirroring %s failed", self.store.location.uri)

        self._thread = threading.Thread(target=loop, name="snapshot-mirror", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
