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
SCHEMA_REVISION = "0001"

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
