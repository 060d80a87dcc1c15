# category: path_not_found
# stage: initialization
import csv

with open("data/labels/train_labels.csv", newline="") as f:
    labels = list(csv.reader(f))
