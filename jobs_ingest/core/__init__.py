"""The pure core of jobtriage: log reading, failure finding, tagging and fingerprinting.

No Django and no server imports here, so it is fast to test and safe to fuzz.
"""
from .analysis import Analysis
from .configs import GROUPING_CONFIGS, TAGGING_CONFIGS, UnknownConfig, grouping_config, tagging_config
from .pipeline import analyse_log, analyse_text

__all__ = ["Analysis", "GROUPING_CONFIGS", "TAGGING_CONFIGS", "UnknownConfig", "analyse_log", "analyse_text",
           "grouping_config", "tagging_config"]
