"""Seed 001's MultiHeadAttention, written for this book: heads split before
projecting, one (head_dim, head_dim) projection shared by all heads, no bias,
hidden scores -1e20 before the division by sqrt(embed_size).

The einsum MHA post's mask argument has no default; ours defaults to None.
"""
import torch
import torch.nn as nn

PROGRAM = "mha_shared_heads"


class MultiHeadAttention(nn.Module):
    def __init__(self, embed_size, num_heads, causal=False):
        super().__init__()
        self.embed_size, self.num_heads = embed_size, num_heads
        self.head_dim = embed_size // num_heads
        assert self.head_dim * num_heads == embed_size
        self.causal = causal
        self.values = nn.Linear(self.head_dim, self.head_dim, bias=False)
        self.keys = nn.Linear(self.head_dim, self.head_dim, bias=False)
        self.queries = nn.Linear(self.head_dim, self.head_dim, bias=False)
        self.fc_out = nn.Linear(num_heads * self.head_dim, embed_size)

    def forward(self, values, keys, query, mask=None):
        N, H, hd = query.shape[0], self.num_heads, self.head_dim
        T, S = query.shape[1], keys.shape[1]
        values = self.values(values.reshape(N, S, H, hd))
        keys = self.keys(keys.reshape(N, S, H, hd))
        queries = self.queries(query.reshape(N, T, H, hd))
        energy = torch.einsum("nqhd,nkhd->nhqk", queries, keys)
        if self.causal:
            below = torch.tril(torch.ones(T, S, dtype=torch.bool))
            mask = below if mask is None else (mask != 0) & below
        if mask is not None:
            energy = energy.masked_fill(mask == 0, float("-1e20"))
        attention = torch.softmax(energy / self.embed_size ** (1 / 2), dim=3)
        out = torch.einsum("nhql,nlhd->nqhd", attention, values).reshape(N, T, H * hd)
        return self.fc_out(out), attention


def cases():
    """(description, module, inputs by file name, extra flags) for each check."""
    yield "the source's sizes: embed_size 256, 8 heads, randn inputs", MultiHeadAttention(256, 8), \
        {"values": torch.randn(4, 10, 256), "keys": torch.randn(4, 10, 256), "query": torch.randn(4, 10, 256)}, \
        ["--heads", "8"]
    yield "small, no mask", MultiHeadAttention(8, 2), \
        {"values": torch.rand(1, 4, 8), "keys": torch.rand(1, 4, 8), "query": torch.rand(1, 4, 8)}, ["--heads", "2"]
    rows = torch.ones(2, 1, 5, 1)
    rows[0, 0, 3, 0] = 0                                                        # a query that sees nothing: uniform
    yield "keys longer than queries, a (B, 1, T, 1) mask hiding a row", MultiHeadAttention(12, 3), \
        {"values": torch.rand(2, 7, 12), "keys": torch.rand(2, 7, 12), "query": torch.rand(2, 5, 12), "mask": rows}, \
        ["--heads", "3"]
    yield "a bool (B, H, T, S) mask", MultiHeadAttention(16, 4), \
        {"values": torch.rand(2, 6, 16), "keys": torch.rand(2, 6, 16), "query": torch.rand(2, 6, 16),
         "mask": torch.rand(2, 4, 6, 6) > 0.4}, ["--heads", "4"]
    yield "--causal, one head", MultiHeadAttention(6, 1, causal=True), \
        {"values": torch.rand(3, 5, 6), "keys": torch.rand(3, 5, 6), "query": torch.rand(3, 5, 6)}, \
        ["--heads", "1", "--causal"]


def examples():
    """(name, module maker, forward argument names, extra flags) for each --example."""
    yield "slices", lambda: MultiHeadAttention(16, 2), ["values", "keys", "query"], []
