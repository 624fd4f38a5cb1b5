"""Tests that need a real NVIDIA GPU: skipped, with the reason, on machines without one."""
import pytest


def _cuda_unavailable_reason():
    try:
        import torch
    except ImportError:
        return "PyTorch is not installed"
    if not torch.cuda.is_available():
        return "no CUDA GPU visible to PyTorch"
    return None


def pytest_collection_modifyitems(config, items):
    reason = _cuda_unavailable_reason()
    if reason is None:
        return
    for item in items:
        if "tests/gpu" in str(item.fspath):
            item.add_marker(pytest.mark.skip(reason=reason))
