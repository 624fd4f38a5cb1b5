"""profiler_config.json: the file dynamic profiling reads, and how a change to it is seen.

The fields are the spec's (torch_npu's dynamic_profile, mapped from NPU to CUDA GPUs): a
profile's options (``activities``, ``record_shapes`` ... ``experimental_config``, checked as
``profile()`` checks them) and what only a dynamic collection has (``start_step``, ``active``,
``warmup``, ``prof_dir``, ``analyse``, ``async_mode``, ``is_rank``, ``rank_list``,
``metadata``), and perfprof's auto-plot (``auto_plot``, ``plot_required``, ``plot``:
docs/plots.md). A key left out takes its default. Nothing in a file is ever executed, and a bad
field never stops the job: it is named in the problems and takes its default.

A change is a change of content (a hash of the bytes), not of modification time: two edits in
one second, or a file copied with an old mtime (``cp -p``), are both seen. A file that is not
valid JSON (being written, or wrong) is not consumed: the next poll reads it again.
"""
from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import re
from typing import Any, Callable, Dict, List, Optional, Tuple, Union

from ._node_config import read_file
from ._options import ProfilerOptions
from ._ranges import ACTIVE_STEPS, RANK, START_STEP, STEP_COUNT, Range
from .activity import ProfilerActivity
from .experimental_config import ExperimentalConfig

CONFIG_FILE = "profiler_config.json"

_OPTION_FLAGS = ("record_shapes", "profile_memory", "with_stack", "with_flops", "with_modules")


@dataclasses.dataclass(frozen=True)
class DynamicConfig:
    """One profiler_config.json, checked (see the module's docstring for the fields)."""

    options: ProfilerOptions
    start_step: int = 0  # 0: no collection; -1: from the next step; N: from step N
    active: int = 1
    warmup: int = 0
    prof_dir: str = "./"
    analyse: bool = False
    async_mode: bool = False
    is_rank: bool = False
    rank_list: Tuple[int, ...] = ()
    metadata: Dict[str, Any] = dataclasses.field(default_factory=dict)
    auto_plot: Optional[bool] = None  # None: on when `plot` is given (docs/plots.md)
    plot_required: bool = False
    plot: Union[Dict[str, Any], str, None] = None  # a plot configuration, or a plot-config file's path

    def collects_on_rank(self, rank: int) -> bool:
        """Whether the process of `rank` collects: every rank unless ``is_rank`` names some."""
        return not self.is_rank or rank in self.rank_list


class _Invalid(ValueError):
    """A field's value that cannot be used: the message says why."""


def _in(allowed: Range) -> Callable[[Any], Any]:
    """The check of a numeric field: a value in `allowed` (perfprof's ranges, as profile() has them)."""
    def check(value: Any) -> Any:
        violation = allowed.violation(value)
        if violation is not None:
            raise _Invalid(violation[1])
        return value
    return check


def _bool(value: Any) -> bool:
    if not isinstance(value, bool):
        raise _Invalid(f"must be true or false, got {json.dumps(value)}")
    return value


_PATH_PART = re.compile(r"^[A-Za-z0-9_-]+$")


def checked_path(caller: str, value: Any) -> str:
    """`value` when it is a path dynamic profiling may use (see :func:`_safe_path`); else a
    ``ValueError`` starting with `caller`."""
    try:
        return _safe_path(value)
    except _Invalid as error:
        raise ValueError(f"{caller}: {error}") from None


def _safe_path(value: Any) -> str:
    """Letters, digits, '_' and '-' in each part ('.' and '..' as whole parts), no symbolic link."""
    if not isinstance(value, str) or not value:
        raise _Invalid(f"must be a non-empty path, got {json.dumps(value)}")
    parts = [part for part in value.split("/") if part]
    bad = [part for part in parts if part not in (".", "..") and not _PATH_PART.match(part)]
    if bad:
        raise _Invalid(f"{value!r}: {bad[0]!r} may hold only letters, digits, '_' and '-'")
    prefix = "/" if value.startswith("/") else ""
    for part in parts:
        prefix = os.path.join(prefix, part)
        if os.path.islink(prefix):
            raise _Invalid(f"{value!r}: {prefix!r} is a symbolic link")
    return value


def _optional_bool(value: Any) -> Optional[bool]:
    return None if value is None else _bool(value)


def _plot_envelope(value: Any) -> Union[Dict[str, Any], str, None]:
    """A plot configuration: an object of its keys (checked when plotting), or a file's path."""
    if value is not None and not isinstance(value, dict) and not (isinstance(value, str) and value):
        raise _Invalid(f"must be an object of plot-config keys or the path of a plot-config file, "
                       f"got {json.dumps(value)}")
    return value


def _rank_list(value: Any) -> Tuple[int, ...]:
    if not isinstance(value, list) or not all(rank in RANK for rank in value):
        raise _Invalid(f"must be a list of ranks (integers {RANK}), got {json.dumps(value)}")
    return tuple(value)


def _metadata(value: Any) -> Dict[str, Any]:
    if not isinstance(value, dict):
        raise _Invalid(f"must be an object of keys and values, got {json.dumps(value)}")
    return dict(value)


# What only a dynamic collection has: each field's check (its default is DynamicConfig's).
_COLLECTION_FIELDS: Dict[str, Callable[[Any], Any]] = {
    "start_step": _in(START_STEP),
    "active": _in(ACTIVE_STEPS),
    "warmup": _in(STEP_COUNT),
    "prof_dir": _safe_path,
    "analyse": _bool,
    "async_mode": _bool,
    "is_rank": _bool,
    "rank_list": _rank_list,
    "metadata": _metadata,
    "auto_plot": _optional_bool,
    "plot_required": _bool,
    "plot": _plot_envelope,
}


def template() -> str:
    """The profiler_config.json written at init: every field with its default."""
    defaults = DynamicConfig(options=ProfilerOptions())
    content: Dict[str, Any] = {"activities": [ProfilerActivity.CPU.value, ProfilerActivity.CUDA.value]}
    content.update({flag: False for flag in _OPTION_FLAGS})
    for field in _COLLECTION_FIELDS:
        value = getattr(defaults, field)
        content[field] = list(value) if isinstance(value, tuple) else value
    content["experimental_config"] = ExperimentalConfig().to_dict()
    return json.dumps(content, indent=4) + "\n"


def parse(text: str) -> Tuple[Optional[DynamicConfig], List[str]]:
    """The config `text` holds, and the problems found (each naming its field; the field then
    takes its default). None when the text is not a JSON object: nothing of it is used."""
    try:
        content = json.loads(text)
    except ValueError as error:
        return None, [f"not valid JSON ({error})"]
    if not isinstance(content, dict):
        return None, [f"not a JSON object but {type(content).__name__}"]
    problems: List[str] = []
    known = set(_COLLECTION_FIELDS) | set(_OPTION_FLAGS) | {"activities", "experimental_config"}
    problems += [f"'{key}': unknown key, ignored" for key in content if key not in known]
    collection = {}
    for field, check in _COLLECTION_FIELDS.items():
        if field in content:
            try:
                collection[field] = check(content[field])
            except _Invalid as error:
                problems.append(f"'{field}' {error}; the default is used")
    return DynamicConfig(options=_options(content, problems), **collection), problems


def read_config(path: str) -> Tuple[Optional[DynamicConfig], List[str]]:
    """:func:`parse` of the file at `path`, which is never read through a symbolic link; None
    with the reason when it cannot be read."""
    if os.path.islink(path):
        return None, ["is a symbolic link: it is not read"]
    content = read_file(path)
    if content is None:
        return None, ["cannot be read"]
    return parse(content.decode("utf-8", errors="replace"))


def _options(content: Dict[str, Any], problems: List[str]) -> ProfilerOptions:
    """The profile options in `content`, each checked as profile() checks it."""
    accepted: Dict[str, Any] = {}
    for name in ("activities", *_OPTION_FLAGS):
        if name not in content:
            continue
        try:
            ProfilerOptions.checked("profiler_config.json", **{name: content[name]})
            accepted[name] = content[name]
        except (TypeError, ValueError) as error:
            problems.append(f"{error}; the default is used")
    if "experimental_config" in content:
        accepted["experimental_config"] = _experimental_config(content["experimental_config"], problems)
    return ProfilerOptions.checked("profiler_config.json", **accepted)


def _experimental_config(value: Any, problems: List[str]) -> ExperimentalConfig:
    """ExperimentalConfig from its JSON object (enum members by name or value, as the spec
    writes them: "Level1", ["text", "db"]); a field it refuses takes its default."""
    if not isinstance(value, dict):
        problems.append(f"'experimental_config' must be an object, got {json.dumps(value)}; the default is used")
        return ExperimentalConfig()
    accepted = {}
    for key, item in value.items():
        try:
            ExperimentalConfig(**{key: item})
            accepted[key] = item
        except TypeError as error:
            message = str(error) if "ExperimentalConfig" in str(error) else f"unknown key '{key}'"
            problems.append(f"experimental_config: {message}; ignored")
        except ValueError as error:
            problems.append(f"experimental_config: {error}; the default is used")
    return ExperimentalConfig(**accepted)


class ConfigWatcher:
    """Sees each new content of a profiler_config.json once it parses.

    ``poll()`` reads the file (through `read`, by default directly) and returns its config when
    its content differs from the last one taken (or, at first, from what the file held when the
    watcher was made: the template is not a request). A content that does not parse is reported
    once and not taken, so the file is read again at the next poll; a missing file gives nothing.

    `initial`: what the file held at first, when the caller knows it (it wrote the template just
    before), so that an edit saved before the watcher was made is still a change.
    """

    def __init__(self, path: str, report: Callable[[str], None],
                 read: Optional[Callable[[], Optional[bytes]]] = None, initial: Optional[bytes] = None) -> None:
        self.path = path
        self._report = report
        self._read = read or (lambda: read_file(path))
        self._taken = self._digest(initial if initial is not None else read_file(path))
        self._reported: Optional[str] = None  # the last content whose problems were reported

    def poll(self) -> Optional[DynamicConfig]:
        content = self._read()
        digest = self._digest(content)
        if content is None or digest == self._taken:
            return None
        config, problems = parse(content.decode("utf-8", errors="replace"))
        if problems and digest != self._reported:
            for problem in problems:
                self._report(f"{self.path}: {problem}")
            self._reported = digest
        if config is not None:
            self._taken = digest
        return config

    @staticmethod
    def _digest(content: Optional[bytes]) -> Optional[str]:
        return None if content is None else hashlib.sha256(content).hexdigest()
