"""How one named judge is reached and bounded: the ``judges.endpoints.<name>`` config block.

The model is shared by the daemon's config (``collector.config.settings`` refines the
duration fields to accept ``5s`` / ``500ms``) and by library users, who build it
directly with seconds. The API key never lives in the config: ``api_key_env``
names an environment variable and ``api_key_file`` a file holding it; the key is
read at start-up into a ``SecretStr`` (its repr is masked) and only ever put in
the ``Authorization`` header (or the one ``api_key_header`` names).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Literal
from urllib.parse import urlencode

from pydantic import BaseModel, ConfigDict, Field, SecretStr, field_validator, model_validator

ResponseFormat = Literal["json_schema", "json_object", "none"]


class JudgeBudget(BaseModel):
    """Daily caps (UTC days); None means unlimited. Reached → judge work is shed."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    calls: int | None = Field(default=None, gt=0, description="chat-completion requests per day")
    tokens: int | None = Field(default=None, gt=0, description="prompt + completion tokens per day")


class JudgeSettings(BaseModel):
    """One OpenAI-compatible chat-completions endpoint + model, with its limits.

    ``base_url`` is the API root that ``/chat/completions`` is appended to
    (``https://api.openai.com/v1``, ``http://vllm:8000/v1``, ``http://ollama:11434/v1``).
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    base_url: str = Field(min_length=1)
    model: str = Field(min_length=1)
    api_key_env: str | None = None
    api_key_file: Path | None = None
    temperature: float = Field(default=0.0, ge=0.0, le=2.0)
    max_tokens: int | None = Field(default=1024, gt=0, description="completion tokens per call")
    response_format: ResponseFormat = "json_schema"
    timeout: float = Field(default=60.0, gt=0, description="seconds per HTTP attempt")
    max_concurrency: int = Field(default=4, gt=0)
    requests_per_second: float | None = Field(default=None, gt=0)
    tokens_per_minute: int | None = Field(default=None, gt=0)
    retries: int = Field(default=3, ge=0, description="retries after the first attempt")
    backoff_initial: float = Field(default=0.5, gt=0)
    backoff_max: float = Field(
        default=30.0, gt=0, description="longest wait between attempts; a longer Retry-After fails"
    )
    budget: JudgeBudget = JudgeBudget()
    api_key_header: str = Field(
        default="Authorization",
        min_length=1,
        description="header carrying the key: Authorization (sent as 'Bearer KEY'), or "
        "another name (Azure OpenAI: api-key) for the bare key",
    )
    headers: dict[str, str] = Field(
        default_factory=dict, description="extra request headers; never the key"
    )
    query: dict[str, str] = Field(
        default_factory=dict,
        description="URL query parameters (Azure OpenAI: {api-version: 2024-10-21})",
    )

    @field_validator("base_url")
    @classmethod
    def _http_url(cls, value: str) -> str:
        if not value.startswith(("http://", "https://")):
            raise ValueError(f"base_url {value!r} must start with http:// or https://")
        return value.rstrip("/")

    @model_validator(mode="after")
    def _one_key_source(self) -> JudgeSettings:
        if self.api_key_env is not None and self.api_key_file is not None:
            raise ValueError("give api_key_env or api_key_file, not both")
        key_headers = {"authorization", self.api_key_header.lower()}
        for name in self.headers:
            if name.lower() in key_headers:
                raise ValueError(
                    f"headers: {name!r} carries the API key, which never goes in the config: "
                    "use api_key_env or api_key_file (and api_key_header for its name)"
                )
        return self

    @property
    def url(self) -> str:
        """The chat-completions URL, with ``query`` if any."""
        url = f"{self.base_url}/chat/completions"
        return f"{url}?{urlencode(self.query)}" if self.query else url


class JudgeKeyError(Exception):
    """The configured API key cannot be read; the message names the setting, never a key."""


def read_api_key(settings: JudgeSettings, base_dir: Path | None = None) -> SecretStr | None:
    """The API key from ``api_key_env`` / ``api_key_file``, or None when neither is set.

    Raises ``JudgeKeyError`` when the variable is unset or empty, or the file is
    unreadable or empty. A relative ``api_key_file`` is resolved against ``base_dir``.
    """
    if settings.api_key_env is not None:
        value = os.environ.get(settings.api_key_env, "").strip()
        if not value:
            raise JudgeKeyError(
                f"api_key_env: environment variable {settings.api_key_env!r} is not set"
            )
        return SecretStr(value)
    if settings.api_key_file is not None:
        return SecretStr(_read_key_file(settings.api_key_file, base_dir))
    return None


def _read_key_file(path: Path, base_dir: Path | None) -> str:
    if not path.is_absolute() and base_dir is not None:
        path = base_dir / path
    try:
        value = path.read_text(encoding="utf-8").strip()
    except OSError as exc:
        raise JudgeKeyError(f"api_key_file: cannot read {path}: {exc.strerror or exc}") from None
    if not value:
        raise JudgeKeyError(f"api_key_file: {path} is empty")
    return value
