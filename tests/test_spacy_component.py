"""The spaCy pipeline component (clparse/spacy_component.py, docs/spacy.md; issue 29 item 5).

Every test runs the component on the session's trained sample at Θ̂ 3 (it is not calibrated, so "best"
has no value there). The module is imported explicitly, so the tests do not depend on the
``spacy_factories`` entry point; two subprocess tests check that entry point: the installed one (skipped
while pyproject.toml does not declare it) and the exact lines docs/spacy.md gives, through a stand-in
distribution on ``PYTHONPATH``.
"""

from __future__ import annotations

import importlib.metadata
import os
import pickle
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

spacy = pytest.importorskip("spacy", reason="the spaCy component needs the clparse[spacy] extra")

import clparse.spacy_component as component  # noqa: E402  (registers the factory without the entry point)
from clparse.errors import ConfigurationError, DatabaseError  # noqa: E402
from clparse.parser import Parser, escape  # noqa: E402
from clparse.read.ptb import parse_tree  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
TEXT = ("  Dogs bark (loudly) at the cat.\n\nThe dog  barked (twice) , then it ran away .\n\n"
        "She gave the book to her brother yesterday . \n")
ENTRY_POINT = 'clparse = "clparse.spacy_component:make_component"'


@pytest.fixture(scope="module")
def nlp(trained_db: Path) -> Any:
    nlp = spacy.blank("en")
    nlp.add_pipe("sentencizer")
    nlp.add_pipe("clparse", config={"db": str(trained_db), "theta": 3})
    return nlp


@pytest.fixture(scope="module")
def doc(nlp: Any) -> Any:
    return nlp(TEXT)


def word_tokens(sent: Any) -> list[int]:
    """Doc indices of the sentence's words: every token but white space."""
    return [t.i for t in sent if not t.is_space]


def tree_spans(sent: Any) -> list[tuple[tuple[int, int], tuple[str, ...]]]:
    """The distinct spans of ``sent._.parse_string`` read back, pre-order, in doc token indices, with the
    labels of the phrases over each (top down): what the constituents must be."""
    index = word_tokens(sent)
    out: list[tuple[tuple[int, int], tuple[str, ...]]] = []
    for start, end, node in parse_tree(sent._.parse_string).spans():
        span = (index[start], index[end - 1] + 1)
        if not out or out[-1][0] != span:
            out.append((span, ()))
        if not node.is_preterminal:
            out[-1] = (span, out[-1][1] + (node.label,))
    return out


def test_words_map_to_tokens_with_whitespace_and_parentheses(doc: Any) -> None:
    assert any(t.is_space for t in doc) and any(t.text == "(" for t in doc)  # what the test is about
    sents = list(doc.sents)
    for sent in sents:
        if not word_tokens(sent):
            continue
        tree = parse_tree(sent._.parse_string)
        assert tree.words() == [escape(doc[i].text) for i in word_tokens(sent)]
        assert [(c.start, c.end) for c in sent._.constituents] == [span for span, _ in tree_spans(sent)]
        for c in sent._.constituents:  # no constituent starts or ends on white space
            assert not c[0].is_space and not c[-1].is_space, c
    leaves = [w for s in sents for w in (parse_tree(s._.parse_string).words() if word_tokens(s) else [])]
    assert "-LRB-" in leaves and "(" not in leaves
    assert [t.tag_ for t in doc if t.text == "("] == ["-LRB-", "-LRB-"]  # the stored tagger's tags, set
    assert all(t.tag_ == "" for t in doc if t.is_space)


def test_a_token_with_white_space_inside_is_one_word(nlp: Any) -> None:
    from spacy.tokens import Doc

    doc = nlp(Doc(nlp.vocab, words=["New York", "is", "big", "."]))
    assert parse_tree(doc[:]._.parse_string).words() == ["New_York", "is", "big", "."]
    assert doc[0:1]._.parent is not None


def test_one_tree_per_sentence(doc: Any) -> None:
    sents = list(doc.sents)
    records = doc._.clparse_sentences
    assert [(r["start"], r["end"]) for r in records] == [(s.start, s.end) for s in sents]
    parsed = [s for s in sents if word_tokens(s)]
    assert len(parsed) == 3
    for sent in parsed:
        tree = parse_tree(sent._.parse_string)
        assert tree.label == "ROOT" and sent._.labels[0] == "ROOT"
        assert sent._.constituents[0] == doc[word_tokens(sent)[0]:word_tokens(sent)[-1] + 1]
    for sent in sents:  # the white space the sentencizer makes a sentence of (the trailing "\n")
        if not word_tokens(sent):
            assert sent._.parse_string == "(ROOT)" and sent._.constituents == [] and sent._.labels == ()
    assert doc._.clparse_theta == 3.0


def test_labels_children_and_parent_agree_with_the_tree(doc: Any) -> None:
    for sent in doc.sents:
        if not word_tokens(sent):
            continue
        expected = dict(tree_spans(sent))
        constituents = sent._.constituents
        assert sent._.parent is None
        for c in constituents:
            assert c._.labels == expected[(c.start, c.end)]
            kids = c._.children
            if len(word_tokens(c)) > 1:  # the children's words are the constituent's words, in order
                assert [i for k in kids for i in word_tokens(k)] == word_tokens(c)
            else:
                assert kids == []
            for kid in kids:
                assert kid._.parent == c
            assert parse_tree(c._.parse_string).words() == [escape(doc[i].text) for i in word_tokens(c)]
        for token in sent:
            if not token.is_space:
                assert token._.labels == doc[token.i:token.i + 1]._.labels
                assert token._.parent == doc[token.i:token.i + 1]._.parent
        # a span that is no constituent: no labels, and an error where the tree has nothing to give
        words = word_tokens(sent)
        spans = {(c.start, c.end) for c in constituents}
        odd = next((words[i], words[j] + 1) for i in range(len(words)) for j in range(i, len(words))
                   if (words[i], words[j] + 1) not in spans)
        assert doc[odd[0]:odd[1]]._.labels == () and doc[odd[0]:odd[1]]._.confidence is None
        with pytest.raises(component.NonConstituentError):
            doc[odd[0]:odd[1]]._.parse_string
        # white space at either end of a span does not count
        if sent[0].is_space:
            assert sent._.labels == doc[words[0]:words[-1] + 1]._.labels != ()


def test_confidences_are_the_json_outputs(doc: Any, trained_db: Path) -> None:
    parser = Parser.from_db(trained_db, theta=3, beam=10)
    compared = 0
    for sent in doc.sents:
        words = word_tokens(sent)
        if not words:
            continue
        data = parser.parse([doc[i].text for i in words]).to_dict()
        assert sent._.parse_string == data["trees"][0]["ptb"]
        assert [doc[i].tag_ for i in words] == data["tags"]
        grouped: list[tuple[tuple[int, int], list[str], list[float | None]]] = []
        for c in data["trees"][0]["constituents"]:
            span = (words[c["start"]], words[c["end"] - 1] + 1)
            if not grouped or grouped[-1][0] != span:
                grouped.append((span, [], []))
            grouped[-1][1].append(c["label"])
            grouped[-1][2].append(c["confidence"])
        for span, labels, confidences in grouped:
            assert doc[span[0]:span[1]]._.labels == tuple(labels)
            assert doc[span[0]:span[1]]._.confidences == tuple(confidences)
            assert doc[span[0]:span[1]]._.confidence == confidences[-1]
            compared += 1
        assert any(c is not None for _, _, cs in grouped for c in cs)
    assert compared > 10


def test_the_aggregator_setting_is_parses(trained_db: Path) -> None:
    """``aggregator`` in the config parses as ``Parser(aggregator=...)``: sum by default, maxmin on request,
    and the two differ somewhere on the sample's dev sentences (else the test shows nothing)."""
    from clparse.data import sample_path
    from clparse.read import read_trees

    sentences = [[w for w, t in tree.tagged_words() if t != "-NONE-"]
                 for tree in read_trees(sample_path("dev"))]
    sentences = [s for s in sentences if not any(" " in w or "_" in w for w in s)][:40]
    got: dict[str | None, list[str]] = {}
    for aggregator in ("sum", "maxmin", None):
        nlp = spacy.blank("en")
        config: dict[str, Any] = {"db": str(trained_db), "theta": 3, "beam": 4}
        if aggregator is not None:
            config["aggregator"] = aggregator
        nlp.add_pipe("clparse", config=config)
        parser = Parser.from_db(trained_db, theta=3, beam=4, aggregator=aggregator or "sum")
        got[aggregator] = []
        for words in sentences:
            starts = [True] + [False] * (len(words) - 1)
            doc = nlp(spacy.tokens.Doc(nlp.vocab, words=words, sent_starts=starts))
            assert doc[:]._.parse_string == str(parser.parse(words).tree)
            got[aggregator].append(doc[:]._.parse_string)
    assert got[None] == got["sum"]
    from clparse.search.aggregate import DEFAULT_AGGREGATOR

    assert component.DEFAULT_CONFIG["aggregator"] == DEFAULT_AGGREGATOR  # the config's default is parse's
    differ = sum(a != b for a, b in zip(got["sum"], got["maxmin"]))
    assert differ


def test_a_missing_database_is_a_clear_error(tmp_path: Path) -> None:
    nlp = spacy.blank("en")
    with pytest.raises(ConfigurationError, match=r'config=\{"db"'):
        nlp.add_pipe("clparse")
    with pytest.raises(DatabaseError, match="no such database"):
        nlp.add_pipe("clparse", config={"db": str(tmp_path / "missing.sqlite")})
    assert not (tmp_path / "missing.sqlite").exists()


def test_a_doc_without_sentence_boundaries(trained_db: Path) -> None:
    nlp = spacy.blank("en")
    nlp.add_pipe("clparse", config={"db": str(trained_db), "theta": 3})
    short = nlp("The dog barked at the cat .")
    (sent,) = short.sents  # parsed as one sentence, and marked so
    assert parse_tree(sent._.parse_string).words() == [t.text for t in short]
    long = " ".join(["The dog barked ."] * 11)  # 44 words
    with pytest.raises(component.NoSentencesError, match="sentencizer"):
        nlp(long)
    nlp.add_pipe("sentencizer", before="clparse")  # what the message says to do
    assert len(list(nlp(long).sents)) == 11


def test_docs_keep_their_parses_through_bytes(nlp: Any, doc: Any) -> None:
    from spacy.tokens import Doc

    again = Doc(nlp.vocab).from_bytes(doc.to_bytes())
    assert [s._.parse_string for s in again.sents] == [s._.parse_string for s in doc.sents]
    def seen(d: Any) -> list[list[tuple[Any, ...]]]:
        return [[(c.start, c.end, c._.labels, c._.confidence) for c in s._.constituents] for s in d.sents]

    assert seen(again) == seen(doc)


def test_pickling_and_saving_keep_the_settings_not_the_model(nlp: Any, doc: Any, trained_db: Path,
                                                             tmp_path: Path) -> None:
    parser = nlp.get_pipe("clparse")
    data = pickle.dumps(parser)
    assert len(data) < 1000  # settings only: the model is megabytes of trees
    copy = pickle.loads(data)
    assert copy.settings == parser.settings and copy.parser is not parser.parser
    split = nlp.get_pipe("sentencizer")(nlp.make_doc(TEXT))
    assert [s._.parse_string for s in copy(split).sents] == [s._.parse_string for s in doc.sents]
    nlp.to_disk(tmp_path / "pipeline")
    assert not (tmp_path / "pipeline" / "clparse").exists()  # nothing but config.cfg holds it
    loaded = spacy.load(tmp_path / "pipeline")
    assert loaded.get_pipe("clparse").settings == parser.settings
    assert [s._.parse_string for s in loaded(TEXT).sents] == [s._.parse_string for s in doc.sents]


def test_importing_clparse_needs_no_spacy_and_the_module_leaves_attributes_alone() -> None:
    code = textwrap.dedent("""
        import sys
        import clparse.parser, clparse.api, clparse.cli, clparse.output
        assert "spacy" not in sys.modules, "clparse imported spaCy"
        import clparse.spacy_component
        from spacy.tokens import Span
        assert not Span.has_extension("parse_string"), "importing the module set attributes"
        """)
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert done.returncode == 0, done.stderr[-2000:]


def _add_pipe_without_import(db: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    code = textwrap.dedent(f"""
        import sys, spacy
        nlp = spacy.blank("en")
        nlp.add_pipe("sentencizer")
        nlp.add_pipe("clparse", config={{"db": {str(db)!r}, "theta": 3}})
        print([s._.parse_string for s in nlp("The dog barked. It ran away.").sents])
        """)
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                          cwd=ROOT, env=env)


def _installed() -> bool:
    return any(e.name == "clparse" for e in importlib.metadata.entry_points(group="spacy_factories"))


@pytest.mark.skipif(not _installed(), reason="the spacy_factories entry point is not installed: "
                    "pyproject.toml needs [project.entry-points.spacy_factories] (docs/spacy.md), then "
                    "pip install -e .")
def test_the_installed_entry_point_registers_the_component(trained_db: Path) -> None:
    done = _add_pipe_without_import(trained_db, dict(os.environ))
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.count("(ROOT ") == 2


def test_the_documented_entry_point_registers_the_component(trained_db: Path, tmp_path: Path) -> None:
    """The lines docs/spacy.md gives for pyproject.toml, as an installed distribution would declare them."""
    text = (ROOT / "docs" / "spacy.md").read_text(encoding="utf-8")
    assert "[project.entry-points.spacy_factories]\n" + ENTRY_POINT in text
    info = tmp_path / "clparse_spacy_entry_point-0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: clparse-spacy-entry-point\nVersion: 0\n")
    name, value = ENTRY_POINT.split(" = ")  # TOML's quoted string, as setuptools writes entry_points.txt
    (info / "entry_points.txt").write_text(f"[spacy_factories]\n{name} = {value.strip(chr(34))}\n")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), str(ROOT)])}
    done = _add_pipe_without_import(trained_db, env)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.count("(ROOT ") == 2
