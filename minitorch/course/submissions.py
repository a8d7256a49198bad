"""Which student each submitted file belongs to, as the platforms lay out their exports.

The layouts, as Instructure's Canvas guides ("How do I download all student submissions
for an assignment?") and Gradescope's help center ("Exporting submissions") describe them;
written from knowledge of those pages and of real exports (the search available when this
was written found neither page's text to quote, only the Canvas guide on gradebook exports
saying an export holds the most recent submission):

- Canvas, "Download Submissions": one flat zip; each file is named
  ``<sortable name, lowercased, letters only>[_LATE]_<Canvas user id>_<submission or
  attachment id>_<the student's file name>``, e.g. ``doejane_LATE_12345_6789012_hw.ipynb``.
  The user id is the ``ID`` column of Canvas's gradebook export; the second number grows
  with each upload, so it orders one student's files.
- Gradescope, "Export Submissions": a folder holding ``submission_metadata.yml`` and one
  folder ``submission_<id>/`` per submission with the files uploaded. The YAML maps each
  ``submission_<id>`` to ``:submitters:`` (``:name:``, ``:sid:``, ``:email:``) and
  ``:created_at:``.

An id is read from the export's own layout only: a Canvas name from a file the download
put at the top of a folder (a student's own file sits inside a Gradescope submission, or
carries Canvas's prefix before the name the student chose), a Gradescope id from a
``submission_<id>`` folder at the top of an export (listed in its metadata when there is
one). Any other file is its own student, named by its path under the folder given.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

CANVAS_FILE = re.compile(
    r"^(?P<name>[^\W_]*?)(?P<late>_LATE)?_(?P<user>\d+)_(?P<sub>\d+)_(?P<rest>.+)$"
)
GRADESCOPE_FOLDER = re.compile(r"^submission_(?P<id>\d+)$")
GRADESCOPE_METADATA = "submission_metadata.yml"
SKIPPED = {GRADESCOPE_METADATA, ".DS_Store", "Thumbs.db", "desktop.ini"}
KEEP_CHOICES = ("latest", "best", "all")
_SAFE_FOLDER = re.compile(r"[a-z0-9][a-z0-9_.@+-]{0,99}")
#: The class's own files in ``--out``, and the names Windows keeps for devices: never a
#: student's folder.
RESERVED = {"gradebook.csv", "gradescope.csv", "canvas.csv", "summary.md", "summary.png"}
RESERVED |= {"con", "prn", "aux", "nul", *(f"{d}{n}" for d in ("com", "lpt") for n in range(10))}


@dataclass
class Submission:
    """One submitted file (or Gradescope submission folder) and whose it is.

    ``key`` is the student's identity across their submissions (``canvas:12345``,
    ``gradescope:jane@uni.edu``, ``file:alice``); ``student`` the row's id, unique in the
    batch; ``ids`` what the export says of them (Canvas user id, SID, e-mail), which the
    roster is matched on, and ``members`` each submitter's of a Gradescope group
    submission; ``order`` sorts one student's submissions oldest first."""

    student: str
    path: Path | None
    key: str = ""
    platform: str = "file"
    ids: dict[str, str] = field(default_factory=dict)
    members: list[dict[str, str]] = field(default_factory=list)
    name: str = ""
    late: bool = False
    order: tuple[Any, ...] = ()
    note: str = ""

    def __post_init__(self) -> None:
        self.key = self.key or f"file:{self.student}"


def folder_name(student: str) -> str:
    """The folder of a student id. An id made of lowercase letters, digits and ``_.@+-``
    is its own folder; any other gets its characters replaced and ``~`` plus a hash of
    the whole id, a name no id of the first kind has: two ids never share a folder, also
    on a case-insensitive file system. The class's own files' names are never a folder."""
    if _SAFE_FOLDER.fullmatch(student) and student not in RESERVED:
        return student
    base = re.sub(r"[^a-z0-9_.@+-]", "_", student.lower()).lstrip(".")[:60] or "_"
    digest = hashlib.sha256(student.encode("utf-8", "surrogatepass")).hexdigest()[:10]
    return f"{base}~{digest}"


def student_id(path: Path) -> str:
    """The id the export gives a file's student: ``doejane_12345`` for Canvas's
    ``doejane_12345_678901_hw.ipynb``, ``submission_123`` for a file in Gradescope's
    ``submission_123/``, else the file's name without its suffix."""
    for parent in path.parents:
        if GRADESCOPE_FOLDER.match(parent.name):
            return parent.name
    found = CANVAS_FILE.match(path.name)
    if found:
        return f"{found['name'].lower()}_{found['user']}"
    return path.stem


def canvas_submission(path: Path) -> Submission | None:
    """A file of Canvas's download, from its name; None for a name Canvas did not make."""
    found = CANVAS_FILE.match(path.name)
    if not found:
        return None
    user = found["user"]
    return Submission(
        f"{found['name'].lower()}_{user}",
        path,
        key=f"canvas:{user}",
        platform="canvas",
        ids={"canvas": user},
        name=found["name"],
        late=bool(found["late"]),
        order=(int(found["sub"]), path.name),
    )


def read_gradescope_metadata(path: Path) -> dict[str, dict[str, Any]]:
    """``submission_metadata.yml``: submission folder -> {submitters, created_at}."""
    try:
        import yaml
    except ImportError as err:  # pragma: no cover - PyYAML comes with Jupyter
        raise ValueError(f"{path}: reading Gradescope's metadata needs PyYAML") from err
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as err:
        raise ValueError(f"{path}: not Gradescope's submission metadata ({err})") from None
    if not isinstance(data, dict):
        raise ValueError(f"{path}: not Gradescope's submission metadata (no mapping)")
    out = {}
    for folder, info in data.items():
        info = info if isinstance(info, dict) else {}
        submitters = [
            {k.lstrip(":"): str(v) for k, v in s.items() if v is not None}
            for s in info.get(":submitters") or []
            if isinstance(s, dict)
        ]
        created = str(info.get(":created_at", ""))
        out[str(folder)] = {"submitters": submitters, "created_at": created}
    return out


def _gradescope_submission(folder: Path, info: dict[str, Any] | None) -> Submission:
    submitters = (info or {}).get("submitters") or [{}]
    first = submitters[0]
    members = [
        {k: s[k].strip() for k in ("sid", "email") if s.get(k, "").strip()} for s in submitters
    ]
    ids = members[0]
    key = ids.get("email") or ids.get("sid") or folder.name
    return Submission(
        folder.name,
        folder,
        key=f"gradescope:{key.lower()}",
        platform="gradescope",
        ids=ids,
        members=members,
        name=first.get("name", ""),
        order=((info or {}).get("created_at", ""), folder.name),
    )


def _visible(path: Path, top: Path) -> bool:
    return not any(
        part.startswith(".") or part == "__MACOSX" for part in path.relative_to(top).parts
    )


def _walk(top: Path) -> tuple[list[Submission], list[Path]]:
    """The Gradescope submissions under ``top`` and the other files (Canvas's or plain)."""
    found: list[Submission] = []
    files: list[Path] = []
    pending = [top]
    while pending:
        folder = pending.pop(0)
        metadata_file = folder / GRADESCOPE_METADATA
        metadata = read_gradescope_metadata(metadata_file) if metadata_file.is_file() else None
        for entry in sorted(folder.iterdir()):
            if not _visible(entry, top) or entry.name in SKIPPED:
                continue
            if entry.is_dir() and not entry.is_symlink():
                is_export = metadata is not None or folder == top
                listed = metadata is None or entry.name in metadata
                if is_export and GRADESCOPE_FOLDER.match(entry.name) and listed:
                    found.append(_gradescope_submission(entry, (metadata or {}).get(entry.name)))
                else:
                    pending.append(entry)
            elif entry.is_file() or entry.is_symlink():
                files.append(entry)
    return found, files


def find_submissions(inputs: Iterable[str | Path]) -> list[Submission]:
    """Every submission under ``inputs`` (files and folders), oldest first per student,
    each with a student id no other submission of another student has: a clash (two
    students whose ids read alike, or a plain file named like a platform's id) gets
    ``~2``, ``~3``, ... and a note saying so."""
    subs: list[Submission] = []
    for given in inputs:
        top = Path(given)
        if top.is_dir():
            gradescope, files = _walk(top)
            subs += gradescope
            for path in files:
                at_top = path.parent == top
                canvas = canvas_submission(path) if at_top else None
                plain = path.relative_to(top).with_suffix("").as_posix()
                subs.append(canvas or Submission(plain, path))
        elif top.exists() or top.is_symlink():
            subs.append(canvas_submission(top) or Submission(top.stem, top))
        else:
            raise FileNotFoundError(f"no such file or folder: {top}")
    return _unique(subs)


def _unique(subs: list[Submission]) -> list[Submission]:
    owner: dict[str, str] = {}  # student id -> key
    seen_files: set[str] = set()
    # a platform's ids first: a plain file named like one never takes it
    for s in sorted(subs, key=lambda s: s.platform == "file"):
        if s.platform == "file":  # two plain files are two students, whatever their names
            if s.key in seen_files:
                s.key = f"{s.key}~{len(seen_files)}"
            seen_files.add(s.key)
        wanted, n = s.student, 1
        while owner.setdefault(s.student, s.key) != s.key:
            n += 1
            s.student = f"{wanted}~{n}"
        if s.student != wanted:
            s.note = (
                f"the id {wanted!r} is another student's too, so this one is {s.student!r} "
                f"(folder {folder_name(s.student)})"
            )
    return subs


def group(subs: Iterable[Submission]) -> dict[str, list[Submission]]:
    """Submissions per student (``key``), oldest first."""
    out: dict[str, list[Submission]] = {}
    for s in subs:
        out.setdefault(s.key, []).append(s)
    for items in out.values():
        items.sort(key=lambda s: s.order)
    return out
