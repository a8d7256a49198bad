"""The course in a real browser: Chromium, driven by Playwright, on a headless JupyterLab.

What a learner does and sees: opening any course notebook leaves it unmodified (JupyterLab
would otherwise mark it changed and autosave would rewrite it), every lesson runs top to
bottom without an error output, and ``check()`` renders a pass and a fail in the
exercise notebooks. The lab serves a temporary copy of chapters/, solutions/ and
exercises/, so nothing committed can change; each copy is compared with the committed
file afterwards.

Needs Debian's Chromium (``apt-get install chromium``; ``.ci/run`` installs it) and
Playwright from PyPI (the ``test`` extra). Playwright cannot download its own browsers
here, so it launches the system one by path. Marked ``browser``: skip with
``-m "not browser"``.
"""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

import pytest
from lab_server import running_lab

from minitorch.course.manifest import CHAPTERS, ROOT

pytestmark = pytest.mark.browser

# /usr/bin/chromium is Debian's wrapper script; Playwright needs the binary itself.
CHROMIUM_CANDIDATES = ("/usr/lib/chromium/chromium", "/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--no-sandbox",  # the suite runs as root in CI
    "--disable-gpu",
    "--disable-dev-shm-usage",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
FOLDERS = ("chapters", "solutions", "exercises")
# The notebooks opened and saved in the lab: every lesson and every solution notebook (each
# has outputs of its own kinds: pictures, tables, chapter 08's progress widgets) and the
# first exercise notebook (generated without outputs: one shows what the lab does to all;
# every notebook's metadata is also checked without a browser, tests/test_notebook_metadata).
NOTEBOOKS = [
    *(
        f"{folder}/{p.name}"
        for folder in FOLDERS[:2]
        for p in sorted(ROOT.glob(f"{folder}/*.ipynb"))
    ),
    f"exercises/{CHAPTERS[0].exercise_notebook.name}",
]
# The lesson run top to bottom in the lab: the first, which `make lab` opens. nbval runs
# every lesson in the same kind of kernel (conftest.py); running all of them here again took
# four minutes of the suite and found nothing nbval had not.
LESSONS = [f"chapters/{CHAPTERS[0].lesson.name}"]
LESSON_SECONDS = 240  # run all cells of one lesson (about 20 s on a 2-core machine)

# Lab settings: no autosave (the test saves explicitly, which autosave does only for a
# notebook JupyterLab has marked modified), no news pop-up, no update check.
SETTINGS = {
    "@jupyterlab/docmanager-extension/plugin.jupyterlab-settings": '{"autosave": false}',
    "@jupyterlab/apputils-extension/notification.jupyterlab-settings": (
        '{"fetchNews": "false", "checkForUpdates": false}'
    ),
}


def _chromium() -> str:
    for path in CHROMIUM_CANDIDATES:
        if Path(path).is_file():
            return path
    where = " or ".join(CHROMIUM_CANDIDATES)
    pytest.skip(f"Chromium is not installed ({where}): apt-get install chromium")


@pytest.fixture(scope="module")
def course(tmp_path_factory) -> Path:
    """A copy of the course notebooks for the lab to serve (and the test to change)."""
    root = tmp_path_factory.mktemp("course")
    for folder in FOLDERS:
        shutil.copytree(ROOT / folder, root / folder, ignore=shutil.ignore_patterns(".*"))
    return root


@pytest.fixture(scope="module")
def page(course, tmp_path_factory):
    sync_api = pytest.importorskip(
        "playwright.sync_api", reason="playwright is not installed (pip install playwright)"
    )
    chromium = _chromium()
    tmp = tmp_path_factory.mktemp("lab")
    settings = tmp / "settings"
    for name, text in SETTINGS.items():
        (settings / name).parent.mkdir(parents=True, exist_ok=True)
        (settings / name).write_text(text)
    jupyter = Path(sys.executable).with_name("jupyter")
    command = (
        f"{jupyter} lab --ServerApp.root_dir={course} --LabApp.expose_app_in_browser=True"
        f" --LabApp.user_settings_dir={settings} --LabApp.workspaces_dir={tmp / 'workspaces'}"
    ) + (" --allow-root" if os.geteuid() == 0 else "")
    with running_lab(command, tmp, cwd=course) as lab, sync_api.sync_playwright() as p:
        # launch() gives the browser a fresh, temporary profile (user data dir).
        browser = p.chromium.launch(executable_path=chromium, headless=True, args=CHROMIUM_ARGS)
        try:
            page = browser.new_page(viewport={"width": 1400, "height": 900})
            page.set_default_timeout(60_000)
            page.goto(f"{lab.base}/lab?reset&token={lab.token}")
            page.wait_for_function("window.jupyterapp && window.jupyterapp.shell")
            page.evaluate("window.jupyterapp.restored")
            page.evaluate(JS_HELPERS)
            yield page
        finally:
            browser.close()


# Helpers installed in the page: open a notebook and wait for its kernel; run cells; read
# what the outputs show. They use the commands JupyterLab's menus and keys use.
JS_HELPERS = """
() => {
  const app = window.jupyterapp;
  const panels = {};
  const sleep = ms => new Promise(r => setTimeout(r, ms));
  window.course = {
    async open(path) {
      const panel = await app.commands.execute('docmanager:open', {path, factory: 'Notebook'});
      await panel.context.ready;
      await panel.sessionContext.ready;
      const kernel = panel.sessionContext.session.kernel;
      await kernel.info;   // JupyterLab writes language_info from this reply
      await kernel.spec;   // and the kernelspec from this
      await sleep(300);
      panels[path] = panel;
      return {dirty: panel.context.model.dirty, kernel: kernel.name};
    },
    async save(path) {
      await panels[path].context.save();
    },
    async runAll(path, seconds) {
      const panel = panels[path];
      app.shell.activateById(panel.id);
      const timeout = sleep(seconds * 1000).then(() => {
        throw new Error(`${path}: still running after ${seconds} s`);
      });
      await Promise.race([app.commands.execute('notebook:run-all-cells'), timeout]);
      return Promise.race([this.idle(path), timeout]);
    },
    async run(path, index) {
      const panel = panels[path];
      app.shell.activateById(panel.id);
      panel.content.activeCellIndex = index;
      await app.commands.execute('notebook:run-cell');
      return this.idle(path);
    },
    async idle(path) {
      const session = panels[path].sessionContext;
      while (session.session.kernel.status !== 'idle') await sleep(100);
    },
    setSource(path, index, source) {
      panels[path].content.widgets[index].model.sharedModel.setSource(source);
    },
    problems(path) {
      // Error outputs and stderr, except in cells tagged raises-exception.
      const found = [];
      const cells = panels[path].content.widgets;
      cells.forEach((cell, i) => {
        if (cell.model.type !== 'code') return;
        if ((cell.model.getMetadata('tags') || []).includes('raises-exception')) return;
        if (cell.model.executionCount === null) found.push(`cell ${i}: not run`);
        for (let k = 0; k < cell.model.outputs.length; k++) {
          const out = cell.model.outputs.get(k).toJSON();
          if (out.output_type === 'error') found.push(`cell ${i}: ${out.ename}: ${out.evalue}`);
          if (out.output_type === 'stream' && out.name === 'stderr')
            found.push(`cell ${i} stderr: ${[].concat(out.text).join('').slice(0, 300)}`);
        }
      });
      const shown = panels[path].node.querySelectorAll(
        '[data-mime-type="application/vnd.jupyter.stderr"], '
        + '[data-mime-type="application/vnd.jupyter.error"]');
      if (shown.length) found.push(`${shown.length} error outputs on the page`);
      return found;
    },
    rendered(path, index) {
      const node = panels[path].content.widgets[index].node.querySelector('.jp-OutputArea-output');
      return node ? {text: node.innerText, html: node.innerHTML} : null;
    },
    async close(path) {
      const panel = panels[path];
      await panel.sessionContext.shutdown();
      panel.context.model.dirty = false;  // discard what running changed; nothing is saved
      panel.dispose();
      delete panels[path];
    },
  };
}
"""


def _committed(path: str) -> bytes:
    return (ROOT / path).read_bytes()


#: Notebooks opened, saved and closed at once: their kernels' starts and shutdowns overlap.
AT_ONCE = 6


def test_opening_a_notebook_changes_nothing(page, course):
    """Opening marks no notebook modified, and saving one writes the committed bytes."""
    changed = []
    for start in range(0, len(NOTEBOOKS), AT_ONCE):
        paths = NOTEBOOKS[start : start + AT_ONCE]
        states = page.evaluate("paths => Promise.all(paths.map(p => course.open(p)))", paths)
        page.evaluate("paths => Promise.all(paths.map(p => course.save(p)))", paths)
        for path, state in zip(paths, states, strict=True):
            assert state["kernel"] == "python3"
            if state["dirty"]:
                changed.append(f"{path}: JupyterLab marks it modified on opening")
            if (course / path).read_bytes() != _committed(path):
                changed.append(f"{path}: saving it in JupyterLab changes the file")
        page.evaluate("paths => Promise.all(paths.map(p => course.close(p)))", paths)
    assert not changed, "\n".join(changed) + "\nrun `make notebooks` (minitorch.course.notebook)"


@pytest.mark.parametrize("path", LESSONS)
def test_lesson_runs_in_the_lab_without_errors(page, course, path):
    page.evaluate("path => course.open(path)", path)
    page.evaluate("([path, s]) => course.runAll(path, s)", [path, LESSON_SECONDS])
    problems = page.evaluate("path => course.problems(path)", path)
    page.evaluate("path => course.close(path)", path)
    assert not problems, f"{path} in JupyterLab:\n" + "\n".join(problems)
    assert (course / path).read_bytes() == _committed(path), f"running {path} changed the file"


def _check_cell(path: str, exercise_id: str) -> tuple[int, int]:
    """(index of the cell that defines the exercise, index of its check cell)."""
    import nbformat

    cells = nbformat.read(ROOT / path, as_version=4).cells
    check = next(i for i, c in enumerate(cells) if c.source.strip() == f'check("{exercise_id}")')
    return check - 1, check


def test_check_renders_a_pass_and_a_fail(page, course):
    chapter = CHAPTERS[0]
    exercise_id = chapter.exercises[0].id
    solution = f"solutions/{chapter.solution.name}"
    blank = f"exercises/{chapter.exercise_notebook.name}"
    define, check = _check_cell(blank, exercise_id)
    assert _check_cell(solution, exercise_id) == (define, check)

    page.evaluate("path => course.open(path)", solution)
    for index in range(check + 1):
        page.evaluate("([path, i]) => course.run(path, i)", [solution, index])
    passed = page.evaluate("([path, i]) => course.rendered(path, i)", [solution, check])
    page.evaluate("path => course.close(path)", solution)

    page.evaluate("path => course.open(path)", blank)
    for index in range(check + 1):
        page.evaluate("([path, i]) => course.run(path, i)", [blank, index])
    blank_shown = page.evaluate("([path, i]) => course.rendered(path, i)", [blank, check])
    wrong = "def contiguous_strides(shape):\n    return tuple(1 for _ in shape)\n"
    page.evaluate("([path, i, s]) => course.setSource(path, i, s)", [blank, define, wrong])
    for index in (define, check):
        page.evaluate("([path, i]) => course.run(path, i)", [blank, index])
    failed = page.evaluate("([path, i]) => course.rendered(path, i)", [blank, check])
    page.evaluate("path => course.close(path)", blank)

    assert passed and f"{exercise_id}" in passed["text"] and "passed" in passed["text"], passed
    assert "#1a7f37" in passed["html"]  # green
    assert blank_shown and "not implemented yet" in blank_shown["text"], blank_shown
    assert failed and "failed" in failed["text"] and "#cf222e" in failed["html"], failed  # red
    for path in (solution, blank):
        assert (course / path).read_bytes() == _committed(path), f"checking changed {path}"


def test_hint_shows_the_next_level_and_the_saved_notebook_records_it(page, course):
    """hint() in the lab: each run shows the next level, and saving keeps the record (the
    output's metadata) that the grader reads, all levels shown included."""
    import json

    from minitorch.course import hints

    chapter = CHAPTERS[0]
    exercise_id = chapter.exercises[0].id
    blank = f"exercises/{chapter.exercise_notebook.name}"
    _, check = _check_cell(blank, exercise_id)
    page.evaluate("path => course.open(path)", blank)
    for index in range(check):  # the imports and the cells before the exercise
        page.evaluate("([path, i]) => course.run(path, i)", [blank, index])
    source = f'hint("{exercise_id}")'
    page.evaluate("([path, i, s]) => course.setSource(path, i, s)", [blank, check, source])
    shown = []
    for _ in range(2):
        page.evaluate("([path, i]) => course.run(path, i)", [blank, check])
        shown.append(page.evaluate("([path, i]) => course.rendered(path, i)", [blank, check]))
    page.evaluate("path => course.save(path)", blank)
    saved = json.loads((course / blank).read_text(encoding="utf-8"))
    page.evaluate("path => course.close(path)", blank)
    (course / blank).write_bytes(_committed(blank))  # the other tests compare the copy

    assert shown[0] and f"Hint 1 of 3 for {exercise_id}" in shown[0]["text"], shown[0]
    assert shown[1] and f"Hint 2 of 3 for {exercise_id}" in shown[1]["text"], shown[1]
    assert "<strong>" in shown[1]["html"]  # rendered as Markdown, not as plain text
    assert hints.opened_in(saved) == {exercise_id: [1, 2]}
