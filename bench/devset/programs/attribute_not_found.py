# category: attribute_not_found
# stage: initialization
import argparse

parser = argparse.ArgumentParser()
parser.add_argument("--lr", type=float, default=0.1)
args = parser.parse_args([])
print("lr:", args.lr)
print("momentum:", args.momentum)
