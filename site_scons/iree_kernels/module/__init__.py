"""How a module is made: which executable each kernel replaces, flag files, relinking, codegen cache."""
