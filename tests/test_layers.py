"""The layers keep their places (issue #15): the database behind one door at the bottom.

* the parser never imports the trainer: the database is the only hand-off between them;
* SQLAlchemy and APSW are imported only inside ``clparse/store`` (migrations aside);
* ``clparse/store`` imports nothing of clparse above it: it speaks in plain rows and arrays.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
STORE = ROOT / "clparse" / "store"


def imported_modules(path: Path) -> set[str]:
    """Every module a file imports, at any depth (function-level imports too)."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            found.add(node.module)  # and `from clparse import api` as clparse.api
            found.update(f"{node.module}.{alias.name}" for alias in node.names)
    return found


def sources() -> list[Path]:
    return sorted((ROOT / "clparse").rglob("*.py")) + [ROOT / "cli.py"]


def test_importing_the_parser_loads_no_trainer_and_no_nltk() -> None:
    code = ("import sys, clparse.parser; print(sorted(m for m in sys.modules "
            "if m.startswith(('clparse.boost', 'clparse.train', 'clparse.store.training', 'nltk'))))")
    loaded = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True,
                            text=True).stdout.strip()
    assert loaded == "[]"  # nltk too: it is imported only when the stored tagger is first used


def test_sqlalchemy_and_apsw_are_imported_only_in_store() -> None:
    outside = {str(path.relative_to(ROOT)): sorted(m for m in imported_modules(path)
                                                   if m.split(".")[0] in ("sqlalchemy", "apsw"))
               for path in sources() if STORE not in path.parents}
    assert {path: modules for path, modules in outside.items() if modules} == {}


def test_store_imports_nothing_above_it() -> None:
    allowed = ("clparse.store", "clparse.errors")
    upward = {str(path.relative_to(ROOT)): sorted(m for m in imported_modules(path)
                                                  if m.startswith("clparse") and not m.startswith(allowed))
              for path in STORE.glob("*.py")}
    assert {path: modules for path, modules in upward.items() if modules} == {}


def test_the_checks_see_imports(tmp_path: Path) -> None:
    """The import scan itself finds top-level, nested and from-imports (so the checks above can fail)."""
    probe = tmp_path / "probe.py"
    probe.write_text("import sqlalchemy as sa\ndef f():\n    from apsw import ext\n"
                     "    import clparse.boost.tree\n")
    assert imported_modules(probe) == {"sqlalchemy", "apsw", "apsw.ext", "clparse.boost.tree"}
