"""The layers of the project, drawn from its imports.

    almanac  ←  skills  ←  connectors, wiki, memories, documents  ←  context, web, metrics, governance  ←  config

Every import statement counts, those inside functions included, and so does
`import_module("…")` with a literal name. A string that is the dotted path of a module
(or of something in one) counts too: a task name (`async_task("memories.tasks.x")`), a
router (`add_router(…, "memories.api.router")`), a URLconf (`include("web.urls")`), a
middleware or a setting's class path is loaded by that name later, which is an import.
An app may import the apps of the layers below it and, without making a cycle, its peers
(wiki reads connectors' events). The project package `config` (settings, URLconf, API
root) is the top layer: it wires the apps together and nothing imports it. What must
travel up goes by signal (`almanac.signals`, `connectors.signals`, `skills.signals`).
"""

from __future__ import annotations

import ast
import re
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PROJECT = "config"  # the project package: not an app, the layer above them all
LAYERS = [
    ("almanac",),
    ("skills",),
    ("connectors", "wiki", "memories", "documents"),
    ("context", "web", "metrics", "governance"),
    (PROJECT,),
]
LAYER_OF = {app: depth for depth, apps in enumerate(LAYERS) for app in apps}
DOTTED = re.compile(r"[A-Za-z_]\w*(\.[A-Za-z_]\w*)+")


def module_name(path: Path, root: Path) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def named_modules(tree: ast.AST, modules: set[str]) -> set[str]:
    """The modules that string constants name by dotted path: the string itself, or with
    its last part (a function, class or attribute) dropped. An app's package alone is not
    named so: "wiki.view_page" is a permission and "memories.Memory" a model label."""
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and DOTTED.fullmatch(node.value):
            path = node.value
            if path not in modules:
                path = path.rpartition(".")[0]
            if path in modules and "." in path:
                names.add(path)
    return names


def project_modules(root: Path, apps: tuple[str, ...]) -> dict[str, Path]:
    return {module_name(path, root): path for app in apps for path in sorted((root / app).rglob("*.py"))}


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
    """{(app, imported app): the modules of `app` that import it, or name one of its modules
    by dotted path} over the apps' code."""
    edges: dict[tuple[str, str], set[str]] = defaultdict(set)
    paths = project_modules(root, apps)
    for module, path in paths.items():
        app = module.split(".")[0]
        tree = ast.parse(path.read_text(), filename=str(path))
        names = imported_names(tree, module, path.name == "__init__.py") | named_modules(tree, set(paths))
        for name in names:
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
    are frozen history, each loaded on its own by the migration loader). Import statements
    only: a module named by a string is loaded later, by that name (a registry naming its
    pollers, which import the registry's base, makes no cycle)."""
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
    assert apps | {PROJECT} == set(LAYER_OF)


def test_the_check_sees_imports_inside_functions_and_import_module(tmp_path):
    """The checker itself: an upward import hidden in a function, a relative import, an
    `import_module` with a literal name and a dotted path in a string are all found (a
    permission's name is none), and so is the cycle they make."""
    files = {
        "base/__init__.py": "",
        "base/views.py": "def page():\n    from top.models import Thing\n    return Thing\n",
        "top/__init__.py": "",
        "top/models.py": "from .helpers import x\nfrom base import views\n",
        "top/helpers.py": "import importlib\nx = importlib.import_module('base.views')\n",
        "base/tasks.py": "NEXT = 'top.models.Thing'\nPERMISSION = 'top.view_thing'\n",
    }
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    edges = app_imports(tmp_path, ("base", "top"))
    assert edges[("base", "top")] == {"base.views", "base.tasks"}
    assert edges[("top", "base")] == {"top.models", "top.helpers"}
    assert upward(edges, {"base": 0, "top": 1}) == [
        "base imports top (a higher layer) in base.tasks, base.views"
    ]
    assert cycle({"base", "top"}, edges) == ["base", "top", "base"]
    assert ("top.models", "top.helpers") in module_imports(tmp_path, ("base", "top"))
