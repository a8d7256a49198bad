"""Chapter 08's finale (minitorch.course.finale): its record, and how a run is compared with it.

Training itself runs in the chapter's notebooks (solutions and exercises, under nbval): the
exercise notebook's finale is the package's run, so it checks the record is current."""

from __future__ import annotations

import dataclasses
import json

import pytest

from minitorch import mine
from minitorch.course import finale
from minitorch.text import load_corpus


def _run(**changes) -> finale.Run:
    run = finale.Run(
        losses=[5.0, 4.0, 3.5],
        validation=[(0, 5.5), (2, 3.6)],
        sample="The end",
        baselines={"unigram": 4.8, "bigram": 3.2},
        seconds=1.0,
        corpus="abc",
    )
    return dataclasses.replace(run, **changes)


def test_the_record_is_for_this_corpus_and_beats_the_bigram_by_a_wide_margin():
    # catches: a record left from another recipe; a finale that ends on noise
    record = finale.recorded()
    assert record is not None, "no record: python -m minitorch.course.finale --record"
    assert len(record.corpus) == len(finale.corpus_digest(load_corpus()))  # (another Python's
    # corpus may differ: package_run then trains the package's pieces, as the last test checks)
    assert len(record.losses) == finale.STEPS
    assert [s for s, _ in record.validation] == list(range(0, finale.STEPS + 1, finale.EVERY))
    assert record.final < record.baselines["bigram"] - 0.2
    assert record.sample.startswith(finale.PROMPT) and len(record.sample) > 200


def test_a_right_run_passes_and_a_wrong_one_stops_naming_the_step():
    # catches: a comparison that lets a wrong run through, or stops a right one
    finale.compare(_run(losses=[5.0 * (1 + 1e-5), 4.0, 3.5]), _run())
    with pytest.raises(mine.Mismatch, match="training loss left the package's at step 2"):
        finale.compare(_run(losses=[5.0, 4.1, 3.5]), _run())
    with pytest.raises(mine.Mismatch, match="validation loss left the package's at step 2"):
        finale.compare(_run(validation=[(0, 5.5), (2, 3.9)]), _run())
    with pytest.raises(mine.Mismatch, match="3 losses"):
        finale.compare(_run(), _run(losses=[5.0]))


def test_the_report_shows_both_samples_and_where_they_part():
    # catches: a finale that shows nobody's sample beside the learner's
    text = finale.report(_run(sample="The cat"), _run(sample="The dog"), "recorded")
    assert "The cat" in text and "The dog" in text and "part at character 4" in text
    assert "token for token" in finale.report(_run(), _run(), "recorded")
    assert "below the bigram" in text


def test_another_corpus_trains_the_packages_run_instead(monkeypatch, tmp_path):
    # catches: comparing with a record made on another Python's documentation
    path = tmp_path / "record.json"
    path.write_text(json.dumps(dataclasses.asdict(_run())), encoding="utf-8")
    monkeypatch.setattr(finale, "RECORD", path)
    trained = _run(corpus="other")
    monkeypatch.setattr(finale, "train", lambda show_progress=True: trained)
    assert finale.package_run("abc") == (_run(), "recorded")
    assert finale.package_run("other") == (trained, "trained now")


def test_with_no_piece_of_yours_it_shows_the_packages_run_alone(capsys, monkeypatch):
    # catches: a finale that trains the package's pieces and calls them the learner's
    shown = []
    monkeypatch.setattr("minitorch.course.at_work.show_figure", shown.append)
    finale.show(None, _run(sample="The package"), "recorded")
    out = capsys.readouterr().out
    assert out.startswith("No piece of yours is finished yet") and "The package" in out
    assert [line.get_label() for line in shown[0].axes[0].lines][1:2] == ["the package's pieces"]
    assert "The package's GPT" in shown[0].axes[0].get_title()
