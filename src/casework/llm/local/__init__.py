"""The bundled model as a LangChain chat model with real tool calling, on llama.cpp (CPU).

Binding choice — ``xllamacpp`` (prebuilt wheel) over ``llama-cpp-python`` (source build).
Measured on the 2-core build machine with Qwen2.5-Coder-1.5B Q4_K_M (xllamacpp 2026.10.11549,
2 threads): model load 1.9-3.6 s (file in page cache), prompt ~60-68 tok/s, generation
~30 tok/s, one tool-choice turn with 3-5 tools ~6.4 s mean (``casework bench local-tools``),
and the llama.cpp server's prompt cache reuses the common prefix of consecutive requests
(step 2 of a tool loop evaluated 82 of 558 prompt tokens). JSON-schema constraints are
compiled natively by LLGuidance (no Python grammar converter on the hot path), and the server
API is thread safe. ``llama-cpp-python`` would need a ~7-minute compile on every fresh machine
and offers nothing we need on top, so it was not built or measured. Known trade-off: the
wheel's CPU kernels stop at AVX2/FMA (``get_system_info()``), while these EPYC machines have
AVX-512, so a native build might evaluate prompts somewhat faster. One xllamacpp caveat
shapes the code below: when a schema fails to compile, llama.cpp logs an error and silently
samples *unconstrained* — so schemas are reduced to a keyword whitelist LLGuidance supports
(``lenient`` as a safety net) and every output is checked against the bound tools before it
becomes a tool call.

Protocol with the model (one call per turn). The system turn lists the tools; the model
answers with exactly one JSON object, constrained by an ``anyOf`` schema:
``{"tool": "<name>", "arguments": {...}}`` per bound tool, plus
``{"tool": "final_answer", "arguments": {"text": "..."}}`` unless ``tool_choice`` forces a
tool. Tool results go back as user turns. Rendering is deterministic and an assistant turn is
rendered exactly as the model wrote it, so each step's prompt extends the previous
prompt + output and llama.cpp only evaluates the new tokens.

Layout: ``schema`` (tools and the output schema), ``prompt`` (rendering and parsing),
``engine`` (the llama.cpp server), ``model`` (``LocalChatModel``).
"""

from __future__ import annotations

from casework.llm.local.engine import llama_load_check
from casework.llm.local.model import (
    KNOWN_LOCAL_MODELS,
    LocalChatModel,
    is_local_model,
    load_local_model,
)
from casework.llm.local.prompt import DEFAULT_SYSTEM, parse_output, render_prompt
from casework.llm.local.schema import (
    FINAL_ANSWER,
    ToolSpec,
    build_output_schema,
    normalize_tool_choice,
    sanitize_schema,
    to_tool_specs,
)

__all__ = [
    "DEFAULT_SYSTEM",
    "FINAL_ANSWER",
    "KNOWN_LOCAL_MODELS",
    "LocalChatModel",
    "ToolSpec",
    "build_output_schema",
    "is_local_model",
    "llama_load_check",
    "load_local_model",
    "normalize_tool_choice",
    "parse_output",
    "render_prompt",
    "sanitize_schema",
    "to_tool_specs",
]
