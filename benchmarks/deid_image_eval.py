"""Image de-identification measured on drawn layouts this code base did not generate.

The set (benchmarks/deid_evalset/images/draw.py) draws lab reports, prescriptions, chat
screenshots, CT/ultrasound films and skin photos from Faker zh_CN identities, some reports
photographed on a table (turned 5-30 degrees, blurred, JPEG). Dev and test are different layout
variants and seeds; rules were tuned on dev only, the README reports test. Per split and class:

* boxes covered: identifier quads at least 90% blacked (of the pixels not already pure black,
  such as barcode bars), and the mean blacked share of them;
* clinical lost: share of clinical-region pixels blacked (lab table, drugs, lesion, callouts);
* outside blacked: share of pixels outside every identifier that were blacked;
* whole: images more than 60% blacked.

    python benchmarks/deid_image_eval.py [--split test|dev|both] [--per-family 5] [--misses DIR]
        [--outside ../shared/deid-outside]

``--misses DIR`` writes a crop of every under-covered box (study the dev half, not test).
``--outside DIR`` also scores an outside image set read in place (``DIR/images/gold.json``:
identifier and clinical polygons per image) by that set's own rules: an identifier polygon is
covered at 98% black pixels, clinical pixels blacked are losses, pixels outside every
identifier are counted too. Nothing of it is copied; its misses are listed by label only.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections import defaultdict
from pathlib import Path

import cv2
import numpy as np

from medrealmm.deid.image import load_without_metadata, mask_image

sys.path.insert(0, str(Path(__file__).parent / "deid_evalset" / "images"))
from draw import Quad, Sample, samples

WHOLE = 0.6
COVERED = 0.9
OUTSIDE_COVERED = 0.98


def _region(shape: tuple[int, ...], quads: list[Quad]) -> np.ndarray:
    mask = np.zeros(shape[:2], np.uint8)
    for quad in quads:
        cv2.fillPoly(mask, [np.round(np.array(quad)).astype(np.int32)], 1)
    return mask.astype(bool)


def dump_misses(sample: Sample, masked: np.ndarray, shares: list[float], folder: Path) -> None:
    """Crops of the boxes left under-covered, outlined in red, for study (drawn data only)."""
    folder.mkdir(parents=True, exist_ok=True)
    for k, (quad, share) in enumerate(zip(sample.ids, shares, strict=True)):
        if share >= COVERED:
            continue
        pts = np.round(np.array(quad)).astype(np.int32)
        x0, y0 = np.maximum(pts.min(axis=0) - 40, 0)
        x1, y1 = pts.max(axis=0) + 40
        canvas = np.ascontiguousarray(masked[:, :, ::-1])
        cv2.polylines(canvas, [pts], True, (0, 0, 255), 1)
        cv2.imwrite(str(folder / f"{sample.name}-box{k}-{share:.2f}.png"), canvas[y0:y1, x0:x1])


def measure(sample: Sample, misses: Path | None = None) -> dict[str, float]:
    started = time.process_time()
    result = mask_image(sample.image)
    cpu = time.process_time() - started
    inked = np.all(sample.image == 0, axis=-1)  # pure black before masking (barcode bars)
    black = np.all(result.image == 0, axis=-1) & ~inked
    # A box's share counts only pixels that masking could change: bars already black are
    # neither evidence of a mask nor of a miss.
    shares = []
    for quad in sample.ids:
        region = _region(black.shape, [quad]) & ~inked
        shares.append(float(black[region].mean()) if region.any() else 1.0)
    if misses is not None:
        dump_misses(sample, result.image, shares, misses)
    ids = _region(black.shape, sample.ids)
    clinical = _region(black.shape, sample.clinical) & ~ids
    return {
        "boxes": len(shares),
        "covered": sum(s >= COVERED for s in shares),
        "share": sum(shares),
        "clinical_px": int(clinical.sum()),
        "clinical_lost": int((black & clinical).sum()),
        "outside_px": int((~ids).sum()),
        "outside_black": int((black & ~ids).sum()),
        "whole": float(black.mean() > WHOLE),
        "images": 1,
        "cpu": cpu,
    }


def report(split: str, per_family: int, misses: Path | None = None) -> dict[str, dict[str, float]]:
    totals: dict[str, dict[str, float]] = defaultdict(lambda: defaultdict(float))
    for sample in samples(split, per_family):
        row = measure(sample, misses)
        for key in (sample.kind, "all"):
            for name, value in row.items():
                totals[key][name] += value
    print(f"\n[{split}] load {os.getloadavg()[0]:.2f}")
    print(
        f"{'class':<13}{'imgs':>5}{'boxes':>6}{'covered':>9}{'share':>7}"
        f"{'clin.lost':>10}{'outside':>9}{'whole':>6}{'s/img':>7}"
    )
    for key, t in sorted(totals.items(), key=lambda kv: kv[0] == "all"):
        boxes = max(1, t["boxes"])
        print(
            f"{key:<13}{int(t['images']):>5}{int(t['boxes']):>6}{t['covered'] / boxes:>9.3f}"
            f"{t['share'] / boxes:>7.3f}{t['clinical_lost'] / max(1, t['clinical_px']):>10.2%}"
            f"{t['outside_black'] / max(1, t['outside_px']):>9.2%}{int(t['whole']):>6}"
            f"{t['cpu'] / t['images']:>7.2f}"
        )
    return totals


def _polygon(shape: tuple[int, ...], poly: list[list[float]]) -> np.ndarray:
    mask = np.zeros(shape[:2], np.uint8)
    cv2.fillPoly(mask, [np.array([[round(x), round(y)] for x, y in poly], np.int32)], 1)
    return mask.astype(bool)


def report_outside(folder: Path) -> dict[str, float]:
    """An outside set's images (input clamped to >= 1, so pure black means masked)."""
    import json

    gold = json.loads((folder / "images" / "gold.json").read_text(encoding="utf-8"))
    t: dict[str, float] = defaultdict(float)
    misses: list[str] = []
    for item in gold["images"]:
        rgb = np.maximum(load_without_metadata(folder / "images" / item["file"]), 1)
        started = time.process_time()
        black = np.all(mask_image(rgb).image == 0, axis=-1)
        t["cpu"] += time.process_time() - started
        ids = np.zeros(black.shape, bool)
        for it in item["identifiers"]:
            region = _polygon(black.shape, it["poly"])
            ids |= region
            covered = float(black[region].mean()) >= OUTSIDE_COVERED if region.any() else True
            t["boxes"] += 1
            t["covered"] += covered
            if not covered:
                misses.append(it["label"])
        clinical = np.zeros(black.shape, bool)
        for it in item["clinical"]:
            clinical |= _polygon(black.shape, it["poly"]) & ~ids
        t["clinical_px"] += clinical.sum()
        t["clinical_lost"] += (black & clinical).sum()
        t["outside_px"] += (~ids).sum()
        t["outside_black"] += (black & ~ids).sum()
        t["images"] += 1
    print(f"\n[outside {folder.name}] load {os.getloadavg()[0]:.2f}")
    print(
        f"{int(t['images'])} images: {int(t['covered'])}/{int(t['boxes'])} identifier polygons "
        f"covered ({t['covered'] / max(1, t['boxes']):.3f}), "
        f"{t['clinical_lost'] / max(1, t['clinical_px']):.2%} of clinical pixels blacked, "
        f"{t['outside_black'] / max(1, t['outside_px']):.2%} of other pixels blacked, "
        f"{t['cpu'] / max(1, t['images']):.2f} CPU-s/img; missed: {', '.join(misses) or 'none'}"
    )
    return t


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--split", choices=("dev", "test", "both"), default="both")
    parser.add_argument("--per-family", type=int, default=5)
    parser.add_argument("--misses", type=Path, help="write crops of under-covered boxes here")
    parser.add_argument("--outside", type=Path, help="also score this outside set, in place")
    args = parser.parse_args(argv)
    if args.outside is not None:
        if not (args.outside / "images" / "gold.json").is_file():
            parser.error(f"--outside {args.outside}: no images/gold.json there")
        report_outside(args.outside)
    for split in ("dev", "test") if args.split == "both" else (args.split,):
        report(split, args.per_family, args.misses)


if __name__ == "__main__":
    main()
