"""Confining the learner's process: namespaces, Landlock, resource limits, another user.

Everything here is best effort and layered; what a platform lacks is skipped:

- PID and mount namespaces (root, or an unprivileged user namespace): the learner's
  process is PID 1 of its own namespace, so it cannot see or signal the grader and every
  process it starts dies with it; ``tests/``, ``solutions/`` and private test folders are
  covered by empty mounts; its temporary folder is a small tmpfs.
- Landlock (Linux 5.13+, any user): the process may read only Python, its packages, the
  minitorch package and system files, may write only in its temporary folder, may not
  use TCP and may not signal processes outside itself.
- Resource limits: memory, file size, open files, CPU time, no core files; processes
  when it runs as another user.
- An unprivileged user id of its own (not in the user database) when the grader runs
  as root.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import re
import stat
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import Any

try:
    import resource
except ImportError:  # Windows: no resource limits (and no sandbox worker)
    resource = None  # type: ignore[assignment]

CLONE_NEWNS = 0x00020000
CLONE_NEWUSER = 0x10000000
CLONE_NEWPID = 0x20000000
CLONE_NEWNET = 0x40000000
MS_RDONLY = 1
MS_NOSUID = 2
MS_NODEV = 4
MS_NOEXEC = 8
MS_BIND = 0x1000
MS_REC = 0x4000
MS_PRIVATE = 0x40000
PR_SET_PDEATHSIG = 1
PR_SET_DUMPABLE = 4
PR_SET_NO_NEW_PRIVS = 38
PR_SET_CHILD_SUBREAPER = 36

_SYS_LANDLOCK_CREATE_RULESET = 444
_SYS_LANDLOCK_ADD_RULE = 445
_SYS_LANDLOCK_RESTRICT_SELF = 446
_LANDLOCK_CREATE_RULESET_VERSION = 1
_LANDLOCK_RULE_PATH_BENEATH = 1

_FS_EXECUTE = 1 << 0
_FS_WRITE_FILE = 1 << 1
_FS_READ_FILE = 1 << 2
_FS_READ_DIR = 1 << 3
_FS_REMOVE_DIR = 1 << 4
_FS_REMOVE_FILE = 1 << 5
_FS_MAKE_ALL = sum(1 << b for b in range(6, 13))  # char, dir, reg, sock, fifo, block, sym
_FS_REFER = 1 << 13  # ABI 2
_FS_TRUNCATE = 1 << 14  # ABI 3
_NET_ALL = (1 << 0) | (1 << 1)  # bind and connect TCP, ABI 4
_SCOPE_ALL = (1 << 0) | (1 << 1)  # abstract unix sockets and signals, ABI 6

_libc: Any = None


def libc() -> Any:
    global _libc
    if _libc is None:
        _libc = ctypes.CDLL(ctypes.util.find_library("c") or None, use_errno=True)
    return _libc


def linux() -> bool:
    return sys.platform.startswith("linux")


def _check(result: int, what: str) -> None:
    if result != 0:
        errno = ctypes.get_errno()
        raise OSError(errno, f"{what}: {os.strerror(errno)}")


def set_subreaper() -> bool:
    """Orphaned descendants become this process's children (so it can stop them)."""
    if not linux():
        return False
    return libc().prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0


def unshare_namespaces(pid: bool = True) -> str:
    """New mount, network (and, with ``pid``, PID) namespaces for the children of this
    process: the network one has no interface up, so no packet (UDP included, which
    Landlock does not cover) leaves the sandbox. Call it before any thread starts (a
    process with threads cannot enter a new user namespace).

    Returns "root" (as root), "user" (in a new user namespace) or "" (not possible).
    """
    if not linux():
        return ""
    lib = libc()
    flags = CLONE_NEWNS | (CLONE_NEWPID if pid else 0)
    if os.geteuid() == 0:
        if lib.unshare(flags | CLONE_NEWNET) == 0 or lib.unshare(flags) == 0:
            return "root"
        return ""
    uid, gid = os.geteuid(), os.getegid()
    if (
        lib.unshare(CLONE_NEWUSER | flags | CLONE_NEWNET) != 0
        and lib.unshare(CLONE_NEWUSER | flags) != 0
    ):
        return ""
    try:
        Path("/proc/self/setgroups").write_text("deny")
        Path("/proc/self/uid_map").write_text(f"{uid} {uid} 1")
        Path("/proc/self/gid_map").write_text(f"{gid} {gid} 1")
    except OSError:
        pass
    return "user"


def _mount(source: str, target: str, fstype: str | None, flags: int, data: str | None) -> None:
    lib = libc()
    _check(
        lib.mount(
            source.encode(),
            target.encode(),
            fstype.encode() if fstype else None,
            ctypes.c_ulong(flags),
            data.encode() if data else None,
        ),
        f"mount {target}",
    )


def _closed_ancestor(path: str) -> str | None:
    """The first folder above ``path`` that other users cannot enter (e.g. /root)."""
    current = "/"
    for part in Path(path).parts[1:-1] if not os.path.isdir(path) else Path(path).parts[1:]:
        current = os.path.join(current, part)
        try:
            mode = os.stat(current).st_mode
        except OSError:
            return None
        if not mode & stat.S_IXOTH:
            return current
    return None


def expose(paths: Iterable[str], stash: str) -> None:
    """Make ``paths`` reachable for another user when a folder above them is closed to
    others (Python installed under /root, say): in this mount namespace only, that folder
    becomes an empty tmpfs into which the paths are bind-mounted again."""
    groups: dict[str, list[str]] = {}
    for path in sorted(set(paths)):
        closed = _closed_ancestor(path)
        if closed is not None and not any(
            path.startswith(p + os.sep) for p in groups.get(closed, [])
        ):
            groups.setdefault(closed, []).append(path)
    for k, (closed, subpaths) in enumerate(groups.items()):
        stashed = []
        for i, path in enumerate(subpaths):
            place = os.path.join(stash, f"{k}-{i}")
            os.makedirs(place, exist_ok=True)
            _mount(path, place, None, MS_BIND | MS_REC, None)
            stashed.append((path, place))
        _mount("tmpfs", closed, "tmpfs", MS_NOSUID | MS_NODEV, "size=64k,mode=0755")
        for path, place in stashed:
            os.makedirs(path, mode=0o755, exist_ok=True)
            _mount(place, path, None, MS_BIND | MS_REC, None)
            libc().umount2(place.encode(), 2)  # MNT_DETACH


MS_REMOUNT = 32
_KEPT_FLAGS = (
    {  # statvfs flag -> mount flag, kept when remounting read-only
        os.ST_NOSUID: MS_NOSUID,
        os.ST_NODEV: MS_NODEV,
        os.ST_NOEXEC: MS_NOEXEC,
        1024: 1024,  # noatime
        2048: 2048,  # nodiratime
        4096: 1 << 21,  # relatime
    }
    if hasattr(os, "ST_NOSUID")
    else {}
)


def read_only(paths: Iterable[str]) -> None:
    """Make ``paths`` read-only in this mount namespace, whatever their modes: nothing
    the learner's code does can change Python, its packages or the course (a
    ``sitecustomize`` or a ``.pth`` file the next grading run would import), even where
    Landlock is missing and the folders are writable for it.

    Every mount at or below a path is made read-only, not only the top one: a remount
    changes one mount, and the folders :func:`expose` bound back into a tmpfs (the venv
    of a course cloned into a folder closed to others) are mounts of their own."""
    chosen: list[str] = []
    for path in sorted({os.path.abspath(p) for p in paths if os.path.isdir(p)}):
        if not any(path == c or path.startswith(c.rstrip(os.sep) + os.sep) for c in chosen):
            chosen.append(path)
    for path in chosen:
        try:
            _mount(path, path, None, MS_BIND | MS_REC, None)
        except OSError:
            continue
        for point in _mounts_under(path):
            try:
                flags = os.statvfs(point).f_flag
                kept = sum(ms for st, ms in _KEPT_FLAGS.items() if flags & st)
                _mount("none", point, None, MS_BIND | MS_REMOUNT | MS_RDONLY | kept, None)
            except OSError:
                pass


def _mounts_under(path: str) -> list[str]:
    """The mount points at or below ``path`` in this mount namespace (``path`` first)."""
    points = [path]
    try:
        lines = Path("/proc/self/mountinfo").read_text().splitlines()
    except OSError:
        return points
    prefix = path.rstrip(os.sep) + os.sep
    for line in lines:
        fields = line.split()
        if len(fields) > 4:
            # mountinfo writes a space as \040 (octal escapes)
            point = re.sub(r"\\([0-7]{3})", lambda m: chr(int(m.group(1), 8)), fields[4])
            if point.startswith(prefix) and point not in points:
                points.append(point)
    return points


def still_writable(paths: Iterable[str]) -> list[str]:
    """The ``paths`` that are not on a read-only mount (what :func:`read_only` missed)."""
    found = []
    for path in paths:
        try:
            if os.path.isdir(path) and not os.statvfs(path).f_flag & os.ST_RDONLY:
                found.append(path)
        except OSError:
            pass
    return found


def private_mounts(
    hide: Iterable[str],
    scratch: str,
    owner: tuple[int, int] | None,
    needed: Iterable[str] = (),
    stash: str = "",
    proc: bool = True,
    fixed: Iterable[str] = (),
) -> None:
    """Make ``fixed`` read-only, cover ``hide`` with empty read-only folders, ``scratch``
    with a 256 MB tmpfs, and (with ``proc``) /proc with this PID namespace's own; make
    ``needed`` reachable for ``owner``."""
    _mount("none", "/", None, MS_REC | MS_PRIVATE, None)
    if owner is not None and stash:
        expose(needed, stash)
    read_only(fixed)
    for path in hide:
        if os.path.isdir(path):
            try:
                _mount("tmpfs", path, "tmpfs", MS_RDONLY | MS_NOSUID | MS_NODEV, "size=4k,mode=0")
            except OSError:
                pass
    options = "size=256m,mode=0700"
    if owner is not None:
        options += f",uid={owner[0]},gid={owner[1]}"
    try:
        _mount("tmpfs", scratch, "tmpfs", MS_NOSUID | MS_NODEV, options)
    except OSError:
        pass
    if proc:
        try:
            _mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, None)
        except OSError:
            pass


def unreachable(paths: Iterable[str]) -> list[str]:
    """The paths another user cannot reach (a folder above them is closed to others)."""
    return [p for p in paths if _closed_ancestor(p) is not None]


def nproc_per_user_namespace() -> bool:
    """Whether RLIMIT_NPROC counts a user's processes per user namespace (Linux 5.14+):
    then, in the sandbox's own user namespace, it counts only the sandbox's processes."""
    if not linux():
        return False
    try:
        major, minor = (int(part) for part in os.uname().release.split(".")[:2])
    except ValueError:
        return False
    return (major, minor) >= (5, 14)


def set_limits(limits: dict[str, Any], count_processes: bool) -> None:
    """Resource limits for this process and its children; ``count_processes`` when
    RLIMIT_NPROC would count only the sandbox's processes (not the grader's)."""
    if resource is None:
        return

    def limit(kind: int, value: int | None) -> None:
        if value is None:
            return
        try:
            soft, hard = resource.getrlimit(kind)
            if hard != resource.RLIM_INFINITY:
                value = min(value, hard)
            resource.setrlimit(kind, (value, value))
        except (ValueError, OSError):
            pass

    limit(resource.RLIMIT_CORE, 0)
    limit(resource.RLIMIT_AS, limits.get("memory"))
    limit(resource.RLIMIT_FSIZE, limits.get("file_size"))
    limit(resource.RLIMIT_NOFILE, limits.get("open_files"))
    limit(resource.RLIMIT_CPU, limits.get("cpu_seconds"))
    if count_processes:  # RLIMIT_NPROC counts every process of the user (in its namespace)
        limit(resource.RLIMIT_NPROC, limits.get("processes"))


def drop_privileges(uid: int, gid: int) -> None:
    os.setgroups([])
    os.setgid(gid)
    os.setuid(uid)
    if os.getuid() != uid or os.geteuid() != uid:
        raise OSError("could not become an unprivileged user")


def no_new_privileges() -> None:
    if linux():
        libc().prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)


class _CapHeader(ctypes.Structure):
    _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]


class _CapData(ctypes.Structure):
    _fields_ = [
        ("effective", ctypes.c_uint32),
        ("permitted", ctypes.c_uint32),
        ("inheritable", ctypes.c_uint32),
    ]


_CAPABILITY_VERSION_3 = 0x20080522
PR_CAPBSET_DROP = 24
PR_CAP_AMBIENT = 47
PR_CAP_AMBIENT_CLEAR_ALL = 4


def drop_capabilities() -> None:
    """Give up every capability, for good. A grader that is not root gets its namespaces
    by entering a new user namespace, which hands the process every capability *there*:
    enough to unmount what covers the tests where Landlock does not forbid it."""
    if not linux():
        return
    lib = libc()
    lib.prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0)
    for capability in range(64):
        lib.prctl(PR_CAPBSET_DROP, capability, 0, 0, 0)
    header = _CapHeader(_CAPABILITY_VERSION_3, 0)
    data = (_CapData * 2)()
    lib.capset(ctypes.byref(header), data)  # best effort, as the rest: Landlock still holds


def not_dumpable() -> None:
    """Other processes of the same user (the worker, for its parent) cannot open this
    one's /proc files (its descriptors, its memory) nor ptrace it."""
    if linux():
        libc().prctl(PR_SET_DUMPABLE, 0, 0, 0, 0)


def die_with_parent() -> None:
    import signal

    if linux():
        libc().prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)


class _RulesetAttr(ctypes.Structure):
    _fields_ = [
        ("handled_access_fs", ctypes.c_uint64),
        ("handled_access_net", ctypes.c_uint64),
        ("scoped", ctypes.c_uint64),
    ]


class _PathBeneath(ctypes.Structure):
    _pack_ = 1
    _fields_ = [("allowed_access", ctypes.c_uint64), ("parent_fd", ctypes.c_int32)]


def landlock_abi() -> int:
    if not linux():
        return 0
    lib = libc()
    lib.syscall.restype = ctypes.c_long
    version = lib.syscall(
        _SYS_LANDLOCK_CREATE_RULESET,
        None,
        ctypes.c_size_t(0),
        ctypes.c_uint32(_LANDLOCK_CREATE_RULESET_VERSION),
    )
    return max(int(version), 0)


def landlock(readable: Iterable[str], writable: Iterable[str]) -> int:
    """Allow reading only beneath ``readable``, writing only beneath ``writable``; no TCP,
    no signals or abstract sockets outside. Returns the ABI used (0: not available)."""
    abi = landlock_abi()
    if abi < 1:
        return 0
    lib = libc()
    read = _FS_EXECUTE | _FS_READ_FILE | _FS_READ_DIR
    write = _FS_WRITE_FILE | _FS_REMOVE_DIR | _FS_REMOVE_FILE | _FS_MAKE_ALL
    if abi >= 2:
        write |= _FS_REFER
    if abi >= 3:
        write |= _FS_TRUNCATE
    handled = read | write
    attr = _RulesetAttr(handled, _NET_ALL if abi >= 4 else 0, _SCOPE_ALL if abi >= 6 else 0)
    size = 8 if abi < 4 else (16 if abi < 6 else 24)
    fd = lib.syscall(_SYS_LANDLOCK_CREATE_RULESET, ctypes.byref(attr), ctypes.c_size_t(size), 0)
    if fd < 0:
        return 0
    try:
        rules = [(p, read) for p in readable] + [(p, read | write) for p in writable]
        for path, access in rules:
            try:
                target = os.open(path, os.O_PATH | os.O_CLOEXEC)
            except OSError:
                continue
            try:
                if not os.path.isdir(path):
                    access &= _FS_EXECUTE | _FS_READ_FILE | _FS_WRITE_FILE | _FS_TRUNCATE
                rule = _PathBeneath(access & handled, target)
                lib.syscall(
                    _SYS_LANDLOCK_ADD_RULE, fd, _LANDLOCK_RULE_PATH_BENEATH, ctypes.byref(rule), 0
                )
            finally:
                os.close(target)
        no_new_privileges()
        _check(int(lib.syscall(_SYS_LANDLOCK_RESTRICT_SELF, fd, 0)), "landlock_restrict_self")
    finally:
        os.close(fd)
    return abi


def readable_paths(package_dir: str) -> list[str]:
    """What the learner's process may read: Python, its packages, minitorch, the system."""
    paths = set(python_paths(package_dir))
    paths.update(p for p in sys.path if p and os.path.isdir(p) and "site-packages" in p)
    paths.update(["/usr", "/lib", "/lib64", "/lib32", "/bin", "/sbin", "/etc", "/opt"])
    paths.update(["/proc", "/sys", "/dev/null", "/dev/zero", "/dev/urandom", "/dev/random"])
    paths.update(["/dev/shm"])
    return sorted(p for p in paths if os.path.exists(p))


def python_paths(package_dir: str) -> list[str]:
    """Where Python, its packages and minitorch live."""
    import site
    import sysconfig

    paths = {sys.prefix, sys.base_prefix, sys.exec_prefix, package_dir}
    paths.update(p for p in sysconfig.get_paths().values() if p)
    try:
        paths.update(site.getsitepackages())
    except AttributeError:
        pass
    return sorted(p for p in paths if os.path.isdir(p))
