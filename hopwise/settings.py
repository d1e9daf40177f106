"""All runtime configuration, read from HOPWISE_* environment variables and `.env`."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import Field, SecretStr, field_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

StructuredMethod = Literal["auto", "json_schema", "function_calling", "json_mode"]


class Settings(BaseSettings):
    """Every knob of Hopwise. Names are a public contract: add freely, rename nothing."""

    model_config = SettingsConfigDict(
        env_prefix="HOPWISE_", env_file=".env", env_file_encoding="utf-8", extra="ignore"
    )

    # Local storage
    data_dir: Path = Field(Path("./.hopwise"), description="Everything the app writes locally.")

    # Milvus
    milvus_uri: str | None = Field(
        None, description="Milvus server URI; empty means Milvus Lite inside data_dir."
    )
    milvus_token: SecretStr | None = Field(None, description="Milvus server token (user:pass).")
    collection: str = Field("hopwise_chunks", description="Milvus collection for chunks.")
    milvus_timeout_s: float = Field(
        10, description="Connect timeout and per-call deadline for a Milvus server."
    )

    # Dense embeddings (optional; BM25-only without them)
    embedding_base_url: str | None = None
    embedding_api_key: SecretStr | None = None
    embedding_model: str | None = None
    embedding_dim: int | None = None

    # Ingestion
    max_upload_mb: float = Field(50, description="Largest accepted file, in MB.")
    chunk_tokens: int = Field(500, description="Target chunk size in tokens.")
    chunk_overlap_tokens: int = Field(50, description="Overlap between neighbouring chunks.")
    parse_timeout_s: float = Field(60, description="Per-file parse time limit.")

    # Language model (optional; offline reasoning without it)
    llm_base_url: str | None = None
    llm_api_key: SecretStr | None = None
    llm_model: str | None = None
    llm_router_model: str | None = Field(None, description="Cheaper model for routing.")
    llm_structured_method: StructuredMethod = "auto"
    llm_timeout_s: float = Field(30, description="Per-call LLM timeout.")
    llm_max_retries: int = Field(1, description="Retries per LLM call on transient errors.")
    llm_temperature: float = 0.0

    # Graph budgets
    max_hops: int = 4
    top_k: int = Field(8, description="Hits retrieved per hop.")
    max_evidence_chunks: int = Field(12, description="Chunks given to the answer prompt.")
    max_web_searches: int = 1
    question_deadline_s: float = Field(120, description="Whole-question deadline.")
    llm_economy: bool = Field(
        True,
        description="Let code settle the steps it can instead of calling the model: routing a "
        "first question (no conversation to rewrite), sentence extraction, and the sufficiency "
        "check when no web search can follow. HOPWISE_LLM_ECONOMY=off sends every step to it.",
    )

    # Web search
    web_search: bool = Field(True, description="HOPWISE_WEB_SEARCH=off disables the fallback.")
    web_timeout_s: float = 8
    web_max_results: int = 5

    # App
    admin_password: SecretStr | None = None
    users: str | None = Field(
        None, description='JSON {"user": {"password": "...", "groups": ["g1"]}} for chat sign-in.'
    )

    @field_validator("web_search", "llm_economy", mode="before")
    @classmethod
    def _on_off(cls, value: object) -> object:
        if isinstance(value, str) and value.strip().lower() in {"off", "no", "0", "false"}:
            return False
        if isinstance(value, str) and value.strip().lower() in {"on", "yes", "1", "true"}:
            return True
        return value

    @property
    def resolved_milvus_uri(self) -> str:
        """The server URI, or the embedded database file inside the data dir."""
        if self.milvus_uri:
            return self.milvus_uri
        return str((self.data_dir / "milvus.db").resolve())

    @property
    def is_embedded(self) -> bool:
        return not self.milvus_uri

    @property
    def dense_enabled(self) -> bool:
        return bool(self.embedding_base_url and self.embedding_model)

    @property
    def llm_enabled(self) -> bool:
        return bool(self.llm_base_url and self.llm_model)

    @property
    def checkpoint_path(self) -> Path:
        return self.data_dir / "conversations.sqlite"

    def ensure_data_dir(self) -> Path:
        self.data_dir.mkdir(parents=True, exist_ok=True)
        return self.data_dir


def load_settings(**overrides: object) -> Settings:
    """Settings from the environment, with explicit overrides (tests, CLI flags)."""
    return Settings(**overrides)  # type: ignore[arg-type]
