"""Ablation variants: Petrichor's search with one stage switched off or swapped, on the same snapshot.

Each route off in turn, the question routes on over offline questions (they are off by default there), both question routes off together, the local rerank off, the rerank and the fusion
as the reference has them (every query token alike; question routes at full weight), the jieba tokenizer in
place of bigrams (the recall index is rebuilt from the snapshot's tables; vector tables are shared), and
the article-balancing stage keeping ten or three articles instead of five, the rerank without its dense share, the
list without its fresh tail, and the previous defaults together. For the child windows: the window routes
alone with the text routes, the chunk routes alone (windows off), and the parent chunk scored by the sum of
its best windows instead of the best one; the stages off together (what a naive hybrid does with windows).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from petrichor_serving.recall import routes
from petrichor_serving.recall.balance import REFERENCE_RANK_WEIGHTS
from petrichor_serving.recall.config import DEFAULT_CONFIG, RecallConfig


@dataclass(frozen=True)
class Variant:
    name: str
    description: str
    config: RecallConfig = DEFAULT_CONFIG
    tokenizer: str = "bigram"


def variants() -> list[Variant]:
    def off(r: str) -> RecallConfig:
        # a question route is off by default over offline questions: its own variant keeps the other one on
        mode = "always" if r in routes.QUESTION_ROUTES else "model"
        return replace(DEFAULT_CONFIG, disabled_routes=frozenset({r}), question_routes=mode)

    out = [
        Variant(f"{r}_on", f"{r} route on (off by default)", replace(DEFAULT_CONFIG, enabled_routes=frozenset({r})))
        if r in routes.default_off()
        else Variant(f"no_{r}", f"{r} route off", off(r))
        for r in routes.switchable()
    ]
    out.append(Variant("questions_on", "the question routes on whoever wrote the questions", replace(DEFAULT_CONFIG, question_routes="always")))
    out += [
        Variant(
            "no_questions",
            "both question routes off",
            replace(DEFAULT_CONFIG, disabled_routes=frozenset({routes.QUESTION_VECTOR, routes.QUESTION_BM25})),
        ),
        Variant("no_rerank", "local rerank off", replace(DEFAULT_CONFIG, rerank=False)),
        Variant("rerank_uniform", "rerank weighs every query token alike (the reference)", replace(DEFAULT_CONFIG, rerank_idf=False)),
        Variant(
            "questions_full_weight",
            "question routes weigh 1 in the fusion (the reference)",
            replace(DEFAULT_CONFIG, route_weights=(), question_routes="always"),
        ),
        Variant("tokenizer_jieba", "jieba instead of bigram tokens for BM25, rerank and wiki", tokenizer="jieba"),
        Variant("articles_10", "article balancing keeps 10 articles instead of 5", replace(DEFAULT_CONFIG, article_top_k=10)),
        Variant("articles_3", "article balancing keeps 3 articles instead of 5", replace(DEFAULT_CONFIG, article_top_k=3)),
        Variant("no_dense_rerank", "the rerank scores lexical fields only (no dense share)", replace(DEFAULT_CONFIG, rerank_dense=0.0)),
        Variant("dense_rerank_4", "the rerank's dense share worth 4 points instead of 8", replace(DEFAULT_CONFIG, rerank_dense=4.0)),
        Variant(
            "no_sentence_rerank", "the rerank gives no points for the best sentence's query tokens", replace(DEFAULT_CONFIG, rerank_sentence=0.0)
        ),
        Variant(
            "prior_share",
            "the rerank's fused prior as before: 4 points × the best fused score's share",
            replace(DEFAULT_CONFIG, rerank_prior=4.0, prior_range=False),
        ),
        Variant("no_spelling", "unknown Latin query words gain no indexed word they misspell", replace(DEFAULT_CONFIG, spelling=False)),
        Variant("no_fresh_tail", "no places kept at the end of the list for unlisted articles", replace(DEFAULT_CONFIG, fresh_tail=0)),
        Variant("tail_fused", "the fresh tail takes new articles in fused order, not the rerank's", replace(DEFAULT_CONFIG, tail_articles=0)),
        Variant(
            "before_dense",
            "the previous defaults: lexical rerank, 3 articles, wiki route on, no fresh tail",
            replace(DEFAULT_CONFIG, rerank_dense=0.0, article_top_k=3, enabled_routes=routes.default_off(), fresh_tail=0),
        ),
        Variant("no_coordinated", "coordinated values are not searched each on its own", replace(DEFAULT_CONFIG, coordinated=False)),
        Variant("rewrite", "the reference's rule-based clauses searched beside the question", replace(DEFAULT_CONFIG, rewrite=True)),
        Variant("hand_ranker", "each rerank pool ordered by the hand-tuned points", replace(DEFAULT_CONFIG, ranker="hand"))
        if DEFAULT_CONFIG.ranker == "learned"
        else Variant(
            "learned_ranker", "each rerank pool ordered by the learned ranker (recall/ranker_model.json)", replace(DEFAULT_CONFIG, ranker="learned")
        ),
        Variant("no_sub_query_leads", "sub-queries keep no place for their first article", replace(DEFAULT_CONFIG, sub_query_leads=False)),
        Variant("no_diversity", "near-duplicate test and per-article cap off", replace(DEFAULT_CONFIG, diversity=False)),
        Variant(
            "no_windows",
            "both window routes off (chunks matched as wholes)",
            replace(DEFAULT_CONFIG, disabled_routes=frozenset({routes.WINDOW_VECTOR, routes.WINDOW_BM25})),
        ),
        Variant(
            "windows_not_chunks",
            "window routes in place of the chunk routes",
            replace(DEFAULT_CONFIG, disabled_routes=frozenset({routes.CHUNK_VECTOR, routes.CHUNK_BM25})),
        ),
        Variant("parent_sum", "a chunk scores the sum of its two best windows, not the best", replace(DEFAULT_CONFIG, parent_score="sum")),
        Variant(
            "windows_lean",
            "window and chunk routes only, no rerank, 10 articles",
            replace(
                DEFAULT_CONFIG,
                disabled_routes=frozenset({routes.QUESTION_VECTOR, routes.QUESTION_BM25, routes.WIKI}),
                rerank=False,
                article_top_k=10,
            ),
        ),
        Variant(
            "windows_only_lean",
            "window routes only, no rerank, 10 articles",
            replace(
                DEFAULT_CONFIG,
                disabled_routes=frozenset({routes.QUESTION_VECTOR, routes.QUESTION_BM25, routes.WIKI, routes.CHUNK_VECTOR, routes.CHUNK_BM25}),
                rerank=False,
                article_top_k=10,
            ),
        ),
        Variant(
            "rewrite_half", "the rewrite's clauses searched at half weight in the fusion", replace(DEFAULT_CONFIG, rewrite=True, sub_query_weight=0.5)
        ),
        Variant(
            "articles_by_top3",
            "balancing scores an article by its best three hits (the reference)",
            replace(DEFAULT_CONFIG, article_rank_weights=REFERENCE_RANK_WEIGHTS),
        ),
        Variant("route_top_30", "30 hits per route into the fusion instead of 10", replace(DEFAULT_CONFIG, route_top_k=30)),
        Variant(
            "lean_articles_3",
            "window and chunk routes only, no rerank, 3 articles",
            replace(DEFAULT_CONFIG, disabled_routes=frozenset({routes.QUESTION_VECTOR, routes.QUESTION_BM25, routes.WIKI}), rerank=False),
        ),
    ]
    return out


def rebuild_index(snapshot, tokenizer: str):
    """The snapshot's recall index with another BM25 tokenizer, sharing its vector tables."""
    from petrichor_serving.recall.index import RecallIndex

    t = snapshot.tables
    return RecallIndex.build(
        t["articles"],
        t["chunks"],
        t["questions"],
        t["wiki_pages"],
        t["tree_nodes"],
        vector_tables=routes.vector_tables(),
        vectors=snapshot.recall.vectors,
        tokenizer=tokenizer,
        chunk_windows=t["chunk_windows"],
    )
