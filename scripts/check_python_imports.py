#!/usr/bin/env python3
"""Checks that the modules of a Python package import each other without a cycle.

    python3 scripts/check_python_imports.py [PACKAGE_DIR]   (default: python/perfprof)

Every import counts: at module level, inside functions (an import deferred to call time hides a
cycle rather than removing it) and under ``if TYPE_CHECKING:`` (a type checker follows it). An
import of a module's own parent package is not an edge: Python imports parents first anyway.
Exits 1 and prints each cycle as the import statements (file:line) that close it, 0 when the
graph has none.
"""
from __future__ import annotations

import ast
import os
import sys
from dataclasses import dataclass
from typing import Dict, Iterator, List, Set


@dataclass(frozen=True)
class Import:
    """One import statement of module `source` that loads module `target` of the package."""

    source: str
    target: str
    path: str
    line: int


def modules_of(package_dir: str) -> Dict[str, str]:
    """Dotted module name -> file, for every .py file of the package (a package is its __init__)."""
    package_dir = os.path.normpath(package_dir)
    base = os.path.dirname(package_dir)
    modules = {}
    for root, _, names in os.walk(package_dir):
        for name in sorted(names):
            if not name.endswith(".py"):
                continue
            path = os.path.join(root, name)
            dotted = os.path.relpath(path, base)[:-3].replace(os.sep, ".")
            modules[dotted.removesuffix(".__init__")] = path
    return modules


def imports_of(module: str, path: str, modules: Dict[str, str]) -> Iterator[Import]:
    """The imports in `path` that load other modules of the package, wherever they stand."""
    with open(path, encoding="utf-8") as source:
        tree = ast.parse(source.read(), path)
    package = module if path.endswith("__init__.py") else module.rpartition(".")[0]
    for node in ast.walk(tree):
        for target in _targets(node, package):
            if target in modules and target != module and not module.startswith(target + "."):
                yield Import(module, target, path, node.lineno)


def _targets(node: ast.AST, package: str) -> List[str]:
    """The module names an import statement may load: the module it names, and for `from X import
    name` also X.name (a submodule when there is one)."""
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    if not isinstance(node, ast.ImportFrom):
        return []
    if node.level:
        base = package
        for _ in range(node.level - 1):
            base = base.rpartition(".")[0]
        base = f"{base}.{node.module}" if node.module else base
    else:
        base = node.module or ""
    return [base] + [f"{base}.{alias.name}" for alias in node.names]


def cycles(edges: Dict[str, Set[str]]) -> List[List[str]]:
    """The strongly connected components of more than one module (Tarjan's, iteratively: a deep
    package must not reach Python's recursion limit), each sorted."""
    index: Dict[str, int] = {}
    low: Dict[str, int] = {}
    stack: List[str] = []
    on_stack: Set[str] = set()
    found: List[List[str]] = []
    for root in sorted(edges):
        if root in index:
            continue
        work = [(root, iter(sorted(edges[root])))]
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
                    work.append((child, iter(sorted(edges.get(child, ())))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
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


def main() -> int:
    default = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python", "perfprof")
    package_dir = sys.argv[1] if len(sys.argv) > 1 else default
    modules = modules_of(package_dir)
    imports = [item for module, path in modules.items() for item in imports_of(module, path, modules)]
    edges: Dict[str, Set[str]] = {module: set() for module in modules}
    for item in imports:
        edges[item.source].add(item.target)
    found = cycles(edges)
    for number, component in enumerate(found, 1):
        members = set(component)
        print(f"import cycle {number} through {len(component)} modules: {', '.join(component)}")
        for item in sorted(imports, key=lambda i: (i.source, i.line)):
            if item.source in members and item.target in members:
                print(f"  {os.path.relpath(item.path)}:{item.line}: {item.source} imports {item.target}")
    if not found:
        print(f"no import cycle among the {len(modules)} modules of {os.path.basename(os.path.normpath(package_dir))}")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
