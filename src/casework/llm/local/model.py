"""``LocalChatModel``: the bundled model as a LangChain chat model with real tool calling."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from langchain_core.callbacks import CallbackManagerForLLMRun
from langchain_core.language_models import BaseChatModel, LanguageModelInput
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.runnables import Runnable
from langchain_core.tools import BaseTool
from pydantic import ConfigDict, Field

from casework.errors import ConfigError, ModelError
from casework.llm.bundled import MODEL_NAME
from casework.llm.local import engine
from casework.llm.local.prompt import parse_output, render_prompt
from casework.llm.local.schema import (
    ToolSpec,
    build_output_schema,
    normalize_tool_choice,
    to_tool_specs,
)

__all__ = ["KNOWN_LOCAL_MODELS", "LocalChatModel", "is_local_model", "load_local_model"]

KNOWN_LOCAL_MODELS = (MODEL_NAME,)


class LocalChatModel(BaseChatModel):
    """Qwen2.5-Coder-1.5B (GGUF) on llama.cpp with schema-constrained tool calling.

    ``bind_tools`` returns a Runnable that works with ``langchain.agents.create_agent``. Each
    turn yields either ``AIMessage(content="", tool_calls=[one call])`` or
    ``AIMessage(content=answer)``, with ``usage_metadata`` and ``response_metadata``
    (``model_name``, ``prompt_tokens_evaluated`` = prompt tokens llama.cpp actually evaluated,
    i.e. not served from the prefix cache). Deterministic by default (greedy, fixed seed).
    Raises ConfigError when the model file is missing and ModelError when a reply is unusable.
    """

    model_config = ConfigDict(arbitrary_types_allowed=True)

    model_path: Path
    model_name: str = MODEL_NAME
    n_ctx: int = 8192
    n_threads: int = 2
    max_tokens: int = 384
    """Generated tokens per turn."""
    temperature: float = 0.0
    seed: int = 42
    max_string_length: int = 400
    """maxLength given to every free-text string in the output schema."""
    max_items: int = 16
    """maxItems/maxProperties given to unbounded arrays and maps."""
    max_tool_result_chars: int = 3000
    """Tool results longer than this are truncated in the prompt."""
    extra_stop: list[str] = Field(default_factory=list)

    @property
    def _llm_type(self) -> str:
        return "casework-local-llamacpp"

    @property
    def _identifying_params(self) -> dict[str, Any]:
        return {
            "model_name": self.model_name,
            "n_ctx": self.n_ctx,
            "max_tokens": self.max_tokens,
            "temperature": self.temperature,
            "seed": self.seed,
        }

    def bind_tools(
        self,
        tools: Sequence[dict[str, Any] | type | Callable[..., Any] | BaseTool],
        *,
        tool_choice: Any = None,
        **kwargs: Any,
    ) -> Runnable[LanguageModelInput, AIMessage]:
        """Bind tools; every later call is constrained to one of them (or a final answer).

        ``tool_choice``: None/"auto", "any"/"required", "none", or a tool name. Extras that
        only matter to hosted APIs (``parallel_tool_calls``, ``strict``, ``response_format``)
        are accepted and ignored: this model makes one schema-exact call per turn anyway.
        """
        specs = to_tool_specs(tools)
        normalize_tool_choice(tool_choice, [s.name for s in specs])  # fail early on a bad name
        for ignored in ("parallel_tool_calls", "strict", "response_format"):
            kwargs.pop(ignored, None)
        # Bind plain OpenAI-style dicts: serialisable for tracing and callbacks.
        formatted = [
            {
                "type": "function",
                "function": {
                    "name": s.name,
                    "description": s.description,
                    "parameters": s.parameters,
                },
            }
            for s in specs
        ]
        return self.bind(tools=formatted, tool_choice=tool_choice, **kwargs)

    # The engine is loaded lazily so constructing/binding a model is cheap.
    def _get_engine(self) -> engine.Engine:
        if not Path(self.model_path).is_file():
            raise ConfigError(engine.MISSING_MODEL)
        # looked up on the module so tests can swap the engine
        return engine.engine_for(Path(self.model_path), self.n_ctx, self.n_threads)

    def load(self) -> float:
        """Load the model now (once per process) and return the seconds the load took."""
        return self._get_engine().load_seconds

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        specs: list[ToolSpec] = to_tool_specs(kwargs.get("tools") or [])
        tool_choice = kwargs.get("tool_choice")
        max_tokens = int(kwargs.get("max_tokens") or self.max_tokens)
        temperature = float(kwargs.get("temperature", self.temperature))
        prompt = render_prompt(
            messages, specs, tool_choice, max_tool_result_chars=self.max_tool_result_chars
        )
        request: dict[str, Any] = {
            "prompt": prompt,
            "max_tokens": max_tokens,
            "temperature": temperature,
            "top_k": 1 if temperature == 0 else 40,
            "seed": int(kwargs.get("seed", self.seed)),
            "cache_prompt": True,
            "stream": False,
        }
        if specs:
            request["json_schema"] = build_output_schema(
                specs,
                tool_choice,
                max_string_length=self.max_string_length,
                max_items=self.max_items,
            )
        else:
            request["stop"] = ["<|im_end|>", "<|endoftext|>", *self.extra_stop, *(stop or [])]
            if kwargs.get("grammar"):  # free text under a GBNF grammar: never malformed
                request["grammar"] = kwargs["grammar"]

        result, seconds = self._raw_completion(request)

        choice = result["choices"][0]
        text: str = choice.get("text", "")
        finish = choice.get("finish_reason")
        if finish == "length" and kwargs.get("grammar"):
            raise ModelError(
                f"The local model's constrained reply was cut at max_tokens={max_tokens}; raise it."
            )
        if specs:
            if finish == "length":
                raise ModelError(
                    f"The local model's reply was cut at max_tokens={max_tokens} before its "
                    "JSON was complete; raise max_tokens or lower max_string_length."
                )
            message = parse_output(text, specs, tool_choice)
        else:
            message = AIMessage(content=text.strip())

        usage = result.get("usage") or {}
        timings = result.get("timings") or {}
        prompt_tokens = int(usage.get("prompt_tokens", 0))
        completion_tokens = int(usage.get("completion_tokens", 0))
        message.usage_metadata = {
            "input_tokens": prompt_tokens,
            "output_tokens": completion_tokens,
            "total_tokens": prompt_tokens + completion_tokens,
            "input_token_details": {"cache_read": int(timings.get("cache_n", 0))},
        }
        message.response_metadata = {
            "model_name": self.model_name,
            "model_provider": "local",
            "finish_reason": finish,
            "prompt_tokens_evaluated": int(timings.get("prompt_n", prompt_tokens)),
            "cached_tokens": int(timings.get("cache_n", 0)),
            "prompt_ms": float(timings.get("prompt_ms", 0.0)),
            "predicted_ms": float(timings.get("predicted_ms", 0.0)),
            "seconds": round(seconds, 3),
        }
        return ChatResult(generations=[ChatGeneration(message=message)])

    def _raw_completion(self, request: dict[str, Any]) -> tuple[dict[str, Any], float]:
        """One llama.cpp completion (``Engine.complete``: one at a time, warm-started):
        (result, seconds)."""
        loaded = self._get_engine()
        start = time.perf_counter()
        try:
            result = loaded.complete(request)
        except Exception as exc:
            raise ModelError(f"llama.cpp failed on the local model request: {exc}.") from exc
        if not isinstance(result, dict):
            raise ModelError(f"llama.cpp returned an unexpected result: {result!r:.200}.")
        if "error" in result:
            raise _request_error(result["error"], self.n_ctx)
        return result, time.perf_counter() - start

    def score_options(
        self, messages: Sequence[BaseMessage], options: Sequence[str]
    ) -> tuple[dict[str, float], dict[str, int | float]]:
        """The log-probability the model gives each option as its whole reply.

        Each option is forced by a grammar and the log-probabilities the model gave its tokens
        before the grammar (and the end-of-turn after them) are summed: an exact sequence
        score, not a first-token guess, so options sharing a prefix are told apart. The
        prompt is evaluated once; each further option reuses the cached prefix.
        Returns (option -> log-probability, usage: prompt/completion tokens and seconds).
        """
        prompt = render_prompt(messages, (), None, max_tool_result_chars=self.max_tool_result_chars)
        scores: dict[str, float] = {}
        usage: dict[str, int | float] = {"input_tokens": 0, "output_tokens": 0, "seconds": 0.0}
        for option in dict.fromkeys(options):
            literal = json.dumps(option)  # GBNF string literals take JSON's escapes
            result, seconds = self._raw_completion(
                {
                    "prompt": prompt,
                    "grammar": f"root ::= {literal}",
                    "max_tokens": 64,
                    "n_probs": 1,
                    "temperature": 0.0,
                    "top_k": 1,
                    "seed": self.seed,
                    "cache_prompt": True,
                    "stream": False,
                }
            )
            choice = result["choices"][0]
            tokens = (choice.get("logprobs") or {}).get("content") or []
            if choice.get("text", "") != option or not tokens:
                raise ModelError(f"The local model could not be scored on option {option!r}.")
            scores[option] = float(sum(t["logprob"] for t in tokens))
            timings = result.get("timings") or {}
            usage["input_tokens"] += int(timings.get("prompt_n", 0))
            usage["output_tokens"] += len(tokens)
            usage["seconds"] += seconds
        return scores, usage

    def generate_constrained(
        self,
        messages: Sequence[BaseMessage],
        *,
        grammar: str | None = None,
        json_schema: dict[str, Any] | None = None,
        max_tokens: int | None = None,
    ) -> tuple[str, dict[str, int | float]]:
        """The model's reply decoded under a GBNF ``grammar`` or a ``json_schema`` (exactly
        one), so it is never malformed. A reply cut at ``max_tokens`` raises ModelError.
        Returns (text, usage)."""
        if (grammar is None) == (json_schema is None):
            raise ValueError("give exactly one of grammar and json_schema")
        limit = int(max_tokens or self.max_tokens)
        request: dict[str, Any] = {
            "prompt": render_prompt(
                messages, (), None, max_tool_result_chars=self.max_tool_result_chars
            ),
            "max_tokens": limit,
            "temperature": self.temperature,
            "top_k": 1 if self.temperature == 0 else 40,
            "seed": self.seed,
            "cache_prompt": True,
            "stream": False,
        }
        if grammar is not None:
            request["grammar"] = grammar
        else:
            request["json_schema"] = json_schema
        result, seconds = self._raw_completion(request)
        choice = result["choices"][0]
        if choice.get("finish_reason") == "length":
            raise ModelError(
                f"The local model's constrained reply was cut at max_tokens={limit}; raise it."
            )
        usage_in = result.get("usage") or {}
        usage: dict[str, int | float] = {
            "input_tokens": int(usage_in.get("prompt_tokens", 0)),
            "output_tokens": int(usage_in.get("completion_tokens", 0)),
            "seconds": seconds,
        }
        return str(choice.get("text", "")), usage

    async def _agenerate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: Any = None,
        **kwargs: Any,
    ) -> ChatResult:
        # llama.cpp blocks a CPU for seconds: keep the event loop free.
        return await asyncio.to_thread(self._generate, messages, stop, None, **kwargs)


def _request_error(error: Any, n_ctx: int) -> ModelError:
    if isinstance(error, Mapping) and error.get("type") == "exceed_context_size_error":
        return ModelError(
            f"The conversation needs {error.get('n_prompt_tokens')} tokens but the local model's "
            f"context is {n_ctx}: raise CASEWORK_LOCAL_CTX or shorten tool results."
        )
    message = error.get("message") if isinstance(error, Mapping) else error
    return ModelError(f"llama.cpp rejected the local model request: {message}.")


def load_local_model(name: str = MODEL_NAME, **kwargs: Any) -> LocalChatModel:
    """The bundled model by name (``local:<name>``), prepared and verified on first use.

    Keyword arguments override LocalChatModel fields (max_tokens, n_ctx, …). Raises ConfigError
    for an unknown name or when the model parts are not installed.
    """
    from casework.config import get_settings
    from casework.llm.bundled import ensure_model

    if name not in KNOWN_LOCAL_MODELS:
        raise ConfigError(
            f"Unknown local model {name!r}; the bundled one is {', '.join(KNOWN_LOCAL_MODELS)}."
        )
    settings = get_settings()
    path = ensure_model(settings.models_dir)
    kwargs.setdefault("n_ctx", settings.local_ctx)
    kwargs.setdefault("n_threads", settings.local_threads)
    return LocalChatModel(model_path=path, model_name=name, **kwargs)


def is_local_model(model: object) -> bool:
    """Whether ``model`` is the bundled model on this machine (not a remote or scripted one)."""
    return isinstance(model, LocalChatModel)
