"""Atomic file replacement: write a temporary file beside the target, fsync, rename.

A crash (even SIGKILL) mid-write leaves the old file intact. As `torch.save` (which
opens the path for writing) would: an existing target keeps its permission bits, and a
symlink is written through (its target is replaced, the link stays a link)."""
import os
import tempfile


def write_atomic(path, data):
    target = os.path.realpath(os.fspath(path))  # through symlinks, as open() would
    directory = os.path.dirname(target)
    try:
        mode = os.stat(target).st_mode & 0o7777
    except FileNotFoundError:
        umask = os.umask(0)  # there is no way to read the umask without setting it
        os.umask(umask)
        mode = 0o666 & ~umask
    fd, tmp = tempfile.mkstemp(prefix="." + os.path.basename(target) + ".", suffix=".tmp",
                               dir=directory)
    try:
        with os.fdopen(fd, "wb") as fh:
            if hasattr(os, "fchmod"):  # mkstemp made it 0600
                os.fchmod(fh.fileno(), mode)
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, target)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
    _fsync_dir(directory)


def _fsync_dir(directory):
    # The rename itself is durable only once the directory entry is on disk (POSIX).
    try:
        dfd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(dfd)
    except OSError:
        pass
    finally:
        os.close(dfd)
