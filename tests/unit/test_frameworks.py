"""Frameworks and wrappers (tagging:2026-11c, #14.5): MXNet, JAX, Lightning, TF root errors, launcher
summaries by exit code and signal, logs cut inside a traceback. Pure functions: no server."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from jobs_ingest.core import analyse_text, frameworks

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "frameworks"

TORCHRUN_HEAD = """Traceback (most recent call last):
  File "/usr/local/bin/torchrun", line 8, in <module>
    sys.exit(main())
  File "/usr/local/lib/python3.10/dist-packages/torch/distributed/launcher/api.py", line 264, in launch_agent
    raise ChildFailedError(
torch.distributed.elastic.multiprocessing.errors.ChildFailedError: 
============================================================
train.py FAILED
------------------------------------------------------------
Failures:
  <NO_OTHER_FAILURES>
------------------------------------------------------------
Root Cause (first observed failure):
[0]:
  time      : 2024-09-09_09:36:56
  host      : node-7
  rank      : 1 (local_rank: 1)
"""


def torchrun_summary(exitcode: int, traceback: str) -> str:
    return TORCHRUN_HEAD + f"""  exitcode  : {exitcode} (pid: 3309)
  error_file: <N/A>
  traceback : {traceback}
============================================================
"""


# --- torchrun / launcher signals -------------------------------------------------------------------
def test_bare_sigkill_is_said_plainly_with_low_confidence():
    a = analyse_text("epoch 3 step 100 loss 0.41\n" + torchrun_summary(-9, "Signal 9 (SIGKILL) received by PID 3309"))
    assert (a.category, a.rule, a.confidence) == ("cpu_oom", "cpu_oom.signal_sigkill", 0.5)
    assert "no memory evidence" in a.evidence


def test_sigkill_with_oom_killer_lines_is_cpu_oom():
    log = ("[12345.6] Out of memory: Killed process 3309 (python) total-vm:81234567kB\n"
           + torchrun_summary(-9, "Signal 9 (SIGKILL) received by PID 3309"))
    a = analyse_text(log)
    assert a.category == "cpu_oom" and a.confidence > 0.8 and "Out of memory: Killed process" in a.evidence
    # memory evidence that is no failure line of its own: the launcher's summary decides, with it.
    log = ("slurmstepd: warning: step 7 memory limit exceeded, usage 81234567K\n"
           + torchrun_summary(-9, "Signal 9 (SIGKILL) received by PID 3309"))
    a = analyse_text(log)
    assert (a.category, a.rule) == ("cpu_oom", "cpu_oom.child_sigkill_memory") and "memory limit exceeded" in a.evidence


@pytest.mark.parametrize("code,name", [(-11, "sigsegv"), (-6, "sigabrt"), (-7, "sigbus")])
def test_other_signals_are_said_plainly(code, name):
    a = analyse_text(torchrun_summary(code, f"Signal {-code} (SIG{name.upper()}) received by PID 3309"))
    assert (a.category, a.rule) == ("unclassified", f"unclassified.signal_{name}")
    assert name.upper() in a.evidence


def test_exit_code_1_with_the_childs_traceback_earlier_the_child_wins():
    child = ('[rank1]: Traceback (most recent call last):\n[rank1]:   File "train.py", line 9, in <module>\n'
             "[rank1]:     open(args.data)\n"
             "[rank1]: FileNotFoundError: [Errno 2] No such file or directory: '/data/train.json'\n")
    a = analyse_text(child + torchrun_summary(1, "To enable traceback see: https://pytorch.org/docs/stable/elastic/errors.html"))
    assert a.category == "path_not_found" and a.exception_type == "FileNotFoundError"


def test_exit_code_1_without_the_childs_error_names_the_exit_code():
    a = analyse_text(torchrun_summary(1, "To enable traceback see: https://pytorch.org/docs/stable/elastic/errors.html"))
    assert (a.category, a.rule) == ("unclassified", "unclassified.child_exit_code") and "code 1" in a.evidence


def test_spawn_and_called_process_error_signals():
    spawn = analyse_text("Traceback (most recent call last):\n  File \"x.py\", line 1, in <module>\n    main()\n"
                         "Exception: process 1 terminated with signal SIGKILL\n")
    assert spawn.rule == "cpu_oom.signal_sigkill"
    segv = analyse_text("subprocess.CalledProcessError: Command '['python', 'train.py']' returned non-zero exit status -11.\n")
    assert (segv.category, segv.rule) == ("unclassified", "unclassified.signal_sigsegv")


def test_the_released_configs_keep_their_sigkill_answer():
    log = torchrun_summary(-9, "Signal 9 (SIGKILL) received by PID 3309")
    for config in ("tagging:2026-11", "tagging:2026-11b"):
        assert analyse_text(log, tagging_config=config).category == "cpu_oom"
        assert analyse_text(log, tagging_config=config).confidence >= 0.8


def test_child_exit_reads_the_root_cause_first():
    lines = torchrun_summary(-11, "Signal 11 (SIGSEGV) received by PID 1").splitlines()
    lines[9:9] = ["[1]:", "  exitcode  : 1 (pid: 2)"]   # another rank, listed before the root cause
    assert frameworks.child_exit(lines, 0, len(lines)) == (-11, 11)


# --- TensorFlow root errors ------------------------------------------------------------------------
def test_tf_root_error_is_judged_by_its_first_sub_error():
    log = ("InvalidArgumentError: Graph execution error:\n\n2 root error(s) found.\n"
           "  (0) INVALID_ARGUMENT:  Unknown image file format. One of JPEG, PNG, GIF, BMP required.\n"
           "\t [[{{node decode_image/DecodeImage}}]]\n  (1) CANCELLED:  Function was cancelled before it was started\n"
           "0 successful operations.\n0 derived errors ignored. [Op:__inference_train_function_18868]\n")
    a = analyse_text(log)
    assert a.category == "corrupt_data" and a.rule.endswith(".tf_root_error")
    old = analyse_text("NotFoundError: 2 root error(s) found.\n  (0) Not found: /data/x.tfrecord; No such file or directory\n")
    assert old.category == "path_not_found"


def test_tf_root_error_without_a_readable_sub_error_is_plain():
    a = analyse_text("NotFoundError: 2 root error(s) found.\n  (0) Not found:  2 root error(s) found.\n")
    assert (a.category, a.rule) == ("unclassified", "unclassified.tf_root_error")


def test_tf1_see_above_line():
    a = analyse_text("NotFoundError (see above for traceback): /tmp/mnist/mnist_train.tfrecord\n"
                     "\t [[Node: parallel_read/ReaderRead_1 = ReaderRead[]]]\n")
    assert a.category == "path_not_found" and a.exception_type == "NotFoundError"


def test_look_alike_tf_errors_stay_put():
    assert analyse_text("InvalidArgumentError: Incompatible shapes: [32,10] vs. [16,10]\n").category == "tensor_mismatch"
    prose = analyse_text("INFO: we found 2 root error(s) found. in the docs\nKeyError: 'lr'\n")
    assert prose.category == "key_not_found"


# --- MXNet, JAX, Lightning -------------------------------------------------------------------------
@pytest.mark.parametrize("line,category", [
    ("mxnet.base.MXNetError: [17:13:00] src/operator/nn/./../mxnet_op.h:576: Check failed: err == cudaSuccess "
     "(2 vs. 0) Name: mxnet_generic_kernel ErrStr:out of memory", "gpu_oom"),
    ("mxnet.base.MXNetError: [10:31:51] src/operator/tensor/./matrix_op-inl.h:688: Check failed: b < len (8084 vs. 4116)"
     " : slicing with begin[1]=8084 exceeds limit of input dimension[1]=4116", "illegal_index"),
    ("mxnet.base.MXNetError: [08:47:13] src/storage/storage.cc:119: Compile with USE_CUDA=1 to enable GPU usage",
     "library_not_found"),
    ("mxnet.base.MXNetError: Error in operator conv0: Shape inconsistent, Provided = [64,3,7,7], inferred shape=[64,1,7,7]",
     "tensor_mismatch"),
])
def test_mxnet_engine_checks(line, category):
    a = analyse_text(line + "\n")
    assert a.category == category and a.exception_type == "mxnet.base.MXNetError"


def test_mxnet_check_failed_without_known_text_stays_unsure():
    a = analyse_text("mxnet.base.MXNetError: [20:11:53] src/operator/nn/mkldnn/mkldnn_base.cc:528: Check failed: similar\n",
                     tagging_config="tagging:2026-11c")
    assert not a.rule.startswith(("gpu_oom.mxnet", "tensor_mismatch.mxnet", "illegal_index.mxnet"))


@pytest.mark.parametrize("exc", ["jax.errors.ConcretizationTypeError: Abstract tracer value encountered where concrete "
                                 "value is expected: Traced<ShapedArray(bool[])>",
                                 "jax.errors.TracerArrayConversionError: The numpy.ndarray conversion method "
                                 "__array__() was called on traced array with shape float32[3]",
                                 "jax.errors.UnexpectedTracerError: Encountered an unexpected tracer."])
def test_jax_tracer_errors(exc):
    a = analyse_text(exc + "\n")
    assert (a.category, a.rule) == ("framework_api_misuse", "framework_api_misuse.jax_tracer")


def test_lightning_misconfiguration():
    a = analyse_text("lightning_fabric.utilities.exceptions.MisconfigurationException: No `test_dataloader()` method "
                     "defined to run `Trainer.test`.\n")
    assert (a.category, a.rule) == ("framework_api_misuse", "framework_api_misuse.type.MisconfigurationException")
    # Its message rules come first: a missing package is still a missing package.
    b = analyse_text("MisconfigurationException: No module named 'tensorboard'. Please install it.\n")
    assert b.category == "library_not_found"


# --- logs cut inside a traceback -------------------------------------------------------------------
CUT = """Traceback (most recent call last):
  File "train.py", line 40, in <module>
    main()
  File "train.py", line 31, in main
    ds = load(args.data)
"""


def test_truncated_traceback_uses_the_error_before_it():
    a = analyse_text("ERROR: cannot open /data/train.json: No such file or directory\n" + CUT)
    assert a.category == "path_not_found" and a.rule.endswith(".truncated") and a.confidence <= 0.6
    assert "ends inside a traceback" in a.evidence


def test_truncated_traceback_without_context_says_so():
    a = analyse_text("epoch 1 loss 0.3\n" + CUT)
    assert (a.category, a.rule) == ("unclassified", "unclassified.truncated_traceback")
    assert "train.py:31 in main" in a.message and a.found


def test_truncated_launcher_traceback_reads_the_exit_code_before_it():
    log = ("ERROR:torch.distributed.elastic.multiprocessing.api:failed (exitcode: -11) local_rank: 0 (pid: 5) of binary: python\n"
           "Traceback (most recent call last):\n  File \"/usr/bin/torchrun\", line 8, in <module>\n    sys.exit(main())\n"
           "  File \"/usr/lib/python3/site-packages/torch/distributed/launcher/api.py\", line 264, in launch_agent\n"
           "    raise ChildFailedError(\n")
    a = analyse_text(log)
    assert a.rule == "unclassified.signal_sigsegv.truncated"


def test_complete_traceback_and_chain_continuation_stay_put():
    assert analyse_text(CUT + "KeyError: 'lr'\n").category == "key_not_found"
    chained = ("Traceback (most recent call last):\n  File \"a.py\", line 1, in f\n    g()\nKeyError: 'lr'\n\n"
               "During handling of the above exception, another exception occurred:\n\n" + CUT)
    assert analyse_text(chained).category == "key_not_found"


# --- the real fixtures (dev split only; the held-out split is measured once by bench/eval_frameworks.py) ----
def _dev_cases():
    for line in (FIXTURES / "cases.jsonl").read_text().splitlines():
        case = json.loads(line)
        if case["split"] == "dev":
            yield case


KNOWN_MISSES = {
    "fw-018": "MisconfigurationException 'You requested GPUs: [0]' with the machine's list on the next line, "
              "outside the parsed message",
    "fw-033": "TF internal 'Retval[0] does not have value' takes InvalidArgumentError's type default",
}


@pytest.mark.parametrize("case", list(_dev_cases()), ids=lambda c: c["id"])
def test_dev_fixture(case):
    if case["id"] in KNOWN_MISSES:
        pytest.xfail(KNOWN_MISSES[case["id"]])
    a = analyse_text((FIXTURES / case["file"]).read_text())
    assert a.category == case["category"], (a.rule, a.evidence)


# --- tagging:2026-11d: rules version 6 and native backtraces -------------------------------------------

DMLC_FATAL = ("[06:58:53] /home/travis/build/dmlc/mxnet-distro/mxnet-build/dmlc-core/include/dmlc/logging.h:308: "
              "[06:58:53] src/storage/storage.cc:113: {message}\n\nStack trace returned 10 entries:\n"
              + "".join(f"[bt] ({i}) /env/lib/python3.6/site-packages/mxnet/libmxnet.so(+0x{i}c78bc) [0x7fabe50668bc]\n"
                        for i in range(10)))


def test_a_fatal_framework_message_before_a_native_backtrace_is_read():
    log = "step 10 loss 2.1\n" + DMLC_FATAL.format(message="Compile with USE_CUDA=1 to enable GPU usage")
    a = analyse_text(log)
    assert (a.category, a.rule) == ("library_not_found", "library_not_found.no_gpu_build.unparsed_tail")
    assert "USE_CUDA=1" in a.failure_line
    assert analyse_text(log, tagging_config="tagging:2026-11c").category == "unclassified"   # released: unchanged


def test_a_cut_traceback_after_a_native_backtrace_is_judged_by_the_error_before_both():
    log = (DMLC_FATAL.format(message="Operator _zeros cannot be run; requires at least one of FCompute<xpu>, "
                                     "NDArrayFunction, FCreateOperator be registered")
           + '\nTraceback (most recent call last):\n  File "detect.py", line 116, in <module>\n    x = nd.zeros((2, 2), ctx=mx.gpu())\n')
    a = analyse_text(log)
    assert (a.category, a.rule) == ("not_implemented", "not_implemented.no_kernel.truncated")


@pytest.mark.parametrize("log, category, rule", [
    ("Segmentation fault: 11\nStack trace:\n  [bt] (0) /x/libmxnet.so(+0x2981500) [0x7f16104ba500]\n",
     "unclassified", "unclassified.native_crash"),
    ("epoch 1\nFloating point exception (core dumped)\n", "division_by_zero", "division_by_zero.sigfpe.unparsed_tail"),
    ("OSError: [WinError 126] The specified module could not be found. Error loading \"c10.dll\"\n",
     "library_not_found", "library_not_found.windows_dll"),
    ("tensorflow.python.framework.errors_impl.InvalidArgumentError: No OpKernel was registered to support Op "
     "'NcclAllReduce' used by {{node NcclAllReduce}} with these attrs: [reduction=\"sum\"]\n",
     "not_implemented", "not_implemented.no_kernel"),
    ("tensorflow.python.framework.errors_impl.InvalidArgumentError: Shapes of all inputs must match: values[0].shape "
     "= [512] != values[1].shape = [10]\n", "tensor_mismatch", "tensor_mismatch.tf_ops"),
    ("tensorflow.python.framework.errors_impl.DataLossError: Attempted to pad to a smaller size than the input "
     "element. [Op:IteratorGetNext]\n", "tensor_mismatch", "tensor_mismatch.tf_ops"),
    ("tensorflow.python.framework.errors_impl.InternalError: Dst tensor is not initialized.\n", "gpu_oom",
     "gpu_oom.tf_gpu_memory_symptoms"),
    ("ImportError: Extension horovod.tensorflow has not been built.  If this is not expected, reinstall Horovod with "
     "HOROVOD_WITH_TENSORFLOW=1 to debug the build error.\n", "library_not_found", "library_not_found.horovod_extension"),
    ("IndexError: shape mismatch: indexing tensors could not be broadcast together with shapes [4], [5]\n",
     "illegal_index", "illegal_index.index_tensors"),
    ("RuntimeError: Device index must not be negative\n", "illegal_argument", "illegal_argument.device_index"),
    ("pytorch_lightning.utilities.exceptions.MisconfigurationException: ModelCheckpoint(monitor='val_acc') not found "
     "in the returned metrics: ['train_loss']\n", "illegal_argument", "illegal_argument.lightning_monitor"),
    ("RuntimeError: CUDA error: an illegal memory access was encountered\n", "unclassified",
     "unclassified.cuda_illegal_memory_access"),
    ("Loading checkpoint shards:  33%|███▋       | 1/3 [00:49<01:39, 49.95s/it]Killed\n", "cpu_oom",
     "cpu_oom.killed_after_progress.unparsed_tail"),
    ("RuntimeError: probability tensor contains either `inf`, `nan` or element < 0\n", "loss_nan",
     "loss_nan.probabilities"),
    ("RuntimeError: The world_size(8) > 1, but the distributed package is not available or has not been initialized.\n",
     "framework_api_misuse", "framework_api_misuse.dist_not_initialized"),
    ("Exception: Could not find the transformer layer class to wrap in the model.\n", "illegal_argument",
     "illegal_argument.fsdp_wrap_class"),
    ("OSError: Unable to load weights from pytorch checkpoint file for 'm/pytorch_model-00001-of-00002.bin' at "
     "'m/pytorch_model-00001-of-00002.bin'.\n", "corrupt_data", "corrupt_data.hf_files"),
    ("datasets.exceptions.DatasetGenerationError: An error occurred while generating the dataset\n", "corrupt_data",
     "corrupt_data.hf_files"),
])
def test_rules_version_6(log, category, rule):
    a = analyse_text(log)
    assert (a.category, a.rule) == (category, rule)


def test_a_bare_native_crash_is_said_plainly_and_no_model_guesses():
    a = analyse_text("Segmentation fault: 11\n")
    assert (a.category, a.rule) == ("unclassified", "unclassified.native_crash")
    assert not analyse_text("Segmentation fault: 11\n", tagging_config="tagging:2026-11c").rule.startswith(
        "unclassified.native")


@pytest.mark.parametrize("log, category, rule", [
    ("[2023-04-14 13:11:27,879] [INFO] [launch.py:428:sigkill_handler] Killing subprocess 13266\n"
     "[2023-04-14 13:11:27,885] [ERROR] [launch.py:434:sigkill_handler] ['/usr/bin/python3', '-u', 'main.py', "
     "'--local_rank=0'] exits with return code = -9\n", "cpu_oom", "cpu_oom.signal_sigkill"),
    ("WARNING:torch.distributed.elastic.multiprocessing.api:failed (exitcode: -11) local_rank: 0 (pid: 77) of binary: "
     "/usr/bin/python3\n", "unclassified", "unclassified.signal_sigsegv"),
])
def test_a_log_ending_on_a_launchers_exit_report_is_read_by_it(log, category, rule):
    a = analyse_text(log)
    assert (a.category, a.rule) == (category, rule)
    assert analyse_text(log, tagging_config="tagging:2026-11c").rule == "unclassified.no_failure_in_log"


def test_another_wrappers_words_for_a_failed_child_give_its_exit_status_not_a_guess():
    log = ('Traceback (most recent call last):\n  File "train.py", line 175, in launch_cmd\n    raise RuntimeError(msg)\n'
           "RuntimeError: Step 1 exited with non-zero status 1\n")
    a = analyse_text(log)
    assert (a.category, a.rule) == ("unclassified", "unclassified.child_exit_code")
    assert "code 1" in a.evidence


def test_a_tf_op_creation_trace_after_the_error_is_not_the_error():
    log = ("ERROR:tensorflow:Error recorded from training_loop: Restoring from checkpoint failed. Original error:\n\n"
           "Key decoder/block_000/layer_000/SelfAttention/relative_attention_bias not found in checkpoint\n"
           "         [[node save/RestoreV2_1 (defined at /lib/python3.6/site-packages/tensorflow_core/python/framework/"
           "ops.py:1748) ]]\n\nOriginal stack trace for 'save/RestoreV2_1':\n"
           '  File "/bin/t5_mesh_transformer", line 8, in <module>\n    sys.exit(console_entry_point())\n'
           '  File "/lib/python3.6/site-packages/t5/models/mesh_transformer_main.py", line 212, in main\n'
           "    model_dir=FLAGS.model_dir)\n")
    a = analyse_text(log)
    assert (a.category, a.rule) == ("tensor_mismatch", "tensor_mismatch.checkpoint.unparsed_tail")
    assert "not found in checkpoint" in a.failure_line
    assert analyse_text(log, tagging_config="tagging:2026-11c").category == "unclassified"


# --- tagging:2026-11e: rules version 7, families of messages in their producers' words ------------------

TRACEBACK_HEAD = 'Traceback (most recent call last):\n  File "train.py", line 12, in <module>\n    main()\n'

@pytest.mark.parametrize("message, category, rule", [
    ("RuntimeError: Error building extension 'fused_adam'", "library_not_found", "library_not_found.extension_build"),
    ("RuntimeError: Ninja is required to load C++ extensions", "library_not_found", "library_not_found.extension_build"),
    ("RuntimeError:\nThe detected CUDA version (12.1) mismatches the version that was used to compile\nPyTorch (11.7). "
     "Please make sure to use the same CUDA versions.", "library_not_found", "library_not_found.extension_build"),
    ("OSError: CUDA_HOME environment variable is not set. Please set it to your CUDA install root.",
     "library_not_found", "library_not_found.extension_build"),
    ("ValueError: numpy.ndarray size changed, may indicate binary incompatibility. Expected 96 from C header, got 88 "
     "from PyObject", "library_not_found", "library_not_found.binary_incompatible"),
    ("RuntimeError: Detected that PyTorch and torchvision were compiled with different CUDA major versions. PyTorch has "
     "CUDA Version=11.7 and torchvision has CUDA Version=10.2.", "library_not_found", "library_not_found.binary_incompatible"),
    ("RuntimeError: jaxlib version 0.4.7 is newer than and incompatible with jax version 0.3.25. Please update your jax "
     "and/or jaxlib packages.", "library_not_found", "library_not_found.binary_incompatible"),
    ("RuntimeError: Not compiled with GPU support", "library_not_found", "library_not_found.cpu_only_build"),
    ("RuntimeError: Failed to import transformers.models.llama.modeling_llama because of the following error (look up "
     "to see its traceback):\nNo module named 'flash_attn'", "library_not_found", "library_not_found.lazy_import"),
    ("omegaconf.errors.MissingMandatoryValue: Missing mandatory value: model.name", "illegal_argument",
     "illegal_argument.config_validation"),
    ("pydantic.error_wrappers.ValidationError: 1 validation error for DeepSpeedZeroConfig\nstage\n  value is not a "
     "valid integer (type=type_error.integer)", "illegal_argument", "illegal_argument.config_validation"),
    ("RuntimeError: CUDA error: invalid device ordinal", "illegal_argument", "illegal_argument.device_ordinal"),
    ("AssertionError: Image Not Found ../datasets/coco/images/train2017/000000000009.jpg", "path_not_found",
     "path_not_found.named_path_missing"),
    ("RuntimeError: Dataset not found at data/VOC2007", "path_not_found", "path_not_found.named_path_missing"),
    ("ValueError: Can't find a checkpoint index (checkpoint-1000) in ./output.", "path_not_found",
     "path_not_found.named_path_missing"),
    ("ValueError: Target size (torch.Size([16])) must be the same as input size (torch.Size([16, 1]))",
     "tensor_mismatch", "tensor_mismatch.shape_texts"),
    ("ValueError: all the input array dimensions for the concatenation axis must match exactly, but along dimension 1, "
     "the array at index 0 has size 3 and the array at index 1 has size 2", "tensor_mismatch", "tensor_mismatch.shape_texts"),
    ("TypeError: dot_general requires contracting dimensions to have the same shape, got (10,) and (20,).",
     "tensor_mismatch", "tensor_mismatch.shape_texts"),
    ("tensorflow.python.framework.errors_impl.InvalidArgumentError: Nan in summary histogram for: conv1/weights",
     "loss_nan", "loss_nan.tf_summary_histogram"),
    ("RuntimeError: CUDA error: CUBLAS_STATUS_NOT_INITIALIZED when calling `cublasCreate(handle)`", "gpu_oom",
     "gpu_oom.cublas_create"),
    ("Exception: Invalid value for argument --model: resnet500", "illegal_argument", "illegal_argument.argument_words"),
    ("RuntimeError: Unknown model name: vit_hug_patch14", "illegal_argument", "illegal_argument.argument_words"),
    ("RuntimeError: num_samples should be a positive integer value, but got num_samples=0", "illegal_argument",
     "illegal_argument.argument_words"),
])
def test_rules_v7_read_families_of_messages(message, category, rule):
    log = TRACEBACK_HEAD + message + "\n"
    a = analyse_text(log, tagging_config="tagging:2026-11e")
    assert (a.category, a.rule) == (category, rule), a.evidence
    assert analyse_text(log, tagging_config="tagging:2026-11d").rule != rule   # released: unchanged


@pytest.mark.parametrize("message, category", [
    # an exception type or a more specific rule says more than the argument words
    ("TypeError: max() received an invalid combination of arguments - got (numpy.ndarray, dim=int)", "type_mismatch"),
    ("RuntimeError: The size of tensor a (512) must match the size of tensor b (1024) at non-singleton dimension 1",
     "tensor_mismatch"),
    ("KeyError: 'unknown model'", "key_not_found"),
    # a library that is missing is not a missing path, even with a path in the line
    ("OSError: libcudart.so.11.0: cannot open shared object file: No such file or directory", "library_not_found"),
    ("ImportError: /lib/x86_64-linux-gnu/libstdc++.so.6: version `GLIBCXX_3.4.29' not found (required by "
     "/opt/conda/lib/python3.9/site-packages/scipy/_uarray.so)", "library_not_found"),
    # a path in a line that says nothing is missing
    ("RuntimeError: Expected all tensors to be on the same device, but found at least two devices, cuda:0 and cpu! "
     "(when checking argument for argument mat1 in method wrapper_addmm)", "framework_api_misuse"),
])
def test_rules_v7_leave_what_other_rules_say(message, category):
    assert analyse_text(TRACEBACK_HEAD + message + "\n", tagging_config="tagging:2026-11e").category == category


@pytest.mark.parametrize("message, category, rule", [
    ("RuntimeError: UNIMPLEMENTED: Requested AllReduce not implemented on GPU; replica_count: 2", "not_implemented",
     "not_implemented.unimplemented_status"),
    ("TypeError: ('Keyword argument not understood:', 'interpolation')", "type_mismatch", "type_mismatch.keras_keyword"),
    ("tensorflow.python.framework.errors_impl.NotFoundError: No algorithm worked!\n\t [[{{node conv_81/convolution}}]]",
     "unclassified", "unclassified.cudnn_no_algorithm"),
    ("RuntimeError: Cannot find the files.\nList of candidates:\n/env/lib/python3.8/site-packages/dgl/libdgl.so",
     "library_not_found", "library_not_found.search_and_versions"),
    ("RuntimeError: DGL requires PyTorch >= 1.13.0", "library_not_found", "library_not_found.search_and_versions"),
    ("ValueError: Loss is not finite and patience is exhausted.", "loss_nan", "loss_nan.not_finite"),
    ("RuntimeError: function RasterizeFunctionBackward returned an incorrect number of gradients (expected 11, got 10)",
     "framework_api_misuse", "framework_api_misuse.torch_checks"),
    ("RuntimeError: aten::grid_sampler_2d_backward() is missing value for argument 'output_mask'.",
     "framework_api_misuse", "framework_api_misuse.torch_checks"),
    ("RuntimeError: all tensors must be on devices[0]", "framework_api_misuse", "framework_api_misuse.torch_checks"),
    ("RuntimeError: stack expects a non-empty TensorList", "illegal_argument", "illegal_argument.empty_input"),
    ("torchfile.T7ReaderException: unknown object type / typeidx: 68", "corrupt_data", "corrupt_data.reader_exceptions"),
    ("mmcv.Error: CascadeRCNN: SwinTransformer: __init__() got an unexpected keyword argument 'embed_dim'",
     "type_mismatch", "type_mismatch.call_signature"),
    ("RuntimeError: _Map_base::at", "key_not_found", "key_not_found.cpp_map_at"),
    ("AssertionError: fp32 param and grad have different shape torch.Size([5069312]) vs torch.Size([72192])",
     "tensor_mismatch", "tensor_mismatch.other_shape_texts"),
    ("ValueError: Trying to set a tensor of shape torch.Size([2048]) in \"bias\" (which has shape torch.Size([1280])), "
     "this looks incorrect.", "tensor_mismatch", "tensor_mismatch.other_shape_texts"),
    ("RuntimeError: Expected to mark a variable ready only once. This error is caused by one of the following reasons",
     "framework_api_misuse", "framework_api_misuse.torch_checks"),
    ("RuntimeError: indices should be either on cpu or on the same device as the indexed tensor (cpu)",
     "framework_api_misuse", "framework_api_misuse.torch_checks"),
    # an error whose message is another error: the inner one says why
    ("ValueError: TypeError: object of type 'RaggedTensor' has no len()", "type_mismatch", "type_mismatch.dtype"),
])
def test_rules_v7_statuses_keywords_and_nested_errors(message, category, rule):
    a = analyse_text(TRACEBACK_HEAD + message + "\n", tagging_config="tagging:2026-11e")
    assert (a.category, a.rule) == (category, rule), a.evidence


def test_an_exception_quoted_in_a_sentence_is_read_by_its_type():
    report = ("It still fails with the latest code: `TypeError: Axis must be specified when shapes of a and weights "
              "differ.` when I train on two GPUs.\n")
    a = analyse_text(report, tagging_config="tagging:2026-11e")
    assert (a.category, a.rule) == ("type_mismatch", "type_mismatch.type.TypeError.unparsed_tail")
    assert a.confidence <= 0.6 and "Axis must be specified" in a.failure_line
    assert analyse_text(report, tagging_config="tagging:2026-11d").category != "type_mismatch"   # released: unchanged


def test_a_shells_notice_of_a_killed_job_is_memory_by_convention():
    for notice in ("zsh: killed     python main.py", "/var/spool/slurmd/job77/slurm_script: line 12: 40211 Killed  python train.py"):
        a = analyse_text("epoch 3 step 120 loss 0.4\n" + notice + "\n", tagging_config="tagging:2026-11e")
        assert a.category == "cpu_oom" and a.rule.startswith("cpu_oom.shell_killed"), (notice, a.rule)


def test_a_launch_scripts_malformed_export_is_a_bad_argument():
    log = ("/bin/bash: line 1: export: `=/usr/bin/supervisord': not a valid identifier\n"
           "Error: failed to run torchrun --nproc_per_node=2 train_sft.py\n")
    a = analyse_text(log, tagging_config="tagging:2026-11e")
    assert a.category == "illegal_argument" and a.rule.startswith("illegal_argument.shell_identifier"), a.rule


def test_a_decode_error_of_text_stays_an_encoding_problem():
    a = analyse_text(TRACEBACK_HEAD + "UnicodeDecodeError: 'utf-8' codec can't decode byte 0x92 in position 7: invalid start byte\n",
                     tagging_config="tagging:2026-11e")
    assert a.category == "unexpected_encoding"


def test_an_error_quoted_in_backticks_above_a_log_without_one_is_read():
    log = ("The error is `ValueError: too many values to unpack (expected 2).` and it happens in evaluate.\n\n"
           + "".join(f"2022-10-13 12:51:{i:02d}.8 CEST\n  File \"/t5x/t5x/train.py\", line {600 + i}\n" for i in range(20)))
    a = analyse_text(log, tagging_config="tagging:2026-11e")
    assert (a.category, a.rule) == ("illegal_argument", "illegal_argument.type.ValueError.unparsed_tail")
    assert a.failure_line_number == 1


def test_an_error_quoted_before_a_cut_traceback_is_what_it_raises():
    log = ("The error we see is the following:\n`RuntimeError: Unimplemented: Requested AllReduce not implemented on GPU`\n\n"
           "Here the complete Traceback:\n" + TRACEBACK_HEAD + '  File "/jax/api.py", line 1564, in f_pmapped\n'
           "    global_arg_shapes=tuple(global_arg_shapes_flat))\n")
    a = analyse_text(log, tagging_config="tagging:2026-11e")
    assert (a.category, a.rule) == ("not_implemented", "not_implemented.unimplemented_status.truncated")


def test_a_message_printed_above_its_frames_is_read():
    # ComfyUI's form: the message first, then the frames (no header, no exception line below them)
    log = ("Error occurred when executing SAMLoader:\n\nPytorchStreamReader failed reading zip archive: failed finding "
           "central directory\n\n" + "".join(f'File "E:\\ComfyUI\\execution.py", line {50 + i}, in run\n'
                                             f"out = run(obj, data)\n^^^^^^^^^^^^^^^^^^\n" for i in range(6)))
    a = analyse_text(log, tagging_config="tagging:2026-11e")
    assert (a.category, a.rule) == ("corrupt_data", "corrupt_data.format.unparsed_tail")
    assert analyse_text(log, tagging_config="tagging:2026-11d").category == "unclassified"   # released: unchanged


# --- tagging:2026-11f: rules version 8 ---------------------------------------------------------------------

@pytest.mark.parametrize("message, category, rule", [
    ("RuntimeError: Check failed: *handle != nullptr CreateFileMapping() failed. GetLastError() = 1455",
     "cpu_oom", "cpu_oom.windows_commit_limit"),
    ("OSError: The paging file is too small for this operation to complete. (os error 1455)", "cpu_oom",
     "cpu_oom.windows_commit_limit"),
    ("RuntimeError: Internal: src/sentencepiece_processor.cc(1101) [model_proto->ParseFromArray(serialized.data(), "
     "serialized.size())]", "corrupt_data", "corrupt_data.sentencepiece_model"),
    ("RuntimeError: NCCL error: invalid usage, Duplicate GPU detected : rank 0 and rank 1 both on CUDA device 1a000",
     "illegal_argument", "illegal_argument.nccl_duplicate_gpu"),
    ("Exception: Error while deserializing header: first line was \"version https://git-lfs.github.com/spec/v1\"",
     "corrupt_data", "corrupt_data.git_lfs_pointer"),
    ("tensorflow.python.framework.errors_impl.UnimplementedError: File system scheme '[local]' not implemented (file: "
     "'train-images-idx3-ubyte')", "path_not_found", "path_not_found.tpu_local_path"),
    ("tensorflow.python.framework.errors_impl.FailedPreconditionError: Error while reading resource variable "
     "prune/mask from Container: localhost. This could mean that the variable was uninitialized. Not found: "
     "Resource localhost/prune/mask does not exist.", "framework_api_misuse", "framework_api_misuse.tf_graph_texts"),
    ("RuntimeError: unexpected EOF, expected 789915 more bytes. The file might be corrupted.", "corrupt_data",
     "corrupt_data.short_file_and_video_decode"),
    ("NullReferenceException: Object reference not set to an instance of an object", "null_reference",
     "null_reference.runtime_null"),
    ("olmo.exceptions.OLMoConfigurationError: Checkpoint for step 0 already exists, use --save_overwrite",
     "illegal_argument", "illegal_argument.config_error_type"),
    ("ValueError: No model found for dqn on SpaceInvadersNoFrameskip-v4, path: logs/dqn/SpaceInvadersNoFrameskip-v4.zip",
     "path_not_found", "path_not_found.named_path_missing"),
])
def test_rules_v8_read_more_producer_texts(message, category, rule):
    log = TRACEBACK_HEAD + message + "\n"
    a = analyse_text(log, tagging_config="tagging:2026-11f")
    assert (a.category, a.rule) == (category, rule), a.evidence
    assert analyse_text(log, tagging_config="tagging:2026-11e").rule != rule or rule == "path_not_found.named_path_missing"


def test_rules_v8_a_backslash_in_a_repr_is_no_path():
    log = TRACEBACK_HEAD + "KeyError: \"The following input nodes were not found: {'input'}\\n\"\n"
    assert analyse_text(log, tagging_config="tagging:2026-11e").category == "path_not_found"   # released: unchanged
    assert analyse_text(log, tagging_config="tagging:2026-11f").category == "key_not_found"


# --- tagging:2026-11h: rules version 9 and a closer reading of logs with no parsed failure ----------------------

@pytest.mark.parametrize("message, category, rule", [
    ("tensorflow.python.framework.errors_impl.InvalidArgumentError: Restoring from checkpoint failed. This is most "
     "likely due to a mismatch between the current graph and the graph from the checkpoint. Please ensure that you "
     "have not altered the graph expected based on the checkpoint.", "tensor_mismatch", "tensor_mismatch.tf_restore_graph"),
    ("ValueError: Expected parameter loc (Tensor of shape (1, 30)) of distribution Normal(loc: torch.Size([1, 30]), "
     "scale: torch.Size([1, 30])) to satisfy the constraint Real(), but found invalid values:\ntensor([[nan, nan, nan]])",
     "loss_nan", "loss_nan.distribution_nan"),
    ("RuntimeError: storage has wrong size: expected 0 got 512", "corrupt_data", "corrupt_data.torch_storage_size"),
    ("struct.error: 'i' format requires -2147483648 <= number <= 2147483647", "illegal_argument",
     "illegal_argument.struct_range"),
    ("ValueError: Cannot use 'model/while/MatMul' as input to 'model/while_1/Reshape' because they are in different "
     "while loops.", "framework_api_misuse", "framework_api_misuse.graph_and_tracer_texts"),
    ("ValueError: dataset attribute should not be set after DataLoader is initialized", "framework_api_misuse",
     "framework_api_misuse.graph_and_tracer_texts"),
    ("torch.jit._trace.TracingCheckError: Tracing failed sanity checks!\nERROR: Graphs differed across invocations!",
     "framework_api_misuse", "framework_api_misuse.graph_and_tracer_texts"),
    ("OSError: Error: [Errno 21] Is a directory: '/home/u/.cache/torch/hub/checkpoints/'", "path_not_found",
     "path_not_found.errno_directory"),
    ("librosa.util.exceptions.ParameterError: Buffer is too short (n=0) for frame_length=2048", "illegal_argument",
     "illegal_argument.type.ParameterError"),
    ("huggingface_hub.errors.HFValidationError: Repo id must be in the form 'repo_name' or 'namespace/repo_name': "
     "'/data/ckpt/llama'. Use `repo_type` argument if needed.", "illegal_argument", "illegal_argument.type.HFValidationError"),
    ("huggingface_hub.errors.GatedRepoError: 403 Client Error. Cannot access gated repo for url "
     "https://huggingface.co/org/model/resolve/main/config.json.", "permission_denied", "permission_denied.type.GatedRepoError"),
    ("marshmallow.exceptions.ValidationError: {'lr': ['Missing data for required field.']}", "illegal_argument",
     "illegal_argument.type.ValidationError"),
])
def test_rules_v9_read_more_producer_texts(message, category, rule):
    log = TRACEBACK_HEAD + message + "\n"
    a = analyse_text(log, tagging_config="tagging:2026-11h")
    assert (a.category, a.rule) == (category, rule), a.evidence
    assert analyse_text(log, tagging_config="tagging:2026-11g").rule != rule   # released: unchanged


def test_rules_v9_read_the_error_autograph_wrapped():
    log = TRACEBACK_HEAD + ("ValueError: in user code:\n\n    File \"train.py\", line 12, in step  *\n        logits = "
                            "model(x)\n\n    ValueError: Input 0 of layer \"dense\" is incompatible with the layer: "
                            "expected axis -1 of input shape to have value 784, but received input with shape (None, 28)\n")
    assert analyse_text(log, tagging_config="tagging:2026-11h").category == "tensor_mismatch"


@pytest.mark.parametrize("tail, category, rule", [
    # TF's root-error report printed by a trainer's logger (no exception raised to the top), quoted in Markdown: its
    # first sub-error's status decides.
    ("> Generated 64 train batches\n> Exiting due to exception: 1 root error(s) found.\n>   (0) Invalid argument: "
     "assertion failed: [Condition x == y did not hold element-wise:] [x = ] [15125] [y = ] [11000]\n>\t [[node "
     "model/assert_equal/Assert/Assert (defined at train.py:699) ]]\n>\t [[model/clip_by_value/_2571]]\n"
     "> 0 successful operations.\n> 0 derived errors ignored.\n", "illegal_argument", ".tail_root_error"),
    # A log cut inside its exception line.
    ("  File \"/srv/app/server.py\", line 4, in <module>\n    from parler_tts import ParlerTTSForConditionalGeneration\n"
     "ModuleNotFoun\n", "library_not_found", ".cut_name"),
    ("step 4\nAttributeErro\n", "attribute_not_found", ".cut_name"),
])
def test_version_9_reads_closer_a_log_with_no_parsed_failure(tail, category, rule):
    a = analyse_text(tail, tagging_config="tagging:2026-11h")
    assert (a.found, a.category) == (False, category) and a.rule.endswith(rule), a.rule
    assert a.confidence <= 0.6
    assert analyse_text(tail, tagging_config="tagging:2026-11g").category == "unclassified"   # released: unchanged


@pytest.mark.parametrize("last", ["Stage", "Error", "Exception done", "Unicod"])
def test_a_last_word_that_names_no_single_exception_is_not_read_as_one(last):
    # "Error" and "Unicod" begin several known names; a word that begins none is a word.
    assert analyse_text(f"step 4\n{last}\n", tagging_config="tagging:2026-11h").category == "unclassified"


# --- tagging:2026-11i: rules version 10 and glog / bare-name tails ------------------------------------------------

@pytest.mark.parametrize("message, category, rule", [
    ("RecursionError: maximum recursion depth exceeded while calling a Python object", "unclassified",
     "unclassified.recursion_limit"),
    ("RuntimeError: At least one of TensorFlow 2.0 or PyTorch should be installed. To install TensorFlow 2.0, read the "
     "instructions at https://www.tensorflow.org/install/", "library_not_found", "library_not_found.should_be_installed"),
    ("RuntimeError: [enforce fail at /pytorch/third_party/gloo/gloo/transport/tcp/device.cc:83] ifa != nullptr. Unable "
     "to find address for: ib0", "illegal_argument", "illegal_argument.gloo_interface"),
    ("RuntimeError: Expected object of type CUDAByteType but found type CUDAFloatType for argument #0 'result'",
     "type_mismatch", "type_mismatch.expected_object_type"),
    ("IndexError: Dimension out of range (expected to be in range of [-1, 0], but got 1)", "illegal_index",
     "illegal_index.dimension_out_of_range"),
    ("RuntimeError: Inference tensors cannot be saved for backward. To work around you can make a clone to get a "
     "normal tensor and use it in autograd.", "framework_api_misuse", "framework_api_misuse.inference_tensor"),
    ("RuntimeError: Index tensor must have the same number of dimensions as self tensor", "tensor_mismatch",
     "tensor_mismatch.index_tensor_rank"),
    ("ValueError: Expect node attribute `atom_feature` to have shape (8, *), but found torch.Size([4, 18])",
     "tensor_mismatch", "tensor_mismatch.to_have_shape"),
    ("tensorflow.python.framework.errors_impl.InvalidArgumentError: Key: segment_ids.  Can't parse serialized Example.",
     "corrupt_data", "corrupt_data.tf_record_or_image"),
    ("OverflowError: can't convert negative value to unsigned int", "illegal_argument",
     "illegal_argument.type.OverflowError"),
])
def test_rules_v10_read_more_producer_texts(message, category, rule):
    log = TRACEBACK_HEAD + message + "\n"
    a = analyse_text(log, tagging_config="tagging:2026-11i")
    assert (a.category, a.rule) == (category, rule), a.evidence
    assert analyse_text(log, tagging_config="tagging:2026-11h").rule != rule   # released: unchanged


def test_a_failed_check_on_sizes_is_a_tensor_mismatch():
    log = ("2019-04-04 15:36:40.879050: F tensorflow/core/grappler/costs/op_level_cost_estimator.cc:577] Check failed: "
           "iz == filter_shape.dim(in_channel_index).size() (8 vs. 16)\nAborted (core dumped)\n")
    assert analyse_text(log, tagging_config="tagging:2026-11i").category == "tensor_mismatch"


@pytest.mark.parametrize("tail, category, rule", [
    # A traceback pasted without its indentation, ending on the exception's bare name.
    ('File "jukebox/sample.py", line 258, in save_samples\nassert sample_hps.audio_file is not None\nAssertionError\n',
     "illegal_argument", ".bare_name"),
    # glog's FATAL record, then its stack trace: the record says what failed.
    ("world_size: 2, rank: 0\nF20220801 07:29:34.701110  2256 loader.cc:42] No such file or directory: /data/part-0\n"
     "*** Check failure stack trace: ***\n    @     0x7f50dfba322e  google::LogMessage::Fail()\n"
     "    @     0x7f50dfba318b  google::LogMessage::SendToLog()\n", "path_not_found", ".glog_fatal"),
])
def test_version_10_reads_fatal_records_and_bare_names_at_the_end(tail, category, rule):
    a = analyse_text(tail, tagging_config="tagging:2026-11i")
    assert (a.found, a.category) == (False, category) and a.rule.endswith(rule), a.rule
    assert analyse_text(tail, tagging_config="tagging:2026-11h").rule != a.rule   # released: unchanged


def test_a_bare_name_without_a_frame_above_it_is_a_word():
    assert analyse_text("epoch 3 done\nAssertionError\n", tagging_config="tagging:2026-11i").category == "unclassified"
