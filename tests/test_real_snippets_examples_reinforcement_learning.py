"""pytorch/examples' reinforcement_learning (REINFORCE with
`torch.distributions.Categorical`), from running the real program with `import torch`
resolving to tapegrad. Run with torch and with tapegrad; what they print must agree
(tests/_snippets.py). Written for these tests, not copied.
"""
import importlib
import numpy as np

from _snippets import assert_same_output, fill_parameters


def _reinforce(torch, print):
    nn, F = torch.nn, torch.nn.functional
    from_dist = importlib.import_module(torch.__name__ + ".distributions")
    Categorical = from_dist.Categorical
    print(Categorical is torch.distributions.Categorical)

    class Policy(nn.Module):
        def __init__(self):
            super().__init__()
            self.affine1 = nn.Linear(4, 8)
            self.affine2 = nn.Linear(8, 2)

        def forward(self, x):
            return F.softmax(self.affine2(F.relu(self.affine1(x))), dim=1)

    policy = Policy()
    fill_parameters(torch, policy)
    saved_log_probs, rewards, entropies = [], [], []
    for t in range(4):
        state = torch.from_numpy(np.cos(np.arange(4.0) + t).astype(np.float32)).unsqueeze(0)
        probs = policy(state)
        m = Categorical(probs)
        print(m)
        sampled = m.sample()
        print(sampled.shape, sampled.dtype, 0 <= sampled.item() < 2, m.batch_shape,
              m.event_shape, m.param_shape)
        action = torch.tensor([t % 2])
        saved_log_probs.append(m.log_prob(action))
        entropies.append(m.entropy())
        print(m, m.probs, m.mode)
        rewards.append(1.0)
    R, returns = 0, []
    for r in rewards[::-1]:
        R = r + 0.99 * R
        returns.insert(0, R)
    returns = torch.tensor(returns)
    eps = np.finfo(np.float32).eps.item()
    returns = (returns - returns.mean()) / (returns.std() + eps)
    policy_loss = [-log_prob * R for log_prob, R in zip(saved_log_probs, returns)]
    loss = torch.cat(policy_loss).sum() - 0.01 * torch.cat(entropies).sum()
    loss.backward()
    print(loss, policy.affine1.weight.grad.norm(), policy.affine2.bias.grad)
    c = Categorical(logits=torch.tensor([[0.2, 0.3, 0.5], [1.0, 2.0, -1.0]]))
    print(c, c.logits, c.log_prob(torch.tensor([1, 2])), c.entropy(), c, c.sample().shape,
          c.sample((5,)).shape, c.enumerate_support())
    print(Categorical(torch.tensor([0.0, 1.0])).entropy(), c.mean, c.variance)
    # validate_args=True given: torch's default is a process-wide switch, and initialising
    # torch._dynamo (any torch.compile in the same test process) turns it off
    for kwargs in ({}, {"probs": torch.tensor([0.5, 0.5]), "logits": torch.tensor([0., 0.])},
                   {"probs": torch.tensor([0.2, -0.3])}):
        try:
            Categorical(**kwargs, validate_args=True)
        except ValueError as e:
            print(e)
    try:
        Categorical(torch.tensor([0.2, 0.8]), validate_args=True).log_prob(torch.tensor(5))
    except ValueError as e:
        print(e)


def test_reinforce_categorical_policy():
    assert_same_output(_reinforce)
