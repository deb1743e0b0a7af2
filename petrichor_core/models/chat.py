"""`ChatModel` on any OpenAI-compatible chat-completions endpoint.

Each operation renders its prompt (`prompts`), sends one request through `EndpointClient` (shared
concurrency limit, bounded retries, usage per op and article), recovers the JSON object from the reply
(`jsonparse`) and checks it against the operation's contract (`reply_contract`). Requests carry the
`response_format` hint built from that contract where the endpoint accepts one (`response_format`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from openai.types.chat import ChatCompletion

from petrichor_core.config import BuildLimits, ModelEndpoint
from petrichor_core.models import prompts
from petrichor_core.models.protocols import (
    CallContext,
    CandidateRequest,
    EvidenceText,
    ModelError,
    PageRequest,
    QuestionChunk,
    TreeNodeText,
    UsageMeter,
)
from petrichor_core.models.reply_contract import ContractViolation
from petrichor_core.models.response_format import ResponseFormats, response_format
from petrichor_core.models.transport import EndpointClient
from petrichor_core.versions import CHAT_PROMPT_VERSION

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
        self.fingerprint = f"openai:{endpoint.model}:{CHAT_PROMPT_VERSION}"
        self._model = endpoint.model
        self._client = EndpointClient(endpoint, limits or BuildLimits(), meter, backoff_base_s)
        self._endpoint_key = (endpoint.base_url, endpoint.model)
        self.response_formats = ResponseFormats(endpoint.response_format)

    def generate_questions(self, chunks: Sequence[QuestionChunk], ctx: CallContext) -> dict[str, Any]:
        keys = [c.key for c in chunks]
        return self._ask(prompts.QUESTIONS, prompts.questions_user_message(chunks), ctx, ctx.guide, keys)

    def extract_candidates(self, req: CandidateRequest, ctx: CallContext) -> dict[str, Any]:
        return self._ask(prompts.CANDIDATES, prompts.candidates_user_message(req), ctx, ctx.guide)

    def plan_catalog(self, candidates: Sequence[dict[str, Any]], existing_folders: Sequence[str], ctx: CallContext) -> dict[str, Any]:
        return self._ask(prompts.CATALOG, prompts.catalog_user_message(candidates, existing_folders), ctx, ctx.guide)

    def generate_pages(self, req: PageRequest, ctx: CallContext) -> dict[str, Any]:
        return self._ask(prompts.PAGES, prompts.pages_user_message(req), ctx, ctx.guide)

    def summarize_tree(self, nodes: Sequence[TreeNodeText], ctx: CallContext) -> dict[str, Any]:
        keys = [str(n.position) for n in nodes]
        return self._ask(prompts.TREE_SUMMARIES, prompts.tree_user_message(nodes), ctx, "", keys)

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
                {"id": call.id, "name": function.name, "arguments": function.arguments or ""}
                for call in message.tool_calls or []
                if (function := getattr(call, "function", None)) is not None
            ]
            return {"content": message.content, "tool_calls": calls}

        return self._client.call(TOOL_OP, ctx.article_id, send, parse)

    def complete_answer(self, messages: Sequence[dict[str, Any]], tools: Sequence[dict[str, Any]], ctx: CallContext) -> str:
        """The tool loop's answer turn: the same conversation with tools offered but not callable
        (`tool_choice: none`) and the ANSWER contract as the `response_format` hint, negotiated per endpoint
        as for every other prompt (json_schema, else json_object with the schema, else none). Returns the
        reply's text; the caller parses and checks it."""
        contract = prompts.ANSWER.contract

        def attempt(form: str) -> str:
            hint = response_format(form, contract)
            extra = {"response_format": hint} if hint else {}

            def send(client: Any) -> ChatCompletion:
                return client.chat.completions.create(model=self._model, messages=list(messages), tools=list(tools), tool_choice="none", **extra)

            def parse(reply: ChatCompletion) -> str:
                if not reply.choices:
                    raise ModelError(TOOL_OP, "reply has no choices")
                return reply.choices[0].message.content or ""

            return self._client.call(TOOL_OP, ctx.article_id, send, parse)

        return self.response_formats.call(self._endpoint_key, attempt)

    def _ask(self, prompt: prompts.Prompt, user: str, ctx: CallContext, guide: str, keys: Sequence[str] = ()) -> dict[str, Any]:
        """One exchange; a reply of valid JSON in the wrong shape gets one retry that names the problem.

        The compile guide reaches only the build prompts (the spec names those four); `keys` are what
        the request's keyed map must hold (chunk ids, section positions) in the structured-output schema.
        """
        messages = [
            {"role": "system", "content": prompts.system_prompt(prompt.system, guide)},
            {"role": "user", "content": user},
        ]
        try:
            return self._exchange(prompt, messages, ctx, keys)
        except ContractViolation as violation:
            follow_up = prompts.CONTRACT_RETRY_LINE.format(detail=violation.detail)
            retry = [*messages, {"role": "assistant", "content": violation.reply_text}, {"role": "user", "content": follow_up}]
            return self._exchange(prompt, retry, ctx, keys)

    def _exchange(self, prompt: prompts.Prompt, messages: list[dict[str, str]], ctx: CallContext, keys: Sequence[str]) -> dict[str, Any]:
        """One request, with the `response_format` hint the endpoint is known (or being probed) to accept."""

        def attempt(form: str) -> dict[str, Any]:
            hint = response_format(form, prompt.contract, keys)
            extra = {"response_format": hint} if hint else {}

            def send(client: Any) -> ChatCompletion:
                return client.chat.completions.create(model=self._model, messages=messages, **extra)

            def parse(reply: ChatCompletion) -> dict[str, Any]:
                content = reply.choices[0].message.content if reply.choices else None
                return prompt.contract.parse(prompt.op, content or "")

            return self._client.call(prompt.op, ctx.article_id, send, parse)

        return self.response_formats.call(self._endpoint_key, attempt)
