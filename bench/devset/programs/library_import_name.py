# category: library_not_found
# stage: initialization
# venv: torch
from numpy import int_, float_  # float_ was removed in NumPy 2.0
