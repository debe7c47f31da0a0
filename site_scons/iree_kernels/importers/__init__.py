"""Model files of other frameworks (ONNX, torch) turned into MLIR."""
