"""The settings each label of a run trains with when `train` is given some options and not others.

A label's settings are fixed at its first iteration, and the labels of one run may have been started with
different ones (``--labels NP --sample 500``, then ``--labels VP``). An option left out is, for a started
label, what that label was started with; for a label not started yet, the value every started label shares,
else the default. An option given that differs from a started label's stored value refuses that label.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, fields
from typing import Any

from clparse.boost.booster import BoostSettings
from clparse.errors import ConfigurationError, ParameterError

_NAMES = frozenset(f.name for f in fields(BoostSettings))


@dataclass(frozen=True)
class RunSettings:
    """Per label, the :class:`BoostSettings` it trains with (:meth:`of`).

    Its attributes (``rule``, ``sample``, ...) read as those of a label not started yet (``fresh``), as the
    single settings of a run did before labels kept their own.
    """

    fresh: BoostSettings  # a label not started yet
    started: Mapping[str, BoostSettings]  # each started label's stored settings
    given: Mapping[str, Any]  # the options given, by setting name (see OPTIONS)

    def of(self, label: str) -> BoostSettings:
        """The settings ``label`` trains with; an option given that its stored settings contradict refuses it
        (:class:`ConfigurationError` naming the label)."""
        stored = self.started.get(label)
        if stored is None:
            if "sample_seed" in self.given and self.fresh.sample is None:  # seeds nothing, yet is stored
                raise ParameterError("sample_seed", f"seeds the per-tree samples, and label {label} would be "
                                                    "trained on every example: give the sample size too")
            return self.fresh
        if "sample_seed" in self.given and "sample" not in self.given and stored.sample is None:
            raise ConfigurationError(f"label {label} was started with no --sample, so --sample-seed seeds "
                                     "nothing for it; leave --sample-seed out (or name the sampled labels "
                                     "with --labels)")
        wanted = {**stored.to_dict(), **self.given}
        if "smoothing" not in self.given and wanted["rule"] != stored.rule:  # the other rule's default, as
            wanted["smoothing"] = BoostSettings(rule=wanted["rule"]).smoothing  # for a label not started
        refuse_changes(label, stored.to_dict(), wanted)
        return stored

    def __getattr__(self, name: str) -> Any:
        if name not in _NAMES:  # "fresh" itself too: no recursion while a copy is being built
            raise AttributeError(name)
        return getattr(self.fresh, name)


def refuse_changes(label: str, stored: Mapping[str, Any], given: Mapping[str, Any]) -> None:
    """Refuse ``label`` if the settings ``given`` differ from those it was ``stored`` with."""
    if dict(stored) == dict(given):
        return
    # only the settings that differ: the whole dictionaries made a message of 500 characters
    changed = changed_settings(stored, given) or sorted(name for name in stored.keys() | given.keys()
                                                        if stored.get(name) != given.get(name))
    raise ConfigurationError(f"label {label} was started with {', '.join(changed)}; settings cannot change "
                             "midway (use a new database for other settings)")


#: The option that sets each stored setting, and how its None reads: the message names what the user types
#: (it said "sample None (not 100), sample_stratified False (not True)" and "--max-depth None (not 1)").
_OPTIONS = {"loss": ("--loss", ""), "max_depth": ("--max-depth", "no --max-depth"),
            "checkpoint_every": ("--checkpoint-every", ""), "smoothing": ("--smoothing", ""),
            "rule": ("--rule", ""), "sample": ("--sample", "no --sample"),
            "sample_seed": ("--sample-seed", ""), "epsilon": ("epsilon", "")}


def changed_settings(old: Mapping[str, Any], new: Mapping[str, Any]) -> list[str]:
    """The settings that differ, each as its option with the stored value (``old``) and the one given."""

    def shown(name: str, value: object) -> str:
        option, none = _OPTIONS.get(name, (name, ""))
        return none if value is None and none else f"{option} {'none' if value is None else value}"

    changed = []
    for name in sorted(old.keys() | new.keys()):
        if old.get(name) == new.get(name):
            continue
        if name == "sample_stratified":  # follows --sample; alone it is a run sampled by an older version
            if old.get("sample") == new.get("sample"):
                changed.append("the unstratified sampler of an older version (resume without --sample)")
            continue
        if name == "sample_seed" and None in (old.get("sample"), new.get("sample")):
            continue  # seeds nothing on the side without a sample: the --sample difference says it all
        before, after = old.get(name), new.get(name)
        changed.append(f"{shown(name, before)} (not {after})" if None not in (before, after)
                       else f"{shown(name, before)} (not {shown(name, after)})")
    return changed


def run_settings(given: Mapping[str, Any], started: Mapping[str, BoostSettings]) -> RunSettings:
    """The run's settings from the options ``given`` (by setting name) and the started labels' own."""
    defaults = BoostSettings()

    def shared(name: str, among: Iterable[BoostSettings], default: Any) -> Any:
        """What every one of ``among`` was started with, else ``default`` (none, or they differ)."""
        if name in given:
            return given[name]
        values = [getattr(settings, name) for settings in among]
        return values[0] if values and all(value == values[0] for value in values) else default

    everyone = list(started.values())
    rule = shared("rule", everyone, defaults.rule)
    # None: the rule's own default (the smoothing of labels grown by the other rule is not theirs)
    smoothing = shared("smoothing", [s for s in everyone if s.rule == rule], None)
    sampled = [s for s in everyone if s.sample is not None]
    # A run sampled before stratified sampling starts its new labels with the sampler it started with.
    stratified = shared("sample_stratified", sampled, True)
    fresh = BoostSettings(loss=shared("loss", everyone, defaults.loss),
                          max_depth=shared("max_depth", everyone, defaults.max_depth),
                          checkpoint_every=shared("checkpoint_every", everyone, defaults.checkpoint_every),
                          smoothing=smoothing, rule=rule, sample=shared("sample", everyone, None),
                          sample_seed=shared("sample_seed", sampled, defaults.sample_seed),
                          sample_stratified=stratified)
    return RunSettings(fresh, dict(started), dict(given))


def per_label(labels: Iterable[str], settings: BoostSettings | RunSettings) -> dict[str, BoostSettings]:
    """Each label's settings (one :class:`BoostSettings` is every label's), refusing contradicted ones."""
    if isinstance(settings, RunSettings):
        return {label: settings.of(label) for label in labels}
    return {label: settings for label in labels}
