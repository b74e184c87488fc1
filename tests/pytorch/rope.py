"""rope: chapter 6's GroupedQueryAttention with rotary position embedding on its queries
and keys, written the way Hugging Face's Llama writes it: a RotaryEmbedding module whose
buffer inv_freq is in the state_dict as rotary_emb.inv_freq, rotate_half on the two
halves of each head, and position_ids, by default torch.arange(T). Chapter 5's names
otherwise (q_proj, k_proj, v_proj, o_proj, X, attention_mask); hidden scores -inf.

replay() checks the other convention: Meta's reference code, which turns pairs of
neighbours (2i, 2i + 1) as complex numbers (view_as_complex, torch.polar). Its q_proj and
k_proj are renumbered by permute(), the function of Hugging Face's script that converts
Meta's Llama weights, before rope loads them, and rope must then give Meta's output.
"""
import math
import os

import numpy as np
import torch
import torch.nn as nn

PROGRAM = "rope"


class RotaryEmbedding(nn.Module):
    def __init__(self, hd, base=10000.0):
        super().__init__()
        self.register_buffer("inv_freq", 1.0 / base ** (torch.arange(0, hd, 2).float() / hd))

    def forward(self, position_ids):                                # (B, T)
        freqs = position_ids[:, :, None].float() * self.inv_freq    # (B, T, hd/2)
        emb = torch.cat((freqs, freqs), dim=-1)                     # (B, T, hd)
        return emb.cos(), emb.sin()


def rotate_half(x):
    x1, x2 = x[..., : x.shape[-1] // 2], x[..., x.shape[-1] // 2:]
    return torch.cat((-x2, x1), dim=-1)


def attend(q, k, v, attention_mask, causal):
    """Chapter 6's passes 3 to 7: q (B, H, T, hd), k and v (B, G, T, hd)."""
    B, H, T, hd = q.shape
    R = H // k.shape[1]
    k, v = k.repeat_interleave(R, dim=1), v.repeat_interleave(R, dim=1)
    scores = q @ k.transpose(-1, -2) / math.sqrt(hd)
    if causal:
        below = torch.tril(torch.ones(T, T, dtype=torch.bool))
        attention_mask = below if attention_mask is None else (attention_mask != 0) & below
    if attention_mask is not None:
        scores = scores.masked_fill(attention_mask == 0, float("-inf"))
    weights = torch.softmax(scores, dim=-1)
    return (weights @ v).transpose(1, 2).reshape(B, T, H * hd), weights


class RopeAttention(nn.Module):
    def __init__(self, dim, heads, kv_heads, causal=False):
        super().__init__()
        self.heads, self.kv_heads, self.hd, self.causal = heads, kv_heads, dim // heads, causal
        self.q_proj = nn.Linear(dim, dim)
        self.k_proj = nn.Linear(dim, kv_heads * self.hd)
        self.v_proj = nn.Linear(dim, kv_heads * self.hd)
        self.o_proj = nn.Linear(dim, dim)
        self.rotary_emb = RotaryEmbedding(self.hd)

    def forward(self, X, attention_mask=None, position_ids=None):
        B, T, D = X.shape
        if position_ids is None:
            position_ids = torch.arange(T)[None]
        position_ids = position_ids.reshape(-1, T).expand(B, T)
        q = self.q_proj(X).view(B, T, self.heads, self.hd).transpose(1, 2)      # (B, H, T, hd)
        k = self.k_proj(X).view(B, T, self.kv_heads, self.hd).transpose(1, 2)   # (B, G, T, hd)
        v = self.v_proj(X).view(B, T, self.kv_heads, self.hd).transpose(1, 2)
        cos, sin = self.rotary_emb(position_ids)
        cos, sin = cos[:, None], sin[:, None]                                   # (B, 1, T, hd)
        q = q * cos + rotate_half(q) * sin
        k = k * cos + rotate_half(k) * sin
        out, weights = attend(q, k, v, attention_mask, self.causal)
        return self.o_proj(out), weights


def cases():
    """(description, module, inputs by file name, extra flags) for each check."""
    def flags(H, G, *more):
        return ["--heads", str(H), "--kv-heads", str(G), *more]
    arange = lambda B, T, start=0: (start + torch.arange(T))[None].expand(B, T).contiguous()
    for G in (1, 2, 4):
        yield f"G = {G} of H = 4, no position_ids (0 .. T-1)", RopeAttention(16, 4, G), \
            {"X": torch.rand(2, 6, 16)}, flags(4, G)
    yield "H = 8, G = 2, hd = 4, int64 position_ids (1, T) from 5", RopeAttention(32, 8, 2), \
        {"X": torch.rand(2, 9, 32), "position_ids": arange(1, 9, 5)}, flags(8, 2)
    jump = torch.tensor([[0, 1, 2, 3, 40, 41, 42], [7, 8, 9, 10, 11, 12, 13]])
    yield "H = 2, G = 1, hd = 16, position_ids (B, T) that jump, --causal", RopeAttention(32, 2, 1, causal=True), \
        {"X": torch.rand(2, 7, 32), "position_ids": jump}, flags(2, 1, "--causal")
    yield "H = 6, G = 3, a bool (B, 1, T, T) mask, position_ids from 100", RopeAttention(24, 6, 3), \
        {"X": torch.rand(2, 5, 24), "attention_mask": (torch.rand(2, 1, 5, 5) > 0.3) | torch.eye(5, dtype=torch.bool),
         "position_ids": arange(2, 5, 100)}, flags(6, 3)
    yield "H = 4, G = 2, a (T, T) causal int64 mask", RopeAttention(16, 4, 2), \
        {"X": torch.rand(3, 5, 16), "attention_mask": torch.tril(torch.ones(5, 5, dtype=torch.long))}, flags(4, 2)
    net = RopeAttention(64, 4, 4, causal=True)
    net.rotary_emb.inv_freq /= 4                                   # position interpolation by 4
    yield "Llama-like: H = G = 4, hd = 16, --causal, inv_freq divided by 4", net, \
        {"X": torch.randn(1, 12, 64)}, flags(4, 4, "--causal")


def examples():
    """(name, module maker, forward argument names, extra flags) for each --example."""
    yield "word-before", lambda: RopeAttention(16, 1, 1), ["X", "attention_mask", "position_ids"], []
    yield "reversed", lambda: RopeAttention(16, 2, 2), ["X", "attention_mask", "position_ids"], []


# ---- Meta's convention: pairs of neighbours, turned as complex numbers ----------------

def apply_rotary_emb(xq, xk, freqs_cis):          # xq (B, T, H, hd); freqs_cis (T, hd/2), complex
    xq_ = torch.view_as_complex(xq.float().reshape(*xq.shape[:-1], -1, 2))
    xk_ = torch.view_as_complex(xk.float().reshape(*xk.shape[:-1], -1, 2))
    freqs_cis = freqs_cis[None, :, None, :]
    return torch.view_as_real(xq_ * freqs_cis).flatten(3), torch.view_as_real(xk_ * freqs_cis).flatten(3)


def meta_forward(net, X):
    """net's weights read in Meta's order: each head's pairs are neighbours."""
    B, T, D = X.shape
    H, G, hd = net.heads, net.kv_heads, net.hd
    inv_freq = net.rotary_emb.inv_freq
    freqs_cis = torch.polar(torch.ones(T, hd // 2), torch.outer(torch.arange(T).float(), inv_freq))
    xq = net.q_proj(X).view(B, T, H, hd)
    xk = net.k_proj(X).view(B, T, G, hd)
    v = net.v_proj(X).view(B, T, G, hd).transpose(1, 2)
    xq, xk = apply_rotary_emb(xq, xk, freqs_cis)
    out, weights = attend(xq.transpose(1, 2), xk.transpose(1, 2), v, None, False)
    return net.o_proj(out), weights


def permute(w, heads, rows, cols):                # Meta's rows -> Hugging Face's, head by head
    return w.view(heads, rows // heads // 2, 2, cols).transpose(1, 2).reshape(rows, cols)


def replay(check, root):
    torch.manual_seed(13)
    for D, H, G, B, T in ((16, 4, 2, 2, 6), (32, 4, 4, 1, 9), (24, 6, 1, 2, 5), (64, 2, 2, 1, 11)):
        net = RopeAttention(D, H, G).eval()
        X = torch.rand(B, T, D)
        case = os.path.join(root, f"rope-meta-{D}-{H}-{G}")
        out = case + "-out"
        os.makedirs(case)
        hd = D // H
        renumbered = {
            "q_proj.weight": permute(net.q_proj.weight, H, D, D),
            "q_proj.bias": permute(net.q_proj.bias[:, None], H, D, 1)[:, 0],
            "k_proj.weight": permute(net.k_proj.weight, G, G * hd, D),
            "k_proj.bias": permute(net.k_proj.bias[:, None], G, G * hd, 1)[:, 0],
        }
        for key, t in net.state_dict().items():
            np.save(os.path.join(case, key + ".npy"), renumbered.get(key, t).detach().numpy())
        np.save(os.path.join(case, "X.npy"), X.numpy())
        what = f"rope --heads {H} --kv-heads {G} on Meta's weights (D = {D}), q_proj and k_proj renumbered by permute"
        command = [os.path.join(check.BIN, "rope"), "--load", case, "--dump", out, "--quiet",
                   "--heads", str(H), "--kv-heads", str(G)]
        if not check.run_program(command, what):
            continue
        with torch.no_grad():
            want_out, want_att = meta_forward(net, X)
        for name, want in (("out", want_out), ("attn", want_att)):
            got = np.load(os.path.join(out, name + ".npy"))
            err = check.max_error(got, want.numpy())
            check.ok(err <= check.TOL, f"{what}: {name}.npy agrees with apply_rotary_emb's within {check.TOL}",
                     f"max abs error {err:.3g}")
