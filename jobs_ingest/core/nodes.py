"""Node names: Slurm hostlists expanded, and the hosts a failure text names (see docs/infrastructure.md).

Pure functions, no Django. A platform team wants to know which node is bad, so hosts come from the
scheduler's metadata (expand_nodelist) and from the lines that report the failure (hosts_in).
"""
from __future__ import annotations

import ipaddress
import re

# A nodelist such as "gpu[000-999],cpu[0-99]" must not blow up memory: refuse beyond this many names.
MAX_NODES = 65536


def expand_nodelist(nodelist: str, *, limit: int = MAX_NODES) -> list[str]:
    """Slurm hostlist syntax to names: "gpu[01-03,07],cpu5" -> gpu01, gpu02, gpu03, gpu07, cpu5.

    Zero padding follows the range's first bound (Slurm's rule); several bracket groups in one name
    ("rack[1-2]-gpu[1-2]") give their product. Order is kept, duplicates dropped. Malformed input
    (unbalanced brackets, a reversed or non-numeric range) or more than `limit` names raise ValueError.
    """
    names: list[str] = []
    seen: set[str] = set()
    for item in _split_top_level((nodelist or "").strip()):
        for name in _expand_item(item, limit):
            if name not in seen:
                seen.add(name)
                names.append(name)
                if len(names) > limit:
                    raise ValueError(f"nodelist expands to more than {limit} names")
    return names


def _split_top_level(text: str) -> list[str]:
    items, depth, start = [], 0, 0
    for i, ch in enumerate(text):
        if ch == "[":
            depth += 1
            if depth > 1:
                raise ValueError(f"nested brackets in nodelist: {text!r}")
        elif ch == "]":
            depth -= 1
            if depth < 0:
                raise ValueError(f"unbalanced ']' in nodelist: {text!r}")
        elif ch in ", " and depth == 0:  # scontrol prints commas; some tools separate with spaces
            items.append(text[start:i])
            start = i + 1
    if depth:
        raise ValueError(f"unbalanced '[' in nodelist: {text!r}")
    items.append(text[start:])
    return [item for item in (s.strip() for s in items) if item]


def _expand_item(item: str, limit: int) -> list[str]:
    parts = re.split(r"\[([^\]]*)\]", item)  # even indexes: literal text; odd: range lists
    names = [parts[0]]
    for index in range(1, len(parts), 2):
        choices = _range_list(parts[index], item, limit)
        if len(names) * len(choices) > limit:
            raise ValueError(f"nodelist expands to more than {limit} names: {item!r}")
        names = [name + choice + parts[index + 1] for name in names for choice in choices]
    return names


def _range_list(spec: str, item: str, limit: int) -> list[str]:
    out: list[str] = []
    for piece in (p.strip() for p in spec.split(",")):
        m = re.fullmatch(r"(\d+)(?:-(\d+))?", piece)
        if not m:
            raise ValueError(f"bad range {piece!r} in nodelist item {item!r}")
        first, last = m.group(1), m.group(2) or m.group(1)
        lo, hi = int(first), int(last)
        if hi < lo:
            raise ValueError(f"reversed range {piece!r} in nodelist item {item!r}")
        if len(out) + hi - lo + 1 > limit:
            raise ValueError(f"nodelist expands to more than {limit} names: {item!r}")
        width = len(first)
        out.extend(str(n).zfill(width) for n in range(lo, hi + 1))
    return out


# --- Hosts named in failure text ---------------------------------------------------------------

_HOST = r"[A-Za-z0-9](?:[A-Za-z0-9-]{0,62})(?:\.[A-Za-z0-9-]{1,63})*"
# Each pattern's group 1 is a host (name or address). Sources: NCCL's log prefix "%s:%d:%d [%d]"
# (hostname:pid:tid [cudaDev], src/debug.cc) and its socket addresses "10.0.0.1<port>"
# (ncclSocketToString); Slurm's slurmstepd "*** JOB n ON host CANCELLED ..." and srun's
# "srun: error: host: task n: ..." / "Node failure on host"; torchrun's ChildFailedError summary
# "host : name", srun's "Task launch for n.0 failed on node host: ..."; c10d socket.cpp "(host, port)" and "[host]:port"; Kubernetes' NodeLost message
# "Node %v which was running pod %v is unresponsive"; syslog "Mon dd hh:mm:ss host kernel: ...".
_NAMED = [re.compile(p) for p in [
    r"(?:^|[\s\]>|])(" + _HOST + r"):\d+:\d+ \[\d+\] (?:\S+ )?NCCL\b",
    r"\b(?:peer|from|to) (" + _HOST + r")<\d+>",
    r"\*\*\* (?:JOB|STEP) [\w.+]+ (?:STEPD TERMINATED )?ON (" + _HOST + r") (?:CANCELLED|AT)\b",
    r"srun: error: (" + _HOST + r"): tasks? [\d,-]+:",
    r"\bTask launch for \S+ failed on node (" + _HOST + r"):",   # srun (src/api/step_launch.c)
    # Ray prefixes a worker's output with "(RayTrainWorker pid=6420, ip=10.0.0.3)".
    r"^\((?:\w+ )?pid=\d+, ip=([0-9A-Fa-f:.]+|" + _HOST + r")\)",
    r"\b[Nn]ode failure on (" + _HOST + r")",
    r"^\s*(?:\[\w+\]:)?\s*host\s*:\s*(" + _HOST + r")\s*$",
    r"\((" + _HOST + r"), \d{1,5}\)",
    r"\[(" + _HOST + r"|[0-9A-Fa-f:.]+)\]:\d{1,5}\b",
    r"\bNode (" + _HOST + r") which was running pod",
    # torch.distributed.elastic names a rendezvous participant "hostname_pid_localid".
    r"\bThe node '(" + _HOST + r")_\d+_\d+'",
    r"^\w{3} +\d{1,2} \d\d:\d\d:\d\d (" + _HOST + r") kernel:",
    # Open MPI's per-process prefix "[%s:%05d]" (opal/util/stacktrace.c: "[host:pid] *** Process received signal ***").
    r"^\[(" + _HOST + r"):\d+\] ",
    # pdsh's prefix on every line of a remote command's output, "%s: %s" (DeepSpeed's multi-node runner launches
    # through pdsh: "node2: Net : Call to recv ... failed"): a lower-case name with a digit, not a device or a rank.
    r"^(?!(?:gpu|cuda|rank|device|dev|local_?rank)\d+:)([a-z][a-z0-9-]*\d[a-z0-9-]*(?:\.[a-z0-9-]+)*): (?=\S)",
]]
# Any program's syslog record ("Dec 17 16:03:58Z <host> start-worker ...", "Mon dd hh:mm:ss host prog[pid]: ..."): the
# field after the timestamp is the host that logged it, read only on a failure line (infrastructure rules >= 6).
_SYSLOG_ANY = re.compile(r"^\w{3} +\d{1,2} \d\d:\d\d:\d\dZ? (" + _HOST + r") [\w./-]+(?:\[\d+\])?:? ")
# The same record with an RFC 3339 timestamp, as `journalctl -o short-iso` / `short-iso-precise` and rsyslog's
# RSYSLOG_FileFormat write it ("2024-05-02T11:00:00+0000 dgx-07 kernel: NVRM: Xid ..."): read with infrastructure
# rules >= 9. The 'T' and the zone are required: a program's logging line ("2024-05-02 11:00:00,123 INFO root: ...")
# has neither, and its level is no host.
_SYSLOG_ISO = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:[.,]\d+)?(?:Z|[+-]\d\d:?\d\d) (" + _HOST
                         + r") [\w./-]+(?:\[\d+\])?: ")
# The node a collector's line prefix names (read with infrastructure rules >= 7, where the parser reads the line
# without it): SageMaker's Open MPI tag "[1,mpirank:3,algo-2]<stderr>:", Ray's "(RayTrainWorker pid=12, ip=10.0.0.5)"
# or "(raylet, ip=10.0.0.5)", pdsh's "node2: ". A pod's name (kubectl --prefix) is no node.
# pdsh's "%s: %s" as collectors.py reads it: a lower-case host name with a digit (not a device, rank or counter).
PDSH_PREFIX = (r"^(?!(?:gpu|cuda|rank|device|dev|local_?rank|epoch|step|iter)\d+:)"
               r"([a-z][a-z0-9-]*\d[a-z0-9-]*(?:\.[a-z0-9-]+)*):(?: |$)")
_PREFIX_HOST = re.compile(r"^\[\d+,mpirank:\d+,(" + _HOST + r")\]<(?:stdout|stderr)>:"
                          r"|^\([^()]*\bip=([0-9A-Fa-f:.]+|" + _HOST + r")\) |" + PDSH_PREFIX)
# Where a scheduler records the nodes it gave the job, on any line: slurmctld "Allocate JobId=n
# NodeList=gpu[01-02]", PBS "Exec host: gpu-2-17/11" (qstat's exec_host), Kubernetes "nodeName: n", Grid Engine's
# accounting record "hostname   n" (qacct -j).
_ASSIGNED = re.compile(r"\bNodeList=(\S+)|\bExec[ _]host\s*[:=]\s*(" + _HOST + r")/|\bnodeName:\s*\"?(" + _HOST + r")"
                       r"|^hostname\s+(" + _HOST + r")\s*$", re.I)
# "[node12]": a bracketed bare name with a digit, but not the prefixes launchers put on lines.
_BRACKETED = re.compile(r"\[([A-Za-z][A-Za-z0-9-]*\d[A-Za-z0-9-]*)\]")
_NOT_BRACKET_HOST = re.compile(r"(?i)^(?:rank|default|local_?rank|cuda|dev|device|pid|tid|e|w|i|v|"
                               r"errno|stage|step|epoch|iter)\d+$|^[EWIVDF]\d{4}$"
                               r"|^(?:c10d|p2p|fp8|fp16|bf16|fp32|fp64|int4|int8|x86_64|aarch64|sm\d+|utf-?8|md5|sha\d+)$")
_IPV4 = re.compile(r"(?<![\d.])(?:\d{1,3}\.){3}\d{1,3}(?![\d]|\.\d)")
_IPV6 = re.compile(r"(?<![\w:.])(?:[0-9A-Fa-f]{0,4}:){2,7}[0-9A-Fa-f]{1,4}(?![\w:.])")
_MAC = re.compile(r"^(?:[0-9A-Fa-f]{2}:){5}[0-9A-Fa-f]{2}$")
# Lines that report a failure; an INFO line naming every rank's host would accuse every node.
_FAILURE_LINE = re.compile(
    r"error|fail|warn|timed? ?out|cancel|xid|abort|lost|refused|reset|closed|not responding|exception|"
    r"killed|terminat|unresponsive|NCCL WARN|got completion|^\s*(?:\[\w+\]:)?\s*host\s*:", re.I)
_NOT_HOSTS = {"localhost", "localhost.localdomain", "none", "null", "unknown", "nan"}
# Read with infrastructure rules >= 10: reports whose own words say a node failed, so they name it whatever their level
# word, each from its producer's source. Ray's GCS when a node misses its health checks ("The node with node id: %s and
# address: %s and node name: %s has been marked dead because the detector has missed too many heartbeats from it",
# gcs_node_manager.cc): the address and the name; Open MPI's and PRRTE's launcher ("%s noticed that process rank %lu
# with PID %lu on node %s exited on signal %d", help-orterun.txt / help-prun.txt); the Kubernetes node controller's
# event "Node %s status is now: NodeNotReady" (node_lifecycle_controller.go).
_FAILED_NODE_REPORTS = [re.compile(p) for p in [
    r"\bThe node with node id:? \S+ and address: ([0-9A-Fa-f:.]+|" + _HOST + r") and node name: ([0-9A-Fa-f:.]+|" + _HOST
    + r") has been marked dead\b",
    r"\bnoticed that process rank \d+ with PID \d+ on node (" + _HOST + r") exited on signal\b",
    r"\bNode (" + _HOST + r") status is now: NodeNotReady\b",
]]
# ... and where a scheduler names the node it placed the job on, on any line: kube-scheduler's "Scheduled" event
# ("Successfully assigned %v/%v to %v", schedule_one.go) and Slurm's `scontrol show job` field BatchHost.
_ASSIGNED_V10 = re.compile(r"\bSuccessfully assigned [\w.-]+/[\w.-]+ to (" + _HOST + r")|\bBatchHost=(" + _HOST + r")")
# Read with infrastructure rules >= 13: the daemon Open MPI's and PRRTE's launcher lost ("ORTE has lost communication
# with a remote daemon." followed by "  Remote daemon: [[%s],%s] on node %s", help-errmgr-base.txt); the HNP daemon
# line above it names the launching node, which did not fail.
_LOST_DAEMON = re.compile(r"^\s*Remote daemon\s*: \S+ on node (" + _HOST + r")\s*$")
# Read with infrastructure rules >= 14: the node `kubectl describe pod` names as where the pod ran ("Node:
# gpu-node-07/10.1.2.7", its node name and host IP), as kube-scheduler's "Successfully assigned" event already is.
_DESCRIBED_POD_NODE = re.compile(r"^\s*Node:\s+(" + _HOST + r")/([0-9A-Fa-f:.]+)\s*$")


# Ray's actor-death error lists the dead actor's fields under its first line, its node's address among them
# (ray/exceptions.py, ActorDiedError: "\tclass_name: ...", "\tpid: ...", "\tip: 10.0.0.3").
_RAY_ACTOR_DIED = re.compile(r"RayActorError|ActorDiedError|The actor died\b")
_RAY_ACTOR_IP = re.compile(r"^\s+ip: ([0-9A-Fa-f:.]+|" + _HOST + r")\s*$")
_RAY_FIELDS = 8


# Where a producer names a server or node by whatever name it was given, a name is as good as the address the other
# forms read: the Linux NFS client's "%s: server %s not responding" / "... OK" (net/sunrpc/clnt.c, cl_hostname),
# OpenSSH's "ssh: connect to host %s port %s: %s" (sshconnect.c) and pdsh's "%p: %S: ssh exited with exit code %d"
# (pdsh src/common/pipecmd.c; %S is the target node).
_NAMED_SERVERS = re.compile(r"\bnfs: server (" + _HOST + r") (?:not responding|OK)\b"
                            r"|\bssh: connect to host (" + _HOST + r") port \d+: "
                            r"|^(?:\S+: )?pdsh@\S+: (" + _HOST + r"): \w+ exited with exit code \d+")


def hosts_in(lines: list[str], *, syslog_hosts: bool = False, iso_syslog_hosts: bool = False,
             failed_node_reports: bool = False, lost_daemon_hosts: bool = False,
             described_pod_node: bool = False, named_server_hosts: bool = False) -> list[str]:
    """Host names and IP addresses that identify a node in the failure lines, in order of appearance.

    Versions, timestamps, PCI bus ids and file paths are not hosts; loopback and unspecified
    addresses name no particular node and are left out.
    """
    found: list[str] = []
    ray_fields = 0  # lines left of a Ray actor-death block
    for line in lines:
        hosts = _assigned_hosts(line) if "node" in line.lower() or "host" in line.lower() else []
        if _FAILURE_LINE.search(line):
            hosts += _hosts_of_line(line)
            for read, syslog in ((syslog_hosts, _SYSLOG_ANY), (iso_syslog_hosts, _SYSLOG_ISO)):
                if read and (m := syslog.match(line)):
                    hosts += _cleaned([m.group(1)])
        if failed_node_reports:
            for pattern in (*_FAILED_NODE_REPORTS, _ASSIGNED_V10):
                for m in pattern.finditer(line):
                    hosts += _cleaned(filter(None, m.groups()))
        if lost_daemon_hosts and "daemon" in line and (m := _LOST_DAEMON.match(line)):
            hosts += _cleaned([m.group(1)])
        if described_pod_node and "Node:" in line and (m := _DESCRIBED_POD_NODE.match(line)):
            hosts += _cleaned([m.group(1)])
        if named_server_hosts and ("nfs: " in line or "ssh" in line):
            for m in _NAMED_SERVERS.finditer(line):
                hosts += _cleaned(filter(None, m.groups()))
        ray_fields = _RAY_FIELDS if _RAY_ACTOR_DIED.search(line) else max(ray_fields - 1, 0)
        if ray_fields and (m := _RAY_ACTOR_IP.match(line)):
            hosts += _cleaned([m.group(1)])
        for host in hosts:
            if host not in found:
                found.append(host)
    return found


def is_failure_line(line: str) -> bool:
    """Whether a line reports a failure (only such lines name suspects)."""
    return bool(_FAILURE_LINE.search(line))


def prefix_hosts(stored_line: str) -> list[str]:
    """The node named by a collector's prefix of a line as stored (_PREFIX_HOST), or []."""
    m = _PREFIX_HOST.match(stored_line)
    host = _clean(next((g for g in m.groups() if g), "")) if m else None
    return [host] if host else []


def _assigned_hosts(line: str) -> list[str]:
    hosts: list[str] = []
    for m in _ASSIGNED.finditer(line):
        if m.group(1):
            try:
                hosts += expand_nodelist(m.group(1).strip(",;"), limit=1024)
            except ValueError:
                continue  # a garbled list names no node we could trust
        else:
            hosts.append(m.group(2) or m.group(3) or m.group(4))
    return [h for h in _cleaned(hosts) if h.lower() not in ("(null)", "none")]


def _cleaned(names) -> list[str]:
    """The names that are hosts, cleaned (_clean), in order."""
    return [h for h in map(_clean, names) if h]


def _hosts_of_line(line: str) -> list[str]:
    hosts: list[tuple[int, str]] = []
    for pattern in _NAMED:
        for m in pattern.finditer(line):
            hosts.append((m.start(1), m.group(1)))
    for m in _BRACKETED.finditer(line):
        if not _NOT_BRACKET_HOST.match(m.group(1)) and _bracket_is_host(line, m):
            hosts.append((m.start(1), m.group(1)))
    for m in _IPV4.finditer(line):
        hosts.append((m.start(), m.group()))
    for m in _IPV6.finditer(line):
        text = m.group()
        if "::" in text or re.search(r"[A-Fa-f]", text) or text.count(":") == 7:
            if not _MAC.match(text):
                hosts.append((m.start(), text))
    out = []
    for _, host in sorted(hosts):
        host = _clean(host)
        if host and host not in out:
            out.append(host)
    return out


def _bracket_is_host(line: str, m: re.Match) -> bool:
    # "[E ProcessGroupNCCL.cpp:...]"-style tags contain spaces or dots and never reach here; a
    # bracketed name directly followed by ':' plus a rank number is torchrun's "[default0]:" style.
    after = line[m.end():m.end() + 1]
    return after != ":" or not re.match(r"(?i)(?:rank|default)", m.group(1))


def _clean(host: str) -> str | None:
    host = host.strip("[]")
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        address = None
    if address is not None:
        if address.is_loopback or address.is_unspecified:
            return None
        mapped = getattr(address, "ipv4_mapped", None)
        return str(mapped) if mapped else str(address)
    if ":" in host or host.lower() in _NOT_HOSTS or re.fullmatch(r"[\d.]+", host) or _NOT_BRACKET_HOST.match(host):
        return None  # a partial address or a version number such as 2.18.3
    if not re.search(r"[A-Za-z]", host) or re.search(r"\.(?:py|cc|cpp|c|h|hpp|so|log|txt|json)$", host):
        return None
    return host
