"""De-identification, measured on the project's own labeled evaluation set.

Prints per-type precision/recall for the rule path and for rules + the LLM pass (offline
baseline unless --model names a served model), clinical-value survival, rule-path text
throughput (MB/s on one core), and image box recall with seconds per 1080p image.

    python benchmarks/deid_eval.py [--images 36] [--model offline]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import tempfile
import time
from collections import Counter
from pathlib import Path

from medrealmm.deid.consultation import deid_turns
from medrealmm.deid.evalset import ImageSetSpec, make_images, make_sentences
from medrealmm.deid.image import load_without_metadata, mask_image
from medrealmm.deid.metrics import TypeScores, covered
from medrealmm.deid.spans import apply_placeholders
from medrealmm.deid.text import find_spans
from medrealmm.llm import build_client, resolve_spec

TARGETS = {"ID": 0.98, "PHONE": 0.98, "EMAIL": 0.98, "URL": 0.98, "NAME": 0.90, "HOSPITAL": 0.90}


def print_scores(title: str, scores: TypeScores) -> None:
    print(f"\n{title}")
    print(f"  {'type':<9} {'n':>4} {'precision':>9} {'recall':>7}  target")
    for kind, n, precision, recall in scores.rows():
        target = f"recall >= {TARGETS[kind]:.2f}" if kind in TARGETS else ""
        print(f"  {kind:<9} {n:>4} {precision:>9.3f} {recall:>7.3f}  {target}")
    print(
        f"  {'overall':<9} {'':>4} {scores.precision():>9.3f} {scores.recall():>7.3f}  precision >= 0.90"
    )


def text_eval(model: str) -> None:
    sentences = make_sentences()
    n_spans = sum(len(s.spans) for s in sentences)
    print(f"text set: {len(sentences)} sentences, {n_spans} labeled spans")
    rules, combined = TypeScores(), TypeScores()
    clinical_total = clinical_kept = 0
    client = build_client(resolve_spec(model))
    for sentence in sentences:
        predicted = find_spans(sentence.text)
        rules.add(sentence.spans, predicted)
        outcome = asyncio.run(deid_turns([sentence.text], client))
        combined.add(sentence.spans, outcome.spans[0])
        masked = outcome.masked[0]
        clinical_total += len(sentence.clinical)
        clinical_kept += sum(value in masked for value in sentence.clinical)
    print_scores("rules only", rules)
    print_scores(f"rules + LLM pass ({client.name})", combined)
    print(f"\nclinical values kept: {clinical_kept}/{clinical_total}")

    corpus = "\n".join(s.text for s in sentences)
    size = len(corpus.encode("utf-8"))
    find_spans(corpus[:200])  # load jieba outside the timing
    repeats, started = 0, time.perf_counter()
    while time.perf_counter() - started < 3.0:
        for sentence in sentences:
            apply_placeholders(sentence.text, find_spans(sentence.text))
        repeats += 1
    elapsed = time.perf_counter() - started
    print(
        f"rule path throughput: {size * repeats / elapsed / 1e6:.2f} MB/s on one core "
        f"({repeats} passes over {size / 1e3:.1f} kB)  target >= 1 MB/s"
    )


def image_eval(count: int) -> None:
    per_kind = max(1, count // 3)
    with tempfile.TemporaryDirectory() as tmp:
        images = make_images(tmp, ImageSetSpec(per_kind=per_kind))
        found, total = Counter(), Counter()
        seconds: list[float] = []
        overmask: list[float] = []
        mask_image(load_without_metadata(Path(tmp) / images[0].path))  # load models untimed
        for labeled in images:
            rgb = load_without_metadata(Path(tmp) / labeled.path)
            result = mask_image(rgb)
            seconds.append(result.seconds)
            black = (result.image == 0).all(axis=-1)
            truth = black.copy()
            truth[:] = False
            for kind, boxes in labeled.boxes.items():
                for box in boxes:
                    total[kind] += 1
                    found[kind] += covered(result.image, box)
                    x0, y0, x1, y1 = box
                    truth[max(0, y0 - 20) : y1 + 20, max(0, x0 - 20) : x1 + 20] = True
            overmask.append(float((black & ~truth).sum() / black.size))
    h, w = load_shape = (1080, 1920)
    print(
        f"\nimage set: {len(images)} generated {w}x{h} images "
        f"({', '.join(sorted({i.category for i in images}))})"
    )
    print(f"  {'kind':<10} {'boxes':>5} {'covered':>7}")
    for kind in sorted(total):
        print(f"  {kind:<10} {total[kind]:>5} {found[kind] / total[kind]:>7.3f}")
    print(
        f"  {'all':<10} {sum(total.values()):>5} {sum(found.values()) / sum(total.values()):>7.3f}"
    )
    print(
        f"  black outside truth boxes (+20px): {statistics.mean(overmask) * 100:.2f}% of the image"
    )
    seconds.sort()
    print(
        f"  seconds per 1080p image: mean {statistics.mean(seconds):.2f}, "
        f"p95 {seconds[int(0.95 * (len(seconds) - 1))]:.2f}  target <= 1 s  {load_shape}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--images", type=int, default=36, help="generated images (>= 30)")
    parser.add_argument("--model", default="offline", help="LLM for the LLM pass")
    parser.add_argument("--text-only", action="store_true")
    args = parser.parse_args()
    text_eval(args.model)
    if not args.text_only:
        image_eval(args.images)


if __name__ == "__main__":
    main()
