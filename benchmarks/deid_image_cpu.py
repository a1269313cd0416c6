"""CPU-seconds per image of ``mask_image``, two source trees side by side.

Each tree masks the same images in its own process (warm-up image first, then every image
once), in turns (A, B, A, B): a shared machine's load drifts, and a ratio is only fair when
both sides run in the same minutes. Prints the mean and median CPU-seconds per image, the
ratio, and the load.

    python benchmarks/deid_image_cpu.py IMAGE_DIR --base OTHER_CHECKOUT/src [--rounds 2]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

WORKER = """
import json, sys, time
from medrealmm.deid.image import load_without_metadata, mask_image
paths = sys.argv[1:]
mask_image(load_without_metadata(paths[0]))
out = []
for path in paths:
    rgb = load_without_metadata(path)
    start = time.process_time()
    mask_image(rgb)
    out.append(time.process_time() - start)
print(json.dumps(out))
"""


def run(src: Path, images: list[Path]) -> list[float]:
    env = {**os.environ, "PYTHONPATH": str(src), "OMP_NUM_THREADS": "1"}
    done = subprocess.run(
        [sys.executable, "-c", WORKER, *map(str, images)],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    return list(json.loads(done.stdout.strip().splitlines()[-1]))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("images", type=Path)
    parser.add_argument("--base", type=Path, required=True, help="the other tree's src folder")
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()
    images = sorted(p for p in args.images.iterdir() if p.suffix.lower() in (".png", ".jpg"))
    here = Path(__file__).resolve().parents[1] / "src"
    times: dict[str, list[float]] = {"this": [], "base": []}
    for _ in range(args.rounds):
        for name, src in (("this", here), ("base", args.base.resolve())):
            times[name] += run(src, images)
    load = os.getloadavg()
    for name, values in times.items():
        print(
            f"{name}: {len(values)} masks, CPU-s/image mean {statistics.mean(values):.3f}, "
            f"median {statistics.median(values):.3f}"
        )
    ratio = statistics.mean(times["this"]) / statistics.mean(times["base"])
    print(f"this/base mean CPU ratio {ratio:.2f}; load {[round(v, 2) for v in load]}")


if __name__ == "__main__":
    main()
