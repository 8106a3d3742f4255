"""`tg.backends.cudnn`: torch.backends.cudnn's flags, a module of its own because programs
import it by name (`import torch.backends.cudnn as cudnn; cudnn.benchmark = True`, as in
pytorch/examples' dcgan). The flags keep what a program assigns and change nothing:
there is no cuDNN here, so `is_available()` is False and `version()` None."""

enabled = True
benchmark = False
deterministic = False
allow_tf32 = True


def is_available():
    return False


def version():
    return None
