# category: attribute_not_found
# stage: data_preprocessing
# venv: torch
"""np.float was removed in NumPy 1.24: an old script on a new image."""
import numpy as np

features = np.random.RandomState(0).rand(4, 3)
features = features.astype(np.float)
