"""Image de-identification throughput on each engine, side by side in one run.

Masks the same images (the bundled demo corpus's patient images, rescaled to 1080 px high so
each costs what a phone photo does) through ``medrealmm.engines.offload`` with one worker,
a local pool of N processes and Ray with N CPUs; checks the masks are identical and prints
images/s, the speed-up over one worker, CPU-seconds per image (every process's, all threads)
and the machine's load while it ran. Each engine is warmed up (OCR and face models loaded in
every worker) on images outside the measured ones, with no line readings kept from an earlier
engine (OCR reads a line repeated pixel for pixel once per process: the demo's reports repeat
their template's labels, as forms printed by one system do; photos do not).

    PYTHONPATH=src python benchmarks/deid_engines.py --images 24 --workers 2
"""

from __future__ import annotations

import argparse
import asyncio
import os
import tempfile
import time
from pathlib import Path

from PIL import Image

from medrealmm.deid.ocr import forget_readings
from medrealmm.deid.stage import mask_image_file
from medrealmm.demo import bundled_corpus_dir
from medrealmm.engines import Engine, Offload, offload

HEIGHT = 1080


def frames(folder: Path, n: int) -> list[Path]:
    """The first ``n`` demo images (faces and icons left out), rescaled to 1080 px high."""
    sources = sorted((bundled_corpus_dir() / "images").glob("*/*"))
    sources = [p for p in sources if "face" not in p.name and Image.open(p).height >= 200]
    out = []
    for i, source in enumerate((sources * (n // max(1, len(sources)) + 1))[:n]):
        with Image.open(source) as img:
            rgb = img.convert("RGB")
            scaled = rgb.resize((round(rgb.width * HEIGHT / rgb.height), HEIGHT))
        target = folder / f"{i:03d}{source.suffix}"
        scaled.save(target)
        out.append(target)
    return out


def timed_mask(source: Path, target: Path, rel: str) -> tuple[str, float]:
    """One image masked, and the CPU-seconds its process spent on it (a worker process runs
    one image at a time, so that is the image's cost, OCR and OpenCV threads included)."""
    started = time.process_time()
    record = mask_image_file(source, target, rel)
    return repr(record.boxes), time.process_time() - started


async def mask_all(pool: Offload, images: list[Path], out: Path) -> list[tuple[str, float]]:
    async def one(path: Path) -> tuple[str, float]:
        return await pool(timed_mask, path, out / path.name, path.name)

    return list(await asyncio.gather(*(one(p) for p in images)))


def run(
    engine: Engine, workers: int, images: list[Path], warm: list[Path], out: Path
) -> tuple[float, list[str], float]:
    """Seconds, the boxes of each image, and CPU-seconds in all: this process's, plus the
    workers' own where they are other processes (threads of this one are counted in it)."""
    forget_readings()  # worker processes fork from this one: none inherits a reading
    with offload(engine, workers) as pool:
        asyncio.run(mask_all(pool, warm[:workers], out))  # warm every worker
        started, cpu_started = time.perf_counter(), time.process_time()
        results = asyncio.run(mask_all(pool, images, out))
        seconds, cpu = time.perf_counter() - started, time.process_time() - cpu_started
    if pool.workers > 1 or engine is Engine.RAY:
        cpu += sum(spent for _, spent in results)
    return seconds, [boxes for boxes, _ in results], cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--images", type=int, default=24)
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args()
    load_before = os.getloadavg()
    with tempfile.TemporaryDirectory() as tmp:
        folder, out = Path(tmp) / "in", Path(tmp) / "out"
        folder.mkdir()
        out.mkdir()
        images = frames(folder, args.images + args.workers)
        images, warm = images[: args.images], images[args.images :]
        runs = [
            ("local, 1 worker", Engine.LOCAL, 1),
            (f"local, {args.workers} processes", Engine.LOCAL, args.workers),
            (f"ray, {args.workers} cpus", Engine.RAY, args.workers),
        ]
        results = [(label, *run(engine, w, images, warm, out)) for label, engine, w in runs]
    load_after = os.getloadavg()
    print(f"{len(images)} images, 1080 px high, on {os.cpu_count()} CPUs")
    base_seconds, base_boxes = results[0][1], results[0][2]
    for label, seconds, boxes, cpu in results:
        same = "identical" if boxes == base_boxes else "DIFFERENT"
        rate = len(images) / seconds
        speedup = base_seconds / seconds
        print(
            f"{label:22s} {seconds:7.1f} s {rate:6.2f} images/s  x{speedup:4.2f}  "
            f"{cpu / len(images):5.2f} CPU-s/image  {same}"
        )
    print(
        "load average (1 min) before / after: "
        f"{load_before[0]:.1f} / {load_after[0]:.1f} (other processes share these CPUs)"
    )


if __name__ == "__main__":
    main()
