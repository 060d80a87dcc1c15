"""JSON Lines tagging (jobs_ingest.core.jsonl, the interface of `manage.py tag_logs`)."""
import json
import pathlib
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from jobs_ingest.core.jsonl import OUTPUT_FIELDS, tag_jsonl, tag_record  # noqa: E402

FIXTURES = ROOT / "tests" / "fixtures" / "logs"


def test_tag_record_fields():
    log = (FIXTURES / "python_traceback.log").read_text()
    out = tag_record({"id": "a", "log": log})
    assert out["id"] == "a"
    assert set(out) == {"id", *OUTPUT_FIELDS}
    assert out["category"] == "path_not_found" and out["retry_advice"] == "do_not_retry"
    assert out["failure_line"].startswith("FileNotFoundError")


def test_exit_code_from_record():
    out = tag_record({"id": 1, "log": "epoch 1\nepoch 2\n", "exit_code": "137"})
    assert out["category"] == "cpu_oom"
    out = tag_record({"id": 1, "log": "epoch 1\n", "signal": "SIGKILL"})
    assert out["category"] == "cpu_oom"
    out = tag_record({"id": 1, "log": "epoch 1\n", "exit_code": "weird"})
    assert out["category"] == "unclassified"
    assert out["why_unclassified"].startswith("the log shows no failure")


def test_jsonl_bad_lines_do_not_stop_the_batch():
    lines = [
        json.dumps({"id": "ok", "log": "KeyError: 'x'"}),
        "",
        "{not json",
        json.dumps([1, 2]),
        json.dumps({"id": "nolog"}),
        json.dumps({"id": "ok2", "log": "ZeroDivisionError: division by zero"}),
    ]
    out = list(tag_jsonl(lines))
    assert [o.get("id") for o in out] == ["ok", None, None, "nolog", "ok2"]
    assert "error" in out[1] and "line 3" in out[1]["error"]
    assert "error" in out[2] and "error" in out[3]
    assert out[0]["category"] == "key_not_found" and out[4]["category"] == "division_by_zero"


def test_output_is_json_serialisable():
    for path in sorted(FIXTURES.glob("*.log")):
        out = tag_record({"id": path.name, "log": path.read_bytes().decode("utf-8", "replace")})
        json.dumps(out, ensure_ascii=False)
