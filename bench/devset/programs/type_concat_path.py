# category: type_mismatch
# stage: initialization
from pathlib import Path

data_root = Path("/data/imagenet")
train_list = "/mnt/lists/" + data_root / "train.txt"
