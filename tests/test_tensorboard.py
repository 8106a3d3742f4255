"""tapegrad.utils.tensorboard against torch.utils.tensorboard: the same calls (torch tensors
on torch's SummaryWriter, tapegrad tensors of the same values on ours) go to two
directories; the event files are read back with tensorboard's own reader and every
logged value must be the one torch logged (tags, steps, numbers, PNG pixels, WAV bytes,
hparams protos, the run directories)."""
import inspect
import io
import os
import subprocess
import sys

import numpy as np
import pytest
import torch
import torch.utils.tensorboard as torch_tb
from google.protobuf import json_format, text_format
from PIL import Image
from tensorboard.backend.event_processing.event_accumulator import EventAccumulator
from tensorboard.backend.event_processing.event_file_loader import LegacyEventFileLoader
from tensorboard.plugins.hparams.plugin_data_pb2 import HParamsPluginData
from tensorboard.plugins.projector.projector_config_pb2 import ProjectorConfig

import tapegrad as tg
import tapegrad.utils.tensorboard as tg_tb
from tapegrad.utils.tensorboard.writer import SummaryWriter as WriterFromWriterModule

LIBS = {"torch": (torch, torch_tb), "tapegrad": (tg, tg_tb)}


def _both(tmp_path, calls, **kw):
    """Run calls(writer, lib) with each library's SummaryWriter; the two log dirs."""
    dirs = {}
    for name, (lib, tb) in LIBS.items():
        d = tmp_path / name
        with tb.SummaryWriter(log_dir=str(d), **kw) as w:
            calls(w, lib)
        dirs[name] = d
    return dirs["torch"], dirs["tapegrad"]


def _event_files(d):
    return sorted(f for f in os.listdir(d) if f.startswith("events.out.tfevents."))


def _protos(d):
    """[(step, Summary.Value)] of the one event file directly in d."""
    files = _event_files(d)
    assert len(files) == 1, files
    return [(event.step, v) for event in LegacyEventFileLoader(str(d / files[0])).Load()
            for v in event.summary.value]


def _values(d):
    """[(step, Summary.Value as a dict)]: a readable diff when they differ."""
    return [(step, json_format.MessageToDict(v)) for step, v in _protos(d)]


def _same_values(d_torch, d_tg, expect_tags):
    want, got = _values(d_torch), _values(d_tg)
    assert [v["tag"] for _, v in want] == expect_tags  # the oracle logged what we think
    assert got == want
    return want


def _t(lib, a, requires_grad=False):
    a = np.asarray(a)
    return lib.tensor(a, requires_grad=requires_grad)


# -- the module itself -----------------------------------------------------------------

def test_module_exports_and_writer_submodule():
    assert set(tg_tb.__all__) == set(torch_tb.__all__) - {"RecordWriter"}
    assert WriterFromWriterModule is tg_tb.SummaryWriter
    import tensorboardX
    assert issubclass(tg_tb.SummaryWriter, tensorboardX.SummaryWriter)


def test_import_tapegrad_does_not_import_tensorboardx():
    code = ("import sys, tapegrad; assert 'tensorboardX' not in sys.modules; "
            "import tapegrad.utils.tensorboard as tb; from tapegrad.utils import tensorboard; "
            "assert tensorboard is tb and 'tensorboardX' in sys.modules; print('ok')")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         cwd=os.path.dirname(os.path.dirname(__file__)))
    assert out.stdout.strip() == "ok", out.stderr


@pytest.mark.parametrize("stmt", ["import tapegrad.utils.tensorboard",
                                  "from tapegrad.utils.tensorboard.writer import SummaryWriter"])
def test_missing_tensorboardx_raises_importerror_saying_how_to_install(stmt):
    code = ("import sys; sys.modules['tensorboardX'] = None\nimport tapegrad\ntry:\n"
            f"    {stmt}\nexcept ImportError as e:\n    print(type(e).__name__, e)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         cwd=os.path.dirname(os.path.dirname(__file__)))
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("ImportError ")
    assert 'pip install "tapegrad[tensorboard]"' in out.stdout
    assert "pip install tensorboardX" in out.stdout


def _params(fn):
    return [(p.name, p.default) for p in inspect.signature(fn).parameters.values()]


def test_signatures_are_torchs():
    names = [n for n, f in vars(torch_tb.SummaryWriter).items()
             if callable(f) and not n.startswith("_")] + ["__init__", "__enter__", "__exit__"]
    assert len(names) > 25
    for n in names:
        assert _params(getattr(tg_tb.SummaryWriter, n)) == _params(
            getattr(torch_tb.SummaryWriter, n)), n
    assert _params(tg_tb.FileWriter.__init__) == _params(torch_tb.FileWriter.__init__)


def test_add_graph_is_refused_in_one_line(tmp_path):
    w = tg_tb.SummaryWriter(log_dir=str(tmp_path))
    with pytest.raises(NotImplementedError, match="torch.jit") as e:
        w.add_graph(tg.nn.Linear(2, 2), tg.zeros(1, 2))
    assert "\n" not in str(e.value)
    w.close()


def test_default_log_dir_and_attributes(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    for _, tb in LIBS.values():
        w = tb.SummaryWriter(comment="_lr0.1")
        parts = w.get_logdir().split(os.sep)
        assert parts[0] == "runs" and len(parts) == 2 and parts[1].endswith("_lr0.1")
        assert w.log_dir == w.get_logdir() and os.path.isdir(w.log_dir)
        assert (w.max_queue, w.flush_secs, w.filename_suffix) == (10, 120, "")
        w.close()


# -- scalars ---------------------------------------------------------------------------

def test_scalars(tmp_path):
    def calls(w, lib):
        x = _t(lib, 1.25, requires_grad=True)
        w.add_scalar("Loss/train", 0.1, 0)  # Python float
        w.add_scalar("Loss/train", x * 2, 1)  # 0-d tensor with a grad_fn
        w.add_scalar("Loss/train", x, 2)  # leaf requiring grad
        w.add_scalar("Loss/val", np.float32(0.3), 5)  # numpy scalar
        w.add_scalar("Loss/val", np.float64(1 / 3), 6)
        w.add_scalar("acc", 7, 7)  # int
        w.add_scalar("one element", _t(lib, [[2.5]]), 8)  # squeezed; tag with a space
        w.add_scalar("new", _t(lib, 1 / 3, requires_grad=True), 9, new_style=True)
        w.add_scalar("new64", 1 / 3, 10, new_style=True, double_precision=True)
    want = _same_values(*_both(tmp_path, calls), expect_tags=[
        "Loss/train"] * 3 + ["Loss/val"] * 2 + ["acc", "one element", "new", "new64"])
    assert [s for s, _ in want] == [0, 1, 2, 5, 6, 7, 8, 9, 10]
    np.testing.assert_allclose([v["simpleValue"] for _, v in want[:7]],
                               [0.1, 2.5, 1.25, 0.3, 1 / 3, 7, 2.5], rtol=1e-7)


def test_scalar_of_several_elements_is_refused_as_torch(tmp_path):
    for lib, tb in LIBS.values():
        with tb.SummaryWriter(log_dir=str(tmp_path / lib.__name__)) as w:
            with pytest.raises(AssertionError, match="one element"):
                w.add_scalar("x", _t(lib, [1.0, 2.0]), 0)


def test_add_scalars_run_directories_and_values(tmp_path):
    def calls(w, lib):
        for step in range(3):
            w.add_scalars("loss/run", {"train": _t(lib, 1.0 / (step + 1), True),
                                       "val": 2.0 + step}, step)
        w.add_scalars("acc", {"top1": np.float32(0.5)}, 4)
    d_torch, d_tg = _both(tmp_path, calls)
    subdirs = sorted(p for p in os.listdir(d_torch) if (d_torch / p).is_dir())
    assert subdirs == ["acc_top1", "loss_run_train", "loss_run_val"]
    assert sorted(p for p in os.listdir(d_tg) if (d_tg / p).is_dir()) == subdirs
    for sub in subdirs:
        _same_values(d_torch / sub, d_tg / sub,
                     expect_tags=[sub.rsplit("_", 1)[0].replace("loss_", "loss/")] *
                     (1 if sub == "acc_top1" else 3))
    assert _values(d_tg) == _values(d_torch) == []  # nothing in the main run


# -- histograms ------------------------------------------------------------------------

def test_histograms(tmp_path):
    rng = np.random.default_rng(0)
    a = rng.standard_normal((10, 20)).astype(np.float32)
    ints = rng.integers(-5, 5, 300)

    def calls(w, lib):
        w.add_histogram("weights", _t(lib, a, requires_grad=True), 0)
        w.add_histogram("layer 1/grad", _t(lib, a * 1e-3), 1, bins="auto")
        w.add_histogram("ints", _t(lib, ints), 2, bins=10)
        w.add_histogram("max_bins", _t(lib, a), 3, max_bins=7)
        w.add_histogram("numpy", a.astype(np.float64), 4)
    want = _same_values(*_both(tmp_path, calls), expect_tags=[
        "weights", "layer 1/grad", "ints", "max_bins", "numpy"])
    h = want[0][1]["histo"]
    assert h["num"] == 200 and h["min"] == pytest.approx(a.min())
    assert sum(h["bucket"]) == 200


def test_histogram_raw(tmp_path):
    values = np.repeat(np.arange(5.0) + 0.5, [1, 2, 3, 4, 5])
    counts, limits = np.histogram(values, bins=np.arange(6.0))

    def calls(w, lib):
        w.add_histogram_raw("raw", min=_t(lib, values.min()), max=values.max(),
                            num=len(values), sum=_t(lib, values.sum()),
                            sum_squares=values.dot(values),
                            bucket_limits=_t(lib, limits[1:]),
                            bucket_counts=_t(lib, counts.astype(np.float64)), global_step=3)
        w.add_histogram_raw("lists", 0.0, 1.0, 2, 1.0, 1.0, [0.5, 1.0], [1, 1], 4)
    want = _same_values(*_both(tmp_path, calls), expect_tags=["raw", "lists"])
    assert want[0][1]["histo"]["bucket"] == [1, 2, 3, 4, 5]
    for lib, tb in LIBS.values():
        with tb.SummaryWriter(log_dir=str(tmp_path / "bad" / lib.__name__)) as w:
            with pytest.raises(ValueError, match="len"):
                w.add_histogram_raw("x", 0, 1, 1, 1, 1, [1.0, 2.0], [1], 0)


# -- images ----------------------------------------------------------------------------

def _pixels(value):
    img = value.image
    return (img.height, img.width, img.colorspace,
            np.asarray(Image.open(io.BytesIO(img.encoded_image_string))))


def test_images(tmp_path):
    rng = np.random.default_rng(1)
    chw = rng.random((3, 6, 5)).astype(np.float32)
    hwc = rng.random((6, 5, 3))
    u8 = rng.integers(0, 256, (1, 6, 5), dtype=np.uint8)
    out_of_range = (rng.random((3, 4, 4)) * 2 - 0.5).astype(np.float32)  # clipped
    batch = rng.random((5, 3, 4, 4)).astype(np.float32)

    def calls(w, lib):
        w.add_image("chw float", _t(lib, chw, requires_grad=True), 0)
        w.add_image("hwc", _t(lib, hwc), 1, dataformats="HWC")
        w.add_image("uint8", _t(lib, u8), 2)
        w.add_image("hw", _t(lib, chw[0]), 3, dataformats="HW")
        w.add_image("clip", _t(lib, out_of_range), 4)
        w.add_image("numpy", chw, 5)
        w.add_images("batch", _t(lib, batch), 6)
        w.add_images("batch nhwc", _t(lib, batch.transpose(0, 2, 3, 1)), 7, dataformats="NHWC")
        w.add_image_with_boxes("boxes", _t(lib, chw), _t(lib, [[0.0, 0.0, 3.0, 4.0]]), 8)
        w.add_image_with_boxes("boxes/rescaled", _t(lib, u8), _t(lib, [[1.0, 1.0, 2.0, 3.0]]),
                               9, rescale=2, labels=["cat"])
    d_torch, d_tg = _both(tmp_path, calls)
    _same_values(d_torch, d_tg, expect_tags=[
        "chw float", "hwc", "uint8", "hw", "clip", "numpy", "batch", "batch nhwc", "boxes",
        "boxes/rescaled"])
    want, got = _protos(d_torch), _protos(d_tg)
    for (_, a), (_, b) in zip(want, got):  # decoded too: the same size, colors and pixels
        for x, y in zip(_pixels(b), _pixels(a)):
            np.testing.assert_array_equal(x, y)
    h, w_, c, px = _pixels(want[0][1])
    assert (h, w_, c) == (6, 5, 3)
    np.testing.assert_array_equal(px, (chw.transpose(1, 2, 0) * 255).astype(np.uint8))
    _, _, c, px = _pixels(want[2][1])
    assert c == 3 and (px == u8[0][:, :, None]).all()
    _, _, _, px = _pixels(want[4][1])
    assert px.min() == 0 and px.max() == 255  # torch clips: no wrapped-around pixels
    assert _pixels(want[9][1])[3].shape == (12, 10, 3)  # rescale=2


def test_text_audio_and_tensor(tmp_path):
    sound = np.sin(np.linspace(0, 20, 400))[None, :] * 1.2  # (1, L), some clipped

    def calls(w, lib):
        w.add_text("notes", "lr = 0.1, **bold**", 0)
        w.add_text("notes", "second", 1)
        w.add_audio("sine", _t(lib, sound, requires_grad=True), 2, sample_rate=8000)
        w.add_audio("sine/default rate", _t(lib, sound[0] / 2), 3)
        w.add_tensor("t/float32", _t(lib, np.arange(6, dtype=np.float32).reshape(2, 3)), 4)
        w.add_tensor("t/float64", _t(lib, np.linspace(0, 1, 4), requires_grad=True), 5)
        w.add_tensor("t/int64", _t(lib, np.arange(-3, 3)), 6)
        w.add_tensor("t/int32", _t(lib, np.arange(4, dtype=np.int32)), 7)
        w.add_tensor("t/bool", _t(lib, [True, False]), 8)
        w.add_tensor("t/float16", _t(lib, np.array([0.5, -2.0], np.float16)), 9)
        w.add_tensor("t/0d", _t(lib, 3.5), 10)
    _same_values(*_both(tmp_path, calls), expect_tags=[
        "notes/text_summary", "notes/text_summary", "sine", "sine/default rate", "t/float32",
        "t/float64", "t/int64", "t/int32", "t/bool", "t/float16", "t/0d"])


def test_pr_curves(tmp_path):
    rng = np.random.default_rng(2)
    labels, preds = rng.integers(0, 2, 50), rng.random(50)
    curve = rng.random((6, 11))

    def calls(w, lib):
        w.add_pr_curve("pr", _t(lib, labels), _t(lib, preds, requires_grad=True), 0)
        w.add_pr_curve("pr/weighted", _t(lib, labels), _t(lib, preds), 1, num_thresholds=11,
                       weights=rng_weights)  # torch takes NumPy weights only
        w.add_pr_curve_raw("raw", *[_t(lib, row) for row in curve], global_step=2,
                           num_thresholds=11)
    rng_weights = np.linspace(0.5, 1.5, 50)
    _same_values(*_both(tmp_path, calls), expect_tags=["pr", "pr/weighted", "raw"])


def test_hparams(tmp_path):
    hp = {"lr": 0.01, "bsize": 32, "opt": "adam", "nesterov": True, "drop": None}

    def calls(w, lib):
        w.add_hparams(dict(hp, scale=_t(lib, [0.5])), {"hparam/accuracy": _t(lib, 0.75, True),
                                                      "hparam/loss": 0.25},
                      hparam_domain_discrete={"opt": ["adam", "sgd"], "bsize": [16, 32]},
                      run_name="trial 1", global_step=3)
        w.add_hparams({"lr": 0.1}, {"hparam/loss": 1.0}, run_name="trial2")
    d_torch, d_tg = _both(tmp_path, calls)
    for run in ("trial 1", "trial2"):
        _same_values(d_torch / run, d_tg / run, expect_tags=[
            "_hparams_/experiment", "_hparams_/session_start_info", "_hparams_/session_end_info"]
            + (["hparam/accuracy", "hparam/loss"] if run == "trial 1" else ["hparam/loss"]))
    steps_and_protos = _protos(d_tg / "trial 1")
    assert [s for s, _ in steps_and_protos] == [3] * 5
    data = [HParamsPluginData.FromString(v.metadata.plugin_data.content)
            for _, v in steps_and_protos[:2]]
    start = data[1].session_start_info.hparams
    assert (start["opt"].string_value, start["scale"].number_value) == ("adam", 0.5)
    domains = {i.name: [x.string_value or x.number_value for x in i.domain_discrete.values]
               for i in data[0].experiment.hparam_infos}
    assert domains["opt"] == ["adam", "sgd"] and domains["bsize"] == [16, 32]
    for lib, tb in LIBS.values():
        with tb.SummaryWriter(log_dir=str(tmp_path / "bad" / lib.__name__)) as w:
            with pytest.raises(TypeError):
                w.add_hparams([("lr", 1)], {})
            with pytest.raises(TypeError, match="hparam_domain_discrete"):
                w.add_hparams({"lr": 0.1}, {}, hparam_domain_discrete={"lr": ["a"]})
            with pytest.raises(ValueError, match="should be one of"):
                w.add_hparams({"lr": [0.1]}, {})


def test_embedding_files(tmp_path):
    rng = np.random.default_rng(3)
    mat = rng.standard_normal((6, 4)).astype(np.float32)
    imgs = rng.random((6, 3, 5, 5)).astype(np.float32)

    def calls(w, lib):
        w.add_embedding(_t(lib, mat, requires_grad=True), metadata=list("abcdef"),
                        label_img=_t(lib, imgs))
        w.add_embedding(_t(lib, mat[:, :2]), metadata=[[i, i * i] for i in range(6)],
                        metadata_header=["i", "square"], global_step=1, tag="a/b")
    d_torch, d_tg = _both(tmp_path, calls)
    files = sorted(os.path.relpath(os.path.join(r, f), d_torch)
                   for r, _, fs in os.walk(d_torch) for f in fs if "tfevents" not in f)
    assert files == sorted(os.path.relpath(os.path.join(r, f), d_tg)
                           for r, _, fs in os.walk(d_tg) for f in fs if "tfevents" not in f)
    assert len(files) == 6
    for f in files:
        a, b = d_torch / f, d_tg / f
        if f.endswith(".png"):
            np.testing.assert_array_equal(np.asarray(Image.open(b)), np.asarray(Image.open(a)))
        elif f.endswith(".pbtxt"):  # torch rewrites the whole config, tensorboardX appends
            assert text_format.Parse(b.read_text(), ProjectorConfig()) == text_format.Parse(
                a.read_text(), ProjectorConfig())
        else:
            assert b.read_text() == a.read_text()


def test_mesh_tensors(tmp_path):
    verts = np.array([[[1, 1, 1], [-1, -1, 1], [1, -1, -1], [-1, 1, -1]]], np.float32)
    colors = np.array([[[255, 0, 0], [0, 255, 0], [0, 0, 255], [255, 0, 255]]], np.int32)
    faces = np.array([[[0, 2, 3], [0, 3, 1], [0, 1, 2], [1, 3, 2]]], np.int32)

    def calls(w, lib):
        w.add_mesh("mesh", _t(lib, verts, requires_grad=True), colors=_t(lib, colors),
                   faces=_t(lib, faces), global_step=0)
    d_torch, d_tg = _both(tmp_path, calls)
    # tensorboardX names the parts mesh_1/2/3 (torch: mesh_VERTEX/FACE/COLOR) and keeps
    # its own plugin metadata; the logged tensors are the same
    want, got = _values(d_torch), _values(d_tg)
    assert [v["tag"] for _, v in want] == ["mesh_VERTEX", "mesh_FACE", "mesh_COLOR"]
    assert [v["tag"] for _, v in got] == ["mesh_1", "mesh_2", "mesh_3"]
    assert [v["tensor"] for _, v in got] == [v["tensor"] for _, v in want]


def test_video_is_logged_under_torchs_tag(tmp_path):
    vid = np.random.default_rng(4).random((1, 2, 3, 4, 4)).astype(np.float32)

    def calls(w, lib):
        w.add_video("clip one", _t(lib, vid, requires_grad=True), 0, fps=2)
    d_torch, d_tg = _both(tmp_path, calls)
    # the GIF needs moviepy (torch's writer wants moviepy < 2); compare what both wrote
    assert [v["tag"] for _, v in _values(d_tg)] == [v["tag"] for _, v in _values(d_torch)] \
        == ["clip one"]


# -- a training script -----------------------------------------------------------------

def _makemore_style(torch, work_dir):
    """makemore.py's logging: SummaryWriter(log_dir=args.work_dir), add_scalar in the
    loop, flush at each evaluation, close at the end."""
    SummaryWriter = torch.utils.tensorboard.SummaryWriter
    writer = SummaryWriter(log_dir=work_dir)
    torch.manual_seed(0)
    w = torch.tensor(np.linspace(-1, 1, 12, dtype=np.float32).reshape(4, 3), requires_grad=True)
    x = torch.tensor(np.linspace(0, 1, 20, dtype=np.float32).reshape(5, 4))
    y = torch.tensor([0, 1, 2, 1, 0])
    opt = torch.optim.AdamW([w], lr=0.1)
    for step in range(12):
        loss = torch.nn.functional.cross_entropy(x @ w, y)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        if step % 4 == 0:
            train_loss = loss
            test_loss = loss.item() + 0.5
            writer.add_scalar("Loss/train", train_loss, step)
            writer.add_scalar("Loss/test", test_loss, step)
            writer.flush()
    writer.close()


def test_makemore_style_script(tmp_path):
    runs = {}
    for name, (lib, _) in LIBS.items():
        work_dir = str(tmp_path / name / "out")
        _makemore_style(lib, work_dir)
        assert os.listdir(tmp_path / name) == ["out"]
        assert len(_event_files(work_dir)) == 1 and len(os.listdir(work_dir)) == 1
        acc = EventAccumulator(work_dir)
        acc.Reload()
        runs[name] = {tag: [(e.step, e.value) for e in acc.Scalars(tag)]
                      for tag in acc.Tags()["scalars"]}
    assert sorted(runs["torch"]) == ["Loss/test", "Loss/train"]
    assert [s for s, _ in runs["torch"]["Loss/train"]] == [0, 4, 8]
    assert runs["tapegrad"].keys() == runs["torch"].keys()
    for tag, want in runs["torch"].items():
        got = runs["tapegrad"][tag]
        assert [s for s, _ in got] == [s for s, _ in want]
        np.testing.assert_allclose([v for _, v in got], [v for _, v in want], rtol=1e-5)


def test_purge_step_and_reopen_after_close(tmp_path):
    for name, (_, tb) in LIBS.items():
        w = tb.SummaryWriter(log_dir=str(tmp_path / name), purge_step=5)
        w.add_scalar("a", 1.0, 5)
        w.close()
        w.add_scalar("a", 2.0, 6)  # a closed writer opens a second event file
        w.close()
    files = {name: _event_files(tmp_path / name) for name in LIBS}
    assert len(files["torch"]) == len(files["tapegrad"]) == 2

    def events(name):
        out = []
        for f in files[name]:
            for e in LegacyEventFileLoader(str(tmp_path / name / f)).Load():
                out.append((e.step, e.WhichOneof("what"),
                            e.session_log.status if e.HasField("session_log") else None))
        return out
    assert events("tapegrad") == events("torch")


def test_embedding_sprite_padding_is_zero_as_torch_writes_it(tmp_path):
    """tensorboardX pads the sprite's unused rows with uninitialized memory (random
    pixels: this suite saw it differ from torch's zeros); tapegrad writes them as zeros.
    Freed blocks of ones are left where that array is likely to be allocated."""
    rng = np.random.default_rng(4)
    imgs = rng.random((6, 3, 5, 5)).astype(np.float32)  # a 3x3 grid: the last row padded
    w = tg_tb.SummaryWriter(str(tmp_path))
    for _ in range(64):
        np.ones((15, 15, 3))  # (freed at once: their memory holds 1.0s)
    w.add_embedding(tg.tensor(rng.standard_normal((6, 4)).astype(np.float32)),
                    label_img=tg.tensor(imgs))
    w.close()
    sprite = np.asarray(Image.open(tmp_path / "00000" / "default" / "sprite.png"))
    assert sprite.shape == (15, 15, 3)
    assert (sprite[10:] == 0).all()
    assert (sprite[:5, :5] == np.uint8((imgs[0].transpose(1, 2, 0) * 255).clip(0, 255))).all()
