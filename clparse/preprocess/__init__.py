"""Step 2 of the pipeline: Table 3 preprocessing, the vocabulary, head finding."""

from clparse.preprocess.heads import base_label, head_child, head_child_index, lexical_head
from clparse.preprocess.pipeline import (
    ROOT_LABEL,
    PreprocessConfig,
    Preprocessed,
    PreprocessReport,
    RemovedToken,
    preprocess_tagged,
    preprocess_tree,
    preprocess_treebank,
    sentence_length,
)
from clparse.preprocess.transforms import PUNCTUATION_TAGS, STEP_NAMES, is_punctuation
from clparse.preprocess.vocabulary import UNK, Vocabulary

__all__ = [
    "PUNCTUATION_TAGS", "ROOT_LABEL", "STEP_NAMES", "UNK", "PreprocessConfig", "PreprocessReport",
    "Preprocessed", "RemovedToken", "Vocabulary", "base_label", "head_child", "head_child_index",
    "is_punctuation", "lexical_head", "preprocess_tagged",
    "preprocess_tree", "preprocess_treebank", "sentence_length",
]
