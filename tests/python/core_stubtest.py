"""mypy's stubtest (``python -m mypy.stubtest``), also checking the parameters of pybind11 functions.

stubtest compares a stub's parameters with what ``inspect.signature`` reads from the runtime
object. It reads those of perfprof's hand-written C functions (their docstrings begin with a text
signature), but not those of functions bound with pybind11, which have none: for them stubtest
alone checks only that they exist. pybind11 writes each signature as the first line of the
docstring instead, ``name(self: T, path: str, flops: bool = False) -> R``; this script gives
stubtest that signature where ``inspect.signature`` gives none.

Usage: python core_stubtest.py MODULE [stubtest options]
"""
from __future__ import annotations

import ast
import inspect
import re
import sys
from typing import Any, List, Optional

import mypy.stubtest

# pybind11 names the arguments bound without py::arg "arg0", "arg1"...: they take no keyword.
_UNNAMED = re.compile(r"arg\d+")


def _default(node: Optional[ast.expr]) -> Any:
    if node is None:
        return inspect.Parameter.empty
    try:
        return ast.literal_eval(node)
    except ValueError:  # e.g. an object's repr: stubtest then checks only that a default exists
        return mypy.stubtest.UNREPRESENTABLE


def pybind11_signature(function: Any) -> Optional[inspect.Signature]:
    """The signature on the first line of `function`'s docstring, or None when there is none."""
    name, doc = getattr(function, "__name__", None), getattr(function, "__doc__", None)
    if not isinstance(name, str) or not isinstance(doc, str) or not doc.startswith(name + "("):
        return None
    try:
        definition = ast.parse(f"def {doc.splitlines()[0]}: pass").body[0]
    except SyntaxError:
        return None
    assert isinstance(definition, ast.FunctionDef)
    arguments = definition.args
    positional = arguments.posonlyargs + arguments.args
    defaults: List[Optional[ast.expr]] = [None] * (len(positional) - len(arguments.defaults))
    defaults += arguments.defaults
    # Arguments before one that is positional only cannot be passed by keyword either.
    positional_only = max((i + 1 for i, a in enumerate(positional)
                           if a in arguments.posonlyargs or _UNNAMED.fullmatch(a.arg)), default=0)
    parameters = [
        inspect.Parameter(argument.arg, inspect.Parameter.POSITIONAL_ONLY if i < positional_only
                          else inspect.Parameter.POSITIONAL_OR_KEYWORD, default=_default(default))
        for i, (argument, default) in enumerate(zip(positional, defaults))
    ]
    if arguments.vararg:
        parameters.append(inspect.Parameter(arguments.vararg.arg, inspect.Parameter.VAR_POSITIONAL))
    parameters += [inspect.Parameter(argument.arg, inspect.Parameter.KEYWORD_ONLY, default=_default(default))
                   for argument, default in zip(arguments.kwonlyargs, arguments.kw_defaults)]
    if arguments.kwarg:
        parameters.append(inspect.Parameter(arguments.kwarg.arg, inspect.Parameter.VAR_KEYWORD))
    return inspect.Signature(parameters)


def main() -> None:
    inspect_signature = mypy.stubtest.safe_inspect_signature

    def signature(runtime: Any) -> Optional[inspect.Signature]:
        return inspect_signature(runtime) or pybind11_signature(runtime)

    mypy.stubtest.safe_inspect_signature = signature
    sys.exit(mypy.stubtest.main())


if __name__ == "__main__":
    main()
