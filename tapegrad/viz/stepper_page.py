"""The stepper page itself: one HTML file with its CSS, its script and the SVG inline.

Nothing is fetched: no library, no font, no image; the page opens from disk offline.
The recorded data (vertices, steps, leaves) is embedded as JSON in a
`<script type="application/json">` element; the script below only shows it (which
step is current, what each value's gradient is at that step): every number was
computed in Python while backward ran.

Hooks for tests and readers: `body[data-step]` is the current step (0 = forward
values), `body[data-steps]` the last; each leaf's row is `tr[data-leaf]` with its final
`.grad` in `data-grad` (JSON numbers, exact) and as text; each value's gradient as
shown at the current step is the text of `#g-<id>` in the graph.
"""
import html
import json
import math

from .stepper_layout import svg

__all__ = ["render"]


def _jsonable(x):
    """JSON has no NaN/Infinity: non-finite floats become the strings "nan", "inf"."""
    if isinstance(x, float) and not math.isfinite(x):
        return str(x)
    if isinstance(x, dict):
        return {k: _jsonable(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_jsonable(v) for v in x]
    return x


def _dumps(x):
    # `</script>` inside the JSON would end the element: escape every '<'
    return json.dumps(_jsonable(x), allow_nan=False).replace("<", "\\u003c")


def _e(s):
    return html.escape(str(s), quote=True)


def _shape_text(shape):
    return "scalar" if not shape else "(" + ", ".join(map(str, shape)) + \
        ("," if len(shape) == 1 else "") + ")"


def _leaf_rows(leaves):
    rows = []
    for lf in leaves:
        fd = lf.get("fd") or {}
        ok = fd.get("ok")
        cls = "ok" if ok else ("bad" if ok is False else "none")
        rows.append(
            f'<tr data-leaf="{_e(lf["name"])}" data-id="{lf["id"]}" '
            f'data-grad="{_e(_dumps(lf["grad"]))}"><td>{_e(lf["name"])}</td>'
            f'<td>{_shape_text(lf["shape"])} {_e(lf["dtype"])}</td>'
            f'<td class="final">{_e(lf["grad_text"])}</td>'
            f'<td>{_e(lf["before"]) if lf["before"] not in (None, "0.0", "None") else ""}</td>'
            f'<td>{lf["uses"]}</td><td class="fd {cls}">{_e(fd.get("text", ""))}</td></tr>')
    return "\n".join(rows)


def render(data, max_nodes=200):
    """The page as a string."""
    picture, left_out = svg(data["vertices"], data["root"], max_nodes)
    note = (f'<p class="note">The graph has {len(data["vertices"])} values; drawn: the '
            f'{len(data["vertices"]) - left_out} nearest the output (stepper(..., '
            f'max_nodes=) draws more). Every step is listed below.</p>') if left_out else ""
    steps = "\n".join(
        f'<li data-step="{k}">{_e(s["name"])}: {_e(s["op"])}</li>'
        for k, s in enumerate(data["steps"], 1))
    forward = "\n".join(_e(line) for line in data["forward"])
    return _PAGE.format(
        title=_e(data["title"]), kind=data["kind"], n=len(data["steps"]),
        nv=len(data["vertices"]), nl=len(data["leaves"]), seed=_e(data["seed"]),
        svg=picture, note=note, steps=steps, forward=forward,
        leaves=_leaf_rows(data["leaves"]), data=_dumps(
            {k: data[k] for k in ("kind", "vertices", "steps", "root", "seed", "seed_short")}),
        css=_CSS, js=_JS)


_CSS = """
body{font:14px/1.4 system-ui,sans-serif;margin:0;color:#222;background:#fafafa}
header{position:sticky;top:0;background:#fff;border-bottom:1px solid #ddd;padding:8px 14px;
 z-index:2;display:flex;gap:10px;align-items:center;flex-wrap:wrap}
h1{font-size:17px;margin:0 12px 0 0}
button{font:inherit;padding:3px 10px;cursor:pointer}
#stepno{font-weight:600;min-width:9em}
.keys{color:#666;font-size:12px}
main{display:flex;flex-direction:column;gap:10px;padding:10px 14px}
#graphbox{overflow:auto;max-height:52vh;background:#fff;border:1px solid #ddd}
#panel{background:#fff;border:1px solid #ddd;padding:8px 12px;min-height:200px}
#panel h2{font-size:15px;margin:4px 0}
code,pre,.mono{font-family:ui-monospace,Menlo,Consolas,monospace;font-size:12.5px}
pre{background:#f4f4f4;padding:8px;overflow:auto;max-height:260px;white-space:pre-wrap}
table{border-collapse:collapse;margin:6px 0}
td,th{border:1px solid #ddd;padding:3px 6px;vertical-align:top;text-align:left}
th{background:#f0f0f0}
.vertex rect{fill:#fff;stroke:#99a;stroke-width:1.2}
.vertex.leaf rect{fill:#eaf6ea}
.vertex.const rect{fill:#f2f2f2;stroke-dasharray:4 3}
.vertex.root rect{stroke:#333;stroke-width:2}
.vertex.done rect{fill:#e6ecff}
.vertex.leaf.done rect{fill:#d5efd5}
.vertex.target rect{stroke:#2a8a2a;stroke-width:3}
.vertex.current rect{fill:#ffe9b8;stroke:#d07a00;stroke-width:3.5}
.vertex text{font-family:ui-monospace,Menlo,Consolas,monospace;font-size:11.5px}
.vname{font-weight:700}
.vgrad{fill:#b04000}
.edge{fill:none;stroke:#aab;stroke-width:1.2}
.edge.active{stroke:#2a8a2a;stroke-width:2.6}
#steplist{columns:3 16em;font-size:12.5px;padding-left:2.5em}
#steplist li{cursor:pointer}
#steplist li.cur{background:#ffe9b8;font-weight:600}
#steplist li.past{color:#558}
.fd.ok{color:#1a7a1a}.fd.bad{color:#b00020;font-weight:600}.fd.none{color:#777}
.note{color:#8a5a00}
section{padding:0 14px 10px}
"""

_JS = r"""
(function(){
"use strict";
var D = JSON.parse(document.getElementById("tg-data").textContent);
var N = D.steps.length, cur = 0, timer = null;
var byId = {};
D.vertices.forEach(function(v){ byId[v.id] = v; });
function el(id){ return document.getElementById(id); }
function esc(s){ return String(s).replace(/[&<>"]/g, function(c){
  return {"&":"&amp;","<":"&lt;",">":"&gt;",'"':"&quot;"}[c]; }); }
function clip(s, n){ return s.length <= n ? s : s.slice(0, n - 1) + "\u2026"; }
function gradsAt(k){
  // each value's gradient as shown after k steps: the latest running sum it received
  var g = {};
  D.vertices.forEach(function(v){ if (v.kind === "leaf" && v.grad0 !== "None" &&
    v.grad0 !== "0.0" && v.grad0 !== "-") g[v.id] = v.grad0 + " (earlier)"; });
  if (k >= 1) g[D.root] = D.seed_short + " (seed)";
  for (var s = 0; s < k; s++) {
    D.steps[s].shares.forEach(function(sh){
      g[sh.to] = sh.after_short + (sh.count > 1 ? " (" + sh.count + " uses)" : "");
    });
  }
  return g;
}
function panel(k){
  if (k === 0) {
    return "<h2>Step 0 of " + N + ": the forward pass</h2><p>Every value was computed " +
      "from its inputs, leaves first (hover a box for its formula). Backward starts at " +
      "the output with the seed gradient <code>" + esc(D.seed) + "</code>, then visits " +
      "the nodes in the order the engine ran them: press <b>Next</b> or the right arrow " +
      "key.</p><pre>" + esc(document.getElementById("forward").textContent) + "</pre>";
  }
  var s = D.steps[k - 1], v = byId[s.v];
  var h = "<h2>Step " + k + " of " + N + ": " + esc(s.name) +
    (v && v.op && s.name.indexOf(v.op) !== 0 ? " (" + esc(v.op) + ")" : "") + "</h2>";
  if (v && v.formula) h += "<p>forward: <code>" + esc(s.name) + " = " + esc(v.formula) +
    "</code> = <code>" + esc(v.value) + "</code></p>";
  h += "<p>rule: <code>" + esc(s.rule) + "</code></p>";
  h += "<p>gradient arriving at its output" + (s.g_shape.length ? " (shape (" +
    s.g_shape.join(", ") + "))" : "") + ": <code>" + esc(s.g) + "</code></p>";
  if (s.note) h += "<p>" + esc(s.note) + "</p>";
  if (s.shares.length) {
    h += "<table><tr><th>to</th><th>share (the rule's result)</th>" +
      "<th>summed back to its shape</th><th>running sum (.grad)</th></tr>";
    s.shares.forEach(function(sh){
      h += "<tr><td><code>" + esc(sh.to_name) + "</code>" +
        (sh.input.indexOf("child") === 0 ? "" : " as <code>" + esc(sh.input) + "</code>") +
        (sh.leaf ? " (leaf)" : "") + "</td><td><code>" + esc(sh.share) + "</code>" +
        (sh.line ? "<br><code>" + esc(sh.line) + "</code>" : "") + "</td><td>" +
        (sh.summed ? esc(sh.summed) + ": <code>" + esc(sh.fitted) + "</code>" : "-") +
        "</td><td><code>" + esc(sh.after) + "</code>" + (sh.count > 1 ?
        "<br>use " + sh.count + ": this share was added to what earlier uses sent" : "") +
        "</td></tr>";
    });
    h += "</table>";
  }
  return h;
}
function show(k){
  cur = Math.max(0, Math.min(N, k));
  document.body.setAttribute("data-step", String(cur));
  el("stepno").textContent = "step " + cur + " of " + N;
  var g = gradsAt(cur);
  D.vertices.forEach(function(v){
    var t = el("g-" + v.id);
    if (t) t.textContent = g[v.id] !== undefined ? clip("grad " + g[v.id], 23) : "";
    var b = el("v-" + v.id);
    if (b) b.classList.remove("current", "done", "target");
  });
  var edges = document.querySelectorAll(".edge.active");
  for (var i = 0; i < edges.length; i++) edges[i].classList.remove("active");
  for (var s = 0; s < cur; s++) {
    var box = el("v-" + D.steps[s].v);
    if (box) box.classList.add(s === cur - 1 ? "current" : "done");
  }
  if (cur > 0) {
    var st = D.steps[cur - 1];
    st.shares.forEach(function(sh){
      var b = el("v-" + sh.to);
      if (b) b.classList.add("target");
      var e = document.querySelectorAll('.edge[data-from="' + sh.to + '"][data-to="' +
        st.v + '"]');
      for (var j = 0; j < e.length; j++) e[j].classList.add("active");
    });
    var c = el("v-" + st.v);
    if (c && c.scrollIntoView) c.scrollIntoView({block: "nearest", inline: "nearest"});
  }
  el("panel").innerHTML = panel(cur);
  var items = document.querySelectorAll("#steplist li");
  for (var m = 0; m < items.length; m++) {
    items[m].classList.toggle("cur", m === cur - 1);
    items[m].classList.toggle("past", m < cur - 1);
  }
}
function play(){
  if (timer) { clearInterval(timer); timer = null; el("play").textContent = "play"; return; }
  if (cur >= N) show(0);
  el("play").textContent = "pause";
  timer = setInterval(function(){
    if (cur >= N) { play(); return; }
    show(cur + 1);
  }, 900);
}
function stop(){ if (timer) play(); }
el("next").addEventListener("click", function(){ stop(); show(cur + 1); });
el("back").addEventListener("click", function(){ stop(); show(cur - 1); });
el("reset").addEventListener("click", function(){ stop(); show(0); });
el("play").addEventListener("click", play);
el("steplist").addEventListener("click", function(ev){
  var li = ev.target.closest ? ev.target.closest("li") : null;
  if (li) { stop(); show(parseInt(li.getAttribute("data-step"), 10)); }
});
document.addEventListener("keydown", function(ev){
  if (ev.altKey || ev.ctrlKey || ev.metaKey) return;
  var k = ev.key;
  if (k === "ArrowRight" || k === "ArrowDown") { stop(); show(cur + 1); }
  else if (k === "ArrowLeft" || k === "ArrowUp") { stop(); show(cur - 1); }
  else if (k === "Home") { stop(); show(0); }
  else if (k === "End") { stop(); show(N); }
  else if (k === " ") { play(); }
  else return;
  ev.preventDefault();
});
show(0);
})();
"""

_PAGE = """<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{title}</title>
<style>{css}</style></head>
<body data-step="0" data-steps="{n}">
<header><h1>{title}</h1>
<button id="reset" title="Home">reset</button><button id="back" title="left arrow">back</button>
<button id="play" title="space">play</button><button id="next" title="right arrow">next</button>
<span id="stepno">step 0 of {n}</span>
<span class="keys">keys: &larr; &rarr; Home End Space</span></header>
<main><div id="graphbox">{svg}</div><div id="panel"></div></main>
<section>{note}
<p>A {kind} graph: {nv} values, {n} backward steps (one per node, in the order the engine
ran them), {nl} leaves. Forward runs left to right; backward visits the boxes right to
left. The highlighted box is the node whose rule runs; green boxes receive its shares.</p>
<h2>Steps</h2><ol id="steplist">{steps}</ol>
<h2>Leaves: the gradients backward computed</h2>
<table id="leaves"><tr><th>leaf</th><th>shape</th><th>.grad after backward</th>
<th>.grad before</th><th>uses</th><th>finite-difference check</th></tr>
{leaves}</table>
<h2>Forward values</h2><pre id="forward">{forward}</pre></section>
<script type="application/json" id="tg-data">{data}</script>
<script>{js}</script>
</body></html>
"""
