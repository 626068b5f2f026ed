"""The span-edge template (issue 27) end to end: a run prepared with it trains, stores its features, and
the search's window cache gives every state exactly the scores a fresh scorer computes (the outside
terminals are read from the context items, so a window still determines its features)."""

from __future__ import annotations

from pathlib import Path

import pytest

from clparse.features.space import FeatureConfig
from clparse.rebuild.model import load_model
from tests.template_runs import states_scored_alike, trained_sample_run


@pytest.fixture(scope="module")
def span_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return trained_sample_run(tmp_path_factory, "span", FeatureConfig(span_edges=True))


def test_the_model_tests_span_edge_features(span_db: Path) -> None:
    model = load_model(span_db, 4.0)
    assert model.features.span_edges
    tested = {key for key, fid in model.feature_ids.items() if key[0] == "span-edge"}
    assert tested, "no span-edge feature was stored"
    assert {item for _, item, _, _ in tested} == {"first", "last", "before", "after"}


def test_cached_scores_equal_fresh_scores_on_every_state(span_db: Path) -> None:
    assert states_scored_alike(span_db, 12) > 50
