"""rapidocr's three OCR models, stock and folded (``medrealmm.deid.onnx_fold``), side by side.

Runs each model on one thread, as the masker does, on the input shape the masker gives it (a
batch of six 48x320 line crops, one 704x896 page, six 48x192 crops for the direction
classifier) and prints CPU-milliseconds per run, stock and folded, the largest difference
between their outputs, and the machine's load.

    PYTHONPATH=src python benchmarks/ocr_fold.py [--runs 5]
"""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path

import numpy as np

from medrealmm.deid.onnx_env import offline_onnxruntime

offline_onnxruntime()  # before onnxruntime is imported: its telemetry stays off
import onnxruntime as ort  # noqa: E402

from medrealmm.deid.onnx_fold import fold  # noqa: E402

MODELS = Path(__import__("rapidocr_onnxruntime").__file__).parent / "models"
SHAPES = {
    "ch_PP-OCRv4_rec_infer.onnx": (6, 3, 48, 320),
    "ch_PP-OCRv4_det_infer.onnx": (1, 3, 896, 704),
    "ch_ppocr_mobile_v2.0_cls_infer.onnx": (6, 3, 48, 192),
}


def session(model: bytes | str) -> ort.InferenceSession:
    options = ort.SessionOptions()
    options.log_severity_level = 4
    options.enable_cpu_mem_arena = False
    options.intra_op_num_threads = options.inter_op_num_threads = 1
    return ort.InferenceSession(model, options, providers=["CPUExecutionProvider"])


def timed(model: ort.InferenceSession, x: np.ndarray, runs: int) -> tuple[float, np.ndarray]:
    """CPU-milliseconds per run (after one warm-up run), and the output."""
    feed = {model.get_inputs()[0].name: x}
    out = model.run(None, feed)[0]
    started = time.process_time()
    for _ in range(runs):
        model.run(None, feed)
    return (time.process_time() - started) / runs * 1000, out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    load_before = os.getloadavg()[0]
    rng = np.random.default_rng(0)
    for name, shape in SHAPES.items():
        x = rng.uniform(-1, 1, shape).astype(np.float32)
        folded, made = fold((MODELS / name).read_bytes())
        stock_ms, want = timed(session(str(MODELS / name)), x, args.runs)
        fast_ms, got = timed(session(folded), x, args.runs)
        print(
            f"{name:38s} {stock_ms:7.1f} -> {fast_ms:7.1f} CPU-ms  "
            f"x{stock_ms / fast_ms:4.2f}  max |diff| {float(np.abs(got - want).max()):.1e}  {made}"
        )
    print(f"load average (1 min) before / after: {load_before:.2f} / {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
