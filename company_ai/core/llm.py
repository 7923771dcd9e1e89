"""The language model as core sees it: what it is asked, and how it fails.

`resources/llm.py::LLMResource` is the implementation (Ollama, or an offline function
from core); core code depends only on `StructuredModel`, so a test can pass a fake.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol, TypeVar

from pydantic import BaseModel

T = TypeVar("T", bound=BaseModel)


class ModelError(RuntimeError):
    """The model failed (unreachable, timed out, or gave invalid output) on every attempt."""


class StructuredModel(Protocol):
    """A model that answers one question with one validated object, or raises ModelError."""

    @property
    def source(self) -> str:
        """The provenance of what it writes (`model:<name>`)."""
        ...

    def structured(
        self, *, system: str, prompt: str, schema: type[T], offline: Callable[[], T | dict]
    ) -> T:
        """An answer of shape `schema`; `offline` is the deterministic answer core offers."""
        ...
