"""Tools around the product, not in it: sample data, measurements, evaluations."""
