"""`jobtriage replay DIR` re-runs the captured command with the recorded seeds and the capture at hand."""
import json
import sys

from .conftest import run_cli

SCRIPT = """
import random
from jobtriage_client import replay_capture, seed_everything
seed = seed_everything()
captured = replay_capture()
print("seed", seed, "draw", random.random(), "batch", captured["artifacts"]["batch"], "step", captured["step"])
"""


def test_replay_reruns_the_command_with_the_recorded_seed(tmp_path):
    (tmp_path / "job").mkdir()
    (tmp_path / "job" / "train.py").write_text(SCRIPT)
    capture_dir = tmp_path / "capture"
    capture_dir.mkdir()
    (capture_dir / "capture.json").write_text(json.dumps({
        "guard": "nan", "framework": "pytorch", "reason": "loss is NaN", "step": 412, "stage": "training",
        "artifacts": {"batch": str(capture_dir / "batch-step412.pt"), "seeds": {"python": 4242}},
        "inputs": [{"step": 412, "files": ["shard-9.bin"]}],
        "command": [sys.executable, "train.py"], "cwd": str(tmp_path / "job")}))

    dry = run_cli(["replay", "--dry-run", str(capture_dir)])
    done = run_cli(["replay", str(capture_dir)])

    assert dry.returncode == 0 and b"loss is NaN at step 412 (pytorch, stage training)" in dry.stdout
    assert b"inputs of step 412: shard-9.bin" in dry.stdout and b"seed 4242" not in dry.stdout
    assert done.returncode == 0, done.stderr.decode()
    import random
    random.seed(4242)
    expected = f"seed 4242 draw {random.random()} batch {capture_dir / 'batch-step412.pt'} step 412"
    assert done.stdout.decode().splitlines()[-1] == expected
    missing = run_cli(["replay", str(tmp_path / "nothing")])
    assert missing.returncode == 2 and b"no capture in" in missing.stderr
