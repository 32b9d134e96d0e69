"""speclab.decode_reports: which decode report lesson 06 shows, and saving one without losing it.

A clone is made in tmp_path: the real prompts, two weights files (only their sha256 matters)
and the shipped full run, its model records pointing at those files, so that each test can
change one thing and see whether the run still counts as the class's own.
"""

import csv
import json
import math
import os
import shutil

import pytest

import speclab.paths
from speclab.decode_reports import (
    CSV_FIELDS,
    is_full_run,
    lesson_report,
    load_report,
    save_decode_report,
    saved_report_path,
    strict_json,
)
from speclab.weights import file_sha256


@pytest.fixture
def full(tmp_path, monkeypatch):
    """`make bench`'s report, of the weights in a clone made in tmp_path."""
    shipped = load_report(speclab.paths.data_dir() / "bench" / "decode.json")
    real_prompts = speclab.paths.prompts_dir()
    monkeypatch.setattr(speclab.paths, "repo_root", lambda: tmp_path)
    shutil.copytree(real_prompts, speclab.paths.prompts_dir())
    weights = speclab.paths.weights_dir()
    weights.mkdir(parents=True)
    models = {}
    for name in ("target", "draft"):
        (weights / f"{name}.npz").write_bytes(f"the {name} model".encode())
        models[name] = shipped["models"][name] | {"sha256": file_sha256(weights / f"{name}.npz")}
    return shipped | {"models": models}


def with_settings(report: dict, **change) -> dict:
    return report | {"settings": report["settings"] | change}


def test_the_clones_full_run_is_the_lesson_report(full):
    """The control for the tests below: each change they make is the only reason it is not."""
    assert is_full_run(full) and lesson_report(full)


@pytest.mark.parametrize(
    "change",
    [{"most_new_tokens": 64}, {"k_max": 4}, {"k_max": 16}, {"repeats": 6}],
)
def test_a_run_with_other_budgets_or_fewer_repeats_is_not_full(full, change):
    assert not is_full_run(with_settings(full, **change))


def test_more_repeats_than_make_bench_still_make_a_full_run(full):
    assert is_full_run(with_settings(full, repeats=full["settings"]["repeats"] + 1))


def test_a_run_of_the_prompts_before_an_edit_is_not_full(full):
    """is_full_run compares with data/prompts/ as it is now: one budget changed there, and the
    run made before no longer measured what `make bench` measures."""
    prompts = speclab.paths.prompts_dir() / "04_free_text.toml"
    text = prompts.read_text(encoding="utf-8")
    assert text.count("max_new_tokens = 128") == 1
    prompts.write_text(text.replace("max_new_tokens = 128", "max_new_tokens = 127"), "utf-8")
    assert not is_full_run(full)


def test_a_prompt_file_being_edited_makes_no_run_full_and_keeps_any_decode_json(full, tmp_path):
    """No telling whether the decode.json there is a full run: it is kept, the new run put
    beside it; where there is none yet, the run takes the usual name."""
    (speclab.paths.prompts_dir() / "05_half_typed.toml").write_text('name = "', encoding="utf-8")
    assert not is_full_run(full)
    out = tmp_path / "bench"
    assert save_decode_report(full, out)[0].name == "decode.json"
    assert save_decode_report(full, out)[0].name == "decode-partial.json"


def test_a_run_of_another_draft_model_is_not_the_lesson_report(full):
    other = full["models"] | {"draft": full["models"]["draft"] | {"sha256": "0" * 64}}
    assert is_full_run(full | {"models": other}) and not lesson_report(full | {"models": other})


def test_a_clone_without_its_weights_files_has_no_lesson_report(full):
    (speclab.paths.weights_dir() / "draft.npz").unlink()  # not downloaded, or being replaced
    assert not lesson_report(full)


def test_a_partial_run_replaces_a_partial_report(full, tmp_path):
    """Only a lesson report is kept from being replaced: a --quick run after another
    --quick run takes the usual names, and no decode-partial pair is made."""
    out = tmp_path / "bench"
    quick = with_settings(full, quick=True)
    save_decode_report(quick | {"seconds": 1.0}, out)
    json_path, csv_path = save_decode_report(quick | {"seconds": 2.0}, out)
    assert (json_path.name, csv_path.name) == ("decode.json", "decode.csv")
    assert sorted(path.name for path in out.iterdir()) == ["decode.csv", "decode.json"]
    assert load_report(json_path)["seconds"] == 2.0


def test_the_report_folder_is_made_with_its_parents(full, tmp_path):
    json_path, csv_path = save_decode_report(full, tmp_path / "a" / "b" / "bench")
    assert json_path.parent == csv_path.parent == tmp_path / "a" / "b" / "bench"


def test_the_csv_has_one_row_per_result_with_six_significant_figures(full, tmp_path):
    """decode.json keeps every digit; decode.csv is for reading, its floats as %.6g writes
    them (2/3 is 0.666667, 1234567.0 is 1.23457e+06), whole numbers and words as they are."""
    row = dict.fromkeys(CSV_FIELDS, 2 / 3) | {"scenario": "copy-heavy", "method": "lookup k=2"}
    row |= {"k": 2, "adaptive": False, "runs": 28, "plain_step_ms": 1234567.0}
    json_path, csv_path = save_decode_report(full | {"results": [row]}, tmp_path / "bench")
    with csv_path.open(encoding="utf-8", newline="") as handle:
        (saved,) = list(csv.DictReader(handle))
    assert list(saved) == CSV_FIELDS
    assert saved["speedup"] == saved["verify_ratio"] == "0.666667"
    assert saved["plain_step_ms"] == "1.23457e+06"
    assert (saved["k"], saved["adaptive"], saved["runs"]) == ("2", "False", "28")
    text = json_path.read_text(encoding="utf-8")
    assert text.endswith("}\n") and json.loads(text)["results"][0]["speedup"] == 2 / 3


def test_strict_json_makes_every_number_that_is_not_finite_null_in_lists_and_tuples_too():
    report = {"a": (1.0, math.nan), "b": [{"c": -math.inf}], "d": math.inf, "e": "nan", "f": 0}
    expected = {"a": [1.0, None], "b": [{"c": None}], "d": None, "e": "nan", "f": 0}
    assert strict_json(report) == expected


def test_a_cut_off_report_is_named_with_where_its_json_broke(tmp_path):
    (tmp_path / "decode.json").write_text('{"benchmark": "dec', encoding="utf-8")
    with pytest.raises(ValueError, match=r"decode.json is not a readable JSON file \(.*line 1"):
        load_report(tmp_path / "decode.json")


def test_a_decode_report_without_results_or_settings_is_read_but_never_shown(full):
    """A report's name and nothing else (a tool's stub, a run stopped while writing its
    parts): load_report reads it; saved_report_path passes over it, without a KeyError."""
    own = speclab.paths.bench_dir() / "decode.json"
    own.parent.mkdir(parents=True)
    own.write_text('{"benchmark": "decode"}', encoding="utf-8")
    assert load_report(own) == {"benchmark": "decode"}
    shipped = speclab.paths.data_dir() / "bench" / "decode.json"
    shipped.parent.mkdir(parents=True)
    shipped.write_text(json.dumps(strict_json(full)), encoding="utf-8")
    assert saved_report_path() == shipped


def test_a_saved_report_keeps_its_zeros_and_falses(full, tmp_path):
    """Only null (a NaN when saved) is read back as NaN."""
    json_path, _ = save_decode_report(full, tmp_path / "bench")
    greedy = load_report(json_path)["results"][0]
    assert greedy["adaptive"] is False and greedy["rounds_with_drafts"] == 0.0
    assert math.isnan(greedy["alpha_leviathan"])


def test_a_decode_json_whose_results_are_not_rows_is_refused_and_passed_over(full):
    own = speclab.paths.bench_dir() / "decode.json"
    own.parent.mkdir(parents=True)
    own.write_text('{"benchmark": "decode", "results": [1]}', encoding="utf-8")
    shipped = speclab.paths.data_dir() / "bench" / "decode.json"
    shipped.parent.mkdir(parents=True)
    shipped.write_text(json.dumps(strict_json(full)), encoding="utf-8")
    assert saved_report_path() == shipped
    for results in ("[1]", '{"k": 1}', "5", '[{"k": 1}, null]'):
        own.write_text(f'{{"benchmark": "decode", "results": {results}}}', encoding="utf-8")
        with pytest.raises(ValueError, match="not a `speclab bench decode` report"):
            load_report(own)
    too_long = "9" * 5000  # json's own ValueError, not a JSONDecodeError: it named no file
    own.write_text(f'{{"benchmark": "decode", "results": [], "x": {too_long}}}', encoding="utf-8")
    with pytest.raises(ValueError, match=r"is not a readable JSON file \(Exceeds[^;]*\)$"):
        load_report(own)
    deep = "[" * 100_000 + "]" * 100_000  # deeper than json.loads can follow
    own.write_text(f'{{"benchmark": "decode", "results": {deep}}}', encoding="utf-8")
    with pytest.raises(ValueError, match="is not a readable JSON file"):
        load_report(own)
    assert saved_report_path() == shipped


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no named pipes")
@pytest.mark.timeout(10)  # reading the pipe would wait for a writer for ever
def test_a_decode_json_that_is_a_pipe_is_refused_unread(tmp_path):
    os.mkfifo(tmp_path / "decode.json")
    with pytest.raises(ValueError, match="is not a regular file"):
        load_report(tmp_path / "decode.json")
