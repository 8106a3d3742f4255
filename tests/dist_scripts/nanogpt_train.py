"""nanoGPT's train.py, written in its style with `import tapegrad as torch` (CI has no
network, so no upstream code is stored; the real train.py was run by hand the same way,
see tests/test_nanogpt_ddp.py). Run with `tapegrad launch --nproc 2 nanogpt_train.py
--key=value ...` from a directory holding data/<dataset>/{train.bin,val.bin,meta.pkl}.

The same sequence as train.py: globals as config, configurator.py's overrides (config
file, `--key=value` through literal_eval, type-checked), the DDP path (RANK/LOCAL_RANK/
WORLD_SIZE read before anything else, init_process_group(backend), DDP(model,
device_ids=[ddp_local_rank]), gradient accumulation split across ranks, the sync
toggled with `model.require_backward_grad_sync` instead of no_sync()), the poor man's
np.memmap loader iterating a randint tensor, meta.pkl's vocab size, init_from scratch
or resume (torch.load, `_orig_mod.` prefix fix, optimizer.load_state_dict),
GradScaler(enabled=False) around backward/unscale_/step/update, torch.compile,
nullcontext on CPU, estimate_loss under no_grad formatted with `:.4f`, cosine lr,
master-only eval and a nested checkpoint dict, destroy_process_group.

One line differs from train.py: its DDP path sets `device = f'cuda:{ddp_local_rank}'`
and calls torch.cuda.set_device unconditionally, which fails on a CPU-only machine
under PyTorch too; here (as in the hand run) that happens only if 'cuda' in device.

Test-only additions, marked "(test only)": at iteration `check_iter` every rank keeps
its micro-batches; after backward, the averaged gradient is compared with PyTorch's
gradient of the mean loss over ALL ranks' micro-batches (the same weights loaded into
the torch twin of the model); at the end the replicas must be identical. Each rank
prints `OK <rank>`.
"""
import os
import sys
import time
import math
import pickle
from ast import literal_eval
from contextlib import nullcontext

import numpy as np
import tapegrad as torch                                          # was: import torch
from tapegrad.nn.parallel import DistributedDataParallel as DDP   # was: torch.nn.parallel
from tapegrad.distributed import init_process_group, destroy_process_group

from nanogpt_model import GPTConfig, gpt_module

GPT = gpt_module(torch)

# -----------------------------------------------------------------------------
out_dir = 'out'
eval_interval = 2000
log_interval = 1
eval_iters = 200
eval_only = False
always_save_checkpoint = True
init_from = 'scratch'
dataset = 'openwebtext'
gradient_accumulation_steps = 5 * 8
batch_size = 12
block_size = 1024
n_layer = 12
n_head = 12
n_embd = 768
dropout = 0.0
bias = False
learning_rate = 6e-4
max_iters = 600000
weight_decay = 1e-1
beta1 = 0.9
beta2 = 0.95
grad_clip = 1.0
decay_lr = True
warmup_iters = 2000
lr_decay_iters = 600000
min_lr = 6e-5
backend = 'nccl'
device = 'cuda'
dtype = 'bfloat16' if torch.cuda.is_available() and torch.cuda.is_bf16_supported() else 'float16'
compile = True
check_iter = 1          # (test only) the iteration whose gradients are checked against torch
# -----------------------------------------------------------------------------
config_keys = [k for k, v in globals().items() if not k.startswith('_') and isinstance(v, (int, float, bool, str))]
for arg in sys.argv[1:]:                         # configurator.py, inline
    if '=' not in arg:
        assert not arg.startswith('--')
        config_file = arg
        print(f"Overriding config with {config_file}:")
        with open(config_file) as f:
            exec(f.read())
    else:
        assert arg.startswith('--')
        key, val = arg.split('=')
        key = key[2:]
        if key in globals():
            try:
                attempt = literal_eval(val)
            except (SyntaxError, ValueError):
                attempt = val
            assert type(attempt) == type(globals()[key])
            print(f"Overriding: {key} = {attempt}")
            globals()[key] = attempt
        else:
            raise ValueError(f"Unknown config key: {key}")
config = {k: globals()[k] for k in config_keys}
# -----------------------------------------------------------------------------

ddp = int(os.environ.get('RANK', -1)) != -1
if ddp:
    init_process_group(backend=backend)
    ddp_rank = int(os.environ['RANK'])
    ddp_local_rank = int(os.environ['LOCAL_RANK'])
    ddp_world_size = int(os.environ['WORLD_SIZE'])
    if 'cuda' in device:  # train.py does this unconditionally (see the docstring)
        device = f'cuda:{ddp_local_rank}'
        torch.cuda.set_device(device)
    master_process = ddp_rank == 0
    seed_offset = ddp_rank
    assert gradient_accumulation_steps % ddp_world_size == 0
    gradient_accumulation_steps //= ddp_world_size
else:
    master_process = True
    seed_offset = 0
    ddp_world_size = 1
tokens_per_iter = gradient_accumulation_steps * ddp_world_size * batch_size * block_size
print(f"tokens per iteration will be: {tokens_per_iter:,}")

if master_process:
    os.makedirs(out_dir, exist_ok=True)
torch.manual_seed(1337 + seed_offset)
torch.backends.cuda.matmul.allow_tf32 = True
torch.backends.cudnn.allow_tf32 = True
device_type = 'cuda' if 'cuda' in device else 'cpu'
ptdtype = {'float32': torch.float32, 'bfloat16': torch.bfloat16, 'float16': torch.float16}[dtype]
ctx = nullcontext() if device_type == 'cpu' else torch.amp.autocast(device_type=device_type, dtype=ptdtype)

data_dir = os.path.join('data', dataset)
def get_batch(split):
    if split == 'train':
        data = np.memmap(os.path.join(data_dir, 'train.bin'), dtype=np.uint16, mode='r')
    else:
        data = np.memmap(os.path.join(data_dir, 'val.bin'), dtype=np.uint16, mode='r')
    ix = torch.randint(len(data) - block_size, (batch_size,))
    x = torch.stack([torch.from_numpy((data[i:i+block_size]).astype(np.int64)) for i in ix])
    y = torch.stack([torch.from_numpy((data[i+1:i+1+block_size]).astype(np.int64)) for i in ix])
    if device_type == 'cuda':
        x, y = x.pin_memory().to(device, non_blocking=True), y.pin_memory().to(device, non_blocking=True)
    else:
        x, y = x.to(device), y.to(device)
    return x, y

iter_num = 0
best_val_loss = 1e9

meta_path = os.path.join(data_dir, 'meta.pkl')
meta_vocab_size = None
if os.path.exists(meta_path):
    with open(meta_path, 'rb') as f:
        meta = pickle.load(f)
    meta_vocab_size = meta['vocab_size']
    print(f"found vocab_size = {meta_vocab_size} (inside {meta_path})")

model_args = dict(n_layer=n_layer, n_head=n_head, n_embd=n_embd, block_size=block_size,
                  bias=bias, vocab_size=None, dropout=dropout)
if init_from == 'scratch':
    print("Initializing a new model from scratch")
    if meta_vocab_size is None:
        print("defaulting to vocab_size of GPT-2 to 50304 (50257 rounded up for efficiency)")
    model_args['vocab_size'] = meta_vocab_size if meta_vocab_size is not None else 50304
    gptconf = GPTConfig(**model_args)
    model = GPT(gptconf)
elif init_from == 'resume':
    print(f"Resuming training from {out_dir}")
    ckpt_path = os.path.join(out_dir, 'ckpt.pt')
    checkpoint = torch.load(ckpt_path, map_location=device)
    checkpoint_model_args = checkpoint['model_args']
    for k in ['n_layer', 'n_head', 'n_embd', 'block_size', 'bias', 'vocab_size']:
        model_args[k] = checkpoint_model_args[k]
    gptconf = GPTConfig(**model_args)
    model = GPT(gptconf)
    state_dict = checkpoint['model']
    unwanted_prefix = '_orig_mod.'
    for k, v in list(state_dict.items()):
        if k.startswith(unwanted_prefix):
            state_dict[k[len(unwanted_prefix):]] = state_dict.pop(k)
    model.load_state_dict(state_dict)
    iter_num = checkpoint['iter_num']
    best_val_loss = checkpoint['best_val_loss']
if block_size < model.config.block_size:
    model.crop_block_size(block_size)
    model_args['block_size'] = block_size
model.to(device)

scaler = torch.cuda.amp.GradScaler(enabled=(dtype == 'float16'))

optimizer = model.configure_optimizers(weight_decay, learning_rate, (beta1, beta2), device_type)
if init_from == 'resume':
    optimizer.load_state_dict(checkpoint['optimizer'])
checkpoint = None

if compile:
    print("compiling the model... (takes a ~minute)")
    unoptimized_model = model
    model = torch.compile(model)

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
        out[split] = losses.mean()
    model.train()
    return out

def get_lr(it):
    if it < warmup_iters:
        return learning_rate * (it + 1) / (warmup_iters + 1)
    if it > lr_decay_iters:
        return min_lr
    decay_ratio = (it - warmup_iters) / (lr_decay_iters - warmup_iters)
    assert 0 <= decay_ratio <= 1
    coeff = 0.5 * (1.0 + math.cos(math.pi * decay_ratio))
    return min_lr + coeff * (learning_rate - min_lr)


def check_grads_against_torch(raw_model, batches):
    """(test only) DDP's averaged gradient == torch's gradient of the mean loss over every
    rank's micro-batches, from the same weights."""
    import torch as pytorch
    import tapegrad.distributed as dist
    everyone = [batches]
    if ddp:
        everyone = [None] * ddp_world_size
        dist.all_gather_object(everyone, batches)
    twin = gpt_module(pytorch)(GPTConfig(**model_args))
    sd = {k.removeprefix('_orig_mod.'): pytorch.from_numpy(v.detach().numpy().copy())
          for k, v in raw_model.state_dict().items()}
    twin.load_state_dict(sd, strict=True)
    n = sum(len(b) for b in everyone)
    for rank_batches in everyone:
        for x, y in rank_batches:
            _, loss = twin(pytorch.from_numpy(x), pytorch.from_numpy(y))
            (loss / n).backward()
    # (torch.compile's module names its parameters '_orig_mod.'...: as nanoGPT strips it)
    ours = {n.removeprefix('_orig_mod.'): p for n, p in raw_model.named_parameters()}
    assert sorted(ours) == sorted(n for n, _ in twin.named_parameters())
    for name, p in twin.named_parameters():
        np.testing.assert_allclose(ours[name].grad.numpy(), p.grad.numpy(), rtol=1e-4,
                                   atol=1e-6, err_msg=f"gradient of {name}")
    print(f"gradients at iter {iter_num} match torch on {n} micro-batches "
          f"(rank {os.environ.get('RANK', 0)})")


X, Y = get_batch('train')
t0 = time.time()
local_iter_num = 0
raw_model = model.module if ddp else model
running_mfu = -1.0
seen = []                                      # (test only)
while True:

    lr = get_lr(iter_num) if decay_lr else learning_rate
    for param_group in optimizer.param_groups:
        param_group['lr'] = lr

    if iter_num % eval_interval == 0 and master_process:
        losses = estimate_loss()
        print(f"step {iter_num}: train loss {losses['train']:.4f}, val loss {losses['val']:.4f}")
        if losses['val'] < best_val_loss or always_save_checkpoint:
            best_val_loss = losses['val']
            if iter_num > 0:
                checkpoint = {
                    'model': raw_model.state_dict(),
                    'optimizer': optimizer.state_dict(),
                    'model_args': model_args,
                    'iter_num': iter_num,
                    'best_val_loss': best_val_loss,
                    'config': config,
                }
                print(f"saving checkpoint to {out_dir}")
                torch.save(checkpoint, os.path.join(out_dir, 'ckpt.pt'))
    if iter_num == 0 and eval_only:
        break

    for micro_step in range(gradient_accumulation_steps):
        if ddp:
            model.require_backward_grad_sync = (micro_step == gradient_accumulation_steps - 1)
        if iter_num == check_iter:                                   # (test only)
            seen.append((X.numpy().copy(), Y.numpy().copy()))
        with ctx:
            logits, loss = model(X, Y)
            loss = loss / gradient_accumulation_steps
        X, Y = get_batch('train')
        scaler.scale(loss).backward()
    if iter_num == check_iter:                                       # (test only)
        check_grads_against_torch(raw_model, seen)
    if grad_clip != 0.0:
        scaler.unscale_(optimizer)
        torch.nn.utils.clip_grad_norm_(model.parameters(), grad_clip)
    scaler.step(optimizer)
    scaler.update()
    optimizer.zero_grad(set_to_none=True)

    t1 = time.time()
    dt = t1 - t0
    t0 = t1
    if iter_num % log_interval == 0 and master_process:
        lossf = loss.item() * gradient_accumulation_steps
        if local_iter_num >= 5:
            mfu = raw_model.estimate_mfu(batch_size * gradient_accumulation_steps, dt)
            running_mfu = mfu if running_mfu == -1.0 else 0.9*running_mfu + 0.1*mfu
        print(f"iter {iter_num}: loss {lossf:.4f}, time {dt*1000:.2f}ms, mfu {running_mfu*100:.2f}%")
    iter_num += 1
    local_iter_num += 1

    if iter_num > max_iters:
        break

if ddp:
    # (test only) the replicas must still be identical
    import tapegrad.distributed as dist
    flat = torch.cat([p.detach().reshape(-1) for p in raw_model.parameters()])
    top = flat.clone()
    dist.broadcast(top, src=0)
    assert torch.equal(flat, top), "DDP replicas diverged"
    destroy_process_group()
print(f"OK {os.environ.get('RANK', 0)}")                          # (test only)
