"""memlab's plumbing, one of each: the ``git ls-tree`` parser and its rule for names that are
not UTF-8 (:func:`parse_ls_tree`, :func:`tree_name`, :func:`shown_name`) and the atomic
writer (:func:`replacing`, :func:`replacing_path`, :func:`write_atomic`). A ``"module:attr"``
reference is resolved by the standard library's :func:`pkgutil.resolve_name` everywhere.

Kept where they were, as the one implementation each (moving them would touch every loader,
and the letta_home kind being built beside this): running git, :mod:`memlab._git` (its
readers parse listings here); the folder walker, :func:`memlab._files.walk`. The rule tests
(tests/test_usage_rules.py) fail on a second ``ls-tree`` parser, an ``os.walk`` outside the
walker, or a second atomic write.
"""

from __future__ import annotations

from memlab.io._atomic import replacing, replacing_path, write_atomic
from memlab.io._git_tree import TreeRecord, parse_ls_tree, shown_name, tree_name

__all__ = [
    "TreeRecord",
    "parse_ls_tree",
    "tree_name",
    "shown_name",
    "replacing",
    "replacing_path",
    "write_atomic",
]
