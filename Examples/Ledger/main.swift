print("ledger: not yet implemented")
