"""`--monitor` as a user meets it (issue 17, item 4): every plot has a title, legends
name the layers (`2 (ReLU)`, not `2`), the activation rows of the summary sit under a
header of their own columns, and the final "wrote" line lists the monitor's PNGs."""
import os

import matplotlib
import torch  # noqa: F401  (the suite's oracle; a missing torch fails loudly)

import tapegrad as tg
from _cli_fixtures import run
from tapegrad import nn
from tapegrad.utils.grad_monitor import GradMonitor

matplotlib.use("Agg")


def _monitor():
    tg.manual_seed(0)
    model = nn.Sequential(nn.Flatten(), nn.Linear(6, 5), nn.ReLU(), nn.Linear(5, 4),
                          nn.Tanh(), nn.Linear(4, 2))
    opt = tg.optim.SGD(model.parameters(), lr=0.1)
    mon = GradMonitor(model, opt, auto_step=True, warn=False)
    for _ in range(3):
        opt.zero_grad()
        model(tg.randn(8, 6)).pow(2).mean().backward()
        opt.step()
    return mon


def test_plots_have_titles_and_layer_names(tmp_path, monkeypatch):
    import matplotlib.pyplot as plt
    mon = _monitor()
    seen = []
    real = plt.Figure.savefig

    def savefig(fig, path, *a, **k):
        ax = fig.axes[0]
        seen.append((os.path.basename(path), ax.get_title(),
                     [t.get_text() for t in ax.get_legend().get_texts()]))
        return real(fig, path, *a, **k)
    monkeypatch.setattr(plt.Figure, "savefig", savefig)
    mon.plot(str(tmp_path / "h"), title="demo")
    by = {name: (title, legend) for name, title, legend in seen}
    assert set(by) == {"h_grad_norm.png", "h_update_ratio.png", "h_activations.png"}
    for title, _ in by.values():
        assert title.startswith("demo: ") and len(title) > len("demo: ") + 10, title
    assert by["h_activations.png"][1] == ["2 (ReLU)", "4 (Tanh)"]
    assert by["h_grad_norm.png"][1] == [n for n, _ in mon.model.named_parameters()]


def test_summary_activation_rows_under_their_own_header():
    lines = _monitor().summary().splitlines()
    assert lines[0].split() == ["parameter", "shape", "grad", "norm", "update/data"]
    k = next(i for i, ln in enumerate(lines) if ln.startswith("activation"))
    assert k == 1 + 6                                  # after the 6 parameter rows
    assert lines[k].split() == ["activation", "measure", "fraction"]
    relu, tanh = lines[k + 1], lines[k + 2]
    assert relu.split()[:3] == ["2", "(ReLU)", "dead"] and relu.endswith("%")
    assert tanh.split()[:3] == ["4", "(Tanh)", "saturated"]
    # the values sit under their column headers (right-aligned to the same end)
    assert lines[k].index("measure") + len("measure") == relu.index("dead") + len("dead")
    assert lines[k].index("fraction") + len("fraction") == len(relu)


def test_train_mnist_monitor_lists_the_pngs(tmp_path, capsys):
    out = tmp_path / "o"
    assert run(["train", "mnist", "--data", "sample", "--epochs", "1", "--hidden", "8",
                "--batch-size", "500", "--no-progress", "--monitor", "--out", out]) == 0
    last = capsys.readouterr().out.strip().splitlines()[-1]
    pngs = [str(out / f"grad_health_{k}.png") for k in ("grad_norm", "update_ratio",
                                                       "activations")]
    assert last.endswith("wrote " + ", ".join([str(out / "metrics.json"),
                                              str(out / "curves.png"), *pngs,
                                              str(out / "checkpoint.safetensors")])), last
    assert all(os.path.exists(p) for p in pngs)

