"""The training database schema, declared once (SQLAlchemy Core). Migrations live in ``migrations/``.

Relational where people query (runs, sentences, paths, vocabulary, labels, features); arrays as
typed little-endian blobs whose element type ends the column's name (never pickles). Every table
and column carries its documentation as a ``comment``: SQLite does not store comments (so the
migrations and Alembic's comparison ignore them), and ``docs/schema.md`` is generated from them by
``python -m clparse.store.schema_doc --write docs/schema.md`` (a test fails when it is stale).
"""

from __future__ import annotations

from sqlalchemy import (
    Boolean,
    Column,
    Float,
    ForeignKey,
    Index,
    Integer,
    LargeBinary,
    MetaData,
    String,
    Table,
    Text,
    UniqueConstraint,
)

# ``PRAGMA application_id`` of every clparse database: defined where files are opened (no SQLAlchemy there).
from clparse.store.engine import APPLICATION_ID  # noqa: F401

#: Newest schema revision this clparse knows (the Alembic head).
SCHEMA_REVISION = "0012"

#: How every ``*_at`` column stores a time (clparse.store.stamps.now).
_STAMP = "UTC, ISO 8601 to the second (2026-01-31T12:00:00+00:00)"
#: How every blob row's checksum is computed (clparse.store.blobs.checksum; revision 0008).
_BLOB_SHA = ("SHA-256 (hex), written with the row and verified where it is read and by clparse check, of: "
             "{covered}, each integer as 8 bytes little-endian and each blob as its length in 8 such bytes "
             "followed by its bytes. Revision 0008 (older rows got the checksum of what they held).")

metadata = MetaData()

runs = Table(
    "runs", metadata,
    Column("id", Integer, primary_key=True, comment="Run id (1: a database holds one run)."),
    Column("created_at", String, nullable=False, comment=f"When prepare wrote the run; {_STAMP}."),
    Column("clparse_version", String, nullable=False,
           comment="Version of the clparse that prepared the run."),
    Column("input_digest", String, nullable=False, unique=True,
           comment="SHA-256 (hex) of the prepare settings and the input files' contents: prepare with the "
                   "same inputs again does nothing, with others it is refused (runs are never mixed)."),
    Column("config_json", Text, nullable=False,
           comment="JSON object: settings (prepare's: max_words, seed, max_children, vocab_min, features, "
                   "skip_steps, constraints, unknown_words, tagger, train_tags, folds, fold_order, "
                   "tagger_iterations, order, paths), preprocess (which preprocessing steps ran, max_words) "
                   "and labels (the phrase labels, sorted)."),
    Column("status", String, nullable=False,
           comment="prepared (prepare writes the whole run in one transaction, so no other value is seen)."),
    Column("seconds", Float,
           comment="Wall time prepare took, in seconds (the tagger's training not included)."),
    comment="The prepared run: its settings and where it came from. One row per database.",
)

treebank_files = Table(
    "treebank_files", metadata,
    Column("id", Integer, primary_key=True, comment="File id."),
    Column("run_id", Integer, ForeignKey("runs.id", ondelete="CASCADE"), nullable=False, comment="The run."),
    Column("split", String, nullable=False, comment="train or dev."),
    Column("path", Text, nullable=False, comment="The path as given to prepare."),
    Column("sha256", String, nullable=False, comment="SHA-256 (hex) of the file's bytes when it was read."),
    Column("trees", Integer, nullable=False, comment="Trees read from the file (before any filter)."),
    comment="One row per treebank file prepare read.",
)

sentences = Table(
    "sentences", metadata,
    Column("id", Integer, primary_key=True, comment="Sentence id."),
    Column("run_id", Integer, ForeignKey("runs.id", ondelete="CASCADE"), nullable=False, comment="The run."),
    Column("split", String, nullable=False, comment="train or dev."),
    Column("position", Integer, nullable=False,
           comment="0-based place among the split's kept sentences, in file order."),
    Column("length", Integer, nullable=False, comment="Tokens as read, punctuation included, -NONE- not."),
    Column("words", Text, nullable=False,
           comment="The tokens as read, space-separated (treebank tokens hold no spaces)."),
    Column("gold_tree", Text, nullable=False, comment="The gold tree as read, bracketed on one line."),
    Column("tree", Text, nullable=False,
           comment="The tree after preprocessing (and, for a trained sentence, as examples were generated "
                   "from it: with its jackknifed tags when fold is set)."),
    Column("removed_json", Text, nullable=False,
           comment='JSON array of the tokens preprocessing removed: {"index", "word", "tag", "step"} each '
                   "(index into words, step the preprocessing step that took it)."),
    Column("trained", Boolean, nullable=False,
           comment="1 if training examples were generated from it (always 0 for dev)."),
    Column("skip_reason", String,
           comment="Why a training sentence gave no examples (a phrase wider than max_children, or a "
                   "constraint broken); NULL when trained, and for dev."),
    Column("fold", Integer,
           comment="Jackknife fold of a training sentence prepared with train_tags = jackknife (0-based); "
                   "NULL: its tree carries the gold tags (always for dev). Revision 0006."),
    Column("tags", Text,
           comment="The POS tags its training tree carries when jackknifed, as the tagger trained on the "
                   "other folds predicted them (space-separated, one per token); NULL with fold. "
                   "Revision 0006."),
    UniqueConstraint("run_id", "split", "position"),
    comment="One row per kept sentence (train and dev): the words, the gold tree, the preprocessed tree.",
)

inference_paths = Table(
    "inference_paths", metadata,
    Column("sentence_id", Integer, ForeignKey("sentences.id", ondelete="CASCADE"), primary_key=True,
           comment="The training sentence."),
    Column("step", Integer, primary_key=True,
           comment="0-based step along the path. With `prepare --paths N` (runs.config's settings.paths) "
                   "the sentence's N paths follow one another, each as long as the tree has phrases: step "
                   "DIV that length is the path's number."),
    Column("start", Integer, nullable=False, comment="First token of the phrase built (0-based)."),
    Column("end", Integer, nullable=False, comment="One past its last token (the span is start..end-1)."),
    Column("label", String, nullable=False, comment="The label of the phrase built."),
    comment="One row per step of a trained sentence's bottom-up inference path (a seeded random order, or "
            "l2r/r2l by the run's order setting), along which its examples were generated.",
)

vocabulary = Table(
    "vocabulary", metadata,
    Column("run_id", Integer, ForeignKey("runs.id", ondelete="CASCADE"), primary_key=True,
           comment="The run."),
    Column("word", String, primary_key=True,
           comment="A lower-cased word of the preprocessed training trees."),
    Column("count", Integer, nullable=False,
           comment="Its occurrences there; words seen fewer than vocab_min times are "
                   "unknown words to the features (UNK, or a signature)."),
    comment="One row per distinct lower-cased training word, rare ones included.",
)

labels = Table(
    "labels", metadata,
    Column("id", Integer, primary_key=True, comment="Label id."),
    Column("run_id", Integer, ForeignKey("runs.id", ondelete="CASCADE"), nullable=False, comment="The run."),
    Column("name", String, nullable=False, comment="The phrase label (function tags stripped), e.g. NP."),
    Column("candidates", Integer, nullable=False,
           comment="Candidate examples generated, before deduplication."),
    Column("positives", Integer, nullable=False, comment="Candidates that are correct (y = +1)."),
    Column("examples", Integer, nullable=False,
           comment="Distinct (feature row, y) pairs after deduplication: the label's stored examples."),
    UniqueConstraint("run_id", "name"),
    comment="One row per phrase label of the training trees: one binary classifier each.",
)

features = Table(
    "features", metadata,
    Column("run_id", Integer, ForeignKey("runs.id", ondelete="CASCADE"), primary_key=True,
           comment="The run."),
    Column("id", Integer, primary_key=True,
           comment="Feature id, 0-based: what feature rows and tree nodes refer to."),
    Column("template", String, nullable=False, comment="Feature template, e.g. child, context, exists."),
    Column("item", String, nullable=False, comment="The item the template looks at, e.g. first, head."),
    Column("property", String, nullable=False, comment="The property tested, e.g. label, headtag, headword."),
    Column("value", String, nullable=False, comment="The value it must have."),
    Column("text", Text, nullable=False, comment="The feature, readable: child[first].label = JJ."),
    Column("row_count", Integer, nullable=False, comment="Distinct feature rows that contain the feature."),
    comment="One row per feature (a template, item, property and value).",
)

feature_rows = Table(
    "feature_rows", metadata,
    Column("run_id", Integer, ForeignKey("runs.id", ondelete="CASCADE"), primary_key=True,
           comment="The run."),
    Column("chunk", Integer, primary_key=True, comment="0-based chunk number."),
    Column("first_row", Integer, nullable=False,
           comment="Row id of the chunk's first row (row ids count from 0)."),
    Column("row_count", Integer, nullable=False, comment="Rows in the chunk (65,536, the last one fewer)."),
    Column("indptr_int64", LargeBinary, nullable=False,
           comment="int64 × (row_count + 1): where each row's feature ids start in indices_int32 (from 0)."),
    Column("indices_int32", LargeBinary, nullable=False,
           comment="int32: the feature ids of every row of the chunk, one row after another."),
    Column("sha256", String, nullable=False,
           comment=_BLOB_SHA.format(covered="run_id, chunk, first_row, row_count, indptr_int64, "
                                            "indices_int32")),
    comment="The distinct feature sets (rows) that examples point at, shared by all labels, as chunks of a "
            "CSR matrix of 65,536 rows.",
)

label_examples = Table(
    "label_examples", metadata,
    Column("label_id", Integer, ForeignKey("labels.id", ondelete="CASCADE"), primary_key=True,
           comment="The label."),
    Column("chunk", Integer, primary_key=True, comment="0-based chunk number."),
    Column("first_example", Integer, nullable=False,
           comment="Index of the chunk's first example among the label's distinct examples (from 0)."),
    Column("example_count", Integer, nullable=False,
           comment="Examples in the chunk (65,536, the last fewer)."),
    Column("row_int32", LargeBinary, nullable=False,
           comment="int32 per example: its row id in feature_rows."),
    Column("y_int8", LargeBinary, nullable=False, comment="int8 per example: +1 correct, -1 not."),
    Column("multiplicity_int32", LargeBinary, nullable=False,
           comment="int32 per example: how many candidates it stands for (at least 1)."),
    Column("sha256", String, nullable=False,
           comment=_BLOB_SHA.format(covered="label_id, chunk, first_example, example_count, row_int32, "
                                            "y_int8, multiplicity_int32")),
    comment="A label's deduplicated examples in chunks (a label without examples has one empty chunk).",
)


# ---------------------------------------------------------------- boosting (revision 0002)

label_training = Table(
    "label_training", metadata,
    Column("label_id", Integer, ForeignKey("labels.id", ondelete="CASCADE"), primary_key=True,
           comment="The label."),
    Column("settings_json", Text, nullable=False,
           comment="JSON object of its boosting settings, fixed at its first claim: loss (logistic or "
                   "exponential), max_depth (null: unbounded), epsilon, checkpoint_every, smoothing, rule "
                   "(mrl or l1), sample (null: exact split search), sample_seed, sample_stratified (true: "
                   "positives and negatives sampled apart; false with exact search). A key missing from an "
                   "older row means the behaviour from before the setting existed."),
    Column("state", String, nullable=False, comment="training, paused, stopped, converged or failed."),
    Column("iteration", Integer, nullable=False, comment="Last committed iteration (0: none yet)."),
    Column("theta", Float,
           comment="Θ after the last committed iteration (λ with the l1 rule); NULL: Θ = ∞, no iteration "
                   "yet."),
    Column("loss", Float, nullable=False,
           comment="Training loss Σ m L(yQ) after the last committed iteration (before the first: of the "
                   "starting margins)."),
    Column("splits", Integer, nullable=False, comment="Splits in all its trees so far."),
    Column("examples_per_second", Float,
           comment="Distinct examples through the split search per second in the last iteration; NULL "
                   "before one, or when it was too fast to time."),
    Column("message", Text,
           comment='While training: "training on HOST as pid N" (then ", on dask worker ADDRESS" under '
                   "--dask); after: why it stopped, paused or failed."),
    Column("pid", Integer, comment="Process that trains it while state = training; NULL otherwise."),
    Column("started_at", String, nullable=False, comment=f"When it was first claimed; {_STAMP}."),
    Column("updated_at", String, nullable=False, comment=f"Its last write; {_STAMP}."),
    Column("margins_float64", LargeBinary, nullable=False,
           comment="float64 per distinct example: the margins Q after margins_iteration trees."),
    Column("margins_iteration", Integer, nullable=False,
           comment="The iteration margins_float64 belongs to: written at each margin checkpoint and when "
                   "the label stops, pauses or converges, so it may lag iteration; resume and "
                   "clparse_weights add the trees after it. Revision 0007."),
    Column("margins_sha256", String, nullable=False,
           comment=_BLOB_SHA.format(covered="label_id, margins_iteration, margins_float64")),
    comment="One row per label that training has touched: where its boosting stands.",
)

iterations = Table(
    "iterations", metadata,
    Column("label_id", Integer, ForeignKey("labels.id", ondelete="CASCADE"), primary_key=True,
           comment="The label."),
    Column("iteration", Integer, primary_key=True, comment="t = 1, 2, ..."),
    Column("theta", Float, nullable=False, comment="Θ^t = min(Θ^(t-1), root_gain) (λ^t with the l1 rule)."),
    Column("root_gain", Float, nullable=False, comment="Best loss reduction at the root this iteration."),
    Column("loss_before", Float, nullable=False, comment="Σ m L(y Q^(t-1))."),
    Column("loss_after", Float, nullable=False, comment="Σ m L(y Q^t)."),
    Column("z", Float, nullable=False, comment="Σ over leaves of Z = 2 √(W+ W−)."),
    Column("splits", Integer, nullable=False, comment="Splits in the tree."),
    Column("leaves", Integer, nullable=False, comment="Leaves in the tree."),
    Column("depth", Integer, nullable=False, comment="Depth of the tree (0: a single leaf)."),
    Column("weight_positive", Float, nullable=False,
           comment="Σ w over the examples with y = +1 at the start of the iteration."),
    Column("weight_negative", Float, nullable=False, comment="Σ w over the examples with y = -1."),
    Column("weight_max", Float, nullable=False, comment="The largest weight of an example."),
    Column("seconds", Float, nullable=False, comment="Wall time of the iteration (not part of the result)."),
    Column("search_seconds", Float, nullable=False, comment="Of which the split search."),
    Column("finished_at", String, nullable=False, comment=f"When it was committed; {_STAMP}."),
    Column("sha256", String, nullable=False,
           comment="SHA-256 (hex) of the tree, written in the iteration's transaction and verified when a "
                   "model or a replay loads it and by clparse check: label_id and iteration (int64) and "
                   "theta (float64), then per node in node order a null mask (uint16, bit i set when the "
                   "i-th value is NULL, then packed as 0), node, parent, depth, feature_id, true_child, "
                   "false_child, examples, candidates (int64) and gain, best_gain, w_positive, w_negative, "
                   "confidence (float64 bits, -0.0 as 0.0), all little-endian. Revision 0008 (older trees "
                   "got the checksum of what they held)."),
    comment="One row per boosting iteration (= one tree) of a label, committed together with its nodes.",
)

tree_nodes = Table(
    "tree_nodes", metadata,
    Column("label_id", Integer, ForeignKey("labels.id", ondelete="CASCADE"), primary_key=True,
           comment="The label."),
    Column("iteration", Integer, primary_key=True, comment="The tree's iteration."),
    Column("node", Integer, primary_key=True, comment="0 = root, then breadth-first."),
    Column("parent", Integer, comment="The parent node; NULL for the root."),
    Column("depth", Integer, nullable=False, comment="0 at the root."),
    Column("feature_id", Integer, comment="The feature a split tests (features.id); NULL for a leaf."),
    Column("gain", Float, comment="ΔZ of the split (|W+ − W−| gains with the l1 rule); NULL for a leaf."),
    Column("best_gain", Float, nullable=False,
           comment="Best ΔZ found here (a leaf's, below Θ^t, says how close it came)."),
    Column("w_positive", Float, nullable=False, comment="W+ of the examples reaching the node."),
    Column("w_negative", Float, nullable=False, comment="W− of the examples reaching the node."),
    Column("examples", Integer, nullable=False, comment="Distinct examples reaching the node."),
    Column("candidates", Integer, nullable=False, comment="Examples reaching it counted with multiplicity."),
    Column("confidence", Float,
           comment="κ of a leaf, added to the margin of every example reaching it; NULL for a split."),
    Column("true_child", Integer, comment="Node the examples having the feature go to; NULL for a leaf."),
    Column("false_child", Integer, comment="Node the others go to; NULL for a leaf."),
    Index("tree_nodes_by_feature", "feature_id"),
    comment="The nodes of every tree. A split node tests feature_id: examples having it go to true_child.",
)

margin_checkpoints = Table(
    "margin_checkpoints", metadata,
    Column("label_id", Integer, ForeignKey("labels.id", ondelete="CASCADE"), primary_key=True,
           comment="The label."),
    Column("iteration", Integer, primary_key=True, comment="The margins are Q after this iteration."),
    Column("margins_float64", LargeBinary, nullable=False, comment="float64 per distinct example: Q."),
    Column("sha256", String, nullable=False,
           comment=_BLOB_SHA.format(covered="label_id, iteration, margins_float64")),
    comment="Margin vectors Q kept every checkpoint_every iterations; the margins and weights of any other "
            "iteration are rebuilt exactly from the nearest checkpoint and the stored trees.",
)


# ---------------------------------------------------------------- tagging and calibration (revision 0003)

taggers = Table(
    "taggers", metadata,
    Column("run_id", Integer, ForeignKey("runs.id", ondelete="CASCADE"), primary_key=True,
           comment="The run."),
    Column("model_json", Text,
           comment="A perceptron tagger's model (NLTK's averaged perceptron as JSON text); NULL for a CRF."),
    Column("train_sentences", Integer, nullable=False,
           comment="Training trees it learned from (every length)."),
    Column("dev_accuracy", Float,
           comment="Token accuracy on the dev split, 0 to 1; NULL without a dev split."),
    Column("seconds", Float, nullable=False, comment="Wall time its training took, in seconds."),
    Column("created_at", String, nullable=False, comment=f"When it was stored; {_STAMP}."),
    Column("kind", String, nullable=False, server_default="perceptron",
           comment="perceptron (model in model_json) or crf (model in model_blob). Revision 0006; rows "
                   "from before it are perceptron."),
    Column("model_blob", LargeBinary,
           comment="A CRF tagger's model: CRFsuite's model file behind clparse's 52-byte header (magic, "
                   "versions, SHA-256), the lexicon (feature sets 2 to 4) and the word clusters (set 4) "
                   "between them; NULL for a perceptron. Revision 0006."),
    comment="The POS tagger prepare trains on the training split (data, never code): it tags raw text "
            "for parse and, with calibrate's tags = tagger, the dev sentences. One row per run.",
)

calibrations = Table(
    "calibrations", metadata,
    Column("id", Integer, primary_key=True, comment="Calibration id."),
    Column("run_id", Integer, ForeignKey("runs.id", ondelete="CASCADE"), nullable=False, comment="The run."),
    Column("settings_digest", String, nullable=False, unique=True,
           comment="SHA-256 (hex) of the search settings and the dev trees: the same ones again resume "
                   "this calibration."),
    Column("settings_json", Text, nullable=False,
           comment="JSON object: beam, max_pops, aggregator, tags (gold or tagger) and dev (the dev files, "
                   "comma-separated, or database for the run's dev split)."),
    Column("best_theta", Float,
           comment="Θ̂ with the highest F1 so far (ties: the larger Θ̂, fewer splits); NULL before a point."),
    Column("created_at", String, nullable=False, comment=f"When it was created; {_STAMP}."),
    Column("updated_at", String, nullable=False,
           comment=f"Its last point or trial; {_STAMP}. --theta best reads the latest calibration."),
    comment="One calibration: a dev set and search settings; its points are parsed one Θ̂ at a time.",
)

calibration_points = Table(
    "calibration_points", metadata,
    Column("calibration_id", Integer, ForeignKey("calibrations.id", ondelete="CASCADE"), primary_key=True,
           comment="The calibration."),
    Column("theta", Float, primary_key=True,
           comment="Θ̂: each label keeps its trees with Θ^t ≥ Θ̂ (finite, > 0)."),
    Column("trees", Integer, nullable=False, comment="Trees in all labels' classifiers at Θ̂."),
    Column("splits", Integer, nullable=False, comment="Splits in those trees."),
    Column("sentences", Integer, nullable=False, comment="Dev sentences parsed."),
    Column("fallbacks", Integer, nullable=False,
           comment="Sentences the search could not finish (given a flat tree)."),
    Column("completions", Integer, nullable=False, server_default="0",
           comment="Sentences finished greedily at the pop cap. Revision 0004 (0 for older points: they "
                   "could not complete greedily)."),
    Column("recall", Float, nullable=False, comment="Labeled bracket recall, % (EVALB)."),
    Column("precision", Float, nullable=False, comment="Labeled bracket precision, %."),
    Column("f1", Float, nullable=False, comment="Their harmonic mean, %."),
    Column("exact", Float, nullable=False, comment="% of sentences parsed exactly right."),
    Column("seconds", Float, nullable=False,
           comment="Wall time of loading the model and parsing, in seconds."),
    Column("finished_at", String, nullable=False, comment=f"When it was committed; {_STAMP}."),
    comment="One row per Θ̂ of a calibration: the dev set parsed with every label at that Θ̂.",
)

label_theta_steps = Table(
    "label_theta_steps", metadata,
    Column("calibration_id", Integer, ForeignKey("calibrations.id", ondelete="CASCADE"), primary_key=True,
           comment="The calibration whose Θ̂ grid and best Θ̂ the trials start from."),
    Column("step", Integer, primary_key=True, comment="0-based order of the trial."),
    Column("label", String, nullable=False, comment="The label moved."),
    Column("theta", Float, nullable=False, comment="The Θ̂ of the grid it was moved to."),
    Column("f1", Float, nullable=False, comment="Dev F1 (%) with that label moved."),
    Column("accepted", Boolean, nullable=False, comment="1 if it raised the F1 and the move was kept."),
    Column("seconds", Float, nullable=False, comment="Wall time of the trial, in seconds."),
    Column("finished_at", String, nullable=False, comment=f"When it was committed; {_STAMP}."),
    comment="Each trial of a per-label calibration (calibrate --per-label): one label moved to one Θ̂ of the "
            "grid and the dev F1 with it; the accepted trials, replayed from the calibration's best_theta, "
            "are the per-label Θ̂. Revision 0005.",
)

calibration_labels = Table(
    "calibration_labels", metadata,
    Column("calibration_id", Integer, ForeignKey("calibrations.id", ondelete="CASCADE"), primary_key=True,
           comment="The calibration."),
    Column("theta", Float, primary_key=True, comment="The point's Θ̂."),
    Column("label", String, primary_key=True, comment="The phrase label."),
    Column("gold", Integer, nullable=False, comment="Its brackets in the gold trees."),
    Column("test", Integer, nullable=False, comment="Its brackets in the parsed trees."),
    Column("matched", Integer, nullable=False, comment="Parsed brackets that match a gold one."),
    Column("recall", Float, nullable=False, comment="matched / gold, % (0 without gold brackets)."),
    Column("precision", Float, nullable=False, comment="matched / test, % (0 without parsed brackets)."),
    Column("f1", Float, nullable=False, comment="Their harmonic mean, %."),
    comment="One row per label at a calibration point: its bracket counts and scores on the dev set.",
)

combinations = Table(
    "combinations", metadata,
    Column("id", Integer, primary_key=True, comment="Combination id."),
    Column("k", Integer, nullable=False,
           comment="Trees per sentence taken from each member's k-best list."),
    Column("beam", Integer, nullable=False, comment="The beam the clparse members parse with."),
    Column("threshold", Float, nullable=False,
           comment="ρ: a constituent is kept if its weight ω(c) = Σ_i Σ_k λ_i δ(c, t_ik) f(t_ik) is at least "
                   "this."),
    Column("temperature", Float, nullable=False,
           comment="τ of the tree shares f(t_ik): the softmax of a member's tree scores divided by τ."),
    Column("dev_f1", Float, nullable=False,
           comment="Labelled F1 (%, EVALB) of the combination on the dev set it was fitted on."),
    Column("dev_sentences", Integer, nullable=False, comment="Dev sentences fitted on."),
    Column("dev_json", Text, nullable=False,
           comment="JSON object: the dev files, max_words (0: all) and tags (gold) of the fit, aggregator: "
                   "what the members' k-best lists were ranked and scored by, sum or maxmin (absent before "
                   "it was kept: maxmin), and members: per member, what it parsed dev with (its run's "
                   "input_digest, Θ̂ resolved, splits; null for a PTB member), which parse --db refuses to "
                   "differ (absent before it was kept)."),
    Column("evaluations", Integer, nullable=False, comment="Dev F1 evaluations Powell's method made."),
    Column("seconds", Float, nullable=False,
           comment="Wall time of parsing the dev set and fitting, in seconds."),
    Column("clparse_version", String, nullable=False, comment="The clparse version that fitted it."),
    Column("created_at", String, nullable=False, comment=f"When it was stored; {_STAMP}."),
    comment="A parser combination by constituent recombination (Chen & Kit 2012 §3; `clparse combine`), "
            "fitted on dev by Powell's method; `clparse parse --db` on its database parses with it (the "
            "latest row). Revision 0009.",
)

combination_members = Table(
    "combination_members", metadata,
    Column("combination_id", Integer, ForeignKey("combinations.id", ondelete="CASCADE"), primary_key=True,
           comment="The combination."),
    Column("position", Integer, primary_key=True, comment="0-based order of the member."),
    Column("kind", String, nullable=False,
           comment="clparse (a clparse database, parsed at theta) or ptb (another parser's trees, read from "
                   "a file: only for fitting and evaluation)."),
    Column("source", Text, nullable=False,
           comment="The member's database or PTB file, as an absolute path."),
    Column("theta", String, comment="Θ̂ of a clparse member (a number, or best); NULL for a ptb member."),
    Column("weight", Float, nullable=False, comment="λ_i: the member's weight in ω(c)."),
    Column("dev_f1", Float, nullable=False,
           comment="The member's own 1-best labelled F1 (%) on the dev set."),
    comment="The members of a combination, in order. Revision 0009.",
)

tag_choosers = Table(
    "tag_choosers", metadata,
    Column("id", Integer, primary_key=True,
           comment="Chooser id; parse uses the latest one fitted at its Θ̂ and aggregator."),
    Column("run_id", Integer, ForeignKey("runs.id", ondelete="CASCADE"), nullable=False, comment="The run."),
    Column("theta", String, nullable=False,
           comment="The Θ̂ of the model it was fitted with: the number as Python writes it (repr), or a JSON "
                   "object of per-label Θ̂. parse uses it with that model only."),
    Column("beam", Integer, nullable=False, comment="The beam the dev set was parsed with."),
    Column("max_pops", Integer, nullable=False, comment="The pop cap the dev set was parsed with."),
    Column("aggregator", String, nullable=False, server_default="maxmin",
           comment="The aggregator the dev set was parsed with (sum or maxmin); parse uses the chooser with "
                   "that aggregator only. Revision 0011; rows from before it are maxmin."),
    Column("tagger", String, nullable=False, server_default="crf",
           comment="The tagger whose taggings it was fitted on: crf, or crf+net: and the first 16 hex "
                   "digits of the SHA-256 of the tagger net `clparse train-tagger` stored beside the CRF; "
                   "parse uses the chooser with that tagger only. Revision 0012; rows from before it are "
                   "crf."),
    Column("alternatives", Integer, nullable=False,
           comment="Taggings tried per sentence besides the best (parse --tag-alternatives)."),
    Column("weights_json", Text, nullable=False,
           comment="JSON object: the logistic regression's weight of each input (bias, lowest, loss, "
                   "certainty; docs/tagger.md), in that order."),
    Column("sentences", Integer, nullable=False, comment="Dev sentences parsed."),
    Column("pairs", Integer, nullable=False,
           comment="Taggings it was fitted on: other taggings whose parse's sentence F1 differs from the "
                   "best tagging's."),
    Column("f1_best", Float, nullable=False,
           comment="Dev F1 (%, gold tags put back on the leaves) of the best tagging's parses alone."),
    Column("f1_rule", Float, nullable=False,
           comment="Dev F1 of the parses the search's own key chooses (parse without a chooser)."),
    Column("f1_chooser", Float, nullable=False,
           comment="Dev F1 of the parses this chooser chooses (in sample)."),
    Column("f1_two_fold", Float, nullable=False,
           comment="Dev F1 of a chooser fitted on every other sentence and scored on the rest, both ways: "
                   "what to expect on new text."),
    Column("seconds", Float, nullable=False,
           comment="Wall time of parsing the dev set and fitting, in seconds."),
    Column("clparse_version", String, nullable=False, comment="The clparse version that fitted it."),
    Column("created_at", String, nullable=False, comment=f"When it was stored; {_STAMP}."),
    comment="How parse chooses among the taggings of untagged input (`clparse calibrate-tags`): a logistic "
            "regression fitted on the run's dev set at one Θ̂. Revision 0010.",
)


tagger_nets = Table(
    "tagger_nets", metadata,
    Column("run_id", Integer, ForeignKey("runs.id", ondelete="CASCADE"), primary_key=True,
           comment="The run."),
    Column("model_blob", LargeBinary, nullable=False,
           comment="The net (clparse.tag.net): a 56-byte header (magic, format, SHA-256 of the rest, JSON "
                   "length), a JSON header (words, characters, tags, array shapes), then float32 arrays; "
                   "format 2, a net reading word clusters, then its cluster tables and the clusters."),
    Column("crf_weight", Float, nullable=False,
           comment="a in P(tag) ∝ P_crf^a · P_net^(1-a), the ensemble parse and tag use."),
    Column("train_sentences", Integer, nullable=False, comment="Training sentences it learned from."),
    Column("epochs", Integer, nullable=False, comment="Epochs trained."),
    Column("kept_epoch", Integer, nullable=False,
           comment="The epoch whose weights were kept: the best on the dev split (the last without one)."),
    Column("seed", Integer, nullable=False, comment="The seed of its initial weights and batch order."),
    Column("net_dev_accuracy", Float, comment="The net's own token accuracy on the dev split, 0 to 1."),
    Column("dev_accuracy", Float,
           comment="The CRF + net ensemble's token accuracy on the dev split, 0 to 1 (the CRF's alone is "
                   "taggers.dev_accuracy)."),
    Column("seconds", Float, nullable=False, comment="Wall time its training took, in seconds."),
    Column("clparse_version", String, nullable=False, comment="The clparse version that trained it."),
    Column("created_at", String, nullable=False, comment=f"When it was stored; {_STAMP}."),
    comment="The tagger net `clparse train-tagger` trains beside the CRF: when present, parse, tag and "
            "calibrate-tags tag with both (docs/tagger.md). One row per run. Revision 0012.",
)


def blob_columns() -> dict[str, list[str]]:
    """Per table, its blob columns (for readers that size pages by blob bytes, such as ``clparse browse``)."""
    return {name: [c.name for c in table.columns if isinstance(c.type, LargeBinary)]
            for name, table in metadata.tables.items()}
