"""The PNG reader of chromium_check on images from a small encoder written here (every filter
type), and a screenshot when a Chromium is installed."""
from __future__ import annotations

import random
import struct
import zlib
from pathlib import Path
from typing import List

import pytest

import chromium_check
from chromium_check import find_chromium, non_background_fraction, read_png, screenshot


def _paeth_predictor(a: int, b: int, c: int) -> int:
    p = a + b - c
    pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
    if pa <= pb and pa <= pc:
        return a
    return b if pb <= pc else c


def _filter_row(kind: int, row: bytes, prior: bytes, bpp: int) -> bytes:
    out = bytearray(len(row))
    for i, x in enumerate(row):
        a = row[i - bpp] if i >= bpp else 0
        b = prior[i]
        c = prior[i - bpp] if i >= bpp else 0
        predictor = (0, a, b, (a + b) // 2, _paeth_predictor(a, b, c))[kind]
        out[i] = (x - predictor) & 0xFF
    return bytes(out)


def _chunk(kind: bytes, body: bytes) -> bytes:
    return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))


def write_png(path: Path, width: int, height: int, channels: int, pixels: bytes, filters: List[int],
              colour_type: int = 0, depth: int = 8, interlace: int = 0) -> None:
    """An 8-bit RGB/RGBA PNG; row y uses filter filters[y % len(filters)]. The data is split over
    several IDAT chunks and an ancillary chunk precedes it, as real encoders may do."""
    stride = width * channels
    prior = bytes(stride)
    raw = bytearray()
    for y in range(height):
        row = pixels[y * stride:(y + 1) * stride]
        kind = filters[y % len(filters)]
        raw.append(kind)
        raw += _filter_row(kind, row, prior, channels)
        prior = row
    compressed = zlib.compress(bytes(raw))
    colour_type = colour_type or {3: 2, 4: 6}[channels]
    header = struct.pack(">IIBBBBB", width, height, depth, colour_type, 0, 0, interlace)
    third = max(1, len(compressed) // 3)
    idat = b"".join(_chunk(b"IDAT", compressed[i:i + third]) for i in range(0, len(compressed), third))
    path.write_bytes(b"\x89PNG\r\n\x1a\n" + _chunk(b"IHDR", header) + _chunk(b"tEXt", b"Software\0test")
                     + idat + _chunk(b"IEND", b""))


def _noise(width: int, height: int, channels: int, seed: int) -> bytes:
    generator = random.Random(seed)
    # Smooth gradients plus noise, so every predictor sees non-trivial neighbours.
    return bytes((x * 7 + y * 3 + c * 50 + generator.randrange(40)) & 0xFF
                 for y in range(height) for x in range(width) for c in range(channels))


@pytest.mark.parametrize("channels", [3, 4])
@pytest.mark.parametrize("filters", [[0], [1], [2], [3], [4], [0, 1, 2, 3, 4], [4, 3, 2, 1, 0]])
def test_read_png_reverses_every_filter(tmp_path, channels, filters):
    width, height = 13, 10
    pixels = _noise(width, height, channels, seed=len(filters) * 10 + filters[0])
    path = tmp_path / "image.png"
    write_png(path, width, height, channels, pixels, filters)
    image = read_png(path)
    assert (image.width, image.height, image.channels) == (width, height, channels)
    assert image.pixels == pixels


def test_read_png_single_pixel_and_single_row(tmp_path):
    for width, height in [(1, 1), (17, 1), (1, 9)]:
        pixels = _noise(width, height, 4, seed=width)
        path = tmp_path / f"{width}x{height}.png"
        write_png(path, width, height, 4, pixels, [4, 1, 3, 2])
        assert read_png(path).pixels == pixels


def test_non_background_fraction_counts_pixels_unlike_the_most_common(tmp_path):
    width, height = 20, 10
    white, red, blue = b"\xff\xff\xff", b"\xff\x00\x00", b"\x00\x00\xff"
    pixels = bytearray(white * (width * height))
    for i in (3, 50, 51, 199):
        pixels[i * 3:i * 3 + 3] = red
    for i in range(100, 110):
        pixels[i * 3:i * 3 + 3] = blue
    path = tmp_path / "dots.png"
    write_png(path, width, height, 3, bytes(pixels), [0, 1, 2, 3, 4])
    assert non_background_fraction(path) == pytest.approx(14 / 200)


def test_non_background_fraction_compares_alpha_too(tmp_path):
    pixels = b"\x00\x00\x00\xff" * 6 + b"\x00\x00\x00\x00" * 2
    path = tmp_path / "alpha.png"
    write_png(path, 4, 2, 4, pixels, [1])
    assert non_background_fraction(path) == pytest.approx(2 / 8)


@pytest.mark.parametrize("kwargs, message", [
    ({"depth": 16}, "bit depth 16"),
    ({"colour_type": 3}, "colour type 3"),
    ({"interlace": 1}, "interlace 1"),
])
def test_read_png_rejects_what_it_cannot_decode(tmp_path, kwargs, message):
    path = tmp_path / "odd.png"
    write_png(path, 2, 2, 3, bytes(12), [0], **kwargs)
    with pytest.raises(ValueError, match=message):
        read_png(path)


def test_read_png_rejects_non_png_and_corrupt_chunks(tmp_path):
    text = tmp_path / "page.html"
    text.write_text("<html></html>")
    with pytest.raises(ValueError, match="not a PNG"):
        read_png(text)
    path = tmp_path / "corrupt.png"
    write_png(path, 4, 4, 3, bytes(48), [0])
    data = bytearray(path.read_bytes())
    data[20] ^= 0xFF  # inside IHDR's width
    path.write_bytes(bytes(data))
    with pytest.raises(ValueError, match="CRC"):
        read_png(path)


def test_find_chromium_looks_on_path(tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", str(tmp_path))
    assert find_chromium() is None
    with pytest.raises(RuntimeError, match="no Chromium"):
        screenshot(tmp_path / "page.html", tmp_path / "page.png")
    browser = tmp_path / "chromium-browser"
    browser.write_text("#!/bin/sh\nexit 0\n")
    browser.chmod(0o755)
    assert find_chromium() == str(browser)


def test_screenshot_reports_chromium_failure_with_its_stderr(tmp_path, monkeypatch):
    browser = tmp_path / "chromium"
    browser.write_text("#!/bin/sh\necho 'cannot open display' >&2\nexit 3\n")
    browser.chmod(0o755)
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(RuntimeError, match="(?s)exit status 3.*cannot open display"):
        screenshot(tmp_path / "page.html", tmp_path / "page.png")


@pytest.mark.skipif(find_chromium() is None, reason="no Chromium installed")
def test_screenshot_of_a_page(tmp_path):
    page = tmp_path / "page.html"
    page.write_text("<!DOCTYPE html><html><body style='margin:0;background:white'>"
                    "<div style='width:200px;height:100px;background:rgb(200,0,0)'></div></body></html>")
    png = tmp_path / "page.png"
    screenshot(page, png, width=400, height=300)
    image = read_png(png)
    assert (image.width, image.height) == (400, 300)
    assert non_background_fraction(png) == pytest.approx(200 * 100 / (400 * 300), abs=0.01)
    first = image.pixels[:image.channels]
    assert first[:3] == b"\xc8\x00\x00"


def test_module_is_standard_library_only():
    source = Path(chromium_check.__file__).read_text()
    imported = {line.split()[1].split(".")[0] for line in source.splitlines()
                if line.startswith(("import ", "from "))}
    assert imported <= {"__future__", "itertools", "operator", "shutil", "struct", "subprocess",
                        "tempfile", "zlib", "collections", "pathlib", "typing"}
