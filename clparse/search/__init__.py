"""Bottom-up best-first / beam search over parser states (paper §2.2-2.3)."""

from clparse.search.aggregate import AGGREGATORS
from clparse.search.best_first import SearchResult, search, search_kbest
from clparse.search.scorer import CandidateScorer

__all__ = ["AGGREGATORS", "CandidateScorer", "SearchResult", "search", "search_kbest"]
