"""gradcalc's command line: run a script, `-e` text or standard input, or start the REPL.

Exit status: 0 when everything ran, 1 when the program had an error (syntax or runtime), 2 on a usage
error (an unknown flag, a missing file), which is reported in one line, 130 when Ctrl-C stopped it.

This module is on the cold-start path of `gradcalc -e '1 + 1'`: the plainest command lines (`-e TEXT`...,
one FILE, nothing) are read without argparse, which costs a cold start a few milliseconds to import and
build (it imports shutil, and with it bz2, lzma and zlib); anything else goes to argparse. The language
is imported only once the command line is known to be valid, and the REPL's prompt_toolkit only for the
REPL.
"""

from __future__ import annotations

import gc
import os
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, NoReturn, TextIO

if TYPE_CHECKING:
    import argparse

    from gradcalc.lang import Session

PROG = "gradcalc"
EXIT_OK = 0
EXIT_PROGRAM_ERROR = 1
EXIT_USAGE = 2
EXIT_INTERRUPTED = 130
FORMATS = ("torch", "plain", "json")
EXPORTS = ("torch", "notebook")  # gradcalc.export.FORMATS (not imported here: it is off the start-up path)
DEFAULT_MAX_ELEMENTS = 2**27

DESCRIPTION = """\
gradcalc: an autodiff calculator with PyTorch's autograd semantics.
With no FILE and no -e, it starts the REPL when standard input is a terminal,
and otherwise runs the program read from standard input."""

EPILOG = """\
examples:
  gradcalc                                       start the REPL (type :help in it)
  gradcalc examples/newton.gc                    run a script file
  gradcalc -e 'x = 2 requires_grad; backward x**3; x.grad'
  gradcalc -e 'x = 2 requires_grad' -e 'y = x**3' -e 'grad(y, x)'
  echo 'x = 0.5 requires_grad; backward sin(x); x.grad' | gradcalc --format plain
  gradcalc --format json -e 'x = [1, 2] requires_grad; x * 2'
  gradcalc -i examples/newton.gc                 run a script, then explore its workspace in the REPL
  gradcalc --export torch examples/newton.gc > newton.py     the same program as a PyTorch script
  gradcalc --export notebook examples/pinn.gc > pinn.ipynb   as a notebook for the gradcalc kernel

Values go to standard output; warnings and errors go to standard error as FILE:LINE:COL: error: MESSAGE.
exit status: 0 when everything ran, 1 when the program had an error, 2 on a usage error,
130 when Ctrl-C stopped it (at the statement running, which then changed nothing).
environment: NO_COLOR turns the REPL's colours off (scripts and pipes are never coloured).
REPL history: $XDG_STATE_HOME/gradcalc/history (by default ~/.local/state/gradcalc/history)."""


class UsageError(Exception):
    """A problem with the command line itself: reported in one line, exit status 2."""

    def __init__(self, message: str, *, hint: bool = False) -> None:
        super().__init__(message)
        self.hint = hint


def _positive_int(text: str) -> int:
    """argparse type for --max-elements: a whole number >= 1."""
    import argparse

    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive whole number, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a positive whole number, got {text!r}")
    return value


def _version() -> str:
    from gradcalc import __version__

    return f"{PROG} {__version__}"


def _parser_version() -> str:
    """`gradcalc --version`'s second line: which parser runs, or why not the fast path (imports Lark, and
    makes the fast path's tables if the cache lacks them)."""
    try:
        from gradcalc.lang import statements  # noqa: F401 - the parser lowers to the statements' records
        from gradcalc.lang.syntax.parser import parser_status

        return f"parser: {parser_status()}"
    except Exception as exc:  # noqa: BLE001 - --version answers even when the language cannot load
        return f"parser: unavailable ({type(exc).__name__}: {exc})"


def build_parser() -> argparse.ArgumentParser:
    """The command-line parser (also the source of `gradcalc --help`)."""
    import argparse

    class _ArgumentParser(argparse.ArgumentParser):
        """An ArgumentParser whose errors become `UsageError` (one line) instead of a usage dump."""

        def error(self, message: str) -> NoReturn:
            raise UsageError(message, hint=True)

    class _VersionAction(argparse.Action):
        """--version: the version alone on standard output (the one line scripts read), then which parser
        runs on standard error. The parser line is made only when asked for: every other command line that
        argparse reads would pay for importing Lark."""

        def __init__(self, option_strings: Sequence[str], dest: str, **kwargs: Any) -> None:
            super().__init__(option_strings, dest, nargs=0, default=argparse.SUPPRESS, **kwargs)

        def __call__(self, parser: argparse.ArgumentParser, *_: Any) -> NoReturn:
            print(_version(), flush=True)
            print(_parser_version(), file=sys.stderr, flush=True)
            parser.exit()

    parser = _ArgumentParser(
        prog=PROG,
        description=DESCRIPTION,
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "file", nargs="?", metavar="FILE", help="a script to run; '-' reads the program from standard input"
    )
    parser.add_argument(
        "-e", dest="expr", action="append", default=[], metavar="TEXT",
        help="run TEXT (statements separated by ';' or newlines); repeatable: each -e is one more line, with the"
        " indentation common to all removed, so that several can form a block",
    )
    parser.add_argument(
        "-i", dest="interactive", action="store_true",
        help="start the REPL (after running FILE or -e TEXT, keeping their workspace)",
    )
    parser.add_argument(
        "--keep-going", action="store_true",
        help="run on after a runtime error (the exit status is still 1)",
    )
    parser.add_argument(
        "--format", choices=FORMATS, default="torch",
        help="how values print: PyTorch reprs (torch, the default), bare numbers (plain), JSON lines (json)",
    )
    parser.add_argument(
        "--export", choices=EXPORTS, metavar="{torch,notebook}",
        help="print the program as a PyTorch script that prints what gradcalc prints (torch), or as a notebook"
        " for the gradcalc kernel (notebook), instead of running it",
    )
    parser.add_argument(
        "--max-elements", type=_positive_int, default=DEFAULT_MAX_ELEMENTS, metavar="N",
        help=f"refuse to create a tensor of more than N elements (default {DEFAULT_MAX_ELEMENTS})",
    )
    parser.add_argument(
        "--version", action=_VersionAction, dest=argparse.SUPPRESS,
        help="print the version, and on standard error which parser runs (with GRADCALC_DEBUG_PARSER=1 in the"
        " environment, each input that falls back to Lark's parser says why on standard error)",
    )
    return parser


class _Arguments:
    """The options of a command line that `quick_arguments` read: what argparse would give for it."""

    def __init__(self, file: str | None, expr: list[str]) -> None:
        self.file = file
        self.expr = expr
        self.interactive = False
        self.keep_going = False
        self.format = "torch"
        self.max_elements = DEFAULT_MAX_ELEMENTS
        self.export: str | None = None


def quick_arguments(argv: Sequence[str]) -> _Arguments | None:
    """The plainest command lines, read without argparse: nothing, one FILE, or `-e TEXT` repeated (TEXT may
    start with '-': `-e '-1/0'`). None for any other (argparse then reads it, and reports its errors). A FILE
    starting with '-' is left to argparse, which may take it for an option."""
    if not argv:
        return _Arguments(None, [])
    if len(argv) == 1:
        return _Arguments(argv[0], []) if not argv[0].startswith("-") else None
    if len(argv) % 2:
        return None
    texts = []
    for flag, text in zip(argv[::2], argv[1::2], strict=True):
        if flag != "-e":
            return None
        texts.append(text)
    return _Arguments(None, texts)


def expr_texts_attached(argv: Sequence[str]) -> list[str]:
    """`argv` with each `-e TEXT` whose TEXT starts with '-' written `-eTEXT`, so that argparse takes TEXT
    as -e's value rather than as an option or a negative number (`gradcalc -e '-1/0'`); `--` ends options."""
    out: list[str] = []
    i = 0
    while i < len(argv):
        arg = argv[i]
        if arg == "--":
            out.extend(argv[i:])
            break
        if arg == "-e" and i + 1 < len(argv) and argv[i + 1].startswith("-"):
            out.append("-e" + argv[i + 1])
            i += 2
            continue
        out.append(arg)
        i += 1
    return out


def read_arguments(argv: Sequence[str]) -> Any:
    """The command line's options: the quick reading of the plainest ones, else argparse's."""
    args = quick_arguments(argv)
    if args is None:
        args = build_parser().parse_args(expr_texts_attached(argv))
    return args


def _program_text(texts: list[str]) -> str:
    """The -e texts as one program (LANGUAGE.md section 6): each a line (or the lines it holds), with the
    indentation common to all of them removed and the rest kept, so that they can form a block: `-e 'def
    f(x):' -e '    return x * 2'`; a single `-e ' 1'` is `1`. Lines of blanks only are left out of the
    common part (as textwrap.dedent does, which costs a cold start the import of `re`)."""
    lines = "\n".join(texts).split("\n")
    common: str | None = None
    for line in lines:
        if not line.strip():
            continue
        indent = line[: len(line) - len(line.lstrip(" \t"))]
        if common is None or indent.startswith(common):
            common = indent if common is None else common
        else:
            k = 0
            while k < len(common) and k < len(indent) and common[k] == indent[k]:
                k += 1
            common = common[:k]
        if not common:
            break
    if common:
        lines = [line[len(common):] if line.strip() else "" for line in lines]
    return "\n".join(lines)


def _isatty(stream: TextIO | None) -> bool:
    """True when `stream` is an open terminal."""
    if stream is None:
        return False
    try:
        return stream.isatty()
    except (AttributeError, OSError, ValueError):
        return False


def want_color(stream: TextIO | None, environ: dict[str, str] | os._Environ[str] = os.environ) -> bool:
    """Colour warnings and errors only on a terminal; never under NO_COLOR (no-color.org) or TERM=dumb."""
    if environ.get("NO_COLOR"):
        return False
    if environ.get("TERM") == "dumb":
        return False
    return _isatty(stream)


def _prepare_streams() -> None:
    """Flush standard output at each line, so that values and messages interleave in order on any sink."""
    for stream in (sys.stdout, sys.stderr):
        reconfigure = getattr(stream, "reconfigure", None)
        if reconfigure is not None:
            try:
                reconfigure(line_buffering=True, errors="backslashreplace")
            except (OSError, ValueError):
                pass


def _decode(data: bytes, name: str) -> str | None:
    """The program text of `data` (UTF-8, an optional BOM, any newline convention), or None after
    reporting a decoding error at its line and column."""
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        column = exc.start - (data.rfind(b"\n", 0, exc.start) + 1) + 1
        _message(
            f"{name}:{line}:{column}: error: the input is not UTF-8 text "
            f"(byte 0x{data[exc.start]:02x} at offset {exc.start}); save it as UTF-8"
        )
        return None
    return text.replace("\r\n", "\n").replace("\r", "\n")


def _read_file(path: str) -> bytes:
    """The bytes of the script `path`; a missing or unreadable file is a usage error, in files.py's wording."""
    from gradcalc import files  # (files.py imports tempfile for writers: kept off the start-up path)

    try:
        return files.read("the script", path)
    except files.FileProblem as problem:
        raise UsageError(str(problem)) from None


def _read_stdin() -> bytes:
    """All of standard input (nothing when it is closed)."""
    stdin = sys.stdin
    if stdin is None:
        return b""
    buffer = getattr(stdin, "buffer", None)
    try:
        if buffer is not None:
            return buffer.read()
        return stdin.read().encode("utf-8", "surrogateescape")
    except (OSError, ValueError):
        return b""


def _message(text: str) -> None:
    """One line on standard error, flushed."""
    stderr = sys.stderr
    if stderr is None:
        return
    try:
        stderr.flush()
        stdout = sys.stdout
        if stdout is not None:
            stdout.flush()
        stderr.write(text + "\n")
        stderr.flush()
    except (OSError, ValueError):
        pass


def _die_quietly_on_closed_pipe() -> None:
    """In batch mode, behave as Unix filters do when the reader goes away (`gradcalc FILE | head -1`): end at
    once on SIGPIPE, silently, instead of running the rest of the program into a closed pipe."""
    try:
        import _signal as signal  # the C module under `signal`, whose enums cost a cold start a millisecond
    except ImportError:
        import signal  # type: ignore[no-redef]

    if hasattr(signal, "SIGPIPE"):
        try:
            signal.signal(signal.SIGPIPE, signal.SIG_DFL)
        except (OSError, ValueError):
            pass


def run_source(session: Session, source: str, filename: str, *, keep_going: bool, what: str,
               goes_on: bool = False) -> int:
    """Run one whole program; `what` names the input in the message for an empty one. Ctrl-C stops it with
    `error: interrupted` at the statement it stopped, and exit status 130 (LANGUAGE.md section 6).
    `goes_on`: the REPL follows (-i) on the workspace, which then must be as the interrupted statement
    found it, backward included; a run that ends the process need not pay for that (repl/interrupt.py)."""
    if not source.strip():
        _message(f"{PROG}: {what} is empty: nothing to run")
        return EXIT_OK
    from gradcalc.repl.interrupt import QUIT_HINT, sigint_interrupts

    with sigint_interrupts(session, hint=QUIT_HINT, atomic=goes_on):
        ok = session.run(source, filename, keep_going=keep_going)
    if session.interrupted:
        return EXIT_INTERRUPTED
    return EXIT_OK if ok else EXIT_PROGRAM_ERROR


def run_repl(session: Session) -> int:
    """The REPL: prompt_toolkit's when standard input and output are terminals, else a plain line reader."""
    if _isatty(sys.stdin) and _isatty(sys.stdout):
        from gradcalc.repl.app import run_repl as run_terminal_repl

        return run_terminal_repl(session)
    from gradcalc.repl.plain import run_plain_repl

    return run_plain_repl(session, sys.stdin, prompts=sys.stderr)


def _main(argv: Sequence[str] | None) -> int:
    args: Any = read_arguments(sys.argv[1:] if argv is None else argv)
    if args.file is not None and args.expr:
        raise UsageError("give either a script FILE or -e TEXT, not both", hint=True)

    source: str | None = None
    filename = "<stdin>"
    what = "standard input"
    if args.expr:
        source, filename, what = _program_text(args.expr), "<expr>", "the -e text"
    elif args.file is not None and args.file != "-":
        data = _read_file(args.file)
        decoded = _decode(data, args.file)
        if decoded is None:
            return EXIT_PROGRAM_ERROR
        source, filename, what = decoded, args.file, args.file
    elif args.file == "-" or not (args.interactive or _isatty(sys.stdin)):
        decoded = _decode(_read_stdin(), "<stdin>")
        if decoded is None:
            return EXIT_PROGRAM_ERROR
        source = decoded

    _prepare_streams()
    if args.export is not None:
        return _export(args, source, filename, what)
    Session = _load_language()

    repl = args.interactive or source is None
    session = Session(
        out=sys.stdout,
        err=sys.stderr,
        format=args.format,
        max_elements=args.max_elements,
        color=repl and want_color(sys.stderr),  # batch output is never coloured
    )
    status = EXIT_OK
    if source is not None:
        if not args.interactive:
            _die_quietly_on_closed_pipe()
        status = run_source(session, source, filename, keep_going=args.keep_going, what=what,
                            goes_on=args.interactive)
        if not args.interactive or session.quit_requested:
            return status
    return run_repl(session)


def _export(args: Any, source: str | None, filename: str, what: str) -> int:
    """`--export torch|notebook`: the program, translated, on standard output (a syntax error is reported as a
    run reports it, exit status 1)."""
    if args.interactive:
        raise UsageError("--export writes a program out; it does not run it in the REPL (-i)", hint=True)
    if args.format != "torch":  # the script prints PyTorch's reprs, as --format torch does
        raise UsageError(f"--export writes a script that prints as --format torch does; --format {args.format}"
                         " is for running the program", hint=True)
    if source is None:
        raise UsageError("--export needs a program: a FILE, -e TEXT, or standard input", hint=True)
    if not source.strip():
        _message(f"{PROG}: {what} is empty: nothing to export")
        return EXIT_OK
    from gradcalc.export import export_program
    from gradcalc.lang.errors import GradcalcError, format_diagnostic

    try:
        text = export_program(source, filename, args.export)
    except GradcalcError as exc:
        shown = exc.filename or filename
        _message(format_diagnostic("error", exc.message, shown, exc.loc, exc.source or source).rstrip("\n"))
        return EXIT_PROGRAM_ERROR
    sys.stdout.write(text)
    return EXIT_OK


def _silence_stdout() -> None:
    """After the reader of standard output went away, send the rest nowhere (no second error at exit)."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (AttributeError, OSError, ValueError):
        pass


def _load_language() -> type[Session]:
    """Import the language (and with it NumPy and the engine) with the cyclic collector off, then move what the
    imports made to the oldest generation at once (gc.freeze, then gc.unfreeze: nothing stays frozen, so the
    engine's collector.py keeps its own use of them), as gradcalc/__init__.py does for the engine alone. Else the
    first collection after the imports scans every object NumPy and gradcalc made (5-10 ms of a cold start)."""
    collecting = gc.isenabled()
    gc.disable()
    try:
        from gradcalc.lang import Session
    finally:
        if collecting:
            gc.freeze()
            gc.unfreeze()
            gc.enable()
    return Session


def main(argv: Sequence[str] | None = None) -> int:
    """The `gradcalc` command: returns the exit status. No Python traceback ever reaches the user."""
    try:
        status = _main(argv)
        if sys.stdout is not None:
            sys.stdout.flush()
        return status
    except UsageError as exc:
        _message(f"{PROG}: {exc}" + (f" (see '{PROG} --help')" if exc.hint else ""))
        return EXIT_USAGE
    except KeyboardInterrupt:
        _message(f"{PROG}: interrupted")
        return EXIT_INTERRUPTED
    except BrokenPipeError:
        _silence_stdout()
        return EXIT_PROGRAM_ERROR
    except Exception as exc:  # noqa: BLE001 - the last line of defence: one line, never a traceback
        _message(f"{PROG}: internal error: {type(exc).__name__}: {exc}")
        return EXIT_PROGRAM_ERROR


def run() -> NoReturn:
    """The process's entry point (the console script, `python -m gradcalc`): `main`, then exit. Before exiting it
    freezes every object, so that the two full collections of the interpreter's exit do not walk all of NumPy's,
    the engine's and the session's objects (10-15 ms) only to find nothing to free: the program is done, and
    streams are still flushed and closed at exit as usual. (Not in `main`, which a host may call in-process.)"""
    status = main()
    gc.freeze()
    raise SystemExit(status)
