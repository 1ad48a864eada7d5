"""Settings: one pydantic schema, five sources, and how a profile resolves to a backend.

Pure apart from reading the TOML file named by ``FASTEDIT_CONFIG``: the environment is passed in.
Precedence, lowest first: defaults < the ``FASTEDIT_CONFIG`` file < environment variables <
``initializationOptions`` < ``workspace/configuration`` / ``didChangeConfiguration``. The
key-routing settings (``provider``, ``baseUrl``, ``apiKeyEnv``, ``network.proxy``,
``network.caFile``) are taken only from the first four:
a repository can set the last source (eglot reads ``.dir-locals.el``, VS Code merges workspace
settings), and must not be able to send the user's key elsewhere.

A bad value is reported with the key and the reason and its default is kept; the server keeps
running. ``null`` means "unset": it never overrides a lower source (VS Code pulls return null for
settings the user did not set).
"""

from __future__ import annotations

import dataclasses
import os
import tomllib
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, SecretStr, ValidationError
from pydantic.alias_generators import to_camel

from .actions.registry import BUILTIN_KINDS
from .backends.presets import PRESETS, Api, Provider, default_api
from .prompting.context import DEFAULT_EXCLUDE

Mode = Literal["fast", "standard", "auto"]
if TYPE_CHECKING:
    ActionKind = str
else:
    #: A built-in action's kind: the registry's list (``routing.fastKinds`` may name them).
    ActionKind = Literal[BUILTIN_KINDS]
ProfileName = Literal["fast", "standard", "apply"]
Route = Literal["fast", "standard", "local"]
Layer = Literal["default", "file", "env", "init", "client"]
#: How a completion asks for fill-in-the-middle: ``chat`` or one of ``backends.fim.FimKind``.
FimStyle = Literal["chat", "completions", "infill", "mistral", "inception"]

#: The pseudo-pattern in ``context.exclude`` that stands for "files git ignores".
GIT_IGNORED = "<git-ignored>"
#: Settings a repository must not control (see the module docstring).
KEY_ROUTING = ("provider", "baseUrl", "apiKeyEnv")
#: Settings that let the repository's own code run (``verify.*``): like key routing, never taken
#: from ``workspace/configuration`` (a repository's .vscode/settings.json could set them).
CODE_ROUTING = ("trustWorkspaceTools", "checkers")
#: The ``network`` settings a repository must not control (a proxy sees the key).
NETWORK_KEY_ROUTING = ("proxy", "caFile")


class _Model(BaseModel):
    model_config = ConfigDict(
        extra="forbid", alias_generator=to_camel, populate_by_name=True, frozen=True
    )


class ActionSettings(_Model):
    """One user-defined action (``actions``): an instruction run on a target with a model."""

    id: str = Field(pattern=r"^[A-Za-z][A-Za-z0-9_.-]{0,63}$", description="What to call it.")
    title: str = Field(min_length=1, max_length=200, description="The code action's title.")
    instruction: str = Field(min_length=1, max_length=20000, description="What the model does.")
    target: Literal["selection", "cursor", "function", "file"] = "selection"
    route: Literal["fast", "standard", "auto"] = "auto"
    verify: Literal["parse", "none"] = "parse"


class ProfileSettings(_Model):
    """One model profile (``profiles.fast`` or ``profiles.standard``)."""

    provider: Provider | None = Field(
        None,
        description="cerebras, groq, openai, openrouter, ollama, llamacpp, vllm, morph, relace, "
        "anthropic, mistral, inception, gemini, deepseek, openai-compatible or local. Unset: "
        "openai-compatible when baseUrl is set, else local. Not read from "
        "workspace/configuration.",
    )
    base_url: str | None = Field(
        None,
        description="OpenAI-compatible base URL (ending in /v1); defaults to the provider's. "
        "Not read from workspace/configuration.",
    )
    model: str | None = Field(
        None, description="Model id; unset: the first one the server's /v1/models lists."
    )
    api_key_env: str | None = Field(
        None,
        pattern=r"^[A-Za-z_][A-Za-z0-9_]*$",
        description="Environment variable holding the key (default per provider, e.g. "
        "CEREBRAS_API_KEY); `FASTEDIT_<PROFILE>_API_KEY` wins. Not read from "
        "workspace/configuration.",
    )
    max_tokens: int = Field(512, ge=1, le=32768, description="Output cap sent with each request.")
    temperature: float = Field(0.2, ge=0, le=2, description="Sampling temperature.")
    timeout_ms: int = Field(
        30000, ge=100, le=600000, description="Connect and between-bytes read timeout."
    )
    reasoning_effort: Literal["minimal", "low", "medium", "high"] | None = Field(
        None, description="Sent to reasoning models; unset: the lowest (low)."
    )
    api: Api | None = Field(
        None,
        description="The wire format of this profile's action requests: chat (chat completions), "
        "responses (OpenAI's Responses API) or messages (Anthropic's Messages API). Unset: "
        "messages for anthropic, responses for OpenAI's Codex models, else chat (and a model "
        "that answers it is served by the Responses API only moves there for the session).",
    )
    fim: FimStyle | None = Field(
        None,
        description="How completions ask this profile's model to fill in the middle. chat: a chat "
        "prompt with a cursor marker (any chat model, over the profile's api); completions: "
        "/v1/completions with suffix (OpenAI instruct, DeepSeek beta, vLLM, Ollama's OpenAI API); "
        "infill: llama.cpp's /infill (at the server root: baseUrl without its trailing /v1); "
        "mistral: Codestral's /v1/fim/completions; inception: Mercury Edit's "
        "/v1/fim/completions. Unset: the provider's (mistral: mistral, inception: inception, "
        "llamacpp: infill, deepseek: completions on its beta API), else chat.",
    )
    speed_tier: str | None = Field(
        None,
        pattern=r"^[a-z_]{1,32}$",
        description="A vendor speed tier for the same model: fast, ultrafast, priority, flex... "
        "(OpenAI service_tier, Anthropic speed fast with its beta header, Groq service_tier). "
        "The job record shows the tier asked and served; a provider that refuses the field gets "
        "the request again without it (once, remembered for the session).",
    )
    prediction: Literal["auto", "on", "off"] = Field(
        "auto",
        description="Send a rewrite's original text as the predicted output (faster where "
        "supported). auto: for providers and models known to accept it (Cerebras gpt-oss-120b "
        "and zai-glm-4.7, OpenAI gpt-4o and gpt-4.1).",
    )


class FastProfileSettings(ProfileSettings):
    timeout_ms: int = Field(
        15000, ge=100, le=600000, description="Connect and between-bytes read timeout."
    )


class StandardProfileSettings(ProfileSettings):
    max_tokens: int = Field(1024, ge=1, le=32768, description="Output cap sent with each request.")
    timeout_ms: int = Field(
        60000, ge=100, le=600000, description="Connect and between-bytes read timeout."
    )


class ApplyProfileSettings(ProfileSettings):
    """The profile that merges a plan into the selection (``editSelection.plan``); unset (no
    provider, no baseUrl): the fast profile does it, with this profile's ``maxTokens``."""

    provider: Provider | None = Field(
        None,
        description="As for the other profiles (morph and relace are apply models). Unset, with "
        "baseUrl unset too: the fast profile merges plans (with this maxTokens). Not read from "
        "workspace/configuration.",
    )
    max_tokens: int = Field(4096, ge=1, le=32768, description="Output cap sent with each request.")


class ProfilesSettings(_Model):
    fast: FastProfileSettings = FastProfileSettings()
    standard: StandardProfileSettings = StandardProfileSettings()
    apply: ApplyProfileSettings = ApplyProfileSettings()


class EditSelectionSettings(_Model):
    """Plan and apply: the standard model writes the changes, a fast model merges them."""

    plan: Literal["auto", "on", "off"] = Field(
        "auto",
        description="Plan and apply an edit selection: the standard profile writes a short update "
        "with `... existing code ...` markers, the apply profile merges it into the selection. "
        "auto: for selections of planMinLines lines or more. In auto and standard mode only.",
    )
    plan_min_lines: int = Field(
        60, ge=1, le=100000, description="plan auto: plan selections of at least this many lines."
    )


class RoutingSettings(_Model):
    """Auto mode's rules, in the order they are checked (the field order; see ``routing.py``).

    Every job is fast unless a rule sends it to standard; the first rule that fires names itself,
    its value and its threshold in the job's reason.
    """

    fast_kinds: tuple[ActionKind, ...] = Field(
        ("completeRest", "generateRegex", "generateTests", "fixSyntax", "editSelection"),
        description="Auto mode, rule 1: actions that may go to fast; the others always go to "
        "standard.",
    )
    fast_max_lines: int = Field(
        60, ge=0, description="Auto mode, rule 2: selections longer than this go to standard."
    )
    fast_max_definitions: int = Field(
        1,
        ge=0,
        description="Auto mode, rule 3: selections spanning more def/class statements than this "
        "go to standard.",
    )
    fast_max_prompt_tokens: int = Field(
        3000,
        ge=0,
        description="Auto mode, rule 4: larger prompts (estimated tokens, chars / 4) go to "
        "standard.",
    )
    fast_max_diagnostics: int = Field(
        3,
        ge=0,
        description="Auto mode, rule 5: targets with more error diagnostics than this go to "
        "standard.",
    )
    fast_max_instruction_words: int = Field(
        25,
        ge=0,
        description="Auto mode, rule 6: longer editSelection instructions go to standard.",
    )
    hard_words: tuple[str, ...] = Field(
        (
            "refactor",
            "redesign",
            "rewrite",
            "optimize",
            "performance",
            "algorithm",
            "architecture",
            "concurrency",
            "thread-safe",
            "security",
        ),
        description="Auto mode, rule 7: editSelection instructions with one of these go to "
        "standard. Matched in any case at a word start, a final e optional (optimize matches "
        "optimizing), hyphens and spaces interchangeable (thread-safe matches thread safe).",
    )
    max_fast_failure_rate: float = Field(
        0.5,
        ge=0,
        le=1,
        description="Auto mode, rule 8: while the fast route fails verification in more than "
        "this share of recent jobs, jobs go to standard (1 turns the rule off).",
    )


class TestsSettings(_Model):
    verify_collect: bool = Field(
        False, description="Run pytest --collect-only on generated tests (imports your code)."
    )
    run: bool = Field(False, description="Run generated tests (executes your code).")


class VerifySettings(_Model):
    timeout_ms: int = Field(
        2000,
        ge=0,
        le=60000,
        description="How long the project's checkers (ruff, mypy, pyright, go vet, tsc) may run "
        "before a job ends; a later result is recorded as timed out and can still flag the region.",
    )
    trust_workspace_tools: bool = Field(
        False,
        description="Run checkers found inside the workspace (.venv/bin, node_modules/.bin): "
        "they are the repository's code. Not read from workspace/configuration.",
    )
    checkers: tuple[str, ...] | None = Field(
        None,
        description="The checkers to run (ruff, mypy, pyright, go vet, tsc); those listed may come "
        "from the workspace. Unset: every checker found on PATH outside the workspace; []: "
        "none. Not read from workspace/configuration.",
    )


class ContextSettings(_Model):
    exclude: tuple[str, ...] = Field(
        (*DEFAULT_EXCLUDE, GIT_IGNORED),
        description=f"Globs never sent to a model; `{GIT_IGNORED}` stands for git-ignored files.",
    )
    budget_tokens: int = Field(
        2048, ge=64, le=200000, description="Prompt context budget (estimated tokens)."
    )


class NextEditSettings(_Model):
    enabled: bool = Field(
        True,
        description="Next-edit suggestions: predict your next edit from your own recent edits "
        "(offline engine; `fastedit.toggleNextEdit` flips it).",
    )
    use_model: bool = Field(
        False, description="Ask the fast model for next edits too (needs a fast profile)."
    )
    debounce_ms: int = Field(
        150, ge=0, le=5000, description="Wait this long after typing stops before asking the model."
    )
    languages: tuple[str, ...] = Field(
        (), description="Language ids to suggest next edits in (empty: every language)."
    )


class NetworkSettings(_Model):
    """How the model servers are reached (``docs/network.md``). Key-routing settings: not read
    from ``workspace/configuration`` (a repository's settings could route the key elsewhere)."""

    proxy: str | None = Field(
        None,
        description="The proxy of every model request (http:// or https://, user:password@ "
        "allowed), instead of HTTP_PROXY / HTTPS_PROXY / ALL_PROXY; NO_PROXY still exempts its "
        "hosts. Unset: the environment's proxies.",
    )
    ca_file: str | None = Field(
        None,
        description="A PEM file of CA certificates trusted in addition to the default ones "
        "(certifi's, or SSL_CERT_FILE / SSL_CERT_DIR): a private CA, a TLS-inspecting proxy.",
    )


class Settings(_Model):
    """The ``fastedit`` settings section."""

    mode: Mode = Field("auto", description="fast, standard or auto (routes each job).")
    profiles: ProfilesSettings = ProfilesSettings()
    streaming: Literal["live", "final"] = Field(
        "live", description="live: stream partial edits; final: one edit at the end."
    )
    max_edits_per_second: int = Field(
        60, ge=1, le=1000, description="Coalesce streamed edits to at most this rate."
    )
    completion_enabled: bool = Field(
        True,
        description="Serve AI completions: inline ghost text, or completion items for clients "
        "without inline completion.",
    )
    completion_debounce_ms: int = Field(
        75,
        ge=0,
        le=2000,
        description="Wait this long after typing stops before asking the model (automatic "
        "triggers only; an explicit request is sent at once).",
    )
    completion_deadline_ms: int = Field(
        1000,
        ge=50,
        le=30000,
        description="After this long a completion returns whatever text has arrived.",
    )
    completion_items_wait_ms: int = Field(
        300,
        ge=0,
        le=30000,
        description="How long a completion-item request (clients without ghost text) waits for "
        "a whole suggestion before answering without one; rassumfrassum holds the other "
        "server's items until every server answered. The stream goes on: the next keystroke "
        "gets it.",
    )
    completion_max_tokens: int = Field(
        128, ge=1, le=2048, description="Output cap sent with each completion request."
    )
    completion_budget_tokens: int = Field(
        1024,
        ge=64,
        le=32000,
        description="Context budget for a completion's prompt (estimated tokens).",
    )
    routing: RoutingSettings = RoutingSettings()
    failover: tuple[Route, ...] = Field(
        ("fast", "standard", "local"), description="Fallback chain when a profile fails."
    )
    tests: TestsSettings = TestsSettings()
    verify: VerifySettings = VerifySettings()
    context: ContextSettings = ContextSettings()
    actions: tuple[ActionSettings, ...] = Field(
        (),
        description="User-defined actions: [{id, title, instruction, target: selection|cursor|"
        "function|file, route: fast|standard|auto, verify: parse|none}], offered as code actions "
        "and run by fastedit.run (presets: docstring, typeHints).",
    )
    edit_selection: EditSelectionSettings = EditSelectionSettings()
    review: Literal["off", "hunks"] = Field(
        "off",
        description="hunks: highlight a rewrite's changed hunks (hint diagnostics) until Keep all "
        "or Revert all.",
    )
    next_edit: NextEditSettings = NextEditSettings()
    network: NetworkSettings = NetworkSettings()


# -- sources -------------------------------------------------------------------------------------


def env_layer(environ: Mapping[str, str]) -> dict[str, Any]:
    """Settings from ``FASTEDIT_*`` environment variables (keys are read elsewhere)."""
    out: dict[str, Any] = {}
    if mode := environ.get("FASTEDIT_MODE"):
        out["mode"] = mode
    for profile in ("fast", "standard", "apply"):
        upper = profile.upper()
        values = {
            "provider": environ.get(f"FASTEDIT_{upper}_PROVIDER"),
            "baseUrl": environ.get(f"FASTEDIT_{upper}_BASE_URL"),
            "model": environ.get(f"FASTEDIT_{upper}_MODEL"),
        }
        values = {k: v for k, v in values.items() if v}
        if values:
            out.setdefault("profiles", {})[profile] = values
    return out


def file_layer(environ: Mapping[str, str]) -> tuple[dict[str, Any], list[str]]:
    """Settings from the TOML file named by ``FASTEDIT_CONFIG`` (``[fastedit]`` or top level)."""
    path = environ.get("FASTEDIT_CONFIG")
    if not path:
        return {}, []
    try:
        with open(os.path.expanduser(path), "rb") as f:
            data = tomllib.load(f)
    except OSError as exc:
        return {}, [f"FASTEDIT_CONFIG: cannot read {path}: {exc.strerror or exc}"]
    except tomllib.TOMLDecodeError as exc:
        return {}, [f"FASTEDIT_CONFIG: {path} is not valid TOML: {exc}"]
    table = data.get("fastedit", data)
    if not isinstance(table, dict):
        return {}, [f"FASTEDIT_CONFIG: the [fastedit] table in {path} is not a table"]
    return table, []


def _leaves(data: Mapping[str, Any], prefix: tuple[str, ...] = ()) -> Iterator[tuple[str, ...]]:
    for key, value in data.items():
        if isinstance(value, Mapping) and value:
            yield from _leaves(value, (*prefix, str(key)))
        else:
            yield (*prefix, str(key))


def _camel_keys(data: Any) -> Any:
    """Accept snake_case keys from files and editors too; the wire uses camelCase."""
    if isinstance(data, Mapping):
        return {
            to_camel(str(k)) if "_" in str(k) else str(k): _camel_keys(v) for k, v in data.items()
        }
    return data


def _merge(
    into: dict[str, Any], data: Mapping[str, Any], problems: list[str], prefix: str = "fastedit"
) -> None:
    for key, value in data.items():
        if value is None:
            continue
        if isinstance(value, Mapping) and isinstance(into.get(key), dict):
            _merge(into[key], value, problems, f"{prefix}.{key}")
        elif isinstance(value, Mapping):
            into[key] = {}
            _merge(into[key], value, problems, f"{prefix}.{key}")
        elif isinstance(into.get(key), dict):
            # A section replaced by a scalar would also wipe what lower sources set in it.
            problems.append(f"{prefix}.{key}: expected an object, got {type(value).__name__}")
        else:
            into[key] = value


def _get(data: Mapping[str, Any], path: tuple[str, ...]) -> Any:
    node: Any = data
    for key in path:
        if not isinstance(node, Mapping) or key not in node:
            return None
        node = node[key]
    return node


def _remove(data: dict[str, Any], path: tuple[str, ...]) -> bool:
    node: Any = data
    for key in path[:-1]:
        if not isinstance(node, dict) or key not in node:
            return False
        node = node[key]
    if isinstance(node, dict) and path and path[-1] in node:
        del node[path[-1]]
        return True
    return False


def _strip_key_routing(data: Any) -> tuple[dict[str, Any], list[str]]:
    """Drop key-routing values from a client-pushed section; return what was dropped."""
    if not isinstance(data, Mapping):
        return {}, []
    clean = _camel_keys(data)
    dropped: list[str] = []
    profiles = clean.get("profiles")
    if isinstance(profiles, dict):
        for name, profile in profiles.items():
            if isinstance(profile, dict):
                for key in KEY_ROUTING:
                    if key in profile:
                        del profile[key]
                        dropped.append(f"fastedit.profiles.{name}.{key}")
    for section, keys in (("verify", CODE_ROUTING), ("network", NETWORK_KEY_ROUTING)):
        values = clean.get(section)
        if isinstance(values, dict):
            for key in keys:
                if key in values:
                    del values[key]
                    dropped.append(f"fastedit.{section}.{key}")
    return clean, dropped


@dataclass
class Resolved:
    """Settings merged from every source, with where each value came from."""

    settings: Settings
    sources: dict[str, Layer] = field(default_factory=dict)
    #: Invalid values, each naming the key and the reason (shown with window/showMessage).
    problems: list[str] = field(default_factory=list)
    #: Ignored values that are not errors (logged).
    warnings: list[str] = field(default_factory=list)


def resolve(layers: list[tuple[Layer, Any]]) -> Resolved:
    """Merge the layers (lowest first) into valid settings, dropping each invalid value."""
    merged: dict[str, Any] = {}
    sources: dict[str, Layer] = {}
    problems: list[str] = []
    warnings: list[str] = []
    for layer, data in layers:
        if data is None:
            continue
        if not isinstance(data, Mapping):
            problems.append(f"fastedit: expected an object of settings, got {type(data).__name__}")
            continue
        if layer == "client":
            data, dropped = _strip_key_routing(data)
            warnings.extend(
                f"{key} is ignored from workspace settings (a repository could set it to send "
                "your key elsewhere or run its own code); set it in initializationOptions, "
                "FASTEDIT_CONFIG or the environment"
                for key in dropped
            )
        else:
            data = _camel_keys(data)
        _merge(merged, data, problems)
        for leaf in _leaves(data):
            if _get(data, leaf) is not None:
                sources[".".join(leaf)] = layer
    for _ in range(20):
        try:
            settings = Settings.model_validate(merged)
            break
        except ValidationError as exc:
            removed = False
            for error in exc.errors():
                # Collections are validated whole: drop the whole value.
                path = _trim_to_existing(
                    merged, tuple(str(p) for p in error["loc"] if not isinstance(p, int))
                )
                dotted = ".".join(path)
                key = f"fastedit.{dotted}" if path else "fastedit"
                reason = error["msg"]
                if error["type"] == "extra_forbidden":
                    problems.append(f"{key}: unknown setting (ignored)")
                elif "key" in key.lower():
                    # A key pasted where a variable name belongs must not be echoed.
                    problems.append(f"{key}: {reason}; using the default")
                else:
                    shown = repr(error.get("input"))[:60]
                    problems.append(f"{key}: {reason} (got {shown}); using the default")
                if path and _remove(merged, path):
                    removed = True
                    stale = [k for k in sources if k == dotted or k.startswith(dotted + ".")]
                    for stale_key in stale:
                        del sources[stale_key]
            if not removed:
                merged = {}
                sources = {}
    else:  # pragma: no cover - each round removes at least one value
        settings = Settings()
    return Resolved(settings, sources, problems, warnings)


def _trim_to_existing(data: dict[str, Any], path: tuple[str, ...]) -> tuple[str, ...]:
    node: Any = data
    for i, key in enumerate(path):
        if not isinstance(node, dict) or key not in node:
            return path[:i]
        node = node[key]
    return path


def load(
    environ: Mapping[str, str],
    init: Any = None,
    client: Any = None,
) -> Resolved:
    """Settings from every source, for the server and ``fastedit-lsp doctor``."""
    file_data, file_problems = file_layer(environ)
    resolved = resolve(
        [("file", file_data), ("env", env_layer(environ)), ("init", init), ("client", client)]
    )
    resolved.problems[:0] = file_problems
    return resolved


def source_of(resolved: Resolved, key: str) -> Layer:
    """Where a dotted camelCase key's value came from."""
    return resolved.sources.get(key, "default")


# -- profiles ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ResolvedProfile:
    """A profile turned into something a backend can be built from."""

    name: ProfileName
    provider: Provider
    base_url: str | None
    model: str | None
    api_key: SecretStr | None
    #: Where the key is read from (for messages; never the key itself).
    key_hint: str | None
    settings: ProfileSettings
    #: Why the profile fell back to the offline engine, if it did.
    fallback_reason: str | None = None

    @property
    def is_local(self) -> bool:
        return self.provider == "local"

    @property
    def fim(self) -> FimStyle:
        """How completions ask: the profile's ``fim``, else its provider's dialect, else chat."""
        return self.settings.fim or PRESETS[self.provider].fim or "chat"

    def api_for(self, model: str | None) -> Api:
        """The wire of action requests: the profile's ``api``, else the provider's for
        ``model``."""
        return self.settings.api or default_api(self.provider, model or self.model)

    @property
    def apply_format(self) -> bool:
        """An apply model's provider (morph, relace): plans are merged in its format."""
        return PRESETS[self.provider].apply_format


def resolve_profile(
    name: ProfileName, settings: Settings, environ: Mapping[str, str]
) -> ResolvedProfile:
    """Decide provider, URL and key for a profile; a profile that cannot reach a model is local.

    ``apply`` without a provider and a baseUrl is the fast profile (its ``name`` says so) with
    ``profiles.apply.maxTokens``: a merge is as long as the selection, which the fast profile's
    cap (sized for completions) would cut.
    """
    profile: ProfileSettings = getattr(settings.profiles, name)
    if name == "apply" and profile.provider is None and profile.base_url is None:
        fast = resolve_profile("fast", settings, environ)
        capped = fast.settings.model_copy(update={"max_tokens": profile.max_tokens})
        return dataclasses.replace(fast, settings=capped)
    provider: Provider | None = profile.provider
    if provider is None:
        provider = "openai-compatible" if profile.base_url else None
    if provider is None or provider == "local":
        reason = None if provider == "local" else f"profiles.{name} has no provider configured"
        return ResolvedProfile(name, "local", None, None, None, None, profile, reason)
    preset = PRESETS[provider]
    base_url = (profile.base_url or preset.base_url or "").rstrip("/") or None
    override = f"FASTEDIT_{name.upper()}_API_KEY"
    key_env = profile.api_key_env or preset.key_env
    key_hint = f"{override} or {key_env}" if key_env else override
    raw = environ.get(override) or (environ.get(key_env) if key_env else None)
    key = SecretStr(raw) if raw else None
    if base_url is None:
        reason = f"profiles.{name}: provider {provider} needs baseUrl"
        return ResolvedProfile(name, "local", None, None, None, key_hint, profile, reason)
    if preset.needs_key and key is None:
        reason = f"profiles.{name}: provider {provider} needs an API key in {key_hint}"
        return ResolvedProfile(name, "local", None, None, None, key_hint, profile, reason)
    return ResolvedProfile(name, provider, base_url, profile.model, key, key_hint, profile)


# -- documentation -------------------------------------------------------------------------------


def settings_rows() -> list[tuple[str, str, str]]:
    """(key, default, description) for every setting, generated from the schema."""
    rows: list[tuple[str, str, str]] = []

    def walk(model: type[BaseModel], instance: BaseModel, prefix: str) -> None:
        for name, info in model.model_fields.items():
            key = prefix + to_camel(name)
            value = getattr(instance, name)
            if isinstance(value, BaseModel):
                walk(type(value), value, key + ".")
                continue
            if isinstance(value, tuple):
                shown = ", ".join(value)
            elif isinstance(value, bool):
                shown = "true" if value else "false"  # as users write it in JSON and TOML
            else:
                shown = str(value)
            default = "unset" if value is None else f"`{shown}`".replace("|", "\\|")
            rows.append((key, default, info.description or ""))

    walk(Settings, Settings(), "fastedit.")
    return rows


def settings_table() -> str:
    """The settings table of docs/settings.md."""
    lines = ["| setting | default | meaning |", "|---|---|---|"]
    lines.extend(f"| `{k}` | {d} | {m} |" for k, d, m in settings_rows())
    return "\n".join(lines)
