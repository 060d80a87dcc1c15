# category: illegal_argument
# stage: initialization
# args: --batch-size 32.0 --workers 4
import argparse

parser = argparse.ArgumentParser(prog="run_classifier.py")
parser.add_argument("--batch-size", type=int, required=True)
parser.add_argument("--workers", type=int, default=2)
args = parser.parse_args()
