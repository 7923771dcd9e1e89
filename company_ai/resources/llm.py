import time
from collections.abc import Callable
from typing import Literal, TypeVar

import dagster as dg
from pydantic import BaseModel, PrivateAttr, ValidationError

from company_ai.core.llm import ModelError, StructuredModel

T = TypeVar("T", bound=BaseModel)

__all__ = ["LLMResource", "ModelError", "OfflineModel", "OllamaModel"]


class OfflineModel:
    """The caller's deterministic function from `core`, validated like a model's answer."""

    source = "model:offline"

    def structured(
        self, *, system: str, prompt: str, schema: type[T], offline: Callable[[], T | dict]
    ) -> T:
        answer = offline()
        return answer if isinstance(answer, schema) else schema.model_validate(answer)


class OllamaModel:
    """The official client against an Ollama server: a JSON schema passed as `format`, the
    answer validated by pydantic, a timeout and `max_attempts` with backoff."""

    def __init__(
        self, host: str, model: str, timeout_s: float, max_attempts: int, backoff_s: float
    ) -> None:
        self.host, self.model, self.timeout_s = host, model, timeout_s
        self.max_attempts, self.backoff_s = max_attempts, backoff_s

    @property
    def source(self) -> str:
        return f"model:{self.model}"

    def structured(
        self, *, system: str, prompt: str, schema: type[T], offline: Callable[[], T | dict]
    ) -> T:
        # Imported here: every run loads this module, and the offline default needs neither.
        import httpx
        import ollama

        client = ollama.Client(host=self.host, timeout=self.timeout_s)
        messages = [{"role": "system", "content": system}, {"role": "user", "content": prompt}]
        problem = "no attempt made"
        for attempt in range(1, self.max_attempts + 1):
            try:
                response = client.chat(
                    model=self.model,
                    messages=messages,
                    format=schema.model_json_schema(),
                    options={"temperature": 0},
                    think=False,
                )
                return schema.model_validate_json(response.message.content or "")
            except ValidationError as exc:
                problem = f"invalid output: {exc.errors()[0]['msg']}"
            except httpx.TimeoutException:
                problem = f"timed out after {self.timeout_s:g} s"
            except (ollama.ResponseError, httpx.HTTPError, ConnectionError) as exc:
                problem = f"{type(exc).__name__}: {exc}"
            if attempt < self.max_attempts:
                time.sleep(self.backoff_s * 2 ** (attempt - 1))
        raise ModelError(
            f"{self.model} at {self.host} failed {self.max_attempts} times; last: {problem}"
        )


class LLMResource(dg.ConfigurableResource):
    """The language model. `ollama`: the official client against an Ollama server, with
    structured output (a JSON schema passed as `format`, the answer validated by pydantic),
    a timeout and retries with backoff (`OllamaModel`). `offline` (the default, used by the
    demo and the tests): the caller's deterministic function from `core`, validated the
    same way (`OfflineModel`). The model is chosen once, at the first use
    (`implementation`). Satisfies `core.llm.StructuredModel`."""

    backend: Literal["offline", "ollama"] = "offline"
    host: str = "http://127.0.0.1:11434"
    model: str = "qwen3:8b"
    timeout_s: float = 120.0
    max_attempts: int = 3
    backoff_s: float = 2.0
    _chosen: StructuredModel | None = PrivateAttr(default=None)

    def implementation(self) -> StructuredModel:
        """The model of `backend`, made once."""
        if self._chosen is None:
            if self.backend == "offline":
                self._chosen = OfflineModel()
            else:
                self._chosen = OllamaModel(
                    self.host, self.model, self.timeout_s, self.max_attempts, self.backoff_s
                )
        return self._chosen

    @property
    def source(self) -> str:
        """The provenance of what this model writes (`model:` marks a guess, confidence < 1)."""
        return self.implementation().source

    def structured(
        self, *, system: str, prompt: str, schema: type[T], offline: Callable[[], T | dict]
    ) -> T:
        """One answer of shape `schema`, or ModelError; never a partial or unvalidated one."""
        return self.implementation().structured(
            system=system, prompt=prompt, schema=schema, offline=offline
        )
