"""The wheel installs nothing outside ``clparse/``, and Alembic finds the migrations it ships.

``migrations/`` stays at the top of the repository; ``pyproject.toml`` maps it into the wheel as
``clparse/migrations/``. The wheel is built from a copy of the working tree (so the checkout gets no
``build/`` or ``*.egg-info`` of its own), with pip's build isolation as a release would; without an index
to fetch setuptools from, the build falls back to the setuptools and wheel of the running interpreter.
"""

from __future__ import annotations

import configparser
import importlib.util
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from tests.conftest import read_rows

pytestmark = pytest.mark.slow  # a wheel build: about 10 s with the build environment cached, more without

ROOT = Path(__file__).resolve().parents[1]
VERSION = "0.1.0"
DIST_INFO = f"clparse-{VERSION}.dist-info/"
IGNORED = (".git", ".venv", ".mypy_cache", ".ruff_cache", ".hypothesis", ".pytest_cache", "build", "dist",
           "*.egg-info", "__pycache__", "db", "*.sqlite", "*.sqlite-wal", "*.sqlite-shm")


def _build_wheel(source: Path, out: Path) -> Path:
    command = [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-input", "-w", str(out), str(source)]
    isolated = subprocess.run(command, capture_output=True, text=True, check=False)
    if isolated.returncode != 0:
        if importlib.util.find_spec("setuptools") is None:
            pytest.fail(f"the wheel did not build:\n{isolated.stdout}\n{isolated.stderr}")
        local = subprocess.run([*command[:4], "--no-build-isolation", *command[4:]], capture_output=True,
                               text=True, check=False)
        assert local.returncode == 0, f"no wheel:\n{isolated.stderr}\n{local.stdout}\n{local.stderr}"
    (wheel,) = out.glob("clparse-*.whl")
    return wheel


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    scratch = tmp_path_factory.mktemp("packaging")
    source = scratch / "source"
    shutil.copytree(ROOT, source, ignore=shutil.ignore_patterns(*IGNORED))
    return _build_wheel(source, scratch / "dist")


@pytest.fixture(scope="module")
def names(wheel: Path) -> list[str]:
    with zipfile.ZipFile(wheel) as archive:
        return archive.namelist()


def test_the_wheel_holds_clparse_only(wheel: Path, names: list[str]) -> None:
    assert wheel.name == f"clparse-{VERSION}-py3-none-any.whl"
    outside = [name for name in names if not name.startswith(("clparse/", DIST_INFO))]
    assert outside == []
    with zipfile.ZipFile(wheel) as archive:
        if f"{DIST_INFO}top_level.txt" in names:
            assert archive.read(f"{DIST_INFO}top_level.txt").decode().split() == ["clparse"]


def test_the_wheel_ships_the_migrations_inside_clparse(wheel: Path, names: list[str]) -> None:
    shipped = sorted(path.relative_to(ROOT).as_posix() for path in (ROOT / "migrations").rglob("*")
                     if path.is_file() and "__pycache__" not in path.parts)
    for needed in ("migrations/env.py", "migrations/script.py.mako", "migrations/alembic.ini"):
        assert needed in shipped
    assert any(name.startswith("migrations/versions/") and name.endswith(".py") for name in shipped)
    with zipfile.ZipFile(wheel) as archive:
        for name in shipped:
            assert archive.read(f"clparse/{name}") == (ROOT / name).read_bytes(), name


def test_the_wheel_ships_every_file_of_clparse(names: list[str]) -> None:
    """The packages are listed by hand in pyproject.toml (see there why): a new one must be added."""
    in_checkout = sorted(path.relative_to(ROOT).as_posix() for path in (ROOT / "clparse").rglob("*")
                         if path.is_file() and "__pycache__" not in path.parts)
    assert sorted(set(in_checkout) - set(names)) == []


def test_the_console_script_points_into_the_package(wheel: Path) -> None:
    entry_points = configparser.ConfigParser()
    with zipfile.ZipFile(wheel) as archive:
        entry_points.read_string(archive.read(f"{DIST_INFO}entry_points.txt").decode())
    assert dict(entry_points["console_scripts"]) == {"clparse": "clparse.cli:run"}


def test_the_unpacked_wheel_creates_and_upgrades_databases(wheel: Path, tmp_path: Path) -> None:
    """Run from the wheel's own files (first on sys.path, away from the checkout): ``clparse init``
    creates a database and upgrades an old one, with the migrations found inside clparse/."""
    from clparse.store.database import known_revisions

    site = tmp_path / "site"
    with zipfile.ZipFile(wheel) as archive:
        archive.extractall(site)
    old = tmp_path / "old.sqlite"
    shutil.copyfile(ROOT / "tests" / "data" / "old_schemas" / "schema-0001.sqlite", old)
    script = ("import sys, clparse\n"
              "from pathlib import Path\n"
              "from clparse.cli import main\n"
              "from clparse.store.database import migrations_dir\n"
              f"assert clparse.__file__.startswith({str(site)!r}), clparse.__file__\n"
              f"assert migrations_dir() == Path({str(site)!r}) / 'clparse' / 'migrations', migrations_dir()\n"
              "sys.argv[1:] = ['init', '--db', sys.argv[1]]\n"
              "main()\n")
    for db in (tmp_path / "new.sqlite", old):
        done = subprocess.run([sys.executable, "-c", script, str(db)], cwd=tmp_path, capture_output=True,
                              text=True, check=False, env={**os.environ, "PYTHONPATH": str(site)})
        assert done.returncode == 0, done.stderr
        assert read_rows(db, "SELECT version_num FROM alembic_version") == [(known_revisions()[-1],)]
    assert (tmp_path / "old.sqlite.schema-0001.bak").exists()
