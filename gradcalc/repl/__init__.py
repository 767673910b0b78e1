"""gradcalc's REPL: a prompt_toolkit session over the language's `Session`.

Modules: `app` (the prompt session and its loop), `blocks` (when Enter runs the input), `keys` (key
bindings), `completer`, `lexer` (the Pygments lexer, also registered for `pygmentize -l gradcalc`),
`history` (the XDG state file), `interrupt` (Ctrl-C during a running program) and `plain` (a line reader
for `gradcalc -i` when standard input or output is not a terminal).

Importing this package imports nothing else: prompt_toolkit costs ~0.2 s and is only for the REPL.
"""
