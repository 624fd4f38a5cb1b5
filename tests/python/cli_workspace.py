"""A folder in which a test runs `perfprof` commands as a user's shell runs them: under the
umask 022, with a home and an import cache of its own, on a small job that `perfprof run`
profiles in a second (three explicit steps, no torch). The inputs the test writes itself live in
``inputs/``, apart from what the commands write."""
from __future__ import annotations

import shutil
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import List

from child_process import child_env

UMASK = 0o022

# Three explicit steps, no torch: `perfprof run --steps-on explicit` profiles it in a second.
JOB = "from perfprof import dynamic_profile as dp\nfor _ in range(3):\n    dp.step()\n"
# A sweep's script: three steps and one recorded output (sweep --verify keeps it as a .npy file).
SWEEP_JOB = textwrap.dedent("""
    import os
    from perfprof import dynamic_profile as dp
    from perfprof.experiments import record_output
    for _ in range(3):
        dp.step()
    record_output("result", [float(os.environ["N"])] * 4)
""")


class Workspace:
    """A folder for one test's commands: their inputs, a home and an import cache of their own."""

    def __init__(self, root: Path, **environment: str) -> None:
        self.root = root
        self.inputs = root / "inputs"
        self.inputs.mkdir(parents=True)
        (self.inputs / "job.py").write_text(JOB)
        (self.inputs / "sweep_job.py").write_text(SWEEP_JOB)
        self.home = root / "home"  # perfprof's folder there: self.home / ".perfprof"
        self.cache = root / "cache"
        self.env = dict(child_env(), HOME=str(self.home), PERFPROF_CACHE_DIR=str(self.cache), **environment)

    def perfprof(self, *arguments: str, expect: int = 0, **environment: str) -> subprocess.CompletedProcess:
        """Run `perfprof ARGUMENTS` in the workspace under the umask 022."""
        result = subprocess.run([sys.executable, "-m", "perfprof", *arguments], cwd=str(self.root),
                                env={**self.env, **environment}, umask=UMASK, capture_output=True, text=True,
                                timeout=600)
        assert result.returncode == expect, result.stdout + result.stderr
        return result

    def run(self, output: str, *options: str, **environment: str) -> Path:
        """A `perfprof run` of the three-step job into the folder `output`; that folder."""
        self.perfprof("run", "-o", output, "--steps-on", "explicit", "--activities", "cpu", *options,
                      str(self.inputs / "job.py"), **environment)
        return self.root / output

    def copy(self, source: Path, name: str) -> Path:
        """A copy of `source` (written by perfprof: its modes are kept) for a command to work on."""
        return Path(shutil.copytree(source, self.root / name))

    def two_rank_job(self, output: str = "job") -> Path:
        """The plain runs (a Chrome trace, no database) of a job's two ranks in the folder `output`."""
        for rank in range(2):
            self.run(output, RANK=str(rank), WORLD_SIZE="2")
        return self.root / output


def run_dirs(folder: Path) -> List[Path]:
    """The run directories in `folder` (`perfprof run -o` also writes its log/ folder there)."""
    return sorted(folder.glob("*_perfprof"))
