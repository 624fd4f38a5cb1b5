"""`perfprof analyse` of a damaged capture (docs/reliability.md, "Damaged captures"): a chunk whose
payload was changed and its CRC recomputed is refused in one line naming the file's chunk and what
is wrong, and the steps before it are written; bytes that are not a capture fail the directory in
one line naming the file. The reader's own tests, with the fuzz test, are in tests/cpp/capture_fuzz."""
from __future__ import annotations

import json
import struct
import subprocess
import sys
import zlib
from pathlib import Path

from perfprof._run_directory import CAPTURE_FILE, OUTPUT_DIR
from child_process import child_env

CORPUS = Path(__file__).resolve().parents[1] / "cpp" / "capture_fuzz" / "corpus"
FILE_HEADER_BYTES = 16
CHUNK_HEADER = struct.Struct("<IIQ")  # kind, CRC-32 of the payload, payload size
COMPLETED_RANGES = 6
NAME_OFFSET = 8 + 3 * 8  # in a CompletedRanges payload: the list's count, then os_tid, begin, end


def chunk_offsets(data: bytes, kind: int) -> list:
    offsets, offset = [], FILE_HEADER_BYTES
    while offset + CHUNK_HEADER.size <= len(data):
        chunk_kind, _, size = CHUNK_HEADER.unpack_from(data, offset)
        if chunk_kind == kind:
            offsets.append(offset)
        offset += CHUNK_HEADER.size + size
    return offsets


def with_first_range_named(data: bytes, string_id: int) -> tuple:
    """The capture with its last CompletedRanges chunk's first range naming `string_id`, the CRC
    recomputed as a disk's damage copied with a checksum would leave it; and the chunk's offset."""
    damaged = bytearray(data)
    offset = chunk_offsets(data, COMPLETED_RANGES)[-1]
    _, _, size = CHUNK_HEADER.unpack_from(damaged, offset)
    payload = offset + CHUNK_HEADER.size
    struct.pack_into("<I", damaged, payload + NAME_OFFSET, string_id)
    struct.pack_into("<I", damaged, offset + 4, zlib.crc32(bytes(damaged[payload:payload + size])))
    return bytes(damaged), offset


def analyse(run_dir: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "perfprof", "analyse", str(run_dir)], capture_output=True, text=True,
                          env={**child_env(), "COLUMNS": "400"}, timeout=300)


def test_a_chunk_naming_a_string_no_chunk_gives_is_refused_and_the_steps_before_it_are_written(tmp_path):
    run_dir = tmp_path / "worker_perfprof"
    run_dir.mkdir()
    damaged, offset = with_first_range_named((CORPUS / "cpu_ops.ppcap").read_bytes(), 0xABCDEF)
    (run_dir / CAPTURE_FILE).write_bytes(damaged)
    result = analyse(run_dir)
    assert result.returncode == 0, result.stderr
    (warning,) = [line for line in result.stderr.splitlines() if "warning" in line]
    assert f"the chunk at byte {offset} (kind 6) does not decode: a completed range names string 11259375, " \
           "which no Strings chunk before it gives" in warning
    (trace_file,) = (run_dir / OUTPUT_DIR).glob("*.pt.trace.json")
    steps = [event["name"] for event in json.loads(trace_file.read_text())["traceEvents"]
             if event.get("name", "").startswith("ProfilerStep#")]
    assert steps, "the steps before the damaged chunk are in the trace"


def test_bytes_that_are_not_a_capture_fail_the_directory_in_one_line(tmp_path):
    run_dir = tmp_path / "worker_perfprof"
    run_dir.mkdir()
    header = (CORPUS / "gpu.ppcap").read_bytes()[:FILE_HEADER_BYTES]
    (run_dir / CAPTURE_FILE).write_bytes(header[:8] + b"\x07\x00" + header[10:] + bytes(range(256)))
    result = analyse(run_dir)
    assert result.returncode == 1
    (line,) = [line for line in result.stderr.splitlines() if line.strip()]
    assert line == f"failed {run_dir}: {run_dir / CAPTURE_FILE}: capture format 7.3: this perfprof reads 2.x"


def test_metadata_that_is_not_utf8_is_refused_with_its_chunk(tmp_path):
    run_dir = tmp_path / "worker_perfprof"
    run_dir.mkdir()
    (run_dir / CAPTURE_FILE).write_bytes((CORPUS / "found" / "metadata_not_utf8.ppcap").read_bytes())
    result = analyse(run_dir)  # was: failed with 'utf-8' codec can't decode byte 0xff in position 11
    assert result.returncode == 0, result.stderr
    assert "warning: the chunk at byte 891 (kind 19) does not decode: a metadata entry is not UTF-8 text" in \
        " ".join(result.stderr.split())
