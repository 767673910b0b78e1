"""The interpreter's core: frames and closures, the compiler's machinery (expressions, blocks, the statement
compile registry), the interpreter over a workspace, and where each statement's nodes come from (origins)."""
