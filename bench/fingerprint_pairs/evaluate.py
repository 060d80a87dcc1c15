#!/usr/bin/env python3
"""Exact-fingerprint precision from blind pair judgments (#14): of the pairs of logs from different threads that
share an exact fingerprint, the share two judges both call the same failure (PROTOCOL.md).

    .venv/bin/python bench/fingerprint_pairs/evaluate.py [--grouping-config ID ...]     # Markdown on stdout

Pure (no servers). Each pair was judged by two of the judges in judgments/. A pair is one failure when both said
`same` (strict) or when either did (lenient). Intervals: Wilson over pairs, and a bootstrap that resamples whole
fingerprints, since the pairs of one fingerprint are not independent. Under another grouping config, pairs of the
judged logs that share a fingerprint there but were never judged are counted and left out.
"""
from __future__ import annotations

import argparse
import collections
import csv
import json
import random
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from jobs_ingest.core.configs import GROUPING_CONFIGS  # noqa: E402
from jobs_ingest.core.pipeline import analyse_text  # noqa: E402
from stats import wilson  # noqa: E402

VERDICTS = ("same", "same_reason", "different", "cannot_tell")


def judgments(folder: Path) -> dict[str, list[str]]:
    """pair -> its verdicts, one per judge that judged it."""
    verdicts: dict[str, list[str]] = collections.defaultdict(list)
    for path in sorted(folder.glob("*.tsv")):
        with path.open(encoding="utf-8", newline="") as handle:
            for row in csv.DictReader(handle, delimiter="\t"):
                if row["verdict"] not in VERDICTS:
                    raise SystemExit(f"{path.name}: {row['pair']}: unknown verdict {row['verdict']!r}")
                verdicts[row["pair"]].append(row["verdict"])
    return verdicts


def kappa(pairs: list[list[str]], collapse=lambda v: v) -> tuple[float, float]:
    """(observed agreement, Cohen's kappa) of the first two verdicts of each pair."""
    two = [(collapse(v[0]), collapse(v[1])) for v in pairs if len(v) >= 2]
    if not two:
        return 0.0, 0.0
    observed = sum(a == b for a, b in two) / len(two)
    first, second = collections.Counter(a for a, _ in two), collections.Counter(b for _, b in two)
    expected = sum(first[c] * second[c] for c in set(first) | set(second)) / len(two) ** 2
    return observed, (observed - expected) / (1 - expected) if expected < 1 else 1.0


def bootstrap(groups: dict[str, list[bool]], rounds: int = 2000, seed: int = 0) -> tuple[float, float]:
    """95% interval of the pooled share of True, resampling whole groups."""
    if not groups:
        return 0.0, 1.0
    rng, keys, shares = random.Random(seed), sorted(groups), []
    for _ in range(rounds):
        sample = [flag for key in rng.choices(keys, k=len(keys)) for flag in groups[key]]
        shares.append(sum(sample) / len(sample))
    shares.sort()
    return shares[int(0.025 * rounds)], shares[int(0.975 * rounds) - 1]


def share(pairs: list[tuple[str, list[str]]], one, groups: dict[str, str] | None = None) -> str:
    k, n = sum(one(v) for _, v in pairs), len(pairs)
    if not n:
        return "-"
    low, high = wilson(k, n)
    text = f"{k / n:.3f} [{low:.3f}-{high:.3f}] ({k}/{n})"
    if groups is not None:
        by_group: dict[str, list[bool]] = collections.defaultdict(list)
        for pair, v in pairs:
            by_group[groups[pair]].append(one(v))
        blow, bhigh = bootstrap(by_group)
        text += f"; by fingerprint [{blow:.3f}-{bhigh:.3f}], {len(by_group)} fingerprints"
    return text


def strict(v: list[str]) -> bool:
    return all(x == "same" for x in v)


def lenient(v: list[str]) -> bool:
    return any(x == "same" for x in v)


def same_reason(v: list[str]) -> bool:
    return all(x in ("same", "same_reason") for x in v)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--key", type=Path, default=HERE / "key.jsonl")
    parser.add_argument("--judgments", type=Path, default=HERE / "judgments")
    parser.add_argument("--grouping-config", nargs="*", default=None, help="default: the newest")
    args = parser.parse_args()
    key = [json.loads(line) for line in args.key.open(encoding="utf-8")]
    verdicts = judgments(args.judgments)
    missing = [k["pair"] for k in key if len(verdicts.get(k["pair"], [])) < 2]
    if missing:
        raise SystemExit(f"{len(missing)} pairs have fewer than two verdicts, e.g. {missing[:5]}")
    logs = {}
    for path in sorted({f for k in key for f in k["files"]}):
        for line in (ROOT / path).open(encoding="utf-8"):
            case = json.loads(line)
            logs[(path, case["id"])] = case["log"]
    all_verdicts = [verdicts[k["pair"]] for k in key]
    observed, k4 = kappa(all_verdicts)
    observed2, k2 = kappa(all_verdicts, lambda v: v == "same")
    counts = collections.Counter(tuple(sorted(verdicts[k["pair"]])) for k in key)
    lines = [f"{len(key)} pairs judged twice by {len(list(args.judgments.glob('*.tsv')))} judges. Agreement: "
             f"{observed:.1%} on the four verdicts (Cohen's kappa {k4:.2f}), {observed2:.1%} on same vs not "
             f"(kappa {k2:.2f}).", "",
             "Verdict pairs: " + ", ".join(f"{'+'.join(v)} {n}" for v, n in counts.most_common()), "",
             "| grouping config | pairs | one failure (both judges) | one failure (either judge) | same reason at least (both) | unjudged pairs sharing the key |",
             "|---|---|---|---|---|---|"]
    ids = sorted({(f, i) for k in key for f, i in zip(k["files"], (k["a"], k["b"]))})
    judged_sides = {frozenset(((k["files"][0], k["a"]), (k["files"][1], k["b"]))) for k in key}
    for config in args.grouping_config or [GROUPING_CONFIGS[-1].id]:
        fingerprints = {side: analyse_text(logs[side], grouping_config=config).fingerprint for side in ids}
        sharing = [(k["pair"], verdicts[k["pair"]], k) for k in key
                   if fingerprints[(k["files"][0], k["a"])] == fingerprints[(k["files"][1], k["b"])]]
        by_fp = collections.defaultdict(list)
        for side in ids:
            by_fp[fingerprints[side]].append(side)
        unjudged = sum(frozenset((a, b)) not in judged_sides
                       for group in by_fp.values() for n, a in enumerate(group) for b in group[n + 1:])
        groups = {pair: fingerprints[(k["files"][0], k["a"])] for pair, _, k in sharing}
        for scope, chosen in (("all", sharing), ("with an untuned log", [s for s in sharing if s[2]["out_of_sample"]])):
            rows = [(pair, v) for pair, v, _ in chosen]
            lines.append(f"| {config} ({scope}) | {len(rows)} | {share(rows, strict, groups)} | "
                         f"{share(rows, lenient, groups)} | {share(rows, same_reason)} | "
                         f"{unjudged if scope == 'all' else ''} |")
    decoys = [(k["kind"], verdicts[k["pair"]]) for k in key if k["kind"] != "fingerprint"]
    lines += ["", "Decoys (chosen under grouping:2026-11h, judged in the same file):", "",
              "| pairs | n | one failure (both) | one failure (either) | same reason at least (both) |", "|---|---|---|---|---|"]
    for kind in ("cluster_only", "label_only"):
        rows = [(kind, v) for k, v in decoys if k == kind]
        lines.append(f"| {kind.replace('_', ' ')} | {len(rows)} | {share(rows, strict)} | {share(rows, lenient)} | "
                     f"{share(rows, same_reason)} |")
    strata_path = args.key.with_name(args.key.stem + ".strata.json")
    if strata_path.exists():
        lines += ["", *estimate(key, verdicts, json.loads(strata_path.read_text(encoding="utf-8")))]
    print("\n".join(lines))


def estimate(key: list[dict], verdicts: dict[str, list[str]], sizes: dict, rounds: int = 2000) -> list[str]:
    """Reason clusters and exact fingerprints of the config that chose the pairs, scored against the judges over the
    whole pool: every pair of the pool is in one stratum (shares the fingerprint; shares the cluster only; shares
    the labelled category only; shares neither, taken as never the same reason), and a stratum's judged sample
    stands for all its pairs. Intervals: a bootstrap of the judged pairs within each stratum."""
    samples = {kind: [verdicts[k["pair"]] for k in key if k["kind"] == kind]
               for kind in ("fingerprint", "cluster_only", "label_only")}

    def figures(draw: dict[str, list[list[str]]], one) -> tuple[float, float, float]:
        """(cluster precision, cluster recall, fingerprint recall) against `one`."""
        same = {kind: sizes[kind] * sum(map(one, v)) / len(v) for kind, v in draw.items()}
        total, clustered = sum(same.values()) or 1.0, same["fingerprint"] + same["cluster_only"]
        return clustered / (sizes["fingerprint"] + sizes["cluster_only"]), clustered / total, same["fingerprint"] / total

    rng, rows = random.Random(0), []
    # Against "one failure" no decoy was judged so (0 of 80), and a bootstrap of zero counts gives no interval.
    for name, one in (("the same reason (both judges)", same_reason),):
        draws = [figures({k: rng.choices(v, k=len(v)) for k, v in samples.items()}, one) for _ in range(rounds)]
        bounds = [(column[int(0.025 * rounds)], column[int(0.975 * rounds) - 1]) for column in map(sorted, zip(*draws))]
        rows.append(f"| {name} | " + " | ".join(f"{p:.3f} [{lo:.3f}-{hi:.3f}]"
                                               for p, (lo, hi) in zip(figures(samples, one), bounds)) + " |")
    return [f"Over the whole pool ({sizes['threads']} threads; pairs sharing the fingerprint {sizes['fingerprint']}, "
            f"the cluster only {sizes['cluster_only']:,}, the labelled category only {sizes['label_only']:,}), "
            "with the keys that chose the pairs (a stratified estimate):", "",
            "| reference | reason cluster precision | reason cluster recall | exact fingerprint recall |",
            "|---|---|---|---|", *rows]


if __name__ == "__main__":
    main()
