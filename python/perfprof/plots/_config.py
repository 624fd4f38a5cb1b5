"""The plot configuration: which plots, their theme and sizes, how runs are grouped.

It is a YAML file (``default_plot_config.yaml`` in this package, commented, lists every key).
The file used is the first of the priority chain (:func:`config_path_for`); the keys it gives
replace the shipped defaults, the others keep them. An unknown key, or an unknown plot name, is
an error that names the closest valid one.
"""
from __future__ import annotations

import dataclasses
import difflib
import os
from typing import Any, Callable, Dict, Mapping, Optional, Sequence, Tuple

from .._files import create_once, make_directory
from ._catalogue import MULTI_RUN_PLOTS, SINGLE_RUN_PLOTS
from ._style import THEMES

DEFAULT_CONFIG = os.path.join(os.path.dirname(__file__), "default_plot_config.yaml")
RUN_CONFIG_FILE = ".perfprof-plot-config.yaml"
USER_CONFIG = os.path.join("~", ".perfprof", "plot_config.yaml")


class PlotConfigError(ValueError):
    """A plot configuration that cannot be used; the message names the file and the key."""


@dataclasses.dataclass(frozen=True)
class PlotConfig:
    """A checked plot configuration (the keys of ``default_plot_config.yaml``)."""

    theme: str
    top_n: int
    utilization_bins: int
    single_run_plots: Tuple[str, ...]
    multi_run_plots: Tuple[str, ...]
    baselines: Tuple[str, ...]
    treatments: Tuple[str, ...]
    source: str  # the file it was read from (for the plot log)


def _choice(choices: Sequence[str]) -> Callable[[Any], str]:
    def check(value: Any) -> str:
        if value not in choices:
            raise PlotConfigError(f"must be one of {', '.join(choices)}, got {value!r}{_closest(value, choices)}")
        return value
    return check


def _positive_int(value: Any) -> int:
    if not isinstance(value, int) or isinstance(value, bool) or value < 1:
        raise PlotConfigError(f"must be an integer of 1 or more, got {value!r}")
    return value


def _strings(value: Any) -> Tuple[str, ...]:
    if value is None:  # a YAML key with nothing after it: an empty list
        return ()
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise PlotConfigError(f"must be a list of strings, got {value!r}")
    return tuple(value)


def _plot_names(known: Mapping[str, object]) -> Callable[[Any], Tuple[str, ...]]:
    def check(value: Any) -> Tuple[str, ...]:
        names = _strings(value)
        for name in names:
            if name not in known:
                raise PlotConfigError(f"has no plot {name!r}{_closest(name, list(known))}; "
                                      f"the plots: {', '.join(known)}")
        return names
    return check


# Each key's check; the key's value comes from the shipped default when a file leaves it out.
_FIELDS: Dict[str, Callable[[Any], Any]] = {
    "theme": _choice(list(THEMES)),
    "top_n": _positive_int,
    "utilization_bins": _positive_int,
    "single_run_plots": _plot_names(SINGLE_RUN_PLOTS),
    "multi_run_plots": _plot_names(MULTI_RUN_PLOTS),
    "baselines": _strings,
    "treatments": _strings,
}


def _closest(word: object, choices: Sequence[str]) -> str:
    """`` (did you mean 'x'?)`` for the valid choice closest to `word`, or nothing."""
    close = difflib.get_close_matches(str(word), choices, n=1)
    return f" (did you mean {close[0]!r}?)" if close else ""


def parse_config(content: Mapping[str, Any], source: str) -> PlotConfig:
    """Check `content` (a plot configuration's keys) over the shipped defaults.

    Raises :class:`PlotConfigError` naming `source` and the key at fault.
    """
    unknown = [key for key in content if key not in _FIELDS]
    if unknown:
        key = unknown[0]
        raise PlotConfigError(f"{source}: unknown key {key!r}{_closest(key, list(_FIELDS))}; "
                              f"the keys: {', '.join(_FIELDS)}")
    values = {**_read_yaml(DEFAULT_CONFIG), **content}
    checked = {}
    for key, check in _FIELDS.items():
        try:
            checked[key] = check(values[key])
        except PlotConfigError as error:
            raise PlotConfigError(f"{source}: {key!r} {error}") from None
    return PlotConfig(source=source, **checked)


def load_config(path: str) -> PlotConfig:
    """The plot configuration in the YAML file at `path` (see :func:`parse_config`)."""
    return parse_config(_read_yaml(path), path)


def _read_yaml(path: str) -> Dict[str, Any]:
    import yaml

    try:
        with open(path, encoding="utf-8") as file:
            content = yaml.safe_load(file)
    except OSError as error:
        raise PlotConfigError(f"{path}: cannot be read: {error.strerror}") from None
    except yaml.YAMLError as error:
        raise PlotConfigError(f"{path}: not valid YAML: {error}") from None
    if content is None:  # an empty file, or only comments: every default
        return {}
    if not isinstance(content, dict):
        raise PlotConfigError(f"{path}: must be a mapping of keys to values, got {type(content).__name__}")
    return content


def config_path_for(explicit: Optional[str], run_config_dir: str,
                    note: Callable[[str], None] = lambda _: None) -> str:
    """The plot-config file to use, the first of: `explicit` (``--config``), the run's
    ``<run_config_dir>/.perfprof-plot-config.yaml``, ``~/.perfprof/plot_config.yaml`` (made
    from the shipped default when missing), the shipped default. `note` hears why a user file
    could not be made."""
    if explicit is not None:
        return explicit
    run_config = os.path.join(run_config_dir, RUN_CONFIG_FILE)
    if os.path.isfile(run_config):
        return run_config
    user_config = os.path.expanduser(USER_CONFIG)
    try:
        make_directory(os.path.dirname(user_config), follow_link=True)
        with open(DEFAULT_CONFIG, encoding="utf-8") as default:
            create_once(user_config, user_config_template(default.read()))
    except OSError as error:  # a read-only home must not stop the plots
        note(f"cannot create {user_config} ({error.strerror}); the shipped default is used")
        return DEFAULT_CONFIG
    return user_config


_TEMPLATE_NOTE = """\
# Made by perfprof from its defaults, every setting commented out: the defaults apply, plots added
# by later versions included. Uncomment a setting (a list: its key and items) to change it.
#
"""


def user_config_template(default_text: str) -> str:
    """The text of a new ``~/.perfprof/plot_config.yaml``: the shipped default with every setting
    commented out, so that it documents the keys and changes nothing until edited."""
    lines = [line if not line.strip() or line.lstrip().startswith("#") else f"# {line}"
             for line in default_text.splitlines()]
    return _TEMPLATE_NOTE + "\n".join(lines) + "\n"


def run_config_text(envelope: "Mapping[str, Any] | str") -> str:
    """The text of a run's ``.perfprof-plot-config.yaml`` from a ``plot`` envelope: an inline
    mapping (checked first) or the path of a plot-config file (copied as it is)."""
    if isinstance(envelope, str):
        load_config(envelope)  # a broken file fails now, not at a later `perfprof plot`
        with open(envelope, encoding="utf-8") as file:
            return file.read()
    import yaml

    parse_config(envelope, "the plot configuration")
    return "# The plot configuration this run was profiled with (perfprof plot reads it).\n" + \
        yaml.safe_dump(dict(envelope), sort_keys=False)

