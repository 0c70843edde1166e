"""The landscape model: a closed queueing network of an SAP landscape driven by users."""
