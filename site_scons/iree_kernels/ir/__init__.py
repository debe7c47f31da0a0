"""What IREE wrote: targets, a model's executables and program, listings, dumps, modules."""
