# category: corrupt_data
# stage: data_preprocessing
import pickle

open("features.pkl", "wb").close()  # an empty cache file left by a crashed job
with open("features.pkl", "rb") as f:
    features = pickle.load(f)
