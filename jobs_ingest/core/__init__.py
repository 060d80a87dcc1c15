"""The pure core of jobtriage: log reading, failure finding, tagging and fingerprinting.

No Django and no server imports here, so it is fast to test and safe to fuzz.
"""
from .analyse import analyse_log, analyse_text
from .analysis import Analysis

__all__ = ["Analysis", "analyse_log", "analyse_text"]
