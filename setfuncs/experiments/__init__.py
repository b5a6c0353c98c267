"""Data, ground truth and metrics of the paper's four experiments."""
