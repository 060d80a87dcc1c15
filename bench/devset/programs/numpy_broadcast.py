# category: tensor_mismatch
# stage: data_preprocessing
# venv: torch
import numpy as np

images = np.zeros((32, 224, 224, 3), dtype=np.float32)
mean = np.array([0.485, 0.456, 0.406, 0.5])  # 4 channel means for 3-channel images
normalised = (images - mean) / 0.25
