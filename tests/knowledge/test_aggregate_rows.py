"""The link and source rows of the wiki, grouped by Arrow, equal the rules stated row by row."""

from hypothesis import given, settings
from hypothesis import strategies as st

from petrichor_core.contract.schemas import chunk_id_of
from petrichor_pipeline.knowledge.aggregate import aggregate_wiki

KEYS = ["entity-a", "entity-b", "concept-ç", "source-x", "entity-缓存"]


def _rule_links(articles):
    """A link survives between two existing, different pages; its description is the first non-empty one
    in article order, else the last given; rows sorted by (kb, tenant, from, to, type)."""
    out = []
    for kb, tenant in sorted({(a["kb_id"], a["tenant"]) for a in articles}):
        scope = sorted((a for a in articles if (a["kb_id"], a["tenant"]) == (kb, tenant)), key=lambda a: a["article_id"])
        existing = {p["page_key"] for a in scope for p in (a["source_page"], *a["pages"])}
        links = {}
        for a in scope:
            for link in a["links"]:
                f, t = link["from_page_key"], link["to_page_key"]
                if f in existing and t in existing and f != t:
                    triple = (f, t, link["link_type"])
                    links[triple] = links.get(triple) or link["description"]
        out += [
            {"kb_id": kb, "tenant": tenant, "from_page_key": f, "to_page_key": t, "link_type": lt, "description": d}
            for (f, t, lt), d in sorted(links.items())
        ]
    return out


def _rule_sources(articles):
    """One row per (page, article, chunk key), the last ref winning; sorted by (kb, tenant, page, article, chunk key)."""
    out = []
    for kb, tenant in sorted({(a["kb_id"], a["tenant"]) for a in articles}):
        scope = sorted((a for a in articles if (a["kb_id"], a["tenant"]) == (kb, tenant)), key=lambda a: a["article_id"])
        refs = {(r["page_key"], a["article_id"], r["chunk_key"]): (a["article_version"], r["note"]) for a in scope for r in a["sources"]}
        out += [
            {
                "kb_id": kb,
                "tenant": tenant,
                "page_key": p,
                "article_id": aid,
                "article_version": v,
                "chunk_id": chunk_id_of(aid, c) if c else None,
                "note": n,
            }
            for (p, aid, c), (v, n) in sorted(refs.items())
        ]
    return out


def _page(key):
    return {"page_key": key, "kind": key.split("-")[0], "title": key, "summary": "", "content_md": f"# {key}", "aliases": [], "category_path": []}


link = st.fixed_dictionaries(
    {
        "from_page_key": st.sampled_from(KEYS),
        "to_page_key": st.sampled_from(KEYS + ["entity-missing"]),
        "link_type": st.sampled_from(["extracts", "related", "用于"]),
        "description": st.sampled_from(["", None, "d1", "描述"]),
    }
)
ref = st.fixed_dictionaries(
    {"page_key": st.sampled_from(KEYS), "chunk_key": st.sampled_from(["", "chunk-001", "chunk-002"]), "note": st.sampled_from(["n", "m", None])}
)
contribution = st.tuples(
    st.lists(st.sampled_from(KEYS), unique=True, max_size=3),
    st.lists(link, max_size=6),
    st.lists(ref, max_size=4),
    st.sampled_from([("ops", "default"), ("ops", "t2"), ("dev", "default")]),
)


@settings(max_examples=200, deadline=None)
@given(st.dictionaries(st.sampled_from(["a1", "a2", "b3", "é4", "文5"]), contribution, max_size=5))
def test_link_and_source_rows_follow_their_rules(spec):
    articles = [
        {
            "article_id": aid,
            "kb_id": kb,
            "tenant": tenant,
            "title": aid,
            "article_version": f"v-{aid}",
            "summary": "",
            "source_page": _page(f"source-{aid}"),
            "pages": [_page(k) for k in keys],
            "links": links,
            "sources": refs,
            "warnings": [],
            "model_calls": 0,
        }
        for aid, (keys, links, refs, (kb, tenant)) in spec.items()
    ]
    result = aggregate_wiki(articles)
    assert result.tables["wiki_links"].to_pylist() == _rule_links(articles)
    assert result.tables["wiki_sources"].to_pylist() == _rule_sources(articles)
