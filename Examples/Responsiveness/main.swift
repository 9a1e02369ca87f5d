print("responsiveness: not yet implemented")
