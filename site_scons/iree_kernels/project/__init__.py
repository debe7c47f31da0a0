"""What the user wrote: manifests, tolerances, option files, new repos and skeletons."""
