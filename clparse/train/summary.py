"""What a training run did, per label: its own module, so the local and the Dask trainers share it
without importing each other."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from clparse.train.stopping import StopRule


@dataclass
class TrainSummary:
    rule: StopRule
    states: dict[str, str] = field(default_factory=dict)  # label -> final state
    failures: dict[str, str] = field(default_factory=dict)  # label -> error
    refused: dict[str, str] = field(default_factory=dict)  # label -> why (another live trainer holds it)
    cluster: Any = None  # with ``dask``: the ClusterStats (bytes shipped, time per part)

    @property
    def interrupted(self) -> bool:
        return any(state == "paused" for state in self.states.values())
