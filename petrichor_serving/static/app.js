// Petrichor QA page: ask, read the cited answer, open each citation at its exact offsets, see the tool calls.
// Private mode asks /api/assistant/chat with the API key (kept in localStorage only); public mode uses only
// the anonymous /api/public/* endpoints and never sends the key. The chat endpoints reply with one JSON
// document, so the answer is shown when it is complete.
"use strict";

const TEXT = {
  en: {
    mode: "Mode", private: "Private (API key)", public: "Public shares", apiKey: "API key", forgetKey: "Forget key",
    keyNote: "Kept in this browser only (localStorage).", askHeading: "Ask a question", ask: "Ask",
    placeholder: "Ask about the knowledge base… (Enter to ask, Shift+Enter for a new line)",
    headingPath: "Heading path", articleVersion: "Article version", snapshotVersion: "Snapshot version", trace: "Trace",
    thinking: "Searching and reading…", noCitations: "No citation in this answer.", citation: "Citation",
    stop: "Stop reason", traceNone: "Ask a question to see the tool calls.",
    tracePublic: "Traces are shown to API-key callers only (private mode).", traceFailed: "Trace unavailable",
    locators: "locators", openSource: "Open the source of citation", lang: "中文",
  },
  zh: {
    mode: "模式", private: "私有（API 密钥）", public: "公开分享", apiKey: "API 密钥", forgetKey: "清除密钥",
    keyNote: "只保存在本浏览器（localStorage）。", askHeading: "提问", ask: "提问",
    placeholder: "向知识库提问……（回车提问，Shift+回车换行）",
    headingPath: "标题路径", articleVersion: "文章版本", snapshotVersion: "快照版本", trace: "调用记录",
    thinking: "正在检索和阅读……", noCitations: "此回答没有引用。", citation: "引用",
    stop: "停止原因", traceNone: "提问后在此查看工具调用。",
    tracePublic: "调用记录仅对使用 API 密钥的调用者显示（私有模式）。", traceFailed: "无法获取调用记录",
    locators: "个定位", openSource: "打开引用来源", lang: "English",
  },
};
const KEY_STORE = "petrichor.apiKey";
const LANG_STORE = "petrichor.lang";

const $ = (id) => document.getElementById(id);
let lang = localStorage.getItem(LANG_STORE) || (navigator.language.toLowerCase().startsWith("zh") ? "zh" : "en");
let lastAnswer = null;

const t = (key) => TEXT[lang][key];
const isPublic = () => $("mode-public").checked;

function el(tag, props = {}, ...children) {
  const node = Object.assign(document.createElement(tag), props);
  for (const child of children) node.append(child);
  return node;
}

function applyLanguage() {
  document.documentElement.lang = lang === "zh" ? "zh-CN" : "en";
  for (const node of document.querySelectorAll("[data-i18n]")) node.textContent = t(node.dataset.i18n);
  for (const node of document.querySelectorAll("[data-i18n-placeholder]")) node.placeholder = t(node.dataset.i18nPlaceholder);
  $("lang").textContent = t("lang");
  if (lastAnswer) renderAnswer(lastAnswer);
  if (!$("trace-list").children.length) $("trace-note").textContent = t("traceNone");
}

function applyMode() {
  $("key-row").hidden = isPublic();
}

function headers(publicMode) {
  const h = { "Content-Type": "application/json" };
  const key = $("api-key").value.trim();
  if (!publicMode && key) h.Authorization = `Bearer ${key}`;
  return h;
}

async function getJson(url, publicMode, options = {}) {
  const res = await fetch(url, { ...options, headers: headers(publicMode) });
  const doc = await res.json().catch(() => ({ error: `HTTP ${res.status}` }));
  if (!res.ok) throw new Error(doc.error || `HTTP ${res.status}`);
  return doc;
}

// The answer's [n] markers become buttons that open citation n; unknown markers stay plain text.
function renderAnswer(doc) {
  const byMarker = new Map(doc.citations.map((c) => [c.marker, c]));
  const answer = $("answer");
  answer.replaceChildren();
  let last = 0;
  for (const m of doc.answer.matchAll(/\[(\d+)\]/g)) {
    const citation = byMarker.get(Number(m[1]));
    if (!citation) continue;
    answer.append(doc.answer.slice(last, m.index), markerButton(citation));
    last = m.index + m[0].length;
  }
  answer.append(doc.answer.slice(last));
  const list = $("citations");
  list.replaceChildren();
  for (const c of doc.citations) {
    const path = (c.heading_path || []).join(" › ");
    list.append(el("li", { value: c.marker }, markerButton(c), " ", el("strong", { textContent: c.title || c.article_id }),
      path ? el("span", { className: "path", textContent: ` — ${path}` }) : "", el("q", { textContent: c.quote })));
  }
  if (!doc.citations.length) list.append(el("li", { className: "none", textContent: t("noCitations") }));
}

function markerButton(citation) {
  const button = el("button", { type: "button", className: "marker", textContent: `[${citation.marker}]` });
  button.dataset.marker = citation.marker;
  button.setAttribute("aria-label", `${t("openSource")} ${citation.marker}`);
  button.addEventListener("click", () => openCitation(citation, lastAnswer.publicMode));
  return button;
}

// Offsets are code points into the article's content (the server counts as Python does), not UTF-16 units.
async function openCitation(citation, publicMode) {
  const base = publicMode ? "/api/public/articles/" : "/api/articles/";
  $("article").setAttribute("aria-busy", "true");
  try {
    const url = `${base}${encodeURIComponent(citation.article_id)}?chunk_id=${encodeURIComponent(citation.chunk_id)}`;
    const doc = await getJson(url, publicMode);
    const chars = Array.from(doc.content);
    const mark = el("mark", { id: "highlight", textContent: chars.slice(citation.quote_start, citation.quote_end).join("") });
    $("article-content").replaceChildren(chars.slice(0, citation.quote_start).join(""), mark, chars.slice(citation.quote_end).join(""));
    $("article-title").textContent = doc.title;
    $("heading-path").textContent = (doc.heading_path || citation.heading_path || []).join(" › ") || "—";
    $("article-version").textContent = doc.article_version;
    $("snapshot-version").textContent = doc.snapshot_version;
    $("article").hidden = false;
    $("article").dataset.articleId = doc.article_id;
    mark.scrollIntoView({ block: "center" });
    $("article-title").focus({ preventScroll: true });
    if (doc.article_version !== citation.article_version) $("status").textContent = `${t("articleVersion")}: ${citation.article_version} → ${doc.article_version}`;
  } catch (err) {
    $("status").textContent = err.message;
  } finally {
    $("article").setAttribute("aria-busy", "false");
  }
}

async function showTrace(doc) {
  const list = $("trace-list");
  list.replaceChildren();
  if (doc.publicMode) {
    $("trace-note").textContent = `${t("tracePublic")} (${doc.trace_id})`;
    return;
  }
  try {
    const trace = await getJson(`/api/traces/${encodeURIComponent(doc.trace_id)}`, false);
    $("trace-note").textContent = `${trace.question_class} · ${t("stop")}: ${trace.stop_reason} · ${trace.trace_id}`;
    for (const step of trace.steps) {
      list.append(el("li", {},
        el("code", { className: "tool", textContent: step.tool }), " ",
        el("code", { className: "args", textContent: JSON.stringify(step.arguments) }),
        el("span", { className: "locators", textContent: ` · ${step.locators.length} ${t("locators")} · ${step.ms} ms` }),
        step.error ? el("span", { className: "error", textContent: ` · ${step.error}` }) : ""));
    }
  } catch (err) {
    $("trace-note").textContent = `${t("traceFailed")}: ${err.message}`;
  }
}

async function ask(event) {
  event.preventDefault();
  const question = $("question").value.trim();
  if (!question) return;
  const publicMode = isPublic();
  const url = publicMode ? "/api/public/qa/chat" : "/api/assistant/chat";
  $("ask").disabled = true;
  $("status").textContent = t("thinking");
  $("answer").replaceChildren();
  $("citations").replaceChildren();
  $("article").hidden = true;
  try {
    const doc = { ...(await getJson(url, publicMode, { method: "POST", body: JSON.stringify({ question }) })), publicMode };
    lastAnswer = doc;
    $("status").textContent = `${t("stop")}: ${doc.stop_reason} · ${t("snapshotVersion")}: ${doc.snapshot_version}`;
    renderAnswer(doc);
    await showTrace(doc);
  } catch (err) {
    $("status").textContent = err.message;
  } finally {
    $("ask").disabled = false;
  }
}

function init() {
  $("api-key").value = localStorage.getItem(KEY_STORE) || "";
  $("api-key").addEventListener("change", () => localStorage.setItem(KEY_STORE, $("api-key").value.trim()));
  $("forget-key").addEventListener("click", () => {
    localStorage.removeItem(KEY_STORE);
    $("api-key").value = "";
    $("api-key").focus();
  });
  for (const radio of document.querySelectorAll("input[name=mode]")) radio.addEventListener("change", applyMode);
  $("lang").addEventListener("click", () => {
    lang = lang === "en" ? "zh" : "en";
    localStorage.setItem(LANG_STORE, lang);
    applyLanguage();
  });
  $("ask-form").addEventListener("submit", ask);
  $("question").addEventListener("keydown", (event) => {
    if (event.key !== "Enter" || event.shiftKey || event.isComposing) return; // an IME's Enter commits the text
    event.preventDefault();
    $("ask-form").requestSubmit();
  });
  applyMode();
  applyLanguage();
  $("question").focus();
}

document.addEventListener("DOMContentLoaded", init);
