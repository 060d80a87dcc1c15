# category: path_not_found
# stage: data_preprocessing
import os

data_dir = os.environ.get("DATA_DIR", "/mnt/data/imagenet/train")
classes = sorted(os.listdir(data_dir))
print(len(classes), "classes")
