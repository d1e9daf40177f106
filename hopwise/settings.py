"""All runtime configuration, read from HOPWISE_* environment variables and `.env`."""

from __future__ import annotations

import logging
import re
from pathlib import Path
from typing import Literal

from pydantic import Field, SecretStr, field_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

from graph.config import GraphConfig, LLMConfig, StructuredMethod
from ingest.config import EmbeddingConfig, FusionConfig, IngestConfig, StoreConfig
from ingest.store import redact_uri_secrets


class Settings(BaseSettings):
    """Every knob of Hopwise. Names are a public contract: add freely, rename nothing."""

    model_config = SettingsConfigDict(
        env_prefix="HOPWISE_", env_file=".env", env_file_encoding="utf-8", extra="ignore"
    )

    # Local storage
    data_dir: Path = Field(Path("./.hopwise"), description="Everything the app writes locally.")
    originals_dir: Path | None = Field(
        None,
        description="Where uploaded files are kept as they were, by SHA-256, so citations can "
        "open them; empty means data_dir/originals.",
    )

    database_url: str | None = Field(
        None,
        description="Where conversations, feedback, sign-in sessions, throttling and the "
        "admin's options live: postgresql://user:pass@host/db for several replicas "
        "(docs/deployment.md); empty means SQLite files in data_dir.",
    )
    embedding_worker: Literal["auto", "off"] = Field(
        "auto",
        description="auto: this process fills missing vectors when no other process of the "
        "deployment does (one is elected); off: it only searches (run `hopwise worker`).",
    )

    # Milvus
    milvus_uri: str | None = Field(
        None, description="Milvus server URI; empty means Milvus Lite inside data_dir."
    )
    milvus_token: SecretStr | None = Field(None, description="Milvus server token (user:pass).")
    collection: str = Field("hopwise_chunks", description="Milvus collection for chunks.")
    milvus_timeout_s: float = Field(
        10, description="Connect timeout and per-call deadline for a Milvus server."
    )

    # Dense embeddings: the built-in model unless an endpoint is configured (docs/search.md)
    embeddings: Literal["builtin", "off", "endpoint"] | None = Field(
        None,
        description="builtin: packaged model, vectors filled in the background; endpoint: the "
        "OpenAI-compatible embedding endpoint below; off: BM25 only. Unset: the endpoint when "
        "one is configured, else builtin.",
    )
    fusion_lexical_weight: float = Field(
        1.0, ge=0, description="BM25's weight in the fusion (dense: 1); see FusionConfig."
    )
    fusion_cross_language_lexical_weight: float = Field(
        0.3, ge=0, description="BM25's weight for a chunk in another language than the question."
    )
    fusion_cross_language_slots: int = Field(
        2,
        ge=0,
        le=10,
        description="Places of a search's top k kept for the other language's "
        "best dense candidates, in a knowledge base of two languages (0: none).",
    )
    embedding_base_url: str | None = None
    embedding_api_key: SecretStr | None = None
    embedding_model: str | None = None
    embedding_dim: int | None = None

    # Ingestion
    max_upload_mb: float = Field(50, description="Largest accepted file, in MB.")
    chunk_tokens: int = Field(500, description="Target chunk size in tokens.")
    chunk_overlap_tokens: int = Field(50, description="Overlap between neighbouring chunks.")
    parse_timeout_s: float = Field(60, description="Per-file parse time limit.")
    render_timeout_s: float = Field(
        10, gt=0, description="Time limit for drawing one PDF page in the source viewer."
    )
    ocr_timeout_s: float = Field(
        1200, description="Per-file time limit for a file that needs OCR (scans, images)."
    )

    # Language model (optional; offline reasoning without it)
    llm_base_url: str | None = None
    llm_api_key: SecretStr | None = None
    llm_model: str | None = None
    llm_router_model: str | None = Field(None, description="Cheaper model for routing.")
    llm_structured_method: StructuredMethod = "auto"
    llm_timeout_s: float = Field(30, description="Per-call LLM timeout.")
    llm_max_retries: int = Field(1, description="Retries per LLM call on transient errors.")
    llm_temperature: float = 0.0
    llm_repair: bool = Field(
        False,
        description="After a malformed structured reply, ask the model once more with a repair "
        "note; off, offline reasoning settles that step at once (a small model's second try "
        "doubles the step's time and rarely parses).",
    )
    llm_max_tokens: int = Field(
        1024,
        description="Most tokens one model reply may have: a step's JSON or the answer (a small "
        "model that loops is stopped here); 0 leaves it to the server.",
    )
    llm_failing_questions: int = Field(
        3,
        ge=0,
        description="Questions in a row in which the model failed a step, after which it is "
        "bypassed (offline reasoning answers at once, said once) until a probe works; 0 never.",
    )
    llm_probe_interval_s: float = Field(
        300, gt=0, description="While bypassed, a question tries the model once this often."
    )
    llm_probe_questions: int = Field(
        20,
        ge=0,
        description="While bypassed, the model is also tried once after this many questions "
        "(0: by time only).",
    )

    # Reading checks (hopwise/selfcheck)
    selfcheck: bool = Field(
        True,
        description="Check, in the background after each upload, how well Hopwise reads each "
        "document (questions its tables and records answer, asked back offline) and choose "
        "the stated-answer threshold on the results; off: only `hopwise selfcheck` checks.",
    )
    selfcheck_questions: int = Field(
        12, ge=0, description="Most self-test questions asked per document."
    )
    selfcheck_budget_s: float = Field(
        60, gt=0, description="Most seconds a document's reading check may take."
    )

    # Graph budgets
    max_hops: int = 4
    top_k: int = Field(8, description="Hits retrieved per hop.")
    max_evidence_chunks: int = Field(12, description="Chunks given to the answer prompt.")
    max_web_searches: int = 1
    question_deadline_s: float = Field(120, description="Whole-question deadline.")
    claim_check: bool = Field(
        True,
        description="Check every claim of an answer against the passages it cites (numbers, "
        "dates, codes and names must be in them; the claim must be close to them in meaning). "
        "HOPWISE_CLAIM_CHECK=off shows answers unchecked.",
    )
    llm_economy: bool = Field(
        True,
        description="Let code settle the steps it can instead of calling the model: routing a "
        "first question (no conversation to rewrite), sentence extraction, and the sufficiency "
        "check when no web search can follow. HOPWISE_LLM_ECONOMY=off sends every step to it.",
    )

    # Web search
    web_search: bool | None = Field(
        None,
        description="The web fallback sends a question to a public search engine, so it is "
        "opt-in: HOPWISE_WEB_SEARCH=on allows it, =off forbids it; unset, an admin decides on "
        "the Admin page (off until then).",
    )
    web_timeout_s: float = 8
    web_max_results: int = 5

    # App
    admin_password: SecretStr | None = None
    users: str | None = Field(
        None, description='JSON {"user": {"password": "...", "groups": ["g1"]}} for chat sign-in.'
    )
    session_hours: float = Field(
        12, gt=0, description="A sign-in lasts this long (a reload or a shared link keeps it)."
    )
    session_secret: SecretStr | None = Field(
        None, description="Key that signs session cookies; generated into the data dir if unset."
    )

    # The REST API, the OpenAI-compatible endpoint and MCP over HTTP (`hopwise serve`; docs/api.md)
    api_host: str = Field("127.0.0.1", description="Address `hopwise serve` listens on.")
    api_port: int = Field(8000, ge=1, le=65535, description="Port `hopwise serve` listens on.")
    api_max_request_kb: int = Field(
        1024, gt=0, description="Largest JSON request body the API reads, in KB (larger: 413)."
    )
    api_max_upload_request_mb: float = Field(
        200,
        gt=0,
        description="Largest multipart upload request, all files together, in MB (each file is "
        "also held to HOPWISE_MAX_UPLOAD_MB).",
    )
    api_max_question_chars: int = Field(
        4000, gt=0, description="Longest question the API takes, in characters (longer: 422)."
    )
    api_rate_per_minute: int = Field(
        120,
        ge=0,
        description="Requests one API key may make per minute on one server process (beyond: "
        "429 with Retry-After); 0 turns the limit off.",
    )
    api_concurrent_questions: int = Field(
        8,
        gt=0,
        description="Questions one server process answers at once; more wait their turn.",
    )

    metrics: bool = Field(
        False,
        description="HOPWISE_METRICS=on opens Streamlit's /_stcore/metrics (closed by default: it "
        "counts every session's activity; open it only behind a proxy that restricts it).",
    )

    allowed_origins: str = Field(
        "",
        description="Comma-separated origins (https://chat.example.com) whose pages may open the "
        "app's websocket and post to its routes, besides the host the request was sent to (its "
        "Host or X-Forwarded-Host): for a proxy that rewrites both.",
    )

    @field_validator("database_url", mode="before")
    @classmethod
    def _database(cls, value: object) -> object:
        if value in (None, ""):
            return None
        if not str(value).startswith(("postgresql://", "postgres://")):
            raise ValueError(
                "HOPWISE_DATABASE_URL must be a postgresql://user:password@host:port/database "
                "URL (leave it empty for SQLite files in the data dir)"
            )
        return value

    @field_validator("web_search", "llm_economy", "metrics", mode="before")
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
    def embedding_mode(self) -> str:
        """What HOPWISE_EMBEDDINGS resolves to: 'endpoint', 'builtin' or 'off'. A configured
        endpoint takes precedence; 'endpoint' without one configured is 'off'."""
        if self.embeddings == "off":
            return "off"
        if self.dense_enabled and self.embeddings in (None, "endpoint"):
            return "endpoint"
        return "off" if self.embeddings == "endpoint" else "builtin"

    @property
    def llm_enabled(self) -> bool:
        return bool(self.llm_base_url and self.llm_model)

    @property
    def originals_root(self) -> Path:
        """The directory of the kept original files (HOPWISE_ORIGINALS_DIR)."""
        return self.originals_dir or self.data_dir / "originals"

    @property
    def shared_database(self) -> bool:
        """Whether server state is in PostgreSQL (HOPWISE_DATABASE_URL), shared by replicas."""
        return bool(self.database_url)

    @property
    def checkpoint_path(self) -> Path:
        return self.data_dir / "conversations.sqlite"

    # ---- the narrow config objects the libraries take (graph/ and ingest/ never see Settings)

    @property
    def graph(self) -> GraphConfig:
        return GraphConfig(
            max_hops=self.max_hops, top_k=self.top_k,
            max_evidence_chunks=self.max_evidence_chunks,
            max_web_searches=self.max_web_searches if self.web_search is not False else 0,
            question_deadline_s=self.question_deadline_s, web_timeout_s=self.web_timeout_s,
            web_max_results=self.web_max_results, llm_economy=self.llm_economy,
            claim_check=self.claim_check,
        )  # fmt: skip

    @property
    def llm(self) -> LLMConfig | None:
        """The chat endpoint, or None (offline reasoning) when it is not configured."""
        if not (self.llm_base_url and self.llm_model):
            return None
        return LLMConfig(
            base_url=self.llm_base_url, model=self.llm_model, api_key=_secret(self.llm_api_key),
            router_model=self.llm_router_model, structured_method=self.llm_structured_method,
            timeout_s=self.llm_timeout_s, max_retries=self.llm_max_retries,
            temperature=self.llm_temperature, max_tokens=self.llm_max_tokens,
            repair=self.llm_repair, failing_questions=self.llm_failing_questions,
            probe_interval_s=self.llm_probe_interval_s, probe_questions=self.llm_probe_questions,
        )  # fmt: skip

    @property
    def ingest(self) -> IngestConfig:
        return IngestConfig(
            max_upload_mb=self.max_upload_mb, chunk_tokens=self.chunk_tokens,
            chunk_overlap_tokens=self.chunk_overlap_tokens, parse_timeout_s=self.parse_timeout_s,
            ocr_timeout_s=self.ocr_timeout_s, render_timeout_s=self.render_timeout_s,
        )  # fmt: skip

    @property
    def fusion(self) -> FusionConfig:
        """How BM25 and dense results are fused (one parameter object; see ingest/config)."""
        return FusionConfig(
            lexical_weight=self.fusion_lexical_weight,
            cross_language_lexical_weight=self.fusion_cross_language_lexical_weight,
            cross_language_slots=self.fusion_cross_language_slots,
        )

    @property
    def store(self) -> StoreConfig:
        return StoreConfig(
            uri=self.resolved_milvus_uri, token=_secret(self.milvus_token),
            collection=self.collection, timeout_s=self.milvus_timeout_s,
            lock_dir=str((self.data_dir / "locks").resolve()),
        )  # fmt: skip

    @property
    def embedding(self) -> EmbeddingConfig | None:
        """The embedding endpoint, or None (BM25-only) when it is not configured."""
        if not (self.embedding_base_url and self.embedding_model):
            return None
        return EmbeddingConfig(
            base_url=self.embedding_base_url, model=self.embedding_model,
            api_key=_secret(self.embedding_api_key), dim=self.embedding_dim,
            timeout_s=self.llm_timeout_s, max_retries=self.llm_max_retries,
        )  # fmt: skip

    def secret_values(self) -> list[str]:
        """Every configured secret (keys, tokens, passwords, passwords inside URIs)."""
        values = [
            _secret(v) or ""
            for v in (self.llm_api_key, self.embedding_api_key, self.milvus_token,
                      self.admin_password, self.session_secret)
        ]  # fmt: skip
        for uri in (self.milvus_uri, self.llm_base_url, self.embedding_base_url, self.database_url):
            found = re.match(r"[A-Za-z][A-Za-z0-9+.-]*://([^/@\s]*)@", uri or "")
            if found:
                values += [found.group(1), *found.group(1).split(":", 1)[1:]]
        if self.users:
            values += re.findall(r'"password"\s*:\s*"([^"]+)"', self.users)
        return sorted({v for v in values if len(v) >= 4}, key=len, reverse=True)

    def redact(self, text: str) -> str:
        """The text with every configured secret and every URI credential replaced by ***."""
        return redact_secrets(text, self.secret_values())

    def ensure_data_dir(self) -> Path:
        self.data_dir.mkdir(parents=True, exist_ok=True)
        return self.data_dir


def redact_secrets(text: str, secrets: list[str]) -> str:
    """`text` with each secret (longest first) and every URI credential replaced by ***."""
    for secret in secrets:
        text = text.replace(secret, "***")
    return redact_uri_secrets(text)


def _secret(value: SecretStr | None) -> str | None:
    return value.get_secret_value() if value else None


def load_settings(**overrides: object) -> Settings:
    """Settings from the environment, with explicit overrides (tests, CLI flags)."""
    return Settings(**overrides)  # type: ignore[arg-type]


class RedactingFilter(logging.Filter):
    """Rewrites every log record so no configured secret reaches a log line."""

    def __init__(self, settings: Settings) -> None:
        super().__init__()
        self._secrets = settings.secret_values()  # once, not per record

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        clean = redact_secrets(message, self._secrets)
        if clean != message:
            record.msg, record.args = clean, None
        return True


def redact_logs(settings: Settings) -> None:
    """Attach the redacting filter to every handler of the root logger (once each)."""
    for handler in logging.getLogger().handlers:
        if not any(isinstance(f, RedactingFilter) for f in handler.filters):
            handler.addFilter(RedactingFilter(settings))
