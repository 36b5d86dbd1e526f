"""What one memory states a value of (its claim: key and value), an explicit correction and
its kind: `skills.builtin.claims`, where the extractor (`fact_extract`) names the same keys.
Memories' modules name it from here."""

from skills.builtin.claims import (
    PREFERENCE,
    Claim,
    claim,
    claim_value,
    holds_value,
    key_normalize,
    kind_infer,
    same_value,
)

__all__ = [
    "PREFERENCE",
    "Claim",
    "claim",
    "claim_value",
    "holds_value",
    "key_normalize",
    "kind_infer",
    "same_value",
]
