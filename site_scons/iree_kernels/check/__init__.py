"""Running modules: devices, expected outputs, comparisons, differential checks, benchmarks."""
