# category: cpu_oom
# stage: data_preprocessing
# venv: torch
# ulimit_v: 2000000
import numpy as np

n = 200_000
print(f"building a {n}x{n} distance matrix", flush=True)
d = np.zeros((n, n), dtype=np.float32)
