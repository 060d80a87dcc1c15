"""The job's own failures as their producers word them (tests/fixtures/program_templates): each message template read in
PyTorch, TensorFlow, JAX, the Hugging Face libraries, the training wrappers, CPython or the scientific stack is read in
the category its reader chose, unless the taxonomy or the labelled data backs another (DISAGREE) or nothing reads it
yet (NOT_READ). Rules version 16 were written from these templates: training figures. The templates are read with
tagging:2026-11zb, the last config whose learned fallback never saw them (ml8, in 2026-11zc, was trained on them), so
these tests say what the rules and an unbiased fallback read."""
import pytest

from jobs_ingest.core import analyse_text
from jobs_ingest.core.taxonomy import CATEGORIES
from tests.devset import raised, template_rows

STUDY_CATEGORIES = {c for c in CATEGORIES if c != "unclassified"}

# Example substring -> (the category the product answers, why it is not the template reader's).
_TAXONOMY = "the taxonomy's own example backs the rule's category"
_DEFAULT = "one reading of several; the type's default from the study's counts stands"
_CHECKPOINT = "a checkpoint without a parameter the model has is tensor_mismatch, as 'Missing key(s) in state_dict' is"
DISAGREE = {
    "unsupported operand type(s) for +: 'int' and 'NoneType'": ("null_reference", "the taxonomy files '... not NoneType' "
                                                                "under null_reference"),
    "!_src.empty()": ("illegal_argument", "the study's notebook crashes label OpenCV's -215 assertion illegal_argument"),
    "File does not contain tensor": ("tensor_mismatch", _CHECKPOINT),
    'Could not find parameter named "kernel"': ("tensor_mismatch", _CHECKPOINT),
    "Could not locate class 'AttentionBlock'": ("framework_api_misuse", "as Keras 2's 'Unknown layer' is"),
    '"nll_loss_forward_reduce_cuda_kernel_2d_index" not implemented': ("not_implemented", _TAXONOMY),
    "load() missing 1 required positional argument": ("type_mismatch", "a call signature, as 'unexpected keyword "
                                                                       "argument' is in the taxonomy"),
    "Can't pickle local object": ("attribute_not_found", _TAXONOMY),
    "cannot assign parameters before Module.__init__()": ("attribute_not_found", _TAXONOMY),
    "cannot pickle '_thread.lock' object": ("type_mismatch", _DEFAULT),
    "Weights only load failed. This file can still be loaded": ("corrupt_data", "an unpickling error, as the taxonomy's 'unpickling errors' are"),
    "without having git-lfs installed": ("library_not_found", "the message names a tool that is not installed"),
    "MissingConfigException: Cannot find primary config": ("illegal_argument", "a configuration error type, as version 7 "
                                                                                "reads every *ConfigError"),
    "'DeepSpeedCPUAdam' object has no attribute 'ds_opt_adam'": ("attribute_not_found", _TAXONOMY),
    "Early stopping conditioned on metric": ("illegal_argument", "version 8's Lightning monitor rule: a monitor "
                                                                 "argument naming no logged metric"),
    "ModelCheckpoint(monitor='val_loss')": ("illegal_argument", "version 8's Lightning monitor rule"),
    "MisconfigurationException: You requested gpu": ("framework_api_misuse", "Lightning's MisconfigurationException "
                                                                              "type, as version 9 reads it"),
    "In automatic_optimization, when `training_step`": ("framework_api_misuse", "Lightning's type, as above"),
    "`configure_optimizers` must include a monitor": ("framework_api_misuse", "Lightning's type, as above"),
    "Unknown configuration for model optimizers": ("framework_api_misuse", "Lightning's type, as above"),
    "IndivisibleError": ("tensor_mismatch", "the learned fallback's answer: a shape the mesh cannot divide"),
    "Incompatible attr in node": ("tensor_mismatch", "the learned fallback's answer; the attr may be a shape or a dtype"),
    "did not match any variant of untagged enum": ("corrupt_data", "the learned fallback's answer: a tokenizer file "
                                                                  "its reader cannot parse"),
}
for _key in ("The checkpoint you are trying to load has model type", "Unrecognized model in",
             "Asking to pad but the tokenizer does not have a padding token", "includes input_ids, but you provided",
             "The model did not return a loss", "No columns in the dataset match",
             "You cannot perform fine-tuning on purely quantized", "Cannot handle batch sizes > 1",
             "Object arrays cannot be loaded when allow_pickle=False", "Attempting to unscale FP16 gradients",
             "No inf checks were recorded", "can't optimize a non-leaf Tensor", "loaded state dict contains a parameter",
             "Expected parameter loc", "File format not supported: filepath", "No gradients provided for any variable",
             "was called, but the tensor must have a single element", "loaded in 8-bit or 4-bit precision",
             "loaded with `device_map='auto'`", "AcceleratorState has already been initialized",
             "Target module QuantLinear() is not supported", "Expected a string path to an existing deepspeed config"):
    DISAGREE[_key] = ("illegal_argument", _DEFAULT)
# The second round (OpenMMLab, detectron2 and the research toolkits): where the type's default or a rule the taxonomy
# backs stands.
for _key in ("Annotation must have data_list and metainfo keys", "Dataset 'my_dataset_train' is already registered",
             "Attribute 'thing_classes' in the metadata", "Failed to read image at:", "Failed to use mask_format",
             "Cannot convert segmentation of type", "does not define a callable object", "failed to load image: data/coco",
             "should be a tuple of str", "Annotation ids in", "Failed to load `ann_file`",
             "Dataset 'my_dataset_train' is empty", "Incorrect dictionary format", "Label class 5 exceeds",
             "Audio buffer is not finite", "Audio data must be floating-point", "didn't find ['jpg', 'jpeg', 'png']",
             "to_tuple ('jpg', 'cls')", "explicit nodesplitter", "duplicate file name in tar file",
             "Expected x_max for bbox", "In YOLO format all coordinates", "Height and Width of image, mask",
             "src/txt path is required", "Unsupported backend 'sox'", 'structure: {"audio_path"',
             'structure: {"audio_filepath"'):
    DISAGREE[_key] = ("illegal_argument", _DEFAULT)
DISAGREE.update({
    "The annotations loaded from annotation file should be a dict": ("type_mismatch", _DEFAULT),
    "'ConfigDict' object has no attribute": ("attribute_not_found", _TAXONOMY),
    "ConvWS is already registered": ("framework_api_misuse", "a registry's duplicate name, as version 17 reads every "
                                                             "'is already registered in'"),
    "gradients are inconsistent between workers": ("loss_nan", _DEFAULT),
    "You have to pass data to augmentations as named arguments": ("key_not_found", _TAXONOMY),
})

NOT_READ = {
    "logged as a warning or an info line, not raised: no failure for the parser to read": (
        "unexpected key in source state_dict", "missing keys in source state_dict",
        "dataset names are not registered in the DatasetCatalog", "Attempting to copy inputs of",
        "ignoring corrupt image/label"),
    "pip, hydra and the compiler print no exception line the parser reads as a failure": (
        "Could not find a version that satisfies the requirement", "Could not override 'trainer.gpus'", "because these package versions have conflict",
        "unsupported GNU version", "Gradient overflow.  Skipping step"),
    "no rule: left unclassified, so no wrong advice": (
        "DecompressionBombError", "CondaError: Run 'conda init'", "Python 3.16+ not yet supported",
        "Cannot find argument 'data_name'", "MetaGraphDef associated with tags", "used a DP world size of",
        "No pretrained weights exist for", "FlashAttention only supports Ampere GPUs",
        "FlashAttention forward only supports head dimension"),
}


TEMPLATES = template_rows("program_templates")
READABLE = [row for row in TEMPLATES if row["category"] in STUDY_CATEGORIES]
RULES_CONFIG = "tagging:2026-11zb"



def _expected(row: dict) -> str:
    return next((category for key, (category, _) in DISAGREE.items() if key in row["example"]), row["category"])


def _param(row: dict):
    miss = next((why for why, keys in NOT_READ.items() if any(key in row["example"] for key in keys)), None)
    return pytest.param(row, id=f"{row['file']}-{row['example'][:50]}",
                        marks=pytest.mark.xfail(reason=miss, strict=True) if miss else ())


def test_the_templates_name_their_sources():
    assert len(TEMPLATES) >= 350 and len(READABLE) >= 340
    assert all(row["source"].strip() and row["template"].strip() and row["example"].strip() for row in TEMPLATES)
    assert {row["category"] for row in TEMPLATES} <= STUDY_CATEGORIES | {"unclear", "platform"}
    for key in [*DISAGREE, *(k for keys in NOT_READ.values() for k in keys)]:
        assert sum(key in row["example"] for row in READABLE) == 1, key   # each names one template


@pytest.mark.parametrize("row", [_param(r) for r in READABLE])
def test_a_template_is_read_in_its_category(row):
    analysis = analyse_text(raised(row["example"]), tagging_config=RULES_CONFIG)
    assert analysis.category == _expected(row), analysis.rule


def test_versions_16_and_17_read_what_version_15_did_not():
    rows = [r for r in READABLE if not any(k in r["example"] for keys in NOT_READ.values() for k in keys)]
    before = sum(analyse_text(raised(r["example"]), tagging_config="tagging:2026-11y").category == _expected(r)
                 for r in rows)
    now = sum(analyse_text(raised(r["example"]), tagging_config=RULES_CONFIG).category == _expected(r) for r in rows)
    assert before <= 368 < now == len(rows) == 452   # released configs do not move (2026-11za: 419)
