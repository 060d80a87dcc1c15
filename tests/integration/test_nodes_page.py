"""Faulty nodes (#15.4) through the real code path: jobs with their scheduler's nodes and logs that name
hosts, analysed by the worker's batch code on the real database; the Nodes page ranks the blamed hosts,
a node's page shows its history, and the threshold marks a node suspect and sends the alert once."""
import io
from datetime import timedelta

import pytest
from django.contrib.auth.models import User
from django.urls import reverse
from django.utils import timezone

from jobs_ingest import failures, services
from jobs_ingest.jobspec import JobSpecError, parse_job
from triage import nodes
from triage.models import AlertDelivery, AlertSubscription

NCCL = ("step 900 loss 1.2\n[rank3]:[E1118 03:12:44.123456 ProcessGroupNCCL.cpp:616] [Rank 3] Watchdog caught collective "
        "operation timeout: WorkNCCL(SeqNum=9, OpType=ALLREDUCE, Timeout(ms)=600000) ran for 600123 milliseconds before "
        "timing out.\nslurmstepd: error: *** STEP {job}.0 ON {host} CANCELLED AT 2026-11-18T03:22:44 ***\n")
XID = "step 10\nNov 18 03:12:44 {host} kernel: NVRM: Xid (PCI:0000:3b:00): 79, pid=1234, GPU has fallen off the bus.\n"
OOM = ("Traceback (most recent call last):\n  File \"train.py\", line 9, in step\n    loss.backward()\n"
       "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB on GPU 0.\n")


def ingest(external_id, text, *, nodes_=None, gpus=8, hours_ago=1.0):
    end = timezone.now() - timedelta(hours=hours_ago)
    meta = {"platform": "slurm", "external_id": external_id, "status": "failed", "team": "nlp", "gpus": gpus,
            "started_at": (end - timedelta(hours=2)).isoformat(), "ended_at": end.isoformat()}
    if nodes_ is not None:
        meta["nodes"] = nodes_
    job = services.receive_job(parse_job(meta), io.BytesIO(text.encode())).job
    return failures.analyse(job.pk)


@pytest.fixture
def reader(db):
    return User.objects.create_user("rita")


def test_the_scheduler_nodes_are_stored_expanded_and_bad_ones_refused(transactional_db, log_dir):
    failure = ingest("1", OOM, nodes_="gpu[01-03],cpu7")
    assert failure.job.nodes == ["gpu01", "gpu02", "gpu03", "cpu7"]
    assert parse_job({"platform": "k8s", "external_id": "x", "status": "failed", "nodes": ["n-1", "n-1", "n-2"]}).nodes \
        == ("n-1", "n-2")
    for bad in ("gpu[03-01]", ["ok", 7], ["bad host!"], {"a": 1}):
        with pytest.raises(JobSpecError, match="nodes"):
            parse_job({"platform": "slurm", "external_id": "y", "status": "failed", "nodes": bad})


def test_the_nodes_page_ranks_blamed_hosts_and_a_node_shows_its_history(transactional_db, log_dir, client, reader):
    assert client.get(reverse("nodes"))["Location"].startswith("/accounts/login/")
    assert client.get(reverse("node-detail", args=["gpu-07"]))["Location"].startswith("/accounts/login/")
    ingest("11", NCCL.format(job=11, host="gpu-07"), nodes_="gpu-[07-08]")
    ingest("12", XID.format(host="gpu-07"), nodes_="gpu-07")
    ingest("13", NCCL.format(job=13, host="gpu-09"), nodes_="gpu-09")
    program = ingest("14", OOM, nodes_="gpu-07")                    # a program failure blames no node
    quiet = ingest("15", "step 5\nNCCL WARN Call to ibv_poll_cq failed\n", nodes_=["gpu-10", "gpu-11"])
    assert program.fault == "user" and quiet.fault == "platform" and not quiet.suspect_nodes

    client.force_login(reader)
    rows = client.get(reverse("nodes")).context["rows"]
    by_host = {r.host: r for r in rows}
    assert rows[0].host == "gpu-07" and (by_host["gpu-07"].failures, by_host["gpu-07"].job_count) == (2, 2)
    assert "gpu-08" not in by_host  # the NCCL line named gpu-07: the job's other node is not blamed
    assert by_host["gpu-10"].failures == by_host["gpu-11"].failures == 1  # no host in the text: the job's nodes
    assert by_host["gpu-10"].gpu_hours == pytest.approx(8.0)  # 8 GPUs x 2 h, split over its two nodes
    assert not any(r.suspect for r in rows)                     # 2 failures < 3

    page = client.get(reverse("node-detail", args=["gpu-07"]))
    why = {r["failure"].job.external_id: (r["blamed"], r["from_text"]) for r in page.context["rows"]}
    assert why == {"11": (True, True), "12": (True, True), "14": (False, False)}
    assert b"a program failure blames no node" in page.content
    assert client.get(reverse("node-detail", args=["gpu-99"])).status_code == 404
    assert client.get("/nodes/%3Cscript%3E/").status_code == 404
    old = client.get(reverse("nodes"), {"days": "1"}).context["rows"]
    assert {r.host for r in old} == set(by_host)


def test_an_empty_window_says_when_the_last_blame_was_and_links_a_window_that_holds_it(transactional_db, log_dir,
                                                                                         client, reader):
    client.force_login(reader)
    assert client.get(reverse("nodes")).context["last_blame"] is None    # nothing at all: nothing to point to
    ingest("31", XID.format(host="gpu-12"), hours_ago=24 * 12)
    ingest("32", OOM, nodes_="gpu-13", hours_ago=1)                      # a program failure blames no node
    page = client.get(reverse("nodes"))
    assert page.context["rows"] == [] and page.context["last_blame"][1] == "gpu-12"
    assert page.context["wider_window"] == "30"
    assert b'href="?days=30"' in page.content and reverse("node-detail", args=["gpu-12"]).encode() in page.content
    assert client.get(reverse("nodes"), {"days": "30"}).context["last_blame"] is None   # the window holds it


def test_a_job_page_names_the_nodes_a_retry_should_avoid(transactional_db, log_dir, client, reader):
    named = ingest("41", XID.format(host="gpu-07"), nodes_="gpu-[07-08]")
    unnamed = ingest("42", "step 5\nNCCL WARN Call to ibv_poll_cq failed\n", nodes_=["gpu-10", "gpu-11"])
    program = ingest("43", OOM, nodes_="gpu-12")
    client.force_login(reader)

    def advice(failure) -> str:   # the paragraph with the retry advice (the job's own table lists all its nodes)
        page = client.get(reverse("job-detail", args=[failure.job_id])).content.decode()
        return page.split("Retry advice:", 1)[1].split("</p>", 1)[0]

    assert "Suspect nodes:" in advice(named) and ">gpu-07</a>" in advice(named) and "gpu-08" not in advice(named)
    text = advice(unnamed)
    assert "Nodes to avoid:" in text and ">gpu-10</a>" in text and ">gpu-11</a>" in text and "the text names none" in text
    assert "Nodes to avoid" not in advice(program) and "Suspect" not in advice(program)   # a program failure blames none


def test_the_threshold_marks_a_node_suspect_and_alerts_once(transactional_db, log_dir, client, reader, settings):
    AlertSubscription.objects.create(kind="suspect_node", user=User.objects.create_user("ops", email="ops@example.com"))
    ingest("21", NCCL.format(job=21, host="gpu-07"))
    ingest("22", NCCL.format(job=22, host="gpu-07"))
    ingest("23", XID.format(host="gpu-07"), hours_ago=30)           # outside the 24 h window
    assert not AlertDelivery.objects.exists()
    ingest("24", XID.format(host="gpu-07"))                         # 3 failures from 3 jobs in 24 h
    delivery = AlertDelivery.objects.get()
    assert (delivery.kind, delivery.key, delivery.target) == ("suspect_node", "node:gpu-07", "ops@example.com")
    ingest("25", XID.format(host="gpu-07"))
    assert AlertDelivery.objects.count() == 1                       # once per node and alert window

    client.force_login(reader)
    assert {r.host: r.suspect for r in client.get(reverse("nodes")).context["rows"]} == {"gpu-07": True}
    assert client.get(reverse("node-detail", args=["gpu-07"])).context["suspect"]

    settings.JOBTRIAGE_SUSPECT_NODE_FAILURES = 10                   # the threshold is a setting
    assert not nodes.is_suspect(*nodes.suspect_counts({"gpu-07"})["gpu-07"])


def test_the_weekly_report_has_a_platform_health_section(transactional_db, log_dir, client):
    from triage import reports

    ingest("31", NCCL.format(job=31, host="gpu-07"), hours_ago=0.1)
    ingest("32", OOM, hours_ago=0.1)
    week = reports.Week.of(timezone.now().date())
    report = reports.build(week)
    health = report.platform
    assert (health.failures, [c[0] for c in health.categories]) == (1, ["collective_communication"])
    assert health.gpu_hours == pytest.approx(16.0) and health.share_of_lost == pytest.approx(50.0)
    assert [n.host for n in health.nodes] == ["gpu-07"] and health.suspect_nodes == 0
    rows = reports.csv_rows(report)[1]
    assert ["platform_nodes", "gpu-07", "", "failures", 1] in rows

    client.force_login(User.objects.create_superuser("boss"))
    page = client.get(reverse("weekly-report", args=[str(week)])).content.decode()
    assert "Platform health" in page and reverse("node-detail", args=["gpu-07"]) in page
