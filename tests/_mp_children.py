"""Functions run in the child processes of tests/test_multiprocessing.py (a module of
its own: a 'spawn' child imports only this, and tapegrad or torch by name, not the test
module and its torch oracle)."""
import importlib
import sys

import tapegrad as tg


def lib(name):
    return importlib.import_module(name)


def _classes(t):
    """mnist_hogwild's Net, shrunk (Linear -> ReLU -> Linear, logits), and a model of two
    independent heads (rank r trains heads[r] only: disjoint parameters)."""
    nn = t.nn

    class Net(nn.Module):
        def __init__(self, d_in=8, hidden=16, classes=3):
            super().__init__()
            self.fc1 = nn.Linear(d_in, hidden)
            self.fc2 = nn.Linear(hidden, classes)

        def forward(self, x):
            return self.fc2(t.relu(self.fc1(x)))

    class Heads(nn.Module):
        def __init__(self, d_in=8, classes=3):
            super().__init__()
            self.heads = nn.ModuleList([nn.Linear(d_in, classes) for _ in range(2)])

    return Net, Heads


# tapegrad's at the top level, so 'spawn' pickles these models by reference; torch's
# (run under 'fork' only, never pickled) come from _classes(torch)
Net, Heads = _classes(tg)
Net.__qualname__, Heads.__qualname__ = "Net", "Heads"


def train(rank, lib_name, model, dataset, hp):
    """mnist_hogwild's train(): seed by rank, a DataLoader, SGD on the model's (shared)
    parameters. hp: lr, momentum, batch_size, shuffle, seed, epochs, and `head` (train
    only model.heads[rank]: ranks then update disjoint parameters)."""
    t = lib(lib_name)
    t.manual_seed(hp["seed"] + rank)
    loader = t.utils.data.DataLoader(dataset, batch_size=hp["batch_size"],
                                     shuffle=hp["shuffle"])
    net = model.heads[rank] if hp.get("head") else model
    opt = t.optim.SGD(net.parameters(), lr=hp["lr"], momentum=hp["momentum"])
    model.train()
    for _ in range(hp["epochs"]):
        for x, y in loader:
            opt.zero_grad()
            out = t.nn.functional.log_softmax(net(x), dim=1)
            t.nn.functional.nll_loss(out, y).backward()
            opt.step()


def add_from_queue(rank, lib_name, inbox, outbox, amount):
    """Take tensors from `inbox`, change them in place, report what arrived."""
    t = lib(lib_name)
    x = inbox.get()
    shared = x.is_shared()
    with t.no_grad():  # x may be a Parameter
        x.add_(amount)
    outbox.put((type(x).__name__, shared, x.requires_grad, x.tolist()))


def fail(rank, message):
    if rank == 1 or message.startswith("all"):
        raise ValueError(f"{message} from rank {rank}")


def exit_with(rank, code):
    sys.exit(code)


def write_rank(rank, lib_name, t):
    """spawn(fn, args=(t,)): each rank writes its slot of a shared tensor."""
    lib(lib_name)
    t[rank] = rank + 1
