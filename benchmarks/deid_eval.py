"""De-identification measured on an evaluation set this code base did not generate.

The text set (benchmarks/deid_evalset/, made by ``make.py`` and ``make_cd.py``, two separately
written generators, from Faker and mimesis identities in disjoint dev/test phrasing families)
has a dev half, the only one rules were tuned on, and a test half, which the README reports.
For each half it prints, per identifier type:

* recall: the share of true identifiers whose characters are at least 90% masked (any type:
  what matters for privacy), and the share also given the right type;
* precision: the share of masked spans that overlap a true identifier;

for rules alone, rules + the LAC NER recognizer (the default), and + the LLM pass (offline
baseline unless --model names a served model); then the share of clinical terms (drugs,
diseases, doses, lab values) left intact, and the text path's speed in KB per CPU-second (best
of three passes, each printed). A last column masks the same half written in traditional
characters (OpenCC's simplified-to-traditional character table, one for one, so the offsets
hold), as Hong Kong, Macau and Taiwan write: rules + NER on text the generators never wrote so.
``--regression`` adds the older same-code set (an upper bound, kept to catch regressions) and
its generated images.

``--outside DIR`` adds an outside set of consultations read in place from ``DIR/text.jsonl``
(set A, ``../shared/deid-outside``, is one; nothing of it is in this repository): recall by
type, precision and clinical terms kept, through ``deid_turns`` without and with the LLM pass,
scored as its own scorer scores it (``deid_outside.py``). Rules were tuned on set A: a dev set.

``--weibo DIR`` adds an outside set of real posts: the Weibo NER corpus (Peng and Dredze 2015,
revised by He and Sun 2017; CC BY-SA 3.0), read from the ``data`` folder of a clone of
github.com/hltcoe/golden-horse (``weiboNER_2nd_conll.{train,dev,test}``; nothing of it is in
this repository). It prints person-name recall (PER.NAM: a named person; PER.NOM mentions are
nominals such as 老公, 小伙伴, 宝宝, shown but not targets) and the NAME spans that overlap no
annotated entity of any kind. Names were tuned on its train and dev splits; report test.
``--weibo-swap ROUNDS`` adds recall on the split's full names swapped among its own posts, one
seeded round each: a check, on train or dev, that a kind finds names by position and shape
rather than by the names it was tuned on.

``--speed`` prints only the speed, in a fresh process per measurement; ``--against OLD/src``
times another checkout alongside, round by round (``--rounds``), and says whether the two
masked every text alike.

    python benchmarks/deid_eval.py [--split test|dev|both] [--model offline] [--regression]
                                   [--outside ../shared/deid-outside]
                                   [--weibo DIR [--weibo-split test|dev|train]
                                    [--weibo-swap ROUNDS]]
    python benchmarks/deid_eval.py --speed --split test [--against OLD/src [--rounds 3]]
"""

from __future__ import annotations

import argparse
import asyncio
import functools
import json
import os
import random
import re
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

from deid_outside import outside_eval

from medrealmm.deid import ner
from medrealmm.deid.consultation import deid_turns
from medrealmm.deid.image import load_without_metadata, mask_image
from medrealmm.deid.metrics import TypeScores, covered
from medrealmm.deid.names import AFTER_TITLES, SURNAME_RE
from medrealmm.deid.registry import Registry, default_registry, rules_registry
from medrealmm.deid.spans import (
    _TYPE_RANK,
    EntityType,
    Span,
    apply_placeholders,
    resolve_overlaps,
)
from medrealmm.deid.text import find_spans, find_spans_in
from medrealmm.llm import build_client, resolve_spec
from medrealmm.testing.deid_regression_set import ImageSetSpec, make_images, make_sentences

SET = Path(__file__).parent / "deid_evalset" / "data"
STRUCTURED = ("ID", "PHONE", "EMAIL", "URL", "MRN", "ORDER_ID")
# Every type >= 0.95; the structured ones, which rules find by shape, all of them.
TARGETS = {**dict.fromkeys([t.value for t in EntityType], 0.95), **dict.fromkeys(STRUCTURED, 1.0)}


@dataclass
class Row:
    text: str
    truth: list[Span]
    clinical: list[str]


@dataclass
class Tally:
    found: Counter[str] = field(default_factory=Counter)
    typed: Counter[str] = field(default_factory=Counter)
    total: Counter[str] = field(default_factory=Counter)
    predicted: int = 0
    on_target: int = 0
    terms: int = 0
    terms_kept: int = 0

    def add(self, row: Row, spans: list[Span]) -> None:
        masked_chars = {i for s in spans for i in range(s.start, s.end)}
        for gold in row.truth:
            kind = gold.type.value
            self.total[kind] += 1
            inside = sum(i in masked_chars for i in range(gold.start, gold.end))
            if inside >= 0.9 * gold.length:
                self.found[kind] += 1
                self.typed[kind] += any(s.type is gold.type and s.overlaps(gold) for s in spans)
        self.predicted += len(spans)
        self.on_target += sum(any(s.overlaps(g) for g in row.truth) for s in spans)
        masked = apply_placeholders(row.text, spans)
        self.terms += len(row.clinical)
        self.terms_kept += sum(term in masked for term in row.clinical)

    def recall(self, kind: str | None = None) -> float:
        found = self.found[kind] if kind else sum(self.found.values())
        total = self.total[kind] if kind else sum(self.total.values())
        return found / total if total else float("nan")

    def precision(self) -> float:
        return self.on_target / self.predicted if self.predicted else float("nan")


@functools.cache
def _traditional_table() -> dict[int, int]:
    """OpenCC's simplified-to-traditional character table, the first form of each: one
    character for one."""
    path = resources.files("opencc") / "dictionary" / "STCharacters.txt"
    table = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        key, _, values = line.partition("\t")
        value = values.split(" ", 1)[0]
        if len(key) == 1 and len(value) == 1:
            table[ord(key)] = ord(value)
    return table


def traditional_row(row: Row) -> Row:
    """``row`` written in traditional characters, its spans and clinical terms with it."""
    table = _traditional_table()
    text = row.text.translate(table)
    truth = [s.model_copy(update={"text": text[s.start : s.end]}) for s in row.truth]
    return Row(text, truth, [term.translate(table) for term in row.clinical])


def load(split: str) -> list[Row]:
    rows = []
    lines = [
        line
        for path in sorted(SET.glob(f"{split}*.jsonl"))  # make.py's and make_cd.py's rows
        for line in path.read_text(encoding="utf-8").splitlines()
    ]
    for line in lines:
        raw = json.loads(line)
        truth = [
            Span(
                start=s["start"],
                end=s["end"],
                type=EntityType(s["type"]),
                text=raw["text"][s["start"] : s["end"]],
                source="truth",
            )
            for s in raw["spans"]
        ]
        rows.append(Row(raw["text"], truth, raw["clinical"]))
    return rows


def fresh(registry: Registry) -> Registry:
    """No NER cache carried over from an earlier measurement."""
    for recognizer in registry:
        if isinstance(recognizer, ner.LacNerRecognizer):
            recognizer._tagger = ner._Tagger()
    return registry


class TimedSession:
    """The NER model's session with its CPU time summed: a speed figure can then say how much
    of a pass is the model's and how much is the code around it."""

    def __init__(self, session: Any) -> None:
        self.session = session
        self.cpu = 0.0

    def run(self, *args: Any, **kwargs: Any) -> Any:
        started = time.process_time()
        try:
            return self.session.run(*args, **kwargs)
        finally:
            self.cpu += time.process_time() - started


def timed_model() -> TimedSession:
    """The loaded model's session, wrapped once in a ``TimedSession``."""
    model = ner._model()
    if not isinstance(model.session, TimedSession):
        model.session = TimedSession(model.session)
    return model.session


@dataclass
class Pass:
    """One timed pass over a half: KB per CPU-second, its CPU seconds and the model's part."""

    rate: float
    cpu: float
    model: float


def kb_per_cpu_second(
    rows: list[Row], registry: Registry, window: int = 160, passes: int = 3
) -> list[Pass]:
    """Each of ``passes`` passes over the texts, masked in windows of ``window`` (the deid
    stage prepares 16 consultations of about 10 turns together), with a fresh NER cache per
    window so repeats across the set do not flatter the figure. Other work on a shared
    machine only adds CPU time (cache and core contention), so the best pass is the code's
    own cost, as ``timeit`` takes the minimum; every pass is printed."""
    texts = [r.text for r in rows]
    find_spans(texts[0], registry)  # load models outside the timing
    session = timed_model()
    size = sum(len(t.encode("utf-8")) for t in texts)
    out = []
    for _ in range(passes):
        started, model_before = time.process_time(), session.cpu
        for i in range(0, len(texts), window):
            chunk = texts[i : i + window]
            for text, spans in zip(chunk, find_spans_in(chunk, fresh(registry)), strict=True):
                apply_placeholders(text, spans)
        cpu = time.process_time() - started
        out.append(Pass(size / 1024 / cpu, cpu, session.cpu - model_before))
    return out


def evaluate_split(split: str, model: str) -> None:
    rows = load(split)
    n = sum(len(r.truth) for r in rows)
    print(f"\n== {split} half: {len(rows)} texts, {n} identifiers ==")
    client = build_client(resolve_spec(model))
    llm, written = f"+LLM ({client.name})", "rules+NER, trad."
    tallies = {"rules": Tally(), "rules+NER": Tally(), llm: Tally(), written: Tally()}
    rules, full = rules_registry(), default_registry()
    for row in rows:
        tallies["rules"].add(row, find_spans(row.text, rules))
        tallies["rules+NER"].add(row, find_spans(row.text, full))
        outcome = asyncio.run(deid_turns([row.text], client))
        tallies[llm].add(row, outcome.spans[0])
        row_traditional = traditional_row(row)
        tallies[written].add(row_traditional, find_spans(row_traditional.text, full))
    names = list(tallies)
    print(f"  {'type':<9} {'n':>4}  " + "  ".join(f"{k:>18}" for k in names) + "  target")
    for kind in [t.value for t in EntityType]:
        total = tallies["rules"].total[kind]
        if not total:
            continue
        cells = "  ".join(
            f"{t.recall(kind):.3f} (typed {t.typed[kind] / total:.2f})".rjust(18)
            for t in tallies.values()
        )
        target = f"recall >= {TARGETS[kind]:.2f}" if kind in TARGETS else ""
        print(f"  {kind:<9} {total:>4}  {cells}  {target}")
    print(
        f"  {'recall':<9} {n:>4}  "
        + "  ".join(f"{t.recall():>18.3f}" for t in tallies.values())
        + "  >= 0.98"
    )
    print(
        f"  {'precision':<9} {'':>4}  "
        + "  ".join(f"{t.precision():>18.3f}" for t in tallies.values())
        + "  >= 0.92"
    )
    print(
        f"  {'terms kept':<9}       "
        + "  ".join(f"{t.terms_kept:>11}/{t.terms:<6}" for t in tallies.values())
        + "  >= 0.995"
    )
    print_speed(kb_per_cpu_second(rows, rules), kb_per_cpu_second(rows, full))


def print_speed(rules: list[Pass], full: list[Pass], label: str = "speed") -> None:
    best = max(full, key=lambda p: p.rate)
    print(
        f"  {label}, best of {len(full)} passes: rules {max(p.rate for p in rules):.0f} KB/CPU-s, "
        f"rules+NER {best.rate:.0f} KB/CPU-s (target >= 100; passes "
        + ", ".join(f"{p.rate:.0f}" for p in full)
        + f"); best pass {1000 * best.cpu:.0f} CPU-ms: model {1000 * best.model:.0f}, "
        f"without the model {1000 * (best.cpu - best.model):.0f}; "
        f"load average {os.getloadavg()[0]:.2f}"
    )


#: One speed measurement in a fresh interpreter, with ``medrealmm`` from the tree on
#: PYTHONPATH and this folder's helpers: both rates and a digest of every masked text.
SPEED = """
import hashlib, json, sys
sys.path.insert(0, sys.argv[1])
from dataclasses import asdict
from deid_eval import fresh, kb_per_cpu_second, load
from medrealmm.deid.registry import default_registry, rules_registry
from medrealmm.deid.spans import apply_placeholders
from medrealmm.deid.text import find_spans_in
rows = load(sys.argv[2])
texts = [r.text for r in rows]
full = default_registry()
digest = hashlib.sha256()
for i in range(0, len(texts), 160):
    chunk = texts[i : i + 160]
    for text, spans in zip(chunk, find_spans_in(chunk, fresh(full))):
        digest.update(apply_placeholders(text, spans).encode() + b"\\0")
rules, both = kb_per_cpu_second(rows, rules_registry()), kb_per_cpu_second(rows, full)
rules, both = [asdict(p) for p in rules], [asdict(p) for p in both]
print(json.dumps({"rules": rules, "full": both, "masked": digest.hexdigest()}))
"""


def speed_in_fresh_process(split: str, source: Path) -> dict:
    env = {**os.environ, "PYTHONPATH": str(source.resolve())}
    done = subprocess.run(
        [sys.executable, "-c", SPEED, str(Path(__file__).parent), split],
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        raise SystemExit(f"{source}: the speed run failed:\n{done.stderr[-2000:]}")
    return json.loads(done.stdout.splitlines()[-1])


def speed_eval(split: str, against: Path | None, rounds: int) -> None:
    """The text path's speed on one half alone; with ``against`` (another checkout's ``src``)
    the two trees alternate, each round in fresh processes, so both see the same load, and
    their masked outputs are compared."""
    this = Path(__file__).resolve().parents[1] / "src"
    trees = [("this tree", this)] + ([("against", against)] if against else [])
    print(f"\n== speed, {split} half: {len(load(split))} texts ==")
    best: dict[str, list[Pass]] = {label: [] for label, _ in trees}
    digests: dict[str, set[str]] = {label: set() for label, _ in trees}
    for round_ in range(1, (rounds if against else 1) + 1):
        for label, source in trees:
            figures = speed_in_fresh_process(split, source)
            rules, full = ([Pass(**p) for p in figures[k]] for k in ("rules", "full"))
            best[label].append(max(full, key=lambda p: p.rate))
            digests[label].add(figures["masked"])
            print_speed(rules, full, f"{label}, round {round_}")
    if against:
        mine, theirs = (
            statistics.median(p.rate for p in best[k]) for k in ("this tree", "against")
        )
        same = digests["this tree"] == digests["against"] and len(digests["against"]) == 1
        print(
            f"  median of {rounds} rounds, rules+NER: this tree {mine:.0f}, against {theirs:.0f} "
            f"KB/CPU-s ({mine / theirs:.2f}x); masked texts identical: {same}; "
            f"load average {os.getloadavg()[0]:.2f}"
        )
        for label, passes in best.items():
            model = statistics.median(1000 * p.model for p in passes)
            rest = statistics.median(1000 * (p.cpu - p.model) for p in passes)
            print(f"  {label}: median CPU-ms, model {model:.0f}, without the model {rest:.0f}")


def print_scores(title: str, scores: TypeScores) -> None:
    print(f"\n{title}")
    print(f"  {'type':<9} {'n':>4} {'precision':>9} {'recall':>7}  target")
    for kind, n, precision, recall in scores.rows():
        target = f"recall >= {TARGETS[kind]:.2f}" if kind in TARGETS else ""
        print(f"  {kind:<9} {n:>4} {precision:>9.3f} {recall:>7.3f}  {target}")
    overall = f"{scores.precision():>9.3f} {scores.recall():>7.3f}"
    print(f"  {'overall':<9} {'':>4} {overall}  precision >= 0.90")


@dataclass
class Post:
    text: str
    entities: list[tuple[int, int, str]]  # start, end, label such as PER.NAM


def load_weibo(directory: Path, split: str) -> list[Post]:
    """Posts of ``weiboNER_2nd_conll.<split>``: one ``character+position<TAB>BIO-tag`` line
    per character (the position digit is the word-segmentation feature, dropped here), a
    blank line between posts."""
    path = directory / f"weiboNER_2nd_conll.{split}"
    if not path.is_file():
        raise SystemExit(f"{path}: not found (pass the data folder of a golden-horse clone)")
    posts: list[Post] = []
    chars: list[str] = []
    tags: list[str] = []
    for number, line in enumerate([*path.read_text(encoding="utf-8").splitlines(), ""], 1):
        if not line.strip():
            if chars:
                posts.append(Post("".join(chars), _bio_entities(tags)))
            chars, tags = [], []
            continue
        token, _, tag = line.rpartition("\t")
        if not token or not tag:
            raise SystemExit(f"{path}:{number}: expected 'character<TAB>tag', got {line!r}")
        chars.append(token[:-1] if len(token) > 1 else token)
        tags.append(tag)
    return posts


def _bio_entities(tags: list[str]) -> list[tuple[int, int, str]]:
    out: list[tuple[int, int, str]] = []
    start, label = -1, ""
    for i, tag in enumerate([*tags, "O"]):
        inside = tag.startswith("I-") and tag[2:] == label
        if start >= 0 and not inside:
            out.append((start, i, label))
            start = -1
        if tag.startswith("B-") or (tag.startswith("I-") and start < 0):
            start, label = i, tag[2:]
    return out


# Forms of address the corpus annotates inside a name (张先生, 宋院长, 阿明哥). The project masks
# the name and keeps the title (王[NAME]医生 -> [NAME]医生), so a name is scored on its core.
_TITLE_TAIL = re.compile(
    f"(?:{AFTER_TITLES}|小姐|姐姐|哥哥|大人|兄弟|童鞋|院长|总|哥|姐|君|酱|叔|姨)$"
)


def name_core(start: int, end: int, text: str) -> tuple[int, int]:
    """``[start, end)`` without a trailing form of address, when something is left."""
    title = _TITLE_TAIL.search(text, start, end)
    return (start, title.start()) if title and title.start() > start else (start, end)


def weibo_eval(directory: Path, split: str, model: str) -> None:
    """Person names in real Weibo posts, through rules + NER + the LLM pass."""
    posts = load_weibo(directory, split)
    client = build_client(resolve_spec(model))
    found: Counter[str] = Counter()
    total: Counter[str] = Counter()
    outside = 0
    predicted = 0
    for post in posts:
        outcome = asyncio.run(deid_turns([post.text], client))
        spans = outcome.spans[0]
        masked = {i for s in spans for i in range(s.start, s.end)}
        for start, end, label in post.entities:
            if label.startswith("PER"):
                start, end = name_core(start, end, post.text)
            total[label] += 1
            found[label] += sum(i in masked for i in range(start, end)) >= 0.9 * (end - start)
        for span in spans:
            if span.type is not EntityType.NAME:
                continue
            predicted += 1
            outside += not any(
                span.start < end and start < span.end for start, end, _ in post.entities
            )
    print(
        f"\n== Weibo NER {split} split (outside, real posts; names tuned on train+dev): "
        f"{len(posts)} posts, rules + NER + LLM pass ({client.name}) =="
    )
    for label in ("PER.NAM", "PER.NOM", "ORG.NAM", "GPE.NAM", "LOC.NAM"):
        if total[label]:
            target = "  target >= 0.90" if label == "PER.NAM" else ""
            print(
                f"  {label:<8} {total[label]:>4}  masked {found[label] / total[label]:.3f}{target}"
            )
    print(f"  NAME spans {predicted}, outside annotated entities {outside}  target <= 60")


# A full name as the corpus writes most of them: a surname and one or two Han characters.
_FULL_NAME = re.compile(f"{SURNAME_RE}[\u4e00-\u9fff]{{1,2}}")


def swapped_posts(posts: list[Post], seed: int) -> list[tuple[str, list[tuple[int, int]]]]:
    """Each post with every full-name PER.NAM (``_FULL_NAME``, scored on its core) replaced
    by another of the same length drawn from the split's own full names, and where they
    stand: a name the rules or the model know (a star, a name seen while tuning) meets a
    context it was not tuned in, and a context meets names it has not seen."""
    pool: dict[int, list[str]] = {}
    for post in posts:
        for start, end in _full_names(post):
            pool.setdefault(end - start, []).append(post.text[start:end])
    rng = random.Random(seed)
    out: list[tuple[str, list[tuple[int, int]]]] = []
    for post in posts:
        text, places = post.text, _full_names(post)
        for start, end in places:
            text = text[:start] + rng.choice(pool[end - start]) + text[end:]
        if places:
            out.append((text, places))
    return out


def _full_names(post: Post) -> list[tuple[int, int]]:
    cores = [name_core(s, e, post.text) for s, e, label in post.entities if label == "PER.NAM"]
    return [(s, e) for s, e in cores if _FULL_NAME.fullmatch(post.text, s, e)]


def weibo_swap_eval(directory: Path, split: str, model: str, rounds: int) -> None:
    """Person-name recall on full names swapped among a split's posts (``swapped_posts``),
    one round per seed: what the kinds find by a name's position and shape, not by the name."""
    posts = load_weibo(directory, split)
    client = build_client(resolve_spec(model))
    print(f"\n== Weibo NER {split} split, full names swapped among its posts ({client.name}) ==")
    found = total = 0
    for seed in range(1, rounds + 1):
        hits = count = 0
        for text, places in swapped_posts(posts, seed):
            spans = asyncio.run(deid_turns([text], client)).spans[0]
            masked = {i for s in spans for i in range(s.start, s.end)}
            count += len(places)
            hits += sum(sum(i in masked for i in range(a, b)) >= 0.9 * (b - a) for a, b in places)
        print(f"  seed {seed}: {hits}/{count} = {hits / count:.3f}")
        found, total = found + hits, total + count
    print(f"  all rounds: {found}/{total} = {found / total:.3f}")


def regression_text_eval(model: str) -> None:
    """The older set made by this code base: an upper bound, kept to catch regressions."""
    sentences = make_sentences()
    n_spans = sum(len(s.spans) for s in sentences)
    print(f"\n== regression set (same code, upper bound): {len(sentences)} texts, {n_spans} spans")
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
    print_scores("rules + NER", rules)
    print_scores(f"rules + NER + LLM pass ({client.name})", combined)
    print(f"\nclinical values kept: {clinical_kept}/{clinical_total}")


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


def _pairwise_overlaps(spans: list[Span]) -> list[Span]:
    """The overlap rule as first written (each candidate against every kept span), kept here
    only as the reference the sorted sweep of ``resolve_overlaps`` is timed against."""
    chosen: list[Span] = []
    for span in sorted(spans, key=lambda s: (-s.length, _TYPE_RANK[s.type], s.start)):
        if not any(span.overlaps(kept) for kept in chosen):
            chosen.append(span)
    return sorted(chosen, key=lambda s: s.start)


def long_text_eval(kilobytes: int) -> None:
    """One text of ``kilobytes`` KB (the test half's texts joined, as a long record or chat
    export reads): the text path's KB per CPU-second on it, and the overlap step alone with
    the sorted sweep beside the pairwise rule, on the same spans in one run."""
    texts = [r.text for r in load("test")]
    parts: list[str] = []
    size = 0
    while size < kilobytes * 1024:
        for text in texts:
            parts.append(text)
            size += len(text.encode("utf-8")) + 1
            if size >= kilobytes * 1024:
                break
    text = "\n".join(parts)
    size = len(text.encode("utf-8"))
    full = default_registry()
    find_spans(texts[0], full)  # load models outside the timing
    rates = []
    for _ in range(3):
        started = time.process_time()
        spans = find_spans(text, fresh(full))
        apply_placeholders(text, spans)
        rates.append(size / 1024 / (time.process_time() - started))
    from medrealmm.deid.text import plain_text  # here: --against times older checkouts too

    plain = plain_text(text)
    found = [s for recognizer in full for s in recognizer.find(plain)]
    timings = {}
    for label, resolve in (("sorted sweep", resolve_overlaps), ("pairwise", _pairwise_overlaps)):
        started = time.process_time()
        kept = resolve(found)
        timings[label] = (time.process_time() - started, kept)
    same = timings["sorted sweep"][1] == timings["pairwise"][1]
    print(f"\n== one long text: {size / 1024:.0f} KB, {len(found)} candidate spans ==")
    print(
        f"  rules+NER {max(rates):.0f} KB/CPU-s (target >= 100; passes "
        + ", ".join(f"{r:.0f}" for r in rates)
        + ")"
    )
    sweep, pairwise = timings["sorted sweep"][0], timings["pairwise"][0]
    print(
        f"  overlap step: sorted sweep {sweep:.3f} CPU-s, pairwise {pairwise:.3f} CPU-s "
        f"({pairwise / sweep:.0f}x), same spans kept: {same}; "
        f"load average {os.getloadavg()[0]:.2f}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--split", choices=["dev", "test", "both", "none"], default="both")
    parser.add_argument("--model", default="offline", help="LLM for the LLM pass")
    parser.add_argument(
        "--regression", action="store_true", help="also the older same-code text and image sets"
    )
    parser.add_argument("--images", type=int, default=36, help="regression images (>= 30)")
    parser.add_argument(
        "--outside", type=Path, help="folder of an outside set's text.jsonl (set A), read in place"
    )
    parser.add_argument("--weibo", type=Path, help="golden-horse data folder (Weibo NER)")
    parser.add_argument("--weibo-split", choices=["train", "dev", "test"], default="test")
    parser.add_argument(
        "--weibo-swap",
        type=int,
        default=0,
        metavar="ROUNDS",
        help="also score full names swapped among the split's posts, one round per seed",
    )
    parser.add_argument(
        "--long",
        type=int,
        metavar="KB",
        help="only the speed on one text of KB kilobytes (200: a long record or chat export)",
    )
    parser.add_argument(
        "--speed",
        action="store_true",
        help="only the text path's speed on each --split half (no recall tables)",
    )
    parser.add_argument(
        "--against",
        type=Path,
        help="with --speed: another checkout's src folder, timed in alternate rounds",
    )
    parser.add_argument("--rounds", type=int, default=3, help="rounds of --against")
    args = parser.parse_args()
    print(f"load average at start: {os.getloadavg()[0]:.2f} on {os.cpu_count()} CPUs")
    if args.long:
        long_text_eval(args.long)
        return
    splits = {"both": ("dev", "test"), "none": ()}.get(args.split, (args.split,))
    if args.speed:
        for split in splits:
            speed_eval(split, args.against, args.rounds)
        return
    for split in splits:
        evaluate_split(split, args.model)
    if args.outside is not None:
        outside_eval(args.outside, args.model)
    if args.weibo is not None:
        weibo_eval(args.weibo, args.weibo_split, args.model)
        if args.weibo_swap:
            weibo_swap_eval(args.weibo, args.weibo_split, args.model, args.weibo_swap)
    if args.regression:
        regression_text_eval(args.model)
        image_eval(args.images)


if __name__ == "__main__":
    main()
