"""Programs in the style of Raschka's "Build a Large Language Model From Scratch" code
(chapters 2-7: a sliding-window data set, causal and multi-head attention, a small GPT with
hand-written LayerNorm/GELU, greedy and top-k generation, the training loop, loading
weights from NumPy arrays, classifier and instruction finetuning), run with torch and with
tapegrad; what they print must agree (tests/_snippets.py). Written for these tests, not
copied. Weights are set from fixed NumPy values so both libraries start from the same model.
"""
import os
import tempfile

import numpy as np

from _snippets import assert_same_output

TEXT = ("every step forward brings the painter closer to the canvas and every canvas "
        "brings the painter a new step ") * 3
WORDS = sorted(set(TEXT.split()))
CFG = {"vocab_size": len(WORDS) + 2, "context_length": 8, "emb_dim": 8, "n_heads": 2,
       "n_layers": 2, "drop_rate": 0.0, "qkv_bias": True}


def _encode(text):
    return [WORDS.index(w) for w in text.split()]


def _set_weights(torch, model, scale=0.3):
    """Every parameter from a fixed pattern (the libraries' random streams differ)."""
    with torch.no_grad():
        for i, (name, p) in enumerate(model.named_parameters()):
            vals = np.sin(np.arange(p.numel()) * 0.37 + i) * scale
            if name.endswith("scale"):
                vals = 1.0 + vals
            p.copy_(torch.tensor(vals.reshape(tuple(p.shape)), dtype=torch.float32))


def _classes(torch):
    nn = torch.nn

    class SlidingWindow(torch.utils.data.Dataset):
        def __init__(self, ids, max_length, stride):
            self.inputs, self.targets = [], []
            for i in range(0, len(ids) - max_length, stride):
                self.inputs.append(torch.tensor(ids[i:i + max_length]))
                self.targets.append(torch.tensor(ids[i + 1:i + max_length + 1]))

        def __len__(self):
            return len(self.inputs)

        def __getitem__(self, i):
            return self.inputs[i], self.targets[i]

    class MultiHead(nn.Module):
        def __init__(self, d_in, d_out, context_length, dropout, num_heads, qkv_bias=False):
            super().__init__()
            self.d_out, self.num_heads = d_out, num_heads
            self.head_dim = d_out // num_heads
            self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
            self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
            self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
            self.out_proj = nn.Linear(d_out, d_out)
            self.dropout = nn.Dropout(dropout)
            self.register_buffer(
                "mask", torch.triu(torch.ones(context_length, context_length), diagonal=1))

        def forward(self, x):
            b, n, _ = x.shape
            split = lambda t: t.view(b, n, self.num_heads, self.head_dim).transpose(1, 2)
            q, k, v = split(self.W_query(x)), split(self.W_key(x)), split(self.W_value(x))
            scores = q @ k.transpose(2, 3)
            scores.masked_fill_(self.mask.bool()[:n, :n], -torch.inf)
            w = torch.softmax(scores / k.shape[-1] ** 0.5, dim=-1)
            w = self.dropout(w)
            ctx = (w @ v).transpose(1, 2).contiguous().view(b, n, self.d_out)
            return self.out_proj(ctx)

    class LayerNorm(nn.Module):
        def __init__(self, emb_dim):
            super().__init__()
            self.eps = 1e-5
            self.scale = nn.Parameter(torch.ones(emb_dim))
            self.shift = nn.Parameter(torch.zeros(emb_dim))

        def forward(self, x):
            mean = x.mean(dim=-1, keepdim=True)
            var = x.var(dim=-1, keepdim=True, unbiased=False)
            return self.scale * (x - mean) / torch.sqrt(var + self.eps) + self.shift

    class GELU(nn.Module):
        def forward(self, x):
            c = torch.sqrt(torch.tensor(2.0 / torch.pi))
            return 0.5 * x * (1 + torch.tanh(c * (x + 0.044715 * torch.pow(x, 3))))

    class FeedForward(nn.Module):
        def __init__(self, cfg):
            super().__init__()
            self.layers = nn.Sequential(nn.Linear(cfg["emb_dim"], 4 * cfg["emb_dim"]), GELU(),
                                        nn.Linear(4 * cfg["emb_dim"], cfg["emb_dim"]))

        def forward(self, x):
            return self.layers(x)

    class Block(nn.Module):
        def __init__(self, cfg):
            super().__init__()
            self.att = MultiHead(cfg["emb_dim"], cfg["emb_dim"], cfg["context_length"],
                                 cfg["drop_rate"], cfg["n_heads"], cfg["qkv_bias"])
            self.ff = FeedForward(cfg)
            self.norm1, self.norm2 = LayerNorm(cfg["emb_dim"]), LayerNorm(cfg["emb_dim"])
            self.drop_shortcut = nn.Dropout(cfg["drop_rate"])

        def forward(self, x):
            x = x + self.drop_shortcut(self.att(self.norm1(x)))
            return x + self.drop_shortcut(self.ff(self.norm2(x)))

    class GPT(nn.Module):
        def __init__(self, cfg):
            super().__init__()
            self.tok_emb = nn.Embedding(cfg["vocab_size"], cfg["emb_dim"])
            self.pos_emb = nn.Embedding(cfg["context_length"], cfg["emb_dim"])
            self.drop_emb = nn.Dropout(cfg["drop_rate"])
            self.trf_blocks = nn.Sequential(*[Block(cfg) for _ in range(cfg["n_layers"])])
            self.final_norm = LayerNorm(cfg["emb_dim"])
            self.out_head = nn.Linear(cfg["emb_dim"], cfg["vocab_size"], bias=False)

        def forward(self, idx):
            n = idx.shape[1]
            x = self.tok_emb(idx) + self.pos_emb(torch.arange(n, device=idx.device))
            x = self.trf_blocks(self.drop_emb(x))
            return self.out_head(self.final_norm(x))

    return SlidingWindow, GPT


def _generate(torch, model, idx, max_new_tokens, context_size, temperature=0.0, top_k=None,
              eos_id=None):
    for _ in range(max_new_tokens):
        with torch.no_grad():
            logits = model(idx[:, -context_size:])[:, -1, :]
        if top_k is not None:
            top_logits, _ = torch.topk(logits, top_k)
            min_val = top_logits[:, -1]
            logits = torch.where(logits < min_val, torch.tensor(float("-inf")), logits)
        if temperature > 0.0:
            probs = torch.softmax(logits / temperature, dim=-1)
            idx_next = torch.argmax(probs, dim=-1, keepdim=True)  # deterministic stand-in
        else:
            idx_next = torch.argmax(logits, dim=-1, keepdim=True)
        if idx_next == eos_id:  # eos_id None: never equal (torch's Tensor.__eq__ fallback)
            break
        idx = torch.cat((idx, idx_next), dim=1)
    return idx


def _data_and_attention(torch, print):
    SlidingWindow, _ = _classes(torch)
    ds = SlidingWindow(_encode(TEXT), max_length=4, stride=4)
    loader = torch.utils.data.DataLoader(ds, batch_size=3, shuffle=False, drop_last=True)
    print(len(ds), len(loader))
    it = iter(loader)
    x, y = next(it)
    print(x, y, x.dtype, x.shape)
    mask = torch.triu(torch.ones(4, 4), diagonal=1)
    scores = torch.arange(16.).reshape(4, 4) / 10
    masked = scores.masked_fill(mask.bool(), -torch.inf)
    print(masked, torch.softmax(masked, dim=-1))
    print(scores.where(mask.bool(), torch.tensor(-1.0)), scores.where(scores > 0.5, 0.0).sum())
    print(torch.inf, -torch.inf, torch.nan != torch.nan, torch.pi, torch.e)
    print(type(torch.inf).__name__, torch.tensor([1.0, torch.inf]).isinf())
    t = torch.tensor([[3]])
    print(t == None, t != None, None == t)  # noqa: E711
    try:
        t < None
    except TypeError as e:
        print("TypeError", e)
    ids = torch.tensor([0, 2, 2, 5, 2])
    print(torch.bincount(ids), torch.bincount(ids, minlength=8), ids.bincount().dtype)
    print(torch.bincount(ids, weights=torch.tensor([0.5, 1.0, 2.0, 0.25, 1.0])))
    for bad in (torch.tensor([-1, 2]), torch.tensor([[1, 2]])):
        try:
            torch.bincount(bad)
        except RuntimeError as e:
            print("RuntimeError", e)


def _gpt_generate(torch, print):
    _, GPT = _classes(torch)
    model = GPT(CFG)
    _set_weights(torch, model)
    model.eval()
    total = sum(p.numel() for p in model.parameters())
    print(total, model.tok_emb.weight.shape, model.trf_blocks[0].att.mask.shape)
    idx = torch.tensor(_encode("every step forward")).unsqueeze(0)
    logits = model(idx)
    print(logits.shape, logits[0, -1])
    out = _generate(torch, model, idx, max_new_tokens=10, context_size=CFG["context_length"])
    print(out, out.squeeze(0).tolist())
    out = _generate(torch, model, idx, 6, CFG["context_length"], temperature=1.4, top_k=3)
    print(out)
    out = _generate(torch, model, idx, 6, CFG["context_length"], eos_id=int(out[0, 3]))
    print(out.shape)


def _train(torch, print):
    SlidingWindow, GPT = _classes(torch)
    ids = _encode(TEXT)
    split = int(0.8 * len(ids))
    train = torch.utils.data.DataLoader(SlidingWindow(ids[:split], 4, 4), batch_size=2,
                                        shuffle=False, drop_last=True)
    val = torch.utils.data.DataLoader(SlidingWindow(ids[split:], 4, 4), batch_size=2,
                                      shuffle=False, drop_last=False)
    model = GPT(CFG)
    _set_weights(torch, model)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    model.to(device)
    optimizer = torch.optim.AdamW(model.parameters(), lr=5e-3, weight_decay=0.1)

    def calc_loss_batch(x, y):
        x, y = x.to(device), y.to(device)
        logits = model(x)
        return torch.nn.functional.cross_entropy(logits.flatten(0, 1), y.flatten())

    def calc_loss_loader(loader, num_batches=None):
        if len(loader) == 0:
            return float("nan")
        num_batches = len(loader) if num_batches is None else min(num_batches, len(loader))
        total = 0.0
        for i, (x, y) in enumerate(loader):
            if i >= num_batches:
                break
            total += calc_loss_batch(x, y).item()
        return total / num_batches

    step, seen = -1, 0
    for epoch in range(2):
        model.train()
        for x, y in train:
            optimizer.zero_grad()
            loss = calc_loss_batch(x, y)
            loss.backward()
            optimizer.step()
            seen += x.numel()
            step += 1
            if step % 3 == 0:
                model.eval()
                with torch.no_grad():
                    tl, vl = calc_loss_loader(train, 2), calc_loss_loader(val, 2)
                model.train()
                print(f"Ep {epoch + 1} (Step {step:06d}): Train loss {tl:.4f}, Val loss {vl:.4f}")
    print(seen, torch.linspace(0, 2, 4))
    path = os.path.join(tempfile.mkdtemp(), "model.pth")
    torch.save({"model_state_dict": model.state_dict(),
                "optimizer_state_dict": optimizer.state_dict()}, path)
    ckpt = torch.load(path, weights_only=True)
    model2 = GPT(CFG)
    model2.load_state_dict(ckpt["model_state_dict"])
    opt2 = torch.optim.AdamW(model2.parameters(), lr=5e-3, weight_decay=0.1)
    opt2.load_state_dict(ckpt["optimizer_state_dict"])
    model2.eval()
    print(sorted(ckpt["model_state_dict"])[:4], calc_loss_loader(val))
    x, _ = next(iter(val))
    print(torch.equal(model2(x), model.eval()(x)))


def _load_weights(torch, print):
    _, GPT = _classes(torch)
    E, V, C = CFG["emb_dim"], CFG["vocab_size"], CFG["context_length"]

    def arr(*shape, k=0):
        return (np.cos(np.arange(int(np.prod(shape))) * 0.21 + k) * 0.25).reshape(shape)

    params = {"wpe": arr(C, E), "wte": arr(V, E, k=1), "g": 1 + arr(E, k=2), "b": arr(E, k=3),
              "blocks": [{"attn": {"c_attn": {"w": arr(E, 3 * E, k=b), "b": arr(3 * E, k=b)},
                                   "c_proj": {"w": arr(E, E, k=b + 1), "b": arr(E, k=b)}},
                          "mlp": {"c_fc": {"w": arr(E, 4 * E, k=b), "b": arr(4 * E, k=b)},
                                  "c_proj": {"w": arr(4 * E, E, k=b), "b": arr(E, k=b)}},
                          "ln_1": {"g": 1 + arr(E, k=b), "b": arr(E, k=b)},
                          "ln_2": {"g": 1 + arr(E, k=b + 2), "b": arr(E, k=b + 2)}}
                         for b in range(CFG["n_layers"])]}
    params = {k: v.astype(np.float32) if isinstance(v, np.ndarray) else v
              for k, v in params.items()}

    def assign(left, right):
        if left.shape != right.shape:
            raise ValueError(f"Shape mismatch. Left: {left.shape}, Right: {right.shape}")
        return torch.nn.Parameter(torch.tensor(right, dtype=torch.float32))

    model = GPT(CFG)
    model.pos_emb.weight = assign(model.pos_emb.weight, params["wpe"])
    model.tok_emb.weight = assign(model.tok_emb.weight, params["wte"])
    for b, blk in enumerate(params["blocks"]):
        att = model.trf_blocks[b].att
        q_w, k_w, v_w = np.split(blk["attn"]["c_attn"]["w"], 3, axis=-1)
        q_b, k_b, v_b = np.split(blk["attn"]["c_attn"]["b"], 3, axis=-1)
        att.W_query.weight = assign(att.W_query.weight, q_w.T)
        att.W_key.weight = assign(att.W_key.weight, k_w.T)
        att.W_value.weight = assign(att.W_value.weight, v_w.T)
        att.W_query.bias = assign(att.W_query.bias, q_b)
        att.W_key.bias = assign(att.W_key.bias, k_b)
        att.W_value.bias = assign(att.W_value.bias, v_b)
        att.out_proj.weight = assign(att.out_proj.weight, blk["attn"]["c_proj"]["w"].T)
        att.out_proj.bias = assign(att.out_proj.bias, blk["attn"]["c_proj"]["b"])
        ff = model.trf_blocks[b].ff.layers
        ff[0].weight = assign(ff[0].weight, blk["mlp"]["c_fc"]["w"].T)
        ff[0].bias = assign(ff[0].bias, blk["mlp"]["c_fc"]["b"])
        ff[2].weight = assign(ff[2].weight, blk["mlp"]["c_proj"]["w"].T)
        ff[2].bias = assign(ff[2].bias, blk["mlp"]["c_proj"]["b"])
        model.trf_blocks[b].norm1.scale = assign(model.trf_blocks[b].norm1.scale, blk["ln_1"]["g"])
        model.trf_blocks[b].norm1.shift = assign(model.trf_blocks[b].norm1.shift, blk["ln_1"]["b"])
        model.trf_blocks[b].norm2.scale = assign(model.trf_blocks[b].norm2.scale, blk["ln_2"]["g"])
        model.trf_blocks[b].norm2.shift = assign(model.trf_blocks[b].norm2.shift, blk["ln_2"]["b"])
    model.final_norm.scale = assign(model.final_norm.scale, params["g"])
    model.final_norm.shift = assign(model.final_norm.shift, params["b"])
    model.out_head.weight = assign(model.out_head.weight, params["wte"])
    try:
        assign(model.out_head.weight, params["wpe"])
    except ValueError as e:
        print(e)
    model.eval()
    print(type(model.tok_emb.weight).__name__, len(list(model.parameters())),
          len(model.state_dict()))
    idx = torch.tensor([_encode("the painter")])
    out = _generate(torch, model, idx, 5, C)
    print(out, model(out)[0, -1, :4])


def _finetune(torch, print):
    _, GPT = _classes(torch)
    cfg = dict(CFG, qkv_bias=False)
    model = GPT(cfg)
    _set_weights(torch, model)
    for p in model.parameters():
        p.requires_grad = False
    torch.manual_seed(123)
    model.out_head = torch.nn.Linear(cfg["emb_dim"], 2)
    _set_weights(torch, model.out_head)
    for p in model.trf_blocks[-1].parameters():
        p.requires_grad = True
    for p in model.final_norm.parameters():
        p.requires_grad = True
    print(sum(p.numel() for p in model.parameters() if p.requires_grad))
    pad = cfg["vocab_size"] - 1
    texts = ["every step forward", "the painter", "a new canvas brings", "closer to the"]
    enc = [_encode(t) for t in texts]
    longest = max(len(e) for e in enc)
    x = torch.tensor([e + [pad] * (longest - len(e)) for e in enc], dtype=torch.long)
    y = torch.tensor([1, 0, 1, 0], dtype=torch.long)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-2, weight_decay=0.1)
    for step in range(4):
        model.train()
        optimizer.zero_grad()
        logits = model(x)[:, -1, :]
        loss = torch.nn.functional.cross_entropy(logits, y)
        loss.backward()
        optimizer.step()
        with torch.no_grad():
            pred = torch.argmax(model(x)[:, -1, :], dim=-1)
        acc = (pred == y).sum().item() / y.shape[0]
        print(f"{loss.item():.5f} {acc * 100:.2f}%", model.tok_emb.weight.grad is None)

    # instruction finetuning's collate: pad with the end token, mask all but the first pad
    batch = [_encode("every step"), _encode("the painter a new"), _encode("canvas")]
    n = max(len(b) + 1 for b in batch)
    inputs, targets = [], []
    for item in batch:
        padded = item + [pad] + [pad] * (n - len(item) - 1)
        inp, tgt = torch.tensor(padded[:-1]), torch.tensor(padded[1:])
        mask = tgt == pad
        indices = torch.nonzero(mask).squeeze()
        if indices.numel() > 1:
            tgt[indices[1:]] = -100
        inputs.append(inp)
        targets.append(tgt)
    inputs, targets = torch.stack(inputs), torch.stack(targets)
    print(inputs, targets)
    lm = GPT(cfg)
    _set_weights(torch, lm)
    loss = torch.nn.functional.cross_entropy(lm(inputs).flatten(0, 1), targets.flatten())
    loss.backward()
    print(loss, lm.out_head.weight.grad[pad, :3])


def test_data_loader_attention_constants():
    assert_same_output(_data_and_attention)


def test_gpt_forward_and_generation():
    assert_same_output(_gpt_generate, rtol=1e-4, atol=1e-5)


def test_training_loop_save_and_load():
    assert_same_output(_train, rtol=2e-3, atol=1e-5)


def test_loading_numpy_weights():
    assert_same_output(_load_weights, rtol=1e-4, atol=1e-5)


def test_classifier_and_instruction_finetuning():
    assert_same_output(_finetune, rtol=1e-3, atol=1e-5)
