# The PyTorch program basics.gc mirrors, line for line (at(N) names the .gc line that follows).
# ruff: noqa: E702 - "at(N); statement" keeps each statement beside the .gc line it mirrors
from oracle import at, show, torch

at(3)
x = torch.tensor(2.0, requires_grad=True)
at(4)
y = x**2
at(5)
y.backward()
at(6)
show(x.grad)
at(8)
x = torch.tensor(2.0, requires_grad=True)
at(9)
with torch.no_grad():
    at(10)
    y = x**2
at(11)
show(y.requires_grad)
at(13)
x = torch.tensor(2.0, requires_grad=True)
at(14)
y = x**2
at(15)
z = y.detach()
at(16)
show(z.requires_grad)
at(17)
show(y.requires_grad)
at(19)
x = torch.tensor(2.0, requires_grad=True)
at(20)
y = x**2
at(21)
z = torch.sin(y)
at(22)
y.backward(retain_graph=True)
at(23)
show(x.grad)
at(24)
show(x.grad.zero_())
at(25)
z.backward()
at(26)
show(x.grad)


class MyReLU(torch.autograd.Function):
    @staticmethod
    def forward(ctx, input):
        ctx.save_for_backward(input)
        return input.clamp(min=0)

    @staticmethod
    def backward(ctx, grad_output):
        (input,) = ctx.saved_tensors
        grad_input = grad_output.clone()
        grad_input[input < 0] = 0
        return grad_input


at(36)
x = torch.tensor([-1.0, 2.0, -3.0], requires_grad=True)
at(37)
y = MyReLU.apply(x)
at(38)
show(y, grad_fn="myreluBackward")  # the language names the node after its `function`
at(39)
y.backward(torch.ones_like(x))
at(40)
show(x.grad)
