"""Step 3 of the pipeline: parser states, the correct-inference oracle, features, training examples."""
