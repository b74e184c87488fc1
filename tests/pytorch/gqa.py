"""GroupedQueryAttention, written for this book: H query heads in G groups, each
group sharing one key head and one value head. The key and value heads are
repeated with repeat_interleave (k0 k0 k1 k1 ...), so query head h reads key
head h // (H // G). Chapter 5's names: q_proj, k_proj, v_proj, o_proj, X,
attention_mask. Hidden scores become -inf; NaN rows agree with NaN rows.
"""
import math

import torch
import torch.nn as nn

PROGRAM = "gqa"


class GroupedQueryAttention(nn.Module):
    def __init__(self, dim, heads, kv_heads, causal=False):
        super().__init__()
        assert dim % heads == 0 and heads % kv_heads == 0
        self.heads, self.kv_heads, self.hd = heads, kv_heads, dim // heads
        self.causal = causal
        self.q_proj = nn.Linear(dim, dim)
        self.k_proj = nn.Linear(dim, kv_heads * self.hd)
        self.v_proj = nn.Linear(dim, kv_heads * self.hd)
        self.o_proj = nn.Linear(dim, dim)

    def forward(self, X, attention_mask=None):
        B, T, D = X.shape
        R = self.heads // self.kv_heads
        q = self.q_proj(X).view(B, T, self.heads, self.hd).transpose(1, 2)       # (B, H, T, hd)
        k = self.k_proj(X).view(B, T, self.kv_heads, self.hd).transpose(1, 2)    # (B, G, T, hd)
        v = self.v_proj(X).view(B, T, self.kv_heads, self.hd).transpose(1, 2)
        k, v = k.repeat_interleave(R, dim=1), v.repeat_interleave(R, dim=1)      # (B, H, T, hd)
        scores = q @ k.transpose(-1, -2) / math.sqrt(self.hd)                   # (B, H, T, T)
        if self.causal:
            below = torch.tril(torch.ones(T, T, dtype=torch.bool))
            attention_mask = below if attention_mask is None else (attention_mask != 0) & below
        self.scores = scores                       # mha_backward.py: its .grad is scores.grad
        if scores.requires_grad:
            scores.retain_grad()
        if attention_mask is not None:
            scores = scores.masked_fill(attention_mask == 0, float("-inf"))
        weights = torch.softmax(scores, dim=-1)
        out = (weights @ v).transpose(1, 2).reshape(B, T, D)
        return self.o_proj(out), weights


def padding(B, T):
    lengths = torch.tensor([max(1, T - 1 - b) for b in range(B)])
    return (torch.arange(T)[None, :] < lengths[:, None]).long()


def cases():
    """(description, module, inputs by file name, extra flags) for each check."""
    def flags(H, G, *more):
        return ["--heads", str(H), "--kv-heads", str(G), *more]
    for G in (1, 2, 4):
        yield f"G = {G} of H = 4, a (T, T) causal int64 mask", GroupedQueryAttention(16, 4, G), \
            {"X": torch.rand(2, 6, 16), "attention_mask": torch.tril(torch.ones(6, 6, dtype=torch.long))}, flags(4, G)
    yield "H = 8, G = 2, no mask", GroupedQueryAttention(32, 8, 2), {"X": torch.rand(2, 9, 32)}, flags(8, 2)
    yield "H = 6, G = 3, a bool (B, 1, T, T) mask", GroupedQueryAttention(12, 6, 3), \
        {"X": torch.rand(2, 5, 12), "attention_mask": (torch.rand(2, 1, 5, 5) > 0.3) | torch.eye(5, dtype=torch.bool)}, \
        flags(6, 3)
    yield "H = 4, G = 2, a (B, 1, 1, T) padding mask", GroupedQueryAttention(8, 4, 2), \
        {"X": torch.rand(3, 5, 8), "attention_mask": padding(3, 5)[:, None, None, :]}, flags(4, 2)
    full = torch.rand(2, 4, 5, 5) > 0.4
    full[1, 2, 4, :] = False                                   # a query that sees nothing: NaN
    yield "H = 4, G = 2, a (B, H, T, T) mask with a fully hidden row", GroupedQueryAttention(8, 4, 2), \
        {"X": torch.rand(2, 5, 8), "attention_mask": full}, flags(4, 2)
    yield "H = 8, G = 4, --causal on padding", GroupedQueryAttention(32, 8, 4, causal=True), \
        {"X": torch.rand(2, 7, 32), "attention_mask": padding(2, 7)[:, None, None, :]}, flags(8, 4, "--causal")
    yield "Llama-like heads: H = 8, G = 1, D = 64, --causal", GroupedQueryAttention(64, 8, 1, causal=True), \
        {"X": torch.randn(1, 12, 64)}, flags(8, 1, "--causal")


def examples():
    """(name, module maker, forward argument names, extra flags) for each --example."""
    yield "two-groups", lambda: GroupedQueryAttention(16, 4, 2), ["X", "attention_mask"], []
