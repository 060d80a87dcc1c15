"""Learning from triage, the decision (jobs_ingest/core/judged.py): no server."""
import dataclasses

from jobs_ingest.core import analyse_text
from jobs_ingest.core.judged import Neighbour, is_unsure, refine, similarity

UNKNOWN = ("Traceback (most recent call last):\n  File \"/home/a/pipeline.py\", line 12, in load\n"
           "ShardManifestError: manifest of shard '/data/set-a/007.tar' lists 512 samples, found 498\n")


def unsure():
    analysis = analyse_text(UNKNOWN)
    assert is_unsure(analysis)  # the learned model's guess (corrupt_data) or unclassified
    return analysis


def neighbour(category="corrupt_data", message="ShardManifestError: manifest of shard <q> lists <n> samples, found <n>",
              exception_type="ShardManifestError", signature_id="7", fingerprint="f-other"):
    return Neighbour(signature_id, category, exception_type, message, fingerprint)


def test_an_unsure_failure_takes_the_category_its_judged_neighbour_was_given():
    refined = refine(unsure(), [neighbour("unexpected_encoding")])
    assert refined.category == "unexpected_encoding" and refined.dimension == "data"
    assert refined.rule == "judged.unexpected_encoding" and refined.judged_like == "7"
    assert "signature 7" in refined.evidence and 0.7 <= refined.confidence <= 0.9


def test_a_confident_rule_is_not_overruled():
    analysis = analyse_text("Traceback (most recent call last):\n  File \"t.py\", line 3, in <module>\n"
                            "KeyError: 'learning_rate'\n")
    assert not is_unsure(analysis)
    same = neighbour("illegal_argument", analysis.masked_message, "KeyError")
    assert refine(analysis, [same]) == analysis


def test_neighbours_that_disagree_teach_nothing():
    a, b = neighbour("corrupt_data", signature_id="1"), neighbour("path_not_found", signature_id="2")
    assert refine(unsure(), [a, b]) == unsure()


def test_another_exception_type_or_a_different_message_is_no_neighbour():
    assert refine(unsure(), [neighbour(exception_type="ValueError")]) == unsure()
    far = neighbour(message="ShardManifestError: could not reach the metadata service at <q>")
    assert refine(unsure(), [far]) == unsure()


def test_the_failures_own_signature_is_not_its_neighbour():
    analysis = unsure()
    own = neighbour(fingerprint=analysis.fingerprint)
    assert refine(analysis, [own]) == analysis


def test_a_judged_infrastructure_category_makes_it_a_platform_fault():
    analysis = dataclasses.replace(unsure(), exception_type="", masked_message="srun: error: Node failure on <host>")
    judged = neighbour("node_lost", "srun: error: Node failure on <host>", "")
    refined = refine(analysis, [judged])
    assert refined.category == "node_lost" and refined.fault == "platform"


def test_similarity_masks_names_paths_and_numbers():
    assert similarity("KeyError: 'lr' at /a/b.py:3", "KeyError: 'momentum' at /c/d.py:99") == 1.0
    assert similarity("CUDA out of memory", "") == 0.0


def test_a_confident_tag_yields_to_a_correction_of_that_same_tag_on_a_near_identical_failure():
    analysis = analyse_text("Traceback (most recent call last):\n  File \"t.py\", line 3, in <module>\n"
                            "KeyError: 'learning_rate'\n")
    corrected = neighbour("illegal_argument", analysis.masked_message, "KeyError")
    corrected = dataclasses.replace(corrected, auto_category=analysis.category)
    refined = refine(analysis, [corrected])
    assert refined.category == "illegal_argument" and refined.rule == "judged.illegal_argument"
    # a confirmation (or another tag's correction) does not move a confident tag
    assert refine(analysis, [dataclasses.replace(corrected, auto_category="path_not_found")]) == analysis
