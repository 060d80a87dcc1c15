# category: corrupt_data
# stage: data_preprocessing
import gzip

data = gzip.compress(b"0.1,0.2,0.3\n" * 10000)
with open("train.csv.gz", "wb") as f:
    f.write(data[: len(data) // 2])
with gzip.open("train.csv.gz", "rt") as f:
    rows = [line.split(",") for line in f]
