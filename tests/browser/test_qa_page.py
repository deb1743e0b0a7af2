"""The QA page in headless Chromium: ask, click a citation, see its quoted range highlighted by offsets."""

from __future__ import annotations

from urllib.parse import urlparse

import pytest

from tests.browser.conftest import GLOBEX_KEY, screenshot_path

pytestmark = [pytest.mark.slow, pytest.mark.browser]

PRIVATE_QUESTION = "What is the default maximum file size for a source file?"
PUBLIC_QUESTION = "How do I build the knowledge base and ask a question?"


def _ask(page, question: str, path: str) -> dict:
    page.fill("#question", question)
    with page.expect_response(lambda r: urlparse(r.url).path == path) as reply:
        page.press("#question", "Enter")
    assert reply.value.status == 200, reply.value.text()
    doc = reply.value.json()
    page.wait_for_selector("#answer button.marker" if doc["citations"] else "#citations li")
    return doc


def _open(page, citation: dict, *, keyboard: bool = False) -> None:
    """Open a citation from its marker in the answer (a click, or focus and Enter) and wait for its article."""
    button = page.locator(f"#answer button.marker[data-marker='{citation['marker']}']").first
    if keyboard:
        button.focus()
        page.keyboard.press("Enter")
    else:
        button.click()
    page.wait_for_selector("#article[aria-busy='false']:not([hidden])")  # set busy by the click itself


def test_a_clicked_citation_highlights_exactly_its_quote(served, page, tmp_path):
    page.goto(served.url)
    page.fill("#api-key", GLOBEX_KEY)
    page.press("#api-key", "Tab")  # `change` stores the key in this browser
    doc = _ask(page, PRIVATE_QUESTION, "/api/assistant/chat")
    assert doc["citations"], doc
    shown = [int(m) for m in page.locator("#answer button.marker").evaluate_all("bs => bs.map(b => b.dataset.marker)")]
    assert shown and set(shown) <= {c["marker"] for c in doc["citations"]}
    for i, citation in enumerate(c for c in doc["citations"] if c["marker"] in shown):
        _open(page, citation, keyboard=i % 2 == 1)
        assert page.text_content("#highlight") == citation["quote"]
        assert page.get_attribute("#article", "data-article-id") == citation["article_id"]
        assert page.text_content("#article-version") == citation["article_version"]
        assert page.text_content("#snapshot-version") == doc["snapshot_version"]
        assert page.text_content("#heading-path") == " › ".join(citation["heading_path"])
        assert page.evaluate("document.activeElement.id") == "article-title"
    page.wait_for_selector("#trace-list li")
    trace = page.evaluate(
        "([id, key]) => fetch('/api/traces/' + id, {headers: {Authorization: 'Bearer ' + key}}).then(r => r.json())", [doc["trace_id"], GLOBEX_KEY]
    )
    assert page.locator("#trace-list .tool").all_text_contents() == [s["tool"] for s in trace["steps"]] != []
    assert page.evaluate("localStorage.getItem('petrichor.apiKey')") == GLOBEX_KEY
    _open(page, doc["citations"][0])
    page.locator("#highlight").scroll_into_view_if_needed()
    page.screenshot(path=str(screenshot_path(tmp_path, "qa-page.png")), full_page=True)


def test_the_page_reads_in_chinese_and_survives_a_reload_with_the_key(served, page):
    page.goto(served.url)
    page.fill("#api-key", GLOBEX_KEY)
    page.press("#api-key", "Tab")
    page.click("#lang")
    assert page.evaluate("document.documentElement.lang") == "zh-CN"
    assert page.text_content("#ask") == "提问"
    page.reload()
    assert page.input_value("#api-key") == GLOBEX_KEY and page.text_content("#ask") == "提问"
    page.click("#forget-key")
    assert page.evaluate("localStorage.getItem('petrichor.apiKey')") is None


def test_public_mode_never_shows_a_private_article(served, page):
    public_ids = {
        a["article_id"]
        for a in served.articles.values()
        if a["visibility"] == "public" and not a["password_protected"] and a["share_expires_at"] is None
    }
    private = [a for a in served.articles.values() if a["article_id"] not in public_ids]
    assert len(public_ids) == 1 and private
    requests = []
    page.on("request", lambda r: requests.append(r))
    page.goto(served.url)
    page.fill("#api-key", GLOBEX_KEY)  # present in the field, and still never sent in public mode
    page.press("#api-key", "Tab")
    page.check("#mode-public")
    assert page.is_hidden("#key-row")
    cited = set()
    for question in (PUBLIC_QUESTION, "How are API keys stored in the key file?", "快照默认保留多少个版本？"):
        doc = _ask(page, question, "/api/public/qa/chat")
        cited |= {c["article_id"] for c in doc["citations"]}
        for c in doc["citations"]:
            _open(page, c)
            assert page.text_content("#highlight") == c["quote"]
            assert page.get_attribute("#article", "data-article-id") in public_ids
        text = page.inner_text("main")
        for a in private:
            assert a["content"][:200] not in text
    assert cited and cited <= public_ids
    api = [r for r in requests if urlparse(r.url).path.startswith("/api/")]
    assert api and all(urlparse(r.url).path.startswith("/api/public/") for r in api), [r.url for r in api]
    assert not any("authorization" in r.headers for r in api)
    for a in private:
        status = page.evaluate("id => fetch('/api/public/articles/' + id).then(r => r.status)", a["article_id"])
        assert status == 404
