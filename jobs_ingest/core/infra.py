"""The fifth dimension, `infrastructure`: failures of the platform, not of the job (docs/infrastructure.md).

Zhang et al. left hardware and platform failures out of their taxonomy; Acme (NSDI 2024) found them to
be about 11% of failed jobs but over 82% of failed GPU time. `detect` reads the end of a failed job's
log and the scheduler's final state and answers with an InfraFinding, or None when the failure is the
job's own (the caller then keeps the program category). Pure: no Django.

Released rule sets (INFRA_V1, ...) never change; a tagging config names the one it uses (configs.py).
"""
from __future__ import annotations

import bisect
import functools
import itertools
import re
from dataclasses import dataclass, replace

from .nodes import hosts_in, is_failure_line, prefix_hosts
from .tracebacks import strip_launcher_prefixes
from .category import RETRY, Category

INFRASTRUCTURE = "infrastructure"
DIMENSION_NAME = "Infrastructure"

RETRY_OTHER_NODES = "retry_other_nodes"
RETRY_AFTER_STORAGE_RECOVERS = "retry_after_storage_recovers"
RETRY_ADVICE: dict[str, str] = {  # new values only; `retry` keeps taxonomy's text
    RETRY_OTHER_NODES: "Retry, excluding the nodes named: the hardware or node failed, not the job",
    RETRY_AFTER_STORAGE_RECOVERS: "Retry once the storage has recovered (space freed, mount or object store back)",
}

PLATFORM = "platform"
USER = "user"
ROOT_CAUSES: dict[str, str] = {
    "hardware_fault": "Hardware fault (GPU, memory, interconnect or node)",
    "platform_fault": "Platform fault (scheduler, network or storage service)",
}

_C = Category
CATEGORIES: dict[str, Category] = {c.id: c for c in [
    _C("gpu_hardware", "GPU Hardware", INFRASTRUCTURE, 0, RETRY_OTHER_NODES, "hardware_fault"),
    _C("collective_communication", "Collective Communication", INFRASTRUCTURE, 0, RETRY_OTHER_NODES, "hardware_fault"),
    _C("node_lost", "Node Lost", INFRASTRUCTURE, 0, RETRY_OTHER_NODES, "hardware_fault"),
    _C("preempted", "Preempted", INFRASTRUCTURE, 0, RETRY, "platform_fault"),
    _C("network_rendezvous", "Network and Rendezvous", INFRASTRUCTURE, 0, RETRY, "platform_fault"),
    _C("storage", "Storage", INFRASTRUCTURE, 0, RETRY_AFTER_STORAGE_RECOVERS, "platform_fault"),
]}
FAULT: dict[str, str] = {category_id: PLATFORM for category_id in CATEGORIES}


def is_platform_fault(category_id: str) -> bool:
    """True for the infrastructure categories; every other category is the job's (the user's) fault."""
    return FAULT.get(category_id) == PLATFORM


@dataclass(frozen=True)
class InfraFinding:
    category: str
    confidence: float
    rule: str
    evidence: str
    evidence_index: int | None  # index into the lines given to detect(); None for a scheduler state
    hosts: tuple[str, ...]

    @property
    def dimension(self) -> str:
        return INFRASTRUCTURE

    @property
    def retry_advice(self) -> str:
        return CATEGORIES[self.category].retry_advice

    @property
    def fault(self) -> str:
        return PLATFORM


# Only the end of the log decides: the failure that ended the job, not a warning hours earlier.
TAIL_LINES = 400
MAX_LINE_CHARS = 2000

# Xids from NVIDIA's catalogue (docs.nvidia.com/deploy/xid-errors) that mean hardware or driver
# trouble: 48 double-bit ECC, 61/62 internal micro-controller halt, 63/64 row remapping / page
# retirement event and failure, 74 NVLink error, 79 fallen off the bus, 92 high single-bit ECC rate,
# 94/95 contained/uncontained ECC error, 119/120 GSP timeout/error, 140 unrecovered ECC error.
# 13, 31 and 43 (graphics exception, page fault, stopped processing) are usually the application's own
# fault (an out-of-range index shows as Xid 43 beside a device-side assert); other Xids decide nothing.
# 144-150 are the NVLink fabric errors (SAW, RLW, TLW, TREX, NVLPW_CTRL, NETIR, MSE) of newer GPUs;
# 154 states the recovery the GPU needs (reset, reboot, power cycle).
HARDWARE_XIDS = frozenset({48, 61, 62, 63, 64, 74, 79, 92, 94, 95, 119, 120, 140, *range(144, 151), 154})
APPLICATION_XIDS = frozenset({13, 31, 43, 45})
# "NVRM: Xid (PCI:0000:3b:00): 79, pid=...", "Xid=79", "XID error 79", "Xid 79".
_XID = re.compile(r"\bXid\b(?:\s*\([^)]{0,40}\))?\s*[:=]?\s*(?:errors?\s*[:=]?\s*)?(\d{1,3})\b", re.I)

# (rule id, category, confidence, pattern). Order inside a category is priority; across categories
# _PRIORITY decides (a hardware error explains the NCCL timeout that follows it, not the reverse).
_RULES: list[tuple[str, str, float, re.Pattern]] = [(rid, cat, conf, re.compile(p, re.I)) for rid, cat, conf, p in [
    # NVIDIA Xid catalogue texts; CUDA runtime's cudaErrorECCUncorrectable / cudaErrorNvlinkUncorrectable
    # messages; NVML_ERROR_GPU_IS_LOST ("GPU is lost") as nvidia-smi prints it.
    ("infra.gpu_fallen_off_bus", "gpu_hardware", 0.97, r"fallen off the bus|\bGPU is lost\b"),
    ("infra.ecc_uncorrectable", "gpu_hardware", 0.95,
     r"uncorrectable ECC error|double[- ]bit (?:ECC )?error|\(DBE\)|ECC_UNCORRECTABLE|uncorrectable memory error"),
    ("infra.nvlink_error", "gpu_hardware", 0.93, r"uncorrectable NVLink error|NVLink: fatal error|NVLink.{0,30}fatal"),
    ("infra.row_remap_failure", "gpu_hardware", 0.9, r"row[- ]?remap\w*.{0,40}fail|row remapping failure"),
    # Slurm slurmstepd (src/slurmd/slurmstepd/req.c): "*** JOB %u ON %s CANCELLED AT %s DUE TO NODE FAILURE ***";
    # srun "Node failure on %s"; Kubernetes node controller "Node %v which was running pod %v is
    # unresponsive" (reason NodeLost) and the kubelet eviction manager "The node was low on resource: %v".
    ("infra.slurm_node_failure", "node_lost", 0.95, r"DUE TO NODE FAIL(?:URE)?\b|\bNode failure on \S+"),
    ("infra.k8s_node_lost", "node_lost", 0.9, r"which was running pod \S+ is unresponsive|\bNodeLost\b"),
    ("infra.k8s_node_pressure_eviction", "node_lost", 0.85,
     r"The node was low on resource:|The node had condition: \[\w*Pressure\]"),
    # PBS/Torque server: "job preempted (node failure)", "Server could not connect to MOM"; Ray's
    # ActorDiedError "The actor died because its node has died" and its GCS health check "has been
    # marked dead because the detector has missed too many heartbeats"; slurmstepd "STEPD TERMINATED
    # ... DUE TO JOB NOT ENDING WITH SIGNALS", after which Slurm drains the node ("Kill task failed").
    ("infra.pbs_node_failure", "node_lost", 0.85, r"preempted \(node failure\)|could not connect to MOM\b"),
    ("infra.ray_node_died", "node_lost", 0.85,
     r"died because its node has died|marked dead because the detector has missed too many heartbeats"),
    ("infra.slurm_kill_task_failed", "node_lost", 0.7, r"DUE TO JOB NOT ENDING WITH SIGNALS|Kill task failed"),
    # Slurm "... DUE TO PREEMPTION ***"; GCE "Instance was preempted"; AWS spot interruption notice;
    # Kubernetes graceful node shutdown "Pod was terminated in response to imminent node shutdown".
    ("infra.slurm_preemption", "preempted", 0.95, r"DUE TO PREEMPTION\b"),
    ("infra.spot_reclaimed", "preempted", 0.85,
     r"instance (?:was|has been) preempted|spot instance (?:interruption|termination)|spot.{0,20}reclaim"
     r"|terminated in response to imminent node shutdown"),
    ("infra.ray_node_preempted", "preempted", 0.9, r"\bnode was preempted\b"),  # Ray's death cause
    # errno texts (glibc strerror); the Linux NFS client's "nfs: server %s not responding";
    # botocore.exceptions ReadTimeoutError "Read timeout on endpoint URL", ConnectTimeoutError,
    # EndpointConnectionError "Could not connect to the endpoint URL"; S3 throttling/5xx codes; gcsfs.retry.
    ("infra.stale_file_handle", "storage", 0.92, r"Stale (?:NFS )?file handle|\[Errno 116\]|\bESTALE\b"),
    ("infra.disk_full", "storage", 0.9, r"No space left on device|\[Errno 28\]|\bENOSPC\b"),
    ("infra.io_error", "storage", 0.85, r"\[Errno 5\]|Input/output error|\bEIO\b"),
    ("infra.nfs_not_responding", "storage", 0.9, r"\bnfs: server \S+ not responding"),
    # strerror(ENOTCONN) on a path: the FUSE mount (gcsfuse, s3fs, a Drive mount) behind it has gone away.
    ("infra.mount_lost", "storage", 0.8, r"Transport endpoint is not connected: ['\"]?/"),
    ("infra.object_store_timeout", "storage", 0.88,
     r"(?:Read|Connect) timeout on endpoint URL|Could not connect to the endpoint URL"
     r"|botocore\.exceptions\.(?:ReadTimeoutError|ConnectTimeoutError|EndpointConnectionError|ConnectionClosedError)"
     r"|\((?:SlowDown|ServiceUnavailable|InternalError|RequestTimeout)\) when calling the \w+ operation"
     r"|gcsfs\.retry\.HttpError|azure\.core\.exceptions\.Service(?:Response|Request)Error|(?:amazonaws\.com|storage\.googleapis\.com|blob\.core\.windows\.net).{0,120}(?:Read timed out|timed out)"),
    # NCCL: ncclGetErrorString texts (src/misc/... "remote process exited or there was a network error",
    # "unhandled system error", "internal error - please report this issue to the NCCL developers");
    # net_ib "NET/IB : Got completion from peer %s with error/status"; PyTorch ProcessGroupNCCL watchdog
    # "Watchdog caught collective operation timeout: WorkNCCL(...) ran for %d milliseconds before timing
    # out" and its heartbeat monitor; Gloo tcp "Timed out waiting %dms for recv operation to complete".
    ("infra.nccl_watchdog_timeout", "collective_communication", 0.9,
     r"Watchdog caught collective operation timeout|ran for \d+ milliseconds before timing out"
     r"|ProcessGroupNCCL's watchdog got stuck|Some NCCL operations have failed or timed out"),
    ("infra.nccl_ib_completion_error", "collective_communication", 0.92,
     r"NET/IB ?: ?Got completion (?:from peer \S+ )?with (?:error|status)|\bIBV_WC_\w+_ERR\b"),
    ("infra.nccl_remote_error", "collective_communication", 0.88,
     r"\bncclRemoteError\b|remote process exited or there was a network error"),
    ("infra.gloo_timeout", "collective_communication", 0.85,
     r"Timed out waiting \d+ms for (?:recv|send) operation to complete"),
    ("infra.nccl_communicator_aborted", "collective_communication", 0.75, r"NCCL communicator was aborted"),
    ("infra.nccl_system_error", "collective_communication", 0.72, r"\bncclSystemError\b|unhandled system error"),
    ("infra.nccl_internal_error", "collective_communication", 0.65,
     r"\bncclInternalError\b|internal error - please report this issue to the NCCL developers"),
    # NCCL's socket layer (misc/socket.cc, include/socket.h): failed system calls and closed peers.
    ("infra.nccl_socket_error", "collective_communication", 0.6,
     r"NCCL WARN.{0,80}(?:Call to \w+ failed|socketProgress|Socket recv failed|socketStartConnect"
     r"|Connection closed by remote peer)"),
    # PyTorch c10d TCPStore/socket.cpp and torch.distributed.elastic rendezvous texts.
    ("infra.c10d_store_timeout", "network_rendezvous", 0.85,
     r"DistStoreError: Timed out|\bSocket Timeout\b|client socket has timed out|Wait timeout after \d+ ?ms"
     r"|Timed out initializing process group in store based barrier|\bconnect\(\) timed out"),
    ("infra.rendezvous_timeout", "network_rendezvous", 0.85,
     r"RendezvousTimeoutError|RendezvousConnectionError|connection to the C10d store has failed"),
    ("infra.c10d_connect_failed", "network_rendezvous", 0.7,
     r"client socket has failed to connect|\bconnect\(\) to \S+ failed|Gloo connectFullMesh failed"),
    # c10d ProcessGroupGloo monitoredBarrier and the elastic agent's exit barrier (a TCPStore wait).
    ("infra.monitored_barrier_peer_error", "network_rendezvous", 0.6,
     r"received errors while waiting for send/recv from rank"),
    ("infra.elastic_exit_barrier", "network_rendezvous", 0.6, r"Error waiting on exit barrier"),
    ("infra.connection_reset", "network_rendezvous", 0.7,
     r"Connection reset by peer|Connection closed by (?:remote )?peer|\bConnectionResetError\b"),
]]
# A preemption is a deliberate reclaim that explains a node's death, so it outranks node_lost.
_PRIORITY = ["gpu_hardware", "preempted", "node_lost", "storage", "collective_communication", "network_rendezvous"]
# Consequences of another rank's crash as often as causes: a program failure in the tail outranks them.
_ECHO_PRONE = {"collective_communication", "network_rendezvous"}
# Storage errors a program's own set-up also causes (a full /dev/shm, a worker's bus error): the look-alike guard too.
_GUARDED_STORAGE_RULES = frozenset({"infra.disk_full", "infra.io_error", "infra.disk_quota", "infra.remote_io_error"})

# Prefilter: every match of a rule above contains one of these lowercase literals, and substring search
# is far cheaper than regexes, so most failed jobs' tails cost one lower() and these `in` tests.
_KEYWORDS = (
    "xid", "fallen off", "gpu is lost", "ecc", "double", "(dbe)", "uncorrectable memory", "nvlink", "remap",
    "node fail", "is unresponsive", "nodelost", "low on resource", "the node had condition", "connect to mom",
    "its node has died", "marked dead", "not ending with signals", "kill task failed", "nccl warn",
    "received errors while waiting", "exit barrier", "transport endpoint is not connected", "azure.core.exceptions",
    "connectfullmesh", "preempt", "spot", "imminent node shutdown",
    "stale", "errno 116", "estale", "no space left", "errno 28", "enospc", "errno 5]", "input/output error", "eio",
    "nfs: server", "endpoint url", "botocore.exceptions", ") when calling the ", "gcsfs.retry", "amazonaws.com",
    "storage.googleapis.com", "blob.core.windows.net", "watchdog", "before timing out", "failed or timed out",
    "got completion", "ibv_wc_", "ncclremoteerror", "remote process exited", "timed out waiting",
    "communicator was aborted", "ncclsystemerror", "unhandled system error", "ncclinternalerror",
    "please report this issue to the nccl", "diststoreerror", "socket timeout", "socket has timed out",
    "wait timeout after", "store based barrier", "connect() timed out", "rendezvoustimeouterror",
    "rendezvousconnectionerror", "c10d store has failed", "socket has failed to connect", "connect() to ",
    "connection reset by peer", "connection closed by", "connectionreseterror",
)

# Look-alikes: the job's own faults that share words with infrastructure failures (see the docs).
_LOOKALIKES = re.compile(
    r"device-side assert|Default process group has not been initialized|environment variable \w+ expected, but not set"
    r"|CUDA out of memory|CUDA error: out of memory|OutOfMemoryError|Cuda failure '?out of memory|Failed to CUDA calloc|\bncclInvalidUsage\b|\bncclInvalidArgument\b"
    r"|invalid (?:usage|argument) \(run with NCCL_DEBUG=WARN|mismatch between collectives|oom[-_ ]kill|OOMKilled"
    r"|Out of memory: Kill|Memory cgroup out of memory|^\s*Killed\s*$|insufficient shared memory|/dev/shm"
    r"|Error while creating shared memory segment", re.I | re.M)
_PROGRAM_EXCEPTION = re.compile(
    r"^\s*(?:\S+:\s+)?(?:[\w.]+\.)?(?:IndexError|KeyError|TypeError|ValueError|AttributeError|NameError"
    r"|ZeroDivisionError|AssertionError|ModuleNotFoundError|ImportError|SyntaxError|FileNotFoundError"
    r"|NotImplementedError|UnboundLocalError|RecursionError)\b(?::|$)", re.M)
# A DataLoader worker that died (usually killed for memory) shows as a reset socket in multiprocessing.
_WORKER_PIPE = re.compile(r"multiprocessing[/\\]|resource_sharer|DataLoader worker", re.I)
# /dev/shm full is a container's shared-memory size, the job's configuration (cpu_oom in the taxonomy).
_SHM_FILE = re.compile(r"/dev/shm|unable to write to file </torch_|shared memory", re.I)
# The kubelet evicts first the pods that use more than they requested and says so (eviction/helpers.go):
# "Container %s was using %s, request is %s, has larger consumption of %v." (older kubelets: "..., which
# exceeds its request of %s."). Memory beyond the request is the job's own sizing (cpu_oom).
_OVER_REQUEST = re.compile(r"which exceeds its request of|has larger consumption of", re.I)

# Scheduler states (Slurm sacct states; Kubernetes pod reasons and DisruptionTarget condition reasons).
_STATES: dict[str, tuple[str, str, float]] = {
    "NODE_FAIL": ("node_lost", "infra.state.node_fail", 0.97),
    "BOOT_FAIL": ("node_lost", "infra.state.boot_fail", 0.95),
    "NODELOST": ("node_lost", "infra.state.node_lost", 0.95),
    "DELETIONBYTAINTMANAGER": ("node_lost", "infra.state.node_not_ready", 0.9),
    "DELETIONBYPODGC": ("node_lost", "infra.state.node_gone", 0.9),
    "EVICTED": ("node_lost", "infra.state.evicted", 0.85),
    "TERMINATIONBYKUBELET": ("node_lost", "infra.state.kubelet_termination", 0.8),
    "PREEMPTED": ("preempted", "infra.state.preempted", 0.97),
    "PREEMPTIONBYSCHEDULER": ("preempted", "infra.state.preempted", 0.95),
    "PREEMPTIONBYKUBESCHEDULER": ("preempted", "infra.state.preempted", 0.95),
    "PREEMPTING": ("preempted", "infra.state.preempted", 0.9),
    "SHUTDOWN": ("preempted", "infra.state.node_shutdown", 0.85),
    "NODESHUTDOWN": ("preempted", "infra.state.node_shutdown", 0.85),
}


def _state(scheduler_state: str | None) -> tuple[str, str, float] | None:
    if not scheduler_state:
        return None
    key = re.split(r"[\s:(]", scheduler_state.strip(), maxsplit=1)[0].upper().replace("-", "_")
    return _STATES.get(key) or _STATES.get(key.replace("_", ""))


def _trie_pattern(words) -> re.Pattern:
    """A pattern that matches where any of `words` starts, built as a trie ("nccl", "nvlink" -> "n(?:ccl|vlink)")."""
    trie: dict = {}
    for word in words:
        node = trie
        for char in word:
            node = node.setdefault(char, {})
        node[""] = {}

    def alternatives(node: dict) -> str:
        branches = [re.escape(char) + alternatives(child) for char, child in sorted(node.items()) if char]
        if not branches:
            return ""
        group = branches[0] if len(branches) == 1 and "" not in node else "(?:" + "|".join(branches) + ")"
        return group + "?" if "" in node else group

    return re.compile(alternatives(trie))


@dataclass(frozen=True)
class InfraRules:
    """One released set of infrastructure rules. Released sets never change: a new rule is a new set with
    its own version, named by a new tagging config (configs.py), so stored findings keep their meaning."""
    version: str
    rules: list[tuple[str, str, float, re.Pattern]]
    keywords: tuple[str, ...]
    lookalikes: re.Pattern
    program_exception: re.Pattern
    syslog_hosts: bool = False          # version 6: any program's syslog record names its host (nodes.hosts_in)
    collector_hosts: bool = False       # version 7: hosts are read from the lines as the parser reads them, plus the
                                        # node a collector's prefix names on a failure line (nodes.prefix_hosts); the
                                        # evidence line is quoted without a launcher's rank prefix
    iso_syslog_hosts: bool = False      # version 9: ... and a syslog record with an RFC 3339 timestamp (journalctl's
                                        # short-iso, rsyslog's file format) names its host too
    failed_node_reports: bool = False   # version 10: ... and the reports that name a failed node in their own words (Ray's
                                        # dead node, Open MPI's "on node X exited on signal", NodeNotReady), and where
                                        # the scheduler placed the job (nodes.hosts_in)
    lost_daemon_hosts: bool = False     # version 13: ... and the node of the daemon Open MPI's launcher lost
    described_pod_node: bool = False    # version 14: ... and the node `kubectl describe pod` says the pod ran on
    named_server_hosts: bool = False    # version 16: ... and a server or node named by its name where only its address
                                        # was read (the NFS client's server, ssh's and pdsh's target)

    @functools.cached_property
    def keyword_pattern(self) -> re.Pattern:
        """Every keyword as one pattern, a trie of them (one character test per position, not one scan per keyword);
        none spans a line break."""
        return _trie_pattern(dict.fromkeys(self.keywords))

    def detect(self, lines: list[str], *, exit_code: int | None = None, signal: int | str | None = None,
               scheduler_state: str | None = None, host_lines: list[str] | None = None) -> InfraFinding | None:
        """The infrastructure failure that ended the job, or None when the evidence is absent or is a look-alike.

        `lines` is the log region (its end is read); exit_code and signal are the scheduler's; the state is
        Slurm's (NODE_FAIL, PREEMPTED...) or a Kubernetes reason (NodeLost, Evicted...). `host_lines` are the same
        lines as stored, where `lines` were rewritten for the parser (collectors.py): see _hosts for which are read.
        """
        offset = max(0, len(lines) - TAIL_LINES)
        tail = [line[:MAX_LINE_CHARS] for line in lines[offset:]]
        host_tail = tail if host_lines is None or host_lines is lines else [
            line[:MAX_LINE_CHARS] for line in host_lines[offset:]]
        text = "\n".join(tail)
        state = _state(scheduler_state)
        if state is not None:
            category, rule, confidence = state
            if rule == "infra.state.evicted" and (_OVER_REQUEST.search(text) or _OVER_REQUEST.search(scheduler_state)):
                return None
            hardware = self._best(tail, offset, host_tail) if category == "node_lost" else None
            if hardware is not None and hardware.category == "gpu_hardware":
                return hardware  # the node failed because its GPU did: the more precise answer
            return InfraFinding(category, confidence, rule, f"scheduler state {scheduler_state.strip()}", None,
                                tuple(self._hosts(tail, host_tail)))
        finding = self._best(tail, offset, host_tail)
        if finding is None:
            return None
        if finding.category in _ECHO_PRONE or finding.rule in _GUARDED_STORAGE_RULES:
            if self.lookalikes.search(text):
                return None
            if finding.category in _ECHO_PRONE and self.program_exception.search(text):
                return None  # another rank's own error; its peers' timeouts are the echo
            if finding.rule == "infra.connection_reset" and _WORKER_PIPE.search(text):
                return None
        if finding.rule == "infra.k8s_node_pressure_eviction" and _OVER_REQUEST.search(text):
            return None
        if finding.rule == "infra.disk_full" and _SHM_FILE.search(finding.evidence):
            return None
        return finding

    def hosts_in(self, lines: list[str]) -> list[str]:
        """The hosts these rules read in failure lines (nodes.hosts_in with this version's forms)."""
        return hosts_in(lines, syslog_hosts=self.syslog_hosts, iso_syslog_hosts=self.iso_syslog_hosts,
                        failed_node_reports=self.failed_node_reports, lost_daemon_hosts=self.lost_daemon_hosts,
                        described_pod_node=self.described_pod_node, named_server_hosts=self.named_server_hosts)

    def _hosts(self, tail: list[str], host_tail: list[str]) -> tuple[str, ...]:
        """Hosts of the failure lines. Before version 7, read in the lines as stored; from version 7, in the lines as
        the parser reads them (a json-file record's text, say), with the node a collector's prefix names."""
        if not self.collector_hosts:
            return tuple(self.hosts_in(host_tail))
        found = self.hosts_in(tail)
        for parsed, stored in zip(tail, host_tail) if host_tail is not tail else ():
            if parsed != stored and is_failure_line(parsed):
                found += [h for h in prefix_hosts(stored) if h not in found]
        return tuple(found)

    def _best(self, tail: list[str], offset: int, host_tail: list[str]) -> InfraFinding | None:
        """The highest-priority category found in the tail; within it the rule order, then the latest line."""
        text = "\n".join(tail)
        low = text.lower()
        starts = list(itertools.accumulate((len(line) + 1 for line in tail[:-1]), initial=0))
        candidates: set[int] = set()
        if len(low) == len(text):      # the lines that hold a keyword: one pass
            candidates.update(bisect.bisect_right(starts, m.start()) - 1 for m in self.keyword_pattern.finditer(low))
        else:                          # lowering changed a length ("İ"): the lines as the keywords' scans placed them
            for key in self.keywords:
                at = low.find(key)
                while at != -1:
                    line_index = bisect.bisect_right(starts, at) - 1
                    candidates.add(line_index)
                    at = low.find(key, starts[line_index + 1] if line_index + 1 < len(starts) else len(low))
        best, chosen = None, None  # key: (category rank, rule rank, -line index)
        for index in candidates:
            for rule_rank, rule, category, confidence in self._matches(tail[index], tail[index].lower()):
                key = (_PRIORITY.index(category), rule_rank, -index)
                if best is None or key < best:
                    best, chosen = key, (rule, category, confidence, index)
        if chosen is None:
            return None
        rule, category, confidence, index = chosen
        evidence = (strip_launcher_prefixes(tail[index]) if self.collector_hosts else tail[index]).strip()
        return InfraFinding(category, confidence, rule, evidence, offset + index,
                            tuple(self._hosts(tail, host_tail)))

    def _matches(self, line: str, low: str):
        if "xid" in low:
            for m in _XID.finditer(line):
                if int(m.group(1)) in HARDWARE_XIDS:
                    yield -1, f"infra.xid_{int(m.group(1))}", "gpu_hardware", 0.95
        for rule_rank, (rule, category, confidence, pattern) in enumerate(self.rules):
            if pattern.search(line):
                yield rule_rank, rule, category, confidence


INFRA_V1 = InfraRules("1", _RULES, _KEYWORDS, _LOOKALIKES, _PROGRAM_EXCEPTION)

# ------------------------------------------------------------------------------------------ version 2
# From the second development set (tests/fixtures/infra2, sampled with plain-language queries): texts the
# first rules did not know, each written from its producer's own wording, not from one sample.
_RULES_V2_ADDED: list[tuple[str, str, float, re.Pattern]] = [(rid, cat, conf, re.compile(p, re.I)) for rid, cat, conf, p in [
    # CUDA driver/runtime error 910 (CUDA_ERROR_CONTAINED / cudaErrorContained): "an exception occurred on the
    # device that is now contained by the GPU's error containment capability" (NVLink peer access, hardware).
    ("infra.cuda_error_contained", "gpu_hardware", 0.8, r"\bCUDA_ERROR_CONTAINED\b|\bcudaErrorContained\b"),
    # The node's NVSwitch fabric is not up: NCCL's NVLS bind failure text, and CUDA error 802
    # (cudaErrorSystemNotReady, "system not yet initialized": a driver daemon such as the Fabric Manager is down).
    ("infra.fabric_manager", "gpu_hardware", 0.8,
     r"error in the Fabric Manager or NVSwitches|\bcudaErrorSystemNotReady\b|CUDA_ERROR_SYSTEM_NOT_READY"
     r"|system not yet initialized"),
    # Ray: "The actor is dead because its node has died." (newer wording of the rule in version 1).
    ("infra.ray_node_died_v2", "node_lost", 0.85, r"\bis dead because its node has died"),
    # NCCL net_ib: "NET/IB : %s:%d Got async event : %s" with the verbs event (port error, device fatal error).
    ("infra.nccl_ib_async_event", "collective_communication", 0.8, r"NET/IB ?: ?(?:\S+ )?Got async event"),
    # ncclGetErrorString(ncclUnhandledCudaError): a CUDA call inside NCCL failed (driver, P2P/NVLink); low,
    # and a CUDA out-of-memory or device-side assert beside it keeps the program's own failure (look-alikes).
    ("infra.nccl_unhandled_cuda_error", "collective_communication", 0.6, r"\bunhandled cuda error\b|\bncclUnhandledCudaError\b"),
    # c10d socket.cpp: "waitForInput: socket %s timed out after %dms" (a peer or the store went silent).
    ("infra.c10d_socket_wait_timeout", "network_rendezvous", 0.75, r"waitForInput: socket .{0,300} timed out after"),
    # fsspec.exceptions.FSTimeoutError: a remote filesystem (S3, GCS, HTTP) call timed out.
    ("infra.fsspec_timeout", "storage", 0.8, r"\bFSTimeoutError\b"),
    # torch.save's writer (caffe2/serialize/inline_container.cc): "PytorchStreamWriter failed writing file
    # ...: file write failed", a short fwrite: the disk filled or the mount failed under the job.
    ("infra.checkpoint_write_failed", "storage", 0.7, r"PytorchStreamWriter failed writing file .{0,200}file write failed"),
]]
_KEYWORDS_V2 = _KEYWORDS + ("cuda_error_contained", "cudaerrorcontained", "fabric manager", "systemnotready",
                            "system_not_ready", "system not yet initialized", "because its node", "got async event",
                            "unhandled cuda error", "ncclunhandledcudaerror", "waitforinput", "fstimeouterror",
                            "file write failed")
INFRA_V2 = InfraRules("2", _RULES + _RULES_V2_ADDED, _KEYWORDS_V2, _LOOKALIKES, _PROGRAM_EXCEPTION)

detect = INFRA_V1.detect  # the first released set; a tagging config names the set it uses

# ------------------------------------------------------------------------------------------ version 3
# From the third development set (tests/fixtures/infra3, plain-language queries, 2026-11-25), each rule from its
# producer's wording.
_RULES_V3_ADDED: list[tuple[str, str, float, re.Pattern]] = [(rid, cat, conf, re.compile(p, re.I)) for rid, cat, conf, p in [
    # errno 122 EDQUOT, "Disk quota exceeded" (strerror): the volume's quota is used up, as a full disk is (errno 28).
    ("infra.disk_quota", "storage", 0.85, r"\[Errno 122\]|Disk quota exceeded|\bEDQUOT\b"),
    # nvidia-smi when the driver has lost a GPU: "Unable to determine the device handle for GPU 0000:81:00.0: Unknown
    # Error" / "...: GPU is lost", and "GPU is lost. Reboot the system to recover this GPU".
    ("infra.nvidia_smi_gpu_lost", "gpu_hardware", 0.85,
     r"Unable to determine the device handle for GPU [\w:.]+: (?:Unknown Error|GPU is lost)|\bGPU is lost\b"),
    # Slurm's reason for a node that rebooted under its jobs (slurmctld: "Node unexpectedly rebooted").
    ("infra.slurm_node_rebooted", "node_lost", 0.9, r"\bNode unexpectedly rebooted\b"),
    # NCCL's socket transport (net_socket / socket.cc): "Net : Call to recv from 10.0.0.2<56843> failed : Connection
    # refused": a peer's connection went away during a collective.
    ("infra.nccl_socket_call_failed", "collective_communication", 0.7, r"\bNet ?: ?Call to \w+ from \S+ failed ?:"),
]]
_KEYWORDS_V3 = _KEYWORDS_V2 + ("errno 122", "disk quota exceeded", "edquot", "device handle for gpu", "gpu is lost",
                               "unexpectedly rebooted", "call to ")
INFRA_V3 = InfraRules("3", _RULES + _RULES_V2_ADDED + _RULES_V3_ADDED, _KEYWORDS_V3, _LOOKALIKES, _PROGRAM_EXCEPTION)

# ------------------------------------------------------------------------------------------ version 4
# From the fourth development set (tests/fixtures/infra4, plain-language queries, 2026-11-25), each rule from its
# producer's wording.
_RULES_V4_ADDED: list[tuple[str, str, float, re.Pattern]] = [(rid, cat, conf, re.compile(p, re.I)) for rid, cat, conf, p in [
    # srun when slurmd on a node refuses or cannot start the step's tasks (src/api/step_launch.c: "Task launch for
    # %ps failed on node %s: %s": an expired or invalid credential after a reboot, a failed prolog, a lost
    # connection): the node cannot run the job, whatever the program.
    ("infra.slurm_task_launch_failed", "node_lost", 0.75, r"\bTask launch for \S+ failed on node \S+:"),
    # TensorFlow's TPU ShutdownHook (tpu/session_support.py) when workers stop answering heartbeats: "ShutdownHook:
    # lame workers found: ..." (a preempted or dead TPU host); the hook checkpoints and stops for a restart.
    ("infra.tf_lame_workers", "node_lost", 0.75, r"\bShutdownHook: lame workers found\b"),
]]
_KEYWORDS_V4 = _KEYWORDS_V3 + ("task launch for", "lame workers")
INFRA_V4 = InfraRules("4", _RULES + _RULES_V2_ADDED + _RULES_V3_ADDED + _RULES_V4_ADDED, _KEYWORDS_V4, _LOOKALIKES,
                      _PROGRAM_EXCEPTION)

# ------------------------------------------------------------------------------------------ version 5
# From the fifth development set (tests/fixtures/infra5, 2026-11-25), each rule from its producer's wording.
_RULES_V5_ADDED: list[tuple[str, str, float, re.Pattern]] = [(rid, cat, conf, re.compile(p, re.I)) for rid, cat, conf, p in [
    # The NVIDIA driver's status NV_ERR_RESET_REQUIRED ("NVRM: ... Assertion failed: Reset required
    # [NV_ERR_RESET_REQUIRED]"): the GPU must be reset before it can run anything again.
    ("infra.nvrm_reset_required", "gpu_hardware", 0.85, r"\bNV_ERR_RESET_REQUIRED\b"),
    # Grid Engine's accounting (qacct -j: "failed 25 : rescheduling"): the job was taken off its host and queued
    # again, as when the host goes down or is removed from the cluster.
    ("infra.sge_rescheduled", "node_lost", 0.6, r"^\s*failed\s+25\s*:\s*rescheduling\b"),
]]
_KEYWORDS_V5 = _KEYWORDS_V4 + ("nv_err_reset_required", "rescheduling")
INFRA_V5 = InfraRules("5", _RULES + _RULES_V2_ADDED + _RULES_V3_ADDED + _RULES_V4_ADDED + _RULES_V5_ADDED, _KEYWORDS_V5,
                      _LOOKALIKES, _PROGRAM_EXCEPTION)

# ------------------------------------------------------------------------------------------ version 6
# From the sixth development set (tests/fixtures/infra6, 2026-11-28), each rule from its producer's wording.
_RULES_V6_ADDED: list[tuple[str, str, float, re.Pattern]] = [(rid, cat, conf, re.compile(p, re.I)) for rid, cat, conf, p in [
    # A cloud's notice that it is taking the VM back, as Taskcluster's worker-runner logs GCE's metadata server
    # ("GCP Metadata Service says termination is imminent") and as AWS words a spot "instance-action" notice.
    ("infra.termination_imminent", "preempted", 0.8, r"\btermination is imminent\b|\binstance-action\b.{0,40}\bterminate\b"),
]]
_KEYWORDS_V6 = _KEYWORDS_V5 + ("imminent", "instance-action")
INFRA_V6 = InfraRules("6", _RULES + _RULES_V2_ADDED + _RULES_V3_ADDED + _RULES_V4_ADDED + _RULES_V5_ADDED + _RULES_V6_ADDED,
                      _KEYWORDS_V6, _LOOKALIKES, _PROGRAM_EXCEPTION, syslog_hosts=True)
# Version 7 (tagging:2026-11k): the same rules. Hosts are read in the lines as the parser reads them, plus the node a
# collector's prefix names on a failure line; the evidence is quoted without a launcher's rank prefix (one reason,
# one cluster, whichever launcher ran the job).
INFRA_V7 = replace(INFRA_V6, version="7", collector_hosts=True)

# ------------------------------------------------------------------------------------------ version 8
# From the producers' sources (tagging:2026-11m): message templates read in PyTorch c10d, NCCL, Slurm, Kubernetes and
# the storage clients (tests/fixtures/infra_templates, 155 templates, each with the file it was read in), for texts the
# development sets had not shown. Version 7's reading of hosts and evidence is kept.
_RULES_V8_ADDED: list[tuple[str, str, float, re.Pattern]] = [(rid, cat, conf, re.compile(p, re.I)) for rid, cat, conf, p in [
    # ProcessGroupNCCL's watchdog as it takes the process down after a failed or timed-out collective.
    ("infra.nccl_watchdog_takedown", "collective_communication", 0.75,
     r"failure detected by watchdog at work sequence id|To avoid data inconsistency, we are taking the entire process"
     r" down"),
    # NCCL net_ib: "NET/IB : %s:%d async fatal event: %s" (the HCA itself failed).
    ("infra.nccl_ib_fatal_event", "collective_communication", 0.85, r"NET/IB ?: ?\S+ async fatal event"),
    # NCCL misc/socket.cc and proxy.cc: a connect that did not complete, a proxy that lost its peer rank.
    ("infra.nccl_socket_poll_connect", "collective_communication", 0.6,
     r"NCCL WARN.{0,80}(?:socketPollConnect: Connect to \S+ returned|Could not receive type from localRank)"),
    # c10d (Utils.hpp): "Failed to recv, got 0 bytes. Connection was likely closed. Did the remote server shutdown
    # or crash?" (the store's or a peer's end of the socket went away); not in the watchdog's warning "Failed to
    # check the signal ... on TCPStore, ...", which rank 0's exit prints on the others at any shutdown.
    ("infra.c10d_recv_closed", "network_rendezvous", 0.75,
     r"^(?!.*Failed to check the\b).*Failed to recv, got 0 bytes\. Connection was likely closed"),
    # Slurm: libslurm's "Unable to contact slurm controller" (the control plane is down or unreachable), and the job
    # states NODE_FAIL / BOOT_FAIL / PREEMPTED as sacct and squeue print them (upper case only).
    ("infra.slurm_controller_unreachable", "node_lost", 0.65, r"Unable to contact slurm controller"),
    ("infra.slurm_state_node_fail", "node_lost", 0.8, r"(?-i:\b(?:NODE_FAIL|BOOT_FAIL)\b)"),
    ("infra.slurm_state_preempted", "preempted", 0.8, r"(?-i:\bPREEMPTED\b)"),
    # Kubernetes: the taint manager and the pod garbage collector deleting a node's pods, the scheduler's
    # preemption ("Preempted by pod %s on node %s", "preempting to accommodate a higher priority pod"), and the
    # kubelet's graceful node shutdown ("Pod was rejected as the node is shutting down").
    ("infra.k8s_node_gone", "node_lost", 0.8,
     r"Taint manager: deleting|\bDeletionByTaintManager\b|PodGC: node no longer exists|\bDeletionByPodGC\b"),
    ("infra.k8s_preempted", "preempted", 0.85,
     r"\bPreempted by (?:pod )?\S+ on node\b|preempting to accommodate a higher priority pod"
     r"|\bPreemptionByScheduler\b"),
    ("infra.k8s_node_shutdown", "preempted", 0.8, r"\bthe node is shutting down\b|\bNodeShutdown\b"),
    # Storage clients: botocore's ResponseStreamingError (the object's stream broke mid-read), gcsfs's "_call out of
    # retries on exception", google-api-core's 5xx exceptions and RetryError, a 5xx or a read timeout from an object
    # store or the Hugging Face Hub (requests / urllib3 "HTTPSConnectionPool(host=...): Read timed out").
    ("infra.object_store_unavailable", "storage", 0.75,
     r"botocore\.exceptions\.ResponseStreamingError|_call out of retries on exception"
     r"|google\.api_core\.exceptions\.(?:ServiceUnavailable|InternalServerError|BadGateway|GatewayTimeout)\b"
     r"|RetryError: Timeout of [\d.]+s exceeded, last exception: 50[0234]\b"
     r"|\b50[0234] (?:Server Error|GET|POST|PUT|PATCH)\b.{0,200}(?:huggingface\.co|hf\.co|storage\.googleapis\.com"
     r"|amazonaws\.com|blob\.core\.windows\.net)"
     r"|host='(?:[\w-]+\.)*(?:huggingface\.co|hf\.co)', port=\d+\): Read timed out"),
]]
_KEYWORDS_V8 = _KEYWORDS_V6 + ("failure detected by watchdog", "entire process down", "async fatal event",
                               "socketpollconnect", "could not receive type", "got 0 bytes", "slurm controller",
                               "node_fail", "boot_fail", "taint manager", "deletionbytaintmanager", "podgc",
                               "deletionbypodgc", "preempt", "shutting down", "nodeshutdown", "responsestreamingerror",
                               "out of retries", "api_core.exceptions", "retryerror", "server error", "huggingface.co",
                               "hf.co")
INFRA_V8 = replace(INFRA_V7, version="8", rules=INFRA_V7.rules + _RULES_V8_ADDED, keywords=_KEYWORDS_V8)
# Version 9 (tagging:2026-11t): the same rules; a node's syslog record with an RFC 3339 timestamp names its host.
INFRA_V9 = replace(INFRA_V8, version="9", iso_syslog_hosts=True)


# ------------------------------------------------------------------------------------------ version 10
# Version 10 (tagging:2026-11u), from the producers' sources, not from any log we hold: a pod's node that stopped
# answering, as the Kubernetes node lifecycle controller records it on the pod and on the node (reason NodeNotReady:
# "Node is not ready", "Node %s status is now: NodeNotReady"); and the hosts of the reports that name a failed node in
# their own words, and of the lines where a scheduler placed the job (nodes.hosts_in, failed_node_reports).
_RULES_V10_ADDED: list[tuple[str, str, float, re.Pattern]] = [
    ("infra.k8s_node_not_ready", "node_lost", 0.8, re.compile(r"\bNodeNotReady\b")),
]
INFRA_V10 = replace(INFRA_V9, version="10", rules=INFRA_V9.rules + _RULES_V10_ADDED,
                    keywords=INFRA_V9.keywords + ("nodenotready",), failed_node_reports=True)
# Version 11 (tagging:2026-11v): EREMOTEIO in glibc's words ("[Errno 121] Remote I/O error"), the I/O error a remote
# or network block store returns, read as version 1 reads EIO ("[Errno 5] Input/output error"): storage, retry once it
# recovers, with the same look-alike guard.
INFRA_V11 = replace(INFRA_V10, version="11",
                    rules=INFRA_V10.rules + [("infra.remote_io_error", "storage", 0.8,
                                              re.compile(r"\[Errno 121\]|\bRemote I/O error\b|\bEREMOTEIO\b", re.I))],
                    keywords=INFRA_V10.keywords + ("errno 121", "remote i/o error", "eremoteio"))
# Version 12 (tagging:2026-11w), from NVIDIA's own texts, for a node whose GPUs cannot be used: an NVSwitch's fatal
# error as the driver logs it ("nvidia-nvswitch%d: SXid (PCI:%s): %05d, Fatal, ...", the Fabric Manager user guide's
# SXid catalogue; "Non-fatal" ones are not failures); the kernel module and the user-space driver of different versions
# after an upgrade without a reboot (nvidia-smi's "Failed to initialize NVML: Driver/library version mismatch",
# nvidia-container-cli's "nvml error: driver/library version mismatch", NVML's "NVML/RM version mismatch"); nvidia-smi
# unable to reach a GPU that stopped answering ("Unable to determine the device handle for GPU%s: Unknown Error").
# All retry on other nodes.
_RULES_V12_ADDED: list[tuple[str, str, float, re.Pattern]] = [(rid, cat, conf, re.compile(p, re.I)) for rid, cat, conf, p in [
    ("infra.nvswitch_fatal_sxid", "gpu_hardware", 0.85, r"\bSXid \(PCI:[0-9A-Fa-f:.]+\): \d+, Fatal\b"),
    ("infra.gpu_device_handle_lost", "gpu_hardware", 0.8,
     r"\bUnable to determine the device handle for GPU ?[0-9A-Fa-f:.]*: Unknown Error\b"),
    ("infra.nvml_driver_mismatch", "gpu_hardware", 0.7, r"\bDriver/library version mismatch\b|\bNVML/RM version mismatch\b"),
]]
INFRA_V12 = replace(INFRA_V11, version="12", rules=INFRA_V11.rules + _RULES_V12_ADDED,
                    keywords=INFRA_V11.keywords + ("sxid", "device handle", "version mismatch"))

# Version 13 (tagging:2026-11x), from the producers' own texts, none from a log we hold:
# - PyTorch's ProcessGroupNCCL heartbeat monitor, when the watchdog itself stopped making progress ("Heartbeat monitor
#   timed out! Process will be terminated after dumping debug info."), which version 8 read only in its exit message
#   ("ProcessGroupNCCL's watchdog got stuck for N seconds"): a collective that hangs, as a watchdog timeout is;
# - Open MPI's and PRRTE's launcher losing a node's daemon ("ORTE has lost communication with a remote daemon.",
#   help-errmgr-base.txt: "usually due to either a failure of the TCP network connection to the node, or possibly an
#   internal failure of the daemon itself"), with the lost daemon's node named below it (nodes.hosts_in);
# - Ray's NodeDiedError ("Indicates that the node is either dead or unreachable", ray/exceptions.py).
_RULES_V13_ADDED: list[tuple[str, str, float, re.Pattern]] = [(rid, cat, conf, re.compile(p, re.I)) for rid, cat, conf, p in [
    ("infra.nccl_heartbeat_timeout", "collective_communication", 0.75, r"\bHeartbeat monitor timed out!"),
    ("infra.mpi_daemon_lost", "node_lost", 0.7, r"\b(?:ORTE|PRTE) has lost communication with a remote daemon\b"),
    ("infra.ray_node_died_error", "node_lost", 0.8, r"\bNodeDiedError\b"),
]]
INFRA_V13 = replace(INFRA_V12, version="13", rules=INFRA_V12.rules + _RULES_V13_ADDED,
                    keywords=INFRA_V12.keywords + ("heartbeat monitor", "lost communication", "nodediederror"),
                    lost_daemon_hosts=True)
# Version 14 (tagging:2026-11z): the same rules; the node a `kubectl describe pod` names ("Node:  gpu-node-07/10.1.2.7",
# the pod's node name and host IP) is where the pod ran, as kube-scheduler's "Successfully assigned" event is.
INFRA_V14 = replace(INFRA_V13, version="14", described_pod_node=True)


# ------------------------------------------------------------------------------------------ version 15
# Version 15 (tagging:2026-11za), from a second round of producers' templates (tests/fixtures/infra_templates:
# amd_gaudi.tsv, fabric_storage.tsv, cluster_ops.tsv), each rule from its producer's source, none from a log we hold:
# accelerators other than NVIDIA's, interconnects and file systems beyond NCCL and the object stores, and the cluster
# software around a job.
_RULES_V15_ADDED: list[tuple[str, str, float, re.Pattern]] = [(rid, cat, conf, re.compile(p, re.I)) for rid, cat, conf, p in [
    # AMD: ROCr's memory fault with an ECC reason and its hardware exceptions (runtime.cpp), the amdgpu driver's ring
    # timeouts, resets, lost VRAM, a device lost from the bus, RAS uncorrectable errors and retired-page threshold
    # (amdgpu_job.c, amdgpu_device.c, amdgpu_ras.c, amdgpu_ras_eeprom.c), rocm-smi without its driver.
    ("infra.amd_gpu_fault", "gpu_hardware", 0.85,
     r"\bReason: (?:DRAM|SRAM) ECC failure\b|\bHW Exception by GPU node-\d+ .{0,80}reason ?:(?:ECC|GPU Hang)"
     r"|\bamdgpu: ring \S+ timeout\b|\bamdgpu: GPU reset(?:\(\d+\))? (?:begin|failed|succeeded)"
     r"|\bVRAM is lost due to GPU reset\b|\bamdgpu: device lost from bus\b"
     r"|\bamdgpu: \{\d+\}(?:\d+ )?uncorrectable hardware errors?\b.{0,80}\bdetected\b"
     r"|\bSaved bad pages \d+ reaches threshold value\b|\bDriver not initialized \(amdgpu not found in modules\)"),
    # Intel Gaudi: the habanalabs driver's heartbeat loss, reset, the SIGKILL it sends before one, a device left
    # unusable, an ECC error (device.c).
    ("infra.gaudi_device_fault", "gpu_hardware", 0.85,
     r"\bhabanalabs \S+: (?:Device heartbeat failed|Going to reset device|Killing user process pid=\d+"
     r"|.{0,40}Failed to reset! Device is NOT usable|ECC error detected)"),
    # NVIDIA's device plugin short of healthy GPUs at admission (kubelet: "Allocate failed due to requested number of
    # devices unavailable for nvidia.com/gpu"), DCGM's NVLink health ("GPU 4's NvLink link 11 is currently down").
    ("infra.gpu_unhealthy_at_admission", "gpu_hardware", 0.6,
     r"Allocate failed due to requested number of devices unavailable for nvidia\.com/gpu"),
    ("infra.dcgm_nvlink_down", "gpu_hardware", 0.85, r"\bGPU \d+'s NvLink link \d+ is currently down\b"),
    # Preemption by the schedulers on Kubernetes and the clouds: Kueue ("Preempted to accommodate a workload"),
    # Volcano ("Pod is evicted, because of preempt"), AWS's node termination handler ("Spot ITN received"),
    # SkyPilot's managed jobs ("Cluster is preempted or failed", "The cluster is preempted before the job is
    # submitted").
    ("infra.scheduler_preempted", "preempted", 0.8,
     r"\bPreempted to accommodate a workload\b|\bPod is evicted, because of preempt\b|\bSpot ITN received\b"
     r"|\bCluster is preempted or failed\b|\bThe cluster is preempted before the job is submitted\b"),
    # KubeRay when the head pod is gone ("Ray head pod not found.").
    ("infra.ray_head_pod_lost", "node_lost", 0.6, r"\bRay head pod not found\b"),
    # Gaudi's collective library: the coordinator, its connection and rendezvous (hlcp_server.cpp, hlcp_client.cpp),
    # and the first handshake between ranks (hccl_communicator.cpp).
    ("infra.hccl_rendezvous", "network_rendezvous", 0.7,
     r"Creating coordinator server \(\S+\) failed|\bConnect to server ended with timeout\. ip \S+"
     r"|\btimeout \(comm: \d+ +rendezvous\) expired while waiting for\b"),
    ("infra.hccl_handshake", "collective_communication", 0.75, r"\bHandshake1 with remote ranks failed\b"),
    # The fabric under NCCL: aws-ofi-nccl's failed completions on EFA ("NCCL WARN NET/OFI Request 0x... (send)
    # completed with error"), UCX's InfiniBand transport errors (ib_mlx5_log.c, ucp_ep.c), the mlx5 driver's health
    # poll, a bad cable and a link down (health.c, events.c, en_main.c).
    ("infra.fabric_error", "collective_communication", 0.75,
     r"\bNET/OFI Request \S+ \(\w+\) completed with error\b"
     r"|\bUCX +ERROR (?:Transport retry count exceeded|Remote access error)\b|\bUCX +ERROR .{0,120}'Endpoint timeout'"
     r"|\bmlx5_core \S+: poll_health.{0,40}device's health compromised\b"
     r"|\bmlx5_core \S+: Port module event\[error\].{0,80}\bCable error\b|\bmlx5_core \S+ \S+: Link down\b"),
    # File systems and data mounts: a Lustre client's lost connection, eviction, slow-reply timeout, failed
    # operation or discarded dirty pages (import.c, client.c, llite_lib.c); ESHUTDOWN on a path (a Lustre or network
    # mount that evicted the client, as ENOTCONN on a path is a FUSE mount gone); Mountpoint for S3's I/O error;
    # blobfuse2's failed download; JuiceFS's failed reads, uploads and metadata sessions; the CephFS kernel client's
    # stale caps, blocklisted session and lost monitor (mds_client.c, mon_client.c); GPFS forcing a file system off.
    ("infra.filesystem_client_error", "storage", 0.75,
     r"\bLustre(?:Error)?: .{0,200}(?:Connection to \S+ \(at \S+\) was lost|This client was evicted by"
     r"|Request sent has timed out for slow reply|operation \w+ to node \S+ failed: rc = -\d+|dirty page discard)"
     r"|Cannot send after transport endpoint shutdown: ['\"]?/|\bfuser::request: \w+ failed with errno 5: "
     r"|\bblobfuse2\[\d+\] : .{0,200}LOG_ERR .{0,200}Failed to download blob"
     r"|\bjuicefs\[\d+\] <(?:WARNING|ERROR)>: (?:fail to read sliceId|upload inode: \d+ .{0,80}\bfail\b|Refresh session \d+: )"
     r"|\bceph: .{0,80}(?:caps stale|session blocklisted)|\blibceph: mon\d+ .{0,60}session lost"
     r"|\bThe file system \S+ was forced to unmount\b"),
]]
_KEYWORDS_V15 = ("ecc failure", "hw exception", "amdgpu", "vram is lost", "bad pages", "habanalabs",
                 "devices unavailable", "nvlink link", "preempted to accommodate", "because of preempt", "spot itn",
                 "preempted or failed", "cluster is preempted", "head pod not found", "coordinator server",
                 "connect to server ended", "rendezvous) expired", "handshake1", "net/ofi", "ucx", "mlx5_core",
                 "lustre", "transport endpoint shutdown", "fuser::request", "blobfuse2", "juicefs", "ceph:",
                 "libceph", "forced to unmount")
# Ray's NodeDiedError explains itself with "This can happen if the node was preempted, had a hardware failure, or its
# raylet crashed": a possibility, which version 1's death-cause rule ("node was preempted") read as the cause.
_RAY_PREEMPTED_V15 = re.compile(r"(?<!\bif the )\bnode was preempted\b", re.I)
INFRA_V15 = replace(INFRA_V14, version="15",
                    rules=[(rid, cat, conf, _RAY_PREEMPTED_V15 if rid == "infra.ray_node_preempted" else pattern)
                           for rid, cat, conf, pattern in INFRA_V14.rules] + _RULES_V15_ADDED,
                    keywords=INFRA_V14.keywords + _KEYWORDS_V15)


# ------------------------------------------------------------------------------------------ version 16
# Version 16 (tagging:2026-11zd): the launchers that reach a job's nodes over ssh (DeepSpeed's multi-node runner through
# pdsh, mpirun's rsh agent, the MPI operator's launcher) and the node they could not reach. OpenSSH's client says
# "ssh: connect to host %s port %s: %s" with strerror (sshconnect.c); a node that does not answer (timed out, no route,
# host down, network unreachable) or refuses (no sshd) is the node's failure, to retry without it. What a user's set-up
# causes says otherwise and stays the program's: "Could not resolve hostname" (a wrong host file), "Permission denied
# (publickey)", "Host key verification failed". From the producers' sources (tests/fixtures/infra_templates/
# launchers.tsv), none from a log we hold.
_RULES_V16_ADDED: list[tuple[str, str, float, re.Pattern]] = [(rid, cat, conf, re.compile(p, re.I)) for rid, cat, conf, p in [
    ("infra.ssh_node_unreachable", "node_lost", 0.7,
     r"\bssh: connect to host \S+ port \d+: (?:Connection timed out|No route to host|Host is down"
     r"|Network is unreachable|Connection refused)\b"),
]]
INFRA_V16 = replace(INFRA_V15, version="16", rules=INFRA_V15.rules + _RULES_V16_ADDED,
                    keywords=INFRA_V15.keywords + ("ssh: connect to host",), named_server_hosts=True)
