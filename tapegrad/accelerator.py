"""`tg.accelerator`: torch.accelerator's queries; tapegrad has no accelerator (CPU only)."""


def is_available():
    return False


def device_count():
    return 0


def current_accelerator(check_available=False):
    """None: there is no accelerator (torch returns None too when there is none)."""
    return None
