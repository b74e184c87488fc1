"""MultiHeadAttention (the SelfAttV1-V4 notebook), written for this book: H heads of D / H.

Compared in eval mode (dropout off): the program's dropout draws are its own,
and tested in C. Masks of the shapes PyTorch users pass to a multi-head module:
(B, H, T, T) as the source's random one, (B, 1, 1, T) padding, (T, T) causal,
(B, 1, T, T), none; int64 and bool.
"""
import math

import torch
import torch.nn as nn

PROGRAM = "mha"


class MultiHeadAttention(nn.Module):
    def __init__(self, hidden_dim, nums_head, causal=False):
        super().__init__()
        self.nums_head, self.head_dim = nums_head, hidden_dim // nums_head
        self.causal = causal                  # what the program's --causal adds
        self.q_proj = nn.Linear(hidden_dim, hidden_dim)
        self.k_proj = nn.Linear(hidden_dim, hidden_dim)
        self.v_proj = nn.Linear(hidden_dim, hidden_dim)
        self.att_dropout = nn.Dropout(0.1)
        self.o_proj = nn.Linear(hidden_dim, hidden_dim)

    def forward(self, X, attention_mask=None):
        B, T, D = X.shape
        H, hd = self.nums_head, self.head_dim
        q = self.q_proj(X).view(B, T, H, hd).transpose(1, 2)
        k = self.k_proj(X).view(B, T, H, hd).transpose(1, 2)
        v = self.v_proj(X).view(B, T, H, hd).transpose(1, 2)
        scores = q @ k.transpose(-1, -2) / math.sqrt(hd)                 # (B, H, T, T)
        if self.causal:
            below = torch.tril(torch.ones(T, T, dtype=torch.bool))
            attention_mask = below if attention_mask is None else (attention_mask != 0) & below
        if attention_mask is not None:
            scores = scores.masked_fill(attention_mask == 0, float("-1e20"))
        weights = torch.softmax(scores, dim=-1)
        mixed = (self.att_dropout(weights) @ v).transpose(1, 2).contiguous().view(B, T, D)
        return self.o_proj(mixed), weights


def padding(B, T):
    """(B, T): sequence b has max(1, T - 1 - b) real positions."""
    lengths = torch.tensor([max(1, T - 1 - b) for b in range(B)])
    return (torch.arange(T)[None, :] < lengths[:, None]).long()


def cases():
    """(description, module, inputs by file name, extra flags) for each check."""
    yield "the notebook's example: 8 heads, a random int64 (B, H, T, T) mask", MultiHeadAttention(128, 8), \
        {"X": torch.rand(3, 2, 128), "attention_mask": torch.randint(0, 2, (3, 8, 2, 2))}, ["--heads", "8"]
    yield "a random bool (B, H, T, T) mask", MultiHeadAttention(12, 3), \
        {"X": torch.rand(2, 5, 12), "attention_mask": torch.randint(0, 2, (2, 3, 5, 5)).bool()}, ["--heads", "3"]
    yield "an int64 (B, 1, 1, T) padding mask", MultiHeadAttention(16, 4), \
        {"X": torch.rand(4, 6, 16), "attention_mask": padding(4, 6)[:, None, None, :]}, ["--heads", "4"]
    yield "a bool (B, 1, 1, T) padding mask", MultiHeadAttention(32, 2), \
        {"X": torch.rand(3, 7, 32), "attention_mask": padding(3, 7)[:, None, None, :].bool()}, ["--heads", "2"]
    yield "an int64 (T, T) causal mask", MultiHeadAttention(24, 6), \
        {"X": torch.rand(2, 8, 24), "attention_mask": torch.tril(torch.ones(8, 8, dtype=torch.long))}, ["--heads", "6"]
    yield "a bool (T, T) causal mask", MultiHeadAttention(8, 8), \
        {"X": torch.rand(2, 4, 8), "attention_mask": torch.tril(torch.ones(4, 4, dtype=torch.bool))}, ["--heads", "8"]
    yield "a (B, 1, T, T) mask, the notebook's repeated padding with a head axis", MultiHeadAttention(20, 5), \
        {"X": torch.rand(3, 4, 20), "attention_mask": padding(3, 4)[:, None, None, :].repeat(1, 1, 4, 1)}, \
        ["--heads", "5"]
    yield "no mask, one head", MultiHeadAttention(16, 1), {"X": torch.rand(2, 9, 16)}, ["--heads", "1"]
    yield "no mask, 12 heads", MultiHeadAttention(48, 12), {"X": torch.rand(2, 9, 48)}, ["--heads", "12"]
    yield "padding, --causal", MultiHeadAttention(12, 4, causal=True), \
        {"X": torch.rand(3, 6, 12), "attention_mask": padding(3, 6)[:, None, None, :]}, ["--heads", "4", "--causal"]
    yield "a larger case", MultiHeadAttention(64, 8), \
        {"X": torch.rand(4, 16, 64), "attention_mask": padding(4, 16)[:, None, None, :]}, ["--heads", "8"]


def examples():
    """(name, module maker, forward argument names, extra flags) for each --example."""
    yield "four-heads", lambda: MultiHeadAttention(16, 4), ["X", "attention_mask"], []
