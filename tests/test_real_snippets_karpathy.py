"""Programs in the style of Karpathy's public PyTorch code (makemore.py's datasets and
ignore_index targets, nanoGPT's train.py loop with memmapped .bin data, gradient
accumulation, a cosine learning-rate schedule and checkpoints, the lecture notebooks'
loss-curve smoothing and their indexing mistakes), run with torch and with tapegrad;
what they print must agree (tests/_snippets.py). Written for these tests, not copied.

Weights are set from linspace (never from the random generators, whose streams differ
between the two libraries), so losses are comparable step by step.
"""
import inspect
import math
import os

import numpy as np

from _snippets import assert_same_output

WORDS = ["emma", "olivia", "ava", "isabella", "sophia", "mia", "amelia", "harper"]


def _fill(torch, module):
    """Deterministic weights: every parameter from a linspace of its own size."""
    with torch.no_grad():
        for k, p in enumerate(module.parameters()):
            n = p.numel()
            p.copy_(torch.tensor(np.linspace(-0.3, 0.3 + 0.01 * k, n).reshape(tuple(p.shape)),
                                 dtype=torch.float32))


def _errors(torch, print, *thunks):
    for f in thunks:
        try:
            f()
            print("no error")
        except Exception as e:  # the type and the message must be torch's
            print(type(e).__name__, str(e))


def _loss_curve_and_mistakes(torch, print):
    # the lectures' plot of the loss smoothed over chunks of steps
    lossi = [math.log10(3.3 - 0.05 * i) for i in range(30)]
    print(torch.tensor(lossi).view(-1, 10).mean(1))
    print(torch.tensor(lossi).view(3, -1).mean(1, keepdim=True).shape)
    _errors(torch, print,
            lambda: torch.tensor(lossi).view(-1, 1000),   # 1000 steps per chunk, 30 run
            lambda: torch.tensor(lossi).reshape(7, 4),
            lambda: torch.tensor(lossi).view(-1, -1),
            lambda: torch.tensor(lossi).view(-2, 15),
            lambda: torch.tensor(lossi).reshape(15, -3))
    # part 2: the minibatch's probabilities indexed with the whole dataset's labels
    X = torch.tensor([[0, 0, 5], [0, 5, 13], [5, 13, 13], [13, 13, 1]] * 8)
    Y = torch.tensor([5, 13, 13, 1, 0] * 10)
    C = torch.tensor(np.linspace(-1, 1, 27 * 2).reshape(27, 2), dtype=torch.float32)
    logits = C[X].view(-1, 6) @ torch.ones(6, 27)
    prob = logits.softmax(1)
    print(prob.shape, -prob[torch.arange(32), Y[:32]].log().mean())
    dlogits = prob.clone()
    _errors(torch, print,
            lambda: -prob[torch.arange(32), Y].log().mean(),
            lambda: dlogits.__setitem__((range(32), Y[:5]), 0.0),
            lambda: prob[torch.zeros(2, 3, dtype=torch.long), torch.zeros(4, dtype=torch.long)])


def test_loss_curve_view_and_indexing_mistakes():
    assert_same_output(_loss_curve_and_mistakes)


def _char_dataset(torch, print):
    F = torch.nn.functional
    chars = sorted(set("".join(WORDS)))
    stoi = {ch: i + 1 for i, ch in enumerate(chars)}
    itos = {i: s for s, i in stoi.items()}
    max_len = max(len(w) for w in WORDS)

    class CharDataset(torch.utils.data.Dataset):
        def __len__(self):
            return len(WORDS)

        def __getitem__(self, idx):
            ix = torch.tensor([stoi[w] for w in WORDS[idx]], dtype=torch.long)
            x = torch.zeros(max_len + 1, dtype=torch.long)
            y = torch.zeros(max_len + 1, dtype=torch.long)
            x[1:1 + len(ix)] = ix
            y[:len(ix)] = ix
            y[len(ix) + 1:] = -1  # no loss at the positions past the end of the word
            return x, y

    ds = CharDataset()
    x, y = ds[2]
    print(x, y, "".join(itos[i] for i in x.tolist() if i > 0))
    loader = torch.utils.data.DataLoader(ds, batch_size=3, shuffle=False, num_workers=0)
    V = len(chars) + 1
    wte = torch.nn.Embedding(V, 4)
    head = torch.nn.Linear(4, V, bias=False)
    _fill(torch, wte)
    _fill(torch, head)
    opt = torch.optim.AdamW(list(wte.parameters()) + list(head.parameters()), lr=5e-3,
                            weight_decay=0.01, betas=(0.9, 0.99), eps=1e-8)
    for step, batch in enumerate(loader):
        X, Y = [t.to("cpu") for t in batch]
        logits = head(wte(X))
        loss = F.cross_entropy(logits.view(-1, logits.size(-1)), Y.view(-1), ignore_index=-1)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        print(f"step {step} | loss {loss.item():.4f} | {X.shape} {Y.dtype}")
    with torch.no_grad():
        idx = torch.zeros(1, 1, dtype=torch.long)
        for _ in range(4):
            logits = head(wte(idx))[:, -1, :]
            probs = F.softmax(logits, dim=-1)
            _, idx_next = torch.topk(probs, k=1, dim=-1)
            idx = torch.cat((idx, idx_next), dim=1)
    print(idx, idx[0, 1:].tolist())


def test_makemore_char_dataset_and_adamw_loop():
    assert_same_output(_char_dataset, rtol=2e-4)


def _nanogpt_loop(torch, print, tmp):
    nn, F = torch.nn, torch.nn.functional
    block_size, n_embd, n_head, vocab_size = 8, 16, 2, 11
    data = (np.arange(400) * 7 % vocab_size).astype(np.uint16)
    data.tofile(os.path.join(tmp, "train.bin"))

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.ln_1 = nn.LayerNorm(n_embd, bias=False)
            self.c_attn = nn.Linear(n_embd, 3 * n_embd)
            self.c_proj = nn.Linear(n_embd, n_embd)
            self.ln_2 = nn.LayerNorm(n_embd)
            self.mlp = nn.Sequential(nn.Linear(n_embd, 4 * n_embd), nn.GELU(),
                                     nn.Linear(4 * n_embd, n_embd), nn.Dropout(0.0))
            self.register_buffer("bias", torch.tril(torch.ones(block_size, block_size))
                                 .view(1, 1, block_size, block_size))

        def forward(self, x):
            B, T, C = x.size()
            q, k, v = self.c_attn(self.ln_1(x)).split(n_embd, dim=2)
            k = k.view(B, T, n_head, C // n_head).transpose(1, 2)
            q = q.view(B, T, n_head, C // n_head).transpose(1, 2)
            v = v.view(B, T, n_head, C // n_head).transpose(1, 2)
            y1 = F.scaled_dot_product_attention(q, k, v, attn_mask=None, dropout_p=0.0,
                                                is_causal=True)
            att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1)))
            att = att.masked_fill(self.bias[:, :, :T, :T] == 0, float("-inf"))
            y2 = F.softmax(att, dim=-1) @ v
            y = ((y1 + y2) / 2).transpose(1, 2).contiguous().view(B, T, C)
            x = x + self.c_proj(y)
            return x + self.mlp(self.ln_2(x))

    class GPT(nn.Module):
        def __init__(self):
            super().__init__()
            self.transformer = nn.ModuleDict(dict(
                wte=nn.Embedding(vocab_size, n_embd), wpe=nn.Embedding(block_size, n_embd),
                h=nn.ModuleList([Block() for _ in range(2)]), ln_f=nn.LayerNorm(n_embd)))
            self.lm_head = nn.Linear(n_embd, vocab_size, bias=False)
            self.transformer.wte.weight = self.lm_head.weight  # weight tying

        def forward(self, idx, targets=None):
            b, t = idx.size()
            pos = torch.arange(0, t, dtype=torch.long, device=idx.device)
            x = self.transformer.wte(idx) + self.transformer.wpe(pos)
            for block in self.transformer.h:
                x = block(x)
            x = self.transformer.ln_f(x)
            if targets is None:
                return self.lm_head(x[:, [-1], :]), None
            logits = self.lm_head(x)
            return logits, F.cross_entropy(logits.view(-1, logits.size(-1)), targets.view(-1),
                                           ignore_index=-1)

    model = GPT()
    _fill(torch, model)
    print(sum(p.numel() for p in model.parameters()),
          len(dict(model.named_parameters())), len(model.state_dict()))
    param_dict = {pn: p for pn, p in model.named_parameters() if p.requires_grad}
    decay = [p for n, p in param_dict.items() if p.dim() >= 2]
    nodecay = [p for n, p in param_dict.items() if p.dim() < 2]
    print(f"num decayed parameter tensors: {len(decay)}, with "
          f"{sum(p.numel() for p in decay):,} parameters")
    fused_available = "fused" in inspect.signature(torch.optim.AdamW).parameters
    optimizer = torch.optim.AdamW([{"params": decay, "weight_decay": 0.1},
                                   {"params": nodecay, "weight_decay": 0.0}],
                                  lr=1e-3, betas=(0.9, 0.99), **({"fused": False}
                                                                 if fused_available else {}))

    def get_batch(it):
        d = np.memmap(os.path.join(tmp, "train.bin"), dtype=np.uint16, mode="r")
        ix = torch.tensor([(it * 37 + j * 53) % (len(d) - block_size) for j in range(4)])
        x = torch.stack([torch.from_numpy((d[i:i + block_size]).astype(np.int64)) for i in ix])
        y = torch.stack([torch.from_numpy((d[i + 1:i + 1 + block_size]).astype(np.int64))
                         for i in ix])
        return x.to("cpu"), y.to("cpu")

    def get_lr(it, warmup=2, decay_iters=6, lr=1e-3, min_lr=1e-4):
        if it < warmup:
            return lr * (it + 1) / (warmup + 1)
        if it > decay_iters:
            return min_lr
        ratio = (it - warmup) / (decay_iters - warmup)
        return min_lr + 0.5 * (1.0 + math.cos(math.pi * ratio)) * (lr - min_lr)

    @torch.no_grad()
    def estimate_loss():
        model.eval()
        losses = torch.zeros(3)
        for k in range(3):
            X, Y = get_batch(100 + k)
            _, loss = model(X, Y)
            losses[k] = loss.item()
        model.train()
        return losses.mean()

    X, Y = get_batch(0)
    for it in range(6):
        lr = get_lr(it)
        for param_group in optimizer.param_groups:
            param_group["lr"] = lr
        if it % 3 == 0:
            print(f"step {it}: val loss {estimate_loss():.4f}")
        for micro_step in range(2):
            logits, loss = model(X, Y)
            loss = loss / 2
            X, Y = get_batch(it * 2 + micro_step + 1)
            loss.backward()
        norm = torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
        print(f"iter {it}: loss {loss.item() * 2:.4f}, lr {lr:.4e}, norm {norm.item():.4f}")
    ckpt = {"model": model.state_dict(), "optimizer": optimizer.state_dict(),
            "model_args": dict(n_layer=2, n_embd=n_embd), "iter_num": 6, "best_val_loss": 1.5}
    torch.save(ckpt, os.path.join(tmp, "ckpt.pt"))
    ck = torch.load(os.path.join(tmp, "ckpt.pt"), map_location="cpu")
    sd = ck["model"]
    unwanted_prefix = "_orig_mod."
    for k in list(sd.keys()):
        if k.startswith(unwanted_prefix):
            sd[k[len(unwanted_prefix):]] = sd.pop(k)
    model2 = GPT()
    print(model2.load_state_dict(sd), ck["iter_num"], ck["model_args"])
    optimizer.load_state_dict(ck["optimizer"])
    model2.eval()
    idx = torch.zeros((1, 1), dtype=torch.long)
    with torch.no_grad():
        for _ in range(5):
            idx_cond = idx if idx.size(1) <= block_size else idx[:, -block_size:]
            logits, _ = model2(idx_cond)
            logits = logits[:, -1, :] / 0.8
            v, _ = torch.topk(logits, min(3, logits.size(-1)))
            logits[logits < v[:, [-1]]] = -float("Inf")
            idx = torch.cat((idx, logits.argmax(-1, keepdim=True)), dim=1)
    print(idx[0].tolist())


def test_nanogpt_train_loop_with_memmap_data_and_checkpoint(tmp_path):
    torch_dir, tg_dir = tmp_path / "torch", tmp_path / "tg"
    torch_dir.mkdir()
    tg_dir.mkdir()
    dirs = iter([str(torch_dir), str(tg_dir)])  # torch runs first (tests/_snippets.py)
    assert_same_output(lambda torch, print: _nanogpt_loop(torch, print, next(dirs)),
                       rtol=2e-4)


def _llmc_start_and_writer(torch, print):
    import hashlib
    import io

    # llm.c's train_gpt2.py says what it runs on before anything else
    print("Running pytorch", type(torch.version.__version__).__name__,
          str(torch.version.__version__) == str(torch.__version__))
    print(torch.version.cuda, torch.version.hip, torch.version.debug)
    # ... and writes its tokens and weights for the C code: an int32 header, then raw data
    toks = (np.arange(40) * 13 % 50).astype(np.uint16)
    header = np.zeros(256, dtype=np.int32)
    header[0], header[1], header[2] = 20240520, 1, len(toks)
    f = io.BytesIO(header.tobytes() + toks.tobytes())
    head = np.frombuffer(f.read(256 * 4), dtype=np.int32)
    assert head[0] == 20240520
    tokens = np.frombuffer(f.read(), dtype=np.uint16)
    buf = tokens[:2 * 8 + 1]
    buf = torch.tensor(buf.astype(np.int32), dtype=torch.long)
    x, y = buf[:-1].view(2, 8), buf[1:].view(2, 8)
    print(x.dtype, y[1], int(head[2]))
    lin = torch.nn.Linear(8, 4)
    _fill(torch, lin)
    out = io.BytesIO()
    wheader = torch.zeros(256, dtype=torch.int32)
    wheader[0] = 20240326
    wheader[2] = 1024
    out.write(wheader.numpy().tobytes())
    for name, t in lin.state_dict().items():
        t = t.detach().cpu().to(torch.float32)
        out.write(t.numpy().tobytes())
        print(name, t.shape, t.dtype)
    print(len(out.getvalue()), hashlib.md5(out.getvalue()).hexdigest())
    # the half-precision file: the 16-bit patterns, through a view as int16
    for name, t in lin.state_dict().items():
        t = t.detach().cpu().to(torch.float16).view(torch.int16)
        print(name, t.dtype, t.shape, t.flatten()[:3],
              hashlib.md5(t.numpy().tobytes()).hexdigest())
    w = lin.weight.detach()
    print(w.view(torch.int32)[0, :2], w.view(torch.int16).shape, w.view(torch.float64).shape,
          w.view(torch.uint8).shape, w.view(torch.float32).requires_grad)
    a = torch.zeros(3)
    a.view(torch.int32)[0] = 1065353216  # the same memory: a[0] becomes 1.0
    print(a)
    _errors(torch, print,
            lambda: torch.ones(2, 3).view(torch.float64),
            lambda: torch.ones(3, 2).t().view(torch.int16),
            lambda: torch.tensor(1.0).view(torch.int16))


def test_llmc_version_and_weight_writer():
    assert_same_output(_llmc_start_and_writer)
