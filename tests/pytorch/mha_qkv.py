"""Seed 002's MultiHeadAttention, written for this book: Q, K, V as three inputs.

Seed 000's MultiHeadAttention is the case forward(x, x, x, mask); the first
case checks it that way. Hidden scores become -inf, so a query that sees no key
gets NaN, which the comparison counts as agreement when both sides have it.
"""
import math

import torch
import torch.nn as nn

PROGRAM = "mha_qkv"


class MultiHeadAttention(nn.Module):
    def __init__(self, d_model, num_heads, causal=False):
        super().__init__()
        assert d_model % num_heads == 0
        self.d_model, self.num_heads, self.d_k = d_model, num_heads, d_model // num_heads
        self.causal = causal                      # what the program's --causal adds
        self.W_q = nn.Linear(d_model, d_model)
        self.W_k = nn.Linear(d_model, d_model)
        self.W_v = nn.Linear(d_model, d_model)
        self.W_o = nn.Linear(d_model, d_model)

    def split_heads(self, x, B):
        return x.view(B, -1, self.num_heads, self.d_k).transpose(1, 2)

    def combine_heads(self, x, B):
        return x.transpose(1, 2).contiguous().view(B, -1, self.d_model)

    def forward(self, Q, K, V, mask=None):
        B, T, S = Q.size(0), Q.size(1), K.size(1)
        Q = self.split_heads(self.W_q(Q), B)
        K = self.split_heads(self.W_k(K), B)
        V = self.split_heads(self.W_v(V), B)
        scores = Q @ K.transpose(-2, -1) / math.sqrt(self.d_k)
        if self.causal:
            below = torch.tril(torch.ones(T, S, dtype=torch.bool))
            mask = below if mask is None else (mask != 0) & below
        if mask is not None:
            scores = scores.masked_fill(mask == 0, float("-inf"))
        attn = torch.softmax(scores, dim=-1)
        return self.W_o(self.combine_heads(attn @ V, B)), attn


def cases():
    """(description, module, inputs by file name, extra flags) for each check."""
    x = torch.rand(2, 10, 16)
    yield "the MHA/MQA notebook: x three times, a (T, T) tril mask", MultiHeadAttention(16, 4), \
        {"Q": x, "K": x, "V": x, "mask": torch.tril(torch.ones(10, 10))}, ["--heads", "4"]
    yield "cross-attention, T = 4, S = 6, no mask", MultiHeadAttention(8, 2), \
        {"Q": torch.rand(1, 4, 8), "K": torch.rand(1, 6, 8), "V": torch.rand(1, 6, 8)}, ["--heads", "2"]
    pad = (torch.arange(7)[None, :] < torch.tensor([7, 4, 2])[:, None])        # (B, S) bool
    yield "a bool (B, 1, 1, S) padding mask, S = 7, T = 3", MultiHeadAttention(12, 3), \
        {"Q": torch.rand(3, 3, 12), "K": torch.rand(3, 7, 12), "V": torch.rand(3, 7, 12),
         "mask": pad[:, None, None, :]}, ["--heads", "3"]
    full = (torch.rand(2, 4, 5, 6) > 0.3).long()
    full[..., 0] = 1                                                            # every row keeps key 0
    yield "an int64 (B, H, T, S) mask", MultiHeadAttention(8, 4), \
        {"Q": torch.rand(2, 5, 8), "K": torch.rand(2, 6, 8), "V": torch.rand(2, 6, 8), "mask": full}, ["--heads", "4"]
    rows = torch.ones(2, 1, 4, 1, dtype=torch.uint8)
    rows[1, 0, 2, 0] = 0                                                        # a query that sees nothing: NaN
    yield "a uint8 (B, 1, T, 1) mask hiding a whole row", MultiHeadAttention(8, 2), \
        {"Q": torch.rand(2, 4, 8), "K": torch.rand(2, 5, 8), "V": torch.rand(2, 5, 8), "mask": rows}, ["--heads", "2"]
    y = torch.rand(2, 6, 32)
    yield "--causal, self-attention, 8 heads", MultiHeadAttention(32, 8, causal=True), \
        {"Q": y, "K": y, "V": y}, ["--heads", "8", "--causal"]
    yield "--causal with S = 7 > T = 5 and a float64 (S) mask", MultiHeadAttention(8, 2, causal=True), \
        {"Q": torch.rand(2, 5, 8), "K": torch.rand(2, 7, 8), "V": torch.rand(2, 7, 8),
         "mask": torch.tensor([1.0, 1, 0, 1, 1, 0, 1], dtype=torch.float64)}, ["--heads", "2", "--causal"]


def examples():
    """(name, module maker, forward argument names, extra flags) for each --example."""
    yield "find-words", lambda: MultiHeadAttention(16, 2), ["Q", "K", "V"], []
