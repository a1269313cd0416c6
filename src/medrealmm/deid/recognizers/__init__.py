"""One recognizer module per identifier family; ``registry`` lists which of them run."""
