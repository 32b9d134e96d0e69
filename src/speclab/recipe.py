"""The training recipe: a run's hyperparameters (`TrainConfig`) and the named recipes.

`speclab train target|draft|smoke` (speclab.train) trains one of RECIPES, each field of it
changeable with --set; the target and draft of lessons 04–07 were made from the first two
(each weights file records the recipe it was trained with, and docs/model-history.md what
each copying option changed). The copy-document fields shape the rows that speclab.corpus
cuts; the rest are the model's shape, the schedule and the optimiser's (speclab.train).

Left out: checking the fields; speclab.train_cli's `with_overrides` refuses a bad --set change.
"""

from dataclasses import dataclass

from speclab.gpt import GPTConfig


@dataclass(frozen=True)
class TrainConfig:
    n_layer: int = 4  # model shape, as in GPTConfig
    n_head: int = 4
    n_embd: int = 128
    n_ctx: int = 1024
    steps: int = 6000  # optimiser steps planned (the schedule spans them)
    batch_tokens: int = 4096  # tokens per step: n_batch * n_seq
    n_seq: int = 256  # stage 1: rows of n_seq bytes, always at positions 0 .. n_seq - 1
    short_steps: int = 2000  # stage 1 length; after it, rows of n_ctx at positions 0 .. n_ctx - 1
    lr: float = 3e-3  # peak learning rate
    min_lr_ratio: float = 0.1  # the cosine ends at lr * min_lr_ratio
    warmup: int = 200  # linear warm-up steps
    weight_decay: float = 0.1  # AdamW decay on matrices (not biases or gains)
    grad_clip: float = 1.0  # global gradient norm limit
    copy_fraction: float = 0.5  # share of rows made of copy documents
    verbatim_fraction: float = 0.5  # share of copies repeated verbatim (the rest: one rename)
    interleave_fraction: float = 0.0  # share of copies with other text between the two
    scramble_fraction: float = 0.0  # share of copies whose names are random letters
    block_fraction: float = 0.0  # share of copied pieces that are whole blocks, dedented
    few_letters_fraction: float = 0.0  # share of copied pieces that are random, of 2-4 letters
    top_level_fraction: float = 0.0  # share of plain rows that start at a top-level line
    loop_rows: int = 0  # rows a step of the model's own greedy text, its loops penalised
    loop_weight: float = 1.0  # the loop penalty's weight beside the cross-entropy
    hard_copy_weight: float = 1.0  # loss weight of a verbatim repeat's hard bytes (1: off)
    hard_copy_bytes: int = 5  # hard: a copier must match this many bytes back or more
    teacher_share: float = 0.0  # loss share against the shipped target's distribution (0: off)
    val_every: int = 250  # steps between validation and checkpoint
    average_from: int = 0  # export the mean of the weights at each validation from here (0: off)
    seed: int = 0
    max_corpus_bytes: int = 0  # 0: the whole standard library (smoke runs use a slice)

    @property
    def model_config(self) -> GPTConfig:
        """The shape of the model this recipe trains."""
        return GPTConfig(self.n_layer, self.n_head, self.n_embd, self.n_ctx)


# Why two stages and no position offsets: a model this small learns to copy (an induction
# head) only after a plateau of about a thousand steps, and the plateau ends sooner when the
# same position ids recur in every row. Rows placed at random offsets over the whole context
# (an earlier recipe) spread the position embeddings thin and showed no copying after 12,000
# steps; rows of 256 always at positions 0..255 copy after about 1,200-1,600 steps, and the
# skill carries over to the full context within a few hundred steps of full-length rows.
# The copy documents of the shipped models: whole blocks (dedented) copied 9 times in 10
# verbatim, half of them with other text between the two, and plain rows that start at a
# top-level line (docs/model-history.md: what each of these changed, measured). The shipped
# target went on from step 9,000 to 29,000 with --set hard_copy_weight=32, and from step
# 25,000 with --set block_fraction=0.5: half the copied pieces cut from anywhere (README).
COPYING = dict(copy_fraction=0.5, verbatim_fraction=0.9, interleave_fraction=0.5,
               block_fraction=1.0, top_level_fraction=1.0)  # fmt: skip
RECIPES = {
    "target": TrainConfig(steps=6000, **COPYING),
    "draft": TrainConfig(n_layer=2, n_head=4, n_embd=64, steps=5000, lr=4e-3, **COPYING),
    "smoke": TrainConfig(
        n_layer=1, n_head=2, n_embd=16, n_ctx=64, steps=6, batch_tokens=128, n_seq=32,
        short_steps=3, warmup=2, val_every=3, max_corpus_bytes=200_000,
    ),
}  # fmt: skip
