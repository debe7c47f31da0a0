"""Content-addressed stores: the local store, signatures, the HTTP remote cache."""
