# category: illegal_argument
# stage: initialization
# args: --lr 0.01 --epochs 3 --local_rank=0
"""A launch script passes an argument the training script does not define."""
import argparse

parser = argparse.ArgumentParser(prog="train.py")
parser.add_argument("--lr", type=float, default=1e-3)
parser.add_argument("--epochs", type=int, default=10)
args = parser.parse_args()
print("training with", args)
