"""Issue 25, items 5 and 6: stored trees and blobs carry checksums, and damage is named, never used.

5. One changed float in a stored tree (bit rot, or a stray ``clparse sql --write``) used to change parses
   silently while ``clparse check`` called the file fine: every iteration now stores the SHA-256 of its
   tree, every blob row that of its blobs; ``check`` verifies all of them and names label and iteration
   (or table and row); loading a model verifies the trees it loads and refuses a damaged one in one line.
6. A flipped byte in a ``feature_rows`` blob used to crash ``train`` with a segmentation fault: blobs are
   verified (checksum) and checked (lengths, offsets, id ranges) before compiled code sees them.
"""

from __future__ import annotations

import math
import shutil
import subprocess
import sys
from pathlib import Path

import apsw
import pytest
from click.testing import CliRunner

from clparse import api
from clparse.cli import main
from clparse.errors import DatabaseError
from clparse.store.database import DAMAGED
from clparse.store.verify import CHECKSUMS_SINCE
from tests.conftest import read_rows

BIN = Path(sys.executable).parent
OLD_SCHEMAS = Path(__file__).parent / "data" / "old_schemas"


def write(db: Path, query: str, *bindings: object) -> None:
    """A raw write behind clparse's back (as ``clparse sql --write`` or a disk fault would make it)."""
    connection = apsw.Connection(str(db))
    try:
        connection.execute(query, bindings)
    finally:
        connection.close()


def label_id(db: Path, name: str) -> int:
    return int(read_rows(db, "SELECT id FROM labels WHERE name = ?", name)[0][0])


def nudge_leaf(db: Path, label: str, iteration: int) -> None:
    """Change one leaf's confidence of a tree in its last bits (what bit rot does to a float)."""
    label_ = label_id(db, label)
    write(db, "UPDATE tree_nodes SET confidence = confidence * (1 + 1e-12) WHERE label_id = ? AND "
              "iteration = ? AND node = (SELECT max(node) FROM tree_nodes WHERE label_id = ? AND "
              "iteration = ?)", label_, iteration, label_, iteration)


def flip(db: Path, table: str, column: str, where: str, offset: int, mask: int = 0x40) -> None:
    """Flip bits of one byte of a blob (``where`` picks the row)."""
    (blob,), = read_rows(db, f"SELECT {column} FROM {table} WHERE {where}")
    damaged = bytearray(blob)
    damaged[offset] ^= mask
    write(db, f"UPDATE {table} SET {column} = ? WHERE {where}", bytes(damaged))


def cli(*args: str) -> tuple[int, str]:
    done = CliRunner().invoke(main, list(args))
    return done.exit_code, done.output


# ------------------------------------------------------------------------------------------- checksums


def test_every_tree_and_blob_of_a_trained_database_passes_its_checksum(trained_db: Path) -> None:
    from clparse.store.verify import verify_checksums

    assert verify_checksums(trained_db) == []
    for table, column in [("iterations", "sha256"), ("feature_rows", "sha256"), ("label_examples", "sha256"),
                          ("margin_checkpoints", "sha256"), ("label_training", "margins_sha256")]:
        assert read_rows(trained_db, f"SELECT count(*) FROM {table} WHERE length({column}) != 64") == [(0,)]
    assert read_rows(trained_db, "SELECT count(*) FROM margin_checkpoints")[0][0] > 0
    assert cli("check", "--db", str(trained_db)) == (0, f"{trained_db}: ok\n")


def test_the_tree_checksum_is_canonical() -> None:
    """What SQLite gives back checksums as what was written (-0.0 reads as 0.0, NaN as NULL); a bit does
    not."""
    from clparse.store.verify import tree_checksum

    node = (0, None, 0, None, None, None, 5, 7, None, 0.25, 1.5, 2.5, -0.5)
    base = tree_checksum(3, 4, 2.5, [node])
    assert tree_checksum(3, 4, 2.5, [(*node[:8], math.nan, *node[9:])]) == base
    assert tree_checksum(3, 4, 2.5, [(*node[:9], -0.0 + 0.25, *node[10:])]) == base
    assert tree_checksum(3, 4, 2.5, [(*node[:12], math.nextafter(-0.5, 0))]) != base
    assert tree_checksum(3, 5, 2.5, [node]) != base and tree_checksum(2, 4, 2.5, [node]) != base
    zero = (0, None, 0, None, None, None, 5, 7, None, 0.0, 1.5, 2.5, 0.0)
    assert tree_checksum(3, 4, 2.5, [zero]) == tree_checksum(3, 4, 2.5, [(*zero[:12], -0.0)])


def test_a_changed_float_in_a_tree_is_named_by_check(db_copy: Path) -> None:
    nudge_leaf(db_copy, "NP", 12)
    from clparse.store.database import integrity_check

    integrity_check(db_copy)  # SQLite itself sees nothing wrong: the page is intact, the value is not
    with pytest.raises(DatabaseError) as caught:
        api.check(db_copy)
    assert str(caught.value) == f"{db_copy}: iteration 12 of NP fails its checksum; {DAMAGED}"
    code, output = cli("check", "--db", str(db_copy))
    assert code == 1
    assert output == f"Error: {db_copy}: iteration 12 of NP fails its checksum; {DAMAGED}\n"


def test_check_names_every_damaged_row_and_counts_them(db_copy: Path) -> None:
    from clparse.store.verify import verify_checksums

    for iteration in (12, 3, 30):
        nudge_leaf(db_copy, "NP", iteration)
    vp = label_id(db_copy, "VP")
    write(db_copy, "UPDATE iterations SET theta = theta + 1e-9 WHERE label_id = ? AND iteration = 2", vp)
    flip(db_copy, "feature_rows", "indptr_int64", "chunk = 0", 800)
    flip(db_copy, "label_examples", "y_int8", f"label_id = {vp} AND chunk = 0", 5, 0x01)
    flip(db_copy, "margin_checkpoints", "margins_float64",
         "rowid = (SELECT min(rowid) FROM margin_checkpoints)", 3)
    flip(db_copy, "label_training", "margins_float64", f"label_id = {vp}", 9)
    flip(db_copy, "taggers", "model_blob", "1", 4000)
    (checkpoint, checkpoint_label), = read_rows(
        db_copy, "SELECT iteration, name FROM margin_checkpoints JOIN labels ON labels.id = label_id "
                 "ORDER BY margin_checkpoints.rowid LIMIT 1")
    found = [str(p) for p in verify_checksums(db_copy)]
    assert found == [
        "iteration 3 of NP fails its checksum", "iteration 12 of NP fails its checksum",
        "iteration 30 of NP fails its checksum", "iteration 2 of VP fails its checksum",
        "feature_rows chunk 0 fails its checksum", "label_examples chunk 0 of VP fails its checksum",
        f"the margin checkpoint of iteration {checkpoint} of {checkpoint_label} (margin_checkpoints) "
        "fails its checksum",
        "the stored margins of VP (label_training) fails its checksum",
        "the tagger's model_blob (taggers, run 1) fails its checksum"]
    with pytest.raises(DatabaseError) as caught:
        api.check(db_copy)
    assert str(caught.value) == f"{db_copy}: iteration 3 of NP fails its checksum (and 8 more); {DAMAGED}"


def test_a_model_refuses_a_damaged_tree_in_one_line(db_copy: Path) -> None:
    from clparse.store.models import Models

    theta = 3.0  # every label of the fixture is trained below it; NP keeps dozens of trees there
    kept = read_rows(db_copy, "SELECT count(*) FROM iterations WHERE label_id = ? AND theta >= ?",
                     label_id(db_copy, "NP"), theta)[0][0]
    assert kept > 12
    nudge_leaf(db_copy, "NP", 12)
    with pytest.raises(DatabaseError) as caught:
        api.open_parser(db_copy, theta)
    assert str(caught.value) == f"{db_copy}: iteration 12 of NP fails its checksum; {DAMAGED}"
    # Trees not loaded are not read: a Θ̂ that keeps fewer NP trees still loads (check finds the damage).
    first = read_rows(db_copy, "SELECT theta FROM iterations WHERE label_id = ? AND iteration = 11",
                      label_id(db_copy, "NP"))[0][0]
    assert Models(db_copy).trees("NP", up_to=11)
    assert first > theta
    # The weights replay (clparse_weights, resume) loads trees through the same door.
    with pytest.raises(DatabaseError, match="iteration 12 of NP fails its checksum"):
        Models(db_copy).trees("NP", after=10, up_to=13)


@pytest.mark.parametrize("move", ["lower the last kept", "raise a later one"])
def test_a_damaged_theta_cannot_move_the_cut_unseen(db_copy: Path, move: str) -> None:
    """Θ^t decides which trees a label keeps at Θ̂: a Θ changed so that the cut moves is found too."""
    from clparse.rebuild.model import load_model

    np_id = label_id(db_copy, "NP")
    trees = read_rows(db_copy, "SELECT count(*) FROM iterations WHERE label_id = ?", np_id)[0][0]
    theta = read_rows(db_copy, "SELECT theta FROM iterations WHERE label_id = ? AND iteration = ?", np_id,
                      trees // 2)[0][0]  # a Θ̂ that keeps half of NP's trees
    kept = read_rows(db_copy, "SELECT count(*) FROM iterations WHERE label_id = ? AND theta >= ?", np_id,
                     theta)[0][0]
    assert kept + 3 <= trees
    load_model(db_copy, theta)
    if move == "lower the last kept":
        target, value = kept, math.nextafter(theta, 0)
    else:
        target, value = kept + 3, theta + 1
    write(db_copy, "UPDATE iterations SET theta = ? WHERE label_id = ? AND iteration = ?", value, np_id,
          target)
    with pytest.raises(DatabaseError) as caught:
        load_model(db_copy, theta)
    assert str(caught.value) == f"{db_copy}: iteration {target} of NP fails its checksum; {DAMAGED}"


# ------------------------------------------------------------------------------------------- blobs (item 6)


def test_a_flipped_byte_in_feature_rows_stops_train_with_one_line(db_copy: Path) -> None:
    """Before: exit 139 (a feature id far out of range reached the compiled split search). Now: the chunk's
    checksum fails before anything is written, and train says so in one line."""
    flip(db_copy, "feature_rows", "indices_int32", "chunk = 0", 4 * 1000 + 3)  # feature id 1000's top byte
    before = db_copy.read_bytes()
    done = subprocess.run([str(BIN / "clparse"), "train", "--db", str(db_copy), "--until-theta", "2"],
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 1, (done.returncode, done.stderr)
    errors = [line for line in done.stderr.splitlines() if line.startswith("Error:")]
    assert errors == [f"Error: {db_copy}: feature_rows chunk 0 fails its checksum; {DAMAGED}"], done.stderr
    assert "Traceback" not in done.stderr
    assert db_copy.read_bytes() == before  # nothing written: not a claim, not a "failed"


def test_decoded_blobs_are_checked_even_where_the_checksum_agrees(db_copy: Path) -> None:
    """Damage from before revision 0008 got a checksum of what was there when the upgrade computed it:
    lengths, offsets and id ranges are checked as the blobs are decoded, whatever the checksum says."""
    from clparse.store import blobs
    from clparse.store.training import TrainingStore

    def rewrite(table: str, where: str, **values: object) -> None:
        columns = ", ".join(blobs.CHECKSUMMED[table])
        row = dict(zip(blobs.CHECKSUMMED[table],
                       read_rows(db_copy, f"SELECT {columns} FROM {table} WHERE {where}")[0]))
        row.update(values)
        sets = ", ".join(f"{c} = ?" for c in values)
        write(db_copy, f"UPDATE {table} SET {sets}, {blobs.CHECKSUM_COLUMN[table]} = ? WHERE {where}",
              *values.values(), blobs.row_checksum(table, row))

    (indices, indptr), = read_rows(db_copy, "SELECT indices_int32, indptr_int64 FROM feature_rows "
                                            "WHERE chunk = 0")
    n_features = read_rows(db_copy, "SELECT count(*) FROM features")[0][0]
    out_of_range = bytearray(indices)
    out_of_range[4000:4004] = (n_features + 5).to_bytes(4, "little")
    cases = [
        (dict(indices_int32=bytes(out_of_range)),
         f"feature_rows chunk 0 holds feature ids outside 0..{n_features - 1}"),
        (dict(indices_int32=indices[:-2]), "feature_rows chunk 0: indices_int32 holds"),
        (dict(indptr_int64=indptr[:8] + (2 ** 40).to_bytes(8, "little") + indptr[16:]),
         "feature_rows chunk 0 has offsets"),
    ]
    for values, message in cases:
        rewrite("feature_rows", "chunk = 0", **values)
        store = TrainingStore(db_copy)
        with pytest.raises(DatabaseError, match=message.replace("(", r"\(").replace(".", r"\.")):
            store.load_problem("NP")
        rewrite("feature_rows", "chunk = 0", indices_int32=indices, indptr_int64=indptr)
    vp = label_id(db_copy, "VP")
    (y,), = read_rows(db_copy, "SELECT y_int8 FROM label_examples WHERE label_id = ? AND chunk = 0", vp)
    rewrite("label_examples", f"label_id = {vp} AND chunk = 0", y_int8=b"\x03" + y[1:])
    with pytest.raises(DatabaseError, match="label_examples chunk 0 of VP holds"):
        TrainingStore(db_copy).load_problem("VP")


# ------------------------------------------------------------------------------------------- old databases


@pytest.mark.parametrize("revision", sorted(p.stem.removeprefix("schema-")
                                            for p in OLD_SCHEMAS.glob("schema-*.sqlite")))
def test_an_upgraded_database_gets_the_checksums_of_what_it_holds(tmp_path: Path, revision: str) -> None:
    from clparse.store.database import init_database
    from clparse.store.verify import verify_checksums

    db = tmp_path / "old.sqlite"
    shutil.copyfile(OLD_SCHEMAS / f"schema-{revision}.sqlite", db)
    if revision < CHECKSUMS_SINCE:
        assert verify_checksums(db) == []  # an old schema has none to verify (and check still runs)
    init_database(db)
    assert verify_checksums(db) == []
    api.check(db)
    trees = read_rows(db, "SELECT count(*) FROM iterations")[0][0]
    assert (trees > 0) == (revision >= "0002")
    if trees:  # and the checksums are live: damage after the upgrade is found
        (name, iteration), = read_rows(db, "SELECT name, max(iteration) FROM iterations JOIN labels "
                                           "ON labels.id = label_id GROUP BY name ORDER BY name LIMIT 1")
        nudge_leaf(db, name, iteration)
        with pytest.raises(DatabaseError, match=f"iteration {iteration} of {name} fails its checksum"):
            api.check(db)
