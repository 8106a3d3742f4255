"""The nested structure of a checkpoint as a JSON tree of typed nodes, both ways.

    {"t": "tensor", "a": NAME}                 Tensor; NAME is its key in the file;
                                               "rg": true when it requires grad
    {"t": "ndarray", "a": NAME}                plain NumPy array
    either may carry "is": NAME0 when it is the very object saved earlier as NAME0
    {"t": "int", "v": 3}  {"t": "bool", "v": true}  {"t": "str", "v": "mlp"}
    {"t": "float", "v": "0.1"}                 repr string, so inf / nan survive strict JSON
    {"t": "none"}
    {"t": "list"|"tuple", "items": [NODE, ...]}
    {"t": "dict", "items": [[KEY, NODE], ...]}   KEY: a JSON string for a str key, else a
                                                 scalar node (an optimizer's int
                                                 parameter ids stay ints);
                                                 "odict" for an OrderedDict (state_dict()),
                                                 "counter" for a collections.Counter
    {"t": "size", "items": [INT NODE, ...]}    torch.Size (tapegrad.Size)
    {"t": "set", "items": [NODE, ...]}         a set (members in the order of their repr)
    {"t": "bytes"|"bytearray"|"complex"|"dtype"|"device", "v": ...}   see `leaves`
    {"t": "dataclass"|"namespace", "module": M, "name": QUALNAME,
     "items": [[ATTRIBUTE, NODE], ...]}        a dataclass instance / argparse.Namespace:
                                               see `objects` (what load may rebuild)

The nodes after "odict" came later, in the same format version 2: a reader that predates
them refuses a file holding one ("unknown node type"), so no reader misreads them, and
files without them are unchanged. The old `.npz` format (`legacy`) never held them.

Both directions walk the tree with an explicit stack (no recursion: a deep nest is a
clear error, never a RecursionError). Decoding is strict: every node must have exactly
its fields with exactly their JSON types, so a damaged or hand-made tree is refused
(`TreeError`) instead of being coerced (`"false"` is not a bool, `1e999` not a float).
"""
import json
from collections import Counter, OrderedDict

import numpy as np

from .._tensor import Size, Tensor
from . import leaves, objects
from .errors import TreeError

MAX_DEPTH = 64  # container levels; a checkpoint with optimizer state needs ~5
_SCALAR_FIELDS = {"int": {"v"}, "bool": {"v"}, "str": {"v"}, "float": {"v"}, "none": set()}
_SCALAR_TYPES = {"int": int, "bool": bool, "str": str, "float": str}


# ---- encoding -------------------------------------------------------------------------
def _scalar_node(obj):
    """The node of a Python scalar, or None if `obj` is not one."""
    # NOTE: bool before int (bool is a subclass of int).
    if obj is None:
        return {"t": "none"}
    if isinstance(obj, (bool, np.bool_)):
        return {"t": "bool", "v": bool(obj)}
    if isinstance(obj, (int, np.integer)):
        return {"t": "int", "v": int(obj)}
    if isinstance(obj, (float, np.floating)):
        return {"t": "float", "v": repr(float(obj))}
    if isinstance(obj, str):
        return {"t": "str", "v": obj}
    return None


def _dict_pairs(value):
    pairs = []
    for k in value:
        knode = k if type(k) is str else _scalar_node(k)
        if knode is None:
            raise TypeError(f"tg.save: dict keys must be str, int, float, bool or "
                            f"None, got {type(k).__name__} (key {k!r})")
        pairs.append([knode, None])
    return pairs


def _refuse(value, path):
    where = ".".join(path) or "the top level"
    if callable(getattr(value, "state_dict", None)):
        # torch.save(optimizer) pickles the object with its functions and references; a
        # tapegrad file holds data (and nn.Modules, rebuilt from their state) only.
        raise TypeError(f"tg.save: cannot save a whole {type(value).__name__} object (at "
                        f"{where}): a tapegrad checkpoint holds data, not code. Save its "
                        "state dict instead, torch.save(model.state_dict(), path), and load "
                        "it into a new model with model.load_state_dict(torch.load(path))")
    raise TypeError(f"tg.save: cannot save an object of type {type(value).__name__} "
                    f"(at {where}); supported: Tensor, numpy array, int, float, "
                    "complex, bool, str, bytes, None, dtype, device, torch.Size, lists, "
                    "tuples, sets and dicts (OrderedDict, Counter) of them, dataclass "
                    "instances, argparse.Namespace and nn.Module objects")


def _part(key):
    return key if isinstance(key, str) else repr(key) if isinstance(key, float) else str(key)


def encode(obj, check_array):
    """Return (root node, {name: ndarray}, {name: source object}).

    Names are the dotted paths of the tensors in the nest, so a flat state dict keeps
    torch's key names exactly (`{"0.weight": t}` is stored as "0.weight"). A repeated
    name (e.g. keys "a.b" and {"a": {"b": ...}}) gets a "#n" suffix."""
    arrays, sources, first_name = {}, {}, {}
    holder = [None]
    stack = [(obj, holder, 0, (), 0)]
    while stack:
        value, parent, slot, path, depth = stack.pop()
        if depth > MAX_DEPTH:
            raise ValueError(f"tg.save: the object is nested deeper than {MAX_DEPTH} levels "
                             "(or contains itself)")
        if isinstance(value, (Tensor, np.ndarray)):
            arr = value._data if isinstance(value, Tensor) else value
            check_array(arr, ".".join(path) or "<root>")
            name = ".".join(path) or "tensor"
            if name.startswith("__") or name in arrays:  # __metadata__ is reserved
                n = 1
                while f"{name}#{n}" in arrays:
                    n += 1
                name = f"{name}#{n}"
            arrays[name], sources[name] = arr, value
            node = {"t": "tensor" if isinstance(value, Tensor) else "ndarray", "a": name}
            if isinstance(value, Tensor) and value.requires_grad:
                node["rg"] = True
            if isinstance(value, Tensor) and objects.is_parameter(value):
                node["p"] = True  # an nn.Parameter loads back as one, as with torch
            if id(value) in first_name:
                node["is"] = first_name[id(value)]
            else:
                first_name[id(value)] = name
            parent[slot] = node
            continue
        node = _scalar_node(value)
        if node is None:
            node = leaves.encode(value)
        if node is not None:
            parent[slot] = node
            continue
        if isinstance(value, (list, tuple)):
            items = [None] * len(value)
            kind = "size" if isinstance(value, Size) else \
                "tuple" if isinstance(value, tuple) else "list"
            parent[slot] = {"t": kind, "items": items}
            for i in reversed(range(len(value))):  # reversed: popped in order
                stack.append((value[i], items, i, path + (str(i),), depth + 1))
            continue
        if type(value) is set:  # torch's weights_only load accepts sets (not frozensets)
            # in a fixed order (by repr: str hashes change per process), so the same set
            # writes the same file
            members = sorted(value, key=repr)
            items = [None] * len(members)
            parent[slot] = {"t": "set", "items": items}
            for i in reversed(range(len(members))):
                stack.append((members[i], items, i, path + (str(i),), depth + 1))
            continue
        if isinstance(value, dict):
            pairs = _dict_pairs(value)
            kind = "odict" if isinstance(value, OrderedDict) else \
                "counter" if isinstance(value, Counter) else "dict"
            parent[slot] = {"t": kind, "items": pairs}
            for pair, (k, v) in reversed(list(zip(pairs, value.items()))):
                stack.append((v, pair, 1, path + (_part(k),), depth + 1))
            continue
        found = objects.describe(value, ".".join(path) or "the top level")
        if found is None:
            _refuse(value, path)
        kind, module, qualname, attrs = found
        pairs = [[k, None] for k in attrs]
        parent[slot] = {"t": kind, "module": module, "name": qualname, "items": pairs}
        for pair, (k, v) in reversed(list(zip(pairs, attrs.items()))):
            stack.append((v, pair, 1, path + (k,), depth + 1))
    return holder[0], arrays, sources


# ---- strict JSON ----------------------------------------------------------------------
def _reject_constant(name):
    raise TreeError(f"non-standard JSON constant {name}")


def _no_duplicates(pairs):
    out = dict(pairs)
    if len(out) != len(pairs):
        keys = [k for k, _ in pairs]
        raise TreeError(f"duplicate JSON key {next(k for k in keys if keys.count(k) > 1)!r}")
    return out


def parse_json(text):
    """json.loads, but NaN/Infinity and duplicate keys are errors, and a document nested
    too deeply for json's C parser is a TreeError, not a RecursionError. (decode then
    applies the real, much lower, MAX_DEPTH.)"""
    try:
        return json.loads(text, parse_constant=_reject_constant,
                          object_pairs_hook=_no_duplicates)
    except RecursionError:
        raise TreeError(f"nested deeper than the limit of {MAX_DEPTH} levels (the JSON "
                        "parser ran out of stack)") from None
    except ValueError as e:  # JSONDecodeError, >4300-digit ints
        raise TreeError(f"invalid JSON ({e})") from None


# ---- decoding -------------------------------------------------------------------------
def _fields(node, allowed, where):
    if not isinstance(node, dict) or not isinstance(node.get("t"), str):
        raise TreeError(f"{where}: expected a node object, got {str(node)[:60]!r}")
    extra = set(node) - allowed - {"t"}
    if extra:
        raise TreeError(f"{where}: unexpected field(s) {sorted(extra)} in a {node['t']!r} node")


def _scalar(node, where):
    t = node.get("t") if isinstance(node, dict) else None
    if t not in _SCALAR_FIELDS:
        return False, None
    _fields(node, _SCALAR_FIELDS[t], where)
    if t == "none":
        return True, None
    if "v" not in node:
        raise TreeError(f"{where}: {t!r} node without a value")
    v = node["v"]
    # type(...) is, not isinstance: True is not an int here, and "false" not a bool.
    if type(v) is not _SCALAR_TYPES[t]:
        raise TreeError(f"{where}: {t!r} node holds {type(v).__name__} {str(v)[:40]!r}")
    if t == "float":
        return True, leaves.parse_float(v, where)
    return True, v


def _to_size(items, where):
    if any(type(n) is not int for n in items):
        raise TreeError(f"{where}: a size holds {str(items)[:60]}, not ints")
    return Size(items)


def _to_set(items, where):
    try:
        return set(items)
    except TypeError:  # an unhashable member (a list): no writer makes that
        raise TreeError(f"{where}: a set with an unhashable member") from None


def decode(root, take, legacy=False, make_object=None):
    """Rebuild the object. `take(name, node, where)` returns the array stored under
    `name` (and may check the node's legacy dtype/shape fields).
    `make_object(kind, module, qualname, where)` finds the class of an object node
    (dataclass, Namespace, Module: `objects.find_class`) once the whole tree is checked,
    outermost first, so the outermost refused class is named, as torch's unpickler
    does; it returns `build(attrs)`, called once the attributes are rebuilt. Without it (the legacy
    format) such nodes are unknown."""
    tensor_fields = {"a", "rg", "is"} | ({"dtype", "shape"} if legacy else {"p"})
    array_fields = {"a", "is"} | ({"dtype", "shape"} if legacy else set())
    newer = set() if legacy else {"size", "counter", "set"} | leaves.TYPES | objects.KINDS
    made, used = {}, set()
    # (parent, slot, finish): values made from their children once those are complete.
    holder, finish, classes = [None], [], []
    stack = [(root, holder, 0, 0, "root")]
    while stack:
        node, parent, slot, depth, where = stack.pop()
        if depth > MAX_DEPTH:
            raise TreeError(f"nested deeper than the limit of {MAX_DEPTH} levels")
        ok, value = _scalar(node, where)
        if ok:
            parent[slot] = value
            continue
        _fields(node, {"items", "v", "module", "name"} | tensor_fields, where)
        t = node["t"]
        if t in leaves.TYPES and t in newer:
            _fields(node, {"v"}, where)
            parent[slot] = leaves.decode(node, where)
            continue
        if t in objects.KINDS and t in newer and make_object is not None:
            _fields(node, {"module", "name", "items"}, where)
            module, qualname, items = node.get("module"), node.get("name"), node.get("items")
            objects.check_name(module, qualname, where)
            if type(items) is not list:
                raise TreeError(f"{where}: {t} node without an items list")
            attrs, todo = {}, []
            for i, pair in enumerate(items):
                if type(pair) is not list or len(pair) != 2 or type(pair[0]) is not str:
                    raise TreeError(f"{where}: attribute {i} is not a [name, value] pair")
                if pair[0] in attrs:
                    raise TreeError(f"{where}: duplicate attribute {pair[0][:40]!r}")
                attrs[pair[0]] = None
                todo.append((pair[1], attrs, pair[0], depth + 1, f"{where}.{pair[0]}"))
            parent[slot] = attrs
            builder = [t, module, qualname, where]  # its class is found after the walk
            classes.append(builder)
            finish.append((parent, slot, lambda a, b=builder: b[0](a)))
            stack.extend(reversed(todo))
            continue
        if t in ("tensor", "ndarray"):
            _fields(node, tensor_fields if t == "tensor" else array_fields, where)
            name = node.get("a")
            if type(name) is not str:
                raise TreeError(f"{where}: {t} node without a tensor name")
            if name in used:
                raise TreeError(f"{where}: tensor {name!r} is used twice")
            used.add(name)
            arr = take(name, node, where)
            rg = node.get("rg", False)
            if type(rg) is not bool:
                raise TreeError(f"{where}: requires_grad flag {str(rg)[:20]!r} is not a bool")
            if "is" in node:
                same = made.get(node["is"]) if type(node["is"]) is str else None
                if same is None or (t == "tensor") != isinstance(same, Tensor):
                    raise TreeError(f"{where}: 'is' names {str(node['is'])[:40]!r}, which is "
                                    f"not an earlier {t}")
                parent[slot] = same
                continue
            param = node.get("p", False)
            if param is not False and (param is not True or t != "tensor"):
                raise TreeError(f"{where}: parameter flag {str(param)[:20]!r} is not true")
            if param:
                value = objects.make_parameter(arr, rg)
            elif t == "tensor":
                value = Tensor._of(arr)
                if rg:
                    if arr.dtype.kind not in "fc":  # torch's rule; named here, not bare
                        raise TreeError(f"{where}: tensor {name[:60]!r} of dtype {arr.dtype} "
                                        "is marked as requiring grad, but only Tensors of "
                                        "floating point dtype can require gradients")
                    value.requires_grad_(True)
            else:
                value = arr
            made[name] = parent[slot] = value
            continue
        items = node.get("items")
        if t in ("list", "tuple") or (t in ("size", "set") and t in newer):
            _fields(node, {"items"}, where)
            if type(items) is not list:
                raise TreeError(f"{where}: {t} node without an items list")
            out = [None] * len(items)
            parent[slot] = out
            if t == "tuple":
                finish.append((parent, slot, tuple))
            elif t == "size":
                finish.append((parent, slot, lambda v, w=where: _to_size(v, w)))
            elif t == "set":
                finish.append((parent, slot, lambda v, w=where: _to_set(v, w)))
            for i in reversed(range(len(items))):
                stack.append((items[i], out, i, depth + 1, f"{where}[{i}]"))
            continue
        if t in ("dict", "odict") or (t == "counter" and t in newer):
            _fields(node, {"items"}, where)
            if type(items) is not list:
                raise TreeError(f"{where}: dict node without an items list")
            out = OrderedDict() if t == "odict" else Counter() if t == "counter" else {}
            todo = []
            for i, pair in enumerate(items):
                if type(pair) is not list or len(pair) != 2:
                    raise TreeError(f"{where}: dict item {i} is not a [key, value] pair")
                ok, key = (True, pair[0]) if type(pair[0]) is str else \
                    _scalar(pair[0], f"{where} key {i}")
                # Format 2 writes str keys bare; format 1 wrote them as str nodes.
                if not ok or (type(pair[0]) is not str and type(key) is str and not legacy):
                    raise TreeError(f"{where}: dict key {i} is not a scalar node")
                if key in out:
                    raise TreeError(f"{where}: duplicate dict key {key!r}")
                out[key] = None
                todo.append((pair[1], out, key, depth + 1, f"{where}[{key!r}]"))
            parent[slot] = out
            stack.extend(reversed(todo))
            continue
        raise TreeError(f"{where}: unknown node type {t[:40]!r}")
    # Every node is well formed: now find the classes, in the order the walk met them,
    # so the outermost refused class is the one named, as torch's unpickler does.
    for builder in classes:
        builder[0] = make_object(*builder)
    # Children were made after their parents, so finishing in reverse order freezes
    # inner tuples (and builds inner objects) before the containers that hold them.
    for parent, slot, make in reversed(finish):
        parent[slot] = make(parent[slot])
    return holder[0], used
