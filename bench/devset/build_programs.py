#!/usr/bin/env python3
"""Run every failing program in bench/devset/programs/ and record what it really printed.

Writes bench/devset/programs.jsonl: {"id", "log" (captured stdout+stderr), "category", "stage", "exit_code",
"source": "program:<file>"}.  Each program declares in its leading comments:

    # category: <one of the 20 ids>      (required)
    # stage: <initialization|data_preprocessing|training|evaluation>
    # args: <command-line arguments>
    # venv: torch        run with the separate venv that has numpy+torch (see --torch-python); skipped without it
    # ulimit_v: <KB>     run under `ulimit -v` (address-space limit) to get a real MemoryError
    # as_user: nobody    run as an unprivileged user (we are root, where file modes do not block access)
    # shell: true        run through `bash -c` so that the shell reports a signal death ("Killed")

Each program runs in its own fresh directory /tmp/devset-run/<name>/ (a copy of the program is placed there),
with a timeout.  A program that exits 0 is an error of the dev set and is reported (and not recorded).

    python bench/devset/build_programs.py [--torch-python /tmp/devset-venv/bin/python] [--only NAME]
"""
from __future__ import annotations

import argparse
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
PROGRAMS = HERE / "programs"
RUN_ROOT = Path("/tmp/devset-run")
HEADER = re.compile(r"^#\s*(category|stage|args|venv|ulimit_v|as_user|shell):\s*(.*?)\s*$")


def headers(path: Path) -> dict[str, str]:
    out = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.startswith("#"):
            break
        m = HEADER.match(line)
        if m:
            out[m.group(1)] = m.group(2)
    return out


def find_plain_python() -> str:
    # A plain system interpreter (readable by an unprivileged user too); else the one running this script.
    for cand in ("/usr/bin/python3", "/usr/local/bin/python3"):
        if Path(cand).exists():
            return cand
    return sys.executable


def run_one(path: Path, meta: dict[str, str], plain_py: str, torch_py: str | None, timeout: float):
    name = path.stem
    if meta.get("venv") == "torch":
        if not torch_py:
            return None, "skipped: no torch interpreter"
        py = torch_py
    elif meta.get("as_user"):
        py = "/usr/bin/python3"
    else:
        py = plain_py
    workdir = RUN_ROOT / name
    shutil.rmtree(workdir, ignore_errors=True)
    workdir.mkdir(parents=True)
    shutil.copy(path, workdir / path.name)
    cmd = f"{shlex.quote(py)} {shlex.quote(path.name)} {meta.get('args', '')}".strip()
    if meta.get("ulimit_v"):
        cmd = f"ulimit -v {int(meta['ulimit_v'])}; exec {cmd}"
    if meta.get("shell") == "true":
        cmd = f"{cmd}; exit $?"  # not exec: bash waits and reports the signal
    argv = ["bash", "-c", cmd]
    if meta.get("as_user"):
        os.chmod(workdir, 0o777)
        os.chmod(RUN_ROOT, 0o755)
        runuser = shutil.which("runuser", path="/usr/sbin:/sbin:/usr/bin:/bin") or "runuser"
        argv = [runuser, "-u", meta["as_user"], "--"] + argv
    env = {"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": str(workdir), "LANG": "C.UTF-8",
           "PYTHONHASHSEED": "0", "PYTHONDONTWRITEBYTECODE": "1", "OMP_NUM_THREADS": "1"}
    try:
        p = subprocess.run(argv, cwd=workdir, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                           timeout=timeout)
        out, rc = p.stdout.decode("utf-8", "replace"), p.returncode
    except subprocess.TimeoutExpired as e:
        out, rc = (e.stdout or b"").decode("utf-8", "replace") + f"\n[timeout after {timeout}s]\n", 124
    if rc < 0:  # killed by a signal: report it the way a shell or a job scheduler does
        rc = 128 - rc
    return {"log": out, "exit_code": rc}, None


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--torch-python", default="/tmp/devset-venv/bin/python",
                    help="interpreter of a separate venv with numpy and torch (CPU is enough)")
    ap.add_argument("--out", type=Path, default=HERE / "programs.jsonl")
    ap.add_argument("--only", help="run only programs whose name contains this")
    ap.add_argument("--timeout", type=float, default=120)
    args = ap.parse_args()
    torch_py = args.torch_python if args.torch_python and Path(args.torch_python).exists() else None
    plain_py = find_plain_python()
    records, problems = [], []
    files = sorted(PROGRAMS.glob("*.py"))
    if args.only:
        files = [f for f in files if args.only in f.name]
    for i, path in enumerate(files, 1):
        meta = headers(path)
        if "category" not in meta:
            problems.append(f"{path.name}: no '# category:' header")
            continue
        print(f"[{i}/{len(files)}] {path.name} ...", file=sys.stderr, flush=True)
        res, why = run_one(path, meta, plain_py, torch_py, args.timeout)
        if res is None:
            problems.append(f"{path.name}: {why}")
            continue
        if res["exit_code"] == 0:
            problems.append(f"{path.name}: exited 0 (it must fail)")
            continue
        rec = {"id": f"prog-{path.stem}", "log": res["log"], "category": meta["category"],
               "exit_code": res["exit_code"], "source": f"program:{path.name}"}
        if meta.get("stage"):
            rec["stage"] = meta["stage"]
        records.append(rec)
        last = [ln for ln in res["log"].splitlines() if ln.strip()][-1:] or [""]
        print(f"    exit {res['exit_code']}: {last[0][:120]}", file=sys.stderr, flush=True)
    if not args.only:
        with args.out.open("w", encoding="utf-8") as f:
            for r in records:
                f.write(json.dumps(r, ensure_ascii=False) + "\n")
        print(f"wrote {len(records)} records to {args.out}", file=sys.stderr)
    for p in problems:
        print("PROBLEM:", p, file=sys.stderr)
    sys.exit(1 if any("exited 0" in p or "header" in p for p in problems) else 0)


if __name__ == "__main__":
    main()
