"""Running boosting over a database: stop rules, one label at a time or in parallel, status."""

from clparse.train.label import train_label
from clparse.train.parallel import train
from clparse.train.status import LabelStatus, format_status, label_status
from clparse.train.stopping import StopRule, default_theta_floor

__all__ = ["LabelStatus", "StopRule", "default_theta_floor", "format_status", "label_status", "train",
           "train_label"]
