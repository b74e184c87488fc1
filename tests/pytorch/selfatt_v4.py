"""SelfAttV4 (the SelfAttV1-V4 notebook), written for this book: three projections, mask, dropout.

Compared in eval mode (dropout off), like SelfAttV3: the dropout draws of the
program are its own, and tested in C.
"""
import math

import torch
import torch.nn as nn

PROGRAM = "selfatt_v4"


class SelfAttV4(nn.Module):
    def __init__(self, dim, causal=False):
        super().__init__()
        self.dim = dim
        self.causal = causal                  # what the program's --causal adds
        self.query_proj = nn.Linear(dim, dim)
        self.key_proj = nn.Linear(dim, dim)
        self.value_proj = nn.Linear(dim, dim)
        self.att_drop = nn.Dropout(0.1)
        self.output_proj = nn.Linear(dim, dim)

    def forward(self, X, attention_mask=None):
        Q, K, V = self.query_proj(X), self.key_proj(X), self.value_proj(X)
        scores = Q @ K.transpose(-1, -2) / math.sqrt(self.dim)          # (B, T, T)
        if self.causal:
            below = torch.tril(torch.ones(X.shape[1], X.shape[1], dtype=torch.bool))
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
    yield "the notebook's mask, int64 (B, T, T) repeated", SelfAttV4(2), \
        {"X": torch.rand(3, 4, 2), "attention_mask": padding(3, 4)[:, None, :].repeat(1, 4, 1)}, []
    yield "a bool (B, 1, T) mask", SelfAttV4(6), \
        {"X": torch.rand(4, 5, 6), "attention_mask": padding(4, 5)[:, None, :].bool()}, []
    yield "a (T, T) causal int mask", SelfAttV4(8), \
        {"X": torch.rand(2, 7, 8), "attention_mask": torch.tril(torch.ones(7, 7, dtype=torch.long))}, []
    yield "no mask", SelfAttV4(16), {"X": torch.rand(2, 9, 16)}, []
    yield "padding, --causal", SelfAttV4(4, causal=True), \
        {"X": torch.rand(3, 6, 4), "attention_mask": padding(3, 6)[:, None, :]}, ["--causal"]
    yield "a larger padded batch", SelfAttV4(32), \
        {"X": torch.rand(4, 16, 32), "attention_mask": padding(4, 16)[:, None, :]}, []


def examples():
    """(name, module maker, forward argument names, extra flags) for each --example."""
    yield "same-word", lambda: SelfAttV4(16), ["X", "attention_mask"], []
    yield "same-word", lambda: SelfAttV4(16, causal=True), ["X", "attention_mask"], ["--causal"]
    yield "padded", lambda: SelfAttV4(16), ["X", "attention_mask"], []
    yield "padded", lambda: SelfAttV4(16, causal=True), ["X", "attention_mask"], ["--causal"]
