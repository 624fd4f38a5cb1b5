"""python/perfprof/_core.pyi describes the compiled module perfprof._core: its names, the parameters
of its functions and methods, and the keys of the dicts they return. It ships beside the module,
with the py.typed marker (PEP 561)."""
from __future__ import annotations

import ast
import inspect
import subprocess
import sys
from pathlib import Path
from typing import Dict, List, Tuple

import perfprof
from perfprof import _core
from child_process import child_env

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
STUB = Path(_core.__file__).with_name("_core.pyi")


def stub_class(name: str) -> ast.ClassDef:
    tree = ast.parse(STUB.read_text())
    return next(node for node in tree.body if isinstance(node, ast.ClassDef) and node.name == name)


def typed_dict_keys(name: str) -> List[str]:
    return [node.target.id for node in stub_class(name).body
            if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name)]


def test_stub_ships_beside_the_module():
    # Without them stubtest finds no stub, and says so only by checking nothing.
    assert STUB.is_file()
    assert STUB.with_name("py.typed").is_file()


def test_stubtest_finds_the_stub_and_the_module_agreeing():
    result = subprocess.run([sys.executable, str(HERE / "core_stubtest.py"), "perfprof._core",
                             "--mypy-config-file", str(REPO / "pyproject.toml")],
                            capture_output=True, text=True, env=child_env(), timeout=120)
    assert result.returncode == 0, f"stubtest:\n{result.stdout}{result.stderr}"


def test_mstx_functions_have_the_stubs_parameters():
    """stubtest does not look into _core.mstx, a module held by an attribute (the MstxModule
    protocol in the stub): its functions are perfprof.mstx's, compared here."""
    stub: Dict[str, List[Tuple[str, object]]] = {}
    for method in stub_class("MstxModule").body:
        if isinstance(method, ast.FunctionDef):
            arguments = method.args.args[1:]  # after self
            defaults = [inspect.Parameter.empty] * (len(arguments) - len(method.args.defaults))
            defaults += [ast.literal_eval(node) for node in method.args.defaults]
            stub[method.name] = [(argument.arg, default) for argument, default in zip(arguments, defaults)]
    runtime = {name: [(p.name, p.default) for p in inspect.signature(function).parameters.values()]
               for name, function in vars(_core.mstx).items() if not name.startswith("_")}
    assert runtime == stub


def test_returned_dicts_have_the_stubs_keys():
    with perfprof.profile(schedule=perfprof.schedule(wait=0, active=1, repeat=1)) as prof:
        with perfprof.record_function("work"):
            pass
        prof.step()
    trace = prof.trace
    assert list(trace.stats) == typed_dict_keys("TraceStats")
    rows = trace.key_averages()
    assert rows and all(list(row) == typed_dict_keys("KeyAverageRow") for row in rows)
    assert list(_core.cupti_status()) == typed_dict_keys("CuptiStatus")
