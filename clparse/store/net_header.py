"""The fixed header of a stored tagger net (``tagger_nets.model_blob``), stated once.

``clparse.tag.net`` writes and reads nets through it; :func:`clparse.store.reading.tagger_name` reads the
SHA-256 out of the blob in SQL, without loading the net, at :data:`DIGEST_SPAN`. Both sides take the
layout from here, so it cannot drift between them.
"""

from __future__ import annotations

import struct

MAGIC = b"clparse-tagnet\x00\x00"
FORMAT = 1
FORMAT_CLUSTERS = 2  # a net that reads word clusters (clparse.tag.net): its tables and the clusters follow
#: magic, format, reserved, SHA-256 of what follows, length of the JSON part
HEADER = struct.Struct("<16sHH32sI")
#: Where the SHA-256 sits in a net's bytes: (0-based offset, length)
DIGEST_SPAN = (struct.calcsize("<16sHH"), 32)
