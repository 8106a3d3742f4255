"""Atomic file replacement: write a temporary file beside the target, fsync, rename.

A crash (even SIGKILL) mid-write leaves the old file intact. As `torch.save` (which
opens the path for writing) would: an existing target keeps its permission bits, and a
symlink is written through (its target is replaced, the link stays a link)."""
import os
import sys
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
    fd, tmp = tempfile.mkstemp(prefix=_temp_prefix(target, directory), suffix=".tmp",
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


def _temp_prefix(target, directory):
    """"." + the target's name + ".", the name cut so that the temporary file's whole name
    (prefix, mkstemp's 8 random characters, ".tmp") fits the file system's NAME_MAX: a
    legal 255-byte target name must not make the hidden temporary name illegal."""
    try:
        name_max = os.pathconf(directory, "PC_NAME_MAX")
    except (AttributeError, OSError, ValueError):
        name_max = 255
    room = max(1, name_max - len(".") - len(".") - 8 - len(".tmp"))
    name = os.fsencode(os.path.basename(target))[:room]
    # cut on a character boundary (a multi-byte UTF-8 name may end mid-character)
    return "." + name.decode(sys.getfilesystemencoding(), "ignore") + "."


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
