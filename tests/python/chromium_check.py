"""Screenshots of HTML pages with headless Chromium, and a PNG reader to check them.

Standard library only: a test of a rendered page needs a Chromium binary and nothing else.
"""
from __future__ import annotations

import itertools
import operator
import shutil
import struct
import subprocess
import tempfile
import zlib
from collections import Counter
from pathlib import Path
from typing import List, NamedTuple, Optional, Union

PathLike = Union[str, Path]

_CHROMIUM_NAMES = ("chromium", "chromium-browser", "google-chrome")
_PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
_CHANNELS = {2: 3, 6: 4}  # PNG colour type -> bytes per pixel at bit depth 8: RGB, RGBA


def find_chromium() -> Optional[str]:
    """The path of the first Chromium on PATH (chromium, chromium-browser, google-chrome), or None."""
    for name in _CHROMIUM_NAMES:
        path = shutil.which(name)
        if path:
            return path
    return None


def screenshot(html_path: PathLike, png_path: PathLike, width: int = 1400, height: int = 900,
               timeout: float = 120.0) -> None:
    """Renders `html_path` in headless Chromium at width x height and writes the PNG to `png_path`.

    Raises RuntimeError, with Chromium's stderr, when Chromium is missing, fails, times out or
    writes no file.
    """
    chromium = find_chromium()
    if chromium is None:
        raise RuntimeError("no Chromium on PATH (looked for " + ", ".join(_CHROMIUM_NAMES) + ")")
    png = Path(png_path).resolve()
    png.unlink(missing_ok=True)  # so that an old file is never taken for the new screenshot
    # A profile of its own: a running browser's profile lock would make Chromium hand over and exit.
    with tempfile.TemporaryDirectory(prefix="perfprof-chromium-") as profile:
        command = [chromium, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
                   f"--user-data-dir={profile}", f"--screenshot={png}",
                   f"--window-size={width},{height}", Path(html_path).resolve().as_uri()]
        try:
            result = subprocess.run(command, capture_output=True, text=True, timeout=timeout)
        except subprocess.TimeoutExpired as error:
            stderr = error.stderr.decode(errors="replace") if isinstance(error.stderr, bytes) else error.stderr
            raise RuntimeError(f"Chromium took more than {timeout} s on {html_path}:\n{stderr or ''}") from None
    if result.returncode != 0 or not png.is_file():
        raise RuntimeError(f"Chromium failed (exit status {result.returncode}, "
                           f"screenshot {'written' if png.is_file() else 'missing'}) on {html_path}:\n"
                           f"{result.stderr}")


class Image(NamedTuple):
    width: int
    height: int
    channels: int  # 3 (RGB) or 4 (RGBA)
    pixels: bytes  # rows top to bottom, `channels` bytes per pixel


def _chunks(data: bytes):
    at = len(_PNG_SIGNATURE)
    while at + 8 <= len(data):
        length, kind = struct.unpack(">I4s", data[at:at + 8])
        body = data[at + 8:at + 8 + length]
        crc = data[at + 8 + length:at + 12 + length]
        if len(body) != length or len(crc) != 4:
            raise ValueError(f"truncated PNG chunk {kind!r}")
        if struct.unpack(">I", crc)[0] != zlib.crc32(kind + body):
            raise ValueError(f"bad CRC in PNG chunk {kind!r}")
        yield kind, body
        at += 12 + length


def _paeth(row: bytearray, prior: bytes, bpp: int) -> None:
    for i in range(len(row)):
        a = row[i - bpp] if i >= bpp else 0
        b = prior[i]
        c = prior[i - bpp] if i >= bpp else 0
        p = a + b - c
        pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
        predictor = a if pa <= pb and pa <= pc else (b if pb <= pc else c)
        row[i] = (row[i] + predictor) & 0xFF


def _average(row: bytearray, prior: bytes, bpp: int) -> None:
    for i in range(len(row)):
        left = row[i - bpp] if i >= bpp else 0
        row[i] = (row[i] + ((left + prior[i]) >> 1)) & 0xFF


def _unfilter(kind: int, row: bytearray, prior: bytes, bpp: int) -> None:
    """Reverses one row's filter in place (PNG spec, section 9); `prior` is the row above, decoded."""
    if kind == 0:
        return
    if kind == 1:  # Sub: a running sum per channel, done by itertools in C
        for channel in range(bpp):
            sums = itertools.accumulate(row[channel::bpp])
            row[channel::bpp] = bytes(map((0xFF).__and__, sums))
    elif kind == 2:  # Up
        row[:] = bytes(map((0xFF).__and__, map(operator.add, row, prior)))
    elif kind == 3:
        _average(row, prior, bpp)
    elif kind == 4:
        _paeth(row, prior, bpp)
    else:
        raise ValueError(f"unknown PNG filter type {kind}")


def read_png(png_path: PathLike) -> Image:
    """Decodes an 8-bit RGB or RGBA, non-interlaced PNG (what Chromium writes); ValueError otherwise."""
    data = Path(png_path).read_bytes()
    if not data.startswith(_PNG_SIGNATURE):
        raise ValueError(f"{png_path} is not a PNG file")
    header = None
    compressed: List[bytes] = []
    for kind, body in _chunks(data):
        if kind == b"IHDR":
            header = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            compressed.append(body)
        elif kind == b"IEND":
            break
    if header is None:
        raise ValueError(f"{png_path} has no IHDR chunk")
    width, height, depth, colour_type, _, _, interlace = header
    if depth != 8 or colour_type not in _CHANNELS or interlace != 0:
        raise ValueError(f"{png_path}: unsupported PNG (bit depth {depth}, colour type {colour_type}, "
                         f"interlace {interlace}); only 8-bit RGB/RGBA, non-interlaced")
    bpp = _CHANNELS[colour_type]
    stride = width * bpp
    raw = zlib.decompress(b"".join(compressed))
    if len(raw) != height * (stride + 1):
        raise ValueError(f"{png_path}: image data is {len(raw)} bytes, expected {height * (stride + 1)}")
    pixels = bytearray(height * stride)
    prior = bytes(stride)
    for y in range(height):
        start = y * (stride + 1)
        row = bytearray(raw[start + 1:start + 1 + stride])
        _unfilter(raw[start], row, prior, bpp)
        pixels[y * stride:(y + 1) * stride] = row
        prior = bytes(row)
    return Image(width, height, bpp, bytes(pixels))


def non_background_fraction(png_path: PathLike) -> float:
    """The fraction of pixels whose colour differs from the most common one (the background)."""
    image = read_png(png_path)
    total = image.width * image.height
    if total == 0:
        return 0.0
    channels = (image.pixels[c::image.channels] for c in range(image.channels))
    background_count = Counter(zip(*channels)).most_common(1)[0][1]
    return 1.0 - background_count / total
