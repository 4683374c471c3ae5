"""Where the conformance vectors are: $MEMBRANE_VECTORS, else ../shared/vectors beside
the checkout. Missing vectors fail the tests that need them, loudly."""

import json
import os
import pathlib

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]


def vectors_dir() -> pathlib.Path:
    return pathlib.Path(os.environ.get("MEMBRANE_VECTORS", ROOT.parent / "shared" / "vectors"))


def load(name):
    path = vectors_dir() / name
    if not path.is_file():
        pytest.fail(f"conformance vectors not found: {path} (set MEMBRANE_VECTORS)")
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


@pytest.fixture(scope="session")
def vectors():
    return vectors_dir()
