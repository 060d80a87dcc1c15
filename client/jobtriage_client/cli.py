"""`jobtriage run -- CMD...`, `jobtriage submit`, `jobtriage replay DIR`.

`run` passes the command's output through unchanged, keeps its tail, and, when the command fails,
sends the job to jobtriage. It always exits with the command's own status: a failed submission is
reported as a warning and never turns a job's success or failure into something else.
"""
from __future__ import annotations

import argparse
import json
import os
import selectors
import shlex
import signal
import subprocess
import sys
import tempfile
import threading
import time
from datetime import datetime, timezone
from typing import Optional

from . import envinfo, hook
from .submit import SubmitError, submit_job, wait_for_analysis
from .tail import DEFAULT_LIMIT, TailBuffer

EXIT_CANNOT_RUN = 127           # as a shell: command not found / not executable
EXIT_SUBMIT_FAILED = 1
PIPE_DRAIN_SECONDS = 10
FORWARDED_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGUSR1, signal.SIGUSR2)


def main(argv: Optional[list] = None) -> int:
    parser = _parser()
    args = parser.parse_args(argv)
    if args.action == "run":
        command = args.cmd[1:] if args.cmd[:1] == ["--"] else args.cmd
        if not command:
            parser.error("run: give the command after --, e.g. jobtriage run -- python train.py")
        return run(command, args)
    if args.action == "submit":
        return submit(args)
    return replay(args.folder, dry_run=args.dry_run)


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="jobtriage", description="Send failed training jobs to jobtriage.")
    actions = parser.add_subparsers(dest="action", required=True)

    def server_options(p):
        p.add_argument("--url", default=os.environ.get("JOBTRIAGE_URL", ""), help="server URL [$JOBTRIAGE_URL]")
        p.add_argument("--token", default=os.environ.get("JOBTRIAGE_TOKEN", ""), help="API token [$JOBTRIAGE_TOKEN]")
        p.add_argument("--timeout", type=float, default=60.0, help="seconds per HTTP attempt [60]")
        p.add_argument("--retries", type=int, default=5, help="retries on connection errors, 429, 502-504 [5]")

    run_p = actions.add_parser("run", help="run a training command; send it to jobtriage if it fails")
    server_options(run_p)
    run_p.add_argument("--platform", default=None, help="[$JOBTRIAGE_PLATFORM, slurm / k8s when detected, local]")
    run_p.add_argument("--team", default=os.environ.get("JOBTRIAGE_TEAM", ""), help="[$JOBTRIAGE_TEAM]")
    run_p.add_argument("--name", default=None, help="job name [$JOBTRIAGE_JOB_NAME, $SLURM_JOB_NAME, the script]")
    run_p.add_argument("--external-id", default=None, help="job id [$JOBTRIAGE_EXTERNAL_ID, the scheduler's]")
    run_p.add_argument("--tail-bytes", type=int, default=DEFAULT_LIMIT, help="log tail sent [2 MiB]")
    run_p.add_argument("cmd", nargs=argparse.REMAINDER, help="-- the command and its arguments")

    submit_p = actions.add_parser("submit", help="send one job (metadata JSON file + log file)")
    server_options(submit_p)
    submit_p.add_argument("--metadata", required=True, help="JSON file with the job's metadata (docs/ingest.md)")
    submit_p.add_argument("--log", help="the job's log file (streamed)")
    submit_p.add_argument("--wait", action="store_true", help="wait for the analysis and print the category")

    replay_p = actions.add_parser("replay", help="re-run a job stopped by the NaN guard, with its seeds")
    replay_p.add_argument("folder", help="the capture folder printed in the job's log")
    replay_p.add_argument("--dry-run", action="store_true", help="only show what was captured and the command")
    return parser


def run(command: list, args) -> int:
    env = os.environ
    started_wall, started = time.time(), time.monotonic()
    child_env = dict(env)
    # A Python child writing to a pipe block-buffers stdout: its lines would reach the tail after
    # the traceback it printed on stderr. Unbuffered keeps the two streams in order.
    child_env.setdefault("PYTHONUNBUFFERED", "1")
    with TailBuffer(args.tail_bytes) as tail:
        try:
            child = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=child_env)
        except OSError as exc:
            print(f"jobtriage: cannot run {shlex.join(command)}: {exc}", file=sys.stderr)
            return EXIT_CANNOT_RUN
        previous = _forward_signals(child)
        pumps = [threading.Thread(target=_pump, args=([(child.stdout, _binary(sys.stdout)),
                                                       (child.stderr, _binary(sys.stderr))], tail), daemon=True)]
        for pump in pumps:
            pump.start()
        try:
            returncode = child.wait()
            for pump in pumps:
                # A process the command left behind (a daemon, an orphaned worker) may hold the pipes
                # open for ever: the tail so far is what there is.
                pump.join(timeout=PIPE_DRAIN_SECONDS)
        finally:
            for signum, handler in previous.items():
                signal.signal(signum, handler)
        ended_wall, runtime = time.time(), time.monotonic() - started
        exit_code = returncode if returncode >= 0 else 128 - returncode
        if returncode == 0:
            return 0
        if not (args.url and args.token):
            print("jobtriage: warning: the command failed but was not sent (set --url and --token, or JOBTRIAGE_URL "
                  "and JOBTRIAGE_TOKEN)", file=sys.stderr)
            return exit_code
        log_bytes = tail.getvalue()
        metadata = failed_job_metadata(command, env, returncode, started_wall, ended_wall, runtime, log_bytes,
                                       args, truncated=tail.truncated)
    with tempfile.NamedTemporaryFile(prefix="jobtriage-log-", suffix=".log", delete=False) as log_file:
        log_file.write(log_bytes)
    try:
        sent = submit_job(args.url, args.token, metadata, log_path=log_file.name, timeout=args.timeout,
                          retries=args.retries)
        print(f"jobtriage: failed job sent: {sent.url}", file=sys.stderr)
    except (SubmitError, ValueError, OSError) as exc:
        print(f"jobtriage: warning: could not send the failed job to jobtriage: {exc}", file=sys.stderr)
    finally:
        os.unlink(log_file.name)
    return exit_code


def failed_job_metadata(command: list, env, returncode: int, started: float, ended: float, runtime: float,
                        log_bytes: bytes, args, truncated: bool = False) -> dict:
    """The job's metadata (docs/ingest.md) from the environment and how the command ended."""
    metadata = {
        "platform": args.platform or envinfo.platform(env),
        "external_id": args.external_id or envinfo.external_id(env, started, os.getpid()),
        "name": args.name or envinfo.job_name(env, command),
        "submitter": env.get("USER") or env.get("LOGNAME") or "",
        "team": args.team,
        "status": "killed" if returncode < 0 else "failed",
        "started_at": _iso(started), "ended_at": _iso(ended),
        "exit_code": returncode if returncode >= 0 else 128 - returncode,
        "command": shlex.join(command)[:20_000],
        "code_version": envinfo.git_commit(),
        "image": envinfo.image(env),
        "runtime_seconds": round(runtime, 3),
        "host": _hostname(),
        "log_truncated": truncated,
    }
    if returncode < 0:
        metadata["signal"] = _signal_name(-returncode)
    gpus = envinfo.gpu_count(env)
    if gpus is not None:
        metadata["gpus"] = gpus
    capture = _capture_from_log(log_bytes)
    if capture:
        metadata["capture"] = capture
    return {k: v for k, v in metadata.items() if v not in ("", None)}


def _capture_from_log(log_bytes: bytes) -> Optional[dict]:
    marker = b"[jobtriage] capture="
    at = log_bytes.rfind(marker)
    if at < 0:
        return None
    end = log_bytes.find(b"\n", at)
    try:
        capture = json.loads(log_bytes[at + len(marker):end if end >= 0 else None])
    except ValueError:
        return None
    return capture if isinstance(capture, dict) else None


def _pump(streams: list, tail: TailBuffer) -> None:
    """Copy the child's streams to our own as output comes (no line buffering: progress bars stay live).

    One reader for both streams, so the tail keeps the order in which output became available: with a
    reader thread per stream, a stdout line could land inside a traceback printed on stderr."""
    selector = selectors.DefaultSelector()
    for source, sink in streams:
        selector.register(source, selectors.EVENT_READ, sink)
    while selector.get_map():
        for key, _ in selector.select():
            chunk = os.read(key.fd, 65536)
            if not chunk:
                selector.unregister(key.fileobj)
                key.fileobj.close()
                continue
            tail.write(chunk)
            try:
                key.data.write(chunk)
                key.data.flush()
            except (OSError, ValueError):  # our console went away; keep the tail anyway
                pass
    selector.close()


def _forward_signals(child) -> dict:
    """The scheduler signals the wrapper (scancel, kubectl delete, Ctrl-C): pass it on to the job."""
    previous = {}
    if threading.current_thread() is not threading.main_thread():
        return previous
    for signum in FORWARDED_SIGNALS:
        try:
            previous[signum] = signal.signal(signum, lambda s, _frame: child.send_signal(s))
        except (OSError, ValueError):
            pass
    return previous


def _binary(stream):
    return getattr(stream, "buffer", stream)


def _iso(timestamp: float) -> str:
    return datetime.fromtimestamp(timestamp, timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def _hostname() -> str:
    import socket
    return socket.gethostname()


def _signal_name(signum: int) -> str:
    try:
        return signal.Signals(signum).name
    except ValueError:
        return str(signum)


def submit(args) -> int:
    try:
        with open(args.metadata, encoding="utf-8") as f:
            metadata = json.load(f)
    except (OSError, ValueError) as exc:
        print(f"jobtriage: cannot read the metadata file {args.metadata}: {exc}", file=sys.stderr)
        return 2
    try:
        sent = submit_job(args.url, args.token, metadata, log_path=args.log, timeout=args.timeout,
                          retries=args.retries)
    except (SubmitError, ValueError) as exc:
        print(f"jobtriage: {exc}", file=sys.stderr)
        return EXIT_SUBMIT_FAILED if isinstance(exc, SubmitError) else 2
    result = {"id": sent.id, "created": sent.created, "url": sent.url, "status_url": sent.status_url}
    if args.wait:
        try:
            result["status"] = wait_for_analysis(sent.status_url, args.token)
        except SubmitError as exc:
            print(f"jobtriage: sent, but its status is unknown: {exc}", file=sys.stderr)
    print(json.dumps(result, indent=2))
    return 0


def replay(folder: str, dry_run: bool = False) -> int:
    """Show what the guard captured, then re-run the job's command with JOBTRIAGE_REPLAY=folder (the hook's
    seed_everything then reuses the recorded seeds; replay_capture() gives the batch and checkpoint)."""
    try:
        capture = hook.load_capture(folder)
    except (OSError, ValueError) as exc:
        print(f"jobtriage: no capture in {folder}: {exc}", file=sys.stderr)
        return 2
    artifacts = capture.get("artifacts", {})
    print(f"{capture.get('reason', '?')} at step {capture.get('step')} ({capture.get('framework', '?')}, "
          f"stage {capture.get('stage') or '?'})")
    for key in ("batch", "checkpoint", "model"):
        if artifacts.get(key):
            print(f"  {key}: {artifacts[key]}")
    print(f"  seeds: {json.dumps(artifacts.get('seeds', {}))}")
    for batch in capture.get("inputs", [])[-3:]:
        print(f"  inputs of step {batch.get('step')}: {', '.join(batch.get('files', [])) or '-'}")
    command = capture.get("command") or []
    print(f"  command: (cd {shlex.quote(capture.get('cwd', '.'))} && {hook.REPLAY_ENV}={shlex.quote(folder)} "
          f"{shlex.join(command)})")
    if dry_run or not command:
        return 0
    env = {**os.environ, hook.REPLAY_ENV: os.path.abspath(folder)}
    return subprocess.call(command, cwd=capture.get("cwd") or None, env=env)


if __name__ == "__main__":
    sys.exit(main())
