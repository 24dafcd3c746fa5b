"""The shape of the package, checked on its source: no import cycle, and the tools (memory/,
capture/, utils/checkpoint.py, compat/) and distributions/ built only on what a torch user can
reach.

Why: a cycle makes the order modules load in matter and hides which layer depends on which; a
tool that reaches past the public API breaks when the core is reorganised, and stops being a
worked example a user can copy. Nothing here is imported or run: the files are parsed.
"""
from __future__ import annotations

import ast
import importlib
import pathlib
from typing import Dict, Iterator, List, Set

import pytest

SRC = pathlib.Path(__file__).resolve().parents[1] / "src"
PACKAGE = SRC / "hookgrad"


def module_name(path: pathlib.Path) -> str:
    parts = list(path.relative_to(SRC).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES: Dict[str, pathlib.Path] = {module_name(p): p for p in PACKAGE.rglob("*.py")}


def is_package(name: str) -> bool:
    return MODULES[name].name == "__init__.py"


def imported_from(name: str, node: ast.ImportFrom) -> str:
    """The absolute module an ``from ... import`` statement reads from."""
    if not node.level:
        return node.module or ""
    base = name.split(".") if is_package(name) else name.split(".")[:-1]
    base = base[:len(base) - node.level + 1]
    return ".".join(base + ([node.module] if node.module else []))


def _under_type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def import_nodes(tree: ast.AST, top_level_only: bool) -> Iterator[ast.stmt]:
    """Import statements; ``top_level_only``: those run when the module loads (not inside a
    function, not under ``if TYPE_CHECKING``)."""
    if not top_level_only:
        yield from (n for n in ast.walk(tree) if isinstance(n, (ast.Import, ast.ImportFrom)))
        return
    pending = list(ast.iter_child_nodes(tree))
    while pending:
        node = pending.pop()
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            yield node
        elif isinstance(node, ast.If) and _under_type_checking(node):
            continue
        elif isinstance(node, (ast.If, ast.Try, ast.With)):
            pending.extend(ast.iter_child_nodes(node))


def import_graph(through_faces: bool = False) -> Dict[str, Set[str]]:
    """Module -> the hookgrad modules it imports, anywhere in the file. Without
    ``through_faces``, an import that lands on a package's ``__init__`` (a face that
    re-exports) draws no edge."""
    graph: Dict[str, Set[str]] = {}
    for name, path in MODULES.items():
        targets: Set[str] = set()
        for node in import_nodes(ast.parse(path.read_text()), top_level_only=False):
            if isinstance(node, ast.Import):
                targets.update(a.name for a in node.names if a.name in MODULES)
                continue
            source = imported_from(name, node)
            for alias in node.names:
                if f"{source}.{alias.name}" in MODULES:
                    targets.add(f"{source}.{alias.name}")
                elif source in MODULES:
                    targets.add(source)
        if not through_faces:
            targets = {t for t in targets if not is_package(t)}
        graph[name] = targets - {name}
    return graph


def load_time_graph() -> Dict[str, Set[str]]:
    """Module -> the modules it takes a name from while it loads (``from M import name`` at
    the top of the file, ``name`` not a submodule). Only these need ``M`` to have run already:
    ``import M`` (a name used later, at call time) is safe inside a cycle, this is not."""
    graph: Dict[str, Set[str]] = {}
    for name, path in MODULES.items():
        targets: Set[str] = set()
        for node in import_nodes(ast.parse(path.read_text()), top_level_only=True):
            if isinstance(node, ast.ImportFrom):
                source = imported_from(name, node)
                if source in MODULES and any(f"{source}.{a.name}" not in MODULES
                                             for a in node.names):
                    targets.add(source)
        graph[name] = targets - {name}
    return graph


def cycles(graph: Dict[str, Set[str]]) -> List[List[str]]:
    """The strongly connected components with more than one module (iterative Tarjan)."""
    index: Dict[str, int] = {}
    low: Dict[str, int] = {}
    stack: List[str] = []
    on_stack: Set[str] = set()
    found: List[List[str]] = []
    for root in graph:
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def test_no_import_cycle_between_modules():
    # every import, also those inside functions; a package's __init__ only re-exports
    assert cycles(import_graph()) == []


def test_no_module_takes_a_name_from_one_still_loading():
    # package faces included: ``from hookgrad import Tensor`` in a module that hookgrad's
    # __init__ imports would work only by the order of the lines in __init__
    assert cycles(load_time_graph()) == []


def test_the_cycle_finder_finds_a_cycle():
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


# -- tools on public API only ---------------------------------------------------------------
# Farm-style rule: a tool may import (1) a public module of hookgrad (no part of its dotted path
# starts with "_"), and from it only names without a leading "_"; (2) its own package's modules,
# private ones included; (3) the hookgrad-internal modules listed here, for the reason given.
TOOLS = {"hookgrad.memory": "memory", "hookgrad.capture": "capture",
         "hookgrad.utils.checkpoint": "utils/checkpoint.py", "hookgrad.compat": "compat",
         # not a tool, but held to the same rule: it sits above ops/ and nn/ and, like
         # torch.distributions on torch, is written on the public API alone
         "hookgrad.distributions": "distributions"}
INTERNAL_ALLOWED = {
    # which framework a tensor or model belongs to, importing torch only when one is given
    "hookgrad.memory": {"hookgrad.utils._framework"},
    "hookgrad.capture": {"hookgrad.utils._framework"},
}
# Public modules that hold the core's machinery rather than torch's names: a tool that imports
# them is past the public API even though their paths look public.
CORE_MODULES = {"hookgrad.tensor"} | {
    f"hookgrad.autograd.{name}" for name in ("node", "saved", "engine", "views",
                                             "tensor_hooks", "outputs")} | {
    name for name in MODULES if name.startswith("hookgrad.ops")}


# A name taken from a hookgrad module that mirrors a torch module must be torch's too, or one of
# hookgrad's documented additions to it (docs/ARCHITECTURE.md, "Tools use public API only").
HOOKGRAD_ADDITIONS = {
    "hookgrad.autograd.graph": {"current_saved_tensor", "SavedTensorInfo", "compose_hooks",
                                "storage_key", "to_dot"},
}


def torch_counterpart(module: str):
    """``torch.<same path>`` for a hookgrad module that mirrors one, else ``None``."""
    try:
        return importlib.import_module("torch" + module[len("hookgrad"):])
    except ImportError:
        return None


def tool_files() -> List[pathlib.Path]:
    files = []
    for tool, where in TOOLS.items():
        path = PACKAGE / where
        files += sorted(path.rglob("*.py")) if path.is_dir() else [path]
    return files


def tool_of(module: str) -> str:
    return next(t for t in TOOLS if module == t or module.startswith(t + "."))


def is_private(dotted: str) -> bool:
    return any(part.startswith("_") for part in dotted.split("."))


def violations(path: pathlib.Path) -> List[str]:
    module = module_name(path)
    tool = tool_of(module)
    found = []
    for node in import_nodes(ast.parse(path.read_text()), top_level_only=False):
        if isinstance(node, ast.Import):
            pairs = [(a.name, None) for a in node.names]
        else:
            source = imported_from(module, node)
            pairs = [(source, a.name) for a in node.names]
        for source, name in pairs:
            if not (source == "hookgrad" or source.startswith("hookgrad.")):
                continue
            target = f"{source}.{name}" if name and f"{source}.{name}" in MODULES else source
            if target == tool or target.startswith(tool + "."):
                continue  # its own package
            if target in INTERNAL_ALLOWED.get(tool, ()):
                continue
            if is_private(target) or target in CORE_MODULES:
                found.append(f"{module} imports the internal module {target}")
            elif name and target == source and name.startswith("_"):
                found.append(f"{module} imports the private name {source}.{name}")
            elif name and target == source and name not in HOOKGRAD_ADDITIONS.get(source, ()):
                mirror = torch_counterpart(source)
                if mirror is not None and not hasattr(mirror, name):
                    found.append(f"{module} imports {source}.{name}, which torch does not have")
    return found


def private_attributes(path: pathlib.Path) -> List[str]:
    """``x._name`` on anything but the file's own objects (``self``, ``cls``): how a tool would
    reach into a Tensor or a node past the API."""
    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        if (isinstance(node, ast.Attribute) and node.attr.startswith("_")
                and not node.attr.startswith("__")
                and not (isinstance(node.value, ast.Name) and node.value.id in ("self", "cls"))):
            found.append(f"{module_name(path)}:{node.lineno} reads .{node.attr}")
    return found


@pytest.mark.parametrize("path", tool_files(), ids=lambda p: str(p.relative_to(PACKAGE)))
def test_tools_import_only_public_names(path):
    assert violations(path) == []


@pytest.mark.parametrize("path", [PACKAGE / "utils/checkpoint.py",
                                  *sorted((PACKAGE / "compat").rglob("*.py"))],
                         ids=lambda p: str(p.relative_to(PACKAGE)))
def test_checkpoint_and_compat_touch_no_private_attribute(path):
    assert private_attributes(path) == []


def test_the_rule_catches_a_side_entrance(tmp_path, monkeypatch):
    fake = PACKAGE / "compat" / "paddle.py"
    source = ("from hookgrad.autograd.saved import SavedTensor\n"
              "from hookgrad.autograd.graph import _MultiHandle, save_on_cpu, save_tensor\n"
              "from ..tensor import Tensor\n"
              "x = object()._data\n")
    monkeypatch.setattr(pathlib.Path, "read_text", lambda self: source)
    assert len(violations(fake)) == 4  # all but save_on_cpu, which torch has
    assert len(private_attributes(fake)) == 1
