"""torch.nn.modules.channelshuffle: `ChannelShuffle` (ShuffleNet's channel regrouping,
`F.channel_shuffle`)."""
from .. import functional as F
from .module import Module

__all__ = ["ChannelShuffle"]


class ChannelShuffle(Module):
    """(N, C, *) -> channels regrouped into `groups` interleaved groups."""

    def __init__(self, groups):
        super().__init__()
        self.groups = groups

    def forward(self, input):
        return F.channel_shuffle(input, self.groups)

    def extra_repr(self):
        return f"groups={self.groups}"
