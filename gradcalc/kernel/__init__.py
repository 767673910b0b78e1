"""gradcalc's Jupyter kernel (LANGUAGE.md section 10): cells of the language in any Jupyter client.

The optional extra `gradcalc[jupyter]` brings its libraries (ipykernel, jupyter_client); nothing here is
imported by `import gradcalc` or the `gradcalc` command. Modules:

- `kernel`: the kernel on ipykernel's `Kernel` base (execute, complete, inspect, is_complete, shutdown);
- `host`: the language's `Session` as the kernel runs it: values, graphs and plots as the cell's outputs;
- `outputs`: the order and kind of a cell's outputs (streams, displays, its result and its error);
- `assist`: what the kernel answers while the user types (completion, inspection, is_complete);
- `install`: the kernel spec, and `python -m gradcalc.kernel install [--user | --sys-prefix | --prefix DIR]`.

`python -m gradcalc.kernel -f CONNECTION_FILE` starts the kernel (the kernel spec's command line).
"""
