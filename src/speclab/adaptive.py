"""Choosing how many tokens to draft each round (lessons 05 and 06).

`speculative_decode(..., adaptive=True)` asks a policy for k before each round and tells it
what happened after. `FixedK` always drafts k_max. `AdaptiveK` follows the heuristic that
Hugging Face transformers uses for its assistant models: after a round in which every draft
was accepted, draft 2 more next time; otherwise draft 1 fewer (never fewer than 1, never more
than k_max).

Left out here: a cost model and an off-switch for drafting (lesson 06 adds them).
"""


class FixedK:
    """Always draft k_max tokens."""

    def __init__(self, k_max: int):
        self.k_max = k_max

    def next_k(self) -> int:
        return self.k_max

    def update(self, drafted: int, accepted: int) -> None:
        pass


class AdaptiveK:
    """+2 after a fully accepted round, -1 otherwise, within 1..k_max."""

    def __init__(self, k_max: int):
        self.k_max = k_max
        self.k = k_max

    def next_k(self) -> int:
        return self.k

    def update(self, drafted: int, accepted: int) -> None:
        if drafted == 0:
            return  # the drafter had nothing to offer: no evidence about k
        if accepted == drafted:
            self.k = min(self.k_max, self.k + 2)
        else:
            self.k = max(1, self.k - 1)
