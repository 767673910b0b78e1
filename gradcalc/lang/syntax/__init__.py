"""The language's syntax: the grammar (grammar/gradcalc.lark), its keywords, the parser, and the records a
program is lowered to. Nothing here knows how a record is compiled or what a value is: the statements register
their records here when `gradcalc.lang.statements` loads (docs/contributing.md)."""
