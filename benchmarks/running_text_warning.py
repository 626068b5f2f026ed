"""How often `parse` and `tag` warn that tokens input looks like running text, on text of both kinds.

`--input-format tokens` (the default) reads each line as one sentence of tokens split at spaces; a file
with a line that :func:`clparse.read.sentences.running_text_token` flags is warned about once. This
counts, on GUM:

- treebank tokens (every train and dev tree's words, one sentence a line, as ``tokens`` input should be):
  the sentences flagged, which would be false alarms;
- GUM dev turned back into running text, as ``benchmarks/text_input.py`` makes it (sentences joined,
  wrapped at 80 columns, paragraphs at blank lines): the lines and the paragraphs with a flagged line,
  which the warning should catch.

Run: ``python benchmarks/running_text_warning.py [--train DIR] [--dev DIR] [--json]``.
"""

from __future__ import annotations

import argparse
import glob
import json
import os
import sys
from collections import Counter

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
sys.path.insert(0, os.path.dirname(__file__))

from clparse.read import read_trees  # noqa: E402
from clparse.read.sentences import running_text_token  # noqa: E402
from tagging import gold_tags  # noqa: E402
from text_input import build_gold  # noqa: E402


def treebank_alarms(directories: list[str]) -> tuple[int, Counter[str]]:
    """Sentences read, and the tokens that flagged a treebank sentence (false alarms)."""
    sentences = 0
    flagged: Counter[str] = Counter()
    for directory in directories:
        for path in sorted(glob.glob(os.path.join(directory, "*.ptb"))):
            for tree in read_trees(path):
                words = [w for w, _ in gold_tags([tree])[0]]
                sentences += 1
                index = running_text_token(words)
                if index is not None:
                    flagged[words[index]] += 1
    return sentences, flagged


def running_text_hits(dev: str) -> dict[str, int]:
    """Lines and paragraphs of GUM dev as running text, and how many of each the warning would flag."""
    text = build_gold(dev, one_paragraph=False).text
    paragraphs = [p for p in text.split("\n\n") if p.strip()]
    lines = [line for p in paragraphs for line in p.split("\n") if line.strip()]
    return {
        "lines": len(lines),
        "lines_flagged": sum(running_text_token(line.split()) is not None for line in lines),
        "paragraphs": len(paragraphs),
        "paragraphs_flagged": sum(any(running_text_token(line.split()) is not None for line in p.split("\n"))
                                  for p in paragraphs),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--train", default="../shared/data/gum/train")
    parser.add_argument("--dev", default="../shared/data/gum/dev")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    sentences, flagged = treebank_alarms([args.train, args.dev])
    hits = running_text_hits(args.dev)
    result = {"treebank_sentences": sentences, "treebank_flagged": sum(flagged.values()),
              "treebank_flagged_tokens": dict(flagged.most_common()), **hits}
    if args.json:
        print(json.dumps(result, indent=2, ensure_ascii=False))
        return
    print(f"treebank tokens (GUM train + dev): {result['treebank_flagged']} of {sentences:,} sentences "
          f"flagged (false alarms): {', '.join(flagged)}")
    print(f"GUM dev as running text: {hits['lines_flagged']:,} of {hits['lines']:,} lines flagged; "
          f"{hits['paragraphs_flagged']} of {hits['paragraphs']} paragraphs hold a flagged line")


if __name__ == "__main__":
    main()
