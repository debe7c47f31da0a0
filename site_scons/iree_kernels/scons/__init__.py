"""The SCons glue of ``iree_kernels``: the one part of the package that imports SCons.

Only the tools (``site_scons/site_tools``, ``iree_kernels.site_tools`` in the
wheel) import it; the library around it imports without SCons
(tests/unit/test_library_without_scons.py). One module a job:

- ``reporting``: a failure while reading the SConscripts, a Python action's UserError;
- ``escaping``: paths and text as words SCons never expands;
- ``spawn``: running a command without a shell, within its time limit, each
  target written beside it and moved in place;
- ``lock``: one scons at a time in a checkout;
- ``nodes``: Value nodes that carry a step's data to its Python action;
- ``headers``: the header dependencies of kernel compiles (depfiles, #include scanning);
- ``kernels``: ``env.Kernel``, the builder of every kernel language;
- ``module``: the record of one declared module that the tools build on;
- ``caches``: the shared build cache and the remote cache;
- ``variables``: the command-line variables and ``scons -h``.
"""
