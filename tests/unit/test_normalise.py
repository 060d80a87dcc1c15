"""Normaliser: identical failures share a fingerprint, different failures do not."""
import pathlib
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import pytest  # noqa: E402
from hypothesis import given, settings, strategies as st  # noqa: E402

from jobs_ingest.core import normalise  # noqa: E402
from jobs_ingest.core.normalise import fingerprint, mask, masked_message  # noqa: E402


# Same failure, different jobs / machines / users / ranks / paths / batch sizes / times / GPUs.
SAME = [
    [
        ("FileNotFoundError", "[Errno 2] No such file or directory: '/home/alice/proj/configs/config.yaml'"),
        ("FileNotFoundError", "[Errno 2] No such file or directory: '/mnt/nfs/bob/run-17/configs/config.yaml'"),
        ("FileNotFoundError", "[Errno 2] No such file or directory: 'C:\\Users\\carol\\configs\\config.yaml'"),
    ],
    [
        ("torch.OutOfMemoryError", "CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of "
         "79.15 GiB of which 1.12 GiB is free. Process 88213 has 78.02 GiB memory in use."),
        ("torch.cuda.OutOfMemoryError", "CUDA out of memory. Tried to allocate 512.00 MiB. GPU 3 has a total "
         "capacity of 23.65 GiB of which 100.5 MiB is free. Process 4411 has 23.5 GiB memory in use."),
    ],
    [
        ("RuntimeError", "Expected input batch_size (64) to match target batch_size (32)."),
        ("RuntimeError", "Expected input batch_size (128) to match target batch_size (100)."),
    ],
    [
        ("RuntimeError", "mat1 and mat2 shapes cannot be multiplied (64x512 and 1024x10)"),
        ("RuntimeError", "mat1 and mat2 shapes cannot be multiplied (8x2048 and 512x1000)"),
    ],
    [
        ("RuntimeError", "NCCL error on rank 3 at 2024-03-04 09:01:02 host gpu-node-017 (10.0.3.17:29500)"),
        ("RuntimeError", "NCCL error on rank 0 at 2024-05-11T22:10:43.118Z host gpu-node-101 (10.0.9.2:29500)"),
    ],
    [
        ("ValueError", "Input 0 of layer dense is incompatible with the layer: expected shape=(None, 784), "
         "found shape=(32, 28, 28)"),
        ("ValueError", "Input 0 of layer dense is incompatible with the layer: expected shape=(None, 784), "
         "found shape=(256, 28, 28)"),
    ],
    [
        ("RuntimeError", "CUDA error: an illegal memory access on device cuda:0 (pid 1234, job 0x7f3a1c2b4e50)"),
        ("RuntimeError", "CUDA error: an illegal memory access on device cuda:7 (pid 98, job 0x7f00aa11bb22)"),
    ],
    [
        ("OSError", "Unable to open file run_1f3e9a7b-2c4d-4e5f-8a9b-0c1d2e3f4a5b/shard_00017.h5"),
        ("OSError", "Unable to open file run_0a0b0c0d-1111-2222-3333-444455556666/shard_00003.h5"),
    ],
]


@pytest.mark.parametrize("group", SAME)
def test_identical_failures_share_a_fingerprint(group):
    prints = {fingerprint(t, m, "load_config") for t, m in group}
    assert len(prints) == 1, [masked_message(t, m) for t, m in group]


DIFFERENT = [
    (("FileNotFoundError", "[Errno 2] No such file or directory: '/home/a/configs/config.yaml'"),
     ("FileNotFoundError", "[Errno 2] No such file or directory: '/home/a/ckpt/model_best.pth'")),
    (("KeyError", "'optimizer'"), ("KeyError", "'lr_scheduler'")),
    (("ValueError", "bad value"), ("TypeError", "bad value")),
    (("ModuleNotFoundError", "No module named 'apex'"), ("ModuleNotFoundError", "No module named 'deepspeed'")),
    (("AttributeError", "module 'tensorflow' has no attribute 'placeholder'"),
     ("AttributeError", "module 'tensorflow' has no attribute 'Session'")),
]


@pytest.mark.parametrize("a,b", DIFFERENT)
def test_different_failures_differ(a, b):
    assert fingerprint(*a) != fingerprint(*b)


def test_user_function_is_part_of_the_fingerprint():
    assert fingerprint("KeyError", "'x'", "load_config") != fingerprint("KeyError", "'x'", "train_step")


def test_mask_keeps_base_name_and_quoted_words():
    masked = mask("No such file or directory: '/home/alice/data/train_0001.csv'")
    assert "train_<NUM>.csv" in masked and "alice" not in masked
    assert "'optimizer'" in mask("KeyError: 'optimizer'")


def test_mask_placeholders():
    assert mask("at 2024-03-04 10:12:01 on 10.0.0.1:29500") == "at <TIME> on <IP>"
    assert mask("allocate 2.00 GiB") == "allocate <SIZE>"
    assert mask("size torch.Size([64, 3, 224, 224])") == "size <SHAPE>"
    assert "<HEX>" in mask("object at 0x7f3a1c2b4e50")
    assert "<UUID>" in mask("run 1f3e9a7b-2c4d-4e5f-8a9b-0c1d2e3f4a5b")
    assert mask("host gpu-node-017") == mask("host gpu-node-101")


def test_masked_message_uses_short_type_and_message_head():
    mm = masked_message("torch.cuda.OutOfMemoryError", "CUDA out of memory.\n" + "\n".join(f"l{i}" for i in range(20)))
    assert mm.startswith("OutOfMemoryError: CUDA out of memory.")
    assert "l4" in mm and "l5" not in mm  # the head (6 lines) names the failure


def test_fingerprint_shape():
    fp = fingerprint("KeyError", "'x'")
    assert len(fp) == 16 and int(fp, 16) >= 0
    assert normalise.NORMALISER_VERSION


# --- properties -------------------------------------------------------------------------------

_words = st.sampled_from(["No such file or directory:", "failed to load", "rank", "batch size", "at step",
                          "Tried to allocate", "on host", "in"])
_num = st.integers(min_value=0, max_value=10**9).map(str)
_float = st.floats(min_value=0, max_value=1e6, allow_nan=False).map(lambda f: f"{f:.2f}")
_hex = st.integers(min_value=16**8, max_value=16**12).map(lambda i: f"0x{i:x}")
_dir = st.lists(st.from_regex(r"[a-z][a-z0-9_]{0,8}", fullmatch=True), min_size=1, max_size=4)
_path = _dir.map(lambda parts: "/" + "/".join(parts) + "/config.yaml")
_size = st.tuples(_float, st.sampled_from(["GiB", "MiB", "KB", "bytes"])).map(lambda t: f"{t[0]} {t[1]}")
_time = st.datetimes(min_value=__import__("datetime").datetime(1970, 1, 1)).map(lambda d: d.strftime("%Y-%m-%d %H:%M:%S"))
_variable = st.one_of(_num, _float, _hex, _path, _size, _time)


_KINDS = [_num, _float, _hex, _path, _size, _time]


@given(template=st.lists(st.one_of(_words, st.integers(0, len(_KINDS) - 1)), min_size=1, max_size=8),
       data=st.data())
@settings(max_examples=200, deadline=None)
def test_fingerprint_stable_under_masked_changes(template, data):
    # Two messages that differ only in what the normaliser masks (numbers, paths with the same base
    # name, hex ids, sizes, times), drawn independently per slot, share a fingerprint.
    def render():
        return " ".join(part if isinstance(part, str) else data.draw(_KINDS[part]) for part in template)

    msg_a, msg_b = render(), render()
    assert fingerprint("RuntimeError", msg_a, "step") == fingerprint("RuntimeError", msg_b, "step"), (
        masked_message("RuntimeError", msg_a), masked_message("RuntimeError", msg_b))


@given(st.text(max_size=3000))
@settings(max_examples=300, deadline=None)
def test_normaliser_never_raises(text):
    assert isinstance(mask(text), str)
    assert len(fingerprint("X", text)) == 16
    assert len(mask(text)) <= normalise.MAX_MESSAGE_CHARS
