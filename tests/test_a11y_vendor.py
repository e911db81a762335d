"""The vendored axe-core (tests/vendor/) is the release its README names, byte for byte, with its licence."""

import hashlib
from pathlib import Path

from tests.fixtures.axe import AXE_JS

VERSION = "4.14.1"
SHA256 = "29348999450cdf2849a8e70b7912fc2da85a849da39c0d0d5394f51d4a9ed95c"  # of axe-core@4.14.1's axe.min.js


def test_axe_core_is_the_named_release():
    data = AXE_JS.read_bytes()
    assert data.startswith(f"/*! axe v{VERSION}".encode())
    assert hashlib.sha256(data).hexdigest() == SHA256
    readme = (AXE_JS.parent / "README.md").read_text(encoding="utf-8")
    assert f"axe-core {VERSION}" in readme and SHA256 in readme


def test_axe_core_licence_is_kept_and_nothing_ships_it():
    assert "Mozilla Public License" in (AXE_JS.parent / "axe-core-LICENSE.txt").read_text(encoding="utf-8")
    root = Path(__file__).resolve().parents[1]
    pyproject = (root / "pyproject.toml").read_text(encoding="utf-8")
    assert "tests/vendor" not in pyproject and "axe" not in pyproject  # not in the package's data
