"""Which `speclab bench decode` report lesson 06 shows, and saving one without losing it.

`save_decode_report` writes decode.json and decode.csv together (`speclab.report_files`);
a run lesson 06 would not show as the class's own (a `--quick` or partial run, or one of other
weights: `lesson_report`) goes beside a full one as decode-partial.json and .csv.
`saved_report_path` picks what lesson 06 reads: the learner's own full run in build/bench/,
else the report shipped in data/bench/.
"""

import json
import math
from pathlib import Path

from speclab.bench_decode import DRAFTERS, K_VALUES, Settings
from speclab.report_files import csv_text, write_together

CSV_FIELDS = [
    "scenario", "method", "drafter", "k", "adaptive", "speedup", "speedup_q25", "speedup_q75",
    "predicted_leviathan", "predicted_with_costs", "predicted_from_rounds",
    "alpha_leviathan", "accepted_over_drafted", "mean_accepted_length",
    "tokens_per_target_forward", "rounds_with_drafts", "draft_cost_per_token",
    "draft_cost_per_round", "verify_ratio", "plain_step_ms", "runs", "tokens", "rounds",
]  # fmt: skip


def save_decode_report(report: dict, out: Path) -> tuple[Path, Path]:
    """decode.json (everything) and decode.csv (one row per scenario and method), together:
    lesson 06 reads both, so a failure leaves the previous pair, never a new JSON beside
    an old CSV. A run lesson 06 would not show (`lesson_report`: partial, or of other
    weights) goes to decode-partial.json and .csv instead where decode.json holds one it
    would: a quick look never replaces the class's `make bench`."""
    out.mkdir(parents=True, exist_ok=True)
    name, kept = "decode", out / "decode.json"
    if kept.exists() and not lesson_report(report):
        # data/prompts/ unreadable (a scenario being edited): no telling, so keep decode.json
        if _shipped_prompts_sha256() is None or _is_lesson_report_file(kept):
            name = "decode-partial"
    json_path, csv_path = out / f"{name}.json", out / f"{name}.csv"
    rows = [{key: _csv_value(row[key]) for key in CSV_FIELDS} for row in report["results"]]
    text = json.dumps(strict_json(report), indent=1, allow_nan=False) + "\n"
    files = {json_path: text, csv_path: csv_text(rows, CSV_FIELDS)}
    write_together(files)
    return json_path, csv_path


def strict_json(report):
    """The report with each number that is not finite (NaN: the alpha of a run that drafted
    nothing) as None, JSON's null: bare NaN is not JSON, and a browser's or jq's parser
    refused the file. `load_report` turns the nulls of the results back into NaN (an infinity
    too: none is expected there); elsewhere null also means "not set", as in settings."""
    if isinstance(report, dict):  # anywhere: a NaN must not stop the save of a whole run
        return {key: strict_json(value) for key, value in report.items()}
    if isinstance(report, list | tuple):
        return [strict_json(value) for value in report]
    return None if isinstance(report, float) and not math.isfinite(report) else report


def _csv_value(value):
    return f"{value:.6g}" if isinstance(value, float) else value


def saved_report_path() -> Path | None:
    """The full decode report lesson 06 shows, if the clone has one.

    A learner's own full run (`make bench` writes build/bench/decode.json) comes first, so a
    class sees its own machine; a `--quick` or partial run there does not count (one
    scenario, drafter or k, other prompts: `is_full_run`), nor does a copy of the
    shipped report, nor a run of other weights than the shipped ones (made before the clone
    was updated to new weights: its figures describe a model the lessons no longer use).
    Otherwise the report shipped in data/bench/, measured on a quiet machine.
    """
    from speclab.paths import bench_dir, data_dir

    own, shipped = bench_dir() / "decode.json", data_dir() / "bench" / "decode.json"
    if own.is_file() and _is_lesson_report_file(own) and not _same_bytes(own, shipped):
        return own
    return shipped if shipped.is_file() else None


def _timed_the_shipped_weights(report: dict) -> bool:
    """Whether a report timed the weights in data/weights/ (by the sha256 in its record)."""
    from speclab.paths import weights_dir
    from speclab.weights import file_sha256

    try:
        models = report["models"]
        timed = {name: record["sha256"] for name, record in models.items() if record}
        return "target" in timed and all(
            sha == file_sha256(weights_dir() / f"{name}.npz") for name, sha in timed.items()
        )
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return False


def _same_bytes(path: Path, other: Path) -> bool:
    try:
        return other.is_file() and path.read_bytes() == other.read_bytes()
    except OSError:
        return False


def is_full_run(report: dict) -> bool:
    """Whether a report measured what `make bench` measures: every drafter and k, every
    shipped prompt with its own budget, not --quick; as many repeats or more, on one BLAS
    thread, the target in float64 (the model the lessons describe). Lesson 06 reads every
    part of one."""
    settings, default = report["settings"], Settings()
    whole = (
        not settings["quick"]
        and set(settings["drafters"]) == set(DRAFTERS)
        and tuple(settings["k_values"]) == K_VALUES
        and settings["prompts_per_scenario"] is None
        and settings["max_new_tokens"] is None
        and settings["most_new_tokens"] is None
        and settings["k_max"] == default.k_max
        and settings["repeats"] >= default.repeats  # its quartiles are what lesson 06 shows
        and settings["blas_threads"] == default.blas_threads
        and report["models"]["target"]["dtype"] == "float64"
    )
    return whole and report["prompts"]["sha256"] == _shipped_prompts_sha256()


def _shipped_prompts_sha256() -> str | None:
    """The hash of data/prompts/ as it is now; None if a file there cannot be read (a
    scenario being edited): then no run counts as full, and none replaces decode.json."""
    from speclab.scenarios import load_scenarios, prompts_sha256

    try:
        return prompts_sha256(load_scenarios())
    except (OSError, ValueError):
        return None


def lesson_report(report: dict) -> bool:
    """A report lesson 06 can show as the class's own: a full run of the shipped weights."""
    return is_full_run(report) and _timed_the_shipped_weights(report)


def _is_lesson_report_file(path: Path) -> bool:
    try:
        return lesson_report(load_report(path))
    except (OSError, ValueError, KeyError, TypeError):  # unreadable, or not a decode report
        return False


def load_report(path) -> dict:
    """A saved decode.json (for the lesson: a full run made earlier)."""
    if Path(path).exists() and not Path(path).is_file():  # a pipe would wait for a writer
        raise ValueError(f"{path} is not a regular file (a folder, a pipe or a device)")
    try:
        report = json.loads(Path(path).read_text(encoding="utf-8"))
    except (ValueError, RecursionError) as error:  # not JSON, not UTF-8: these name no file
        # RecursionError: nested deeper than json.loads can follow; a ValueError of json's
        # own: an integer of more than 4,300 digits ("...; use sys.set_int_max_str_digits()")
        raise ValueError(
            f"{path} is not a readable JSON file ({str(error).split(';')[0]})"
        ) from None
    if not isinstance(report, dict) or report.get("benchmark") != "decode":
        raise ValueError(f"{path} is not a `speclab bench decode` report")
    rows = report.get("results", [])
    if not isinstance(rows, list) or not all(isinstance(row, dict) for row in rows):
        raise ValueError(
            f"{path} is not a `speclab bench decode` report (its results are not rows)"
        )
    for row in rows:  # null: a number undefined for that run (strict_json)
        row.update({key: math.nan for key, value in row.items() if value is None})
    return report
