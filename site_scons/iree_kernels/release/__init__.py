"""Release archives: provenance, lock records, comparison with a checkout."""
