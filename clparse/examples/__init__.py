"""Step 3 of the pipeline: training examples (the correct-inference oracle along bottom-up paths) and
``prepare``, which stores them; the features they carry come from :mod:`clparse.features`."""
