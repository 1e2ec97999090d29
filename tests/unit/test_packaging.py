"""Packaging: pyproject gives version ranges (no exact pins, torch included), requirements.txt the
exact tested pins inside those ranges, one version string in pyproject, the package and the
CHANGELOG."""

from __future__ import annotations

import re
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

import pytest
from packaging.requirements import Requirement

import logrerank

tomllib = pytest.importorskip("tomllib")  # Python 3.11+
ROOT = Path(__file__).resolve().parents[2]
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]


def _pins(path: Path) -> dict[str, Requirement]:
    reqs = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        line = line.split("#")[0].strip()
        if line and not line.startswith("-"):
            req = Requirement(line)
            reqs[req.name.lower().replace("_", "-")] = req
    return reqs


def _ranges() -> list[Requirement]:
    deps = list(PYPROJECT["dependencies"])
    for extra in PYPROJECT["optional-dependencies"].values():
        deps.extend(extra)
    return [Requirement(d) for d in deps]


def test_pyproject_has_ranges_not_pins() -> None:
    for req in _ranges():
        ops = {spec.operator for spec in req.specifier}
        assert "==" not in ops and "===" not in ops, req
        assert ">=" in ops and "<" in ops, f"{req}: give a lower and an upper bound"
    torch = next(r for r in _ranges() if r.name == "torch")
    assert not any(spec.operator == "==" for spec in torch.specifier)


def test_requirements_pin_exact_versions_inside_the_ranges() -> None:
    pins = _pins(ROOT / "requirements.txt") | _pins(ROOT / "requirements-dev.txt")
    for req in pins.values():
        assert [s.operator for s in req.specifier] == ["=="], f"{req}: pin it exactly"
    for req in _ranges():
        pinned = pins.get(req.name.lower().replace("_", "-"))
        assert pinned is not None, f"{req.name} has no exact pin in requirements*.txt"
        assert req.specifier.contains(next(iter(pinned.specifier)).version), (req, pinned)


@pytest.mark.parametrize("name", ["torch", "transformers", "gradio", "numpy"])
def test_installed_versions_fit_the_ranges(name: str) -> None:
    try:
        installed = version(name)
    except PackageNotFoundError:
        pytest.skip(f"{name} not installed")
    req = next(r for r in _ranges() if r.name == name)
    assert req.specifier.contains(installed, prereleases=True), (req, installed)


def test_one_version_everywhere() -> None:
    assert logrerank.__version__ == PYPROJECT["version"]
    changelog = (ROOT / "CHANGELOG.md").read_text(encoding="utf-8")
    assert re.search(rf"^## {re.escape(PYPROJECT['version'])} - ", changelog, re.M)
