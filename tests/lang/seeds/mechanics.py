# The PyTorch program mechanics.gc mirrors, line for line (at(N) names the .gc line that follows).
# ruff: noqa: E702 - "at(N); statement" keeps each statement beside the .gc line it mirrors
from oracle import at, show, torch

at(3)
w1 = torch.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
at(4)
w2 = torch.tensor([0.5, -1.0], requires_grad=True)
at(5)
x = torch.tensor([1.0, 1.0])
at(6)
show(w1.requires_grad_(False))
at(7)
y = (w1 @ x * w2).sum()
at(8)
y.backward()
at(9)
show(w1.grad)
at(10)
show(w2.grad)
at(11)
show((w1.is_leaf, w1.requires_grad))
at(13)
h = w2 * 2
at(14)
show(h.requires_grad_(False))
at(16)
a = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
at(17)
with torch.no_grad():
    at(18)
    b = a * 2
    at(19)
    with torch.enable_grad():
        at(20)
        c = a * 2
at(21)
show((b.requires_grad, c.requires_grad))
at(22)
show(c.grad_fn)
at(24)
with torch.no_grad():
    at(25)
    a -= 0.1 * torch.tensor([1.0, 1.0, 1.0])
at(26)
show(a)
at(27)
show((a.is_leaf, a.requires_grad, a._version))
at(29)
a += 1
at(31)
with torch.inference_mode():
    at(32)
    z = a * 2
at(33)
show(z.requires_grad)
at(34)
q = z * a
at(36)
show(z.add_(1))
at(38)
x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
at(39)
y = x * 2
at(40)
show(y._version)
at(41)
s = (y**2).sum()
at(42)
y += 1
at(43)
show(y._version)
at(44)
s.backward()
at(46)
x = torch.ones(5, 5, requires_grad=True)
at(47)
y = (x + 3) * (x + 4) * 0.5
at(48)
y.sum().backward()
at(49)
show(x.grad)
