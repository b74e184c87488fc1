"""MultiQueryAttention (the MHA/MQA notebook), written for this book with the source's two bugs
fixed: `.contiguous()` is called, and the merged width is d_model (the notebook
names an attribute it never set). H query heads, one key head, one value head.

Hidden scores become -inf, as in the MHA/MQA notebook, so a query that sees no key gets NaN
weights; the check counts NaN on both sides as agreement.
"""
import math

import torch
import torch.nn as nn

PROGRAM = "mqa"


class MultiQueryAttention(nn.Module):
    def __init__(self, d_model, num_heads, causal=False):
        super().__init__()
        assert d_model % num_heads == 0
        self.d_model, self.num_heads = d_model, num_heads
        self.d_k = d_model // num_heads
        self.causal = causal                          # what the program's --causal adds
        self.W_Q = nn.Linear(d_model, d_model)
        self.W_K = nn.Linear(d_model, self.d_k)       # one key head
        self.W_V = nn.Linear(d_model, self.d_k)       # one value head
        self.W_O = nn.Linear(d_model, d_model)

    def forward(self, x, mask=None):
        B, T, _ = x.shape
        Q = self.W_Q(x).view(B, T, self.num_heads, self.d_k).transpose(1, 2)   # (B, H, T, hd)
        K = self.W_K(x).view(B, T, 1, self.d_k).transpose(1, 2)                # (B, 1, T, hd)
        V = self.W_V(x).view(B, T, 1, self.d_k).transpose(1, 2)
        scores = Q @ K.transpose(-1, -2) / math.sqrt(self.d_k)                 # (B, H, T, T)
        if self.causal:
            below = torch.tril(torch.ones(T, T, dtype=torch.bool))
            mask = below if mask is None else (mask != 0) & below
        if mask is not None:
            scores = scores.masked_fill(mask == 0, float("-inf"))
        weights = torch.softmax(scores, dim=-1)
        out = (weights @ V).transpose(1, 2).contiguous().view(B, T, self.d_model)
        return self.W_O(out), weights


def padding(B, T):
    """(B, T): sequence b has max(1, T - 1 - b) real positions."""
    lengths = torch.tensor([max(1, T - 1 - b) for b in range(B)])
    return (torch.arange(T)[None, :] < lengths[:, None]).long()


def cases():
    """(description, module, inputs by file name, extra flags) for each check."""
    yield "the source's (T, T) causal mask, int64, D = 512, H = 8", MultiQueryAttention(512, 8), \
        {"x": torch.randn(2, 10, 512), "mask": torch.tril(torch.ones(10, 10, dtype=torch.long))}, ["--heads", "8"]
    yield "no mask", MultiQueryAttention(8, 4), {"x": torch.rand(1, 4, 8)}, ["--heads", "4"]
    yield "a bool (B, 1, T, T) mask", MultiQueryAttention(12, 3), \
        {"x": torch.rand(2, 6, 12), "mask": (torch.rand(2, 1, 6, 6) > 0.3) | torch.eye(6, dtype=torch.bool)}, \
        ["--heads", "3"]
    yield "a (B, 1, 1, T) padding mask", MultiQueryAttention(16, 4), \
        {"x": torch.rand(3, 5, 16), "mask": padding(3, 5)[:, None, None, :]}, ["--heads", "4"]
    full = torch.rand(2, 4, 5, 5) > 0.4
    full[0, 1, 3, :] = False                                   # two queries see nothing: NaN rows
    full[1, 3, 0, :] = False
    yield "a (B, H, T, T) mask with fully hidden rows (NaN on both sides)", MultiQueryAttention(8, 4), \
        {"x": torch.rand(2, 5, 8), "mask": full}, ["--heads", "4"]
    yield "--causal, no mask", MultiQueryAttention(16, 2, causal=True), {"x": torch.rand(2, 7, 16)}, \
        ["--heads", "2", "--causal"]
    yield "--causal on a (B, 1, 1, T) padding mask", MultiQueryAttention(16, 8, causal=True), \
        {"x": torch.rand(3, 6, 16), "mask": padding(3, 6)[:, None, None, :]}, ["--heads", "8", "--causal"]
    yield "one head (H = 1)", MultiQueryAttention(6, 1), {"x": torch.rand(2, 5, 6)}, ["--heads", "1"]


def examples():
    """(name, module maker, forward argument names, extra flags) for each --example."""
    yield "shared-key", lambda: MultiQueryAttention(16, 4), ["x", "mask"], []
