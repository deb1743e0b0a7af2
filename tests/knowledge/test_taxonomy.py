from petrichor_core.models.protocols import CallContext
from petrichor_pipeline.knowledge.candidates import Candidate, ExistingPage
from petrichor_pipeline.knowledge.taxonomy import existing_folders, normalize_category_path, plan_categories

from .doubles import ScriptedChatModel, fails, returns

CTX = CallContext()
REDIS = Candidate("entity", "Redis", "entity-redis")
RAG = Candidate("concept", "RAG", "concept-rag")


def test_string_paths_split_on_every_separator():
    assert normalize_category_path("数据库 / 缓存") == ("数据库", "缓存")
    assert normalize_category_path("数据库／缓存") == ("数据库", "缓存")
    assert normalize_category_path("数据库|缓存") == ("数据库", "缓存")
    assert normalize_category_path("数据库｜缓存") == ("数据库", "缓存")
    assert normalize_category_path("数据库 > 缓存") == ("数据库", "缓存")


def test_class_name_parts_and_empties_dropped_and_depth_capped():
    assert normalize_category_path(["实体", "数据库", " ", "缓存", "Redis"]) == ("数据库", "缓存")
    assert normalize_category_path("Concept/检索/Entity") == ("检索",)
    assert normalize_category_path(["概念"]) == ()
    assert normalize_category_path(None) == ()


def test_existing_folders_sorted_unique_capped():
    pages = [ExistingPage(f"entity-{i}", "entity", str(i), category_path=(f"F{i % 150:03d}",)) for i in range(300)]
    folders = existing_folders(pages)
    assert len(folders) == 120 and folders[0] == "F000" and folders == sorted(set(folders))


def test_existing_folder_wins_and_only_new_pages_are_planned():
    existing = [ExistingPage("entity-redis", "entity", "Redis", category_path=("数据库",))]
    reply = {"assignments": [{"slug": "entity-redis", "categoryPath": "别处"}, {"pageKey": "concept/RAG", "path": "实体/检索 > 增强/多余"}]}
    model = ScriptedChatModel(plan_catalog=returns(reply))
    tax = plan_categories([REDIS, RAG], existing, model, CTX)
    assert tax.paths == {"entity-redis": ("数据库",), "concept-rag": ("检索", "增强")}
    assert tax.model_calls == 1
    planned = model.calls[0][1]
    assert [c["pageKey"] for c in planned] == ["concept-rag"]


def test_no_call_when_every_page_has_a_folder():
    existing = [ExistingPage("entity-redis", "entity", "Redis", category_path=("数据库",))]
    tax = plan_categories([REDIS], existing, ScriptedChatModel(), CTX)
    assert (tax.paths, tax.model_calls) == ({"entity-redis": ("数据库",)}, 0)


def test_failure_leaves_new_pages_without_folders():
    tax = plan_categories([REDIS], [], ScriptedChatModel(plan_catalog=fails("catalog", "quota")), CTX)
    assert tax.paths == {} and tax.warnings == ("wiki folder planning failed: quota",)
    bad = plan_categories([REDIS], [], ScriptedChatModel(plan_catalog=returns({"x": 1})), CTX)
    assert bad.paths == {} and bad.warnings == ("wiki folder planning reply is not valid JSON",)
