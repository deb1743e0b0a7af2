"""The `snapshot` asset depends on every asset a build materializes before it publishes, read from the asset
modules (`assets.snapshot.built_assets`), so an asset added to the build is never left out of its deps."""

from __future__ import annotations

from dagster import AssetKey, asset

from petrichor_pipeline.assets import knowledge, snapshot
from petrichor_pipeline.definitions import defs


def test_every_asset_the_code_location_builds_before_publishing_is_a_direct_dep_of_the_snapshot():
    graph = defs.resolve_asset_graph()
    publishing = {snapshot.SNAPSHOT, *graph.get(snapshot.SNAPSHOT).child_keys}
    built = {key for key in graph.get_all_asset_keys() if graph.get(key).is_materializable} - publishing
    assert built, "the code location builds assets"
    assert set(graph.get(snapshot.SNAPSHOT).parent_keys) >= built
    assert set(snapshot.built_assets()) == built


def test_an_asset_added_to_a_build_module_is_upstream_of_the_snapshot(monkeypatch):
    @asset(name="glossary", deps=["chunks"])
    def glossary() -> None:
        """An asset a later build might add beside the questions and the wiki."""

    monkeypatch.setattr(knowledge, "glossary", glossary, raising=False)
    assert AssetKey("glossary") in snapshot.built_assets()
