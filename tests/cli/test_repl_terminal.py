"""The installed `gradcalc` in a real terminal: under tmux (the screen as a user sees it) and under pexpect
(the raw bytes, and Ctrl-C delivered by the terminal as SIGINT).

Every wait has a deadline, and every child is killed at the end.
"""

from __future__ import annotations

import io
import os
import re
import shlex
import shutil
import subprocess
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

WAIT = 20.0  # seconds: the longest any screen or output wait may take

# An SGR sequence that sets a foreground colour (8/16 colours, 256 colours or true colour).
COLOUR = re.compile(r"\x1b\[[0-9;]*?(?:(?<![0-9])(?:3[0-7]|9[0-7])|38;[25];[0-9;]+)m")


# -- tmux ----------------------------------------------------------------------------------------------------
class Tmux:
    """One gradcalc in a private tmux server, with a screen to read and keys to send."""

    def __init__(self, binary: str, command: str, env: dict[str, str], status_file: Path) -> None:
        self.binary = binary
        self.socket = f"gradcalc-test-{uuid.uuid4().hex[:12]}"
        self.env = env
        self.status_file = status_file
        script = f"{command}; echo $? > {shlex.quote(str(status_file))}"
        self.tmux("new-session", "-d", "-s", "gc", "-x", "110", "-y", "32", script)

    def tmux(self, *args: str) -> str:
        proc = subprocess.run([self.binary, "-L", self.socket, "-f", "/dev/null", *args], capture_output=True,
                              text=True, env=self.env, timeout=WAIT)
        return proc.stdout

    def screen(self, escapes: bool = False) -> str:
        return self.tmux("capture-pane", "-p", "-t", "gc", *(["-e"] if escapes else []))

    def cursor_x(self) -> int:
        deadline = time.monotonic() + WAIT
        while time.monotonic() < deadline:
            value = self.tmux("display-message", "-p", "-t", "gc", "#{cursor_x}").strip()
            if value.isdigit():
                return int(value)
            time.sleep(0.05)
        raise AssertionError("tmux did not report the cursor")

    def type(self, text: str) -> None:
        self.tmux("send-keys", "-t", "gc", "-l", text)

    def key(self, *names: str) -> None:
        self.tmux("send-keys", "-t", "gc", *names)

    def line(self, text: str) -> None:
        self.type(text)
        self.key("Enter")

    def wait_for(self, predicate: Callable[[str], bool], what: str) -> str:
        deadline = time.monotonic() + WAIT
        screen = ""
        while time.monotonic() < deadline:
            screen = self.screen()
            if predicate(screen):
                return screen
            time.sleep(0.05)
        raise AssertionError(f"timed out waiting for {what}; the screen was:\n{screen}")

    def wait_exit(self) -> int:
        deadline = time.monotonic() + WAIT
        while time.monotonic() < deadline:
            if self.status_file.exists() and self.status_file.read_text().strip():
                return int(self.status_file.read_text())
            time.sleep(0.05)
        raise AssertionError(f"gradcalc did not exit; the screen was:\n{self.screen()}")

    def close(self) -> None:
        subprocess.run([self.binary, "-L", self.socket, "kill-server"], capture_output=True, timeout=WAIT)

    def cpu_seconds(self) -> float:
        """The CPU time used by the processes in the pane (the shell and gradcalc, with all their threads)."""
        pids = [self.tmux("display-message", "-p", "-t", "gc", "#{pane_pid}").strip()]
        total = 0.0
        while pids:
            pid = pids.pop()
            try:
                stat = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
                children = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
            except OSError:
                continue
            total += (int(stat[11]) + int(stat[12])) / os.sysconf("SC_CLK_TCK")
            pids.extend(children)
        return total

    def wait_busy(self, seconds: float) -> None:
        """Wait until the pane's processes have computed `seconds` more: a statement is running."""
        start = self.cpu_seconds()
        deadline = time.monotonic() + WAIT
        while self.cpu_seconds() - start < seconds and time.monotonic() < deadline:
            time.sleep(0.01)


@pytest.fixture
def tmux_gradcalc(gradcalc_command: list[str], clean_env: dict[str, str], tmp_path: Path) -> Iterator[Tmux]:
    binary = shutil.which("tmux")
    if binary is None:
        pytest.skip("tmux is not installed (CI installs it)")
    session = Tmux(binary, shlex.join(gradcalc_command), clean_env, tmp_path / "status")
    try:
        yield session
    finally:
        session.close()


def prompts(screen: str) -> int:
    return len(re.findall(r"^>>>(?: |$)", screen, re.MULTILINE))  # tmux drops trailing spaces


def prompt_after(text: str) -> Callable[[str], bool]:
    """True once the screen shows `text` and then a fresh, empty prompt below it: the REPL is reading keys
    again (in raw mode, so that Ctrl-D is a key, not the terminal's end of file)."""

    def ready(screen: str) -> bool:
        lines = screen.splitlines()
        found = [i for i, line in enumerate(lines) if text in line]
        return bool(found) and any(line.rstrip() == ">>>" for line in lines[found[-1] + 1:])

    return ready


def test_terminal_session_under_tmux(tmux_gradcalc: Tmux, tmp_path: Path) -> None:
    t = tmux_gradcalc
    t.wait_for(lambda s: prompts(s) == 1, "the first prompt")
    t.line("x = 3 requires_grad")
    t.wait_for(lambda s: "1 tensor requires grad" in s, "the toolbar to count x")
    # A block: the continuation line is indented automatically and an empty line ends it.
    t.line("with no_grad:")
    t.wait_for(lambda s: s.rstrip("\n").splitlines()[-1].startswith("...") or "\n..." in s, "a continuation")
    assert t.cursor_x() == len("... ") + 4  # the body is indented one level
    t.line("z = x * 2")
    t.key("Enter")
    t.line("z.requires_grad")
    t.wait_for(lambda s: re.search(r"^False\s*$", s, re.MULTILINE) is not None, "z.requires_grad to print")
    t.line("y = x ** 2")
    t.line("backward y")
    t.line("x.grad")
    screen = t.wait_for(prompt_after("tensor(6.)"), "x.grad to print")  # d(x**2)/dx at 3
    # The toolbar counts x and y (z was made under no_grad); tmux may show a render half drawn: wait for it.
    screen = t.wait_for(lambda s: "mode: grad | 2 tensors require grad" in s, "the toolbar to count y")
    assert "Traceback" not in screen
    t.key("C-d")
    assert t.wait_exit() == 0
    # The history went to the XDG state directory.
    history = (tmp_path / "state" / "gradcalc" / "history").read_text(encoding="utf-8")
    assert "+backward y" in history and "+with no_grad:" in history


def test_errors_are_red_in_a_terminal(tmux_gradcalc: Tmux) -> None:
    t = tmux_gradcalc
    t.wait_for(lambda s: prompts(s) == 1, "the first prompt")
    t.line("undefined_name")
    t.wait_for(prompt_after("error"), "the error")
    coloured = t.screen(escapes=True)
    error_line = next(line for line in coloured.splitlines() if "error" in line)
    assert COLOUR.search(error_line.split("error")[0] + "error"), repr(error_line)
    t.key("C-d")
    assert t.wait_exit() == 0


def test_ctrl_c_during_a_long_array_operation(tmux_gradcalc: Tmux) -> None:
    # LANGUAGE.md section 6: Ctrl-C stops the statement running as soon as the product of big matrices
    # returns, says at once why it does not stop yet, binds nothing, and the REPL goes on; explain names it.
    t = tmux_gradcalc
    t.wait_for(lambda s: prompts(s) == 1, "the first prompt")
    t.line("big = ones(3000, 3000); r = 5")
    t.wait_for(lambda s: prompts(s) == 2, "the second prompt")
    t.line('print "go"; r = (big @ big @ big).sum()')
    t.wait_for(lambda s: re.search(r"^go\s*$", s, re.MULTILINE) is not None, "the program to start")
    t.wait_busy(0.05)  # computing: inside the product (printing "go" took microseconds)
    t.key("C-c")
    t.wait_for(lambda s: "interrupting: an array operation is running and cannot stop midway" in s, "the notice")
    screen = t.wait_for(prompt_after("error: interrupted"), "the error, then a prompt")
    assert re.search(r"^error: interrupted\s*$", screen, re.MULTILINE)  # on a line of its own
    t.line("explain")
    screen = t.wait_for(prompt_after("Fix:"), "explain")
    assert "Where: `r = (big @ big @ big).sum()`." in screen
    assert "changed nothing" in screen
    t.line("r")
    t.wait_for(prompt_after("tensor(5.)"), "r, as it was before")  # the interrupted assignment bound nothing
    assert "Traceback" not in t.screen()
    t.key("C-d")
    assert t.wait_exit() == 0


# -- pexpect -------------------------------------------------------------------------------------------------
@pytest.fixture
def spawn(gradcalc_command: list[str], clean_env: dict[str, str]) -> Iterator[Callable[..., object]]:
    pexpect = pytest.importorskip("pexpect")
    children = []

    def start(*args: str, **env: str):
        # pexpect's pseudo-terminal does not answer cursor-position requests as a terminal (and tmux) does;
        # prompt_toolkit would wait for the answer, in raw mode, for the first seconds of the session.
        env = {**clean_env, "PROMPT_TOOLKIT_NO_CPR": "1", **env}
        child = pexpect.spawn(gradcalc_command[0], [*gradcalc_command[1:], *args], env=env,
                              dimensions=(30, 110), encoding="utf-8", timeout=WAIT)
        children.append(child)
        child.expect(">>>")  # prompt_toolkit moves the cursor over the prompt's trailing space
        return child

    yield start
    for child in children:
        child.close(force=True)


def test_ctrl_c_in_a_terminal_interrupts_a_loop_and_keeps_the_workspace(spawn: Callable) -> None:
    import pexpect

    child = spawn()
    child.send("n = 0\r")
    child.send("while true:\r")
    child.send("n += 1\r")
    child.send('if n == 100: print "loop", "started"\r')
    child.send("\r")
    # The loop runs (this is its output, not the echo of its source), the terminal back in cooked mode.
    child.expect("loop started")
    child.sendintr()  # the terminal turns ^C into SIGINT
    child.expect("interrupted")
    child.send("n >= 100\r")  # (Ctrl-C may come while the print is still running: then the loop stops after it)
    child.expect(r"tensor\(True\)")
    # Ctrl-C at the prompt drops the line, and the REPL goes on.
    child.expect(">>>")  # the next prompt is up: keys are read in raw mode, ^C is a key
    child.send("1 + 1")
    child.expect("1")
    child.sendintr()
    child.send("n + 1 > 100\r")
    child.expect(r"tensor\(True\)")
    assert "tensor(2.)" not in child.before
    child.expect(">>>")
    child.sendcontrol("d")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0


def test_no_color_turns_colour_off(spawn: Callable) -> None:
    import pexpect

    child = spawn(NO_COLOR="1")
    transcript = io.StringIO()
    child.logfile_read = transcript
    child.send("undefined_name\r")
    child.expect("error")
    child.expect(">>>")
    child.sendcontrol("d")
    child.expect(pexpect.EOF)
    seen = transcript.getvalue()
    assert "undefined_name" in seen
    assert COLOUR.search(seen) is None, repr(seen)


def test_errors_are_coloured_without_no_color(spawn: Callable) -> None:
    import pexpect

    child = spawn()
    child.send("undefined_name\r")
    child.expect("error")
    assert COLOUR.search(child.before), repr(child.before)
    child.expect(">>>")
    child.sendcontrol("d")
    child.expect(pexpect.EOF)


def test_dash_i_runs_the_text_then_opens_the_repl_on_its_workspace(spawn: Callable) -> None:
    import pexpect

    child = spawn("-i", "-e", "k = 7")
    child.send("k * 6\r")
    child.expect(r"tensor\(42\.\)")
    child.expect(">>>")
    child.sendcontrol("d")
    child.expect(pexpect.EOF)


def test_batch_output_is_not_coloured_even_on_a_terminal(
    gradcalc_command: list[str], clean_env: dict[str, str]
) -> None:
    pexpect = pytest.importorskip("pexpect")
    child = pexpect.spawn(gradcalc_command[0], [*gradcalc_command[1:], "-e", "1 + 1; nope"], env=clean_env,
                          encoding="utf-8", timeout=WAIT)
    child.expect(pexpect.EOF)
    child.close()
    assert "tensor(2.)" in child.before and "error" in child.before
    assert "\x1b[" not in child.before
    assert child.exitstatus == 1
