"""Bring hand-written kernels into IREE programs.

The plain-Python half of the project: reading kernel manifests, inspecting a
model's executables, validating substitutions against them and rendering the
files iree-compile reads. It imports without SCons; the SCons glue lives in
``site_scons/site_tools``.
"""
