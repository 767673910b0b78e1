"""The `:help` pages: one short text per autograd idea and per statement, as data.

`:help` lists the topics; `:help TOPIC` shows one (a keyword, statement or built-in name finds its page).
"""

from __future__ import annotations

import difflib
import textwrap

from ..errors import close_matches
from ..values.builtins import ATTRIBUTES, FUNCTIONS, LANGUAGE_ONLY, METHODS, NN_BUILTINS
from ..values.namespace import help_page
from ..values.spaces import PREDEFINED
from .help_statements import find_statement, help_words, statement_page, statement_summary_line, statements_page

INTRO = """\
gradcalc: type expressions and statements; values print as PyTorch prints them.
  x = 3 requires_grad        a leaf tensor that requires grad
  y = x ** 2 + sin(x)        record a graph
  backward y                 fill x.grad
  x.grad                     tensor(5.0100)
Commands: :help [topic]  :vars  :reset  :load FILE  :export torch|notebook [FILE]  :quit
{statements}
Topics: {topics}
"""

TOPICS: dict[str, str] = {
    "leaves": """\
Leaves. A tensor that does not require grad is a leaf, however it was computed (d = c * c is a leaf when c
does not require grad). A tensor that requires grad is a leaf only when you made it: x = 3 requires_grad.
An operation's result requires grad when grad mode is on and an input requires grad; it is not a leaf and
has a grad_fn (x * 2 has <MulBackward0>). Check with x.is_leaf, x.requires_grad, x.grad_fn.
Freeze a leaf with x.requires_grad_(false); a computed tensor can't be frozen: use .detach().""",
    "grad": """\
.grad and grad(). `backward y` adds dy/dx into x.grad for every leaf x that requires grad; gradients
accumulate across backward calls until you zero them (zero_grad x, or x.grad.zero_()).
grad(outputs, inputs) returns the gradients as a tuple instead, without touching .grad:
  g = grad(y, x)[0]
Options: grad_outputs= (for a non-scalar output), retain_graph=, create_graph=, allow_unused=true (an
input that was not used gets none instead of an error). A non-leaf's .grad is None (with a warning): see
retain_grad.""",
    "retain_grad": """\
retain_grad. backward fills .grad only on leaves. To keep the gradient of a computed tensor too, mark it
before backward:  b = a * a;  retain_grad b;  backward b;  b.grad   (also the method b.retain_grad()).""",
    "retain_graph": """\
retain_graph. backward (and grad()) free the values the graph saved, so a second backward through the
same graph is an error. Keep them for another pass:  backward y retain_graph
create_graph implies retain_graph unless you say otherwise.""",
    "create_graph": """\
create_graph. Record the backward pass itself, so that gradients are graph members you can differentiate
again (higher-order derivatives):
  a = 3 requires_grad;  b = a ** 3
  db = grad(b, a, create_graph=true)[0]     # 27, requires grad
  grad(db, a)[0]                           # 18
`backward y create_graph` does the same into .grad (and warns about the reference cycle it makes).""",
    "backward": """\
backward y [retain_graph] [create_graph] [gradient G] [inputs [a, b]]   (flags in any order; also y.backward(...))
Differentiates y with respect to the leaves it came from, adding into their .grad. A non-scalar y needs
gradient G of y's shape: backward y gradient ones_like(y). inputs [a, b] (or y.backward(inputs=[a, b]))
accumulates into those tensors' .grad only (a computed tensor named there gets its .grad too).""",
    "no_grad": """\
with no_grad:  nothing inside is recorded: results do not require grad. Use it to update parameters:
  with no_grad:
      w -= 0.1 * w.grad
with enable_grad: re-enables recording inside a no_grad block.""",
    "inference_mode": """\
with inference_mode:  like no_grad, and the tensors made inside are inference tensors: later they can't
be saved for backward nor changed in place outside inference mode. Use .clone() outside to get a normal
one.""",
    "detect_anomaly": """\
with detect_anomaly:  record where each operation was made; a backward that produces NaN then fails with
an error naming the forward operation (the statement) that created the failing node.""",
    "in-place": """\
In-place operations and versions. x += 1 (also -= *= /=, x[i] = v, x.add_(v), x.zero_()) change a tensor
in place and bump its version counter (x.version). Changing a leaf that requires grad in place is an error
outside `with no_grad:`. If backward needs a value that was changed in place since it was saved, it fails
naming the tensor's shape, the node and both versions: compute with a .clone() instead.""",
    "function": """\
A custom autograd function (PyTorch's torch.autograd.Function):
  function myrelu(input):
      forward:
          save input                 # save_for_backward; version-checked when backward reads it
          return clamp(input, min=0)
      backward(grad_output):         # one gradient per output; saved names are visible here
          g = grad_output.clone()
          g[input < 0] = 0
          return g                   # one gradient per input (none for an input that needs none)
  y = myrelu(x)""",
    "def": """\
def f(a, b=2):     a function; its body has local variables and sees the workspace (closures too).
    return a * sin(b)
Recursion works up to a depth limit. Expression statements inside print, as in bc.""",
    "graph": """\
graph y            print y's backward graph: grad_fn nodes down to the leaves' AccumulateGrad. Each node
                   shows the workspace names of its output (all of them), its shape and, up to 6 elements,
                   its value; a leaf also its .grad. Then what the node saved for backward, by PyTorch's
                   names (self, other, result, exponent...): `freed` after a backward without
                   retain_graph, and both versions when the tensor was changed in place since.
  AddBackward0  (y: shape (), value tensor(9.1411))  saved: alpha = 1
  ├── PowBackward0  saved: self = x, exponent = 2
  │   └── AccumulateGrad  (x: leaf, shape (), value tensor(3.), grad None)
graph y to "y.dot" write it as Graphviz DOT, with the same labels
graph y to "y.svg" draw it (also "y.png") with Graphviz's dot program (install Graphviz: apt install
                   graphviz, brew install graphviz)
y.grad_fn.saved    what y's node saved, by name: y.grad_fn.saved.self (also y.grad_fn._saved_self), as
                   PyTorch's grad_fn._saved_self; an error once a backward freed it (use retain_graph)""",
    "hooks": """\
Hooks: your own function runs during backward (as PyTorch's hooks; a hook that prints, prints).
  def double(g):
      print "y's gradient:", g
      return 2 * g                              # a tensor returned replaces the gradient; none keeps it
  h = y.register_hook(double)                   # on y's gradient (a leaf's or a computed tensor's)
  x.register_post_accumulate_grad_hook(f)       # f(x) after backward added into x.grad (a leaf only)
  y.grad_fn.register_hook(f)                    # f(grad_inputs, grad_outputs) after the node ran; may
                                                #   return a tuple of new grad_inputs
  y.grad_fn.register_prehook(f)                 # f(grad_outputs) before it runs; may return new ones
  h.remove()                                    # take the hook away (h.removed says whether it was)
Order is PyTorch's: a tensor's hooks run in the order registered, before retain_grad fills its .grad
and before the node runs. An error in a hook stops the backward there, changing nothing (no .grad, nothing
freed). Only a tensor that requires grad can have hooks. Under create_graph hooks see graph tensors.""",
    "func": """\
Function transforms. The built-ins of torch.autograd.functional evaluate at once:
  jacobian(f, x)   hessian(f, x)   vjp(f, x, v)   jvp(f, x, v)   hvp(f, x, v)   vhp(f, x, v)
  vjp and jvp return (f(x), product); x may be a tuple (x, y); create_graph=true, strict=true
  (jacobian: vectorize=, strategy="forward-mode"; hessian: outer_jacobian_strategy=)
The func namespace holds torch.func's; each makes a function that is then called at a point:
  func.grad(f)(x)   func.grad_and_value(f)(x)   func.jacrev(f)(x)   func.jacfwd(f)(x)   func.hessian(f)(x)
  func.jacfwd(func.jacrev(f))(x)   func.vmap(f, in_dims=0, out_dims=0)(xs)   func.vmap(func.grad(f))(xs)
  func.vjp(f, x) gives (f(x), vjp_fn), then vjp_fn(v);  func.jvp(f, (x,), (v,)) gives (f(x), J v)
  func.linearize(f, x) gives (f(x), jvp_fn);  argnums=1 or (0, 1) picks arguments;  has_aux=true
f is a def or a built-in; func.jvp, func.jacfwd and func.linearize use forward-mode differentiation.
:help func.NAME shows one's signature.""",
    "explain": """\
explain backward y [retain_graph] [create_graph] [gradient G]   (also: explain y.backward(...))
    runs that backward and tells each step the engine takes, in PyTorch's order: the node (with the
    names of what it made) and the line that made it, the gradient it received, what it passes on to
    whom (a branch that does not require grad is skipped), each .grad before -> after, the hooks that
    fired, the saved values freed (without retain_graph).
explain grad(y, x, ...)   the same for a grad() call, then prints its value.
explain x.grad            why x.grad is None (not a leaf: retain_grad; no requires_grad; no backward
                          reached x, or the last one's output does not depend on x; zero_grad cleared
                          it; x was a leaf until a line rebound it to a computed tensor, as
                          `w = w - lr * w.grad` does: update it in place under `with no_grad:`), or
                          which backward lines added into it and whether it carries a graph.
explain                   the last error in full: what happened, where, why, the fix; the culprits by
                          name and line (who freed the saved values, who changed a saved tensor in place).
With --format json the steps are objects: {"event": "node", "node": ..., "line": ..., "grad_outputs":
[...], "grad_inputs": [...]} and {"event": "grad", "name": ..., "before": ..., "after": ...}.
The workspace changes exactly as without explain (a failing explain backward fails as backward does).""",
    "printing": """\
Values print as PyTorch prints them (float64 is the default dtype): tensor(6.), tensor([0., 1.]),
tensor(3., requires_grad=True), tensor(9., grad_fn=<MulBackward0>). --format plain prints bare numbers,
--format json one JSON object per value.""",
    "modules": """\
Modules and optimizers, as PyTorch's torch.nn and torch.optim:
  seed 0                                                   # initial weights repeat
  net = Sequential(Linear(1, 32), Tanh(), Linear(32, 1))   # print net shows its layers
  opt = Adam(net.parameters(), lr=0.01)                    # also SGD(...), AdamW(...)
  for step in range(500):
      opt.zero_grad()
      loss = mse_loss(net(x), y)
      backward loss
      opt.step()
A module: net(x), net[0], net[0].weight, len(net), net.parameters(), named_parameters(), zero_grad(),
train(), eval(); assign lin.weight = Parameter(t). An optimizer: step(), zero_grad(), opt.lr (read and set),
opt.param_groups. :help NAME for each: Linear, Adam, mse_loss, ...""",
    "commands": """\
:help [topic]  this help      :vars  the workspace as a table      :reset  forget every variable
:load FILE     run a script into the workspace                    :quit   leave (also Ctrl-D)
:export torch FILE.py      the session so far (its statements that did not fail) as a PyTorch script
:export notebook FILE.ipynb    ... as a notebook for the gradcalc kernel (without FILE: printed here)""",
    "export": """\
Export: the session so far, or a script, as PyTorch code or a notebook.
  :export torch session.py         a PyTorch script that prints what gradcalc printed (python session.py)
  :export notebook session.ipynb   a notebook for the gradcalc kernel, one cell per statement or block
  gradcalc --export torch FILE.gc  the same for a script file (on standard output)
Only the statements that did not fail are written. Each statement becomes PyTorch's (backward y retain_graph
is y.backward(retain_graph=True), x = 3 requires_grad is x = torch.tensor(3., requires_grad=True), with
no_grad: is with torch.no_grad():); explain backward and explain grad(...) run there, the other explain forms,
graph and plot are comments. Random numbers: PyTorch's stream is not gradcalc's (the values drawn differ).""",
}

# Other words that lead to a page.
ALIASES: dict[str, str] = {
    "notebook": "export",
    ":export": "export",
    "leaf": "leaves",
    "is_leaf": "leaves",
    "requires_grad": "leaves",
    "requires_grad_": "leaves",
    "grad_fn": "graph",
    "accumulation": "grad",
    "allow_unused": "grad",
    "inputs": "backward",
    "enable_grad": "no_grad",
    "inplace": "in-place",
    "version": "in-place",
    "forward": "function",
    "custom": "function",
    "transforms": "func",
    "forward-mode": "func",
    "gradcheck": "builtins",
    "detach": "leaves",
    "load": "commands",
    "vars": "commands",
    "reset": "commands",
    "quit": "commands",
    "format": "printing",
    "hook": "hooks",
    "register_hook": "hooks",
    "register_prehook": "hooks",
    "register_post_accumulate_grad_hook": "hooks",
    "remove": "hooks",
    "saved": "graph",
    "dot": "graph",
    "graphviz": "graph",
    "nn": "modules",
    "module": "modules",
    "optim": "modules",
    "optimizer": "modules",
    "optimizers": "modules",
    "training": "modules",
    "layers": "modules",
    "why": "explain",
    "else": "if",
    "elif": "if",
    "=": "assignment",
    "-=": "+=",
    "*=": "+=",
    "/=": "+=",
    "narrate": "explain",
}


# The built-ins page groups the engine's functions by the family (engine module) that defines them.
FAMILIES = (
    ("creation", "constructors"),
    ("elementwise", "elementwise"),
    ("arithmetic", "arithmetic"),
    ("reductions", "reductions"),
    ("linalg", "linear algebra"),
    ("shape", "shape"),
    ("indexing", "indexing"),
    ("basic", "comparisons and copies"),
)


def builtins_page() -> str:
    """`:help builtins`: every built-in function by family, and the tensor attributes (from the engine)."""
    nn = {name for names in NN_BUILTINS.values() for name in names}
    groups: dict[str, list[str]] = {}
    for name, b in FUNCTIONS.items():
        family = "autograd and Python's" if name in LANGUAGE_ONLY else "other"
        if name in nn:  # listed without importing gradcalc.nn
            family = "modules, losses and optimizers"
        elif name not in LANGUAGE_ONLY:
            module = getattr(b.resolve(), "__module__", "") or ""
            family = next((label for key, label in FAMILIES if module.endswith("." + key)), "other")
        groups.setdefault(family, []).append(name)
    order = [label for _, label in FAMILIES] + ["other", "autograd and Python's", "modules, losses and optimizers"]
    lines = []
    for label in order:
        if label in groups:
            lines += textwrap.wrap(f"{label}: {' '.join(sorted(groups[label]))}", 110, subsequent_indent="  ")
    lines += textwrap.wrap(f"attributes: {' '.join(sorted(ATTRIBUTES))}", 110, subsequent_indent="  ")
    lines.append("methods: the functions above as x.name(...), and their in-place forms (x.add_(v)). :help NAME")
    return "\n".join(lines)


def topic_names() -> list[str]:
    """The topics `:help` lists."""
    return sorted([*TOPICS, "builtins", "statements"])


def unknown_topic(topic: str, exact: str) -> str:
    """The answer to `:help WORD` for a word with no page: the closest words that have one, and the topics."""
    words = {*TOPICS, *ALIASES, "builtins", "statements", *help_words()}
    # built-ins and methods (an in-place method only when the word is one: `floor_` is no better than `floor`)
    names = {n for n in {*FUNCTIONS, *METHODS} if not n.endswith("_") or exact.endswith("_")}
    close = close_matches(exact, sorted(names), n=3) + close_matches(topic, sorted(words - names), n=3)
    close = sorted(dict.fromkeys(close), key=lambda w: -_similarity(exact.lower(), w.lower()))[:3]
    topics = f"Topics: {' '.join(topic_names())}"
    if not close:
        return f"no help on '{exact}'. {topics}"
    quoted = [f"'{w}'" for w in close]
    choice = quoted[0] if len(quoted) == 1 else ", ".join(quoted[:-1]) + " or " + quoted[-1]
    return f"no help on '{exact}'; did you mean {choice}? {topics}"


def _similarity(a: str, b: str) -> float:
    return difflib.SequenceMatcher(None, a, b).ratio()


def help_text(topic: str = "") -> str:
    """The page for `topic` (a topic, a statement, a keyword or a built-in), or the list of topics."""
    exact = topic.strip().lstrip(":")  # Linear (the layer) and linear (the function) are two pages
    topic = exact.lower()
    if not topic:
        return INTRO.format(statements=statement_summary_line(), topics=" ".join(topic_names()))
    if topic == "statements":
        return statements_page()
    rule = find_statement(ALIASES.get(topic, topic))
    if rule is not None:
        return statement_page(rule, TOPICS)
    key = ALIASES.get(topic, topic)
    if key in TOPICS:
        return TOPICS[key]
    if "." in exact or exact in PREDEFINED:  # nn.Linear, F.relu, torch.sin, torch.nn: the namespaces' pages
        page = help_page(exact)
        if page:
            return page
    if key == "builtins":
        return builtins_page()
    entry = FUNCTIONS.get(exact) or FUNCTIONS.get(topic) or METHODS.get(topic)
    if entry is not None and entry.doc:
        return entry.doc
    return unknown_topic(topic, exact)
