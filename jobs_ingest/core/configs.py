"""Named, versioned grouping and tagging configurations, in the spirit of Sentry's grouping configs.

A grouping config decides which failures share a signature (the masked message and the fingerprint);
a tagging config decides the automatic tag (category, confidence, rule, evidence). Each has an id
("grouping:2026-11"), a changelog entry, and never changes its output once released: a change is a
new config appended below, and the old one stays runnable by its id, so stored failures can say
which config made them and be re-analysed from one config to another. The default is the newest.
docs/grouping-configs.md explains how to add one.
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from functools import partial
from typing import Callable

from . import cluster, infra, normalise, tagger


@dataclass(frozen=True)
class GroupingConfig:
    id: str
    changelog: str
    # Salts the fingerprint and keys the signature (Signature.normaliser_version): one per config.
    normaliser_version: str
    masked_message: Callable[[str, str], str]          # (exception type, message) -> masked message
    location: Callable[[object], str]                  # user's innermost Frame (or None) -> hashed location
    fingerprint: Callable[[str, str, str], str]        # (exception type, message, location) -> hex id
    # Reason-level cluster (cluster.py): (exception type, message) -> (key, cluster message); None: no clusters.
    cluster: Callable[[str, str], tuple[str, str]] | None = None
    # A log with no parsed failure is fingerprinted with its masked last meaningful lines (not one constant).
    tail_fingerprint: bool = False
    # Where the tag read an error inside a wrapper's (TF's "N root error(s) found."), the cluster reads it too.
    cluster_inner_error: bool = False
    # A failure without a frame of the user's code is told apart by a library's innermost frame, else by the
    # masked lines printed just before it (not by its message alone, which merged different programs).
    code_context: bool = False
    # ... read in the failing rank's own lines only, where the launcher prefixes each line with its rank: the lines
    # other ranks printed in between (the same crash on every rank, interleaved at random) change nothing.
    rank_context: bool = False
    # ... and so is a failure that happened to the program rather than in a frame of it (a native crash, a kill, a
    # CUDA error printed as text: the lines it printed before), and a launcher's report of a failed child (the
    # entrypoint the report names). Until now each of these was one signature across every program.
    program_context: bool = False
    # How a line is masked where lines are hashed as a location (the lines before a failure without frames).
    mask_line: Callable[[str], str] = normalise.mask


@dataclass(frozen=True)
class TaggingConfig:
    id: str
    changelog: str
    tagger_version: str
    tag: Callable[..., tagger.Tag]                     # (exception type, message[, context lines]) -> Tag
    infra_rules: infra.InfraRules | None = None        # a released set of them may claim the failure for the platform
    learned_model: str | None = None                   # the learned fallback's artefact (jobs_ingest/core/), one file
                                                       # per release: it answers what the rules leave unclassified
    frameworks: bool = False                           # frameworks.py: TF root errors, launcher signals, cut logs
    location_traces: bool = False                      # native backtraces, TF op traces skipped when last lines are read
    launcher_tail: bool = False                        # a log ending on a launcher's child-exit report is read by it
    pasted_errors: bool = False                        # errors as people paste them: quoted in a sentence, or a message above its frames
    tail_reading: bool = False                         # no parsed failure: a TF root-error report or a cut exception name at the end
    tail_fatal_lines: bool = False                     # ... or a glog FATAL record, or a bare exception name under a pasted frame
    quoted_pastes: bool = False                        # collectors.unquoted: a log pasted whole in a blockquote
    keras_call_errors: bool = False                    # frameworks.with_keras_call_error: the error under Keras' header
    cut_statements: bool = False                       # a cut traceback ending at a raise/assert statement reads it; headless frames too
    qualified_cut_names: bool = False                  # ... a cut exception name after its module path ("errors_impl.InvalidA")
    kernel_asserts: bool = False                       # ... a CUDA kernel's "Assertion `cond` failed." lines at the end
    torchscript_messages: bool = False                 # an empty exception message read from the line below (TorchScript)
    collector_prefixes: bool = False                   # collectors.py: CRI, kubectl, SageMaker MPI, Ray... prefixes read through
    trailers: bool = False                             # trailers.py: tools' after-failure chatter read as blank lines
    one_rank: bool = False                             # interleaved ranks: after parsing, only the failing rank's lines are read
    # A log cut in the launcher's own traceback is read by the child's exit the launcher reported: "first" (before
    # the error the log printed above the cut), "last" (only where that error says nothing), "" (never).
    launcher_cut: str = ""


class UnknownConfig(ValueError):
    pass


def _salted(version: str, *, statuses: bool = False, units: bool = False,
            dates: bool = False) -> Callable[[str, str, str], str]:
    """normalise.fingerprint salted with a normaliser version (exit statuses kept from version 11 on, numbers glued to
    units masked from version 12 on, timestamps' dates folded from version 13 on)."""
    return lambda exception_type, message, location: normalise.fingerprint(
        exception_type, message, location, version=version, statuses=statuses, units=units, dates=dates)


# Oldest first; the last one of each tuple is the default. Never edit a released entry.
GROUPING_CONFIGS: tuple[GroupingConfig, ...] = (
    GroupingConfig(
        id="grouping:2026-11",
        changelog="First named config: today's normaliser (version 2). Masks paths (base name kept), "
                  "numbers, hex ids, uuids, sizes, shapes, times, hosts; hashes the short exception type, "
                  "the masked message and the user's innermost function (or masked statement at module level).",
        normaliser_version="2",
        masked_message=normalise.masked_message,
        location=normalise.location,
        fingerprint=normalise.fingerprint,
    ),
    GroupingConfig(
        id="grouping:2026-11b",
        changelog="Normaliser version 3 (#14.3, #14.4). Exceptions are fingerprinted as in grouping:2026-11 "
                  "(salted with the new version). A log with no parsed failure is no longer one shared signature: "
                  "its masked last meaningful lines (up to 3, progress bars and separators skipped) join the "
                  "fingerprint, and its last line the message. Every failure gets a reason-level cluster "
                  "(cluster.py, version 1): short exception type and message with quoted names, identifiers, "
                  "paths with their base names and numbers masked.",
        normaliser_version="3",
        masked_message=normalise.masked_message,
        location=normalise.location,
        fingerprint=lambda exception_type, message, location: normalise.fingerprint(
            exception_type, message, location, version="3"),
        cluster=cluster.cluster_key,
        tail_fingerprint=True,
    ),
    GroupingConfig(
        id="grouping:2026-11c",
        changelog="Reason clusters version 2 (cluster.py; #14.3): the message's first line is the reason (or the line "
                  "under a header that only announces it: 'Error(s) in loading state_dict for X:'; under TF's 'N "
                  "root error(s) found.' the root error the tag read), so log lines glued after a message no longer split a cluster; an exception pasted "
                  "in quotes or prose is read by its own type (no longer one '<Q>' cluster for every pasted error); a "
                  "message wholly in quotes with words in it is read inside them (a KeyError's sentence); a called "
                  "function's name is masked; one reason in its producers' several wordings is one cluster (segfaults "
                  "said by the shell, faulthandler or an exit status; bus errors, aborts, SIGKILL; CUDA out of memory; "
                  "a missing module under ImportError or ModuleNotFoundError). A failure whose message names no reason "
                  "gets no cluster. Signatures as in grouping:2026-11b, salted with normaliser version 4.",
        normaliser_version="4",
        masked_message=normalise.masked_message,
        location=normalise.location,
        fingerprint=lambda exception_type, message, location: normalise.fingerprint(
            exception_type, message, location, version="4"),
        cluster=cluster.cluster_key_v2,
        tail_fingerprint=True,
        cluster_inner_error=True,
    ),

)
TAGGING_CONFIGS: tuple[TaggingConfig, ...] = (
    TaggingConfig(
        id="tagging:2026-11",
        changelog="First named config: today's tagger rules (version 4) and the pipeline's tag decisions "
                  "(chained exceptions, SIGKILLed children, exit codes, the hook's NaN guard, stages).",
        tagger_version="4",
        tag=tagger.RULES_V4.tag,
    ),
    TaggingConfig(
        id="tagging:2026-11b",
        changelog="Adds the infrastructure dimension (infra.py, rules version 1): GPU hardware, collective "
                  "communication, node lost, preempted, network and rendezvous, storage, each with retry advice "
                  "and fault 'platform' and the nodes the failure names; and the learned fallback "
                  "(learned.py, learned_model.json) for failures with a parsed exception that no rule knows.",
        tagger_version="4+infra1+ml1",
        tag=tagger.RULES_V4.tag,
        infra_rules=infra.INFRA_V1,
        learned_model="learned_model.json",
    ),
    TaggingConfig(
        id="tagging:2026-11c",
        changelog="Frameworks and wrappers (#14.5; rules version 5, frameworks.py): MXNet engine checks, JAX tracer "
                  "errors, Lightning's MisconfigurationException, TF 'N root error(s) found' judged by the first "
                  "sub-error, TF 1.x '(see above for traceback)' lines; launcher summaries (torchrun ChildFailedError, "
                  "mp.spawn, DeepSpeed, CalledProcessError) read by exit code and signal: SIGKILL is cpu_oom only "
                  "with memory evidence, other signals and bare kills are said plainly; a log that ends inside a "
                  "traceback is judged from the error before it and its deepest frame, with low confidence. The "
                  "learned fallback is not asked where a rule says plainly why it cannot tell.",
        tagger_version="5+infra1+ml1",
        tag=tagger.RULES_V5.tag,
        infra_rules=infra.INFRA_V1,
        learned_model="learned_model.json",
        frameworks=True,
    ),
    TaggingConfig(
        id="tagging:2026-11d",
        changelog="Rules version 6 and infrastructure rules version 2, from new development sets sampled by repository "
                  "and framework (bench/devset/issues3) and in plain words (tests/fixtures/infra2). Rules: a bare native "
                  "crash said plainly, SIGFPE as division by zero, no kernel for an op on a device as not_implemented, "
                  "Windows DLL errors, TF/Horovod/transformers/datasets/Lightning texts; a native backtrace or a TF op "
                  "trace after a fatal message no longer hides it; a launcher's child-exit report is read by its exit "
                  "status; the learned fallback (ml2) answers for silent rules only at probability >= 0.5. Platform: CUDA "
                  "error containment and Fabric Manager errors, Ray's newer node-died text, NCCL InfiniBand async "
                  "events and unhandled CUDA errors (low), c10d socket wait timeouts, fsspec timeouts, failed "
                  "checkpoint writes.",
        tagger_version="6+infra2+ml2",
        tag=tagger.RULES_V6.tag,
        infra_rules=infra.INFRA_V2,
        learned_model="learned_model_ml2.json",
        frameworks=True,
        location_traces=True,
        launcher_tail=True,
    ),
    TaggingConfig(
        id="tagging:2026-11e",
        changelog="Rules version 7: families of messages in their producers' words, written before the fourth development "
                  "set was read: extensions built at run time (torch cpp_extension), binaries built against another "
                  "version (NumPy C-API, torchvision CUDA, jaxlib), CPU-only builds, transformers' lazy imports, "
                  "configuration validation (omegaconf, pydantic, DeepSpeed), invalid device ordinals; "
                  "a named file or directory that is missing in any library's words; and, after every rule "
                  "that says more (a message no rule and no exception type explains), the words libraries use for an "
                  "argument's bad value. Errors as people paste them: an exception line quoted in a sentence is read by its type, "
                  "a message printed above its frames is read past them. Infrastructure rules version 3 (tests/fixtures/"
                  "infra3): disk quota exceeded, nvidia-smi's lost GPU, Slurm's unexpectedly rebooted node, NCCL socket "
                  "calls that failed.",
        tagger_version="7+infra3+ml3",
        tag=tagger.RULES_V7.tag,
        infra_rules=infra.INFRA_V3,
        learned_model="learned_model_ml3.json",
        frameworks=True,
        location_traces=True,
        launcher_tail=True,
        pasted_errors=True,
    ),
    TaggingConfig(
        id="tagging:2026-11f",
        changelog="Rules version 8, from a fifth development set sampled by repository (bench/devset/issues5): Windows' "
                  "commit limit (cpu_oom), sentencepiece models that do not parse (corrupt_data), NCCL's duplicate GPU "
                  "(illegal_argument), git-lfs pointers read as data, torch.load's short files and video decoders' failures "
                  "(corrupt_data), TF's local paths on a TPU worker (path_not_found, before the UNIMPLEMENTED status), TF "
                  "graph and variable misuse texts, the shell's syntax errors, .NET / Java null dereferences, a library's "
                  "own configuration error types (illegal_argument, after every rule that says more), libraries' 'no "
                  "<thing> found' beside a path, whose backslash paths now need a name before the separator. Learned "
                  "fallback ml4, retrained with issues5.",
        tagger_version="8+infra3+ml4",
        tag=tagger.RULES_V8.tag,
        infra_rules=infra.INFRA_V3,
        learned_model="learned_model_ml4.json",
        frameworks=True,
        location_traces=True,
        launcher_tail=True,
        pasted_errors=True,
    ),
    TaggingConfig(
        id="tagging:2026-11g",
        changelog="Infrastructure rules version 4, from a fourth development set of platform failures (tests/fixtures/"
                  "infra4): srun's 'Task launch for <step> failed on node <host>: ...' (the node cannot start the job's "
                  "tasks: node_lost, the node named) and TensorFlow's TPU 'ShutdownHook: lame workers found' (workers "
                  "stopped answering heartbeats: node_lost). Program rules (version 8) and the learned fallback (ml4) as "
                  "in 2026-11f.",
        tagger_version="8+infra4+ml4",
        tag=tagger.RULES_V8.tag,
        infra_rules=infra.INFRA_V4,
        learned_model="learned_model_ml4.json",
        frameworks=True,
        location_traces=True,
        launcher_tail=True,
        pasted_errors=True,
    ),
    TaggingConfig(
        id="tagging:2026-11h",
        changelog="Rules version 9, from a sixth development set sampled by repository (bench/devset/issues6), each rule "
                  "from its producer's text: TF's Saver on a checkpoint that does not fit the graph (tensor_mismatch), "
                  "torch.distributions finding NaN in its parameters (loss_nan), torch's 'storage has wrong size' "
                  "(corrupt_data), struct's range check (illegal_argument), TF while-loop, DataLoader and torch.jit tracer "
                  "misuse texts (framework_api_misuse), TF's BFC allocator running out of GPU memory (gpu_oom), errno 20/21 "
                  "(path_not_found); exception types whose library documents them (librosa's ParameterError, "
                  "IOError/EnvironmentError as OSError, schema ValidationErrors, huggingface_hub's and datasets' not-found "
                  "errors, HFValidationError, GatedRepoError, TF's NotFoundError); an error AutoGraph wrapped 'in user "
                  "code:' read by the error it wraps. A log with no parsed failure is read closer: a TF root-error report "
                  "printed as a log record, and a last line that is an exception name cut short. Infrastructure rules "
                  "version 5 (tests/fixtures/infra5): the driver's NV_ERR_RESET_REQUIRED, Grid Engine's 'failed 25 : "
                  "rescheduling'. Learned fallback ml5, retrained with issues6.",
        tagger_version="9+infra5+ml5",
        tag=tagger.RULES_V9.tag,
        infra_rules=infra.INFRA_V5,
        learned_model="learned_model_ml5.json",
        frameworks=True,
        location_traces=True,
        launcher_tail=True,
        pasted_errors=True,
        tail_reading=True,
    ),

)


# Newer releases are their predecessor with what changed (dataclasses.replace), so each says only its changes.
GROUPING_CONFIGS += (replace(
    GROUPING_CONFIGS[-1],
    id="grouping:2026-11d",
    changelog="Reason clusters version 3 (cluster.py; #14.3): version 2's reason with what still named *which* "
              "thing masked: device names ('cuda:0 and cpu'), Python's spelling hint ('Did you mean: x?'), a "
              "count's plural and verb ('1 positional argument but 2 were given' and '2 arguments but 1 was "
              "given'), lists of masked names ('x', 'y', and 't'), a KeyError's bare key (a string or a "
              "number) and the kind of sequence indexed (list, tuple, string). Signatures as in "
              "grouping:2026-11c, salted with normaliser version 5.",
    normaliser_version="5",
    fingerprint=_salted("5"),
    cluster=cluster.cluster_key_v3,
),)
GROUPING_CONFIGS += (replace(
    GROUPING_CONFIGS[-1],
    id="grouping:2026-11e",
    changelog="Exact signatures of failures without a frame of the user's code (#14.8, fingerprint precision): "
              "a traceback of library frames only is told apart by its innermost frame's file and function; a "
              "failure with no traceback (an error line alone, as TF and C++ print it, or a pasted last line) by "
              "the masked lines the program printed just before it. Until now such failures of different "
              "programs with one message ('list index out of range', 'CUDA out of memory') shared a "
              "signature. Reason clusters version 3 as in grouping:2026-11d; salted with normaliser version 6.",
    normaliser_version="6",
    fingerprint=_salted("6"),
    code_context=True,
),)
GROUPING_CONFIGS += (replace(
    GROUPING_CONFIGS[-1],
    id="grouping:2026-11f",
    changelog="The lines that tell a failure without a user frame apart (grouping:2026-11e) are read in the failing "
              "rank's own lines where the launcher prefixes lines with ranks ('[rank3]: ', Open MPI's '[1,3]<stderr>:', "
              "srun's '3: '). Every rank of a job often crashes at once and their lines interleave at random, so the "
              "lines printed just before the failure were another rank's and the same failure got a new signature "
              "on each run. Reason clusters version 3 as before; salted with normaliser version 7.",
    normaliser_version="7",
    fingerprint=_salted("7"),
    rank_context=True,
),)
GROUPING_CONFIGS += (replace(
    GROUPING_CONFIGS[-1],
    id="grouping:2026-11g",
    changelog="Reason clusters version 4 (cluster.py; #14.3): more reasons in their producers' several wordings (a "
              "checkpoint that does not fit the model; tensors whose shapes disagree, in PyTorch's, TF's, Keras', "
              "NumPy's and einops' words; an index past the end; TF's and JAX's GPU allocators; OOM kills by the "
              "kernel, Slurm and Kubernetes; the shells' words for a killed, aborted or illegal-instruction child; "
              "a missing path said without an errno); a pasted line read through Markdown bold or after other "
              "text; IOError and EnvironmentError read as OSError; and a reason that is a sentence keyed without "
              "its type, which people paste or leave out. Signatures as in grouping:2026-11f, salted with "
              "normaliser version 8.",
    normaliser_version="8",
    fingerprint=_salted("8"),
    cluster=cluster.cluster_key_v4,
),)
GROUPING_CONFIGS += (replace(
    GROUPING_CONFIGS[-1],
    id="grouping:2026-11h",
    changelog="Reason clusters version 5 (cluster.py; #14.3): reasons that version 4 still split by which object, "
              "device or library, in Python's, PyTorch's and the loaders' own words, are one cluster each: None used "
              "as a value, whatever was done with it; an attribute that is not there, on any object, module, class "
              "or pickled class; tensors on different devices; a native library missing a symbol; Windows' access "
              "violation (its segmentation fault); a file or directory that cannot be found, said in prose. "
              "Signatures as in grouping:2026-11g, salted with normaliser version 9 (the same failures share one).",
    normaliser_version="9",
    fingerprint=_salted("9"),
    cluster=cluster.cluster_key_v5,
),)
GROUPING_CONFIGS += (replace(
    GROUPING_CONFIGS[-1],
    id="grouping:2026-11i",
    changelog="Exact signatures of failures that happened to a program rather than in a frame of it (#14.4, #14.8): "
              "a native crash (segmentation fault, abort, bus error, 'Fatal Python error'), a kill (the shell's "
              "'Killed', the OOM killer's words) and a CUDA error printed as text are told apart, as a failure "
              "without a user frame is since grouping:2026-11e, by the masked lines the program printed just before "
              "(its own rank's); a launcher's report of a failed child (torchrun's ChildFailedError, or a log that "
              "ends on the child's exit) by the entrypoint the report names ('train.py FAILED'). Until now each was "
              "one signature across every program: 11 segmentation faults of 11 programs shared one. A log that "
              "holds nothing but the crash line still shares it: nothing else tells its program apart. Reason "
              "clusters version 5 as in grouping:2026-11h; salted with normaliser version 10.",
    normaliser_version="10",
    fingerprint=_salted("10"),
    program_context=True,
),)
GROUPING_CONFIGS += (replace(
    GROUPING_CONFIGS[-1],
    id="grouping:2026-11j",
    changelog="Exit statuses kept (normaliser version 11; #14.8): an exit status, a signal number or a Windows NTSTATUS "
              "code names how a process ended (1; 127, a command not found; -9, killed; 0xC0000005, an access "
              "violation; 0xC0000374, heap corruption), so it is no longer masked as a number: 'exit code', 'exit "
              "status', 'exitcode', 'return code', 'non-zero (exit) status', 'signal' followed by a number, and 0xC... "
              "codes. Until now 'Process finished with exit code -1073741819 (0xC0000005)' and '... (0xC0000374)' "
              "shared one signature. Reason clusters version 6: version 5, except that a library that cannot be found, "
              "said in prose ('Could not find the library file libcudart.so'), is no longer a missing path.",
    normaliser_version="11",
    masked_message=partial(normalise.masked_message, statuses=True),
    fingerprint=_salted("11", statuses=True),
    cluster=cluster.cluster_key_v6,
),)
GROUPING_CONFIGS += (replace(
    GROUPING_CONFIGS[-1],
    id="grouping:2026-11k",
    changelog="PCI addresses, units, ordinals and ports masked (normaliser version 12; reason clusters version 7): a "
              "GPU's PCI address (the driver's 'Xid (PCI:0000:3b:00): 79', nvidia-smi's 'GPU00000000:3B:00.0') names "
              "a slot, as a host name names a node; a number glued to its unit ('timed out after 1800000ms', "
              "Kubernetes' 'available: 88412Ki'), an ordinal ('in its 0th output') and a port in angle brackets after "
              "a host (NCCL's '10.1.2.3<41233>') vary between runs as a bare number does. None of them splits a "
              "signature or a reason cluster any more. Everything else as in grouping:2026-11j.",
    normaliser_version="12",
    masked_message=partial(normalise.masked_message, statuses=True, units=True),
    fingerprint=_salted("12", statuses=True, units=True),
    cluster=cluster.cluster_key_v7,
),)
GROUPING_CONFIGS += (replace(
    GROUPING_CONFIGS[-1],
    id="grouping:2026-11l",
    changelog="Timestamps' dates folded into their time (normaliser version 13; reason clusters version 8): syslog's "
              "'Nov 18 03:12:44', the kubelet's 'Nov 18, 2026 03:12:44' and the severity-and-date prefix of glog, absl "
              "and PyTorch's c10 logging ('[E1118 03:12:44.123456 ProcessGroupNCCL.cpp:616]') made one NCCL timeout or "
              "one Xid a new signature every day or month; in the message, and in the lines hashed before a failure "
              "without frames. Everything else as in grouping:2026-11k.",
    normaliser_version="13",
    masked_message=partial(normalise.masked_message, statuses=True, units=True, dates=True),
    fingerprint=_salted("13", statuses=True, units=True, dates=True),
    cluster=cluster.cluster_key_v8,
    mask_line=normalise.mask_dated,
),)
GROUPING_CONFIGS += (replace(
    GROUPING_CONFIGS[-1],
    id="grouping:2026-11m",
    changelog="Reason clusters version 9 (cluster.py; #14.3, #15): a log record's header before the reason (a bracket "
              "with a timestamp, c10's '[E ProcessGroupNCCL.cpp:828]', '[Rank 3]', '[PG 0 Rank 3]', the '[c10d]' tag) "
              "and PyTorch's 'Process group watchdog thread terminated with exception:' no longer split one reason "
              "by PyTorch version or rank; the driver's Xid lines are keyed by their Xid code; more reasons in their "
              "producers' words: NCCL's watchdog timeout whatever the op, a checkpoint that does not fit (accelerate, "
              "diffusers, Keras), tensor shapes (PyTorch's stack, expand, view, RNN and conv, TF's reshape and "
              "squeeze, old TH/THC, MXNet), a file that cannot be unpickled, a corrupt or cut checkpoint, a CUDA "
              "kernel's assertion line, glibc's translated segmentation faults; a trailing full stop dropped. "
              "Signatures as in grouping:2026-11l, salted with normaliser version 14.",
    normaliser_version="14",
    fingerprint=_salted("14", statuses=True, units=True, dates=True),
    cluster=cluster.cluster_key_v9,
),)
TAGGING_CONFIGS += (replace(
    TAGGING_CONFIGS[-1],
    id="tagging:2026-11i",
    changelog="Rules version 10, from a seventh development set sampled by repository (bench/devset/issues7; 11h's "
              "first run there 81.6%), each rule from its producer's text: Python's recursion limit said plainly "
              "(unclassified), transformers' 'should be installed' (library_not_found), Gloo's missing interface "
              "address (illegal_argument), PyTorch 0.4's 'Expected object of type X but found type Y' "
              "(type_mismatch), PyTorch's 'Dimension out of range' (illegal_index), inference tensors used for "
              "backward (framework_api_misuse), glog CHECKs on shapes and sizes, scatter/gather index ranks and "
              "'to have shape ... but found' (tensor_mismatch), TF's image decoders and Example parser "
              "(corrupt_data); OverflowError's type default (illegal_argument). A log with no parsed failure is read "
              "closer still: a glog FATAL record before its stack trace, and a bare exception name "
              "under a pasted unindented frame. Infrastructure rules version 5 and the learned fallback ml6 "
              "(retrained with issues7).",
    tagger_version="10+infra5+ml6",
    tag=tagger.RULES_V10.tag,
    learned_model="learned_model_ml6.json",
    tail_fatal_lines=True,
),)
TAGGING_CONFIGS += (replace(
    TAGGING_CONFIGS[-1],
    id="tagging:2026-11j",
    changelog="Infrastructure rules version 6, from a sixth development set of platform failures (tests/fixtures/"
              "infra6; version 5's first run there 6/7 found, 7/8 look-alikes kept): a cloud's notice that it is "
              "taking the VM back ('GCP Metadata Service says termination is imminent', an AWS spot "
              "'instance-action' to terminate) is preempted. Program rules (version 10) and the learned fallback "
              "(ml6) as in 2026-11i.",
    tagger_version="10+infra6+ml6",
    infra_rules=infra.INFRA_V6,
),)
TAGGING_CONFIGS += (replace(
    TAGGING_CONFIGS[-1],
    id="tagging:2026-11k",
    changelog="Logs as collectors write them down (collectors.py): Docker's json-file records, and the prefix that "
              "containerd/CRI-O log files, `kubectl logs --prefix`/`--timestamps`, SageMaker's Open MPI (--tag-output "
              "with mpirank), Ray, Docker Compose, pm2 or pdsh put on every line, are rewritten line for line to the "
              "form the parser reads, and a line left with a prefix and no words is blank, so the end of a log is read "
              "as the program printed it. The failure line and excerpt are shown as stored. Infrastructure rules "
              "version 7 (version 6's rules) read hosts in the parsed lines plus the node a collector's prefix names on "
              "a failure line. Program rules (version 10) and the learned fallback (ml6) as in 2026-11j.",
    tagger_version="10+infra7+ml6",
    infra_rules=infra.INFRA_V7,
    collector_prefixes=True,
),)
TAGGING_CONFIGS += (replace(
    TAGGING_CONFIGS[-1],
    id="tagging:2026-11l",
    changelog="The chatter tools print after a job failed is read as blank lines by the program's analysis "
              "(trailers.py): W&B's, MLflow's and Comet's exit summaries, torchrun's 'Sending process N closing signal "
              "SIGTERM', DeepSpeed's 'Killing subprocess N', srun's 'task 0: Exited with exit code 1' (codes below "
              "128) and step teardown, slurmstepd's CANCELLED line without a reason, PyTorch's 'process group has NOT "
              "been destroyed' and CUDA's 'driver shutting down' warnings, Hydra's HYDRA_FULL_ERROR hint. They no "
              "longer stand for a cut traceback's missing exception line or for the log's last words. Infrastructure "
              "rules and hosts still read them; the log is shown as stored. Rules, infrastructure rules (version 7) "
              "and the learned fallback (ml6) as in 2026-11k.",
    trailers=True,
),)
TAGGING_CONFIGS += (replace(
    TAGGING_CONFIGS[-1],
    id="tagging:2026-11m",
    changelog="Infrastructure rules version 8, from the producers' own message templates (tests/fixtures/"
              "infra_templates: PyTorch c10d, NCCL, Slurm, Kubernetes, storage clients): ProcessGroupNCCL's watchdog "
              "taking the process down, NCCL's IB async fatal event, socketPollConnect and proxy receive failures, "
              "c10d's 'Failed to recv, got 0 bytes', Slurm's unreachable controller and its NODE_FAIL / BOOT_FAIL / "
              "PREEMPTED states as printed, Kubernetes' taint-manager and pod-GC deletions, scheduler preemption and "
              "node shutdown, and object stores' or the Hugging Face Hub's 5xx, broken streams and read timeouts. "
              "Everything else as in 2026-11l.",
    tagger_version="10+infra8+ml6",
    infra_rules=infra.INFRA_V8,
),)
TAGGING_CONFIGS += (replace(
    TAGGING_CONFIGS[-1],
    id="tagging:2026-11n",
    changelog="Rules version 11 (tagger.RULES_V11): the job's own failures among the platform's message templates "
              "(tests/fixtures/infra_templates), each from its producer's text: Slurm's 'task 3: Out Of Memory' and "
              "OUT_OF_MEMORY state (cpu_oom), an object store's or HTTP 404 (path_not_found), HTTP 401/403 "
              "(permission_denied) and ncclInvalidUsage (framework_api_misuse). Infrastructure rules version 8 and the "
              "learned fallback (ml6) as in 2026-11m.",
    tagger_version="11+infra8+ml6",
    tag=tagger.RULES_V11.tag,
),)
TAGGING_CONFIGS += (replace(
    TAGGING_CONFIGS[-1],
    id="tagging:2026-11o",
    changelog="Ranks that print at once: the parser already reads each rank's lines on its own; after it, where lines "
              "carry two ranks or more, the analysis reads only the failing rank's lines and the unprefixed ones "
              "(others' as blank lines), so another rank's half-printed traceback is not read as a cut log and the "
              "last words are the failing rank's. With no parsed failure, the rank of the last prefixed line. Rules "
              "(version 11), infrastructure rules (version 8, which still read every line) and the learned fallback "
              "(ml6) as in 2026-11n.",
    one_rank=True,
),)
TAGGING_CONFIGS += (replace(
    TAGGING_CONFIGS[-1],
    id="tagging:2026-11p",
    changelog="The learned fallback ml7: trained as ml6 on the development sets plus heldout3-5 (533 more labelled "
              "failures from 344 repositories), which were measured for the last time with 2026-11o and retired into "
              "training data when a fresh held-out set (bench/heldout6) was collected. Grouped cross-validation on "
              "the 2,515 logs: rules + fallback 93.4% against 92.7% for the rules alone (+0.3 to +1.0 points). Rules, "
              "infrastructure rules and the reading of ranks as in 2026-11o.",
    tagger_version="11+infra8+ml7",
    learned_model="learned_model_ml7.json",
),)
TAGGING_CONFIGS += (replace(
    TAGGING_CONFIGS[-1],
    id="tagging:2026-11q",
    changelog="A log that ends inside the launcher's own traceback (runpy, torch.distributed.run or launch, the elastic "
              "agent, DeepSpeed's and Accelerate's launchers), cut before its ChildFailedError line, is read by the "
              "child's exit the launcher reported just before it ('failed (exitcode: -9) local_rank: 1'), as a "
              "complete launcher summary is. CPython's CalledProcessError for a child a signal killed ('died with "
              "<Signals.SIGKILL: 9>') is read as that signal. Everything else as in 2026-11p.",
    tagger_version="11+infra8+ml7+lc",
    launcher_cut="first",
),)
TAGGING_CONFIGS += (replace(
    TAGGING_CONFIGS[-1],
    id="tagging:2026-11r",
    changelog="2026-11q's reading of a launcher's traceback cut short, applied only where the error the log printed "
              "before the cut says nothing: under 2026-11q a child's error printed before the launcher's report "
              "(\"Exception: expected value at line 1 column 1\", then \"failed (exitcode: 1)\") gave way to the "
              "bare exit code. Everything else as in 2026-11q.",
    tagger_version="11+infra8+ml7+l2",
    launcher_cut="last",
),)
TAGGING_CONFIGS += (replace(
    TAGGING_CONFIGS[-1],
    id="tagging:2026-11s",
    changelog="Rules version 12, each rule from its producer's text: argparse's 'invalid <type> value' for any "
              "converter's name (illegal_argument), dash's 'sh: 1: X: not found' (library_not_found), PyTorch's zip "
              "checkpoint reader's hasRecord(\"version\") check (corrupt_data), c10's 'negative dimension' "
              "(illegal_argument), THC's 'arguments are located on different GPUs' (framework_api_misuse); typographic "
              "quotes in a pasted message read as ASCII. Everything else as in 2026-11r.",
    tagger_version="12+infra8+ml7+l2",
    tag=tagger.RULES_V12.tag,
),)
TAGGING_CONFIGS += (replace(
    TAGGING_CONFIGS[-1],
    id="tagging:2026-11t",
    changelog="Infrastructure rules version 9: a node's syslog record with an RFC 3339 timestamp, as journalctl's "
              "short-iso and rsyslog's file format write it ('2024-05-02T11:00:00+0000 dgx-07 kernel: NVRM: Xid "
              "...'), names its host, as the classic 'May  2 11:00:00 dgx-07 kernel:' record has since version 6. "
              "Everything else as in 2026-11s.",
    tagger_version="12+infra9+ml7+l2",
    infra_rules=infra.INFRA_V9,
),)
TAGGING_CONFIGS += (replace(
    TAGGING_CONFIGS[-1],
    id="tagging:2026-11u",
    changelog="Infrastructure rules version 10, from the producers' sources: a pod's node that stopped answering "
              "(the Kubernetes node lifecycle controller's reason NodeNotReady) is node loss; the reports that name a "
              "failed node in their own words name it as a suspect whatever their level word (Ray's 'The node with "
              "node id: ... and address: A and node name: N has been marked dead', Open MPI's 'noticed that process "
              "rank R with PID P on node N exited on signal S', 'Node N status is now: NodeNotReady'), and so do the "
              "lines where a scheduler placed the job ('Successfully assigned ns/pod to N', Slurm's BatchHost=N). "
              "Everything else as in 2026-11t. Stamp shortened to fit 16 characters.",
    tagger_version="12+i10+ml7+l2",
    infra_rules=infra.INFRA_V10,
),)
TAGGING_CONFIGS += (replace(
    TAGGING_CONFIGS[-1],
    id="tagging:2026-11v",
    changelog="Rules version 13: a network that did not answer in the C library's words ('[Errno 113] No route to "
              "host', ENETUNREACH, ETIMEDOUT, EHOSTDOWN) is said plainly as unclassified (retry), no longer the OSError "
              "default path_not_found (do not retry). Infrastructure rules version 11: '[Errno 121] Remote I/O error' "
              "(EREMOTEIO) is storage, as EIO is. Everything else as in 2026-11u.",
    tagger_version="13+i11+ml7+l2",
    tag=tagger.RULES_V13.tag,
    infra_rules=infra.INFRA_V11,
),)
TAGGING_CONFIGS += (replace(
    TAGGING_CONFIGS[-1],
    id="tagging:2026-11w",
    changelog="Infrastructure rules version 12, from NVIDIA's own texts, for a node whose GPUs cannot be used: an "
              "NVSwitch's fatal SXid ('nvidia-nvswitch0: SXid (PCI:...): 24007, Fatal, ...'; non-fatal ones are not "
              "failures), the driver's kernel module and user-space library of different versions ('Failed to "
              "initialize NVML: Driver/library version mismatch'), nvidia-smi unable to reach a GPU ('Unable to "
              "determine the device handle for GPU...: Unknown Error'): gpu_hardware, retry on other nodes. Everything "
              "else as in 2026-11v.",
    tagger_version="13+i12+ml7+l2",
    infra_rules=infra.INFRA_V12,
),)
TAGGING_CONFIGS += (replace(
    TAGGING_CONFIGS[-1],
    id="tagging:2026-11x",
    changelog="Rules version 14: an OSError whose errno names no path is no longer the OSError default path_not_found "
              "(do not retry): a per-process limit ('[Errno 24] Too many open files'), a port in use, a connection "
              "refused or dropped and any other such errno are said plainly as unclassified, ENOSYS/EOPNOTSUPP is "
              "not_implemented; Ray's memory monitor ('killed due to the node running low on memory') and a full "
              "/dev/shm in PyTorch's shared-memory tensors are cpu_oom, no longer gpu_oom or nothing. Infrastructure "
              "rules version 13: PyTorch's NCCL heartbeat monitor timeout (collective), Open MPI's lost remote daemon "
              "with its node, Ray's NodeDiedError (node lost). Everything else as in 2026-11w.",
    tagger_version="14+i13+ml7+l2",
    tag=tagger.RULES_V14.tag,
    infra_rules=infra.INFRA_V13,
),)
TAGGING_CONFIGS += (replace(
    TAGGING_CONFIGS[-1],
    id="tagging:2026-11y",
    changelog="Rules version 15, common producers' texts that no labelled log we hold contains: HDF5's lock on a file "
              "system without locks is not_implemented, not a missing file; 'unknown encoding: X' is "
              "unexpected_encoding; a driver older than PyTorch's CUDA and a PyTorch build without NCCL are "
              "library_not_found; TF 1 graph APIs under eager execution and a view of a non-contiguous tensor are "
              "framework_api_misuse; a tar or YAML file its reader cannot parse is corrupt_data; an HTTP read "
              "that timed out is said plainly. Everything else as in 2026-11x.",
    tagger_version="15+i13+ml7+l2",
    tag=tagger.RULES_V15.tag,
),)
TAGGING_CONFIGS += (replace(
    TAGGING_CONFIGS[-1],
    id="tagging:2026-11z",
    changelog="Rules version 16, written from message templates read in their producers' sources "
              "(tests/fixtures/program_templates): PyTorch, TensorFlow, Keras, JAX, Flax, MXNet, Hugging Face, "
              "accelerate, peft, DeepSpeed, bitsandbytes, timm, apex, PyYAML, omegaconf, Pillow and conda texts "
              "that version 15 left unclassified or read as a missing path, a weak type default or the wrong kind "
              "(a dispatcher's missing kernel, TF 1's variable reuse, Flax's parameters, a gated model, a YAML "
              "error naming its file...). Infrastructure rules version 14: the node `kubectl "
              "describe pod` names is where the pod ran. Everything else as in 2026-11y.",
    tagger_version="16+i14+ml7+l2",
    tag=tagger.RULES_V16.tag,
    infra_rules=infra.INFRA_V14,
),)
TAGGING_CONFIGS += (replace(
    TAGGING_CONFIGS[-1],
    id="tagging:2026-11za",
    changelog="Infrastructure rules version 15, from a second round of producers' templates: AMD GPUs (ROCr's ECC "
              "faults and hardware exceptions, the amdgpu driver's ring timeouts, resets, lost VRAM, RAS errors), "
              "Intel Gaudi (the habanalabs driver's heartbeat loss and resets; HCCL's rendezvous and handshake), "
              "NVIDIA's device plugin short of healthy GPUs and DCGM's NVLink down, preemption by Kueue, Volcano, AWS's "
              "spot notice and SkyPilot, KubeRay's lost head pod, EFA/UCX/mlx5 fabric errors, and file system clients "
              "(Lustre, CephFS, JuiceFS, GPFS, Mountpoint for S3, blobfuse2, ESHUTDOWN on a path). Everything else as "
              "in 2026-11z.",
    tagger_version="16+i15+ml7+l2",
    infra_rules=infra.INFRA_V15,
),)
TAGGING_CONFIGS += (replace(
    TAGGING_CONFIGS[-1],
    id="tagging:2026-11zb",
    changelog="Rules version 17, from a second round of program templates (OpenMMLab, detectron2, ultralytics, fairseq, "
              "ESPnet, OpenNMT-py, torchaudio, soundfile): texts version 16 left unclassified or read as a missing "
              "path, a syntax error or a missing key although they say otherwise (ultralytics' SyntaxError for a data "
              "YAML key or an argument, a registry's duplicate name, an audio backend that is not installed, fairseq's "
              "checkpoint, dictionary and argument checks, mmcv's ops, data readers' rejections...). Everything else as "
              "in 2026-11za.",
    tagger_version="17+i15+ml7+l2",
    tag=tagger.RULES_V17.tag,
),)
TAGGING_CONFIGS += (replace(
    TAGGING_CONFIGS[-1],
    id="tagging:2026-11zc",
    changelog="The learned fallback ml8: ml7's recipe, trained on ml7's data plus heldout6 (retired into training data "
              "when heldout7 was collected) and the 471 program templates with a study category, each with its "
              "reader's category (bench/learned.md). Rules as in 2026-11zb.",
    tagger_version="17+i15+ml8+l2",
    learned_model="learned_model_ml8.json",
),)
TAGGING_CONFIGS += (replace(
    TAGGING_CONFIGS[-1],
    id="tagging:2026-11zd",
    changelog="Infrastructure rules version 16: a node the launcher cannot reach over ssh (OpenSSH's 'ssh: connect to "
              "host X port 22: No route to host', timed out, refused...; DeepSpeed's pdsh runner, mpirun) is node_lost, "
              "to retry without it; a server or node named by name where only its address was read (the NFS client's "
              "server, ssh's and pdsh's target) is a suspect node. Everything else as in 2026-11zc.",
    tagger_version="17+i16+ml8+l2",
    infra_rules=infra.INFRA_V16,
),)
TAGGING_CONFIGS += (replace(
    TAGGING_CONFIGS[-1],
    id="tagging:2026-11ze",
    changelog="A log pasted whole in a blockquote (Markdown's and e-mail's '> ' on most lines, as issues, tickets and "
              "mails quote one) is read without it, as a collector's prefix is: its traceback, frames and exception "
              "line parse as printed (collectors.unquoted). Everything else as in 2026-11zd.",
    tagger_version="17+i16+ml8+l2q",
    quoted_pastes=True,
),)
TAGGING_CONFIGS += (replace(
    TAGGING_CONFIGS[-1],
    id="tagging:2026-11zf",
    changelog="Rules version 18: an error Keras re-raised from a layer call ('Exception encountered when calling layer "
              "X (type Y).' or Keras 3's '... when calling Y.call().', then the error, then 'Call arguments received "
              "by layer ...') is read by the error between Keras' header and the arguments it lists: inside TF's AutoGraph "
              "'in user code:', where version 17 read only the header, and at the top of a traceback, where the "
              "parser's message ends at the blank line after the header (the lines up to Keras' list of arguments are "
              "read for the tag; the message and signature are unchanged). Everything else as in 2026-11ze.",
    tagger_version="18+i16+ml8+l2q",
    tag=tagger.RULES_V18.tag,
    keras_call_errors=True,
),)
TAGGING_CONFIGS += (replace(
    TAGGING_CONFIGS[-1],
    id="tagging:2026-11zg",
    changelog="Rules version 19, from a third round of program templates (tests/fixtures/program_templates3: NumPy, "
              "pandas, scikit-learn, SciPy; Pillow, OpenCV, PyAV, decord, imageio, nibabel, SimpleITK, pydicom; the CUDA "
              "stack, torch.compile and Triton; torch.distributed, accelerate, DeepSpeed, Horovod, Ray; peft, trl, "
              "bitsandbytes, xformers, flash-attn, vLLM, sentencepiece, tokenizers, tiktoken; hydra, omegaconf, YAML, "
              "pydantic, jsonschema, wandb, MLflow, ONNX): media and model files that do not decode (before, OSError's "
              "default read a missing path), codecs and builds a package lacks, compilers and toolchains, a CUDA graph "
              "capture (before, a permission), arrays' shapes and dtypes in NumPy's, pandas', scikit-learn's and the "
              "kernels' words, APIs used out of their order, vLLM's KV cache. Everything else as in 2026-11zf.",
    tagger_version="19+i16+ml8+l2q",
    tag=tagger.RULES_V19.tag,
),)
TAGGING_CONFIGS += (replace(
    TAGGING_CONFIGS[-1],
    id="tagging:2026-11zh",
    changelog="Rules version 20: third-round templates that version 19 left unclassified although their producers' words "
              "name a category: a configuration key that is not there (omegaconf's ConfigKeyError, hydra's missing "
              "_target_, tokenizers' unknown token), wandb's missing API key, pandas' NaN cast to integer and SimpleITK's "
              "and pydicom's decoders, inductor's missing lowering, an unknown torch.compile backend or rendezvous "
              "scheme, a dtype nibabel cannot store. Everything else as in 2026-11zg.",
    tagger_version="20+i16+ml8+l2q",
    tag=tagger.RULES_V20.tag,
),)
TAGGING_CONFIGS += (replace(
    TAGGING_CONFIGS[-1],
    id="tagging:2026-11zi",
    changelog="The learned fallback ml9: ml8's recipe, trained on ml8's data plus the third round of program templates "
              "with a study category (tests/fixtures/program_templates3, 405), each with its reader's category "
              "(bench/learned.md). Rules as in 2026-11zh.",
    tagger_version="20+i16+ml9+l2q",
    learned_model="learned_model_ml9.json",
),)
TAGGING_CONFIGS += (replace(
    TAGGING_CONFIGS[-1],
    id="tagging:2026-11zj",
    changelog="A traceback the log ends inside, whose deepest frame shows a `raise` or `assert` statement, is read as the "
              "exception that statement raises (`assert cond, 'message'` an AssertionError with its message, `raise "
              "Type('message')` a Type), before the lines above it; and the frames a log ends with when their "
              "'Traceback (most recent call last):' header was not pasted (two or more, indented or not; not a thread "
              "dump) are such a cut traceback, where no other failure was parsed. Everything else as in 2026-11zi.",
    tagger_version="20+i16+ml9+l2qs",
    cut_statements=True,
),)
TAGGING_CONFIGS += (replace(
    TAGGING_CONFIGS[-1],
    id="tagging:2026-11zk",
    changelog="Rules version 21, from a fourth round of program templates (tests/fixtures/program_templates4: PyG, DGL, "
              "Gymnasium, stable-baselines3, MuJoCo; PyTorch3D, Open3D, kornia, einops, spconv, MinkowskiEngine; "
              "transformers' models, diffusers, timm, open_clip, evaluate; torch.nn and torchmetrics; JAX, Flax, Optax, "
              "Orbax, Keras 3, TF's kernels; PaddlePaddle, MindSpore, MXNet): shapes, API contracts, registries, native "
              "builds, ids out of range, non-finite values, files that do not parse, dtypes, GPU memory and model paths "
              "in their producers' words, where version 20 took a type's default or said nothing. Everything else as "
              "in 2026-11zj.",
    tagger_version="21+i16+ml9+l2qs",
    tag=tagger.RULES_V21.tag,
),)
TAGGING_CONFIGS += (replace(
    TAGGING_CONFIGS[-1],
    id="tagging:2026-11zm",
    changelog="From heldout7, retired into development data when heldout8 was collected. Rules version 22: SciPy's "
              "'matrix contains invalid numeric entries', icefall's collapsed loss scale (loss_nan); old "
              "PyTorch's 'is not implemented for type torch.cuda.LongTensor' (type_mismatch); TF 1.x's shared variable "
              "of another shape; TorchScript's unquoted missing attribute; SimpleITK's ImageIO; a CUDA-only op given "
              "CPU tensors; the binary cross-entropy kernel's input-range assertion (illegal_argument). A log that ends "
              "among a CUDA kernel's 'Assertion `...` failed.' lines is read as the device-side assert they are, and an "
              "exception name cut after its module path ('errors_impl.InvalidA') by the type it names; an exception "
              "line with an empty message (TorchScript's 'RuntimeError: ' with its message below) is read by the line "
              "under it. Everything else as in 2026-11zk.",
    tagger_version="22+i16+ml9+l2qs",
    tag=tagger.RULES_V22.tag,
    kernel_asserts=True,
    qualified_cut_names=True,
    torchscript_messages=True,
),)
TAGGING_CONFIGS += (replace(
    TAGGING_CONFIGS[-1],
    id="tagging:2026-11zn",
    changelog="The learned fallback ml10: ml9's recipe, trained on ml9's data plus heldout7 (retired into development data "
              "when heldout8 was collected) and the fourth round of program templates with a study category "
              "(bench/learned.md). Rules as in 2026-11zm.",
    tagger_version="22+i16+ml10+l2qs",
    learned_model="learned_model_ml10.json",
),)


def grouping_config(config: str | GroupingConfig | None = None) -> GroupingConfig:
    """The config with this id (None: the newest). A GroupingConfig is returned as it is."""
    return _select(config, GROUPING_CONFIGS, GroupingConfig, "grouping")


def tagging_config(config: str | TaggingConfig | None = None) -> TaggingConfig:
    """The config with this id (None: the newest). A TaggingConfig is returned as it is."""
    return _select(config, TAGGING_CONFIGS, TaggingConfig, "tagging")


def _select(config, configs: tuple, kind: type, family: str):
    if config is None:
        return configs[-1]
    if isinstance(config, kind):
        return config
    for candidate in configs:
        if candidate.id == config:
            return candidate
    raise UnknownConfig(f"unknown {family} config {config!r}; known: {', '.join(c.id for c in configs)}")
