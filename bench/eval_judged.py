#!/usr/bin/env python3
"""Learning from triage, measured (#14.2): judge a growing share of a labelled data set's signatures through
the real code path, re-analyse the rest, and report the accuracy on the rest as the share grows.

    eval "$(scripts/servers.sh env)"; .venv/bin/python bench/eval_judged.py [--data FILE ...] [--markdown]

Every labelled log becomes a stored job (services.receive_jobs) analysed by the worker's batch code
(failures.analyse_batch) with learning off. Signatures are shuffled with a fixed seed; at each share a
person judges the first signatures (triage.services.judge, with the majority label of their failures) and
their documents are indexed in the real Elasticsearch. Then the jobs of every signature NOT judged are
re-analysed with learning on, and their automatic category is compared with their labels, beside the same
jobs' rules-only category (same run, same failures). Database jobtriage_bench_judged (re-created), index
prefix bench-judged. The labels are only used as the simulated people's judgments and for scoring: nothing
is tuned here. On the development data, the rules-only figure is training accuracy.
"""
from __future__ import annotations

import argparse
import collections
import io
import json
import os
import random
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.stats import wilson  # noqa: E402

from bench.bench_ingest import bench_env, recreate_database  # noqa: E402
from bench.timing import emit, row  # noqa: E402

DEV = ["bench/devset/programs.jsonl", "bench/devset/job_logs.jsonl", "bench/devset/notebook_crashes.jsonl",
       "bench/devset/issues/dev.jsonl", "bench/devset/issues2/dev.jsonl",
       "bench/devset/issues_heldout2/heldout.jsonl"]
SHARES = (0.0, 0.1, 0.25, 0.5, 0.75)




def percent(k: int, n: int) -> str:
    low, high = wilson(k, n)
    return f"{100 * k / n:.1f}% [{100 * low:.1f}-{100 * high:.1f}] ({k}/{n})" if n else "-"


def records(paths: list[str]) -> list[dict]:
    out = []
    for path in paths:
        for line in open(ROOT / path, encoding="utf-8"):
            r = json.loads(line)
            label = r.get("category") or r.get("label_category")
            if r.get("log") and label:
                out.append({"id": r.get("id") or f"{path}:{len(out)}", "log": r["log"], "label": label})
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", nargs="*", default=DEV)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--markdown", action="store_true")
    args = parser.parse_args()

    env = bench_env("jobtriage_bench_judged", es_prefix="bench-judged")
    recreate_database(env)
    os.environ.update({k: env[k] for k in ("DATABASE_URL", "CELERY_BROKER_URL", "ES_INDEX_PREFIX", "DJANGO_DEBUG",
                                           "DJANGO_SECRET_KEY")})
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "jobtriage.settings")
    import django
    django.setup()
    from django.conf import settings
    from django.contrib.auth.models import User

    from jobs_ingest import failures, services
    from jobs_ingest.jobspec import parse_job
    from jobs_ingest.models import Failure, Signature
    from jobs_ingest.search import index as search_index
    from jobs_ingest.search.sync import es_client, index_signatures
    from triage import services as triage_services

    client = es_client()
    for name in client.options(ignore_status=404).indices.get(index=f"{settings.ES_INDEX_PREFIX}-*") or {}:
        client.indices.delete(index=name)
    search_index.ensure_index(client, settings.ES_INDEX_PREFIX)

    data = records(args.data)
    print(f"{len(data)} labelled logs from {len(args.data)} files", file=sys.stderr)
    settings.JOBTRIAGE_LEARN_FROM_TRIAGE = False
    label_of_job, batch = {}, []
    for n, r in enumerate(data):
        spec = parse_job({"platform": "bench", "external_id": f"{n}-{r['id']}", "status": "failed"})
        batch.append((spec, io.BytesIO(r["log"].encode())))
        if len(batch) == 200 or n == len(data) - 1:
            for outcome, (spec, _) in zip(services.receive_jobs(batch), batch):
                if isinstance(outcome, Exception):
                    raise SystemExit(f"{spec.external_id}: {outcome}")
                label_of_job[outcome.job.pk] = data[int(spec.external_id.split("-", 1)[0])]["label"]
            batch = []
    job_ids = sorted(label_of_job)
    for start in range(0, len(job_ids), 200):
        failures.analyse_batch(job_ids[start:start + 200], index_now=True)
    rules_only = dict(Failure.objects.values_list("job_id", "category"))
    by_signature = collections.defaultdict(list)
    for job_id, signature_id in Failure.objects.values_list("job_id", "signature_id"):
        by_signature[signature_id].append(job_id)
    order = sorted(by_signature)
    random.Random(args.seed).shuffle(order)
    person = User.objects.create_user("bench-judge")

    rows, judged = [], 0
    for share in SHARES:
        target = round(share * len(order))
        for signature_id in order[judged:target]:
            label = collections.Counter(label_of_job[j] for j in by_signature[signature_id]).most_common(1)[0][0]
            triage_services.judge(Signature.objects.get(pk=signature_id), person, category=label)
        index_signatures(order[judged:target])
        judged = target
        client.indices.refresh(index=f"{settings.ES_INDEX_PREFIX}-*")
        rest = [j for s in order[judged:] for j in by_signature[s]]
        settings.JOBTRIAGE_LEARN_FROM_TRIAGE = True
        for start in range(0, len(rest), 200):
            failures.analyse_batch(rest[start:start + 200], index_now=True)
        settings.JOBTRIAGE_LEARN_FROM_TRIAGE = False
        now = dict(Failure.objects.filter(job_id__in=rest).values_list("job_id", "category"))
        rules = dict(Failure.objects.filter(job_id__in=rest, rule__startswith="judged.").values_list("job_id", "rule"))
        right = sum(now[j] == label_of_job[j] for j in rest)
        right_rules = sum(rules_only[j] == label_of_job[j] for j in rest)
        taught = [j for j in rest if j in rules]
        taught_right = sum(now[j] == label_of_job[j] for j in taught)
        changed = [j for j in taught if now[j] != rules_only[j]]
        fixed = sum(now[j] == label_of_job[j] for j in changed)
        rows.append(row(
            f"{int(share * 100)}% of signatures judged ({judged} of {len(order)}): the other {len(rest)} failures",
            f"{percent(right, len(rest))}; judged-neighbour answers {len(taught)} ({taught_right} right), "
            f"{len(changed)} changed the rules' category ({fixed} to the right one)",
            f"rules + learned model alone on the same failures: {percent(right_rules, len(rest))}", None,
            share=share, judged_signatures=judged, rest=len(rest), right=right, right_rules_only=right_rules,
            judged_answers=len(taught), judged_answers_right=taught_right, changed=len(changed), changed_right=fixed))
        print(rows[-1]["what"], "|", rows[-1]["figure"], file=sys.stderr)
    emit("judged", rows, markdown=args.markdown, notes=[
        f"{len(data)} labelled logs ({', '.join(args.data)}), {len(order)} signatures, seed {args.seed}. "
        "Accuracy with a 95% Wilson interval; the judged share grows cumulatively."])


if __name__ == "__main__":
    main()
