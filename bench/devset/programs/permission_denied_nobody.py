# category: permission_denied
# stage: initialization
# as_user: nobody
"""Run as an unprivileged user: the output directory belongs to root and is not writable."""
import os

out_dir = "/root/.cache/experiments/run-0421"
os.makedirs(os.path.join(out_dir, "checkpoints"), exist_ok=True)
