"""Running the build's heavy steps elsewhere: a Dask cluster's workers (DASK_SCHEDULER).

``steps``: a step as it travels (its command, the files it reads by content, the files it
writes); ``toolchain``: which tools a step may run and how a tool is known by its bytes;
``worker``: what a worker does with a step, and ``python -m iree_kernels worker``;
``cluster``: the build's side (connecting, sending a step, taking its results).
Not for: deciding which steps exist or whether they are up to date (SCons does, here).
"""
