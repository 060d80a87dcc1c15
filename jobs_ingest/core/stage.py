"""The stage a job failed in: initialization, data_preprocessing, training, evaluation or unknown.

Read from the training-side hook's marker, the user's function names on the stack, what the job
printed last, and the failing statement, in that order. Part of the tagging config's decisions
(configs.py): a change here is a new tagging config.
"""
from __future__ import annotations

import re

from .tracebacks import Frame, is_user_frame

# Stage from the names of functions on the stack, innermost first (most specific wins).
_STAGE_BY_FUNCTION = [
    ("evaluation", re.compile(r"eval|valid|(?:^|_)test(?:_|$)|predict|infer|score|metric|benchmark", re.I)),
    ("data_preprocessing", re.compile(r"__getitem__|__next__|collate|load_data|dataset|dataloader|preprocess"
                                      r"|tokeni[sz]|transform|augment|read_(?:csv|data|image)|prepare_data|_worker_loop"
                                      r"|fetch|get_batch|make_data|build_data|encode|vocab", re.I)),
    ("training", re.compile(r"train|fit\b|(?:^|_)fit|backward|optimi[sz]er?_?step|training_step|run_epoch|(?:^|_)step$"
                            r"|_one_epoch|epoch", re.I)),
    ("initialization", re.compile(r"^<module>$|__init__|setup|build_model|create_model|get_model|load_model"
                                  r"|from_pretrained|parse_args|init_process_group|load_checkpoint|load_state_dict|^build_"
                                  r"|configure|main_worker|init", re.I)),
]
# Stage from the source line Python printed under a user frame, when function names say nothing
# (scripts and notebooks run at module level): what the failing statement was doing.
_STAGE_BY_CODE = [
    ("training", re.compile(r"\.backward\(|\bloss\b\s*=|_loss\(|cross_entropy\(|criterion\(|optimi[sz]er\.step"
                            r"|\.fit\(|\btrainer\.|\.train\(|train_(?:step|epoch|one)"
                            r"|\bout(?:puts?)?\s*=\s*(?:self\.)?(?:model|net|emb\w*)\(", re.I)),
    ("evaluation", re.compile(r"\beval|predict|accuracy|\bmetrics?\b|\bscore\(|\.evaluate\(", re.I)),
    ("data_preprocessing", re.compile(r"\bopen\(|json\.loads?\(|pickle\.loads?\(|np\.load|pd\.read_|read_csv"
                                      r"|Image\.open|imread|DataLoader\(|\bloader\b|dataset|\bds\[|tokeni[sz]|zipfile"
                                      r"|gzip|\bcsv\.|listdir|glob\(|\.astype\(|for \w+ in f\b|\bfeatures\b|\bimages\b"
                                      r"|\bsamples\b|transform|preprocess|normali[sz]e|\.split\(", re.I)),
    ("initialization", re.compile(r"^import |^from \S+ import|parse_args|load_state_dict|torch\.load|from_pretrained"
                                  r"|build_|\bconfig\b|\bcfg\b|\.to\(device\)|\.cuda\(\)", re.I)),
]
# Stage from lines the job printed before failing, newest first. The training-side hook writes
# "[jobtriage] stage=<name>" and wins over everything else.
_HOOK_MARKER = re.compile(r"\[jobtriage\] stage[=:]\s*(initialization|data_preprocessing|training|evaluation)")
# Start-up lines that print the run's parameters mention "training" and "evaluation" without
# either having started (HF's "Training/evaluation parameters TrainingArguments(...)").
_PARAMETER_DUMP = re.compile(r"parameters|arguments|\bargs\b|Namespace\(|\bconfig\b|\b\w+: (?:True|False)\b", re.I)
_STAGE_BY_LOG = [
    ("evaluation", re.compile(r"\b(?:Evaluat(?:e|ing|ion)|Validat(?:e|ing|ion)|Testing|Running (?:eval|predict|test)"
                              r"|eval_loss|val_loss|val_acc|\*\*\*\*\* Running Evaluation|Predicting)\b", re.I)),
    ("training", re.compile(r"\b(?:Epoch\s*[\[:]?\s*\d+|epoch \d+/\d+|step[ =:]+\d+|iter(?:ation)?[ =:]+\d+|loss[ =:]+[\d.]"
                            r"|Training|\*\*\*\*\* Running training|it/s\]|s/it\])", re.I)),
    ("data_preprocessing", re.compile(r"\b(?:Loading (?:the )?(?:data|dataset)|Preprocess|Tokeniz|Map:|Building "
                                      r"(?:the )?(?:dataset|vocab)|Downloading (?:data|dataset)|Generating \w+ split)", re.I)),
    ("initialization", re.compile(r"\b(?:Loading (?:model|checkpoint|weights|config)|Initializ|Building model"
                                  r"|Using device|world_size|Setting up|Downloading model)", re.I)),
]
# Categories that can only happen before training starts, when nothing else tells the stage.
_INITIALIZATION_CATEGORIES = {"syntax_error"}
_LIKELY_INITIALIZATION = {"library_not_found"}


def hook_stage(lines: list[str], before: int) -> str:
    for line in reversed(lines[:before]):
        m = _HOOK_MARKER.search(line)
        if m:
            return m.group(1)
    return ""


def stage(frames: list[Frame], lines: list[str], before: int, category: str) -> str:
    hooked = hook_stage(lines, before)
    if hooked:
        return hooked
    # Innermost user frames first: "evaluate -> model.forward" is evaluation, not training.
    user_frames = [f for f in reversed(frames) if is_user_frame(f)]
    user_functions = [f.function for f in user_frames if f.function]
    for function in user_functions:
        if function.startswith("<"):  # <module>, <listcomp>, <lambda>: no meaning
            continue
        for stage, pattern in _STAGE_BY_FUNCTION:
            if pattern.search(function):
                return stage
    if category in _INITIALIZATION_CATEGORIES:
        return "initialization"  # compiled or imported at start-up, whatever the log said before
    # What the job said it was doing last, then what the failing statement does.
    for line in reversed(lines[max(0, before - 400):before]):
        if _PARAMETER_DUMP.search(line):
            continue
        for stage, pattern in _STAGE_BY_LOG:
            if pattern.search(line):
                return stage
    for frame in user_frames:
        for stage, pattern in _STAGE_BY_CODE:
            if frame.code and pattern.search(frame.code):
                return stage
    if category in _LIKELY_INITIALIZATION or (user_functions and set(user_functions) <= {"<module>", "main"}):
        return "initialization"
    return "unknown"
