# category: cpu_oom
# stage: training
# shell: true
"""The process is killed with SIGKILL mid-training, as the OOM killer does (exit 137, no Python traceback)."""
import os
import signal
import time

for step in range(1, 6):
    print(f"step {step}/1000 loss {2.0 / step:.4f}", flush=True)
    time.sleep(0.05)
os.kill(os.getpid(), signal.SIGKILL)
