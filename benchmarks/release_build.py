"""Release build cost, side by side with the floor (copying the same image bytes).

The bundled synthetic demo corpus stands in for a de-identified corpus; each consultation gets
one instance and one rubric. Prints seconds per build, the ratio to a plain image copy, and
whether two builds gave identical checksums.

    python benchmarks/release_build.py [--copies N]
"""

from __future__ import annotations

import argparse
import os
import shutil
import tempfile
import time
from pathlib import Path

from medrealmm.demo import CORPUS_FILE, bundled_corpus_dir
from medrealmm.io import iter_jsonl
from medrealmm.release import ReleaseInfo, build_release
from medrealmm.schema import Consultation, Criterion, Instance, Rubric, Sender
from medrealmm.store import RunStore, stages


def instance_of(case: Consultation) -> Instance:
    events = case.events
    t = max(
        i
        for i in range(len(events) - 1)
        if events[i].sender is Sender.PATIENT and events[i + 1].sender is Sender.PHYSICIAN
    )
    return Instance(
        id=f"{case.id}#t{t}",
        consultation_id=case.id,
        department=case.department,
        t_star=t,
        context=events[: t + 1],
        target_reply=events[t + 1].content,
    )


def fill(store: RunStore, copies: int) -> int:
    source = bundled_corpus_dir()
    cases = [
        c.model_copy(update={"id": f"{c.id}-{k}"})
        for k in range(copies)
        for c in iter_jsonl(source / CORPUS_FILE, Consultation)
        if not c.id.startswith("demo-bad")
    ]
    store.put_many(stages.CORPUS_FINAL, ((c.id, c) for c in cases))
    store.set_meta(stages.image_root_key(stages.CORPUS_FINAL), str(source))
    instances = [instance_of(c) for c in cases]
    store.put_many(stages.MCCP_INSTANCE, ((i.id, i) for i in instances))
    criteria = [Criterion(id="c1", text="询问病程", weight=5)]
    store.put_many(
        stages.RUBRIC_FINAL,
        ((i.id, Rubric(instance_id=i.id, criteria=criteria, approved=True)) for i in instances),
    )
    return len(cases)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--copies", type=int, default=3, help="Times the demo corpus is repeated.")
    args = parser.parse_args()
    info = ReleaseInfo(name="bench", version="1.0", title="bench", authors=("bench",))
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        with RunStore(root / "run") as store:
            cases = fill(store, args.copies)

        timings = []
        for name in ("a", "b"):
            start = time.perf_counter()
            result = build_release(root / "run", root / name, info)
            timings.append(time.perf_counter() - start)
            manifest = result.manifest
        images = [root / "a" / p for p in manifest["files"] if p.startswith("images/")]
        start = time.perf_counter()
        for i, path in enumerate(images):
            shutil.copyfile(path, root / f"copy-{i}")
        floor = time.perf_counter() - start
        same = build_release(root / "run", root / "c", info).manifest["files"] == manifest["files"]
        size = sum(p.stat().st_size for p in (root / "a").rglob("*") if p.is_file())

    build = min(timings)
    print(f"cases: {cases}, images: {len(images)}, release bytes: {size:,}")
    print(f"build: {build:.3f} s ({cases / build:,.0f} cases/s)")
    print(f"image copy alone: {floor:.3f} s; build / copy ratio: {build / max(floor, 1e-9):.1f}x")
    print(f"identical checksums across builds: {same}")


if __name__ == "__main__":
    print(f"load average before: {os.getloadavg()[0]:.2f} on {os.cpu_count()} CPUs")
    main()
    print(f"load average after: {os.getloadavg()[0]:.2f}")
