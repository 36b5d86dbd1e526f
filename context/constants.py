"""Constants of the context call."""

# The blocks of a context, in the order the prompt prints them.
BLOCK_KINDS = ("wiki", "semantic", "episodic", "working")
