"""The training database schema, declared once (SQLAlchemy Core). Migrations live in ``migrations/``.

Relational where people query (runs, sentences, paths, vocabulary, labels,
features); arrays as typed little-endian blobs whose dtype is in the column
name's documentation below (never pickles). See docs/schema.md.
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

#: ``PRAGMA application_id`` of every clparse database ("clpa"): tells a clparse file from any other SQLite file.
APPLICATION_ID = 0x636C7061
#: Newest schema revision this clparse knows (the Alembic head).
SCHEMA_REVISION = "0007"

metadata = MetaData()

runs = Table(
    "runs", metadata,
    Column("id", Integer, primary_key=True),
    Column("created_at", String, nullable=False),
    Column("clparse_version", String, nullable=False),
    Column("input_digest", String, nullable=False, unique=True),
    Column("config_json", Text, nullable=False),
    Column("status", String, nullable=False),  # preparing | prepared
    Column("seconds", Float),
)

treebank_files = Table(
    "treebank_files", metadata,
    Column("id", Integer, primary_key=True),
    Column("run_id", Integer, ForeignKey("runs.id", ondelete="CASCADE"), nullable=False),
    Column("split", String, nullable=False),
    Column("path", Text, nullable=False),
    Column("sha256", String, nullable=False),
    Column("trees", Integer, nullable=False),
)

sentences = Table(
    "sentences", metadata,
    Column("id", Integer, primary_key=True),
    Column("run_id", Integer, ForeignKey("runs.id", ondelete="CASCADE"), nullable=False),
    Column("split", String, nullable=False),
    Column("position", Integer, nullable=False),
    Column("length", Integer, nullable=False),
    Column("words", Text, nullable=False),  # space-separated original tokens (PTB tokens have no spaces)
    Column("gold_tree", Text, nullable=False),  # the tree as read
    Column("tree", Text, nullable=False),  # after preprocessing
    Column("removed_json", Text, nullable=False),  # tokens preprocessing removed
    Column("trained", Boolean, nullable=False),  # examples were generated from it
    Column("skip_reason", String),
    Column("fold", Integer),  # jackknife fold of a training sentence (NULL: trained on gold tags)
    Column("tags", Text),  # the POS tags its training tree carries when jackknifed (space-separated)
    UniqueConstraint("run_id", "split", "position"),
)

inference_paths = Table(
    "inference_paths", metadata,
    Column("sentence_id", Integer, ForeignKey("sentences.id", ondelete="CASCADE"), primary_key=True),
    Column("step", Integer, primary_key=True),
    Column("start", Integer, nullable=False),
    Column("end", Integer, nullable=False),
    Column("label", String, nullable=False),
)

vocabulary = Table(
    "vocabulary", metadata,
    Column("run_id", Integer, ForeignKey("runs.id", ondelete="CASCADE"), primary_key=True),
    Column("word", String, primary_key=True),
    Column("count", Integer, nullable=False),
)

labels = Table(
    "labels", metadata,
    Column("id", Integer, primary_key=True),
    Column("run_id", Integer, ForeignKey("runs.id", ondelete="CASCADE"), nullable=False),
    Column("name", String, nullable=False),
    Column("candidates", Integer, nullable=False),  # examples before deduplication
    Column("positives", Integer, nullable=False),
    Column("examples", Integer, nullable=False),  # distinct (features, y) after deduplication
    UniqueConstraint("run_id", "name"),
)

features = Table(
    "features", metadata,
    Column("run_id", Integer, ForeignKey("runs.id", ondelete="CASCADE"), primary_key=True),
    Column("id", Integer, primary_key=True),
    Column("template", String, nullable=False),
    Column("item", String, nullable=False),
    Column("property", String, nullable=False),
    Column("value", String, nullable=False),
    Column("text", Text, nullable=False),
    Column("row_count", Integer, nullable=False),  # distinct feature rows containing the feature
)

# Feature sets shared by all labels, as CSR chunks: indptr int64 (rows+1, relative to the chunk),
# indices int32 (feature ids).
feature_rows = Table(
    "feature_rows", metadata,
    Column("run_id", Integer, ForeignKey("runs.id", ondelete="CASCADE"), primary_key=True),
    Column("chunk", Integer, primary_key=True),
    Column("first_row", Integer, nullable=False),
    Column("row_count", Integer, nullable=False),
    Column("indptr_int64", LargeBinary, nullable=False),
    Column("indices_int32", LargeBinary, nullable=False),
)

# Per label: deduplicated examples in chunks: row ids (int32, into feature_rows), y (int8, +1/-1),
# multiplicity (int32).
label_examples = Table(
    "label_examples", metadata,
    Column("label_id", Integer, ForeignKey("labels.id", ondelete="CASCADE"), primary_key=True),
    Column("chunk", Integer, primary_key=True),
    Column("first_example", Integer, nullable=False),
    Column("example_count", Integer, nullable=False),
    Column("row_int32", LargeBinary, nullable=False),
    Column("y_int8", LargeBinary, nullable=False),
    Column("multiplicity_int32", LargeBinary, nullable=False),
)


# ---------------------------------------------------------------- boosting (revision 0002)

# One row per label that training has touched: where its boosting stands. ``margins_float64`` is the
# margin vector Q after ``margins_iteration`` trees (one float64 per distinct example), written at
# every margin checkpoint and when the label stops, pauses or converges, not at every iteration
# (revision 0007); a resumed run adds trees margins_iteration+1..iteration to it with the additions
# training made, and so continues exactly where the last committed iteration left off.
label_training = Table(
    "label_training", metadata,
    Column("label_id", Integer, ForeignKey("labels.id", ondelete="CASCADE"), primary_key=True),
    Column("settings_json", Text, nullable=False),  # loss, max_depth, epsilon, checkpoint_every
    Column("state", String, nullable=False),  # training | paused | stopped | converged | failed
    Column("iteration", Integer, nullable=False),  # last committed iteration (0: none yet)
    Column("theta", Float),  # Θ of the last committed iteration
    Column("loss", Float, nullable=False),  # training loss after the last committed iteration
    Column("splits", Integer, nullable=False),  # splits in all trees so far
    Column("examples_per_second", Float),  # distinct examples through the split search per second, last iteration
    Column("message", Text),  # why it stopped or failed
    Column("pid", Integer),  # process that trains it (while state = training)
    Column("started_at", String, nullable=False),
    Column("updated_at", String, nullable=False),
    Column("margins_float64", LargeBinary, nullable=False),
    Column("margins_iteration", Integer, nullable=False),  # Q in margins_float64 is after this iteration (0007)
)

# One row per boosting iteration (= one tree) of a label, committed together with its nodes.
iterations = Table(
    "iterations", metadata,
    Column("label_id", Integer, ForeignKey("labels.id", ondelete="CASCADE"), primary_key=True),
    Column("iteration", Integer, primary_key=True),  # t = 1, 2, ...
    Column("theta", Float, nullable=False),  # Θ^t = min(Θ^(t-1), root_gain)
    Column("root_gain", Float, nullable=False),  # best loss reduction at the root this iteration
    Column("loss_before", Float, nullable=False),  # Σ m L(y Q^(t-1))
    Column("loss_after", Float, nullable=False),  # Σ m L(y Q^t)
    Column("z", Float, nullable=False),  # Σ over leaves of Z_f = 2 sqrt(W+ W-)
    Column("splits", Integer, nullable=False),
    Column("leaves", Integer, nullable=False),
    Column("depth", Integer, nullable=False),
    Column("weight_positive", Float, nullable=False),  # Σ w over y = +1 at the start of the iteration
    Column("weight_negative", Float, nullable=False),
    Column("weight_max", Float, nullable=False),
    Column("seconds", Float, nullable=False),  # wall time of the iteration (not part of the result)
    Column("search_seconds", Float, nullable=False),  # of which split search
    Column("finished_at", String, nullable=False),
)

# The nodes of every tree. A split node tests ``feature_id``: examples having it go to ``true_child``.
tree_nodes = Table(
    "tree_nodes", metadata,
    Column("label_id", Integer, ForeignKey("labels.id", ondelete="CASCADE"), primary_key=True),
    Column("iteration", Integer, primary_key=True),
    Column("node", Integer, primary_key=True),  # 0 = root, then breadth-first
    Column("parent", Integer),
    Column("depth", Integer, nullable=False),
    Column("feature_id", Integer),  # NULL for a leaf
    Column("gain", Float),  # ΔZ of the split (NULL for a leaf)
    Column("best_gain", Float, nullable=False),  # best ΔZ found here (a leaf's, below Θ^t, says how close it came)
    Column("w_positive", Float, nullable=False),  # W+ of the examples reaching the node
    Column("w_negative", Float, nullable=False),
    Column("examples", Integer, nullable=False),  # distinct examples reaching the node
    Column("candidates", Integer, nullable=False),  # examples counted with multiplicity
    Column("confidence", Float),  # κ of a leaf (NULL for a split)
    Column("true_child", Integer),
    Column("false_child", Integer),
    Index("tree_nodes_by_feature", "feature_id"),
)

# Margin vectors Q after an iteration, kept every ``checkpoint_every`` iterations (within a size budget);
# the weights of any other iteration are rebuilt exactly from the nearest checkpoint and the stored trees.
margin_checkpoints = Table(
    "margin_checkpoints", metadata,
    Column("label_id", Integer, ForeignKey("labels.id", ondelete="CASCADE"), primary_key=True),
    Column("iteration", Integer, primary_key=True),
    Column("margins_float64", LargeBinary, nullable=False),
)


# ---------------------------------------------------------------- tagging and calibration (revision 0003)

# The POS tagger prepare trains on the training split: ``kind`` perceptron (NLTK's averaged
# perceptron, JSON text in model_json) or crf (CRFsuite bytes behind clparse's header, model_blob).
taggers = Table(
    "taggers", metadata,
    Column("run_id", Integer, ForeignKey("runs.id", ondelete="CASCADE"), primary_key=True),
    Column("model_json", Text),
    Column("train_sentences", Integer, nullable=False),
    Column("dev_accuracy", Float),  # token accuracy on the dev split (NULL without one)
    Column("seconds", Float, nullable=False),
    Column("created_at", String, nullable=False),
    Column("kind", String, nullable=False, server_default="perceptron"),  # revision 0006
    Column("model_blob", LargeBinary),  # revision 0006
)

# One calibration: a dev set and search settings; its points are parsed one Θ̂ at a time.
calibrations = Table(
    "calibrations", metadata,
    Column("id", Integer, primary_key=True),
    Column("run_id", Integer, ForeignKey("runs.id", ondelete="CASCADE"), nullable=False),
    Column("settings_digest", String, nullable=False, unique=True),  # dev sentences + search settings
    Column("settings_json", Text, nullable=False),  # beam, max_pops, aggregator, tags, dev source
    Column("best_theta", Float),  # Θ̂ with the highest F1 so far (ties: the larger Θ̂, fewer splits)
    Column("created_at", String, nullable=False),
    Column("updated_at", String, nullable=False),
)

calibration_points = Table(
    "calibration_points", metadata,
    Column("calibration_id", Integer, ForeignKey("calibrations.id", ondelete="CASCADE"), primary_key=True),
    Column("theta", Float, primary_key=True),
    Column("trees", Integer, nullable=False),  # trees in all labels' classifiers at Θ̂
    Column("splits", Integer, nullable=False),
    Column("sentences", Integer, nullable=False),
    Column("fallbacks", Integer, nullable=False),  # sentences the search could not finish
    Column("completions", Integer, nullable=False, server_default="0"),  # finished greedily at the pop cap (0004)
    Column("recall", Float, nullable=False),
    Column("precision", Float, nullable=False),
    Column("f1", Float, nullable=False),
    Column("exact", Float, nullable=False),  # % of sentences parsed exactly right
    Column("seconds", Float, nullable=False),
    Column("finished_at", String, nullable=False),
)

# Per-label Θ̂ (revision 0005): each coordinate-ascent trial (one label moved to one Θ̂ of the grid, the
# dev F1 with it); the accepted ones, replayed from the global best Θ̂, are the per-label assignment.
label_theta_steps = Table(
    "label_theta_steps", metadata,
    Column("calibration_id", Integer, ForeignKey("calibrations.id", ondelete="CASCADE"), primary_key=True),
    Column("step", Integer, primary_key=True),
    Column("label", String, nullable=False),
    Column("theta", Float, nullable=False),
    Column("f1", Float, nullable=False),
    Column("accepted", Boolean, nullable=False),
    Column("seconds", Float, nullable=False),
    Column("finished_at", String, nullable=False),
)

calibration_labels = Table(
    "calibration_labels", metadata,
    Column("calibration_id", Integer, ForeignKey("calibrations.id", ondelete="CASCADE"), primary_key=True),
    Column("theta", Float, primary_key=True),
    Column("label", String, primary_key=True),
    Column("gold", Integer, nullable=False),
    Column("test", Integer, nullable=False),
    Column("matched", Integer, nullable=False),
    Column("recall", Float, nullable=False),
    Column("precision", Float, nullable=False),
    Column("f1", Float, nullable=False),
)
