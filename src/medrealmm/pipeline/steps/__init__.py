"""The concrete stages of the chain, one small module per phase."""
