"""Character-level language models for the names task.

`MakemoreMLP` (Bengio et al. 2003, as in Karpathy's makemore part 3):
    idx (B, block) -> Embedding(27, 10) -> (B, block*10) -> Linear(30, 200, no bias)
    -> BatchNorm1d(200) -> tanh -> Linear(200, 27) -> logits (B, 27)
It predicts the next character from the previous `block` characters.

`GPT` (a tiny decoder-only transformer, nanoGPT-shaped):
    idx (B, T) -> token + position embeddings -> n_layer x Block -> LayerNorm
    -> Linear(n_embd, 27, no bias) -> logits (B, T, 27)
    Block: x = x + attn(ln1(x)); x = x + mlp(ln2(x))   (residual connections)
    attn: causal multi-head self-attention through the fused scaled-dot-product primitive
It reads a whole word (up to `block_size` characters) and predicts every next one.
"""
import math

import numpy as np

import tapegrad as tg
from tapegrad import nn
from tapegrad.nn import functional as F
from tapegrad.nn.functional._fused_attention import fused_scaled_dot_product_attention


class MakemoreMLP(nn.Module):
    def __init__(self, vocab_size=27, block_size=3, n_embd=10, n_hidden=200):
        super().__init__()
        self.block_size = block_size
        self.C = nn.Embedding(vocab_size, n_embd)
        self.hidden = nn.Linear(block_size * n_embd, n_hidden, bias=False)  # BN has a bias
        self.bn = nn.BatchNorm1d(n_hidden)
        self.out = nn.Linear(n_hidden, vocab_size)
        with tg.no_grad():
            self.out.weight._data *= 0.1  # start near uniform predictions: loss ~ log(27)

    def forward(self, idx):
        emb = self.C(idx)                                  # (B, block, n_embd)
        x = emb.reshape(emb.shape[0], -1)                  # (B, block*n_embd)
        h = self.bn(self.hidden(x)).tanh()                 # (B, n_hidden)
        return self.out(h)                                 # (B, vocab)


class CausalSelfAttention(nn.Module):
    def __init__(self, n_embd, n_head):
        super().__init__()
        if n_embd % n_head:
            raise ValueError(f"n_embd ({n_embd}) must be a multiple of n_head ({n_head})")
        self.n_head = n_head
        self.c_attn = nn.Linear(n_embd, 3 * n_embd)
        self.c_proj = nn.Linear(n_embd, n_embd)

    def forward(self, x):
        B, T, C = x.shape
        hs = C // self.n_head
        q, k, v = self.c_attn(x).split(C, dim=2)                       # 3 x (B, T, C)
        q = q.reshape(B, T, self.n_head, hs).transpose(1, 2)           # (B, nh, T, hs)
        k = k.reshape(B, T, self.n_head, hs).transpose(1, 2)
        v = v.reshape(B, T, self.n_head, hs).transpose(1, 2)
        y = fused_scaled_dot_product_attention(q, k, v, is_causal=True)     # (B, nh, T, hs)
        y = y.transpose(1, 2).reshape(B, T, C)                         # (B, T, C)
        return self.c_proj(y)


class Block(nn.Module):
    def __init__(self, n_embd, n_head):
        super().__init__()
        self.ln_1 = nn.LayerNorm(n_embd)
        self.attn = CausalSelfAttention(n_embd, n_head)
        self.ln_2 = nn.LayerNorm(n_embd)
        self.mlp = nn.Sequential(nn.Linear(n_embd, 4 * n_embd), nn.GELU(),
                                 nn.Linear(4 * n_embd, n_embd))

    def forward(self, x):
        x = x + self.attn(self.ln_1(x))                                # residual
        return x + self.mlp(self.ln_2(x))


class GPT(nn.Module):
    def __init__(self, vocab_size=27, block_size=16, n_layer=2, n_embd=64, n_head=4):
        super().__init__()
        self.block_size = block_size
        self.wte = nn.Embedding(vocab_size, n_embd)
        self.wpe = nn.Embedding(block_size, n_embd)
        self.blocks = nn.ModuleList([Block(n_embd, n_head) for _ in range(n_layer)])
        self.ln_f = nn.LayerNorm(n_embd)
        self.lm_head = nn.Linear(n_embd, vocab_size, bias=False)
        # nanoGPT's initialisation: N(0, 0.02), residual projections scaled by depth.
        for name, p in self.named_parameters():
            if name.endswith("c_proj.weight") or name.endswith("mlp.2.weight"):
                nn.init.normal_(p, 0.0, 0.02 / math.sqrt(2 * n_layer))
            elif p.ndim == 2:
                nn.init.normal_(p, 0.0, 0.02)
            elif name.endswith(".bias") and "ln" not in name:
                nn.init.zeros_(p)

    def forward(self, idx):
        B, T = idx.shape
        if T > self.block_size:
            raise ValueError(f"sequence of length {T} is longer than block_size "
                             f"{self.block_size}")
        pos = tg.arange(T)
        x = self.wte(idx) + self.wpe(pos)                              # (B, T, C)
        for block in self.blocks:
            x = block(x)
        return self.lm_head(self.ln_f(x))                              # (B, T, vocab)


def build(kind, vocab_size, block_size, **kw):
    if kind == "mlp":
        return MakemoreMLP(vocab_size, block_size, **kw)
    if kind == "gpt":
        return GPT(vocab_size, block_size, **kw)
    raise ValueError(f"unknown model {kind!r} (mlp or gpt)")


def sample(model, n, block_size, generator=None, temperature=1.0, top_k=None, max_len=64):
    """Generate `n` words (lists of character indices, without the end token)."""
    model.eval()
    rng = tg.random.rng(generator)
    words = []
    with tg.no_grad():
        for _ in range(n):
            out = []
            if isinstance(model, GPT):
                seq = [0]
                while len(out) < max_len:
                    ctx = tg.from_numpy(np.array([seq[-block_size:]], dtype=np.int64))
                    logits = model(ctx)._data[0, -1]
                    ix = _draw(logits, temperature, top_k, rng)
                    if ix == 0:
                        break
                    out.append(ix)
                    seq.append(ix)
            else:
                ctx = [0] * block_size
                while len(out) < max_len:
                    logits = model(tg.from_numpy(np.array([ctx], dtype=np.int64)))._data[0]
                    ix = _draw(logits, temperature, top_k, rng)
                    if ix == 0:
                        break
                    out.append(ix)
                    ctx = ctx[1:] + [ix]
            words.append(out)
    return words


def _draw(logits, temperature, top_k, rng):
    z = logits.astype(np.float64) / max(temperature, 1e-8)
    if top_k is not None and top_k < z.size:
        cut = np.sort(z)[-top_k]
        z = np.where(z < cut, -np.inf, z)
    p = np.exp(z - z.max())
    p /= p.sum()
    return int(rng.choice(p.size, p=p))
