"""SelfAttV3 (the SelfAttV1-V4 notebook), written for this book: fused projection, mask, dropout.

Compared in eval mode (dropout off): the program's dropout draws other random
numbers than PyTorch's, so training mode is tested in C instead.
"""
import math

import torch
import torch.nn as nn

PROGRAM = "selfatt_v3"


class SelfAttV3(nn.Module):
    def __init__(self, dim, causal=False):
        super().__init__()
        self.dim = dim
        self.causal = causal                  # what the program's --causal adds
        self.proj = nn.Linear(dim, 3 * dim)
        self.att_drop = nn.Dropout(0.1)
        self.output_proj = nn.Linear(dim, dim)

    def forward(self, X, attention_mask=None):
        Q, K, V = torch.split(self.proj(X), self.dim, dim=-1)
        scores = Q @ K.transpose(-1, -2) / math.sqrt(self.dim)          # (B, T, T)
        T = X.shape[1]
        if self.causal:
            below = torch.tril(torch.ones(T, T, dtype=torch.bool))      # key s <= query t
            attention_mask = below if attention_mask is None else (attention_mask != 0) & below
        if attention_mask is not None:
            scores = scores.masked_fill(attention_mask == 0, float("-1e20"))
        weights = torch.softmax(scores, dim=-1)
        return self.output_proj(self.att_drop(weights) @ V), weights


def padding(B, T):
    """(B, T): sequence b has max(1, T - 1 - b) real positions, as the program's default."""
    lengths = torch.tensor([max(1, T - 1 - b) for b in range(B)])
    return (torch.arange(T)[None, :] < lengths[:, None]).long()


def cases():
    """(description, module, inputs by file name, extra flags) for each check."""
    B, T, D = 3, 4, 2
    pad = padding(B, T)
    X = torch.rand(B, T, D)
    yield "the notebook's mask, int64 (B, T, T) repeated", SelfAttV3(D), \
        {"X": X, "attention_mask": pad[:, None, :].repeat(1, T, 1)}, []
    yield "the same as (B, 1, T)", SelfAttV3(D), {"X": X, "attention_mask": pad[:, None, :]}, []
    yield "a bool (B, T, T) mask", SelfAttV3(5), \
        {"X": torch.rand(2, 6, 5), "attention_mask": torch.rand(2, 6, 6) > 0.3}, []
    yield "a (T, T) causal int mask", SelfAttV3(8), \
        {"X": torch.rand(2, 7, 8), "attention_mask": torch.tril(torch.ones(7, 7, dtype=torch.long))}, []
    yield "an int32 (T) key mask", SelfAttV3(4), \
        {"X": torch.rand(3, 5, 4), "attention_mask": torch.tensor([1, 0, 1, 1, 0], dtype=torch.int32)}, []
    yield "a uint8 (B, 1, T) mask", SelfAttV3(6), \
        {"X": torch.rand(4, 6, 6), "attention_mask": padding(4, 6)[:, None, :].to(torch.uint8)}, []
    yield "a float64 mask of 0.0 and 2.5", SelfAttV3(3), \
        {"X": torch.rand(2, 5, 3), "attention_mask": (torch.rand(2, 5, 5) > 0.5).double() * 2.5}, []
    query_rows = torch.ones(2, 5, 1, dtype=torch.long)
    query_rows[0, 3, 0] = query_rows[1, 0, 0] = 0                       # two queries see nothing
    yield "a (B, T, 1) mask with fully hidden rows", SelfAttV3(4), \
        {"X": torch.rand(2, 5, 4), "attention_mask": query_rows}, []
    yield "no mask", SelfAttV3(16), {"X": torch.rand(2, 9, 16)}, []
    yield "no mask, --causal", SelfAttV3(8, causal=True), {"X": torch.rand(1, 6, 8)}, ["--causal"]
    yield "padding, --causal", SelfAttV3(4, causal=True), \
        {"X": torch.rand(3, 6, 4), "attention_mask": padding(3, 6)[:, None, :]}, ["--causal"]
    yield "a larger padded batch", SelfAttV3(32), \
        {"X": torch.rand(4, 16, 32), "attention_mask": padding(4, 16)[:, None, :].repeat(1, 16, 1)}, []


def examples():
    """(name, module maker, forward argument names, extra flags) for each --example."""
    yield "same-word", lambda: SelfAttV3(16), ["X", "attention_mask"], []
    yield "same-word", lambda: SelfAttV3(16, causal=True), ["X", "attention_mask"], ["--causal"]
    yield "padded", lambda: SelfAttV3(16), ["X", "attention_mask"], []
