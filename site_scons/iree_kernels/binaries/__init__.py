"""What kernel compilers wrote: PTX, SPIR-V, ELF objects and code objects, and their checks."""
