"""nanoGPT's train.py DDP path, on CPU: a rank reads RANK/LOCAL_RANK/WORLD_SIZE before
anything else, init_process_group(backend='gloo'), DDP(model, device_ids=[local_rank]),
gradient accumulation with `model.require_backward_grad_sync` toggled per micro-step,
`raw_model = model.module`, master-only eval and checkpoints, destroy_process_group.
Written in its style (globals as config, `--key=value` overrides, a poor man's loader
on np.memmap of train.bin / val.bin) for a tiny tied-embedding causal transformer.
Only the imports differ from torch:  tapegrad launch --nproc 2 nanogpt_style_train.py
--data_dir=DIR --out_dir=DIR
"""
import math
import os
import sys
import time
from contextlib import nullcontext

import numpy as np
import tapegrad as torch                                          # was: import torch
import tapegrad.nn as nn
from tapegrad.nn import functional as F
from tapegrad.nn.parallel import DistributedDataParallel as DDP   # was: torch.nn.parallel
from tapegrad.distributed import init_process_group, destroy_process_group

# -----------------------------------------------------------------------------
out_dir = 'out'
data_dir = 'data'
eval_interval = 10
eval_iters = 4
log_interval = 5
gradient_accumulation_steps = 4
batch_size = 4
block_size = 16
n_embd = 32
n_head = 2
vocab_size = 32
learning_rate = 3e-3
max_iters = 30
weight_decay = 1e-1
beta1, beta2 = 0.9, 0.95
grad_clip = 1.0
warmup_iters = 5
lr_decay_iters = 30
min_lr = 3e-4
backend = 'gloo'
device = 'cpu'
# -----------------------------------------------------------------------------
for arg in sys.argv[1:]:                       # configurator.py's --key=value overrides
    key, val = arg[2:].split('=')
    assert key in globals(), f"unknown config key {key}"
    globals()[key] = type(globals()[key])(val)

ddp = int(os.environ.get('RANK', -1)) != -1  # is this a ddp run?
if ddp:
    init_process_group(backend=backend)
    ddp_rank = int(os.environ['RANK'])
    ddp_local_rank = int(os.environ['LOCAL_RANK'])
    ddp_world_size = int(os.environ['WORLD_SIZE'])
    device = 'cpu'
    master_process = ddp_rank == 0
    seed_offset = ddp_rank
    assert gradient_accumulation_steps % ddp_world_size == 0
    gradient_accumulation_steps //= ddp_world_size
else:
    master_process = True
    seed_offset = 0
    ddp_world_size = 1
tokens_per_iter = gradient_accumulation_steps * ddp_world_size * batch_size * block_size
if master_process:
    print(f"tokens per iteration will be: {tokens_per_iter:,}")
    os.makedirs(out_dir, exist_ok=True)
torch.manual_seed(1337 + seed_offset)
ctx = nullcontext()


def get_batch(split):
    data = np.memmap(os.path.join(data_dir, f'{split}.bin'), dtype=np.uint16, mode='r')
    ix = torch.randint(len(data) - block_size, (batch_size,))
    x = torch.stack([torch.from_numpy((data[i:i + block_size]).astype(np.int64)) for i in ix.tolist()])
    y = torch.stack([torch.from_numpy((data[i + 1:i + 1 + block_size]).astype(np.int64)) for i in ix.tolist()])
    return x.to(device), y.to(device)


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.ln_1 = nn.LayerNorm(n_embd)
        self.c_attn = nn.Linear(n_embd, 3 * n_embd)
        self.c_proj = nn.Linear(n_embd, n_embd)
        self.ln_2 = nn.LayerNorm(n_embd)
        self.mlp = nn.Sequential(nn.Linear(n_embd, 4 * n_embd), nn.GELU(),
                                 nn.Linear(4 * n_embd, n_embd))

    def forward(self, x):
        B, T, C = x.shape
        q, k, v = self.c_attn(self.ln_1(x)).split(n_embd, dim=2)
        q = q.view(B, T, n_head, C // n_head).transpose(1, 2)
        k = k.view(B, T, n_head, C // n_head).transpose(1, 2)
        v = v.view(B, T, n_head, C // n_head).transpose(1, 2)
        # nanoGPT's manual attention path (its mask buffer made inline here: a buffer
        # would be broadcast by DDP's forward, and the master-only eval would wait for it)
        att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1)))
        att = att.masked_fill(torch.tril(torch.ones(T, T)) == 0, float('-inf'))
        y = F.softmax(att, dim=-1) @ v
        x = x + self.c_proj(y.transpose(1, 2).reshape(B, T, C))
        return x + self.mlp(self.ln_2(x))


class GPT(nn.Module):
    def __init__(self):
        super().__init__()
        self.wte = nn.Embedding(vocab_size, n_embd)
        self.wpe = nn.Embedding(block_size, n_embd)
        self.h = nn.ModuleList([Block() for _ in range(2)])
        self.ln_f = nn.LayerNorm(n_embd)
        self.lm_head = nn.Linear(n_embd, vocab_size, bias=False)
        self.wte.weight = self.lm_head.weight    # weight tying, as nanoGPT

    def forward(self, idx, targets=None):
        b, t = idx.size()
        pos = torch.arange(0, t, dtype=torch.long)
        x = self.wte(idx) + self.wpe(pos)
        for block in self.h:
            x = block(x)
        logits = self.lm_head(self.ln_f(x))
        loss = None
        if targets is not None:
            loss = F.cross_entropy(logits.view(-1, logits.size(-1)), targets.view(-1),
                                   ignore_index=-1)
        return logits, loss

    def configure_optimizers(self, weight_decay, learning_rate, betas, device_type):
        param_dict = {pn: p for pn, p in self.named_parameters() if p.requires_grad}
        decay_params = [p for n, p in param_dict.items() if p.dim() >= 2]
        nodecay_params = [p for n, p in param_dict.items() if p.dim() < 2]
        optim_groups = [{'params': decay_params, 'weight_decay': weight_decay},
                        {'params': nodecay_params, 'weight_decay': 0.0}]
        return torch.optim.AdamW(optim_groups, lr=learning_rate, betas=betas)


model = GPT()
model.to(device)
optimizer = model.configure_optimizers(weight_decay, learning_rate, (beta1, beta2), 'cpu')
if ddp:
    model = DDP(model, device_ids=[ddp_local_rank])


@torch.no_grad()
def estimate_loss():
    out = {}
    model.eval()
    for split in ['train', 'val']:
        losses = torch.zeros(eval_iters)
        for k in range(eval_iters):
            X, Y = get_batch(split)
            with ctx:
                logits, loss = model(X, Y)
            losses[k] = loss.item()
        # nanoGPT keeps the 0-d tensor and formats it with :.4f; tapegrad's Tensor has
        # no __format__ yet (reported), so take the number
        out[split] = losses.mean().item()
    model.train()
    return out


def get_lr(it):
    if it < warmup_iters:
        return learning_rate * (it + 1) / (warmup_iters + 1)
    if it > lr_decay_iters:
        return min_lr
    decay_ratio = (it - warmup_iters) / (lr_decay_iters - warmup_iters)
    coeff = 0.5 * (1.0 + math.cos(math.pi * decay_ratio))
    return min_lr + coeff * (learning_rate - min_lr)


X, Y = get_batch('train')
t0 = time.time()
raw_model = model.module if ddp else model
iter_num = 0
best_val_loss = 1e9
first_loss = None
while True:
    lr = get_lr(iter_num)
    for param_group in optimizer.param_groups:
        param_group['lr'] = lr
    if iter_num % eval_interval == 0 and master_process:
        losses = estimate_loss()
        print(f"step {iter_num}: train loss {losses['train']:.4f}, val loss {losses['val']:.4f}")
        if iter_num > 0 and losses['val'] < best_val_loss:
            best_val_loss = losses['val']
            checkpoint = {'model': raw_model.state_dict(), 'optimizer': optimizer.state_dict(),
                          'iter_num': iter_num, 'best_val_loss': best_val_loss}
            print(f"saving checkpoint to {out_dir}")
            torch.save(checkpoint, os.path.join(out_dir, 'ckpt.pt'))
    for micro_step in range(gradient_accumulation_steps):
        if ddp:
            model.require_backward_grad_sync = (micro_step == gradient_accumulation_steps - 1)
        with ctx:
            logits, loss = model(X, Y)
            loss = loss / gradient_accumulation_steps
        X, Y = get_batch('train')
        loss.backward()
    if grad_clip != 0.0:
        torch.nn.utils.clip_grad_norm_(model.parameters(), grad_clip)
    optimizer.step()
    optimizer.zero_grad(set_to_none=True)
    t1 = time.time()
    dt, t0 = t1 - t0, t1
    if iter_num % log_interval == 0 and master_process:
        lossf = loss.item() * gradient_accumulation_steps
        print(f"iter {iter_num}: loss {lossf:.4f}, time {dt * 1000:.2f}ms")
    iter_num += 1
    if iter_num > max_iters:
        break

if ddp:
    # (test only, not in nanoGPT) the replicas must still be identical
    import tapegrad.distributed as dist
    flat = torch.cat([p.detach().reshape(-1) for p in raw_model.parameters()])
    top = flat.clone()
    dist.broadcast(top, src=0)
    assert torch.equal(flat, top), "DDP replicas diverged"
    destroy_process_group()
