"""What a solve writes and what is computed from it: the result schema (`schema`) and the
figures every reader of results shares, the report and bench alike (`measures`)."""
