"""`ChatModel` on any OpenAI-compatible chat-completions endpoint.

Each operation renders its prompt (`prompts`), sends one request through `EndpointClient` (shared
concurrency limit, bounded retries, usage per op and article), recovers the JSON object from the reply
(`jsonparse`) and checks it against the operation's contract. `response_format` is not sent: several
compatible servers reject it, and the prompts already demand JSON only.
"""

from __future__ import annotations

from typing import Any, Sequence

from openai.types.chat import ChatCompletion

from petrichor_pipeline.config import BuildLimits, ModelEndpoint
from petrichor_pipeline.models import prompts
from petrichor_pipeline.models.protocols import (
    CallContext,
    CandidateRequest,
    EvidenceText,
    ModelError,
    PageRequest,
    QuestionChunk,
    TreeNodeText,
    UsageMeter,
)
from petrichor_pipeline.models.jsonparse import JSONReplyError, parse_json_reply
from petrichor_pipeline.models.transport import EndpointClient


TOOL_OP = "agent.tools"
"""The usage op of the agent's tool-calling turns."""


class OpenAIChatModel:
    def __init__(
        self,
        endpoint: ModelEndpoint,
        limits: BuildLimits | None = None,
        meter: UsageMeter | None = None,
        *,
        backoff_base_s: float = 1.0,
    ):
        if not endpoint.configured:
            raise ValueError("OpenAIChatModel needs an endpoint base_url")
        self.fingerprint = f"openai:{endpoint.model}:{prompts.PROMPT_VERSION}"
        self._model = endpoint.model
        self._client = EndpointClient(endpoint, limits or BuildLimits(), meter, backoff_base_s)

    def generate_questions(self, chunks: Sequence[QuestionChunk], ctx: CallContext) -> dict[str, Any]:
        return self._ask(prompts.QUESTIONS, prompts.questions_user_message(chunks), ctx, ctx.guide)

    def extract_candidates(self, req: CandidateRequest, ctx: CallContext) -> dict[str, Any]:
        return self._ask(prompts.CANDIDATES, prompts.candidates_user_message(req), ctx, ctx.guide)

    def plan_catalog(self, candidates: Sequence[dict[str, Any]], existing_folders: Sequence[str], ctx: CallContext) -> dict[str, Any]:
        return self._ask(prompts.CATALOG, prompts.catalog_user_message(candidates, existing_folders), ctx, ctx.guide)

    def generate_pages(self, req: PageRequest, ctx: CallContext) -> dict[str, Any]:
        return self._ask(prompts.PAGES, prompts.pages_user_message(req), ctx, ctx.guide)

    def summarize_tree(self, nodes: Sequence[TreeNodeText], ctx: CallContext) -> dict[str, Any]:
        return self._ask(prompts.TREE_SUMMARIES, prompts.tree_user_message(nodes), ctx, guide="")

    def answer(self, question: str, evidence: Sequence[EvidenceText], ctx: CallContext) -> dict[str, Any]:
        return self._ask(prompts.ANSWER, prompts.answer_user_message(question, evidence), ctx, guide="")

    def complete_with_tools(self, messages: Sequence[dict[str, Any]], tools: Sequence[dict[str, Any]], ctx: CallContext) -> dict[str, Any]:
        """One chat completion with OpenAI function calling: `{"content", "tool_calls": [{"id", "name",
        "arguments"}]}`, the arguments as the raw string the model sent (the caller parses and checks them)."""

        def send(client: Any) -> ChatCompletion:
            return client.chat.completions.create(model=self._model, messages=list(messages), tools=list(tools))

        def parse(reply: ChatCompletion) -> dict[str, Any]:
            if not reply.choices:
                raise ModelError(TOOL_OP, "reply has no choices")
            message = reply.choices[0].message
            calls = [
                {"id": call.id, "name": call.function.name, "arguments": call.function.arguments or ""}
                for call in message.tool_calls or []
                if getattr(call, "function", None) is not None
            ]
            return {"content": message.content, "tool_calls": calls}

        return self._client.call(TOOL_OP, ctx.article_id, send, parse)

    def _ask(self, prompt: prompts.Prompt, user: str, ctx: CallContext, guide: str) -> dict[str, Any]:
        """One request; the compile guide reaches only the build prompts (the spec names those four)."""
        messages = [
            {"role": "system", "content": prompts.system_prompt(prompt.system, guide)},
            {"role": "user", "content": user},
        ]

        def send(client: Any) -> ChatCompletion:
            return client.chat.completions.create(model=self._model, messages=messages)

        def parse(reply: ChatCompletion) -> dict[str, Any]:
            content = reply.choices[0].message.content if reply.choices else None
            try:
                parsed = parse_json_reply(content or "")
            except JSONReplyError as error:
                raise ModelError(prompt.op, f"reply is not valid JSON for the contract: {error}") from error
            if not prompt.accepts(parsed):
                expected = " or ".join(f'"{key}"' for key in prompt.contract)
                raise ModelError(prompt.op, f"reply is not valid JSON for the contract: expected {expected} at the top level")
            return parsed

        return self._client.call(prompt.op, ctx.article_id, send, parse)
