"""Imports point one way: pages -> ui -> sim, with no circle anywhere. The graph is read from the source
with ast (every import, at module level or inside a function: a lazy import is still a dependency), so this is a
unit test: nothing is imported."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
LAYERS = {"app": 3, "pages": 3, "ui": 2, "sim": 1}  # a module may import only from its layer or a lower one


def module_name(path: Path) -> str:
    rel = path.relative_to(ROOT).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def graph() -> dict[str, set[str]]:
    """{module: the project's modules it imports} for app.py, pages/, ui/ and sim/."""
    files = [ROOT / "app.py", *sorted((ROOT / "pages").glob("*.py")), *sorted((ROOT / "ui").rglob("*.py")),
             *sorted((ROOT / "sim").rglob("*.py"))]
    names = {module_name(f): f for f in files}
    out: dict[str, set[str]] = {}
    for name, path in names.items():
        deps = set()
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            targets = []
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    up = package.split(".")[: len(package.split(".")) - node.level + 1]
                    base = ".".join([*up, base] if base else up)
                # `from sim.toy import update` needs the module sim.toy.update; `from sim.toy import ToyConfig` sim.toy
                targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in names else base for a in node.names]
            for t in targets:
                while t and t not in names:  # sim.toy.runs.run_toy -> sim.toy.runs
                    t = t.rpartition(".")[0]
                if t and t != name:
                    deps.add(t)
        out[name] = deps
    return out


def cycles(g: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm)."""
    index, low, stack, on, out, counter = {}, {}, [], set(), [], [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in g[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(g):
        if v not in index:
            visit(v)
    return out


def test_no_import_circle_in_sim_ui_or_pages():
    assert cycles(graph()) == []


def test_imports_point_one_way_pages_ui_sim():
    g = graph()
    up = [(a, b) for a, deps in g.items() for b in deps if LAYERS[b.split(".")[0]] > LAYERS[a.split(".")[0]]]
    assert up == [], f"imports that point up (sim -> ui, ui -> pages): {up}"


def test_the_graph_sees_imports():
    """The reader finds what it must (a check that the test can fail): a known edge and a known absence."""
    g = graph()
    assert "sim.grpo" in g["sim.exercises"] and "sim.views.doc" in g["ui.view"] and "ui.host" in g["pages.wasted"]
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
