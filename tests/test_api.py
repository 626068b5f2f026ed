"""The Python API behaves as the commands do: guards, resume defaults, parameter errors; and the layers.

``clparse.api`` holds one function per command; the command line only parses options and prints.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from clparse import api
from clparse.cli import main
from clparse.errors import DatabaseError, ParameterError
from tests.conftest import damage, read_rows
from tests.test_layers import imported_modules

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize("call", [
    lambda db: api.train(db, until_theta=1.0),
    lambda db: api.calibrate(db, thetas=[3.0]),
    lambda db: api.init(db),
    lambda db: api.sql(db, "DELETE FROM calibrations", write=True),
    lambda db: api.prepare(db, [ROOT / "clparse" / "data" / "sample" / "train.ptb"]),
])
def test_every_writing_function_refuses_a_damaged_file(db_copy: Path, call: object) -> None:
    damage(db_copy, "tree_nodes")
    before = db_copy.read_bytes()
    with pytest.raises(DatabaseError, match="damaged"):
        call(db_copy)  # type: ignore[operator]
    assert db_copy.read_bytes() == before


def test_a_resumed_train_keeps_the_settings_its_labels_started_with(db_copy: Path) -> None:
    """The fixture's labels started with the mrl rule and leaf smoothing 0.5; a resumed call that names
    neither keeps both (the library, not only the command, owns this default)."""
    started = api.boost_settings(db_copy, api.TrainOptions())
    assert (started.rule, started.smoothing) == ("mrl", 0.5)
    last = "SELECT max(iteration) FROM iterations JOIN labels ON labels.id = label_id WHERE name = 'ADVP'"
    before = read_rows(db_copy, last)[0][0]
    api.train(db_copy, ["ADVP"], max_iterations=before + 2)
    assert read_rows(db_copy, last)[0][0] == before + 2
    stored = {row[0] for row in read_rows(db_copy, "SELECT settings_json FROM label_training JOIN labels "
                                                   "ON labels.id = label_id WHERE name = 'ADVP'")}
    assert len(stored) == 1 and '"smoothing": 0.5' in stored.pop()
    # Asked for explicitly, a different setting is refused by the stored one (not silently mixed).
    with pytest.raises(Exception, match="smoothing|settings"):
        api.train(db_copy, ["ADVP"], max_iterations=1000, options=api.TrainOptions(smoothing=0.0))


def test_library_errors_name_parameters_and_the_cli_names_options(db_copy: Path) -> None:
    with pytest.raises(ParameterError) as caught:
        api.train(db_copy, until_theta=-1.0)
    assert caught.value.parameter == "until_theta" and "--" not in str(caught.value)
    done = CliRunner().invoke(main, ["train", "--db", str(db_copy), "--until-theta", "-1"])
    assert done.exit_code == 2
    assert "Usage: main train" in done.output or "Usage:" in done.output
    assert "Invalid value for '--until-theta': must be positive, got -1" in done.output
    with pytest.raises(ParameterError, match="templates"):
        api.feature_config(templates=("none", "length"))


def test_api_parse_equals_the_parser_and_counts_what_it_met(trained_db: Path, tmp_path: Path) -> None:
    from clparse.parser import Parser

    text = tmp_path / "in.txt"
    text.write_text("The dog barked .\n\nShe saw the cat in the garden .\n", encoding="utf-8")
    warnings: list[str] = []
    tally = api.ParseTally()
    trees = [str(r) for r in api.parse(trained_db, [str(text)], theta=3.0, beam=5, warn=warnings.append,
                                       tally=tally)]
    parser = Parser.from_db(trained_db, theta=3.0, beam=5)
    assert trees == [str(parser.parse(line)) for line in text.read_text(encoding="utf-8").splitlines()]
    assert tally.sentences == 3 and any("empty line" in w for w in warnings)
    assert api.count_input(["-"], "ptb") is None  # stdin is counted by nobody (read once), ptb as any


def test_cli_and_api_tag_alike(trained_db: Path, tmp_path: Path) -> None:
    text = tmp_path / "in.txt"
    text.write_text("The dog barked .\n", encoding="utf-8")
    done = CliRunner().invoke(main, ["tag", "--db", str(trained_db), str(text)])
    assert done.exit_code == 0, done.output
    (tagged,) = list(api.tag(trained_db, [str(text)]))
    assert [w for w, _ in tagged] == ["The", "dog", "barked", "."]
    assert done.output.split() == [f"{w}/{t}" for w, t in tagged]


# --------------------------------------------------------------------- layers


def offenders(packages: tuple[str, ...], forbidden: tuple[str, ...]) -> dict[str, list[str]]:
    found = {}
    for package in packages:
        base = ROOT / package.replace(".", "/")
        paths = sorted(base.rglob("*.py")) if base.is_dir() else [base.with_suffix(".py")]
        for path in paths:
            bad = sorted(m for m in imported_modules(path) if m.startswith(forbidden))
            if bad:
                found[str(path.relative_to(ROOT))] = bad
    return found


def test_parsing_imports_nothing_of_training() -> None:
    """The search, the rebuilt model, the features and the parser: no examples, boosting or training."""
    assert offenders(("clparse.parser", "clparse.search", "clparse.rebuild", "clparse.features"),
                     ("clparse.examples", "clparse.train", "clparse.boost", "clparse.calibrate",
                      "clparse.api", "clparse.cli")) == {}


def test_only_the_command_line_and_quickstart_sit_above_the_api() -> None:
    below = tuple(f"clparse.{p.stem}" for p in (ROOT / "clparse").iterdir()
                  if p.stem not in ("cli", "api", "quickstart", "__init__", "__pycache__"))
    assert offenders(below, ("clparse.api", "clparse.cli", "clparse.quickstart")) == {}


def test_the_layer_checks_can_fail() -> None:
    assert offenders(("clparse.cli",), ("clparse.api",))  # the command line does call the api


@pytest.mark.slow  # a real calibration subprocess, twice (the same exit rule is checked fast for train)
def test_calibrate_stopped_by_ctrl_c_exits_130_and_resumes(db_copy: Path, tmp_path: Path) -> None:
    """A calibration paused by SIGINT keeps its finished Θ̂ points, says how to resume, exits 128 + 2."""
    import signal
    import subprocess
    import sys
    import time

    args = [sys.executable, str(ROOT / "cli.py"), "calibrate", "--db", str(db_copy), "--thetas", "20,8,4,3",
            "--beam", "1"]
    with open(tmp_path / "err", "wb") as err:
        process = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=err)
        deadline = time.monotonic() + 300
        while read_rows(db_copy, "SELECT count(*) FROM calibration_points")[0][0] < 1:
            assert process.poll() is None and time.monotonic() < deadline, "no point stored in time"
            time.sleep(0.02)
        process.send_signal(signal.SIGINT)
        process.wait(timeout=300)
    assert process.returncode == 130
    assert "stopped; run the same command again to resume" in (tmp_path / "err").read_text(encoding="utf-8")
    done = subprocess.run(args, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr


def test_a_sampled_run_started_before_stratified_sampling_resumes_with_its_sampler(db_copy: Path) -> None:
    """Settings stored before ``sample_stratified`` existed mean the first sampler; a resume must not ask
    for the new one (the stored settings would refuse it as a change midway)."""
    import apsw

    def write(query: str) -> None:
        connection = apsw.Connection(str(db_copy))
        try:
            connection.execute(query)
        finally:
            connection.close()

    write("UPDATE label_training SET settings_json = "
          "json_remove(json_set(settings_json, '$.sample', 100), '$.sample_stratified')")
    resumed = api.boost_settings(db_copy, api.TrainOptions())
    assert resumed.sample == 100 and resumed.sample_stratified is False
    fresh = api.boost_settings(db_copy, api.TrainOptions(sample=100))
    assert fresh.sample_stratified is False  # still the started run's
    write("DELETE FROM label_training")
    assert api.boost_settings(db_copy, api.TrainOptions(sample=100)).sample_stratified is True


def test_export_is_a_library_function(db_copy: Path, tmp_path: Path) -> None:
    out = tmp_path / "parser.sqlite"
    summary = api.export(db_copy, out)
    assert out.exists() and summary.out_bytes < summary.source_bytes
    assert read_rows(out, "SELECT count(*) FROM label_examples")[0][0] == 0


def test_training_a_finished_run_again_leaves_every_label_as_it_was(db_copy: Path) -> None:
    """Nothing to do: no label's state, message or last update changes (it rewrote every "last update")."""
    rows = "SELECT label_id, state, message, updated_at, iteration FROM label_training ORDER BY label_id"
    before = read_rows(db_copy, rows)
    api.train(db_copy, until_theta=3.0)  # the fixture's own stop
    assert read_rows(db_copy, rows) == before
    api.train(db_copy, ["ADVP"], until_theta=1e9)  # another reason: that label's row says so
    after = {row[0]: row for row in read_rows(db_copy, rows)}
    changed = [label for label, *rest in before if after[label] != (label, *rest)]
    assert len(changed) == 1 and after[changed[0]][2] != dict((r[0], r[2]) for r in before)[changed[0]]


def test_one_default_search_for_the_command_line_the_api_and_the_parser(trained_db: Path) -> None:
    import inspect

    from clparse.calibrate.run import CalibrationSettings
    from clparse.cli.options import CALIBRATION_BEAM, PARSE_BEAM
    from clparse.parser import SearchOptions

    def cli_default(command: str, option: str) -> object:
        found = [p for p in main.commands[command].params if p.name == option]
        return found[0].default

    # open_parser's beam left out (None) is this default for a single run (a combination: its fitted beam)
    assert inspect.signature(api.open_parser).parameters["beam"].default is None
    assert PARSE_BEAM == SearchOptions().beam == api.open_parser(trained_db, 3.0).options.beam
    assert cli_default("parse", "beam") == cli_default("explain", "beam") == PARSE_BEAM
    assert cli_default("calibrate", "beam") == CALIBRATION_BEAM == CalibrationSettings().beam
    assert inspect.signature(api.calibration_settings).parameters["beam"].default == CALIBRATION_BEAM
