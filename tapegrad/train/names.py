"""`tapegrad train names`: character-level models that make up names.

Data: the census first names (~5,000) or surnames (~88,000) from the `names` package
(`--data first|last`), or any text file with one word per line (`--data FILE`);
lowercased, letters only, split 80/10/10 with a fixed seed. 27 symbols: `.` starts and
ends a word.

Models (`--model`):
  mlp  makemore's MLP: the previous --block-size characters (default 3) -> embedding 10
       -> Linear(30, 200, bias=False) (BatchNorm's shift is the bias) -> BatchNorm1d
       -> tanh -> Linear(200, 27); SGD, lr 0.1 decayed 10x at 75% of the steps; batch 32.
  gpt  a tiny GPT: token + position embeddings, 2 blocks of causal multi-head attention
       (fused scaled-dot-product primitive) and GELU MLP with LayerNorm and residual
       connections; AdamW with linear warmup then cosine decay; gradient clipping at 1.0.
       Each example is a whole word: input `.emma`, targets `emma.` (padding ignored).
Losses are mean cross-entropy in nats per character. A tqdm bar (stderr) shows the mean
loss since the last evaluation. Outputs in --out: metrics.json (config, the per-evaluation
lists step, train_loss, val_loss, seconds, and the final test_loss), curves.png (train
and val loss per evaluation), checkpoint.safetensors (rewritten at every evaluation with
the optimizer and generator states, so `--resume` continues a stopped run from its last
evaluation, in the checkpoint's own directory unless --out says otherwise), and
best.safetensors (the weights of the best validation loss so far: the final test loss
and the printed samples use them; `tapegrad sample` and `tapegrad eval` read either file).
BLAS runs on --threads threads (default 1), as in train mnist.
"""
import math
import os
import sys
import time

import numpy as np

import tapegrad as tg
from tapegrad import random as tg_random
from tapegrad.data.names import Names, build_windows, decode, encode
from tapegrad._alloc import keep_freed_memory
from tapegrad.nn import functional as F

from . import char_models, common, flags, memory, resume, rundir
from . import distributed as data_parallel
from .common import CLIError

NAME = "names"
HELP = "character-level name generator (makemore MLP or a tiny GPT)"


MAX_STEPS = 10 ** 9
MAX_SAMPLES = 1_000_000
MAX_THREADS = 4096
BEST = "best.safetensors"  # the weights of the best validation loss so far
DEFAULTS = {"mlp": {"steps": 20000, "lr": 0.1}, "gpt": {"steps": 4000, "lr": 2e-3}}


def add_arguments(p):
    p.add_argument("--model", default="mlp", choices=["mlp", "gpt"],
                   help="mlp (makemore MLP with BatchNorm) or gpt (tiny transformer); "
                        "default: mlp")
    p.add_argument("--data", default="first", metavar="first|last|FILE",
                   help="census first names, surnames, or a text file with one word per "
                        "line (default: first)")
    p.add_argument("--steps", type=flags.integer(1, MAX_STEPS), default=None, metavar="N",
                   help="optimisation steps (default: 20000 for mlp, 4000 for gpt)")
    p.add_argument("--batch-size", type=flags.integer(1, 2 ** 31 - 1), default=32,
                   metavar="B", help="examples per step (default: 32)")
    p.add_argument("--lr", type=flags.real(0, lo_open=True), default=None, metavar="LR",
                   help="peak learning rate (default: 0.1 for mlp, 2e-3 for gpt)")
    p.add_argument("--block-size", type=flags.integer(1, 10 ** 6), default=3, metavar="K",
                   help="mlp context length in characters (default: 3)")
    p.add_argument("--n-layer", type=flags.integer(1, 10 ** 4), default=2,
                   help="gpt blocks (default: 2)")
    p.add_argument("--n-embd", type=flags.integer(1, 2 ** 20), default=64,
                   help="gpt width, a multiple of --n-head (default: 64)")
    p.add_argument("--n-head", type=flags.integer(1, 2 ** 20), default=4,
                   help="gpt heads (default: 4)")
    p.add_argument("--eval-every", type=flags.integer(1, MAX_STEPS), default=None,
                   metavar="N", help="steps between train/val loss evaluations "
                                     "(default: steps/10)")
    p.add_argument("--seed", type=flags.seed, default=0,
                   help="seed, as torch.manual_seed takes it (default: 0)")
    p.add_argument("--out", default=None, metavar="DIR",
                   help="output directory (default: runs/names for the mlp, "
                        "runs/names-gpt for the gpt)")
    p.add_argument("--force", action="store_true",
                   help="write into --out even if it holds a run of another model")
    p.add_argument("--samples", type=flags.integer(0, MAX_SAMPLES), default=10, metavar="N",
                   help="names to print after training (default: 10)")
    p.add_argument("--no-progress", action="store_true",
                   help="no progress bar (the evaluation lines are still printed)")
    p.add_argument("--threads", type=flags.integer(0, MAX_THREADS), default=1, metavar="T",
                   help="BLAS threads for the matrix products (default: 1, fastest for "
                        "these small models on a busy machine, and reproducible; 0 = the "
                        "library default)")
    resume.add_argument(p, "evaluation (the checkpoint is written at every one)")
    data_parallel.add_arguments(p)


def check_sizes(kind, n_layer, n_embd, n_head, block, batch, n_windows):
    """Refuse model sizes too large for this machine before anything is allocated."""
    V = 27
    if kind == "mlp":
        params = V * 10 + block * 10 * 200 + 4 * 200 + 200 * V + V
        # the int64 context windows of the training split, a batch's activations
        nbytes = 4 * (4 * params) + 8 * n_windows * block + 4 * 4 * batch * (block * 10 + 1000)
        what = f"--block-size {block} with --batch-size {batch}"
    else:
        C, T, L = n_embd, block, n_layer
        params = V * C + T * C + L * (12 * C * C + 13 * C) + 2 * C + C * V
        acts = batch * T * L * (20 * C + 3 * n_head * T) + batch * T * V * 3
        nbytes = 4 * (4 * params + 2 * acts)
        what = (f"a gpt of --n-layer {L} --n-embd {C} ({params:,} parameters) with "
                f"--batch-size {batch}")
    memory.check_fits(nbytes, what)


def _names(which, prefix=None):
    """Names(which), its errors (unreadable, binary or empty file) as one CLIError that
    names the word list (and starts with `prefix` if given)."""
    try:
        return Names(which)
    except (RuntimeError, ValueError, OSError) as e:
        msg = str(e).splitlines()[0] if str(e) else type(e).__name__
        if repr(which) not in msg:
            msg = f"--data {which!r}: {msg}"
        raise CLIError((prefix or "") + msg) from None


def word_sequences(words, block_size):
    """GPT examples: X = '.' + word, Y = word + '.', padded to block_size (Y with -1)."""
    n = len(words)
    X = np.zeros((n, block_size), dtype=np.int64)
    Y = np.full((n, block_size), -1, dtype=np.int64)
    for i, w in enumerate(words):
        ix = encode(w)[:block_size - 1] if len(w) >= block_size else encode(w)
        X[i, 1:len(ix) + 1] = ix
        Y[i, :len(ix)] = ix
        Y[i, len(ix)] = 0
    return X, Y


def _arrays(data, kind, block_size, split):
    if kind == "mlp":
        return build_windows(data.splits[split], block_size)
    return word_sequences(data.splits[split], block_size)


def _loss(model, kind, xb, yb):
    logits = model(tg.from_numpy(xb))
    if kind == "mlp":
        return F.cross_entropy(logits, tg.from_numpy(yb))
    V = logits.shape[-1]
    return F.cross_entropy(logits.reshape(-1, V), tg.from_numpy(yb.reshape(-1)), ignore_index=-1)


def split_loss(model, kind, X, Y, batch=4096):
    """Mean loss per predicted character over a whole split, eval mode, no graph."""
    model.eval()
    total, count = 0.0, 0
    with tg.no_grad():
        for s in range(0, len(X), batch):
            xb, yb = X[s:s + batch], Y[s:s + batch]
            n = int((yb != -1).sum())
            total += float(_loss(model, kind, xb, yb).item()) * n
            count += n
    model.train()
    return total / max(count, 1)


def _lr_at(kind, step, steps, lr):
    if kind == "mlp":
        return lr if step < int(0.75 * steps) else lr * 0.1   # makemore's step decay
    warmup = max(1, min(200, steps // 10))
    if step < warmup:
        return lr * (step + 1) / warmup
    progress = (step - warmup) / max(1, steps - warmup)
    return lr * (0.1 + 0.9 * 0.5 * (1.0 + math.cos(math.pi * progress)))


def train(args):
    resume.refuse_with_ranks(args)
    code = data_parallel.maybe_relaunch(args)    # --nproc N: run this command on N ranks
    if code is not None:
        return code
    # As train mnist: freed NumPy buffers stay in the heap (tapegrad/_alloc.py), and BLAS
    # is pinned to --threads (default 1). Measured: the default gpt run took 28 min 50 s
    # wall on 2 busy cores with the library's threads; with one, about 4x less.
    keep_freed_memory()
    with common.blas_threads(getattr(args, "threads", 1)):
        return _train(args)


def _train(args):
    kind = args.model
    # `is None`, not `or`: an explicit --steps 0 must not mean "the default 20000"
    steps = args.steps if args.steps is not None else DEFAULTS[kind]["steps"]
    lr = args.lr if args.lr is not None else DEFAULTS[kind]["lr"]
    if steps <= 0 or args.batch_size <= 0 or args.block_size <= 0:
        raise CLIError("--steps, --batch-size and --block-size must be positive")
    if not (math.isfinite(lr) and lr > 0):
        raise CLIError(f"--lr must be a finite number > 0, got {lr}")
    if kind == "gpt" and args.n_embd % args.n_head:  # before loading any data
        raise CLIError(f"--n-head {args.n_head} must divide --n-embd {args.n_embd} (each "
                       f"head gets n_embd / n_head channels)")
    out = resume.out_dir(args, rundir.default_out(NAME, kind, "mlp"))
    ck = resume.load(args.resume, NAME) if getattr(args, "resume", None) else None
    data = _names(args.data)
    dp = data_parallel.setup()                   # one process, or this rank of the job
    block = args.block_size if kind == "mlp" else data.max_len + 1
    n_windows = sum(len(w) + 1 for w in data.splits["train"])
    check_sizes(kind, args.n_layer, args.n_embd, args.n_head, block, args.batch_size,
                n_windows)
    eval_every = args.eval_every or max(1, steps // 10)
    config = {"task": NAME, "model": kind, "data": args.data, "block_size": block,
              "steps": steps, "batch_size": args.batch_size, "lr": lr, "seed": args.seed,
              "n_layer": args.n_layer, "n_embd": args.n_embd, "n_head": args.n_head,
              "eval_every": eval_every, "world_size": dp.world_size,
              "global_batch_size": args.batch_size * dp.world_size}
    start = 0
    if ck is not None:
        # every value counts, --steps too: the learning-rate schedule depends on it
        resume.check_config(ck, args.resume, config)
        start = ck[resume.KEY]["counter"]
        if start >= steps:
            raise CLIError(f"{args.resume} has done all {steps} steps of its run; there is "
                           "nothing to resume")
    out_dir = None
    if dp.is_main:                               # rank 0 writes every file
        rundir.claim(out, NAME, kind, getattr(args, "force", False))
        out_dir = common.ensure_dir(out, "output directory")
    seed = flags.normalize_seed(args.seed)  # torch maps a negative seed likewise
    tg.manual_seed(seed)
    if kind == "mlp":
        model = char_models.build("mlp", data.vocab_size, block)
        opt = tg.optim.SGD(model.parameters(), lr=lr)
    else:
        model = char_models.build("gpt", data.vocab_size, block, n_layer=args.n_layer,
                                  n_embd=args.n_embd, n_head=args.n_head)
        opt = tg.optim.AdamW(model.parameters(), lr=lr, weight_decay=0.01,
                             betas=(0.9, 0.99))
    net = dp.wrap(model)                         # DistributedDataParallel when N > 1
    Xtr, Ytr = _arrays(data, kind, block, "train")
    Xva, Yva = _arrays(data, kind, block, "val")
    # each rank draws its own minibatches; the evaluation subsample uses the shared seed
    rng = np.random.default_rng(seed + 1000003 * dp.rank)
    eval_rng = rng if dp.world_size == 1 else np.random.default_rng(seed)
    generators = {"tapegrad": tg_random.default_generator, "numpy": rng}
    history = {"step": [], "train_loss": [], "val_loss": [], "seconds": []}
    elapsed = 0.0                                # training time of the run before --resume
    if ck is not None:
        common.load_weights(model, ck, args.resume, kind)
        resume.restore_optimizer(ck, args.resume, opt)
        resume.restore_rng(ck, args.resume, generators)
        history = {k: list(ck[resume.KEY]["history"].get(k, [])) for k in history}
        elapsed = ck[resume.KEY]["elapsed"]
    nparams = sum(p.numel() for p in model.parameters())
    batch = (f"{args.batch_size}" if dp.world_size == 1 else
             f"{args.batch_size} per rank x {dp.world_size} ranks = global batch "
             f"{args.batch_size * dp.world_size}")
    dp.print(f"{data}; model {kind} with {nparams:,} parameters; {steps} steps of batch "
             f"{batch}" + (f"; resuming after step {start} of {args.resume}"
                           if ck is not None else ""))
    ck_path = os.path.join(out_dir, "checkpoint.safetensors") if dp.is_main else None
    paths_ck = os.path.join(out, "checkpoint.safetensors")     # as the user gave --out
    best_path = os.path.join(out_dir, BEST) if dp.is_main else None
    # the best validation loss so far (a resumed run's history has it; its best.safetensors
    # is in the same directory)
    best = min(history["val_loss"]) if history["val_loss"] else math.inf
    t0 = time.perf_counter()
    model.train()
    it, bar = common.progress_bar(range(start, steps), steps, "steps",
                                  not getattr(args, "no_progress", False) and dp.is_main,
                                  initial=start)
    run_loss, run_n = 0.0, 0                     # the bar's mean loss since the last eval
    last = ({"path": args.resume, "n": start, "unit": "step"} if ck is not None else {})
    # the bar is closed (its line cleared) before an error or Ctrl-C message is printed
    with resume.note_on_interrupt(last), common.closing_bar(bar):
        for step in it:
            ix = rng.integers(0, len(Xtr), size=args.batch_size)
            loss = _loss(net, kind, Xtr[ix], Ytr[ix])
            value = float(loss.item())
            common.check_loss(value, f"step {step + 1}/{steps}", opt, lr=lr)
            opt.zero_grad()
            loss.backward()
            if kind == "gpt":
                tg.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            for group in opt.param_groups:
                group["lr"] = _lr_at(kind, step, steps, lr)
            opt.step()
            run_loss, run_n = run_loss + value, run_n + 1
            if bar is not None and (run_n == 1 or step % 10 == 0):
                bar.set_postfix(loss=f"{run_loss / run_n:.4f}", refresh=False)
            if (step + 1) % eval_every == 0 or step + 1 == steps:
                sub = eval_rng.choice(len(Xtr), size=min(len(Xtr), 20000), replace=False)
                tr = split_loss(model, kind, Xtr[sub], Ytr[sub])
                va = split_loss(model, kind, Xva, Yva)
                seconds = elapsed + time.perf_counter() - t0
                for k, v in (("step", step + 1), ("train_loss", tr), ("val_loss", va),
                             ("seconds", round(seconds, 3))):
                    history[k].append(v)
                line = (f"step {step + 1:6d}/{steps}: train loss {tr:.4f}  "
                        f"val loss {va:.4f}  ({seconds:.1f}s)")
                if bar is not None:              # above the bar, which stays at the bottom
                    bar.write(line, file=sys.stdout)
                else:
                    dp.print(line, flush=True)
                run_loss, run_n = 0.0, 0
                if dp.is_main:   # a stopped run resumes from its last evaluation
                    tg.save({"format": "tapegrad-train", "task": NAME, "config": config,
                             "model": model.state_dict(), "optimizer": opt.state_dict(),
                             resume.KEY: resume.state(step + 1, seconds, history,
                                                      generators)},
                            ck_path)
                    last.update(path=paths_ck, n=step + 1, unit="step")
                    if va < best:  # the weights `tapegrad sample` and the test loss use
                        best = va
                        tg.save({"format": "tapegrad-train", "task": NAME, "config": config,
                                 "model": model.state_dict(), "step": step + 1,
                                 "val_loss": va}, best_path)
    if not dp.is_main:                           # rank 0 writes every file
        return 0
    # the test loss and the samples come from the best-validation weights: a long run
    # that overfits (the default gpt did: test 2.0623, worse than the mlp's 2.0266) ends
    # with the model it had at its best evaluation
    best_ck = common.load_checkpoint(best_path, NAME)
    best_model = load_model(best_ck, best_path)
    Xte, Yte = _arrays(data, kind, block, "test")
    test = split_loss(best_model, kind, Xte, Yte) if len(Xte) else None
    paths = {"metrics": os.path.join(out, "metrics.json"),   # as the user gave --out
             "curves": os.path.join(out, "curves.png"),
             "checkpoint": os.path.join(out, "checkpoint.safetensors"),
             "best": os.path.join(out, BEST)}
    title = f"tapegrad names {kind} on {args.data} ({len(data.splits['train']):,} train words)"
    paths["curves"] = common.plot_panels(
        [("step", "cross-entropy loss (nats / character)", history["step"],
          [("train", history["train_loss"], "o-"), ("val", history["val_loss"], "s-")])],
        paths["curves"], title)
    total = history["seconds"][-1]
    metrics = {"config": config, "parameters": nparams, "world_size": dp.world_size,
               **history, "test_loss": test, "total_seconds": total, "files": paths,
               "best": {"step": best_ck["step"], "val_loss": best_ck["val_loss"],
                        "checkpoint": paths["best"]}}
    if ck is not None:
        metrics["resumed_from"] = {"checkpoint": args.resume, "step": start}
    common.write_json(paths["metrics"], metrics)
    if args.samples:
        words = char_models.sample(best_model, args.samples, block,
                                   tg.Generator().manual_seed(seed))
        print("samples: " + " ".join(decode(w) for w in words))
    print(f"final val loss {history['val_loss'][-1]:.4f}; best val loss "
          f"{best_ck['val_loss']:.4f} at step {best_ck['step']}"
          + (f", its test loss {test:.4f}" if test is not None else "")
          + f" in {total:.1f}s; wrote "
          + common.files_written([paths["metrics"], paths["curves"], paths["checkpoint"],
                                  paths["best"]]))
    return 0


def load_model(ck, path="checkpoint"):
    """Rebuild the checkpoint's model from its config and load its weights; a config or
    weights of another model kind (or a damaged one) is one CLIError naming the file."""
    kind = common.config_value(ck, path, "model", str)
    if kind not in ("mlp", "gpt"):
        raise common.bad_checkpoint(path, f"unknown names model {kind!r}")
    block = common.config_value(ck, path, "block_size", int, lo=1)
    kw = {}
    if kind == "gpt":
        kw = {k: common.config_value(ck, path, k, int, lo=1)
              for k in ("n_layer", "n_embd", "n_head")}
        if kw["n_embd"] % kw["n_head"]:
            raise common.bad_checkpoint(path, f"its config has n_embd={kw['n_embd']} not "
                                              f"divisible by n_head={kw['n_head']}")
    # Never allocate more than the file holds (a tiny file must not build a huge model).
    probe = {"mlp": lambda: 10 * 200 * block,
             "gpt": lambda: 12 * kw["n_layer"] * kw["n_embd"] ** 2}[kind]()
    if probe > common.state_numel(ck["model"]):
        raise common.bad_checkpoint(path, f"its config describes a larger {kind} than the "
                                          f"{common.state_numel(ck['model']):,} values it holds")
    model = char_models.build(kind, 27, block, **kw)
    common.load_weights(model, ck, path, kind)
    model.eval()
    return model


def model_from_checkpoint(ck, path):
    """The model of a loaded checkpoint `ck` (read from `path`), weights loaded."""
    return load_model(ck, path)


def evaluate(ck, args):
    """`tapegrad eval`: the loss on the test split of the data the model was trained on."""
    path = getattr(args, "checkpoint", "checkpoint")
    model = load_model(ck, path)
    cfg = ck["config"]
    data_name = common.config_value(ck, path, "data", str)
    data = _names(data_name, f"cannot evaluate {path}: ")
    X, Y = _arrays(data, cfg["model"], cfg["block_size"], "test")
    print(f"test loss {split_loss(model, cfg['model'], X, Y):.4f} "
          f"({cfg['model']} on {cfg['data']})")
    return 0


def sample_command(ck, n, seed, temperature, top_k, path="checkpoint"):
    """`tapegrad sample CHECKPOINT -n N`: print N generated names, one per line."""
    model = load_model(ck, path)
    gen = tg.Generator().manual_seed(flags.normalize_seed(seed))
    for w in char_models.sample(model, n, ck["config"]["block_size"], gen, temperature,
                                top_k):
        print(decode(w))
    return 0
