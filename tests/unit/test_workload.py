"""The generated workload (bench/workload.py): deterministic, shaped like the real data it cites.

Pure: no database, Elasticsearch or broker.
"""
from collections import Counter
from datetime import datetime, timezone
from itertools import islice

import pytest

from bench.workload import STUDY_STAGES, Workload, alibaba_pods, generate
from jobs_ingest.core import analyse_text
from jobs_ingest.core.taxonomy import CATEGORIES

N = 20_000


@pytest.fixture(scope="module")
def jobs():
    return list(generate(N, seed=7))


@pytest.fixture(scope="module")
def failures(jobs):
    return [job["failure"] for job in jobs if job["failure"]]


def test_deterministic_for_a_seed():
    assert list(generate(500, seed=3)) == list(generate(500, seed=3))
    assert list(generate(500, seed=3)) != list(generate(500, seed=4))


def test_jobs_are_plain_dicts_marked_generated(jobs):
    job = jobs[0]
    assert job["extra"]["generated"] is True and job["platform"].endswith("-gen")
    assert len({(j["platform"], j["external_id"]) for j in jobs}) == len(jobs)
    assert {j["status"] for j in jobs} == {"failed", "succeeded"}


def test_failed_share_from_alibaba(jobs, failures):
    expected = alibaba_pods()["failed_share"]
    assert 0.24 < expected < 0.28
    assert len(failures) / len(jobs) == pytest.approx(expected, abs=0.02)


def test_category_mix_close_to_table_1(failures):
    study = {c.id: c.study_count for c in CATEGORIES.values() if c.study_count}
    total = sum(study.values())
    seen = Counter(f["category"] for f in failures)
    assert set(seen) == set(study)
    for category, count in study.items():
        share, expected = seen[category] / len(failures), count / total
        # Binomial noise: within 4 standard deviations (and 0.5 point for the rare ones).
        sd = (expected * (1 - expected) / len(failures)) ** 0.5
        assert abs(share - expected) <= max(4 * sd, 0.005), category


def test_stage_mix_and_gpu_time_follow_the_study(failures):
    stages = Counter(f["stage"] for f in failures)
    for stage, (share, _) in STUDY_STAGES.items():
        assert stages[stage] / len(failures) == pytest.approx(share, abs=0.03), stage
    gpu = Counter()
    for f in failures:
        gpu[f["stage"]] += f["gpu_seconds"]
    # Heavy-tailed runtimes: only the ordering is robust at 20k jobs. Init failures are short,
    # evaluation failures long.
    per_failure = {s: gpu[s] / stages[s] for s in STUDY_STAGES}
    assert per_failure["initialization"] < per_failure["training"] < per_failure["evaluation"]
    assert gpu["evaluation"] / sum(gpu.values()) > 0.5
    assert all(f["stage"] == "initialization" for f in failures if f["category"] == "syntax_error")


def test_gpu_hours_consistent_with_attempts(jobs):
    for job in jobs:
        attempts = job["attempts"]
        assert [a["number"] for a in attempts] == list(range(1, len(attempts) + 1))
        assert 1 <= len(attempts) <= 3
        total = sum(a["gpus"] * (a["ended_at"] - a["started_at"]).total_seconds() for a in attempts)
        assert job["gpu_seconds"] == total
        if job["failure"]:
            assert job["failure"]["gpu_seconds"] == total
        assert all(a["gpus"] == job["gpus"] >= 1 for a in attempts)
        assert all(a["started_at"] <= a["ended_at"] for a in attempts)
        assert all(x["ended_at"] <= y["started_at"] for x, y in zip(attempts, attempts[1:]))
        assert job["submitted_at"] <= job["started_at"] == attempts[0]["started_at"]
        assert job["ended_at"] == attempts[-1]["ended_at"]
        assert attempts[-1]["status"] == job["status"]
    retried = Counter(len(j["attempts"]) for j in jobs)
    assert retried[1] > retried[2] > retried[3] > 0


def test_span_of_iso_weeks_ending_2026_11_22(jobs):
    ends = [j["ended_at"] for j in jobs]
    assert ends == sorted(ends)
    assert max(ends) < datetime(2026, 11, 23, tzinfo=timezone.utc)
    weeks = {e.isocalendar()[:2] for e in ends}
    assert (2026, 47) in weeks and len(weeks) == 8


def test_teams_and_submitters_are_skewed(jobs):
    submitters = Counter(j["submitter"] for j in jobs).most_common()
    teams = Counter(j["team"] for j in jobs).most_common()
    assert submitters[0][1] > 20 * submitters[len(submitters) // 2][1]
    assert teams[0][1] > 3 * teams[len(teams) // 2][1]
    assert len(submitters) > 500
    assert all(len({j["team"] for j in jobs if j["submitter"] == s}) == 1 for s, _ in submitters[:5])


def test_fingerprints_repeat_with_a_long_tail(failures):
    counts = Counter(f["fingerprint"] for f in failures)
    ordered = counts.most_common()
    assert ordered[0][1] > 100                      # a few signatures are very common
    singletons = sum(1 for _, c in ordered if c == 1)
    assert singletons > 0.4 * len(counts)           # ... and a long tail seen once
    shared = sum(c for _, c in ordered if c > 1)
    assert shared > 0.7 * len(failures)             # most failures share a signature
    # One signature, one category and masked message; raw messages differ (paths and numbers vary).
    by_fp = {}
    for f in failures:
        by_fp.setdefault(f["fingerprint"], set()).add((f["category"], f["masked_message"]))
    assert all(len(v) == 1 for v in by_fp.values())
    top = ordered[0][0]
    assert len({f["message"] for f in failures if f["fingerprint"] == top}) >= 1


def test_successful_jobs_share_submitter_and_name_with_failed_ones(jobs):
    failed = {}
    for job in jobs:
        key = (job["submitter"], job["name"])
        if job["status"] == "failed":
            failed.setdefault(key, job["ended_at"])
    fixes = [j for j in jobs if j["status"] == "succeeded" and (j["submitter"], j["name"]) in failed
             and j["ended_at"] > failed[(j["submitter"], j["name"])]]
    assert sum(1 for j in jobs if j["status"] == "succeeded") > 0.6 * len(jobs)
    assert len(fixes) > 0.1 * sum(1 for j in jobs if j["status"] == "failed")
    assert all(j["failure"] is None and j["exit_code"] == 0 for j in fixes)


def test_failure_fields_are_what_the_analysis_of_the_generated_log_says():
    workload = Workload(3000, seed=11)
    failed = [j for j in workload.jobs() if j["failure"]]
    agree = 0
    for job in failed[::4]:
        analysis = analyse_text(workload.failure_text(job), exit_code=job["exit_code"])
        failure = job["failure"]
        agree += (analysis.fingerprint, analysis.category, analysis.message) == (
            failure["fingerprint"], failure["category"], failure["message"])
    assert agree >= 0.97 * len(failed[::4])


def test_log_chunks_stream_a_log_of_the_stated_size():
    workload = Workload(200, seed=2)
    job = next(j for j in workload.jobs() if j["failure"] and j["log_bytes"] > 50_000)
    text = "".join(workload.log_chunks(job))
    assert abs(len(text.encode()) - job["log_bytes"]) < 2_000
    assert text.endswith(workload.failure_text(job))
    assert analyse_text(text, exit_code=job["exit_code"]).fingerprint == job["failure"]["fingerprint"]
    sizes = [j["log_bytes"] for j in islice(workload.jobs(), 200)]
    assert min(sizes) >= 2048 and max(sizes) > 100_000


def test_log_chunks_of_any_size_with_the_failure_before_the_end():
    workload = Workload(200, seed=2)
    job = next(j for j in workload.jobs() if j["failure"])
    failure = workload.failure_text(job)
    text = "".join(workload.log_chunks(job, size_bytes=300_000, failure_before_end=80_000))
    assert abs(len(text.encode()) - 300_000) < 1_000  # any size, not capped by job["log_bytes"]
    after = text[text.index(failure) + len(failure):]
    assert abs(len(after.encode()) - 80_000) < 1_000
    assert all(line.startswith("[rank1]: ") and "loss" in line for line in after.strip("\n").splitlines())
    # The other ranks' trainer output after it does not hide the failure.
    assert analyse_text(text, exit_code=job["exit_code"]).fingerprint == job["failure"]["fingerprint"]
