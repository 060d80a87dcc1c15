# category: illegal_argument
# stage: initialization
# args: --optimizer adamw --batch-size 64
import argparse

parser = argparse.ArgumentParser(prog="train.py")
parser.add_argument("--optimizer", choices=["sgd", "adam", "rmsprop"], default="sgd")
parser.add_argument("--batch-size", type=int, default=32)
args = parser.parse_args()
