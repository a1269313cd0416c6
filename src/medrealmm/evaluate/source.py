"""Where an evaluation's cases come from: a release, a Hugging Face copy of one, or a builder's
run store. Most users never build a benchmark: they download a release and score their models.

A release is read-only input: it is opened through the release loader (DUA acceptance and
every checksum checked) and nothing is ever written into it. Its instances and applicable
rubrics are copied into the results run's store, images are read from the release in place.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path

from medrealmm.evaluate.provenance import BENCHMARK_META, BenchmarkRef
from medrealmm.release import layout
from medrealmm.release.loader import is_release, load_release
from medrealmm.release.outputs import check_output
from medrealmm.rubric.rounds import evaluation_rubrics, round_key
from medrealmm.schema import Instance, Rubric
from medrealmm.store import STORE_FILENAME, RunStore, stages
from medrealmm.store.runstore import store_file


@dataclass(frozen=True)
class Benchmark:
    """The cases to evaluate: instances, the rubric that applies to each, their images."""

    ref: BenchmarkRef
    instances: list[Instance]
    rubrics: list[Rubric]
    image_root: Path | None


def is_run(path: Path) -> bool:
    try:
        return store_file(path).is_file()
    except ValueError:  # a file that is not a run store
        return False


def read_release(root: Path) -> Benchmark:
    """Refuses an unaccepted DUA (``DUANotAccepted``) or any changed, missing or added file."""
    release = load_release(root)
    manifest_bytes = (root / layout.MANIFEST).read_bytes()
    ref = BenchmarkRef(
        kind="release",
        location=str(root.resolve()),
        name=str(release.manifest.get("name")),
        version=release.version,
        manifest_sha256=hashlib.sha256(manifest_bytes).hexdigest(),
    )
    return Benchmark(ref, release.instances, release.rubrics, root.resolve())


def read_run(store: RunStore) -> Benchmark:
    """A builder's instances with the rubric evaluation applies (approved R*, else latest)."""
    root = store.image_root(stages.MCCP_INSTANCE)
    return Benchmark(
        ref=BenchmarkRef(kind="run", location=str(store.path.parent.resolve())),
        instances=list(store.iter(stages.MCCP_INSTANCE, Instance)),
        rubrics=list(evaluation_rubrics(store).values()),
        image_root=root.resolve() if root else None,
    )


def copy_into(store: RunStore, benchmark: Benchmark) -> None:
    """Make ``store``'s instances and rubrics exactly the benchmark's (a rerun after a new
    release version replaces them; scores graded against a rubric that changed turn stale)."""
    recorded = store.get_meta(BENCHMARK_META)
    if not recorded and store.count(stages.MCCP_INSTANCE):
        raise ValueError(
            f"{store.path.parent} is a builder's run, not a results folder; choose an empty --out"
        )
    if recorded and recorded.get("name") != benchmark.ref.name:
        raise ValueError(
            f"{store.path.parent} holds results for benchmark {recorded.get('name')!r} "
            f"({recorded.get('location')}); evaluate {benchmark.ref.name!r} into another --out"
        )
    # One transaction; results made from an instance that changed (or left) go with it.
    store.replace(
        {
            stages.MCCP_INSTANCE: ((i.id, i) for i in benchmark.instances),
            stages.RUBRIC_ROUND: (
                (round_key(r.instance_id, r.round), r) for r in benchmark.rubrics
            ),
            stages.RUBRIC_FINAL: ((r.instance_id, r) for r in benchmark.rubrics if r.approved),
        }
    )
    store.set_image_root(stages.MCCP_INSTANCE, benchmark.image_root)
    store.set_meta(BENCHMARK_META, benchmark.ref.model_dump(mode="json"))


def _inside(path: Path, folder: Path) -> bool:
    path, folder = path.resolve(), folder.resolve()
    return path == folder or folder in path.parents


def results_store(
    source: Path, out: Path | None, *, writer: bool = True
) -> tuple[RunStore, Benchmark | None]:
    """The store results go to, filled from ``source`` unless it is the builder's own run.

    ``writer`` takes the run's one writer lock, so two evaluations never send the same calls
    twice (a dry run, which sends none, does not). Returns the benchmark copied in (None when
    evaluating a builder's run in place).
    """
    origin = None  # the stage a builder's instances were cut from: the PHI rule follows it
    # By content: a builder's run folder holds the corpus build's manifest.json too.
    if is_release(source):
        if out is None:
            raise ValueError(
                f"{source} is a release, which is read-only: give --out RUN for the results"
            )
        check_output(store_file(out).parent, option="--out", folder=True, inputs=[source])
        benchmark = read_release(source)
    elif is_run(source):
        if out is None or _inside(out, source if source.is_dir() else source.parent):
            return RunStore(source, writer=writer), None
        check_output(store_file(out).parent, option="--out", folder=True, inputs=[source])
        with RunStore(source, create=False) as builder:
            benchmark = read_run(builder)
            origin = builder.get_meta(stages.MCCP_SOURCE_META)
    else:
        raise FileNotFoundError(
            f"{source} is neither a release (no release {layout.MANIFEST}) nor a run "
            f"(no {STORE_FILENAME}); give a release folder, a Hugging Face copy of one, or a run"
        )
    store = RunStore(out, writer=writer)
    try:
        copy_into(store, benchmark)
        if origin is not None:
            store.set_meta(stages.MCCP_SOURCE_META, origin)
    except BaseException as exc:
        store.close(failed=isinstance(exc, Exception))
        raise
    return store, benchmark
