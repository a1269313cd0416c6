"""The documented top-level API resolves, stays light, and no area exports a clashing name."""

from __future__ import annotations

import importlib
import pkgutil
import subprocess
import sys

import pytest

import medrealmm

AREAS = [m.name for m in pkgutil.iter_modules(medrealmm.__path__) if not m.name.startswith("_")]


def test_every_documented_name_resolves_and_is_documented() -> None:
    for name in medrealmm.__all__:
        assert getattr(medrealmm, name) is not None
        assert f"``{name}``" in (medrealmm.__doc__ or "") or name == "__version__"
    assert set(medrealmm.__all__) == {"__version__", *medrealmm._MODULE_OF}
    assert set(medrealmm.__all__) <= set(dir(medrealmm))
    with pytest.raises(AttributeError):
        _ = medrealmm.not_an_api_name


def test_importing_one_area_does_not_load_every_phase() -> None:
    code = "import sys, medrealmm.schema; print('medrealmm.report' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_no_two_areas_export_different_things_under_one_name() -> None:
    owners: dict[str, dict[int, str]] = {}
    for area in AREAS:
        if area in ("cli", "testing"):
            continue
        module = importlib.import_module(f"medrealmm.{area}")
        for name in getattr(module, "__all__", []):
            if name.isupper():  # constants such as TASK names are namespaced by their value
                continue
            owners.setdefault(name, {})[id(getattr(module, name))] = area
    clashes = {name: sorted(areas.values()) for name, areas in owners.items() if len(areas) > 1}
    assert clashes == {}


def test_the_demo_and_llm_areas_do_not_load_network_clients() -> None:
    """Only code that talks to a server imports the SDK or an HTTP client (the SDK most of a
    CPU-second per process, aiohttp and httpx a tenth each); the offline demo and every
    import of ``medrealmm.llm`` go without them."""
    code = (
        "import sys, medrealmm.llm, medrealmm.pipeline.demo, medrealmm.cli; "
        "print(sorted(m for m in ('openai', 'aiohttp', 'httpx') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
