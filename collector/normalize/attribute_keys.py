"""``ATTRIBUTE_SELECTOR``: every span attribute the normalizer reads, and nothing else.

Built from the keys each module declares next to the code that reads them, so a
new reader cannot forget the decoder. Event attributes are not listed: the
decoder keeps them whole (their keys, like Strands' ``content``, are not
namespaced). ``tests/golden/test_normalize_golden.py`` proves the set complete: every
attribute access is recorded and checked, and selected decoding gives the same
trajectories as decoding everything.
"""

from __future__ import annotations

from typing import Final

from collector.decode.common import AttributeSelector
from collector.normalize import errors, evidence, named_agents, rebuilt_spans, retries
from collector.normalize.conventions import FAMILIES

ATTRIBUTE_SELECTOR: Final = AttributeSelector(
    keys=[key for family in FAMILIES for key in family.KEYS]
    + [*errors.KEYS, *retries.KEYS, *named_agents.KEYS, *rebuilt_spans.KEYS],
    prefixes=[prefix for family in FAMILIES for prefix in family.PREFIXES],
    suffixes=evidence.SUFFIXES,
)
