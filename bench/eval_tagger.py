#!/usr/bin/env python3
"""Evaluate the failure tagger (`manage.py tag_logs`) on labelled JSON Lines dev sets.

Each input line has at least {"id", "log", "category"} and optionally "exit_code", "stage", "source",
"cluster_id" or "group" (grouping labels).  The tagger is run as a subprocess, exactly as in production:

    cd /work/main && .venv/bin/python manage.py tag_logs < in.jsonl > out.jsonl

Prints: overall and per-file accuracy, per-category precision/recall/F1/support, confusion pairs, per-source
accuracy, stage accuracy (where labelled), fingerprint grouping quality (pairwise precision/recall/F1 of
"same fingerprint" against "same cluster", signatures vs clusters; where "cluster_id"/"group" exist) and
throughput.  Progress goes to stderr.

    python bench/eval_tagger.py                     # all dev files (not the held-out set)
    python bench/eval_tagger.py --heldout           # ... plus bench/devset/issues/heldout.jsonl
    python bench/eval_tagger.py FILE.jsonl ...      # only these files
    python bench/eval_tagger.py --markdown          # a section for BENCHMARKS.md
    python bench/eval_tagger.py --errors 30         # 30 misclassified examples (most frequent confusions first)
"""
from __future__ import annotations

import argparse
import collections
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DEVSET = ROOT / "bench" / "devset"
DEFAULT_FILES = [
    DEVSET / "issues" / "dev.jsonl",
    DEVSET / "issues2" / "dev.jsonl",
    DEVSET / "issues3" / "dev.jsonl",
    DEVSET / "issues4" / "dev.jsonl",
    DEVSET / "issues5" / "dev.jsonl",
    DEVSET / "issues6" / "dev.jsonl",
    DEVSET / "issues7" / "dev.jsonl",
    DEVSET / "notebook_crashes.jsonl",
    DEVSET / "programs.jsonl",
    DEVSET / "job_logs.jsonl",
    # Was the held-out half until its misses were studied (2026-11-23); now development data.
    DEVSET / "issues" / "heldout.jsonl",
]
# Fresh real issue-tracker failures, collected without running the tagger; never used for tuning.
HELDOUT = DEVSET / "issues_heldout2" / "heldout.jsonl"


# ------------------------------------------------------------------------------------------------ running
def run_tagger(records: list[dict], python: str, label: str, configs: tuple[str, ...] = ()) -> tuple[list[dict], float]:
    """Feed the records to `manage.py tag_logs` (with `configs`, e.g. ("--tagging-config", "tagging:2026-11"));
    return its outputs (in input order) and the wall time."""
    with tempfile.TemporaryFile("w+b") as tmp:
        for r in records:
            item = {"id": r["id"], "log": r["log"]}
            if r.get("exit_code") is not None:
                item["exit_code"] = r["exit_code"]
            tmp.write((json.dumps(item, ensure_ascii=False) + "\n").encode("utf-8"))
        tmp.seek(0)
        t0 = time.perf_counter()
        proc = subprocess.Popen([python, "manage.py", "tag_logs", *configs], cwd=ROOT, stdin=tmp,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                env={**os.environ, "PYTHONIOENCODING": "utf-8"})
        outputs = []
        n = len(records)
        step = max(1, n // 20)
        for line in proc.stdout:
            line = line.strip()
            if not line:
                continue
            outputs.append(json.loads(line))
            if len(outputs) % step == 0 or len(outputs) == n:
                print(f"\r  {label}: {len(outputs)}/{n} tagged", end="", file=sys.stderr, flush=True)
        err = proc.stderr.read().decode("utf-8", "replace")
        rc = proc.wait()
        elapsed = time.perf_counter() - t0
    print(file=sys.stderr)
    if rc != 0:
        sys.exit(f"tag_logs failed on {label} (exit {rc}):\n{err[-3000:]}")
    by_id = {}
    for o in outputs:
        by_id.setdefault(str(o.get("id")), o)
    missing = [r["id"] for r in records if str(r["id"]) not in by_id]
    if missing:
        print(f"  WARNING: {len(missing)} ids without output in {label}, e.g. {missing[:3]}", file=sys.stderr)
    return [by_id.get(str(r["id"]), {"category": "<missing>"}) for r in records], elapsed


# ------------------------------------------------------------------------------------------------ metrics
def pairs(n: int) -> int:
    return n * (n - 1) // 2


def grouping_quality(items: list[tuple[str, str]]) -> dict:
    """items: (true cluster, predicted fingerprint).  Pairwise precision/recall/F1 of 'same fingerprint'."""
    by_cluster = collections.Counter(c for c, _ in items)
    by_fp = collections.Counter(f for _, f in items)
    both = collections.Counter(items)
    tp = sum(pairs(n) for n in both.values())
    same_fp = sum(pairs(n) for n in by_fp.values())
    same_cl = sum(pairs(n) for n in by_cluster.values())
    p = tp / same_fp if same_fp else 1.0
    r = tp / same_cl if same_cl else 1.0
    f1 = 2 * p * r / (p + r) if p + r else 0.0
    # purity of signatures: share of records whose signature's majority cluster is their cluster
    maj = collections.defaultdict(collections.Counter)
    for c, f in items:
        maj[f][c] += 1
    purity = sum(m.most_common(1)[0][1] for m in maj.values()) / len(items) if items else 0.0
    return {"records": len(items), "clusters": len(by_cluster), "signatures": len(by_fp), "pair_precision": p,
            "pair_recall": r, "pair_f1": f1, "purity": purity}


def source_kind(rec: dict, file_label: str) -> str:
    s = str(rec.get("source", ""))
    if s.startswith("http"):
        return f"{file_label}:issue-tracker"
    parts = s.split(":")
    if parts[0] == "composed" and len(parts) > 1:
        return "composed:" + parts[1]
    if parts[0] == "ml-notebook-crashes" and len(parts) > 1:
        return "ml-notebook-crashes:" + parts[1]
    return parts[0] or file_label


def pct(a: int, b: int) -> str:
    return f"{100.0 * a / b:5.1f}%" if b else "   - "


def evaluate(files: list[Path], python: str, configs: tuple[str, ...] = ()) -> dict:
    rows = []  # (file label, record, output)
    timings = {}
    for path in files:
        label = path.name if path.parent == DEVSET else f"{path.parent.name}/{path.name}"
        records = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
        records = [r for r in records if "category" in r and "log" in r]
        print(f"{label}: {len(records)} labelled logs", file=sys.stderr, flush=True)
        outs, elapsed = run_tagger(records, python, label, configs)
        timings[label] = (len(records), elapsed, sum(len(r["log"]) for r in records))
        rows += [(label, r, o) for r, o in zip(records, outs)]
    used = sorted({(o.get("grouping_config"), o.get("tagging_config")) for _, _, o in rows if "error" not in o},
                  key=str)
    print(f"configs used (grouping, tagging): {used}", file=sys.stderr)
    return {"rows": rows, "timings": timings}


def report(res: dict, markdown: bool, n_errors: int, top_confusions: int) -> str:
    rows, timings = res["rows"], res["timings"]
    out: list[str] = []
    w = out.append
    total = len(rows)
    correct = sum(r["category"] == o.get("category") for _, r, o in rows)
    h = "### " if markdown else "== "
    tail = "" if markdown else " =="

    # overall and per file
    w(f"{h}Tagger accuracy{tail}")
    if markdown:
        w("")
        w("| file | logs | correct | accuracy | logs/s |")
        w("|---|---:|---:|---:|---:|")
    by_file = collections.defaultdict(list)
    for f, r, o in rows:
        by_file[f].append(r["category"] == o.get("category"))
    for f, oks in by_file.items():
        n, el, _ = timings[f]
        line = (f"| {f} | {len(oks)} | {sum(oks)} | {pct(sum(oks), len(oks)).strip()} | {n / el:.0f} |" if markdown
                else f"  {f:32s} {sum(oks):5d}/{len(oks):<5d} {pct(sum(oks), len(oks))}   ({n / el:.0f} logs/s)")
        w(line)
    tn = sum(t[0] for t in timings.values())
    tel = sum(t[1] for t in timings.values())
    tchars = sum(t[2] for t in timings.values())
    if markdown:
        w(f"| **all** | {total} | {correct} | **{pct(correct, total).strip()}** | {tn / tel:.0f} |")
    else:
        w(f"  {'ALL':32s} {correct:5d}/{total:<5d} {pct(correct, total)}")
    w("")
    w(f"Throughput: {tn} logs ({tchars / 1e6:.2f} MB) in {tel:.1f} s = {tn / tel:.0f} logs/s, "
      f"{tchars / 1e6 / tel:.2f} MB/s (includes one Django start-up per file)")
    w("")

    # per source kind
    w(f"{h}Accuracy per source{tail}")
    by_src = collections.defaultdict(list)
    for f, r, o in rows:
        by_src[source_kind(r, f)].append(r["category"] == o.get("category"))
    if markdown:
        w("")
        w("| source | logs | accuracy |")
        w("|---|---:|---:|")
    for s, oks in sorted(by_src.items()):
        w(f"| {s} | {len(oks)} | {pct(sum(oks), len(oks)).strip()} |" if markdown
          else f"  {s:40s} {sum(oks):5d}/{len(oks):<5d} {pct(sum(oks), len(oks))}")
    w("")

    # per category
    w(f"{h}Per category{tail}")
    exp = collections.Counter(r["category"] for _, r, _ in rows)
    got = collections.Counter(o.get("category") for _, _, o in rows)
    tp = collections.Counter(r["category"] for _, r, o in rows if r["category"] == o.get("category"))
    cats = sorted(set(exp) | set(got), key=lambda c: (-exp[c], str(c)))
    if markdown:
        w("")
        w("| category | support | predicted | precision | recall | F1 |")
        w("|---|---:|---:|---:|---:|---:|")
    else:
        w(f"  {'category':24s} {'support':>7s} {'pred':>5s} {'prec':>7s} {'recall':>7s} {'F1':>6s}")
    for c in cats:
        p = tp[c] / got[c] if got[c] else 0.0
        rc = tp[c] / exp[c] if exp[c] else 0.0
        f1 = 2 * p * rc / (p + rc) if p + rc else 0.0
        ps = f"{p:.2f}" if got[c] else "-"
        rs = f"{rc:.2f}" if exp[c] else "-"
        if markdown:
            w(f"| {c} | {exp[c]} | {got[c]} | {ps} | {rs} | {f1:.2f} |")
        else:
            w(f"  {str(c):24s} {exp[c]:7d} {got[c]:5d} {ps:>7s} {rs:>7s} {f1:6.2f}")
    supported = [c for c in cats if exp[c]]
    macro_r = sum(tp[c] / exp[c] for c in supported) / len(supported) if supported else 0
    w("")
    w(f"Macro recall over {len(supported)} labelled categories: {macro_r:.3f}")
    w("")

    # confusion pairs
    conf = collections.Counter((r["category"], o.get("category")) for _, r, o in rows
                               if r["category"] != o.get("category"))
    w(f"{h}Confusions (expected -> got), top {top_confusions} of {len(conf)}{tail}")
    if markdown:
        w("")
        w("| expected | got | count |")
        w("|---|---|---:|")
    for (e, g), n in conf.most_common(top_confusions):
        w(f"| {e} | {g} | {n} |" if markdown else f"  {n:4d}  {e} -> {g}")
    w("")

    # stage
    staged = [(r["stage"], o.get("stage")) for _, r, o in rows if r.get("stage")]
    if staged:
        ok = sum(a == b for a, b in staged)
        w(f"{h}Stage accuracy{tail}")
        w("")
        w(f"Stage correct on {ok}/{len(staged)} labelled logs ({pct(ok, len(staged)).strip()})")
        sc = collections.Counter((a, b) for a, b in staged)
        if markdown:
            w("")
            w("| true stage | predicted | count |")
            w("|---|---|---:|")
        for (a, b), n in sorted(sc.items(), key=lambda x: -x[1]):
            w(f"| {a} | {b} | {n} |" if markdown else f"  {n:4d}  {a} -> {b}")
        w("")

    # grouping
    groups = collections.defaultdict(list)
    for f, r, o in rows:
        key = r.get("cluster_id", r.get("group"))
        if key not in (None, "") and o.get("fingerprint"):
            groups[f].append((str(key), str(o["fingerprint"])))
    if groups:
        w(f"{h}Fingerprint grouping (same fingerprint vs same labelled cluster, pairwise){tail}")
        if markdown:
            w("")
            w("| file | records | clusters | signatures | pair precision | pair recall | pair F1 | purity |")
            w("|---|---:|---:|---:|---:|---:|---:|---:|")
        for f, items in groups.items():
            g = grouping_quality(items)
            if markdown:
                w(f"| {f} | {g['records']} | {g['clusters']} | {g['signatures']} | {g['pair_precision']:.3f} | "
                  f"{g['pair_recall']:.3f} | {g['pair_f1']:.3f} | {g['purity']:.3f} |")
            else:
                w(f"  {f:28s} records {g['records']:4d}  clusters {g['clusters']:4d}  signatures "
                  f"{g['signatures']:4d}  P {g['pair_precision']:.3f}  R {g['pair_recall']:.3f}  "
                  f"F1 {g['pair_f1']:.3f}  purity {g['purity']:.3f}")
        w("")

    # errors
    if n_errors:
        errs = [(f, r, o) for f, r, o in rows if r["category"] != o.get("category")]
        errs.sort(key=lambda x: (-conf[(x[1]["category"], x[2].get("category"))], x[1]["category"],
                                 str(x[2].get("category")), str(x[1]["id"])))
        w(f"{h}Misclassified examples ({min(n_errors, len(errs))} of {len(errs)}, most frequent confusions first){tail}")
        if markdown:
            w("")
            w("| id | expected | got | rule | failure_line |")
            w("|---|---|---|---|---|")
        for f, r, o in errs[:n_errors]:
            fl = str(o.get("failure_line") or "").replace("\n", " ")[:160]
            if markdown:
                fl = fl.replace("|", "\\|")
                w(f"| {r['id']} | {r['category']} | {o.get('category')} | {o.get('rule')} | `{fl}` |")
            else:
                w(f"  {r['id']}: expected {r['category']}, got {o.get('category')} (rule {o.get('rule')})")
                w(f"      failure_line: {fl}")
        w("")
    return "\n".join(out)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__)
    ap.add_argument("files", nargs="*", type=Path, help="JSONL files (default: all dev-set files)")
    ap.add_argument("--heldout", action="store_true", help="also evaluate bench/devset/issues/heldout.jsonl")
    ap.add_argument("--markdown", action="store_true", help="print a markdown section for BENCHMARKS.md")
    ap.add_argument("--errors", type=int, default=0, metavar="N", help="list N misclassified examples")
    ap.add_argument("--confusions", type=int, default=25, metavar="N", help="how many confusion pairs to show")
    ap.add_argument("--python", default=str(ROOT / ".venv" / "bin" / "python"),
                    help="interpreter that runs manage.py (default: the project's .venv)")
    ap.add_argument("--save", type=Path, help="write expected/predicted pairs as JSON Lines here")
    ap.add_argument("--grouping-config", metavar="ID", help="grouping config to evaluate (default: the newest)")
    ap.add_argument("--tagging-config", metavar="ID", help="tagging config to evaluate (default: the newest)")
    args = ap.parse_args()
    configs = tuple(arg for flag, value in (("--grouping-config", args.grouping_config),
                                            ("--tagging-config", args.tagging_config)) if value for arg in (flag, value))
    files = args.files or [f for f in DEFAULT_FILES if f.exists()]
    if args.heldout:
        files.append(HELDOUT)
    if not Path(args.python).exists():
        args.python = sys.executable
    res = evaluate([f.resolve() for f in files], args.python, configs)
    if args.save:
        with args.save.open("w", encoding="utf-8") as fh:
            for f, r, o in res["rows"]:
                fh.write(json.dumps({"file": f, "id": r["id"], "expected": r["category"],
                                     "expected_stage": r.get("stage"), "cluster": r.get("cluster_id", r.get("group")),
                                     **{k: v for k, v in o.items() if k != "id"}}, ensure_ascii=False) + "\n")
    print(report(res, args.markdown, args.errors, args.confusions))


if __name__ == "__main__":
    main()
