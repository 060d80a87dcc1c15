# category: path_not_found
# stage: initialization
"""A loader wraps FileNotFoundError in a generic RuntimeError ('The above exception was the direct cause')."""
import os


def load_checkpoint(path):
    try:
        with open(path, "rb") as f:
            return f.read()
    except OSError as e:
        raise RuntimeError(f"could not load checkpoint {path}") from e


ckpt = os.path.join("checkpoints", "run-17", "epoch_0042.pt")
print("resuming from", ckpt)
state = load_checkpoint(ckpt)
