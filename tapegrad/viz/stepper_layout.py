"""The stepper page's graph picture: a layered layout computed here, drawn as inline SVG.

Forward flows left to right. A value's column is its depth: the longest path from a
leaf (so every edge points right); a leaf stands in the column before its first
consumer. Within a column the values are ordered by the mean row of their inputs, then
of their consumers (a few barycenter sweeps), which keeps most edges short without any
layout library. Graphs larger than `max_nodes` values draw the `max_nodes` nearest the
root (breadth first from it, against the edges) and say how many were left out.
"""
import html

__all__ = ["layout", "svg"]

W, H = 168, 54        # box size
DX, DY = 212, 70      # column and row pitch
PAD = 16


def _keep(vertices, root, max_nodes):
    """The ids to draw: all, or the `max_nodes` nearest the root."""
    if len(vertices) <= max_nodes:
        return {v["id"] for v in vertices}
    by_id = {v["id"]: v for v in vertices}
    keep, queue, k = {root}, [root], 0
    while k < len(queue) and len(keep) < max_nodes:
        for i in by_id[queue[k]]["inputs"]:
            if i not in keep and len(keep) < max_nodes:
                keep.add(i)
                queue.append(i)
        k += 1
    return keep


def layout(vertices, root, max_nodes=200):
    """{id: (x, y)} of the drawn vertices (children come before consumers in
    `vertices`), and the number left out."""
    keep = _keep(vertices, root, max_nodes)
    drawn = [v for v in vertices if v["id"] in keep]
    depth = {}
    for v in drawn:  # children first: one pass gives the longest path
        depth[v["id"]] = 1 + max((depth[i] for i in v["inputs"] if i in depth), default=-1)
    consumers = {}
    for v in drawn:
        for i in v["inputs"]:
            if i in keep:
                consumers.setdefault(i, []).append(v["id"])
    for v in drawn:  # a leaf sits just before its first consumer, not far left of it
        if not v["inputs"] and consumers.get(v["id"]):
            depth[v["id"]] = min(depth[c] for c in consumers[v["id"]]) - 1
    cols = {}
    for v in drawn:
        cols.setdefault(depth[v["id"]], []).append(v["id"])
    inputs = {v["id"]: [i for i in v["inputs"] if i in keep] for v in drawn}
    row = {}
    for c in sorted(cols):
        for r, i in enumerate(cols[c]):
            row[i] = r
    for sweep in range(4):  # alternate: order by inputs' rows, then by consumers' rows
        nbrs = inputs if sweep % 2 == 0 else consumers
        order = sorted(cols) if sweep % 2 == 0 else sorted(cols, reverse=True)
        for c in order:
            ids = cols[c]
            key = {i: (sum(row[n] for n in nbrs.get(i, ())) / len(nbrs[i])
                       if nbrs.get(i) else row[i]) for i in ids}
            ids.sort(key=lambda i: (key[i], row[i]))
            for r, i in enumerate(ids):
                row[i] = r
    tallest = max((len(ids) for ids in cols.values()), default=1)
    pos = {}
    for c, ids in cols.items():
        off = (tallest - len(ids)) * DY / 2  # center each column
        for r, i in enumerate(ids):
            pos[i] = (PAD + c * DX, PAD + off + r * DY)
    return pos, len(vertices) - len(drawn)


def _esc(s):
    return html.escape(str(s), quote=True)


def _clip(s, n=23):
    s = str(s)
    return s if len(s) <= n else s[:n - 1] + "\u2026"


def svg(vertices, root, max_nodes=200):
    """The SVG element (a string) and the number of values left out."""
    pos, left_out = layout(vertices, root, max_nodes)
    width = max((x for x, _ in pos.values()), default=0) + W + 2 * PAD
    height = max((y for _, y in pos.values()), default=0) + H + 2 * PAD
    parts = [f'<svg id="graph" xmlns="http://www.w3.org/2000/svg" width="{width:.0f}" '
             f'height="{height:.0f}" viewBox="0 0 {width:.0f} {height:.0f}">',
             '<defs><marker id="arrow" viewBox="0 0 8 8" refX="8" refY="4" '
             'markerUnits="userSpaceOnUse" markerWidth="8" markerHeight="8" orient="auto"><path d="M0,0 L8,4 L0,8 z" fill="#889"/>'
             '</marker></defs>']
    for v in vertices:
        if v["id"] not in pos:
            continue
        x2, y2 = pos[v["id"]]
        for i in v["inputs"]:
            if i not in pos:
                continue
            x1, y1 = pos[i]
            ax, ay, bx, by = x1 + W, y1 + H / 2, x2, y2 + H / 2
            mid = (ax + bx) / 2
            parts.append(f'<path class="edge" data-from="{i}" data-to="{v["id"]}" '
                         f'd="M{ax:.0f},{ay:.0f} C{mid:.0f},{ay:.0f} {mid:.0f},{by:.0f} '
                         f'{bx:.0f},{by:.0f}" marker-end="url(#arrow)"/>')
    for v in vertices:
        if v["id"] not in pos:
            continue
        x, y = pos[v["id"]]
        head = v["name"] if v["kind"] != "op" or v["name"] == v["op"] else \
            f'{v["name"]}' + (f' ({v["op"]})' if not v["name"].startswith(v["op"]) else "")
        val = v["short"]
        cls = f'vertex {v["kind"]}' + (" root" if v["root"] else "")
        parts.append(
            f'<g class="{cls}" id="v-{v["id"]}" data-id="{v["id"]}" '
            f'transform="translate({x:.0f},{y:.0f})"><title>{_esc(v["formula"] or v["name"])}'
            f'</title><rect width="{W}" height="{H}" rx="6"/>'
            f'<text x="6" y="15" class="vname">{_esc(_clip(head))}</text>'
            f'<text x="6" y="31" class="vval">{_esc(_clip("data " + val, 23))}</text>'
            f'<text x="6" y="47" class="vgrad" id="g-{v["id"]}"></text></g>')
    parts.append("</svg>")
    return "".join(parts), left_out
