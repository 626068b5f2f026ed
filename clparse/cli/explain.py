"""`clparse explain`: a parse with each constituent's confidence and the trees behind it."""
