"""One reader of profiler_config.json per node, whatever the number of ranks on it.

Were every rank to poll a shared filesystem every two seconds, 8 ranks on each of 1,000 nodes
would make 4,000 metadata and read operations a second on the file server. Instead, the processes
of one node that watch the same file elect one reader: the one holding an exclusive ``flock`` on
a node-local lock file. The reader reads the shared file at each poll and mirrors its bytes into
a node-local file (under /dev/shm, memory-backed), written to a temporary name and renamed so
that no one reads half a mirror. The other processes read the mirror. So the shared filesystem
sees one read per node per poll interval.

The kernel releases a ``flock`` when its holder exits, SIGKILL included, so the next process to
poll takes over as reader; a reader that closes normally removes its mirror, and a new reader
removes a mirror left by a killed one before it reads, so a stale mirror is never taken for a
change. Where no node-local directory can be made, each process reads the shared file itself.
"""
from __future__ import annotations

import fcntl
import hashlib
import os
import tempfile
from typing import Callable, Optional

from ._files import replaced_whole


def read_file(path: str) -> Optional[bytes]:
    """The bytes of `path`, or None when it cannot be read (missing, unreadable, or a symbolic
    link: a config is never read through one)."""
    try:
        with open(os.open(path, os.O_RDONLY | os.O_NOFOLLOW), "rb") as file:
            return file.read()
    except OSError:
        return None


class NodeConfigReader:
    """``read()``: the current bytes of the shared file at `path`, read once per node (see the
    module's docstring). `log` receives one line when this process becomes the node's reader."""

    def __init__(self, path: str, log: Callable[[str], None]) -> None:
        self.path = path
        self._log = log
        self._is_reader = False
        self._mirrored: Optional[bytes] = None
        self._lock_fd: Optional[int] = None
        self._said_link = False
        key = hashlib.sha256(os.path.abspath(path).encode()).hexdigest()[:16]
        directory = _node_directory()
        if directory is None:
            log(f"no node-local directory for sharing {path}; this process reads it itself")
            self._is_reader = True
            self._mirror_path = None
            return
        self._mirror_path = os.path.join(directory, f"{key}.config")
        try:
            self._lock_fd = os.open(os.path.join(directory, f"{key}.lock"), os.O_RDWR | os.O_CREAT, 0o600)
        except OSError as error:
            log(f"cannot open the node's reader lock ({error}); this process reads {path} itself")
            self._is_reader = True

    @property
    def is_reader(self) -> bool:
        """Whether this process reads the shared file for the node."""
        return self._is_reader

    def read(self) -> Optional[bytes]:
        if self._is_reader or self._become_reader():
            content = read_file(self.path)
            if content is None and os.path.islink(self.path) and not self._said_link:
                self._log(f"{self.path} is a symbolic link: it is not read")
                self._said_link = True
            self._mirror(content)
            return content
        return read_file(self._mirror_path) if self._mirror_path else None

    def close(self) -> None:
        """Give up being the node's reader (another process takes over at its next poll)."""
        if self._lock_fd is None:
            return
        if self._is_reader and self._mirror_path:
            _remove(self._mirror_path)
        os.close(self._lock_fd)  # releases the flock
        self._lock_fd = None
        self._is_reader = False

    def _become_reader(self) -> bool:
        if self._lock_fd is None:
            return False
        try:
            fcntl.flock(self._lock_fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            return False  # another process of this node reads the file
        if self._mirror_path:
            _remove(self._mirror_path)  # left by a reader that was killed: not this file's content
        self._is_reader = True
        self._log(f"this process reads {self.path} for the node (pid {os.getpid()}); "
                  f"the node's other processes read its copy {self._mirror_path}")
        return True

    def _mirror(self, content: Optional[bytes]) -> None:
        if self._mirror_path is None or (content == self._mirrored and content is not None):
            return
        self._mirrored = content
        if content is None:
            _remove(self._mirror_path)
            return
        try:
            with replaced_whole(self._mirror_path, "wb") as file:
                file.write(content)
        except OSError as error:
            self._log(f"cannot write the node's copy {self._mirror_path}: {error}")
            self._mirrored = None  # tried again at the next poll


def _node_directory() -> Optional[str]:
    """A directory private to this user on this node: /dev/shm's when there is one, else the
    temporary directory's."""
    base = "/dev/shm" if os.path.isdir("/dev/shm") and os.access("/dev/shm", os.W_OK) else tempfile.gettempdir()
    directory = os.path.join(base, f"perfprof-dp-{os.getuid()}")
    try:
        os.makedirs(directory, mode=0o700, exist_ok=True)
        if os.stat(directory).st_uid != os.getuid():  # made by someone else: not trusted
            return None
    except OSError:
        return None
    return directory


def _remove(path: str) -> None:
    try:
        os.remove(path)
    except OSError:
        pass
