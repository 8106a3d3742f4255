"""The op declarations (ops/public.py) against what users see: every declared op is on
`tg` as its declared callable and on `Tensor` as its declared function, public callables
carry their own names (no `f`, no `<locals>`), and an op is known to at most 3 package
files (its rule, its declaration, its method line)."""
import inspect
import os
import re

import pytest

import tapegrad as tg
from tapegrad.ops import public

PKG = os.path.dirname(tg.__file__)


def test_every_export_is_on_tg_as_declared():
    wrong = [n for n, fn in public.EXPORTS.items() if getattr(tg, n, None) is not fn]
    assert not wrong, wrong


def test_every_method_is_on_tensor_as_declared():
    missing = [n for n in public.METHODS if not hasattr(tg.Tensor, n)]
    assert not missing, missing
    wrong = [n for n, fn in public.METHODS.items() if tg.Tensor.__dict__.get(n) is not fn]
    assert not wrong, wrong


def test_declared_out_forms_take_out():
    a, b = tg.tensor([1.0, 2.0]), tg.tensor([3.0, 4.0])
    out = tg.empty(2)
    assert tg.add(a, b, out=out) is out and out.tolist() == [4.0, 6.0]
    assert tg.abs(-a, out=out) is out and out.tolist() == [1.0, 2.0]
    assert tg.zeros(2, out=out) is out and out.tolist() == [0.0, 0.0]


def test_every_declared_op_has_a_family():
    assert set(public.EXPORTS) <= set(public.FAMILIES)
    assert set(public.METHODS) <= set(public.FAMILIES)
    fams = {m.rsplit(".", 1)[-1] for m in public.FAMILIES.values()}
    assert fams <= {"pointwise", "special", "comparison", "conversion", "reductions", "sorting",
                    "shape", "indexing", "products", "linalg", "random", "creation",
                    "spectral"}, fams
    assert public.FAMILIES["hypot"].endswith("pointwise")
    assert public.FAMILIES["cumsum"].endswith("reductions")
    assert public.FAMILIES["erf"].endswith("special")


def _public_callables():
    spaces = [("tg", vars(tg)), ("Tensor", vars(tg.Tensor)),
              ("F", vars(tg.nn.functional)), ("linalg", vars(tg.linalg))]
    for space, names in spaces:
        for n, obj in names.items():
            if n.startswith("_") or inspect.isclass(obj) or inspect.ismodule(obj):
                continue
            fn = getattr(obj, "__func__", obj)
            if callable(fn) and hasattr(fn, "__qualname__"):
                yield space, n, fn


def test_no_public_function_is_named_by_its_factory():
    bad = sorted(f"{space}.{n}: {fn.__qualname__}" for space, n, fn in _public_callables()
                 if "<locals>" in fn.__qualname__)
    assert not bad, f"{len(bad)} public callables named by a factory: {bad[:20]}"


def test_declared_ops_carry_their_torch_name():
    bad = [n for n, fn in public.EXPORTS.items()
           if getattr(fn, "__name__", n) not in (n, *_aliases_of(fn))]
    assert not bad, bad


def _aliases_of(fn):
    """The names declared for the same function (torch's aliases: subtract is sub)."""
    raw = getattr(fn, "__wrapped__", fn)
    return [n for n, f in public.EXPORTS.items() if getattr(f, "__wrapped__", f) is raw]


SAMPLE = ["hypot", "xlogy", "cumsum", "scatter_reduce", "erf", "addmv", "logaddexp", "cummax",
          "diagonal", "lerp", "atan2", "clamp", "tril", "index_add", "var_mean"]


def _files_naming(name):
    """Package files with a line that defines, declares or binds `name` as an op: its
    rule (`defop("name"` / `name = defop(`), its function (`def name(` / `name = ...`), its
    Tensor method line (`name = family.name`)."""
    pat = re.compile(rf"^\s*(def {name}\(|{name}(\s*=\s*\w+)*\s*=|@?defop\(\s*['\"]{name}['\"])",
                     re.M)
    hits = set()
    for d, _, files in os.walk(PKG):
        if os.path.relpath(d, PKG).split(os.sep)[0] == "masked":
            continue  # torch.masked's ops: other ops of the same names (masked.cumsum)
        for f in files:
            if f.endswith(".py"):
                p = os.path.join(d, f)
                with open(p, encoding="utf-8") as fh:
                    if pat.search(fh.read()):
                        hits.add(os.path.relpath(p, PKG))
    return hits


@pytest.mark.parametrize("name", SAMPLE)
def test_an_op_is_known_to_at_most_three_package_files(name):
    files = _files_naming(name)
    assert files, f"{name}: no definition found (the search is broken)"
    assert len(files) <= 3, f"{name}: {sorted(files)}"
