"""Grouping rules (pure): which rule sends a failure where."""
from jobs_ingest.core.grouping_rules import Rule, choose


def test_a_split_is_tried_before_a_merge_and_needs_its_text():
    merge = Rule(1, "merge", "", target=10)
    split = Rule(2, "split", "node-7", target=20)
    assert choose([merge, split], "RuntimeError on node-7", "") == split
    assert choose([merge, split], "RuntimeError on node-3", "") == merge
    assert choose([split], "", "NCCL timeout, rank 3 on node-7") == split  # the message counts too
    assert choose([split], "RuntimeError on node-3", "other") is None


def test_the_oldest_rule_of_a_kind_wins():
    assert choose([Rule(5, "merge", "", 50), Rule(3, "merge", "", 30)], "x", "").target == 30
    assert choose([], "x", "") is None
