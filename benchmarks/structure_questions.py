"""Structure questions over the rhdh dev guides: the wording is ours, the expected children come from the tree.

Each question names a guide and one of its sections and asks what that section covers, phrased as users
ask. `python benchmarks/structure_questions.py [docs.jsonl]` writes `benchmarks/data/rhdh_structure.jsonl`, taking each
section's child headings from `parse_markdown_tree` over the guide (never typed by hand).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
DOCS = REPO.parent / "shared" / "eval" / "rhdh_docs_en" / "docs.jsonl"
OUT = REPO / "benchmarks" / "data" / "rhdh_structure.jsonl"

QUESTIONS: list[tuple[str, str, str]] = [
    # (doc_id, section heading, question)
    ("adoption-insights", "Viewing the Adoption Insights card", "In the Adoption Insights guide, what can I see on the Adoption Insights card?"),
    ("authorization", "Supported RBAC REST API endpoints", "Which groups of RBAC REST API endpoints does the authorization guide list?"),
    ("configuring", "Automated Operator features", "What does the part on automated Operator features cover in Configuring Red Hat Developer Hub?"),
    (
        "configuring",
        "Mounts for default Secrets and Persistent Volume Claims (PVCs)",
        "configuring guide: what's under mounts for default secrets and PVCs?",
    ),
    (
        "customizing",
        "Tracking Component origin and Software Template version",
        "What topics are in the tracking component origin and software template version section of the customizing guide?",
    ),
    (
        "customizing",
        "About the sidebar menu items for your Developer Hub instance",
        "Customizing guide — list the subsections about sidebar menu items.",
    ),
    ("customizing", "Default Red Hat Developer Hub theme", "What does the customizing guide say under the default Red Hat Developer Hub theme?"),
    ("customizing", "Default Backstage theme", "Break down the Default Backstage theme section of Customizing Red Hat Developer Hub for me."),
    ("customizing", "Localization support for plugins", "What is covered about localization support for plugins when customizing Developer Hub?"),
    (
        "developer-lightspeed",
        "Customizing Developer Lightspeed for RHDH",
        "How is the section on customizing Developer Lightspeed organised in the Lightspeed guide?",
    ),
    (
        "developer-lightspeed",
        "Using Developer Lightspeed for RHDH",
        "What are the parts of 'Using Developer Lightspeed for RHDH' in the Developer Lightspeed guide?",
    ),
    (
        "developer-lightspeed",
        "Appendix: LLM requirements",
        "Which topics does the LLM requirements appendix of the Developer Lightspeed guide go through?",
    ),
    (
        "developer-lightspeed",
        "Appendix About user data security",
        "Give me an overview of the user data security appendix in the Developer Lightspeed doc.",
    ),
    (
        "monitoring-and-logging",
        "Monitoring with Amazon Prometheus",
        "In Monitoring and logging, what steps are under monitoring with Amazon Prometheus?",
    ),
    (
        "monitoring-and-logging",
        "Logging with Amazon CloudWatch",
        "What does the monitoring and logging guide cover for logging with Amazon CloudWatch?",
    ),
    (
        "orchestrator",
        "Enabling Orchestrator plugins components",
        "What are the ways to enable the Orchestrator plugin components described in the Orchestrator guide?",
    ),
    ("orchestrator", "Benefits of workflow images", "Orchestrator guide: what's in the benefits of workflow images section?"),
    (
        "orchestrator",
        "Building workflow images locally",
        "Summarise the subsections of building workflow images locally in the Orchestrator documentation.",
    ),
    ("plugins-rhdh-configure", "Keycloack plugin metrics", "What does the Keycloak plugin metrics part of Configuring dynamic plugins include?"),
    (
        "plugins-rhdh-configure",
        "Configuring the Topology plugin",
        "Which subsections does configuring the Topology plugin have in the dynamic plugins configuration guide?",
    ),
    (
        "plugins-rhdh-configure",
        "Managing labels and annotations for Topology plugins",
        "What is under managing labels and annotations for Topology plugins in Configuring dynamic plugins?",
    ),
    (
        "plugins-rhdh-install",
        "Dynamic plugins dependency management",
        "In Installing and viewing plugins, what does dynamic plugins dependency management cover?",
    ),
    (
        "plugins-rhdh-install",
        "Packaging and publishing custom plugins as dynamic plugins",
        "What are the options listed for packaging and publishing custom plugins as dynamic plugins in the plugin installation guide?",
    ),
    (
        "plugins-rhdh-install",
        "Installing custom plugins in Red Hat Developer Hub",
        "The installing plugins guide has a section on installing custom plugins — what does it contain?",
    ),
    (
        "plugins-rhdh-install",
        "Managing plugins by using Extensions",
        "What can you do under managing plugins by using Extensions, per the plugins install guide?",
    ),
    ("plugins-rhdh-install", "Using mount points", "Tell me what the using mount points section of Installing and viewing plugins walks through."),
    (
        "plugins-rhdh-reference",
        "Technology Preview plugins",
        "Which lists are in the Technology Preview plugins section of the dynamic plugins reference?",
    ),
    ("rel-notes-rhdh", "Fixed issues in 1.8.0", "Release notes: which fixed issues in 1.8.0 are listed?"),
    (
        "setting-up-and-configuring-your-first-red-hat-developer-hub-instance",
        "Authenticating with the Guest user",
        "In the first instance setup guide, what does authenticating with the Guest user explain?",
    ),
    (
        "techdocs",
        "Configuring storage for TechDocs files",
        "What storage options does the TechDocs guide describe under configuring storage for TechDocs files?",
    ),
    (
        "techdocs",
        "Configuring OpenShift Data Foundation for file storage",
        "TechDocs: what's covered in configuring OpenShift Data Foundation for file storage?",
    ),
    (
        "techdocs",
        "Installing and configuring a TechDocs add-on",
        "What are the subsections of installing and configuring a TechDocs add-on in the TechDocs guide?",
    ),
    ("techdocs", "Using TechDocs add-ons", "What does the TechDocs documentation go over in the section on using TechDocs add-ons?"),
]


def write(docs_path: Path = DOCS, out: Path = OUT) -> int:
    from petrichor_pipeline.knowledge.page_index import parse_markdown_tree

    docs = {d["doc_id"]: d for d in map(json.loads, docs_path.read_text(encoding="utf-8").splitlines())}
    rows = []
    for n, (doc_id, section, question) in enumerate(QUESTIONS, 1):
        doc = docs[doc_id]
        nodes = parse_markdown_tree(doc["content"], doc["title"], doc_id)
        node = next(x for x in nodes[1:] if x.title == section)
        children = [x.title for x in nodes if x.parent == node.position]
        rows.append({"qid": f"s{n:02d}", "doc_id": doc_id, "guide": doc["title"], "section": section, "question": question, "children": children})
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    return len(rows)


if __name__ == "__main__":
    docs = Path(sys.argv[1]) if len(sys.argv) > 1 else DOCS
    print(f"wrote {write(docs)} questions to {OUT}", file=sys.stderr)
