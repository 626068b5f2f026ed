"""Rebuild the old-schema databases in this folder with the clparse code of their own time.

For every schema revision older than the head (0001 .. 0011), this script

1. finds in git the last commit whose newest migration is that revision (the parent of the
   commit that added the next migration file),
2. checks that commit out in a temporary ``git worktree`` (the current work tree is not touched),
3. runs *that* code (``PYTHONPATH`` = the worktree, the interpreter of this virtualenv) on a small
   subset of the bundled GUM sample (:data:`TRAIN_SENTENCES` training trees and
   :data:`DEV_SENTENCES` dev trees of at most :data:`MAX_TOKENS` tokens, the first in file order):
   ``prepare`` always; ``train`` from 0002 on (until Θ < :data:`UNTIL_THETA`, a margin checkpoint
   every :data:`CHECKPOINT_EVERY` iterations); ``calibrate`` on the stored dev sentences from 0003 on,
   and from 0005 on a per-label calibration after it (its trials are 0005's ``label_theta_steps``),
4. writes ``schema-REV.sqlite`` (VACUUMed) and ``schema-REV.json`` beside this file: what that old
   code said about its database (row counts per table, labels, digests of the stored examples, the
   stored Θ lists, model scores and SQL weights from 0002 on, and from 0003 on the old parser's trees
   for the dev sentences at several Θ̂, with gold tags and with the stored tagger, and the
   calibration's best Θ̂, and from 0005 on the per-label trials and Θ̂).

``tests/test_schema_upgrade.py`` opens copies of these files with today's clparse (which upgrades
them after a backup) and checks that today's code reads the same data and parses the same trees.

Usage (from the repository root; about a minute on 2 cores, numba compiling each old version afresh)::

    .venv/bin/python tests/data/old_schemas/make.py            # every old revision
    .venv/bin/python tests/data/old_schemas/make.py 0003       # just one

The script never imports clparse itself: the inner step (``--build``) runs in a child process
whose ``clparse`` is the old one (it checks that it is).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[2]
OLD_REVISIONS = ("0001", "0002", "0003", "0004", "0005", "0006", "0007", "0008", "0009", "0010", "0011")

TRAIN_SENTENCES = 8
DEV_SENTENCES = 6
MAX_TOKENS = 7  # tokens of a tree (punctuation included, empty elements not)
VOCAB_MIN = 2  # so that the tiny subset still has a vocabulary beyond UNK
UNTIL_THETA = 0.5
CHECKPOINT_EVERY = 5
PARSE_BEAM = 100  # small beam: the trees are short, and parsing stays fast in the test


# ------------------------------------------------------------------------------------------------
# Outer step: git, worktrees, subset, child processes.
# ------------------------------------------------------------------------------------------------


def git(*args: str) -> str:
    return subprocess.run(["git", *args], cwd=REPO, check=True, capture_output=True, text=True).stdout.strip()


def migration_file(commit: str, revision: str) -> str | None:
    names = git("ls-tree", "--name-only", commit, "migrations/versions/").splitlines()
    found = [n for n in names if Path(n).name.startswith(f"{revision}_")]
    return found[0] if found else None


def commit_for(revision: str) -> str:
    """The last commit whose newest migration is ``revision``: the parent of the one adding the next."""
    following = f"{int(revision) + 1:04d}"
    path = migration_file("HEAD", following)
    if path is None:
        raise SystemExit(f"no migration {following} in HEAD: {revision} is not an old revision")
    added = git("log", "--diff-filter=A", "--format=%H", "HEAD", "--", path).splitlines()[-1]
    commit = git("rev-parse", f"{added}^")
    newest = max(Path(n).name[:4]
                 for n in git("ls-tree", "--name-only", commit, "migrations/versions/").splitlines()
                 if re.match(r"\d{4}_", Path(n).name))
    assert newest == revision, (revision, commit, newest)
    return commit


def trees_of(text: str) -> list[str]:
    """Top-level bracketed trees of a PTB file, each as its original text (a plain paren count)."""
    trees, depth, start = [], 0, None
    for i, ch in enumerate(text):
        if ch == "(":
            if depth == 0:
                start = i
            depth += 1
        elif ch == ")":
            depth -= 1
            if depth == 0:
                trees.append(text[start:i + 1])
    return trees


def tokens(tree: str) -> int:
    return sum(1 for tag, _ in re.findall(r"\(([^\s()]+) ([^\s()]+)\)", tree) if tag != "-NONE-")


def write_subset(directory: Path) -> tuple[Path, Path]:
    out = []
    for split, count in (("train", TRAIN_SENTENCES), ("dev", DEV_SENTENCES)):
        text = (REPO / "clparse" / "data" / "sample" / f"{split}.ptb").read_text(encoding="utf-8")
        chosen = [t for t in trees_of(text) if tokens(t) <= MAX_TOKENS][:count]
        assert len(chosen) == count, (split, len(chosen))
        path = directory / f"{split}.ptb"
        path.write_text("\n\n".join(chosen) + "\n", encoding="utf-8")
        out.append(path)
    return out[0], out[1]


def make(revision: str, scratch: Path, train: Path, dev: Path) -> None:
    commit = commit_for(revision)
    worktree = scratch / f"clparse-{revision}"
    git("worktree", "add", "--detach", str(worktree), commit)
    try:
        db, record = HERE / f"schema-{revision}.sqlite", HERE / f"schema-{revision}.json"
        for leftover in (db, Path(f"{db}-wal"), Path(f"{db}-shm")):
            leftover.unlink(missing_ok=True)
        env = {**os.environ, "PYTHONPATH": str(worktree), "NUMBA_CACHE_DIR": str(scratch / "numba")}
        subprocess.run([sys.executable, __file__, "--build", revision, str(db), str(record), str(train),
                        str(dev)], cwd=worktree, env=env, check=True)
        info = json.loads(record.read_text(encoding="utf-8"))
        info = {"revision": revision, "commit": commit,
                "commit_subject": git("log", "-1", "--format=%s", commit),
                **info}
        record.write_text(json.dumps(info, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
        print(f"{db.name}: {db.stat().st_size:,} bytes; {record.name}: {record.stat().st_size:,} bytes")
    finally:
        git("worktree", "remove", "--force", str(worktree))


def main(argv: list[str]) -> None:
    if argv[:1] == ["--build"]:
        build(*argv[1:])
        return
    chosen = argv or list(OLD_REVISIONS)
    with tempfile.TemporaryDirectory(prefix="clparse-old-schemas-") as scratch:
        train, dev = write_subset(Path(scratch))
        for revision in chosen:
            make(revision, Path(scratch), train, dev)


# ------------------------------------------------------------------------------------------------
# Inner step: runs inside the old worktree, with the old clparse on the path.
# ------------------------------------------------------------------------------------------------


def digest(*arrays: object) -> str:
    """SHA-256 of arrays as little-endian bytes (numpy arrays) or of their JSON (anything else)."""
    import numpy as np

    h = hashlib.sha256()
    for a in arrays:
        if isinstance(a, np.ndarray):
            h.update(a.dtype.newbyteorder("<").str.encode())
            h.update(np.ascontiguousarray(a, dtype=a.dtype.newbyteorder("<")).tobytes())
        else:
            h.update(json.dumps(a, sort_keys=True).encode())
    return h.hexdigest()


def row_counts(db: str) -> dict[str, int]:
    import apsw

    connection = apsw.Connection(db, flags=apsw.SQLITE_OPEN_READONLY)
    try:
        names = [r[0] for r in connection.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name")]
        return {name: int(connection.execute(f'SELECT count(*) FROM "{name}"').fetchall()[0][0])
                for name in names}
    finally:
        connection.close()


def query(db: str, sql: str) -> list[list[Any]]:
    import apsw

    connection = apsw.Connection(db, flags=apsw.SQLITE_OPEN_READONLY)
    try:
        return [list(r) for r in connection.execute(sql)]
    finally:
        connection.close()


def vacuum(db: str) -> None:
    """Fold the WAL in, switch the file back to a rollback journal and VACUUM it, so one file is all."""
    import apsw

    connection = apsw.Connection(db)
    try:
        connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        connection.execute("PRAGMA journal_mode = DELETE")
        connection.execute("VACUUM")
    finally:
        connection.close()


def build(revision: str, db: str, record: str, train: str, dev: str) -> None:
    import numpy as np

    import clparse
    from clparse.read.ptb import format_tree

    here = Path(clparse.__file__).resolve().parents[1]
    assert here == Path.cwd().resolve(), f"clparse comes from {here}, not from the old worktree {Path.cwd()}"
    level = int(revision)

    from importlib.util import find_spec

    from clparse.store.database import init_database

    layered = find_spec("clparse.examples.data") is not None  # 0005 on: storage behind one door (issue 15)
    if layered:
        from clparse.examples.data import TrainingData
        from clparse.examples.prepare import PrepareSettings, prepare
    else:
        from clparse.store.access import TrainingData
        from clparse.store.prepare import PrepareSettings, prepare

    init_database(db)
    settings = PrepareSettings(vocab_min=VOCAB_MIN)
    prepare(db, [train], [dev], settings)
    info: dict[str, object] = {
        "clparse_version": clparse.__version__,
        "subset": {"train_sentences": TRAIN_SENTENCES, "dev_sentences": DEV_SENTENCES,
                   "max_tokens": MAX_TOKENS},
        "prepare_settings": settings.to_dict() if hasattr(settings, "to_dict") else repr(settings),
    }
    data = TrainingData(db)
    labels = data.labels()
    rows = data.feature_rows()
    info["labels"] = labels
    info["feature_count"] = data.feature_count()
    info["feature_rows"] = {"rows": int(rows.shape[0]),
                            "digest": digest(rows.indptr.astype("<i8"), rows.indices.astype("<i4"))}
    info["label_examples"] = {label: digest(*data.label_examples(label)) for label in labels}
    dev_sentences = [{"words": s.words, "tree": format_tree(s.tree),
                      "tagged": [[w, t] for w, t in s.gold_tree.tagged_words() if t != "-NONE-"]}
                     for s in data.sentences("dev")]
    info["dev_sentences"] = dev_sentences
    if layered:
        data.runs.db.close()
    else:
        data.engine.dispose()

    if level >= 2:
        from clparse.boost.booster import BoostSettings
        from clparse.train import StopRule
        from clparse.train import train as train_labels

        summary = train_labels(db, settings=BoostSettings(checkpoint_every=CHECKPOINT_EVERY),
                               rule=StopRule(until_theta=UNTIL_THETA))
        assert not summary.failures, summary.failures
        info["boost_settings"] = {"checkpoint_every": CHECKPOINT_EVERY, "until_theta": UNTIL_THETA}
        info["states"] = summary.states
        thetas: dict[str, list[float]] = {label: [float(t) for (t,) in query(db, (
            "SELECT i.theta FROM iterations i JOIN labels l ON l.id = i.label_id "
            f"WHERE l.name = '{label}' ORDER BY i.iteration"))] for label in labels}
        info["thetas"] = thetas
        # Weights of a middle iteration of the label with the most trees, as `clparse sql` shows them.
        if layered:
            from clparse.query import run_query
        else:
            from clparse.store.sql import run_query

        label = max(labels, key=lambda name: (len(thetas[name]), name))
        iteration = max(1, len(thetas[label]) // 2 + 1)
        sql = f"SELECT * FROM clparse_weights('{label}', {iteration}) ORDER BY example"
        weights = json.loads(run_query(db, sql, "json"))
        info["weights"] = {"label": label, "iteration": iteration, "query": sql, "rows": len(weights),
                           "first": weights[:3], "digest": digest(weights)}
        # The rebuilt model's scores Q(I) of every stored feature row, per label, at a few Θ̂.
        from clparse.rebuild.model import load_model

        grid = sorted({t for values in thetas.values() for t in values}, reverse=True)
        floor = max(min(v) for v in thetas.values() if v)  # every label is trained below Θ̂ > floor
        usable = [t for t in grid if t > floor]
        chosen = sorted({usable[0], usable[len(usable) // 2], usable[-1]}, reverse=True)
        model_scores: list[dict[str, object]] = []
        info["model_scores"] = model_scores
        for theta in chosen:
            model = load_model(db, theta)
            scores = {name: ens.score(rows.indptr.astype(np.int64), rows.indices.astype(np.int32))
                      for name, ens in model.ensembles.items()}
            model_scores.append({
                "theta": theta, "splits": model.splits,
                "trees": {name: ens.trees for name, ens in model.ensembles.items()},
                "digest": {name: digest(np.asarray(v, dtype="<f8")) for name, v in scores.items()},
                "first": {name: [float(x).hex() for x in v[:5]] for name, v in scores.items()}})
        info["model_thetas"] = chosen

    if level >= 3:
        from clparse.calibrate.run import CalibrationSettings, calibrate
        from clparse.parser import Parser

        result = calibrate(db, thetas=chosen, settings=CalibrationSettings(beam=PARSE_BEAM))
        info["calibration"] = {"beam": PARSE_BEAM, "best_theta": result.best_theta,
                               "points": [{"theta": p.theta, "f1": p.f1, "fallbacks": p.fallbacks,
                                           "completions": getattr(p, "completions", None)}  # 0004 on
                                          for p in result.points]}
        if level >= 5:  # per-label Θ̂ from the global calibration; "best" below is then its assignment
            from clparse.calibrate.per_label import calibrate_per_label

            found = calibrate_per_label(db, settings=CalibrationSettings(beam=PARSE_BEAM))
            assert not found.stopped and found.replayed == 0, found
            kept = any(accepted for *_, accepted in found.history)
            info["per_label"] = {"start_theta": found.start_theta, "start_f1": found.start_f1, "f1": found.f1,
                                 "kept": kept, "thetas": found.thetas,
                                 "trials": [{"label": label, "theta": theta, "f1": f1, "accepted": accepted}
                                            for label, theta, f1, accepted in found.history]}
        tagged = [[(w, t) for w, t in s["tagged"]] for s in dev_sentences]
        parses: list[dict[str, object]] = []
        info["parses"] = parses
        points: list[float | str] = [*chosen, "best"]
        import dataclasses

        from clparse.parser import SearchOptions

        alternatives = "tag_alternatives" in {f.name for f in dataclasses.fields(SearchOptions)}
        for point in points:
            # the stored tagger's best tagging alone, as parse did before it also tried other taggings
            best_alone = {"tag_alternatives": 0} if alternatives else {}
            parser = Parser.from_db(db, point, beam=PARSE_BEAM, **best_alone)
            gold_tags = [str(parser.parse_tagged(sentence)) for sentence in tagged]
            tagger = [str(parser.parse([w for w, _ in sentence])) for sentence in tagged]
            parses.append({"theta": point, "beam": PARSE_BEAM, "gold_tags": gold_tags, "tagger": tagger})
            if alternatives:  # and parse's default then: other taggings too, the best-scoring parse kept
                default = Parser.from_db(db, point, beam=PARSE_BEAM)
                parses[-1]["tagger_default"] = [str(default.parse([w for w, _ in sentence]))
                                                for sentence in tagged]

    vacuum(db)
    info["row_counts"] = row_counts(db)
    info["alembic_version"] = query(db, "SELECT version_num FROM alembic_version")[0][0]
    assert info["alembic_version"] == revision, info["alembic_version"]
    Path(record).write_text(json.dumps(info, ensure_ascii=False), encoding="utf-8")


if __name__ == "__main__":
    main(sys.argv[1:])
