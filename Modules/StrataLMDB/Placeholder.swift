enum LMDBPlaceholder {}
