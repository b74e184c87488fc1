"""GroupedQueryAttention decoded one token at a time, written for this book: the
keys and values of the tokens seen so far are kept in a cache that grows by
torch.cat, as Hugging Face's past_key_values do, and each new query attends to
the whole cache with no mask. G = H is multi-head attention, G = 1 multi-query.
The module reads chapter 6's gqa files (q_proj, k_proj, v_proj, o_proj, X); it
returns the T outputs (B, T, D) and the weights of each step as (B, H, T, T):
row t of each head is step t's weights over keys 0..t, zeros after.
"""
import math

import torch
import torch.nn as nn

PROGRAM = "decode"


class CachedGroupedQueryAttention(nn.Module):
    def __init__(self, dim, heads, kv_heads):
        super().__init__()
        assert dim % heads == 0 and heads % kv_heads == 0
        self.heads, self.kv_heads, self.hd = heads, kv_heads, dim // heads
        self.q_proj = nn.Linear(dim, dim)
        self.k_proj = nn.Linear(dim, kv_heads * self.hd)
        self.v_proj = nn.Linear(dim, kv_heads * self.hd)
        self.o_proj = nn.Linear(dim, dim)

    def step(self, x, cache):                       # x (B, 1, D): one new token per sequence
        B, _, D = x.shape
        H, G, hd = self.heads, self.kv_heads, self.hd
        q = self.q_proj(x).view(B, 1, H, hd).transpose(1, 2)          # (B, H, 1, hd)
        k = self.k_proj(x).view(B, 1, G, hd).transpose(1, 2)          # (B, G, 1, hd)
        v = self.v_proj(x).view(B, 1, G, hd).transpose(1, 2)
        k_cache = k if cache is None else torch.cat([cache[0], k], dim=2)   # (B, G, t+1, hd)
        v_cache = v if cache is None else torch.cat([cache[1], v], dim=2)
        R = H // G
        kr, vr = k_cache.repeat_interleave(R, dim=1), v_cache.repeat_interleave(R, dim=1)
        scores = q @ kr.transpose(-1, -2) / math.sqrt(hd)             # (B, H, 1, t+1): no mask
        weights = torch.softmax(scores, dim=-1)
        out = (weights @ vr).transpose(1, 2).reshape(B, 1, D)
        return self.o_proj(out), weights, (k_cache, v_cache)

    def forward(self, X, attention_mask=None):      # a mask, if any, is the causal one: not needed
        B, T, _ = X.shape
        outs, maps, cache = [], torch.zeros(B, self.heads, T, T), None
        for t in range(T):
            out, weights, cache = self.step(X[:, t:t + 1], cache)
            outs.append(out)
            maps[:, :, t, :t + 1] = weights[:, :, 0]
        return torch.cat(outs, dim=1), maps


def cases():
    """(description, module, inputs by file name, extra flags) for each check."""
    def flags(H, G):
        return ["--heads", str(H), "--kv-heads", str(G)]
    for G in (4, 2, 1):
        yield f"G = {G} of H = 4, T = 6", CachedGroupedQueryAttention(16, 4, G), {"X": torch.rand(2, 6, 16)}, flags(4, G)
    yield "H = 6, G = 3, odd sizes: B = 3, T = 7, D = 18", CachedGroupedQueryAttention(18, 6, 3), \
        {"X": torch.rand(3, 7, 18)}, flags(6, 3)
    yield "one token: T = 1, H = 2, G = 1", CachedGroupedQueryAttention(10, 2, 1), {"X": torch.rand(2, 1, 10)}, flags(2, 1)
    yield "H = 8, G = 2, with gqa --causal's (T, T) int64 mask in the files", CachedGroupedQueryAttention(32, 8, 2), \
        {"X": torch.rand(1, 9, 32), "attention_mask": torch.tril(torch.ones(9, 9, dtype=torch.long))}, flags(8, 2)
    yield "Llama-like heads: H = 8, G = 1, D = 64, T = 12", CachedGroupedQueryAttention(64, 8, 1), \
        {"X": torch.randn(1, 12, 64)}, flags(8, 1)
