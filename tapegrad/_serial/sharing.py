"""Memory shared between saved arrays (tied weights, a tensor and its views).

safetensors refuses tensors that share memory, and torch.save keeps the sharing. Here
every key still gets its own full copy in the file (so `safetensors.torch.load_file`
plus `load_state_dict(strict=True)` works in PyTorch), and the metadata carries a
table that lets `tg.load` rebuild the sharing:

    [{"nbytes": SPAN, "members": [[NAME, BYTE_OFFSET, [BYTE_STRIDES...]], ...]}, ...]

one entry per group of arrays whose memory overlaps. On load a SPAN-byte buffer is made,
each member's stored values are written through its view, and every member must read
back exactly its stored bytes (two copies that disagree are corruption).

Not kept (each array comes back as its own copy): arrays that share memory but differ in
dtype, and groups that use only a small part of their span (`SPAN` > the members'
total size), because loading must never allocate more than the file holds.
"""
import numpy as np


class SharingError(Exception):
    """The sharing table is malformed; the caller names the file."""


def _extent(arr):
    """(lowest, one past highest) byte address that `arr` touches."""
    lo = hi = arr.__array_interface__["data"][0]
    for n, s in zip(arr.shape, arr.strides):
        if s < 0:
            lo += (n - 1) * s
        else:
            hi += (n - 1) * s
    return lo, hi + arr.itemsize


def _root(arr):
    while isinstance(arr.base, np.ndarray):
        arr = arr.base
    return id(arr.base if arr.base is not None else arr)


def find_groups(arrays):
    """The sharing table for {name: ndarray} (only groups of two or more members)."""
    by_root = {}
    for name, arr in arrays.items():
        if arr.size:
            by_root.setdefault(_root(arr), []).append((*_extent(arr), name))
    table = []
    for members in by_root.values():
        members.sort()
        component, end = [], None
        for lo, hi, name in members + [(None, None, None)]:
            if component and (lo is None or lo >= end):
                table.extend(_group(component, arrays))
                component = []
            if lo is not None:
                end = hi if not component else max(end, hi)
                component.append((lo, hi, name))
    return table


def _group(component, arrays):
    if len(component) < 2:
        return []
    names = [name for _, _, name in component]
    if len({arrays[n].dtype.str for n in names}) != 1:
        return []
    start = min(lo for lo, _, _ in component)
    span = max(hi for _, hi, _ in component) - start
    if span > sum(arrays[n].nbytes for n in names):
        return []
    return [{"nbytes": span,
             "members": [[n, arrays[n].__array_interface__["data"][0] - start,
                          list(arrays[n].strides)] for n in names]}]


def _int(v, what):
    if type(v) is not int:
        raise SharingError(f"{what} {str(v)[:30]!r} is not an integer")
    return v


def rebuild(table, arrays):
    """Replace the members of each group in {name: ndarray} by views of one buffer."""
    if type(table) is not list:
        raise SharingError("the sharing table is not a list")
    seen = set()
    for g, group in enumerate(table):
        if type(group) is not dict or set(group) != {"nbytes", "members"}:
            raise SharingError(f"sharing group {g} is malformed")
        members, span = group["members"], _int(group["nbytes"], f"group {g} size")
        if type(members) is not list or len(members) < 2:
            raise SharingError(f"sharing group {g} has fewer than two members")
        views = []
        for m in members:
            if type(m) is not list or len(m) != 3 or type(m[0]) is not str:
                raise SharingError(f"sharing group {g}: malformed member {str(m)[:60]!r}")
            name, offset, strides = m
            if name not in arrays or name in seen:
                raise SharingError(f"sharing group {g}: tensor {name[:60]!r} is unknown or "
                                   "in two groups")
            seen.add(name)
            arr = arrays[name]
            if type(strides) is not list or len(strides) != arr.ndim:
                raise SharingError(f"sharing group {g}: strides of {name!r} do not match "
                                   f"its {arr.ndim} dimensions")
            strides = [_int(s, f"stride of {name!r}") for s in strides]
            _int(offset, f"offset of {name!r}")
            views.append((name, arr, offset, strides))
        dtype = views[0][1].dtype
        size = dtype.itemsize
        if any(a.dtype != dtype for _, a, _, _ in views):
            raise SharingError(f"sharing group {g} mixes dtypes")
        # Bounded by what the file holds, so a tiny file cannot ask for a huge buffer.
        if not 0 < span <= sum(a.nbytes for _, a, _, _ in views) or span % size:
            raise SharingError(f"sharing group {g} declares {span} bytes for members of "
                               f"{sum(a.nbytes for _, a, _, _ in views)} bytes")
        buf = np.zeros(span // size, dtype)
        built = []
        for name, arr, offset, strides in views:
            if arr.size == 0 or offset % size or any(s % size for s in strides):
                raise SharingError(f"sharing group {g}: {name!r} is empty or misaligned")
            lo = offset + sum((n - 1) * s for n, s in zip(arr.shape, strides) if s < 0)
            hi = offset + sum((n - 1) * s for n, s in zip(arr.shape, strides) if s > 0) + size
            if lo < 0 or hi > span:
                raise SharingError(f"sharing group {g}: {name!r} reaches outside the "
                                   f"{span}-byte buffer")
            view = np.ndarray(arr.shape, dtype, buffer=buf, offset=offset, strides=strides)
            view[...] = arr
            built.append((name, arr, view))
        for name, arr, view in built:
            if view.tobytes() != arr.tobytes():
                raise SharingError(f"tensors sharing memory with {name!r} hold different "
                                   "values")
            arrays[name] = view
