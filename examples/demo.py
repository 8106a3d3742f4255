"""Demo: reuse of local derivatives (lesson 1) and a tiny regression fit."""
import tapegrad as tg

# Reuse (lesson 1): u = x**2, y = 2*u at x = 3.
x = tg.tensor(3.0, requires_grad=True)
u = x ** 2
y = 2 * u
y.backward()
print(f"u = {u.item():g}, y = {y.item():g}, dy/dx = {x.grad.item():g}")  # 9, 18, 12

# Fit y = 3x - 1 by gradient descent with the engine alone.
tg.manual_seed(0)
xs = tg.randn(64, 1)
ys = 3 * xs - 1
w = tg.zeros(1, requires_grad=True)
b = tg.zeros(1, requires_grad=True)
for step in range(200):
    loss = ((xs * w + b - ys) ** 2).mean()
    loss.backward()
    with tg.no_grad():
        w.data -= 0.1 * w.grad.data
        b.data -= 0.1 * b.grad.data
    w.grad = None
    b.grad = None
print(f"fit: w = {w.item():.4f}, b = {b.item():.4f}, loss = {loss.item():.2e}")
