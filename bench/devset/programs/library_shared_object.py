# category: library_not_found
# stage: initialization
import ctypes

lib = ctypes.CDLL("libcudart.so.10.1")
