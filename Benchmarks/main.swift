print("strata-bench: not yet implemented")
