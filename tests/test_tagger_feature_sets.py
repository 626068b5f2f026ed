"""Feature set 3 of the CRF tagger (issue 29) and models stored with feature sets 2 and 3 tagging exactly
as before: the new attributes, the lower-cased classes a stored lexicon gives, that training tokens take
them from the other folds only, and stored set-2 and set-3 models' bytes, tags and probabilities (feature
set 4: tests/test_word_clusters.py)."""

from __future__ import annotations

import base64
import zlib


from clparse.tag.crf import CrfTagger, Lexicon, sentence_features_v2, sentence_features_v3

from tests.test_crf_tagger import TINY, check_stored_model  # the stored set-2 model below was trained on TINY


def test_feature_set_3_features() -> None:
    words = ["She", "had", "never", "really", "seen", '"', "it", '"', "."]
    classes = ["PRP", "VBD|VBN", "RB", "RB", "VBN", None, "PRP", None, "."]
    lower = ["PRP", "VBD|VBN", "RB", "RB", "VBN", None, "PRP", None, "."]
    features = sentence_features_v3(words, classes, lower)
    v2 = sentence_features_v2(words, classes)
    added = [[f for f in mine if f not in old] for mine, old in zip(features, v2)]
    assert all(mine[:len(old)] == old for mine, old in zip(features, v2))  # set 2's attributes come first
    assert added[0] == ["pv=<none>", "lamb=PRP"] and added[1] == ["pv=<none>", "lamb=VBD|VBN"]
    # "seen" looks back past two adverbs to "had": a VBN cue the +-2 window misses
    assert added[4] == ["pv=had", "lamb=VBN"]
    assert added[5] == ["pv=seen", 'q"#even', "lamb=<unk>"]
    assert added[7] == ["pv=seen", 'q"#odd', "lamb=<unk>"]
    # at most six words back
    far = sentence_features_v3(["was", *["x"] * 6, "y"], ["VBD", *["NN"] * 7], [None] * 8)
    assert "pv=was" in far[6] and "pv=<none>" in far[7]


def test_lower_classes_are_a_lexicon_of_lower_cased_words() -> None:
    """What tagging computes from the stored lexicon equals what training computes from lower-cased words."""
    sentences = [[("The", "DT"), ("Run", "NNP"), ("run", "VB")],
                 [("the", "DT"), ("RUN", "NN"), ("Apple", "NNP")]]
    lexicon = Lexicon.build(sentences)
    lowered = Lexicon.build([[(w.lower(), t) for w, t in s] for s in sentences])
    words = ["THE", "run", "Run", "apple", "pear"]
    assert lexicon.lower_classes_of(words) == [lowered.classes.get(w.lower()) for w in words]
    assert lexicon.lower_classes_of(words) == ["DT", "NN|NNP|VB", "NN|NNP|VB", "NNP", None]
    # a feature set 3 model stores only the case-sensitive lexicon; the lower-cased classes come from it
    trained = CrfTagger.train(TINY, iterations=5, feature_set=3)
    read = CrfTagger.from_bytes(trained.to_bytes())
    assert read.feature_set == trained.feature_set == 3
    assert read.lexicon is not None and trained.lexicon is not None
    assert read.lexicon.classes == trained.lexicon.classes


def test_training_tokens_get_their_lower_cased_class_from_other_folds_only() -> None:
    from clparse.tag.crf import LEXICON_BLOCK, LEXICON_FOLDS, _training_features

    n = LEXICON_BLOCK * LEXICON_FOLDS
    # "Own" is capitalised only in fold 0 and lower-case "own" only in fold 1: each finds the other's tag
    sentences = [[("Own", "JJ")] if i < LEXICON_BLOCK else [("own", "VB")] if i < 2 * LEXICON_BLOCK
                 else [("x", "DT")] for i in range(n)]
    features = _training_features(3, sentences)
    assert "lamb=VB" in features[0][0] and "amb=<unk>" in features[0][0]
    assert "lamb=JJ" in features[LEXICON_BLOCK][0]
    assert "lamb=DT" in features[-1][0]


# A feature set 2 model, stored before feature set 3 (commit b1417c1): CrfTagger.train(TINY, iterations=10,
# feature_set=2), zlib-compressed, with its tags and CRFsuite's probabilities of them at that commit.
STORED_V2 = zlib.decompress(base64.b64decode(
    "eNrtWglUVNcZfiKbw+IAEhFxA1dEdEZERAZkGxDZFGItizowCAoKYcajpRiXxJgYNa1NrVVL1bhEQBNTEysumETRIElqJBJRq2k0"
    "Gg72eBRMpbHt/9/537zneKdGsefUHN853/nnfvff3t243Hdzi0p0pYa8QKMuPzC3dJbQRbARtudf6PPLsp077/YcsKa5sO1j+76L"
    "/nLis8O+W7pGXtv6/Dt3ygVByMz0DfQNAGQHZPrGFOcboJCcnMaKOvgdk85+5uhKC6E0NSrVXDSwcgYr5+qMzI4V9MX5UsFQlJdX"
    "Ilc1FuSR2+yi6CnatiGCoE1JitYLpscekAgYBYh3FAQfN0F4208QlANBLzYy3Qu4fOH+5/Yn8zLtJn8agb+7cDgbDteVw9lyODsO"
    "Z0+cXetZ5ZLDTWYOYzccuPNv95J1Zg5ja11SPrg8+jjjHMh2d3xF8HutfzNzmE/hd+Xzg2/tZ5wjR8+Ro9eNk5+Cwzlx/Dlx/DnT"
    "e2jr27v5vvWBmUM9//l1welVZxjnQnqKi794ZUS7KYYrx9aVY9udY6vk2Co5tm4cW3fiCrVjaw62XDZz2J+Kwm+KClvqGOfBse3B"
    "4Tw5/jw5/p6j/p1+78tlc/0+NHOo5zWi/rPrJ0x6PUnvRi+XrBX7r5o5fLdV24Ncbrxhejcvjj8vjr9epOfXvvboduEs47w5tt4c"
    "294cWx+OrQ/Htg/Hti+H68fh+hM3yO7W2XD3C2YO59eZ5TZ/vORtaoMBHL0BHD1fjp4vR8+Pxr1r0ljtGieT3kAON4jDDeZwQ2hs"
    "fHU8O/HjmGOMG8rhhnE4fw43nMMFcLgRHC6Qw42kdqnNKfWxi2tg3CgOp+Jwag43msMFcbgxHC6Yw43lcCEcbhzNj50ey37lv/4i"
    "40I53HgOF8bhNBwunMNFcLgJHC6S5ofTlze+3nTqPOOiOFw0h4vhcLEcTsvh4miMp7xf3LR93reMi+dwEzlcAoebZMGJfz9RBqc7"
    "vLXYQ5ggcpjLS6eq39u/5cPaLqSD/bZt7/IB1dv+FSFy6G/L4GnZwVuPM72uxC/NqLo+3eWYmUPbqKU7TlxO22XmMIbh3t4kpcNt"
    "5s+W9NZ8P31BUM+GWpHDGO8Ki07e7vl9RPTkmKhG+oP5QlpMDv7dPeQoPHuePezJcpT2gM+en95T9JT0b/mzcfhUP6t+Yv236Sl9"
    "n+pHyBv3FDHpgri9SE5mlriDmBqVYd5xJCenMWniU9nuwobtsCOrN+oDZXuJRfPeV4Vy9hZrC+3H+AFf33qqzotTf+W3lyq0wP/z"
    "78tspsjqURftMAb6RR2sxz3NSndpT4NnIhlu1t9zg7Mp40qSNc5Ppm/rrfhptuBbnP83Y6mjk34VLqZe9Xd5PD+hVuwSXKTzIvkz"
    "5yFxyh5Sv5LqN1joVVqJZ7XfSL/Fwk8HlRWu/z0Pb6r3JxlKMsG1c/2RYWE/x6JcZlFeSeUNVuJWWvA1VK4n2dzJfFvIvsOKH0V3"
    "Pu/d/cfF9bfQC6VyggWfYVGeY1Eu696591xpYb/BolxpUa6xKNd3Mn5zd/747rDgvZU0LpWPOZ+VT2adSlA+2nx83GfOQ/Ite8T3"
    "WfkQ/Q2dbJ9KK+1Sb4VvsRKvg3iF25PpL+8f6cff7f9jTxTqZn184e6kRKUxmg9bDCpNHssaTz5K1BpjAdvZYMmg1hTkMU/4laFk"
    "NNTlMRssGkxFe/q2YCjQleRpFrIq/K6wYIRaE2ZQh7NKE6ECQhXOCkguGK7S6Ivz2RcHBSurNezbEPu2gFGjUtLY9wPKWc8+HFDO"
    "+ezrAOWsL2bfBShn8KmUcsYQblLOWHS/L0dIyUNMCXLEl+phTklFKXnKkgwbiTbPSYnlsBN5SszAjt0psRwdO3CnxMCPt5QYOGYn"
    "6pQYRvGhPEqCWFh2aM4aN0jDsuhrzlPN8uwnyxtfrL8sb1OWA+7PG/rDlxo3FhrXT3oHHTvZpnfQsSNtsZNydUZ2nO1Efkyf5dhp"
    "NhnnsmNsMjay82tqgFwdO7mmBgBHw6UGQL8BUgNgcQTp4gvp2Bm1EyVBQUdKQQ3sbJriGIrYqTTFAUW1FAdM2VE0xUE3QVJDo2N2"
    "Ak0NzcIEm/OApNm5s9jMmGUIjR/DGI0pq3FS6HwDO2qmWMVQHC/F0mM5TIrFyhrRG5tB0xayo2UczrPnzTbOyNWVzJg1u9RgZKfL"
    "3WSDkh0t21OfBLJDZeqBQnaaTAmBYrSUENrFSAkwP7GyGcoy0podq8BxnNTkgebjYgMWJt439wPZGbE4r5ijSTLPLFTXJb12L3R+"
    "cFWyHT/W/TqMU7utK84tUTxY73pbq10NodzOlp0ukv0H5DG0rW2kzF9f/y5b78jsB29+TVEh0x+ck3orWaY/xPH3CfL/uAL/cfXP"
    "0QrrK6uqJXvdSahXRQ9dUC6zC1o9cfcs4ENqqhrOdZP4sJDNxd91e9CP5vOZkas5fETzO7fXgJ8Im7hX1U4P1se+WHvkGvCxTX1C"
    "+oO99ouQtec4/zHGe0ZVNMj4ifnqFd9COekj4+m7nLjJuZmuBbJ2SdmY7ukhi596prZDDfbTFh6sSZO1T8acyTfXcPLMcnixYgL4"
    "mx60qG4mp36G07HRpZBHTtvrShtZPvrwq+v2cPTzci8eWAx6s1bpmw9w8p9XOGzHWbArDjjiM0H23qU2hw9vlOnPrzvY5MTp37JP"
    "W9cpId/yZdvOB3PqF/1pz/rF4H/xzXkx7bL8ltZl2L/Ayfelr6sCM2Xt+fryXO0gWV6rty+7WQt2bzQ3JNXI4v06tX2YivN+v4m4"
    "W2UL+huHNhenyuJtrI9cf1Tmt+Kbk0Iex74iM8q4B/Q277jUO5kzXrbs/N27r8nyfbv2lflRsjh7Z7c6Zcvs9jqcuV4pi3Mkc9et"
    "T2Tlj07PKPAF+5Mz+8/tw2nPhtPjO9rAX2OPP0TayOI2+u6qGibTb4obdaGC075NK/rsPA96zeop7gaZ/kXHrz6v4sT7a7vnF5Gy"
    "/K6tyEjZJNNrvbj2mpus/t7co+FpUL7nGq/s53z/iQv2I84FHGfYltguuCbheoBrFK432NbYLzgHcX7i3MP3xbGOcXDuYj9jThgH"
    "+wznA45xXBdwzGL74ljHdsU1BdcRnLs4frFNsZ1wrOJ6hXMS1x9sC1w/cQ3B98O2wPGFaxa2F66xuD7iWML5jX2E6wz2NY4rnKs4"
    "nnGs47zGtsf5iGMV5xeuPTj+sc9wvmDb4PqLcx3XVRzzuI7gGm8aT4naKdoC+jvRCPuNy4BWwE3ce8CWw3mg1LrsHgGuDvR7JkAn"
    "O4vLAeTiKkH1eYBZVB8Jca50Nd3/SYTdSzogC6AHFAGMgHLAKsB6wDZANWAf4CigAdAIuAy4DmgD/ABwhJ2PEuAFGAgYBQgDxANS"
    "AVkAPaAEsBCwBPAq4E3AZkA1YB/gEOAYoAHQCLgAuAJoBbQBfgDYwpbKGdAD4AMYCAgABAHCADGAREA6IAugBxQBjIBywMuAVYA3"
    "AZsA2wDVgH2AQ4BjgAZAI+AC4AqgdYh076mLDDYkxe+vtoL0fVb8/8CB+tWG/swr6DdOWPEukHjXx5XqcGOjpN+4LRfv33gQh1tv"
    "8Q6NeEcGd9dexIn3V3Aj3Zs4H5LiHRPcJov3SHBLLN4Lwa2vH/3GYTeI7AYThzta8T7GMOJw9yresxDvVoj3KQJJBzel4j0J3IWK"
    "dyFw0xlEumNIBpMcSzKE5DiSoSTHkwwjqSEZTjKC5ASSkSSjSEaTjCEZS1JLMo5kPMmJJBNITiKZSDKJZDLJFJKpJCeTnEIyjWQ6"
    "yedJTiX5M5LTSP6cZAbJTJJZJLMB/wGQrBAY"
))
STORED_V2_SHA256 = "67be3cce7ac4e1ef53b1d03573fc6bf52473b188651db85999a072d10cac728b"
STORED_V2_TAGS = [
    (["the", "cat", "barks"], ["DT", "NN", "VBZ"], 0.96245),
    (["Cats", "bark", "."], ["NNS", "VBP", "."], 0.68984),
    (["a", "zebra", "sleeps", "."], ["DT", "NN", "VBZ", "."], 0.554562),
    (["The", "Dog", "Barks"], ["DT", "NN", "VBZ"], 0.941656),
    (["bark", "dogs", "the"], ["DT", "NN", "VBZ"], 0.258184),
    (["Sleeps", "a", "1990s", "UN-5"], ["VBZ", "DT", "NN", "VBZ"], 0.169355),
    (['"', "Dogs", '"', "bark"], ["DT", "NNS", "VBP", "."], 0.086315),
]


def test_a_stored_feature_set_2_model_tags_exactly_as_before() -> None:
    def features(tagger: CrfTagger, words: list[str]) -> list[list[str]]:
        assert tagger.lexicon is not None  # set 2 stores its lexicon
        return sentence_features_v2(words, tagger.lexicon.classes_of(words))

    check_stored_model(STORED_V2, STORED_V2_SHA256, 2, STORED_V2_TAGS, features)


# A feature set 3 model, stored before feature set 4 (commit 951b939): CrfTagger.train(TINY, iterations=10,
# feature_set=3), zlib-compressed, with its tags and CRFsuite's probabilities of them at that commit.
STORED_V3 = zlib.decompress(base64.b64decode(
    "eNrtWgtQU1cajkgRATGIVER8gU9EJBEVgYBACIgYEVjXAlYDQRBRkKQDMmhdtVoRa1dby6LLuvVRBYvb8dGKVtzWqqVsqUqLRqx2"
    "xUcZ6jgWdy3Vzv7/yX+TazxZq7gza8c7882f853/dc+Lw7knPSdPk6/L8NNrMv3S8+dKuki6SnTlLRcL1Vf2Z8Ya1EOTEwtar1b/"
    "oLx5d8XBHdfcEm9sKiuWSCQpKV5+Xr6AWb4pXsrcTB0U1OpEVtTAb2US+5mmyZ8PpRkR8aaijpWTWTldo2d2rKDNzTQXdDkZGXli"
    "VX1WBrmdlROZoGofLpGopk2N1EqMjx0gDuAPiLGXSDxdJJJd3hKJdAjoRYUnuQOXKXnwce0Y8NFMly/C8HcXDmfD4bpyOFsO9wKH"
    "syPu2DXFz8GGiyYOYxu0bseb3tll4jD2yiKbfeXb/s64bmRbFXBm59p7LSYO89mn6N588qBRz56jZ8/R687Jz4HDOXL8OXL8OdF7"
    "6BZNP/BL6ocmDvVsJ+r7FI0+zbgepKfceOsvEa99yThnjq0zx7Ynx1bKsZVybF04tr2I27Zp1HfzL182cdif8ptn/Bu+PMk4V45t"
    "bw7nxvHnxvH3IvXvvcxC31Wf1pg41ItJ3dfN581TjOtDeovXF3x7JfqaicN3C3jTdWn1OeO7uXP8uXP89SW9omVlTl8FNjHOg2Pr"
    "wbHtx7H15Nh6cmz7c2wHcLiBHG4QcWPHTVU0LLhg4nB+NZQkOJZmf824wRy9wRw9L46eF0fPm8b9iF+CTpauNDBuCIcbyuGGcbjh"
    "NDZKvpr9WfzBTxk3gsON5HA+HG4Uh/PlcKM5nB+HG0Pt8mGx54LRo4xz35/DyTicnMON5XABHG4chxvP4SZwuEAON5Hmxw/j9844"
    "E3qJcUEcLpjDhXA4BYcL5XBhHG4Shwun+ZG21mmx/xbj+IvgcJEcTsnhojicisNF0xjfXV2/797iq4yL4XCTOVwsh5tiwQl/P1HW"
    "fn8priD3nonDXP7ZZ/2Gmd6f1XYhHey3bddT6t/eKJkkcOjvpVXNK84eOs70uhJ/2N//68J+p0wc2u5tWHOu8v42E4cxmu8mDi6L"
    "uM3i2pLe9L52/S4f+LxW4DDG8vvXdvSY8++wyOnKiEb6g7koUZmGf3eP2EueP88f9qTam/eAz5/f3pPzjPRv8fNx+Ew/pb+x/tvy"
    "jL7PnsfIG/cUyiSJsL1Qq5kl7iBmRCSbdhxqdSKTRj6e7S5s2A47fM9mrZ9oL7Fk4QFZEGdvsWG+3Thv4OvavjjhzqlveftShQr4"
    "n28ut0kQ1aMu2mEM9Is6WI97mpJe5j0Nnokku1h/z3InY8aVJGucnk7f1lnxY7DgW53+N2Opo5N+HXoYe9Wnx5P5CbJiF9vDfF4k"
    "frIfEafoEfUlVF9uoVdpJZ7VfiP9Vgs/HVR2cP7veXhQvQ/JIJKxzp3rj2QL+2yLcpFFuYTK5VbiVlrwNVSuI2noZL6tZN9hxY9D"
    "Tz7v0fPXxfWx0AuicqwFn2xRzrYoF/Xs3HuWWNiXW5QrLco1FuW6TsY39OSP7w4L3kNK41L6hPNZ+nTWqVjp483HJ32yH5Fv0WO+"
    "T8kj9Ms72T6VVtqlzgrfaiVeB/EOLk+nvzx+pR8fl/+PPVGQi/XxhbuTPJlCbzps0ckUGSxrPPnIkyv0WWxngyWdXJGVwTzhV4a8"
    "sVCXwWywqDMW7ejbgi5Lk5ehKGRV+F2hYLRcEaKTh7JKIyEDQhbKCkgWjJIptLmZ7IuDAyvLFezbEPu2gFEjpiWy7weUs5Z9OKCc"
    "M9nXAcpZm8u+C1DO4FNqzhlDuJhzxmKvB3KElFyFlCBHfKneppRklJKbKMmQMWjzojmxNHYiT4np2LE7JZamYQfulBj48TAnBo7Z"
    "iTolhlE8KY+8ABaWHZqzxg1QsCwGmPKUszwHivLGFxskytuY5eAH84b+8KLGjYLG9Ta/g4adbNM7aNiRttBJ6Ro9O852JD/Gz3Ls"
    "NJuM09kxNhnr2fk1NUC6hp1cUwOAo1HmBkC/vuYGwOJo0sUX0rAzakdKgoKOMQfVsbNpiqPLYafSFAcU5eY4YMqOoikOugkwNzQ6"
    "ZifQ1NAszHhTHpA0O3cWmhmzDKTxoxunMGY10Rw6U8eOmilWLhSDzbG0WA4xx2JlheCNzaCZhexoGYfzvIXz9LPTNXmz587L1+nZ"
    "6XJ30aBkR8t21Cd+7FCZemA+O02mhEAx0pwQ2inNCTA/UaIZyjJSmRzLwHG0ucn9TMfFOixMfmDu+7EzYmFeMUdTRJ5ZqK7L+r5f"
    "6PTwqmQbPKHXDRinL7y7+vwyh4frnX9UqdZBKJdvik7niP4Dch3R3j5G5G+AT5d3/yWyH7Z1jUOFSH9YWvxttUh/uP2fYsX/cfnd"
    "vfpRpIP1lVXWOmvTKaiXRY4oKBbZBayb/P5c4ANrqurPdzfzIYFbc7/v/rAfRcOc8HUcPsyw98c3wE+YTfTrcseH66OW1h69DnxU"
    "U//AQWCvOhO44TznP8YYt4iKehE/OVO++hqUp36iP/0TJ646PcU5S9Qu0zYnubmK4sefre2Qg/3MwsM1iaL2Sc6efusNTp6p3ZZW"
    "TAJ/LwcsOTGHUz/b8fjYfMgjrX2t1EaUjzb06qZqjn5G+sVDr4Le3FKt4RAn/4XzR+78BuxyfY96ThK9d77Nxx9vFum/cuJwkyOn"
    "f4v+0bZJCvkWL99+YTynfsm+6rJXwf+rtxYq74jy+8OJZLtFnHxXfFfllyJqz7WvpauGivJat2P5rVqwW2+on1ojivfH+DsjZZz3"
    "2xj2U5Ut6G8eYciNF8XbXBdedkzkt+LKKUkGx74iJUJfDXpbd17qp+aMl7++987f1ojy3VW76pUIUZwP5rU5zhLZfdDt7I1KUZyj"
    "Kbtvfy4qf3J6dpYX2J+aM2hBf0571p8O7mgHf429/xxuI4rb6LW7aqRIvynav7mC075Nq/u/dwH0DPKEXjqR/kX7cw1VnHjf3nE7"
    "Ey7K7/rq5GlbRHptFzdcdxHV319wLDQRyvedY6QDnR48ccF+xLmA4wzbEtsF1yRcD3CNwvUG2xr7Becgzk+ce/i+ONYxDs5d7GfM"
    "CeNgn+F8wDGO6wKOWWxfHOvYrrim4DqCcxfHL7YpthOOVVyvcE7i+oNtgesnriH4ftgWOL5wzcL2wjUW10ccSzi/sY9wncG+xnGF"
    "cxXHM451nNfY9jgfcazi/MK1B8c/9hnOF2wbXH9xruO6imMe1xFc443jKU6VoMqivxONsN+4DGgD3MK9B2w5nIaYWxd3oS/j6kC/"
    "5wA0orO4NEA6rhJUnwGYS/XhEKelq/H+TxzsXpIAqQAtIAegBxQDSgFlgO2APYD9gGOAekAj4DLgBqAdcA9gDzsfKcAdMATgDwgB"
    "xADiAakALSAPUAhYBngd8BZgK2APYD/gCOA4oB7QCGgGtADaAO2AewBb2FI5AXoDPAFDAL6AAEAIQAmIAyQBUgFaQA5ADygGrASU"
    "At4CbAFsB+wB7AccARwH1AMaAc2AFkDbcPO9py4i2JAUvr/aSszfZ4X/D7pRv9rQn3kH+o0TVrgLJNz1caY63NhI6Tduy4X7N67E"
    "4dZbuEMj3JHB3bU7ccL9FdxI9yPOk6RwxwS3ycI9EtwSC/dCcOvrTb9x2A0lu2HE4Y5WuI8xkjjcvQr3LIS7FcJ9Cj/SwU2pcE8C"
    "d6HCXQjcdAaQ7jiS40lOIBlIciLJIJLBJENIKkiGkgwjOYlkOMkIkpEklSSjSKpIRpOMITmZZCzJKSTjSE4lqSY5jWQ8yekkE0gm"
    "kkwi+TuSM0j+nuRMki+RTCaZQjKV5CzAfwAprxSY"
))
STORED_V3_SHA256 = "2e82910e6a907b15763ac70f0de6d32d4bdaaa068d07eb5bfebc0a0edafb4ece"
STORED_V3_TAGS = [
    (["the", "cat", "barks"], ["DT", "NN", "VBZ"], 0.960127),
    (["Cats", "bark", "."], ["NNS", "VBP", "."], 0.707996),
    (["a", "zebra", "sleeps", "."], ["DT", "NN", "VBZ", "."], 0.553747),
    (["The", "Dog", "Barks"], ["DT", "NN", "VBZ"], 0.936042),
    (["bark", "dogs", "the"], ["DT", "NN", "VBZ"], 0.276516),
    (["Sleeps", "a", "1990s", "UN-5"], ["VBZ", "DT", "NN", "VBZ"], 0.141915),
    (['"', "Dogs", '"', "bark"], ["DT", "NNS", "VBP", "."], 0.099807),
]


def test_a_stored_feature_set_3_model_tags_exactly_as_before() -> None:
    def features(tagger: CrfTagger, words: list[str]) -> list[list[str]]:
        lexicon = tagger.lexicon
        assert lexicon is not None
        return sentence_features_v3(words, lexicon.classes_of(words), lexicon.lower_classes_of(words))

    tagger = check_stored_model(STORED_V3, STORED_V3_SHA256, 3, STORED_V3_TAGS, features)
    assert tagger.clusters is None  # word clusters came with feature set 4
