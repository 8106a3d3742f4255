"""Programs in the style of pytorch/tutorials' recipes (warmstarting a model with
`load_state_dict(strict=False)`), run with torch and with tapegrad; what they print must
agree (tests/_snippets.py). Written for these tests, not copied.
"""

from _snippets import assert_same_output


# ------------------------------------------------ recipes: warmstarting (strict=False)
def test_warmstarting_load_state_dict_result_prints_like_torch():
    def program(torch, print):
        nn = torch.nn

        class NetA(nn.Module):
            def __init__(self):
                super().__init__()
                self.conv1 = nn.Conv2d(3, 6, 5)
                self.fc1 = nn.Linear(4, 2)

        class NetC(nn.Module):
            def __init__(self):
                super().__init__()
                self.conv1 = nn.Conv2d(3, 6, 5)
                self.extra = nn.Linear(2, 2)

        sd = NetA().state_dict()
        res = NetC().load_state_dict(sd, strict=False)
        print(res)
        print(res.missing_keys, res.unexpected_keys, type(res).__name__)
        print(NetA().load_state_dict(sd, strict=False))
        print(NetA().load_state_dict(sd))
        try:
            NetC().load_state_dict(sd)
        except RuntimeError as e:
            print("RuntimeError:", e)

    assert_same_output(program)
