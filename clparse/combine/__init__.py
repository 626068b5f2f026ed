"""Parser combination by constituent recombination (Chen & Kit 2012 §3): votes, selection, fitting."""
