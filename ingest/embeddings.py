"""Dense embeddings from any OpenAI-compatible endpoint; absent config means BM25-only."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

if TYPE_CHECKING:
    from ingest.config import EmbeddingConfig


class EmbeddingError(RuntimeError):
    """The embedding endpoint failed or returned vectors of the wrong shape."""


@runtime_checkable
class Embedder(Protocol):
    """Turns texts into fixed-size vectors; `name` is recorded as each chunk's lineage."""

    name: str
    dim: int

    def embed_documents(self, texts: Sequence[str]) -> list[list[float]]: ...

    def embed_query(self, text: str) -> list[float]: ...


class OpenAICompatibleEmbedder:
    """langchain-openai's OpenAIEmbeddings against any /v1/embeddings server.

    check_embedding_ctx_length=False sends raw strings (not tiktoken ids), which vLLM, Ollama,
    llama.cpp and DashScope expect; `dimensions` is only sent to models that accept it.
    """

    def __init__(
        self,
        *,
        base_url: str,
        model: str,
        api_key: str | None = None,
        dim: int | None = None,
        timeout_s: float = 30.0,
        max_retries: int = 1,
        batch_size: int = 64,
    ) -> None:
        from langchain_openai import OpenAIEmbeddings

        # base_url / api_key are pydantic aliases, which mypy does not see as parameters
        kwargs: dict[str, object] = {"base_url": base_url, "api_key": api_key or "not-needed"}
        if dim and model.startswith("text-embedding-3"):
            kwargs["dimensions"] = dim
        self.name = model
        self._secret = api_key or ""
        self._client = OpenAIEmbeddings(
            model=model,
            check_embedding_ctx_length=False,
            tiktoken_enabled=False,
            request_timeout=timeout_s,
            max_retries=max_retries,
            chunk_size=batch_size,
            **kwargs,
        )
        self.dim = dim or len(self.embed_query("dimension probe"))

    def embed_documents(self, texts: Sequence[str]) -> list[list[float]]:
        if not texts:
            return []
        try:
            vectors = self._client.embed_documents(list(texts))
        except Exception as exc:
            raise self._failure(exc) from None
        return [self._checked(v) for v in vectors]

    def embed_query(self, text: str) -> list[float]:
        try:
            vector = self._client.embed_query(text)
        except Exception as exc:
            raise self._failure(exc) from None
        return self._checked(vector)

    def _failure(self, exc: Exception) -> EmbeddingError:
        """The endpoint's error without the API key: providers quote it back ("Incorrect API
        key provided: sk-..."), and the message reaches ingest results, logs and the CLI. No
        exception chain either, since the original carries the same text."""
        secret = self._secret if len(self._secret) >= 8 else ""  # skip placeholders like "x"
        reason = str(exc).replace(secret, "***") if secret else str(exc)
        return EmbeddingError(f"embedding endpoint failed: {reason}")

    def _checked(self, vector: list[float]) -> list[float]:
        expected = getattr(self, "dim", None)
        if expected is not None and len(vector) != expected:
            raise EmbeddingError(
                f"model {self.name} returned {len(vector)}-d vectors, "
                f"HOPWISE_EMBEDDING_DIM says {expected}"
            )
        return [float(x) for x in vector]


class LangChainEmbedder:
    """Any LangChain `Embeddings` as the knowledge base's Embedder (name and size recorded)."""

    def __init__(self, embeddings: Any, *, name: str, dim: int | None = None) -> None:
        self._embeddings = embeddings
        self.name = name
        self.dim = dim or len(embeddings.embed_query("dimension probe"))

    def embed_documents(self, texts: Sequence[str]) -> list[list[float]]:
        return [[float(x) for x in v] for v in self._embeddings.embed_documents(list(texts))]

    def embed_query(self, text: str) -> list[float]:
        return [float(x) for x in self._embeddings.embed_query(text)]


def build_embedder(config: EmbeddingConfig | None) -> Embedder | None:
    """The configured embedder, or None (BM25-only) when no endpoint is set."""
    if config is None:
        return None
    return OpenAICompatibleEmbedder(
        base_url=config.base_url,
        model=config.model,
        api_key=config.api_key,
        dim=config.dim,
        timeout_s=config.timeout_s,
        max_retries=config.max_retries,
    )
