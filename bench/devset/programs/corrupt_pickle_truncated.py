# category: corrupt_data
# stage: data_preprocessing
import pickle

blob = pickle.dumps({"x": list(range(1000)), "y": [0, 1] * 500})
with open("cache.pkl", "wb") as f:
    f.write(blob[: len(blob) // 2])
with open("cache.pkl", "rb") as f:
    data = pickle.load(f)
