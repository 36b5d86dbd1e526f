"""The layers of the project, drawn from its imports.

    almanac  ←  skills  ←  connectors, wiki, memories  ←  context, web

Every import statement counts, those inside functions included, and so does
`import_module("…")` with a literal name. An app may import the apps of the layers below
it and, without making a cycle, its peers (wiki reads connectors' events). Project wiring
that names apps by dotted path — INSTALLED_APPS, the URLconf's `include("web.urls")`, the API
root's `add_router(…, "memories.api.router")`, task names — is configuration, not an import:
what must travel up goes by signal (`almanac.signals`, `connectors.signals`,
`skills.signals`).
"""

from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
LAYERS = [("almanac",), ("skills",), ("connectors", "wiki", "memories"), ("context", "web")]
LAYER_OF = {app: depth for depth, apps in enumerate(LAYERS) for app in apps}


def module_name(path: Path, root: Path) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imported_names(tree: ast.AST, module: str, is_package: bool) -> set[str]:
    """Every module `module` imports, at any depth of its code."""
    names: set[str] = set()
    package = module if is_package else module.rpartition(".")[0]
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")
                anchor = anchor[: len(anchor) - (node.level - 1)]
                base = ".".join([*anchor, base] if base else anchor)
            names.add(base)
            names.update(f"{base}.{alias.name}" for alias in node.names)
        elif (
            isinstance(node, ast.Call)
            and getattr(node.func, "id", getattr(node.func, "attr", "")) == "import_module"
            and node.args
            and isinstance(node.args[0], ast.Constant)
            and isinstance(node.args[0].value, str)
        ):
            names.add(node.args[0].value)
    return names


def app_imports(root: Path, apps: tuple[str, ...]) -> dict[tuple[str, str], set[str]]:
    """{(app, imported app): the modules of `app` that import it} over the apps' code."""
    edges: dict[tuple[str, str], set[str]] = defaultdict(set)
    for app in apps:
        for path in sorted((root / app).rglob("*.py")):
            module = module_name(path, root)
            tree = ast.parse(path.read_text(), filename=str(path))
            for name in imported_names(tree, module, path.name == "__init__.py"):
                target = name.split(".")[0]
                if target in apps and target != app:
                    edges[(app, target)].add(module)
    return edges


def cycle(nodes, edges) -> list[str] | None:
    """One cycle of the directed graph, as a path that returns to its start, or None."""
    following = defaultdict(list)
    for source, target in edges:
        following[source].append(target)
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    path: list[str] = []

    def visit(node):
        state[node] = 1
        path.append(node)
        for nxt in sorted(following[node]):
            if state.get(nxt) == 1:
                return [*path[path.index(nxt) :], nxt]
            if nxt not in state and (found := visit(nxt)):
                return found
        path.pop()
        state[node] = 2
        return None

    for node in sorted(nodes):
        if node not in state and (found := visit(node)):
            return found
    return None


def module_imports(root: Path, apps: tuple[str, ...]) -> set[tuple[str, str]]:
    """(module, module it imports) between the apps' own modules, migrations aside (they
    are frozen history, each loaded on its own by the migration loader)."""
    paths = {
        module_name(path, root): path
        for app in apps
        for path in (root / app).rglob("*.py")
        if "migrations" not in path.parts
    }
    edges = set()
    for module, path in paths.items():
        tree = ast.parse(path.read_text(), filename=str(path))
        for name in imported_names(tree, module, path.name == "__init__.py"):
            while name and name not in paths:  # `from pkg.mod import func` imports pkg.mod
                name = name.rpartition(".")[0]
            if name and name != module:
                edges.add((module, name))
    return edges


def upward(edges, layer_of) -> list[str]:
    return sorted(
        f"{source} imports {target} (a higher layer) in {', '.join(sorted(modules))}"
        for (source, target), modules in edges.items()
        if layer_of[target] > layer_of[source]
    )


def test_no_app_imports_a_layer_above_it():
    assert upward(app_imports(ROOT, tuple(LAYER_OF)), LAYER_OF) == []


def test_apps_import_one_another_without_a_cycle():
    edges = app_imports(ROOT, tuple(LAYER_OF))
    assert cycle(LAYER_OF, edges) is None


def test_modules_import_one_another_without_a_cycle():
    """Inside an app too: a cycle dodged with an import inside a function is still one
    (a read that imports a write service that imports the read back)."""
    edges = module_imports(ROOT, tuple(LAYER_OF))
    assert cycle({module for edge in edges for module in edge}, edges) is None


def test_every_app_has_a_layer():
    apps = {path.parent.name for path in ROOT.glob("*/apps.py")}
    assert apps == set(LAYER_OF)


def test_the_check_sees_imports_inside_functions_and_import_module(tmp_path):
    """The checker itself: an upward import hidden in a function, a relative import and an
    `import_module` with a literal name are all found, and so is the cycle they make."""
    files = {
        "base/__init__.py": "",
        "base/views.py": "def page():\n    from top.models import Thing\n    return Thing\n",
        "top/__init__.py": "",
        "top/models.py": "from .helpers import x\nfrom base import views\n",
        "top/helpers.py": "import importlib\nx = importlib.import_module('base.views')\n",
    }
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    edges = app_imports(tmp_path, ("base", "top"))
    assert edges[("base", "top")] == {"base.views"}
    assert edges[("top", "base")] == {"top.models", "top.helpers"}
    assert upward(edges, {"base": 0, "top": 1}) == ["base imports top (a higher layer) in base.views"]
    assert cycle({"base", "top"}, edges) == ["base", "top", "base"]
    assert ("top.models", "top.helpers") in module_imports(tmp_path, ("base", "top"))
