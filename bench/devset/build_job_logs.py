#!/usr/bin/env python3
"""Compose job-style logs: real failure texts embedded in realistic training-job output.

Reads the real failure texts of programs.jsonl (captured output of programs that really failed here) and
notebook_crashes.jsonl (real crash tracebacks), wraps them in the output a cluster job prints around them
(timestamps, NCCL INFO lines, tqdm progress with carriage returns, epoch/step/loss lines, warnings and handled
exceptions that did NOT end the job, torchrun's [rankN]: prefixes and ChildFailedError summary, Slurm and
Kubernetes endings), and adds public GPU/NaN error texts that cannot be produced on this CPU-only machine.

Every record: {"id", "log", "category", "stage" (true stage, where known), "exit_code" (when the job system
would report one), "group" (the origin failure: the same failure in different wrappers should get the same
fingerprint), "source": "composed:<wrapper>:<origin>"}.  Deterministic (fixed seed).

    python bench/devset/build_job_logs.py [--out bench/devset/job_logs.jsonl]
"""
from __future__ import annotations

import argparse
import datetime as dt
import json
import random
from pathlib import Path

HERE = Path(__file__).resolve().parent
SEED = 20201014
BASE_TIME = dt.datetime(2024, 3, 11, 8, 0, 0)

NB_STAGE = {  # the notebook study's pipeline stage -> our stage (visualisation has no counterpart: omitted)
    "data preparation/preprocessing": "data_preprocessing",
    "training/validation (grid search)": "training",
    "evaluation/inference (history plot, metric visualization)": "evaluation",
    "model construction (include compilation and visualization/summary)": "initialization",
    "environment setup (module not found, file/path not found)": "initialization",
}


class Clock:
    def __init__(self, rnd: random.Random):
        self.t = BASE_TIME + dt.timedelta(days=rnd.randint(0, 200), seconds=rnd.randint(0, 80000))
        self.rnd = rnd

    def tick(self, lo=0.05, hi=3.0) -> dt.datetime:
        self.t += dt.timedelta(seconds=self.rnd.uniform(lo, hi))
        return self.t

    def iso(self) -> str:
        return self.tick().strftime("%Y-%m-%d %H:%M:%S,") + f"{self.rnd.randint(0, 999):03d}"

    def glog(self) -> str:  # E0311 08:12:13.123000 140245 style
        t = self.tick()
        return t.strftime("%m%d %H:%M:%S.") + f"{self.rnd.randint(0, 999999):06d}"


# ------------------------------------------------------------------------------------------ text pieces
def nccl_init(rnd: random.Random, host: str, world: int) -> list[str]:
    pid = rnd.randint(1000, 60000)
    lines = [f"{host}:{pid}:{pid} [0] NCCL INFO Bootstrap : Using eth0:10.{rnd.randint(0, 255)}.{rnd.randint(0, 255)}.{rnd.randint(2, 250)}<0>",
             f"{host}:{pid}:{pid} [0] NCCL INFO NET/Plugin : No plugin found (libnccl-net.so), using internal implementation",
             f"{host}:{pid}:{pid} [0] NCCL INFO cudaDriverVersion 12020",
             f"NCCL version 2.18.{rnd.randint(1, 6)}+cuda12.1"]
    for r in range(world):
        lines.append(f"{host}:{pid + r}:{pid + 40 + r} [{r}] NCCL INFO Channel 00/02 :    0   1")
        lines.append(f"{host}:{pid + r}:{pid + 40 + r} [{r}] NCCL INFO comm 0x{rnd.randint(1 << 40, 1 << 44):x} rank {r} nranks {world} cudaDev {r} busId {r + 1}a000 commId 0x{rnd.randint(1 << 60, 1 << 63):x} - Init COMPLETE")
    return lines


def env_banner(rnd: random.Random, clock: Clock) -> list[str]:
    return [f"{clock.iso()} - INFO - __main__ - Process rank: 0, device: cuda:0, n_gpu: 1, distributed training: True, 16-bits training: {rnd.choice(['True', 'False'])}",
            f"{clock.iso()} - INFO - __main__ - Training/evaluation parameters TrainingArguments(output_dir=/mnt/output/run-{rnd.randint(100, 999)}, per_device_train_batch_size={rnd.choice([8, 16, 32])}, learning_rate={rnd.choice(['5e-05', '3e-4', '1e-4'])}, num_train_epochs={rnd.choice([3, 10, 90])}, seed=42)",
            f"{clock.iso()} - WARNING - __main__ - Found {rnd.randint(2, 64)} CPUs but OMP_NUM_THREADS is unset; setting it to 1"]


DECOYS = [
    # harmless warnings / handled exceptions that did NOT end the job
    lambda rnd: ["/opt/conda/lib/python3.10/site-packages/torch/utils/data/dataloader.py:557: UserWarning: This DataLoader will create 16 worker processes in total. Our suggested max number of worker in current system is 8, which is smaller than what this DataLoader is going to create. Please be aware that excessive worker creation might get DataLoader running slow or even freeze, lower the worker number to avoid potential slowness/freeze if necessary.",
                 "  warnings.warn(_create_warning_msg("],
    lambda rnd: ["/opt/conda/lib/python3.10/site-packages/torch/optim/lr_scheduler.py:139: UserWarning: Detected call of `lr_scheduler.step()` before `optimizer.step()`. In PyTorch 1.1.0 and later, you should call them in the opposite order: `optimizer.step()` before `lr_scheduler.step()`.  Failure to do this will result in PyTorch skipping the first value of the learning rate schedule. See more details at https://pytorch.org/docs/stable/optim.html#how-to-adjust-learning-rate",
                 '  warnings.warn("Detected call of `lr_scheduler.step()` before `optimizer.step()`. "'],
    lambda rnd: ["wandb: WARNING Network error (ConnectionError), entering retry loop.",
                 "Traceback (most recent call last):",
                 '  File "/opt/conda/lib/python3.10/site-packages/urllib3/connectionpool.py", line 703, in urlopen',
                 "    httplib_response = self._make_request(",
                 '  File "/opt/conda/lib/python3.10/site-packages/urllib3/connectionpool.py", line 449, in _make_request',
                 "    six.raise_from(e, None)",
                 "urllib3.exceptions.ProtocolError: ('Connection aborted.', RemoteDisconnected('Remote end closed connection without response'))",
                 "wandb: Network error resolved after 0:00:05.123456, resuming normal operation."],
    lambda rnd: ["Could not load checkpoint, starting from scratch:",
                 "Traceback (most recent call last):",
                 '  File "/workspace/train.py", line 112, in maybe_resume',
                 "    state = torch.load(os.path.join(args.output_dir, 'last.pt'), map_location='cpu')",
                 '  File "/opt/conda/lib/python3.10/site-packages/torch/serialization.py", line 791, in load',
                 "    with _open_file_like(f, 'rb') as opened_file:",
                 "FileNotFoundError: [Errno 2] No such file or directory: '/mnt/output/last.pt'"],
    lambda rnd: ["[2024-03-11 08:13:02,114] [INFO] [stage_1_and_2.py:1780:step] [deepspeed] OVERFLOW! Rank 0 Skipping step. Attempted loss scale: 65536, reducing to 32768",
                 "[2024-03-11 08:13:03,027] [INFO] [loss_scaler.py:183:update_scale] [deepspeed] OVERFLOW! Rank 0 Skipping step. Attempted loss scale: 32768, reducing to 16384"],
    lambda rnd: ["/opt/conda/lib/python3.10/site-packages/transformers/tokenization_utils_base.py:1601: FutureWarning: `clean_up_tokenization_spaces` was not set. It will be set to `True` by default. This behavior will be depracted in transformers v4.45, and will be then set to `False` by default.",
                 "  warnings.warn(",
                 "Some weights of BertForSequenceClassification were not initialized from the model checkpoint at bert-base-uncased and are newly initialized: ['classifier.bias', 'classifier.weight']",
                 "You should probably TRAIN this model on a down-stream task to be able to use it for predictions and inference."],
    lambda rnd: ["2024-03-11 08:02:41.339512: W tensorflow/compiler/tf2tensorrt/utils/py_utils.cc:38] TF-TRT Warning: Could not find TensorRT",
                 "2024-03-11 08:02:41.902233: E tensorflow/compiler/xla/stream_executor/cuda/cuda_dnn.cc:9342] Unable to register cuDNN factory: Attempting to register factory for plugin cuDNN when one has already been registered"],
]


def tqdm_bar(rnd: random.Random, desc: str, total: int, stop_at: int | None = None, postfix: bool = True) -> str:
    """A tqdm progress line as written to a file: many states separated by carriage returns."""
    stop = total if stop_at is None else stop_at
    states = []
    n = 0
    elapsed = 0.0
    rate = rnd.uniform(2.0, 12.0)
    while True:
        pct_ = int(100 * n / total)
        filled = int(10 * n / total)
        bar = "\u2588" * filled + (" " * (10 - filled))
        el = f"{int(elapsed) // 60:02d}:{int(elapsed) % 60:02d}"
        rem = (total - n) / rate
        rm = f"{int(rem) // 60:02d}:{int(rem) % 60:02d}"
        pf = f", loss={rnd.uniform(0.2, 2.5):.3f}" if postfix and n else ""
        states.append(f"{desc}: {pct_:3d}%|{bar}| {n}/{total} [{el}<{rm}, {rate:5.2f}it/s{pf}]")
        if n >= stop:
            break
        step = max(1, total // rnd.randint(6, 14))
        n = min(stop, n + step)
        elapsed += step / rate
    return "\r".join(states)


def train_steps(rnd: random.Random, clock: Clock, epochs: int, style: str) -> list[str]:
    out = []
    loss = rnd.uniform(1.5, 3.0)
    for ep in range(epochs):
        if style == "tqdm":
            out.append(tqdm_bar(rnd, f"Epoch {ep}", rnd.choice([100, 250, 782])))
        elif style == "keras":
            steps = rnd.choice([469, 1563, 98])
            out.append(f"Epoch {ep + 1}/{epochs + rnd.randint(1, 20)}")
            out.append(f"{steps}/{steps} [==============================] - {rnd.randint(5, 90)}s {rnd.randint(10, 200)}ms/step - loss: {loss:.4f} - accuracy: {rnd.uniform(0.5, 0.95):.4f} - val_loss: {loss * 1.1:.4f} - val_accuracy: {rnd.uniform(0.5, 0.9):.4f}")
        else:
            for s in range(0, rnd.choice([300, 500, 1000]), 100):
                out.append(f"{clock.iso()} INFO trainer: epoch {ep} step {s} loss {loss:.4f} lr {rnd.choice(['1.0e-04', '3.0e-04', '5.0e-05'])} grad_norm {rnd.uniform(0.5, 4):.3f} throughput {rnd.uniform(200, 900):.1f} samples/s")
                loss *= rnd.uniform(0.9, 0.99)
        out.append(f"{clock.iso()} INFO trainer: epoch {ep} done, train_loss {loss:.4f}, saved checkpoint to /mnt/output/ckpt_epoch{ep}.pt")
    return out


def preprocessing(rnd: random.Random, clock: Clock) -> list[str]:
    n = rnd.choice([5000, 25000, 120000])
    return [f"{clock.iso()} INFO data: loading dataset from /mnt/data/{rnd.choice(['coco', 'imagenet', 'wikitext-103', 'librispeech'])}",
            tqdm_bar(rnd, "Map (num_proc=8)", n, stop_at=rnd.randint(n // 5, n), postfix=False).replace("it/s", " examples/s")]


def eval_intro(rnd: random.Random, clock: Clock) -> list[str]:
    return [f"{clock.iso()} INFO trainer: ***** Running Evaluation *****",
            f"{clock.iso()} INFO trainer:   Num examples = {rnd.randint(500, 50000)}",
            f"{clock.iso()} INFO trainer:   Batch size = {rnd.choice([16, 32, 64])}",
            tqdm_bar(rnd, "Evaluating", rnd.choice([40, 157, 313]), postfix=False)]


def torchrun_summary(rnd: random.Random, clock: Clock, host: str, failed_ranks: list[int], script: str) -> list[str]:
    pid0 = rnd.randint(10000, 90000)
    t = clock.tick()
    lines = [f"E{clock.glog()} {rnd.randint(100000, 199999)} torch/distributed/elastic/multiprocessing/api.py:826] failed (exitcode: 1) local_rank: {failed_ranks[0]} (pid: {pid0 + failed_ranks[0]}) of binary: /opt/conda/bin/python",
             "Traceback (most recent call last):",
             '  File "/opt/conda/bin/torchrun", line 33, in <module>',
             "    sys.exit(load_entry_point('torch==2.1.2', 'console_scripts', 'torchrun')())",
             '  File "/opt/conda/lib/python3.10/site-packages/torch/distributed/elastic/multiprocessing/errors/__init__.py", line 346, in wrapper',
             "    return f(*args, **kwargs)",
             '  File "/opt/conda/lib/python3.10/site-packages/torch/distributed/run.py", line 806, in main',
             "    run(args)",
             '  File "/opt/conda/lib/python3.10/site-packages/torch/distributed/run.py", line 797, in run',
             "    elastic_launch(",
             '  File "/opt/conda/lib/python3.10/site-packages/torch/distributed/launcher/api.py", line 134, in __call__',
             "    return launch_agent(self._config, self._entrypoint, list(args))",
             '  File "/opt/conda/lib/python3.10/site-packages/torch/distributed/launcher/api.py", line 264, in launch_agent',
             "    raise ChildFailedError(",
             "torch.distributed.elastic.multiprocessing.errors.ChildFailedError: ",
             "============================================================",
             f"{script} FAILED",
             "------------------------------------------------------------",
             "Failures:"]
    others = failed_ranks[1:]
    if not others:
        lines.append("  <NO_OTHER_FAILURES>")
    for i, r in enumerate(others, 1):
        lines += [f"[{i}]:", f"  time      : {t:%Y-%m-%d_%H:%M:%S}", f"  host      : {host}",
                  f"  rank      : {r} (local_rank: {r})", f"  exitcode  : 1 (pid: {pid0 + r})",
                  "  error_file: <N/A>", "  traceback : To enable traceback see: https://pytorch.org/docs/stable/elastic/errors.html"]
    lines += ["------------------------------------------------------------", "Root Cause (first observed failure):", "[0]:",
              f"  time      : {t:%Y-%m-%d_%H:%M:%S}", f"  host      : {host}",
              f"  rank      : {failed_ranks[0]} (local_rank: {failed_ranks[0]})", f"  exitcode  : 1 (pid: {pid0 + failed_ranks[0]})",
              "  error_file: <N/A>", "  traceback : To enable traceback see: https://pytorch.org/docs/stable/elastic/errors.html",
              "============================================================"]
    return lines


# ------------------------------------------------------------------------------------------ public GPU texts
# Known public error texts (PyTorch, TensorFlow, JAX, NCCL, DETR/DeiT, fairseq) that need a GPU or a long run.
PUBLIC = [
    ("gpu_oom", "torch-cuda-oom-v1", "training", [
        "Traceback (most recent call last):",
        '  File "/workspace/train.py", line 214, in <module>',
        "    main()",
        '  File "/workspace/train.py", line 187, in main',
        "    loss.backward()",
        '  File "/opt/conda/lib/python3.8/site-packages/torch/_tensor.py", line 396, in backward',
        "    torch.autograd.backward(self, gradient, retain_graph, create_graph, inputs=inputs)",
        '  File "/opt/conda/lib/python3.8/site-packages/torch/autograd/__init__.py", line 173, in backward',
        "    Variable._execution_engine.run_backward(  # Calls into the C++ engine to run the backward pass",
        "torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB (GPU 0; 23.69 GiB total capacity; 20.12 GiB already allocated; 1.53 GiB free; 21.02 GiB reserved in total by PyTorch) If reserved memory is >> allocated memory try setting max_split_size_mb to avoid fragmentation.  See documentation for Memory Management and PYTORCH_CUDA_ALLOC_CONF"]),
    ("gpu_oom", "torch-cuda-oom-v2", "training", [
        "Traceback (most recent call last):",
        '  File "/workspace/finetune.py", line 301, in <module>',
        "    trainer.train()",
        '  File "/usr/local/lib/python3.10/dist-packages/transformers/trainer.py", line 1885, in train',
        "    return inner_training_loop(",
        '  File "/usr/local/lib/python3.10/dist-packages/torch/nn/modules/module.py", line 1518, in _wrapped_call_impl',
        "    return self._call_impl(*args, **kwargs)",
        "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 1.50 GiB. GPU 0 has a total capacity of 79.15 GiB of which 1.21 GiB is free. Including non-PyTorch memory, this process has 77.93 GiB memory in use. Of the allocated memory 75.12 GiB is allocated by PyTorch, and 1.98 GiB is reserved by PyTorch but unallocated. If reserved but unallocated memory is large try setting PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to avoid fragmentation.  See documentation for Memory Management  (https://pytorch.org/docs/stable/notes/cuda.html#environment-variables)"]),
    ("gpu_oom", "torch-cuda-runtime-error-2", "training", [
        "THCudaCheck FAIL file=/pytorch/aten/src/THC/generic/THCStorage.cu line=58 error=2 : out of memory",
        "Traceback (most recent call last):",
        '  File "train.py", line 96, in <module>',
        "    output = model(input_var)",
        '  File "/usr/local/lib/python3.6/site-packages/torch/nn/modules/module.py", line 357, in __call__',
        "    result = self.forward(*input, **kwargs)",
        "RuntimeError: cuda runtime error (2) : out of memory at /pytorch/aten/src/THC/generic/THCStorage.cu:58"]),
    ("gpu_oom", "tf-resource-exhausted-oom", "training", [
        "2024-03-11 09:14:27.330119: W tensorflow/core/common_runtime/bfc_allocator.cc:479] Allocator (GPU_0_bfc) ran out of memory trying to allocate 784.00MiB (rounded to 822083584)requested by op model/conv2d_3/Conv2D",
        "2024-03-11 09:14:27.330470: W tensorflow/core/framework/op_kernel.cc:1780] OP_REQUIRES failed at conv_ops.cc:1068 : RESOURCE_EXHAUSTED: OOM when allocating tensor with shape[64,256,112,112] and type float on /job:localhost/replica:0/task:0/device:GPU:0 by allocator GPU_0_bfc",
        "Traceback (most recent call last):",
        '  File "/workspace/train_keras.py", line 77, in <module>',
        "    model.fit(train_ds, epochs=30, validation_data=val_ds)",
        '  File "/usr/local/lib/python3.9/dist-packages/keras/utils/traceback_utils.py", line 70, in error_handler',
        "    raise e.with_traceback(filtered_tb) from None",
        '  File "/usr/local/lib/python3.9/dist-packages/tensorflow/python/eager/execute.py", line 54, in quick_execute',
        "    tensors = pywrap_tfe.TFE_Py_Execute(ctx._handle, device_name, op_name,",
        "tensorflow.python.framework.errors_impl.ResourceExhaustedError: Graph execution error:",
        "",
        "OOM when allocating tensor with shape[64,256,112,112] and type float on /job:localhost/replica:0/task:0/device:GPU:0 by allocator GPU_0_bfc",
        "\t [[{{node model/conv2d_3/Conv2D}}]]",
        "Hint: If you want to see a list of allocated tensors when OOM happens, add report_tensor_allocations_upon_oom to RunOptions for current allocation info. This isn't available when running in Eager mode.",
        " [Op:__inference_train_function_5143]"]),
    ("gpu_oom", "jax-resource-exhausted", "training", [
        "Traceback (most recent call last):",
        '  File "/workspace/train_flax.py", line 412, in <module>',
        "    state, metrics = p_train_step(state, batch)",
        "jaxlib.xla_extension.XlaRuntimeError: RESOURCE_EXHAUSTED: Out of memory while trying to allocate 17179869184 bytes.",
        "BufferAssignment OOM Debugging.",
        "BufferAssignment stats:",
        "             parameter allocation:    1.20GiB",
        "              constant allocation:         0B",
        "        maybe_live_out allocation:    1.20GiB",
        "     preallocated temp allocation:   16.00GiB"]),
    ("gpu_oom", "nccl-cuda-oom", "initialization", [
        "node-03:2211:2290 [1] include/alloc.h:103 NCCL WARN Cuda failure 'out of memory'",
        "node-03:2211:2290 [1] NCCL INFO include/alloc.h:109 -> 1",
        "Traceback (most recent call last):",
        '  File "/workspace/train.py", line 58, in <module>',
        "    model = torch.nn.parallel.DistributedDataParallel(model, device_ids=[local_rank])",
        "torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1331, unhandled cuda error (run with NCCL_DEBUG=INFO for details), NCCL version 2.18.6",
        "ncclUnhandledCudaError: Call to CUDA function failed.",
        "Last error:",
        "Cuda failure 'out of memory'"]),
    ("illegal_index", "cuda-device-assert-nll", "training", [
        "../aten/src/ATen/native/cuda/Loss.cu:250: nll_loss_forward_reduce_cuda_kernel_2d: block: [0,0,0], thread: [5,0,0] Assertion `t >= 0 && t < n_classes` failed.",
        "Traceback (most recent call last):",
        '  File "/workspace/train.py", line 133, in <module>',
        "    loss = criterion(outputs, labels)",
        "RuntimeError: CUDA error: device-side assert triggered",
        "CUDA kernel errors might be asynchronously reported at some other API call, so the stacktrace below might be incorrect.",
        "For debugging consider passing CUDA_LAUNCH_BLOCKING=1.",
        "Compile with `TORCH_USE_CUDA_DSA` to enable device-side assertions."]),
    ("loss_nan", "detr-loss-is-nan", "training", [
        "Epoch: [3]  [ 1230/14786]  eta: 2:41:13  lr: 0.000100  class_error: 38.46  loss: 21.7341 (19.9002)  loss_ce: 1.0712 (1.0425)  time: 0.7120  data: 0.0152  max mem: 9211",
        "Epoch: [3]  [ 1240/14786]  eta: 2:41:05  lr: 0.000100  class_error: 45.11  loss: nan (nan)  loss_ce: nan (nan)  time: 0.7011  data: 0.0149  max mem: 9211",
        "Loss is nan, stopping training",
        "{'loss_ce': tensor(nan, device='cuda:0', grad_fn=<NllLoss2DBackward0>), 'loss_bbox': tensor(nan, device='cuda:0', grad_fn=<DivBackward0>), 'loss_giou': tensor(nan, device='cuda:0', grad_fn=<DivBackward0>)}"]),
    ("loss_nan", "fairseq-min-loss-scale", "training", [
        "2024-03-11 10:02:11 | INFO | fairseq.trainer | NOTE: gradient overflow detected, ignoring gradient, setting loss scale to: 0.0001",
        "Traceback (most recent call last):",
        '  File "/opt/conda/bin/fairseq-train", line 8, in <module>',
        "    sys.exit(cli_main())",
        '  File "/opt/conda/lib/python3.8/site-packages/fairseq/trainer.py", line 925, in train_step',
        "    raise FloatingPointError(",
        "FloatingPointError: Minimum loss scale reached (0.0001). Your loss is probably exploding. Try lowering the learning rate, using gradient clipping or increasing the batch size."]),
    ("loss_nan", "tf-check-numerics", "training", [
        "Traceback (most recent call last):",
        '  File "/workspace/train_tf1.py", line 201, in <module>',
        "    _, l = sess.run([train_op, loss], feed_dict=feed)",
        "tensorflow.python.framework.errors_impl.InvalidArgumentError: loss : Tensor had NaN values",
        "\t [[Node: CheckNumerics = CheckNumerics[T=DT_FLOAT, message=\"loss\", _device=\"/job:localhost/replica:0/task:0/device:GPU:0\"](Mean)]]"]),
    ("unclassified", "nccl-watchdog-timeout", "training", [
        "[E ProcessGroupNCCL.cpp:475] [Rank 1] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=15323, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=1800000) ran for 1800467 milliseconds before timing out.",
        "[E ProcessGroupNCCL.cpp:489] Some NCCL operations have failed or timed out. Due to the asynchronous nature of CUDA kernels, subsequent GPU operations might run on corrupted/incomplete data.",
        "[E ProcessGroupNCCL.cpp:495] To avoid data inconsistency, we are taking the entire process down.",
        "terminate called after throwing an instance of 'std::runtime_error'",
        "  what():  [Rank 1] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=15323, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=1800000) ran for 1800467 milliseconds before timing out."]),
]


# ------------------------------------------------------------------------------------------ wrappers
def prefix_rank(lines: list[str], rank: int) -> list[str]:
    return [f"[rank{rank}]: {ln}" for ln in lines]


def compose(rnd: random.Random, wrapper: str, failure: str, stage: str | None, category: str) -> tuple[str, int | None]:
    clock = Clock(rnd)
    host = f"{rnd.choice(['gpu', 'node', 'dgx', 'worker'])}-{rnd.randint(1, 64):02d}"
    fail_lines = failure.rstrip("\n").split("\n")
    pre: list[str] = []
    if wrapper != "bare":
        pre += [f"+ python train.py --config configs/{rnd.choice(['resnet50', 'bert_base', 'vit_b16', 'llama_7b_lora'])}.yaml"]
    if wrapper in ("torchrun", "nccl"):
        pre += ["WARNING:torch.distributed.run:", "*****************************************",
                "Setting OMP_NUM_THREADS environment variable for each process to be 1 in default, to avoid your system being overloaded, please further tune the variable for optimal performance in your application as needed.",
                "*****************************************"]
    pre += env_banner(rnd, clock)
    if wrapper in ("nccl", "torchrun") and stage != "initialization":
        pre += nccl_init(rnd, host, rnd.choice([2, 4, 8]))
    if rnd.random() < 0.6:
        pre += rnd.choice(DECOYS)(rnd)
    st = stage or "training"
    if st in ("data_preprocessing", "training", "evaluation"):
        pre += preprocessing(rnd, clock)
    if st in ("training", "evaluation"):
        pre += train_steps(rnd, clock, rnd.randint(1, 3) if st == "training" else rnd.randint(2, 4),
                           rnd.choice(["tqdm", "keras", "plain"]))
        if rnd.random() < 0.4:
            pre += rnd.choice(DECOYS)(rnd)
    if st == "training":
        pre.append(tqdm_bar(rnd, f"Epoch {rnd.randint(1, 5)}", 500, stop_at=rnd.randint(10, 480)))
    if st == "evaluation":
        pre += eval_intro(rnd, clock)[:3]
    exit_code: int | None = 1
    if wrapper == "torchrun":
        body = prefix_rank(fail_lines, 0)
        if rnd.random() < 0.5:  # a second rank fails the same way, interleaved
            body2 = prefix_rank(fail_lines, 1)
            mixed = []
            for a, b in zip(body, body2):
                mixed += [a, b]
            body = mixed + body[len(body2):] + body2[len(body):]
            failed = [0, 1]
        else:
            failed = [0]
        body += [f"W{clock.glog()} 140{rnd.randint(100000, 999999)} torch/distributed/elastic/multiprocessing/api.py:858] Sending process {rnd.randint(1000, 9999)} closing signal SIGTERM"]
        body += torchrun_summary(rnd, clock, host, failed, "train.py")
    elif wrapper == "slurm":
        body = fail_lines + [f"srun: error: {host}: task 0: Exited with exit code 1",
                             f"srun: Terminating StepId={rnd.randint(1000000, 9999999)}.0"]
    elif wrapper == "k8s":
        body = fail_lines + [f"{clock.iso()} INFO launcher: training process exited with code 1, uploading logs"]
    else:
        body = fail_lines
    return "\n".join(pre + body) + "\n", exit_code


def killed_log(rnd: random.Random, kind: str) -> tuple[str, int | None, str]:
    """cpu_oom endings without a Python error: Slurm OOM-kill event or a Kubernetes exit 137."""
    clock = Clock(rnd)
    host = f"node-{rnd.randint(1, 64):02d}"
    lines = [f"+ python train.py --config configs/{rnd.choice(['resnet50', 'bert_base', 'wav2vec2'])}.yaml"]
    lines += env_banner(rnd, clock)
    stage = rnd.choice(["data_preprocessing", "training"])
    lines += preprocessing(rnd, clock)
    if stage == "training":
        lines += train_steps(rnd, clock, rnd.randint(1, 3), rnd.choice(["tqdm", "plain"]))
        lines.append(tqdm_bar(rnd, "Epoch 2", 782, stop_at=rnd.randint(10, 700)))
    if rnd.random() < 0.5:
        lines += rnd.choice(DECOYS)(rnd)
    jobid = rnd.randint(1000000, 9999999)
    if kind == "slurm":
        lines += [f"slurmstepd: error: Detected 1 oom_kill event in StepId={jobid}.batch. Some of the step tasks have been OOM Killed."]
        if rnd.random() < 0.5:
            lines += [f"srun: error: {host}: task 0: Out Of Memory"]
        exit_code = rnd.choice([None, 137, 9])
    else:  # Kubernetes: the container just stops; the platform records exit code 137
        exit_code = 137
    return "\n".join(lines) + "\n", exit_code, stage


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=HERE / "job_logs.jsonl")
    ap.add_argument("--notebook-rows", type=int, default=90, help="notebook crashes to embed")
    args = ap.parse_args()
    rnd = random.Random(SEED)
    progs = [json.loads(l) for l in (HERE / "programs.jsonl").read_text(encoding="utf-8").splitlines() if l.strip()]
    nbs = [json.loads(l) for l in (HERE / "notebook_crashes.jsonl").read_text(encoding="utf-8").splitlines() if l.strip()]
    out = []

    def add(wrapper, origin, category, stage, log, exit_code, group):
        rec = {"id": f"job-{len(out) + 1:04d}", "log": log, "category": category}
        if stage:
            rec["stage"] = stage
        if exit_code is not None:
            rec["exit_code"] = exit_code
        rec["group"] = group
        rec["source"] = f"composed:{wrapper}:{origin}"
        out.append(rec)

    wrappers = ["plain", "torchrun", "nccl", "slurm", "k8s", "bare"]
    # 1. every program output in two different wrappers (same group: same failure)
    for p in progs:
        if p["exit_code"] == 137:  # a signal death has no traceback to embed; covered by killed_log below
            continue
        for w in rnd.sample(wrappers, 2):
            log, ec = compose(rnd, w, p["log"], p.get("stage"), p["category"])
            add(w, p["source"], p["category"], p.get("stage"), log, ec, p["id"])
    # 2. a stratified sample of notebook crashes (at most 6 per category), one wrapper each (some two)
    by_cat: dict[str, list] = {}
    for r in nbs:
        by_cat.setdefault(r["category"], []).append(r)
    picked = []
    for cat in sorted(by_cat):
        rows = by_cat[cat]
        picked += rnd.sample(rows, min(6, len(rows)))
    rnd.shuffle(picked)
    for r in picked[: args.notebook_rows]:
        stage = NB_STAGE.get(r.get("pipeline_stage", ""))
        for w in rnd.sample(wrappers, 1 if rnd.random() < 0.7 else 2):
            log, ec = compose(rnd, w, r["log"], stage, r["category"])
            add(w, r["id"], r["category"], stage, log, ec, r["id"])
    # 3. public GPU / NaN texts, each in two wrappers
    for cat, name, stage, lines in PUBLIC:
        for w in rnd.sample(["plain", "torchrun", "nccl", "slurm", "k8s"], 2):
            log, ec = compose(rnd, w, "\n".join(lines), stage, cat)
            add(w, "public:" + name, cat, stage, log, ec, "public:" + name)
    # 4. OOM kills with no error text
    for kind in ["slurm"] * 5 + ["k8s"] * 5:
        log, ec, stage = killed_log(rnd, kind)
        add(kind + "-oomkill", kind, "cpu_oom", stage, log, ec, f"{kind}-oomkill")
    with args.out.open("w", encoding="utf-8") as f:
        for r in out:
            f.write(json.dumps(r, ensure_ascii=False) + "\n")
    print(f"wrote {len(out)} composed job logs to {args.out}")


if __name__ == "__main__":
    main()
