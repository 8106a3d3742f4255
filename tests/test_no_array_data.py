"""Library code reads a tensor's array through the `_data` slot, never `.data`.

Since `Tensor.data` became torch's (a new history-free tensor, tests/test_tensor_data.py),
`x.data` inside tapegrad would build a tensor per access and hand NumPy a tensor where it
expects an array. The `.data` attributes that remain are not tensors' (listed below with
why); a new one fails here."""
import io
import pathlib
import tokenize

ROOT = pathlib.Path(__file__).resolve().parents[1] / "tapegrad"

# (file, the name before `.data`): attributes named data that are not Tensor.data
ALLOWED = {
    ("data/mnist.py", "self"),        # torchvision's MNIST.data (the image tensor)
    ("train/mnist.py", "train"),      # ... read from an MNIST dataset
    ("train/mnist.py", "test"),
    ("train/mnist.py", "args"),       # the --data flag
    ("train/names.py", "args"),
    ("nn/utils/rnn.py", "self"),      # PackedSequence.data (torch's field)
    ("nn/utils/rnn.py", "sequence"),
    ("_tensor.py", "TensorBase"),      # the property itself
    ("viz/explain.py", "v"),          # Value.data (a float, micrograd's)
    ("viz/explain.py", "]"),          # a Value's children: ch[0].data
    ("core/shared_memory.py", "ctypes"),        # NumPy's arr.ctypes.data: an address
    ("_ckernels/__init__.py", "ctypes"),        # ... the C kernels' arguments
    ("utils/tensorboard/_summary.py", "arr"),   # an int16 ndarray's buffer, for wave
}


def _data_reads(path):
    src = path.read_text()
    toks = list(tokenize.generate_tokens(io.StringIO(src).readline))
    lines = src.splitlines()
    for i, t in enumerate(toks):
        if t.type == tokenize.NAME and t.string == "data" and i > 1 and toks[i - 1].string == ".":
            before = toks[i - 2].string
            line = lines[t.start[0] - 1].lstrip()
            if line.startswith(("from ", "import ")) or before in ("tapegrad", "utils", "tg",
                                                                     "torch", "."):
                continue                  # module paths: tapegrad.data, torch.utils.data
            yield t.start[0], before


def test_library_code_reads_arrays_through_the_slot():
    found = []
    for path in sorted(ROOT.rglob("*.py")):
        rel = path.relative_to(ROOT).as_posix()
        if rel == "value.py":             # the scalar engine: Value.data is its float
            continue
        for line, before in _data_reads(path):
            if (rel, before) not in ALLOWED:
                found.append(f"tapegrad/{rel}:{line}: {before}.data")
    assert not found, ("use `._data` for the array (or .detach().numpy() outside the "
                       "library):\n" + "\n".join(found))
