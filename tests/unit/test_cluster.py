"""Reason-level clusters (core/cluster.py) and tail fingerprints of logs with no parsed failure (#14.3, #14.4)."""
import pytest

from jobs_ingest.core.cluster import cluster_key
from jobs_ingest.core.pipeline import analyse_text, meaningful_tail


def traceback(function: str, exception: str) -> str:
    return ("Traceback (most recent call last):\n"
            f'  File "/home/u/{function}.py", line 12, in {function}\n'
            "    run()\n"
            f"{exception}\n")


@pytest.mark.parametrize("first, second", [
    ("AttributeError: 'DataParallel' object has no attribute 'encoder'",
     "AttributeError: 'DataParallel' object has no attribute 'generate'"),
    ("FileNotFoundError: [Errno 2] No such file or directory: '/data/imagenet/train.tar'",
     "FileNotFoundError: [Errno 2] No such file or directory: 'coco/annotations/instances_val2017.json'"),
    ("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 1.53 GiB on GPU 3.",
     "torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 MiB on GPU 0."),
    ("RuntimeError: Error(s) in loading state_dict for ResNet:\n\tMissing key(s) in state_dict: \"fc.weight\".",
     "RuntimeError: Error(s) in loading state_dict for BertModel:\n\tMissing key(s) in state_dict: \"cls.bias\"."),
    ("ValueError: Expected input batch_size (32) to match target batch_size (16).",
     "ValueError: Expected input batch_size (64) to match target batch_size (8)."),
])
def test_one_reason_from_different_code_is_one_cluster_and_several_signatures(first, second):
    a, b = analyse_text(traceback("train", first)), analyse_text(traceback("evaluate", second))
    assert a.cluster and a.cluster == b.cluster and a.cluster_message == b.cluster_message
    assert a.fingerprint != b.fingerprint  # the exact signature still tells the code apart


@pytest.mark.parametrize("first, second", [
    ("AttributeError: 'DataParallel' object has no attribute 'encoder'",
     "AttributeError: 'NoneType' object has no attribute 'encoder'"),  # which type is the reason
    ("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 1.53 GiB on GPU 3.",
     "RuntimeError: NCCL error in: ProcessGroupNCCL.cpp:1269, unhandled system error, NCCL version 2.10.3"),
    ("KeyError: 'model_state_dict'", "IndexError: list index out of range"),
    ("FileNotFoundError: [Errno 2] No such file or directory: 'data/x.json'",
     "PermissionError: [Errno 13] Permission denied: 'data/x.json'"),
])
def test_different_reasons_are_different_clusters(first, second):
    assert analyse_text(traceback("train", first)).cluster != analyse_text(traceback("train", second)).cluster


def test_the_cluster_message_masks_names_and_keeps_the_wording():
    key, reason = cluster_key("AttributeError", "'DataParallel' object has no attribute 'encoder_layers_12'")
    assert reason == "AttributeError: 'DataParallel' object has no attribute <Q>" and len(key) == 16
    assert cluster_key("", "") == ("", "")


def test_logs_without_a_parsed_failure_do_not_share_one_signature():
    upload = "epoch 3 loss 0.12\nsaving checkpoint\nwriting the summary to the bucket\n"
    stalled = "epoch 1 loss 2.3\nWaiting for the data loader workers\nno progress for 3600 seconds, giving up\n"
    a, b = analyse_text(upload, exit_code=1), analyse_text(stalled, exit_code=1)
    assert not a.found and not b.found and a.category == b.category == "unclassified"
    assert a.fingerprint != b.fingerprint and a.cluster != b.cluster
    assert a.message.endswith("the log ends: writing the summary to the bucket")
    # The same failure on another run (other numbers) is the same signature.
    again = analyse_text(upload.replace("epoch 3 loss 0.12", "epoch 7 loss 0.31"), exit_code=1)
    assert again.fingerprint == a.fingerprint


def test_killed_jobs_keep_one_cluster_and_differ_by_their_last_lines():
    a = analyse_text("epoch 1\nbuilding the vocabulary\n", exit_code=137)
    b = analyse_text("epoch 4\nevaluating on the test split\n", exit_code=137)
    assert a.category == b.category == "cpu_oom" and a.cluster == b.cluster
    assert a.fingerprint != b.fingerprint


def test_the_tail_skips_progress_bars_separators_and_blank_lines():
    lines = ["loading the model", "=" * 40, " 45%|████▌     | 450/1000 [00:41<00:50, 10.9it/s]", "", "  12  "]
    assert meaningful_tail(lines) == ["loading the model"]


def test_the_old_grouping_config_keeps_its_shared_no_failure_signature_and_has_no_clusters():
    old = [analyse_text(log, exit_code=1, grouping_config="grouping:2026-11") for log in ("a b c\nfoo bar\n", "x y z\nbaz qux\n")]
    assert old[0].fingerprint == old[1].fingerprint and old[0].cluster == ""


# ---- reason clusters version 2 (grouping:2026-11c) -------------------------------------------------------

V2, V1 = "grouping:2026-11c", "grouping:2026-11b"


def cluster_of(log: str, grouping: str = V2, **kwargs):
    analysis = analyse_text(log, grouping_config=grouping, **kwargs)
    return analysis.cluster, analysis.cluster_message


@pytest.mark.parametrize("first, second", [
    # The shell, faulthandler and a launcher's report say one reason: a segmentation fault.
    ("Segmentation fault (core dumped)\n", "Fatal Python error: Segmentation fault\n\nCurrent thread 0x00007f (most recent call first):\n"),
    ("Segmentation fault (core dumped)\n",
     "torch.multiprocessing.spawn.ProcessExitedException: process 1 terminated with signal SIGSEGV\n"),
    ("Bus error (core dumped)\n", "RuntimeError: DataLoader worker (pid 4242) is killed by signal: Bus error. It is possible "
                                  "that dataloader's workers are out of shared memory.\n"),
    # PyTorch's sentence under two exception types, and CUDA's own.
    ("RuntimeError: CUDA out of memory. Tried to allocate 20.00 MiB (GPU 0; 10.76 GiB total capacity)\n",
     "torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 1.53 GiB on GPU 3.\n"),
    ("RuntimeError: CUDA error: out of memory\n", "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2 GiB.\n"),
    # Python 2's ImportError and Python 3's ModuleNotFoundError, quoted or not.
    ("ImportError: No module named apex\n", "ModuleNotFoundError: No module named 'flash_attn'\n"),
    # A log line glued under the message does not make another reason.
    ("ModuleNotFoundError: No module named 'deepspeed'\nKilling subprocess 1234\n",
     "ModuleNotFoundError: No module named 'timm'\n"),
    ("TypeError: forward() missing 1 required positional argument: 'mask'\n",
     "TypeError: evaluate() missing 1 required positional argument: 'loader'\n"),
])
def test_version_2_gathers_one_reason_said_in_several_ways(first, second):
    a, b = cluster_of(traceback("train", first)), cluster_of(traceback("evaluate", second))
    assert a[0] and a == b


@pytest.mark.parametrize("first, second", [
    # Pasted errors (an exception quoted in a sentence) were all one '<Q>' cluster in version 1.
    ("I get this when training: `TypeError: init_weights() takes 1 positional argument but 2 were given`\n",
     "the run stops with `AttributeError: 'DistributedDataParallel' object has no attribute 'config'`\n"),
    # TF's root-error header says only how many errors there were; the reason is on the next line.
    ("tensorflow.python.framework.errors_impl.InternalError: 2 root error(s) found.\n"
     "  (0) Internal: Blas GEMM launch failed : a.shape=(32, 784), b.shape=(784, 10), m=32, n=10, k=784\n",
     "tensorflow.python.framework.errors_impl.InternalError: 2 root error(s) found.\n"
     "  (0) Internal: Dst tensor is not initialized.\n"),
    # A KeyError whose payload is a sentence is that sentence, not one more missing key.
    ("KeyError: 'BEVDet is not in the models registry'\n", "KeyError: 'learning_rate'\n"),
    ("Segmentation fault (core dumped)\n", "Bus error (core dumped)\n"),
    ("Killed\n", "Segmentation fault (core dumped)\n"),
])
def test_version_2_keeps_apart_what_version_1_merged_or_other_reasons(first, second):
    a, b = cluster_of(first), cluster_of(second)
    assert a[0] and b[0] and a != b


def test_version_2_reads_a_pasted_error_by_its_own_type_and_gives_no_cluster_to_a_bare_quote():
    pasted = "when training, I received an error :`TypeError: init_weights() takes 1 positional argument but 2 were given`"
    assert cluster_of(pasted + "\n")[1] == "TypeError: <ID>() takes <NUM> positional argument but <NUM> were given"
    from jobs_ingest.core.cluster import cluster_key_v2
    assert cluster_key_v2("", "'/data/train/part-0001.tfrecord'") == ("", "")  # a bare quoted path names no reason
    assert cluster_key_v2("KeyError", "'lr'")[1] == "KeyError: <Q>"


def test_version_1_is_released_and_keeps_its_clusters():
    # What grouping:2026-11b gave before version 2 existed: its output never changes.
    assert cluster_of("ImportError: No module named apex\n", V1)[1] == "ImportError: No module named apex"
    assert cluster_of("`TypeError: f() takes 1 argument`\n", V1)[1] == cluster_of("`KeyError: 'lr'`\n", V1)[1] == "<Q>"
    assert cluster_of("Segmentation fault (core dumped)\n", V1)[1] != cluster_of("Fatal Python error: Segmentation fault\n", V1)[1]
    assert analyse_text("Killed\n", grouping_config=V1).normaliser_version == "3"
    assert analyse_text("Killed\n", grouping_config=V2).normaliser_version == "4"


# ---- reason clusters version 3 (grouping:2026-11d) -------------------------------------------------------

V3 = "grouping:2026-11d"


@pytest.mark.parametrize("first, second", [
    # Which devices, how many arguments, and Python's spelling hint do not change the reason.
    ("RuntimeError: Expected all tensors to be on the same device, but found at least two devices, cuda:0 and cpu!\n",
     "RuntimeError: Expected all tensors to be on the same device, but found at least two devices, cuda:1 and cuda:0!\n"),
    ("TypeError: forward() missing 3 required positional arguments: 'x', 'y', and 't'\n",
     "TypeError: __call__() missing 1 required positional argument: 'imgs'\n"),
    ("TypeError: evaluate() takes 1 positional argument but 2 were given\n",
     "TypeError: f() takes 2 positional arguments but 1 was given\n"),
    ("NameError: name 'net' is not defined. Did you mean: 'next'?\n", "NameError: name 'yolo3_decode' is not defined\n"),
    ("KeyError: 'eval'\n", "KeyError: 0\n"),
    ("IndexError: list index out of range\n", "IndexError: tuple index out of range\n"),
    # ENOENT in Python's, TF's, pandas' and h5py's words; host memory in Python's, NumPy's and PyTorch's.
    ("FileNotFoundError: [Errno 2] No such file or directory: 'data/train.json'\n",
     "tensorflow.python.framework.errors_impl.NotFoundError: /data/x.tfrecord; No such file or directory\n"),
    ("FileNotFoundError: [Errno 2] No such file or directory: 'data/train.json'\n",
     "FileNotFoundError: File b'../data/train_set.csv' does not exist\n"),
    ("MemoryError\n", "numpy.core._exceptions._ArrayMemoryError: Unable to allocate 3.21 GiB for an array with shape "
                      "(431, 1000000) and data type float64\n"),
    ("MemoryError\n", "RuntimeError: [enforce fail at alloc_cpu.cpp:75] err == 0. DefaultCPUAllocator: can't allocate memory: "
                      "you tried to allocate 1073741824 bytes. Error code 12 (Cannot allocate memory)\n"),
])
def test_version_3_gathers_what_version_2_kept_apart(first, second):
    old = cluster_of(traceback("train", first)), cluster_of(traceback("evaluate", second))
    a, b = cluster_of(traceback("train", first), V3), cluster_of(traceback("evaluate", second), V3)
    assert a[0] and a == b
    assert old[0] != old[1]                                            # version 2 is released and unchanged


@pytest.mark.parametrize("first, second", [
    # A shared library the loader cannot find is not a missing data path, though both say ENOENT's words.
    ("ImportError: libcudart.so.10.0: cannot open shared object file: No such file or directory\n",
     "FileNotFoundError: [Errno 2] No such file or directory: 'data/train.json'\n"),
    # A None used as a value stays split by what was done with it: a cluster is finer than a category.
    ("AttributeError: 'NoneType' object has no attribute 'shape'\n", "TypeError: 'NoneType' object is not subscriptable\n"),
    ("MemoryError\n", "RuntimeError: CUDA out of memory. Tried to allocate 20.00 MiB\n"),
    ("IndexError: list index out of range\n", "IndexError: index 16 is out of bounds for dimension 1 with size 16\n"),
])
def test_version_3_keeps_other_reasons_apart(first, second):
    a, b = cluster_of(first, V3), cluster_of(second, V3)
    assert a[0] and b[0] and a != b


def test_version_3_keeps_words_that_only_look_plural():
    from jobs_ingest.core.cluster import cluster_message_v3
    assert cluster_message_v3("RuntimeError", "process 3 terminated with exit code 1") == \
        "RuntimeError: process <NUM> terminated with exit code <NUM>"
    assert cluster_message_v3("RuntimeError", "size 3 is invalid for this input") == \
        "RuntimeError: size <NUM> is invalid for this input"
    assert analyse_text("Killed\n", grouping_config=V3).normaliser_version == "5"


# ---- reason clusters version 4 (grouping:2026-11g) -------------------------------------------------------

V4 = "grouping:2026-11g"


@pytest.mark.parametrize("first, second", [
    # Tensors whose shapes disagree, in PyTorch's, TF's, Keras' and NumPy's words.
    ("RuntimeError: mat1 and mat2 shapes cannot be multiplied (64x512 and 256x10)\n",
     "tensorflow.python.framework.errors_impl.InvalidArgumentError: Incompatible shapes: [32,10] vs. [32]\n"),
    ("RuntimeError: The size of tensor a (197) must match the size of tensor b (50) at non-singleton dimension 1\n",
     "ValueError: operands could not be broadcast together with shapes (3,4) (5,)\n"),
    ("ValueError: Shapes (None, 10) and (None, 1) are incompatible\n",
     "RuntimeError: shape '[-1, 3, 224, 224]' is invalid for input of size 1000\n"),
    # A checkpoint that does not fit the model, in PyTorch's and TF's words.
    ("RuntimeError: Error(s) in loading state_dict for ResNet:\n\tsize mismatch for fc.weight: copying a param with "
     "shape torch.Size([1000, 512]) from checkpoint, the shape in current model is torch.Size([10, 512]).\n",
     "tensorflow.python.framework.errors_impl.NotFoundError: Key conv1/bias not found in checkpoint\n"),
    # An index past the end of a list and of a tensor's dimension.
    ("IndexError: list index out of range\n", "IndexError: index 16 is out of bounds for dimension 1 with size 16\n"),
    # One sentence, typed or pasted without its type, in Markdown bold or after other words.
    ("RuntimeError: shape '[-1, 8]' is invalid for input of size 12\n",
     "我在复现这个模型的时候，遇到了RuntimeError: shape '[-1, 8]' is invalid for input of size 10\n"),
    ("AttributeError: 'NoneType' object has no attribute 'shape'\n",
     "**\"AttributeError: 'NoneType' object has no attribute 'size'\"**\n"),
    ("OSError: File graph.pb.meta does not exist.\n", "FileNotFoundError: [Errno 2] No such file or directory: 'x.csv'\n"),
    ("IOError: [Errno 5] Input/output error\n", "OSError: [Errno 5] Input/output error\n"),
    # Python's two wordings of one unbound local; a shell's and Python's words for one signal.
    ("UnboundLocalError: local variable 'x' referenced before assignment\n",
     "UnboundLocalError: cannot access local variable 'x' where it is not associated with a value\n"),
    ("Fatal Python error: Aborted\n", "./train.sh: line 34: 12024 Aborted                 (core dumped) python3 train.py\n"),
    ("Killed\n", "zsh: killed     python main.py\n"),
    ("MemoryError\n", "slurmstepd: error: Detected 1 oom-kill event(s) in step 42.batch cgroup.\n"),
])
def test_version_4_gathers_what_version_3_kept_apart(first, second):
    old = cluster_of(traceback("train", first), V3), cluster_of(traceback("evaluate", second), V3)
    a, b = cluster_of(traceback("train", first), V4), cluster_of(traceback("evaluate", second), V4)
    assert a[0] and a == b
    assert old[0] != old[1]                                            # version 3 is released and unchanged


@pytest.mark.parametrize("first, second", [
    # A checkpoint's shapes are not the layers' shapes; a missing module is not a missing file.
    ("RuntimeError: size mismatch for fc.weight: copying a param with shape torch.Size([10, 5]) from checkpoint, "
     "the shape in current model is torch.Size([2, 5]).\n", "RuntimeError: mat1 and mat2 shapes cannot be multiplied (4x5 and 6x2)\n"),
    ("ModuleNotFoundError: No module named 'apex'\n", "FileNotFoundError: [Errno 2] No such file or directory: 'x.csv'\n"),
    # Short messages keep their type: a KeyError's key says nothing of the reason.
    ("KeyError: 'lr'\n", "IndexError: 'lr'\n"),
    # The DataLoader's wrapper names the type that is the reason; a cut exception line keeps its name.
    ("KeyError: Caught KeyError in DataLoader worker process 0.\n",
     "IndexError: Caught IndexError in DataLoader worker process 0.\n"),
    ("AttributeError: 'NoneType' object has no attribute 'shape'\n", "TypeError: 'NoneType' object is not subscriptable\n"),
    ("MemoryError\n", "RuntimeError: CUDA out of memory. Tried to allocate 20.00 MiB\n"),
    ("Killed\n", "Segmentation fault (core dumped)\n"),
])
def test_version_4_keeps_other_reasons_apart(first, second):
    a, b = cluster_of(first, V4), cluster_of(second, V4)
    assert a[0] and b[0] and a != b


def test_version_4_names_a_cut_exception_line_by_its_type():
    from jobs_ingest.core.cluster import cluster_message_v4
    cut = lambda kind, text: cluster_message_v4("", f"{kind} (the log is cut inside its exception line: {text!r})")
    assert cut("IndexError", "IndexEr") == "IndexError: the log is cut inside its exception line"
    assert cut("IndexError", "IndexEr") != cut("ModuleNotFoundError", "ModuleNotFo")
    assert analyse_text("Killed\n", grouping_config=V4).normaliser_version == "8"


# ---- reason clusters version 5 (grouping:2026-11h) -------------------------------------------------------

V5 = "grouping:2026-11h"


@pytest.mark.parametrize("first, second", [
    # None used as a value, whatever was done with it.
    ("AttributeError: 'NoneType' object has no attribute 'shape'\n", "TypeError: 'NoneType' object is not subscriptable\n"),
    ("TypeError: unsupported operand type(s) for +: 'NoneType' and 'int'\n",
     "TypeError: argument of type 'NoneType' is not iterable\n"),
    # An attribute that is not there, on any object, module, class or pickled class.
    ("AttributeError: 'DataParallel' object has no attribute 'generate'\n",
     "AttributeError: 'Trainer' object has no attribute 'optimizer'\n"),
    ("AttributeError: module 'tensorflow' has no attribute 'placeholder'\n",
     "AttributeError: type object 'Image' has no attribute 'ANTIALIAS'\n"),
    ("AttributeError: Can't get attribute 'Net' on <module '__main__' from 'eval.py'>\n",
     "AttributeError: 'Namespace' object has no attribute 'local_rank'\n"),
    # Tensors on different devices, in PyTorch's several wordings.
    ("RuntimeError: Expected all tensors to be on the same device, but found at least two devices, cuda:0 and cpu!\n",
     "RuntimeError: indices should be either on cpu or on the same device as the indexed tensor (cpu)\n"),
    ("RuntimeError: Input type (torch.cuda.FloatTensor) and weight type (torch.FloatTensor) should be the same\n",
     "RuntimeError: Expected tensor for argument #1 'indices' to have the same device as tensor for argument #2 "
     "'weight'; but device 1 does not equal 0 (while checking arguments for embedding)\n"),
    # A native library missing a symbol, whichever loader said so.
    ("ImportError: /opt/conda/lib/python3.8/site-packages/apex/amp_C.so: undefined symbol: _ZN3c104cuda9SetDeviceEi\n",
     "OSError: /usr/lib/libtorch_cuda.so: undefined symbol: cudaGraphInstantiateWithFlags, version libcudart.so.11.0\n"),
    # Windows' access violation is its segmentation fault.
    ("Process finished with exit code -1073741819 (0xC0000005)\n", "Segmentation fault (core dumped)\n"),
    # A file that cannot be found, said in prose.
    ("OSError: Error no file named pytorch_model.bin found in directory ./ckpt.\n",
     "FileNotFoundError: [Errno 2] No such file or directory: 'data/train.json'\n"),
    ("ValueError: Cannot find data file for split 'train'.\n",
     "FileNotFoundError: [Errno 2] No such file or directory: 'data/train.json'\n"),
])
def test_version_5_gathers_what_version_4_kept_apart(first, second):
    old = cluster_of(traceback("train", first), V4), cluster_of(traceback("evaluate", second), V4)
    a, b = cluster_of(traceback("train", first), V5), cluster_of(traceback("evaluate", second), V5)
    assert a[0] and a == b
    assert old[0] != old[1]                                            # version 4 is released and unchanged


@pytest.mark.parametrize("first, second", [
    # None used as a value is not an attribute missing from a real object.
    ("AttributeError: 'NoneType' object has no attribute 'shape'\n",
     "AttributeError: 'DataParallel' object has no attribute 'shape'\n"),
    # Devices that disagree are not dtypes that disagree; a missing symbol is not a missing library.
    ("RuntimeError: Expected all tensors to be on the same device, but found at least two devices, cuda:0 and cpu!\n",
     "RuntimeError: expected scalar type Float but found Double\n"),
    ("ImportError: /x/amp_C.so: undefined symbol: _ZN3c104cuda9SetDeviceEi\n",
     "ImportError: libcudnn.so.8: cannot open shared object file: No such file or directory\n"),
    # A file found but unreadable is not a file missing.
    ("ValueError: Cannot find data file for split 'train'.\n", "_pickle.UnpicklingError: invalid load key, '<'.\n"),
])
def test_version_5_keeps_other_reasons_apart(first, second):
    a, b = cluster_of(first, V5), cluster_of(second, V5)
    assert a[0] and b[0] and a != b
    assert analyse_text("Killed\n", grouping_config=V5).normaliser_version == "9"
