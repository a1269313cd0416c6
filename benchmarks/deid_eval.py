"""De-identification, measured on the project's own labeled evaluation set.

Prints per-type precision/recall for the rule path and for rules + the LLM pass (offline
baseline unless --model names a served model), clinical-value survival, rule-path text
throughput (MB/s on one core), and image box recall with seconds per 1080p image.

    python benchmarks/deid_eval.py [--images 36] [--model offline]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import tempfile
import time
from collections import Counter
from pathlib import Path

from medrealmm.deid.consultation import deid_turns
from medrealmm.deid.image import load_without_metadata, mask_image
from medrealmm.deid.metrics import TypeScores, covered
from medrealmm.deid.spans import apply_placeholders
from medrealmm.deid.text import find_spans
from medrealmm.demo import CORPUS_FILE, TRUTH_FILE, bundled_corpus_dir
from medrealmm.io import iter_jsonl
from medrealmm.llm import build_client, resolve_spec
from medrealmm.schema import Consultation
from medrealmm.testing.deid_regression_set import ImageSetSpec, make_images, make_sentences

TARGETS = {"ID": 0.98, "PHONE": 0.98, "EMAIL": 0.98, "URL": 0.98, "NAME": 0.90, "HOSPITAL": 0.90}


def print_scores(title: str, scores: TypeScores) -> None:
    print(f"\n{title}")
    print(f"  {'type':<9} {'n':>4} {'precision':>9} {'recall':>7}  target")
    for kind, n, precision, recall in scores.rows():
        target = f"recall >= {TARGETS[kind]:.2f}" if kind in TARGETS else ""
        print(f"  {kind:<9} {n:>4} {precision:>9.3f} {recall:>7.3f}  {target}")
    overall = f"{scores.precision():>9.3f} {scores.recall():>7.3f}"
    print(f"  {'overall':<9} {'':>4} {overall}  precision >= 0.90")


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

    rate = throughput([s.text for s in sentences])
    print(
        f"rule path throughput on the sentence set: {rate:.2f} MB/s on one core  target >= 1 MB/s"
    )


def demo_corpus_eval() -> None:
    """The bundled demo corpus: its planted identifiers are the only ones, so any other
    span is a false positive on realistic consultation text."""
    root = bundled_corpus_dir()
    truth = json.loads((root / TRUTH_FILE).read_text(encoding="utf-8"))
    planted_total = planted_found = spans_total = spans_false = 0
    texts: list[str] = []
    for consultation in iter_jsonl(root / CORPUS_FILE, Consultation):
        planted = {
            v for values in truth[consultation.id]["planted_text_pii"].values() for v in values
        }
        spans = [s for e in consultation.events for s in find_spans(e.content)]
        texts += [e.content for e in consultation.events]
        spans_total += len(spans)
        spans_false += sum(not any(s.text in p or p in s.text for p in planted) for s in spans)
        planted_total += len(planted)
        planted_found += sum(any(p in s.text or s.text in p for s in spans) for p in planted)
    print(
        f"\ndemo corpus ({len(truth)} consultations): planted identifiers found "
        f"{planted_found}/{planted_total}; spans that are not planted identifiers "
        f"{spans_false}/{spans_total} (precision {1 - spans_false / max(1, spans_total):.3f})"
    )
    print(f"rule path throughput on demo corpus text: {throughput(texts):.2f} MB/s on one core")


def throughput(texts: list[str], seconds: float = 3.0) -> float:
    size = sum(len(t.encode("utf-8")) for t in texts)
    find_spans(texts[0])  # load jieba outside the timing
    repeats, started = 0, time.perf_counter()
    while time.perf_counter() - started < seconds:
        for text in texts:
            apply_placeholders(text, find_spans(text))
        repeats += 1
    return size * repeats / (time.perf_counter() - started) / 1e6


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
    h, w = 1080, 1920
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
        f"p95 {seconds[int(0.95 * (len(seconds) - 1))]:.2f}  target <= 1 s"
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
    demo_corpus_eval()
    if not args.text_only:
        image_eval(args.images)


if __name__ == "__main__":
    main()
