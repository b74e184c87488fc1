"""CrossAttention (the SelfAttV1-V4 notebook), written for this book: Q from one sequence, K and V from another.

Compared in eval mode (dropout off), as the other programs are. Every case has
its own T and S; the program is told the heads with --heads, since they are
in no file.
"""
import math

import torch
import torch.nn as nn

PROGRAM = "cross_attention"


class CrossAttention(nn.Module):
    def __init__(self, hidden_dim, nums_head):
        super().__init__()
        self.nums_head = nums_head
        self.head_dim = hidden_dim // nums_head
        self.q_proj = nn.Linear(hidden_dim, hidden_dim)
        self.k_proj = nn.Linear(hidden_dim, hidden_dim)
        self.v_proj = nn.Linear(hidden_dim, hidden_dim)
        self.att_dropout = nn.Dropout(0.1)
        self.o_proj = nn.Linear(hidden_dim, hidden_dim)

    def forward(self, Q, K, V, attention_mask=None):
        B, T, S = Q.shape[0], Q.shape[1], K.shape[1]

        def heads(x, n):                                   # (B, n, D) -> (B, H, n, hd)
            return x.view(B, n, self.nums_head, self.head_dim).transpose(1, 2)

        q = heads(self.q_proj(Q), T)
        k, v = heads(self.k_proj(K), S), heads(self.v_proj(V), S)
        scores = q @ k.transpose(-1, -2) / math.sqrt(self.head_dim)          # (B, H, T, S)
        if attention_mask is not None:
            scores = scores.masked_fill(attention_mask == 0, float("-1e20"))
        weights = torch.softmax(scores, dim=-1)
        mixed = self.att_dropout(weights) @ v                                # (B, H, T, hd)
        return self.o_proj(mixed.transpose(1, 2).reshape(B, T, -1)), weights


def inputs(B, T, S, D, mask=None):
    d = {"Q": torch.rand(B, T, D), "K": torch.rand(B, S, D), "V": torch.rand(B, S, D)}
    if mask is not None:
        d["attention_mask"] = mask
    return d


def source_padding(lengths, S):
    """(B, 1, 1, S) bool: key s of sequence b is real when s < lengths[b]."""
    return (torch.arange(S)[None, :] < torch.tensor(lengths)[:, None])[:, None, None, :]


def cases():
    """(description, module, inputs by file name, extra flags) for each check."""
    seedlike = torch.randint(0, 2, (3, 8, 4, 6))            # the source's test mask, int64
    seedlike[1, 5, 2, :] = 0                                # one query of one head sees nothing
    yield "the source's random int64 (B, H, T, S) mask, a row fully hidden", CrossAttention(32, 8), \
        inputs(3, 4, 6, 32, seedlike), ["--heads", "8"]
    yield "bool source padding (B, 1, 1, S)", CrossAttention(16, 4), \
        inputs(3, 5, 7, 16, source_padding([7, 4, 1], 7)), ["--heads", "4"]
    yield "a (T, S) int mask", CrossAttention(12, 3), \
        inputs(2, 3, 8, 12, (torch.rand(3, 8) > 0.3).long()), ["--heads", "3"]
    yield "a (B, 1, T, S) float64 mask", CrossAttention(8, 2), \
        inputs(2, 6, 4, 8, (torch.rand(2, 1, 6, 4) > 0.4).double()), ["--heads", "2"]
    yield "no mask, more queries than keys", CrossAttention(8, 2), inputs(2, 9, 2, 8), ["--heads", "2"]
    yield "one head, one query", CrossAttention(6, 1), inputs(4, 1, 5, 6), ["--heads", "1"]
    yield "hd = 1: as many heads as numbers", CrossAttention(8, 8), \
        inputs(2, 4, 3, 8, source_padding([3, 2], 3)), ["--heads", "8"]
    yield "the source's sizes, (3, 4, 128) over (3, 6, 128), 8 heads", CrossAttention(128, 8), \
        inputs(3, 4, 6, 128, source_padding([6, 5, 3], 6)), ["--heads", "8"]


def examples():
    """(name, module maker, forward argument names, extra flags) for each --example."""
    yield "align", lambda: CrossAttention(16, 2), ["Q", "K", "V", "attention_mask"], []
