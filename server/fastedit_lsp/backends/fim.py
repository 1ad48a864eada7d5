"""Fill-in-the-middle on the wire: where each FIM dialect lives, its request body, its chunks.

Pure: no httpx, no pygls. A completion that does not go through a chat prompt (``fim: chat``,
see :func:`fastedit_lsp.prompting.prompts.fim_chat_messages`) speaks one of three dialects, all
streamed as server-sent events:

* ``completions``: OpenAI's legacy ``POST {baseUrl}/completions`` with ``prompt`` (the text
  before the cursor) and ``suffix`` (after it); also DeepSeek beta, vLLM and Ollama's OpenAI API.
  Chunks carry ``choices[i].text``; the stream ends with ``[DONE]``.
* ``infill``: llama.cpp's native ``POST /infill``, at the server root (``baseUrl`` without its
  ``/v1``), with ``input_prefix``, ``input_suffix`` and ``input_extra`` (other files, which
  repository-aware FIM models see as whole files). Chunks are ``{"content", "stop"}``; the one
  with ``"stop": true`` is the last, and no ``[DONE]`` follows.
* ``mistral``: Codestral's ``POST {baseUrl}/fim/completions`` (``prompt`` + ``suffix``); its
  chunks have the chat shape, ``choices[0].delta.content``, then ``[DONE]``.
* ``inception``: Inception's ``POST {baseUrl}/fim/completions`` (Mercury Edit: ``prompt`` +
  ``suffix``, as Mistral's path), whose chunks have the completions shape, ``choices[0].text``,
  then ``[DONE]``.

The two ``prompt``/``suffix`` dialects have no field for other files, so those go in front of the
prefix as a comment block labelled with each file's path (what Copilot and Continue send).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Final, Literal, get_args

from .base import sendable
from .presets import Preset
from .sse import ChatChunk, parse_chat_chunk, parse_infill_chunk

FimKind = Literal["completions", "infill", "mistral", "inception"]
FIM_KINDS: Final[tuple[FimKind, ...]] = get_args(FimKind)

#: Languages whose line comment is not ``//`` (the default: C, Java, JS, Go, Rust, ...).
_LINE_COMMENTS: Final[dict[str, str]] = {
    **dict.fromkeys(
        (
            "python",
            "ruby",
            "shellscript",
            "perl",
            "r",
            "yaml",
            "toml",
            "makefile",
            "dockerfile",
            "elixir",
            "julia",
            "powershell",
            "nim",
            "coffeescript",
        ),
        "#",
    ),
    **dict.fromkeys(("lua", "sql", "haskell", "elm", "ada"), "--"),
}


@dataclass(frozen=True)
class FimRequest:
    """One fill-in-the-middle call; ``max_tokens`` is always tight (rate limiters reserve it)."""

    prefix: str
    suffix: str
    max_tokens: int
    temperature: float = 0.2
    stop: tuple[str, ...] = ()
    #: ``(path, text)`` excerpts of other files, most relevant first.
    snippets: tuple[tuple[str, str], ...] = ()
    #: The completed file's path, as shown to the model (relative to the workspace if possible).
    path: str = ""
    language_id: str = ""


def fim_endpoint(kind: FimKind, base_url: str) -> str:
    """The full URL a ``kind`` request is posted to, from the profile's ``baseUrl``."""
    base = base_url.rstrip("/")
    if kind == "infill":
        # llama.cpp serves /infill beside its OpenAI-compatible /v1, not under it.
        return f"{base.removesuffix('/v1')}/infill"
    if kind in ("mistral", "inception"):
        return f"{base}/fim/completions"
    return f"{base}/completions"


def fim_base_url(preset: Preset, base_url: str) -> str:
    """Where a profile's FIM is served: the preset's FIM base URL (DeepSeek's beta API) when the
    profile uses the preset's own ``baseUrl``, else ``baseUrl`` (a URL the user set is kept)."""
    base = base_url.rstrip("/")
    at_preset = base == (preset.base_url or "").rstrip("/")
    return preset.fim_base_url if preset.fim_base_url and at_preset else base


def build_fim_body(
    kind: FimKind, request: FimRequest, *, model: str, preset: Preset
) -> dict[str, Any]:
    """The JSON body of a streamed ``kind`` call, its text made :func:`~.base.sendable`.

    ``stop`` is sent only when there are stop sequences, as for chat. ``infill`` sends ``model``
    when one is known: a single-model llama.cpp ignores it, and the routers put in front of
    several (llama-swap, llama.cpp's router mode) need it to pick the model.
    """
    body: dict[str, Any]
    if kind == "infill":
        body = {
            "input_prefix": sendable(request.prefix),
            "input_suffix": sendable(request.suffix),
            "input_extra": [
                {"filename": sendable(path), "text": sendable(text)}
                for path, text in request.snippets
            ],
            "n_predict": request.max_tokens,
            "temperature": request.temperature,
            "stream": True,
            # Consecutive completions share most of their prompt: let the server reuse its cache.
            "cache_prompt": True,
        }
        if model:
            body["model"] = model
    else:
        body = {
            "model": model,
            "prompt": sendable(_with_snippets(request)),
            "suffix": sendable(request.suffix),
            # Both dialects predate ``max_completion_tokens``: ``max_tokens`` whatever the preset.
            "max_tokens": request.max_tokens,
            "temperature": request.temperature,
            "stream": True,
        }
    if request.stop:
        body["stop"] = [sendable(stop) for stop in request.stop]
    # Mistral documents no ``stream_options``; it puts usage in its last chunk unasked.
    if kind == "completions" and preset.usage_in_stream:
        body["stream_options"] = {"include_usage": True}
    return body


def parse_fim_chunk(kind: FimKind, data: str) -> ChatChunk:
    """Parse one event's data of a ``kind`` stream (a protocol error when it is malformed)."""
    if kind == "infill":
        return parse_infill_chunk(data)
    # ``completions`` and ``inception`` chunks carry ``choices[i].text``, ``mistral`` ones the
    # chat ``delta``: the chat parser reads both.
    return parse_chat_chunk(data)


def line_comment(language_id: str) -> str:
    """The line-comment marker of a language (by LSP language id), ``//`` when unknown."""
    return _LINE_COMMENTS.get(language_id.lower(), "//")


def _with_snippets(request: FimRequest) -> str:
    """The prefix, behind a comment block holding the other files' snippets (if any)."""
    if not request.snippets:
        return request.prefix
    marker = line_comment(request.language_id)
    lines: list[str] = []
    for path, text in request.snippets:
        lines.append(f"{marker} Path: {path}")
        lines.extend(f"{marker} {line}" if line else marker for line in text.splitlines())
    # Where the snippets end and the completed file begins: its path, else a blank line.
    lines.append(f"{marker} Path: {request.path}" if request.path else "")
    return "\n".join(lines) + "\n" + request.prefix
