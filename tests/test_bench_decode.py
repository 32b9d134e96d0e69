"""The decode benchmark on tiny random models: correctness of what it reports, never speed."""

import copy
import csv
import json
import math
import shutil
from dataclasses import replace

import numpy as np
import pytest

from speclab import bench_decode, decode_reports
from speclab.bench_decode import (
    Method,
    Settings,
    alpha_estimate,
    decode_report,
    loop_goal,
    position_counts,
    run_decodes,
)
from speclab.cli import main
from speclab.counting import simulate_rounds
from speclab.decode_reports import load_report, save_decode_report
from speclab.decoding import Round
from speclab.gpt import GPTConfig
from speclab.scenarios import load_scenarios
from speclab.weights import random_model, save

SCENARIO = """name = "{name}"
description = "test prompts"
max_new_tokens = 10

[[prompts]]
id = "repeat"
source = "written for the project"
text = "abcabcabcabcabc"

[[prompts]]
id = "plain"
source = "written for the project"
text = "hello world"
"""
TINY = Settings(repeats=2, k_values=(1, 3), k_max=3, seed=1)


@pytest.fixture(scope="module")
def models():
    target = random_model(GPTConfig(2, 2, 16, 48), np.random.default_rng(0))
    draft = random_model(GPTConfig(1, 2, 8, 48), np.random.default_rng(1))
    return target, draft


@pytest.fixture
def prompts(tmp_path):
    folder = tmp_path / "prompts"
    folder.mkdir()
    for i, name in enumerate(["copy-heavy", "free text"]):
        (folder / f"0{i}.toml").write_text(SCENARIO.format(name=name), encoding="utf-8")
    return folder


@pytest.fixture
def report(models, prompts):
    target, draft = models
    return decode_report(target, draft, load_scenarios(prompts), TINY)


def test_the_loop_goal_holds_at_its_bound_and_fails_past_it():
    """The goal reads "<= 0.3 of the output": a share of exactly 0.3 meets it."""
    goal = "free text output is not a loop"
    assert loop_goal({"free text": {"loop": 0.3}})[goal]["met"] is True
    assert loop_goal({"free text": {"loop": 0.3001}})[goal]["met"] is False
    assert loop_goal({"free text": {"loop": 0.5}}, most=0.5)[goal]["goal"].startswith("<= 0.5")
    assert loop_goal({"copy-heavy": {"loop": 0.9}}) == {}  # no free text, no goal


def test_methods_and_labels():
    labels = [m.label for m in TINY.methods()]
    assert labels == [
        "greedy", "lookup k=1", "lookup k=3", "lookup adaptive",
        "model k=1", "model k=3", "model adaptive",
    ]  # fmt: skip
    assert Method("lookup", 8, adaptive=True).label == "lookup adaptive"


def test_summarise_method_on_runs_built_by_hand():
    """Known seconds and rounds in, the row's figures worked out by hand."""
    from speclab.bench_decode import Run, summarise_method
    from speclab.decoding import DecodeResult

    def run(method, repeat, seconds, rounds):
        tokens = [t for r in rounds for t in r.new_tokens]
        result = DecodeResult([1], tokens, rounds, target_forwards=len(rounds))
        return Run("s", "p", method, repeat, seconds, result)

    plain = [Round([], 0, 7, verify_seconds=0.1) for _ in range(6)]  # a plain step: 0.1 s
    greedy = [run(Method(None), 0, 2.0, plain), run(Method(None), 1, 3.0, plain)]
    lookup = Method("lookup", 2)
    rounds = [  # accepted 2, 1, 0, 2 of 2 drafts: 5 kept, 2 rejections
        Round([5, 6], accepted, 9, draft_seconds=0.02, verify_seconds=0.12)
        for accepted in (2, 1, 0, 2)
    ]
    runs = [run(lookup, 0, 1.0, rounds), run(lookup, 1, 2.0, rounds)]
    row = summarise_method(runs, greedy, lookup, k_max=3)
    assert row["speedups"] == [2.0, 1.5]  # greedy seconds / method seconds, repeat by repeat
    assert row["speedup"] == pytest.approx(1.75)  # their median
    assert row["alpha_leviathan"] == pytest.approx(5 / 7)  # 5 kept / (5 kept + 2 rejections)
    assert row["accepted_over_drafted"] == pytest.approx(5 / 8)
    assert row["tokens"] == 2 * 9 and row["mean_accepted_length"] == pytest.approx(9 / 4)
    assert row["draft_cost_per_token"] == pytest.approx(0.02 / 2 / 0.1)  # c = 0.1
    assert row["verify_ratio"] == pytest.approx(0.12 / 0.1)
    # Leviathan: (1 - a^3) / ((1 - a)(2c + 1)) with a = 5/7: (218/343) / (2/7) / 1.2
    assert row["predicted_leviathan"] == pytest.approx(218 / 343 / (2 / 7) / 1.2)
    # per run: position 1 reached in 4 rounds, kept in 3; position 2 reached in 3, kept in 2
    assert row["position_reached"] == [8, 6, 0] and row["position_accepted"] == [6, 4, 0]


def test_report_is_complete_and_consistent(report):
    methods = TINY.methods()
    assert len(report["results"]) == 2 * len(methods)
    check = report["equal_to_greedy"]
    # every speculative run, warm-up included: 2 scenarios x 2 prompts x 6 methods x 3 rounds
    assert check["all_equal"] and check["speculative_runs_checked"] == 2 * 2 * 6 * 3
    for row in report["results"]:
        assert row["runs"] == 2 * TINY.repeats  # two prompts per scenario, every kept repeat
        assert row["tokens"] == 2 * 2 * 10
        assert len(row["speedups"]) == TINY.repeats and row["speedup"] > 0
        assert row["speedup_q25"] <= row["speedup"] <= row["speedup_q75"]
        if row["drafter"] == "none":
            assert row["speedup"] == 1.0 and row["tokens_per_target_forward"] == 1.0
            continue
        assert row["tokens_per_target_forward"] == pytest.approx(row["mean_accepted_length"])
        reached, accepted = row["position_reached"], row["position_accepted"]
        assert len(reached) == TINY.k_max
        assert all(0 <= a <= r for a, r in zip(accepted, reached, strict=True))
        assert all(later <= earlier for earlier, later in zip(reached, reached[1:], strict=False))
        if not row["adaptive"]:
            assert all(r == 0 for r in reached[row["k"] :])  # nothing beyond k was drafted
        alpha = row["alpha_leviathan"]
        if np.isfinite(alpha):
            assert 0 <= alpha <= 1
            if not row["adaptive"]:
                assert np.isfinite(row["predicted_leviathan"])
    for name in ("copy-heavy", "free text"):
        shares = report["provenance"][name]
        assert shares["prompt"] + shares["loop"] + shares["new"] == pytest.approx(1.0)
        assert shares["tokens"] == 20
        assert set(report["adaptive"][name]) == {"lookup", "model"}
        for summary in report["adaptive"][name].values():
            assert sum(summary["modes"].values()) == summary["rounds"] > 0
            # the picture's run: one prompt's rounds, which add up to its 10 new tokens (but
            # a last round with a single token left asks the policy nothing)
            assert summary["trace_prompt"] in {"repeat", "plain"}
            assert sum(r["accepted"] + 1 for r in summary["trace"]) in (9, 10)
    assert set(report["provenance_per_prompt"]) == set(report["outputs"])
    assert set(report["goals"]) >= {
        bench_decode.COPY_GOAL, "copy-heavy default speedup", "free text default speedup",
        "free text output is not a loop",
    }  # fmt: skip


def test_record_names_models_prompts_and_machine(report):
    assert report["prompts"]["sha256"] and len(report["prompts"]["scenarios"]) == 2
    assert report["models"]["target"]["config"]["n_layer"] == 2
    assert report["models"]["draft"]["config"]["n_layer"] == 1
    machine = report["machine"]
    for key in ("speclab", "python", "numpy", "cpu", "blas", "load_average_before"):
        assert key in machine
    # timed with one BLAS thread (Settings.blas_threads), and the record says so
    assert report["settings"]["blas_threads"] == 1
    assert all(library["threads"] == 1 for library in machine["blas"])
    assert list(report["settings"]["k_values"]) == [1, 3]
    assert "bytes" in report["tokenizer"]
    assert set(report["outputs"]) == {
        "copy-heavy / repeat", "copy-heavy / plain", "free text / repeat", "free text / plain",
    }  # fmt: skip


def test_save_and_load(report, tmp_path):
    json_path, csv_path = save_decode_report(report, tmp_path / "out")
    again = load_report(json_path)
    assert again["equal_to_greedy"]["all_equal"]
    with csv_path.open(encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    assert len(rows) == len(report["results"])
    assert rows[0]["method"] == "greedy" and float(rows[0]["speedup"]) == 1.0
    (tmp_path / "other.json").write_text(json.dumps({"benchmark": "forward"}), encoding="utf-8")
    with pytest.raises(ValueError, match="not a `speclab bench decode` report"):
        load_report(tmp_path / "other.json")
    (tmp_path / "list.json").write_text("[1, 2]", encoding="utf-8")  # had raised AttributeError
    with pytest.raises(ValueError, match="list.json is not a `speclab bench decode` report"):
        load_report(tmp_path / "list.json")
    (tmp_path / "cut.json").write_text('{"benchmark": "dec', encoding="utf-8")  # named no file
    with pytest.raises(ValueError, match="cut.json is not a readable JSON file"):
        load_report(tmp_path / "cut.json")


def test_saved_report_prefers_a_learners_own_full_run(tmp_path, monkeypatch):
    import speclab.paths
    from speclab.weights import file_sha256

    real_prompts = speclab.paths.prompts_dir()
    full = load_report(speclab.paths.data_dir() / "bench" / "decode.json")  # `make bench`'s
    monkeypatch.setattr(speclab.paths, "repo_root", lambda: tmp_path)  # data_dir() follows it
    shutil.copytree(real_prompts, speclab.paths.prompts_dir())  # what a full run decodes
    own, shipped = tmp_path / "build/bench/decode.json", tmp_path / "data/bench/decode.json"
    weights = tmp_path / "data/weights"
    weights.mkdir(parents=True)
    (weights / "target.npz").write_bytes(b"the shipped target")  # only their sha256 matters
    (weights / "draft.npz").write_bytes(b"the shipped draft")
    shipped_models = {
        name: {"sha256": file_sha256(weights / f"{name}.npz"), "dtype": dtype}
        for name, dtype in (("target", "float64"), ("draft", "float32"))
    }

    def write(path, quick, machine="the learner's", models=shipped_models, **settings):
        path.parent.mkdir(parents=True, exist_ok=True)
        record = {"benchmark": "decode", "settings": full["settings"] | {"quick": quick} | settings,
                  "prompts": full["prompts"], "machine": machine, "models": models}  # fmt: skip
        path.write_text(json.dumps(record), encoding="utf-8")

    assert decode_reports.saved_report_path() is None
    write(shipped, quick=False, machine="a quiet one")
    assert decode_reports.saved_report_path() == shipped
    own.parent.mkdir(parents=True)
    own.write_bytes(shipped.read_bytes())  # the saved report copied there: still the saved one
    assert decode_reports.saved_report_path() == shipped
    write(own, quick=True)  # `speclab bench decode --quick` writes here too: not a full run
    assert decode_reports.saved_report_path() == shipped
    own.write_text("{ cut off", encoding="utf-8")  # an interrupted write: not shown
    assert decode_reports.saved_report_path() == shipped
    earlier = {"target": {"sha256": "0" * 64}, "draft": None}
    write(own, quick=False, models=earlier)  # `make bench` before the weights were updated
    assert decode_reports.saved_report_path() == shipped
    write(own, quick=False, models=shipped_models | {"draft": None}, drafters=["lookup"])
    assert decode_reports.saved_report_path() == shipped  # `--drafter lookup`: lesson 06 shows both
    write(own, quick=False, k_values=[4])  # `--k 4`: not every k the lesson shows
    assert decode_reports.saved_report_path() == shipped
    write(own, quick=False)  # `make bench`
    assert decode_reports.saved_report_path() == own
    shipped.unlink()
    assert decode_reports.saved_report_path() == own


def test_a_wrong_output_is_reported(models, prompts, monkeypatch):
    real = bench_decode.speculative_decode

    def broken(*args, **kwargs):
        result = real(*args, **kwargs)
        result.tokens = result.tokens[:-1] + [(result.tokens[-1] + 1) % 256]
        return result

    monkeypatch.setattr(bench_decode, "speculative_decode", broken)
    target, draft = models
    settings = Settings(repeats=1, warmup=0, k_values=(2,), k_max=2, drafters=("lookup",))
    report = decode_report(target, draft, load_scenarios(prompts, ["free text"]), settings)
    check = report["equal_to_greedy"]
    assert not check["all_equal"] and len(check["mismatches"]) == check["speculative_runs_checked"]
    assert check["mismatches"][0]["scenario"] == "free text"


def test_alpha_estimate_recovers_alpha_from_simulated_rounds():
    rng = np.random.default_rng(5)
    for alpha, k in ((0.3, 4), (0.8, 8)):
        accepted = simulate_rounds(alpha, k, 20000, rng)
        rounds = [Round([0] * k, int(m), 0) for m in accepted]
        assert alpha_estimate(rounds) == pytest.approx(alpha, abs=0.01)
    assert np.isnan(alpha_estimate([Round([], 0, 1)]))  # no drafts, no estimate


def test_position_counts_by_hand():
    rounds = [Round([1, 2, 3], 3, 0), Round([1, 2, 3], 1, 0), Round([1], 0, 0), Round([], 0, 0)]
    reached, accepted = position_counts(rounds, 4)
    assert reached == [3, 2, 1, 0]  # position 2 is reached in rounds 1 and 2, position 3 once
    assert accepted == [2, 1, 1, 0]


def test_cli_bench_decode(models, prompts, tmp_path, capsys):
    target, draft = models
    paths = []
    for name, model in (("t.npz", target), ("d.npz", draft)):
        save(tmp_path / name, model.params, model.config)
        paths.append(str(tmp_path / name))
    out = tmp_path / "bench"
    argv = ["bench", "decode", "--weights", paths[0], "--draft-weights", paths[1],
            "--prompts-dir", str(prompts), "--quick", "--repeats", "1", "--max-new-tokens", "6",
            "--k", "2", "--scenario", "free text", "--out", str(out)]  # fmt: skip
    assert main(argv) == 0
    printed = capsys.readouterr().out
    assert "every speculative output equal to greedy: yes" in printed and "kernel" in printed
    assert "lookup k=2 " in printed and "model k=2 " in printed  # the k asked for is shown
    report = json.loads((out / "decode.json").read_text(encoding="utf-8"))
    assert report["settings"]["quick"] and report["settings"]["max_new_tokens"] == 6
    assert report["settings"]["blas_threads"] == 1  # the decode benchmark's default
    assert [s["name"] for s in report["prompts"]["scenarios"]] == ["free text"]
    assert (out / "decode.csv").is_file()
    assert report["models"]["target"]["sha256"] and report["models"]["draft"]["file"] == "d.npz"


@pytest.mark.parametrize(
    ("extra", "status", "message"),
    [
        (["--scenario", "nonsense"], 1, "no scenario named 'nonsense'"),
        (["--max-new-tokens", "100"], 1, "target model's context window of 48 tokens"),
        (["--repeats", "0"], 2, "--repeats must be at least 1, got 0"),
        (["--k", "2", "--k", "0"], 2, "--k must be at least 1, got 0"),
        (["--max-new-tokens", "0"], 2, "--max-new-tokens must be at least 1, got 0"),
        (["--blas-threads", "0"], 2, "--blas-threads must be at least 1, got 0"),
        (["--blas-threads", "-2"], 2, "--blas-threads must be at least 1, got -2"),
        (["--seed", "-1"], 2, "--seed must be at least 0, got -1"),
    ],
)
def test_cli_bench_decode_errors(models, prompts, tmp_path, capsys, monkeypatch, extra, status,
                                 message):  # fmt: skip
    monkeypatch.setattr(bench_decode, "decode_report", nothing_is_timed)
    target, _ = models
    save(tmp_path / "t.npz", target.params, target.config)
    argv = ["bench", "decode", "--weights", str(tmp_path / "t.npz"), "--drafter", "lookup",
            "--prompts-dir", str(prompts), "--out", str(tmp_path), *extra]  # fmt: skip
    assert main(argv) == status
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and message in err[0], err


def nothing_is_timed(*args, **kwargs):
    raise AssertionError("the benchmark started timing before the options were checked")


def test_a_short_draft_model_or_hostile_weights_are_named_before_timing(
    models, prompts, tmp_path, capsys, monkeypatch
):
    monkeypatch.setattr(bench_decode, "decode_report", nothing_is_timed)
    target, _ = models
    short = GPTConfig(1, 2, 8, 16)  # the prompts are 11 and 15 tokens, + 10 new
    save(tmp_path / "t.npz", target.params, target.config)
    save(tmp_path / "short.npz", random_model(short, np.random.default_rng(2)).params, short)
    np.save(tmp_path / "plain.npy", np.ones(3))
    argv = ["bench", "decode", "--weights", str(tmp_path / "t.npz"),
            "--prompts-dir", str(prompts), "--out", str(tmp_path / "out")]  # fmt: skip
    cases = {
        "short.npz": "exceeds the draft model's context window of 16 tokens: give --max-new-tokens",
        "plain.npy": "plain.npy is a single .npy array",
    }
    for name, message in cases.items():
        assert main([*argv, "--draft-weights", str(tmp_path / name)]) == 1
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and message in err[0], err


@pytest.mark.parametrize("what", ["decode", "forward"])
def test_cli_bench_out_is_checked_before_timing(tmp_path, capsys, monkeypatch, what):
    from speclab import bench

    monkeypatch.setattr(bench_decode, "decode_report", nothing_is_timed)
    monkeypatch.setattr(bench, "forward_report", nothing_is_timed)
    a_file = tmp_path / "report.txt"
    a_file.write_text("keep me", encoding="utf-8")
    for out, message in ((a_file, "is a file, not a folder"),
                         (a_file / "sub", "cannot write there")):  # fmt: skip
        assert main(["bench", what, "--out", str(out)]) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and message in err[0] and str(out) in err[0], err
    assert a_file.read_text(encoding="utf-8") == "keep me"


def test_cli_bench_without_out_names_its_default_folder_not_an_option(
    tmp_path, capsys, monkeypatch
):
    """With no --out given, "--out build/bench is a file" named an option nobody typed."""
    from speclab import bench, bench_cli

    monkeypatch.setattr(bench, "forward_report", nothing_is_timed)
    default = tmp_path / "bench"
    default.write_text("keep me", encoding="utf-8")
    monkeypatch.setattr(bench_cli, "bench_dir", lambda: default)
    assert main(["bench", "forward"]) == 2
    err = capsys.readouterr().err.strip()
    assert f"the report folder {default} (give --out to choose another) is a file" in err, err
    assert "--out " + str(default) not in err


def test_cli_bench_out_not_writable(capsys):
    # /proc/self takes no new file or folder, even for root (as CI runs): a read-only folder
    # would not do
    for out in ("/proc/self", "/proc/self/bench"):
        assert main(["bench", "decode", "--out", out]) == 2
        assert "cannot write there" in capsys.readouterr().err


def test_the_report_pair_is_written_together(report, tmp_path):
    out = tmp_path / "out"
    json_path, csv_path = save_decode_report(report, out)
    before = json_path.read_bytes(), csv_path.read_bytes()
    broken = report | {"seconds": object()}  # JSON cannot hold it
    with pytest.raises(TypeError):
        save_decode_report(broken, out)
    broken = report | {"results": [{"scenario": "x"}]}  # a row without the CSV's columns
    with pytest.raises(KeyError):
        save_decode_report(broken, out)
    assert (json_path.read_bytes(), csv_path.read_bytes()) == before
    assert sorted(p.name for p in out.iterdir()) == ["decode.csv", "decode.json"]


def test_the_default_folder_is_the_clones_whatever_the_current_one(tmp_path, monkeypatch):
    from speclab import bench_cli
    from speclab.cli import build_parser
    from speclab.paths import repo_root

    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr("speclab.report_files.writable_folder", lambda out: out)  # no writing
    args = build_parser().parse_args(["bench", "decode"])
    assert bench_cli.option_problem(args) is None
    assert args.out == repo_root() / "build" / "bench"
    assert decode_reports.saved_report_path() in (
        repo_root() / "build" / "bench" / "decode.json",
        repo_root() / "data" / "bench" / "decode.json",
    )


def test_loss_reasons():
    base = {"drafter": "lookup", "speedup": 0.8, "time_drafting_per_token": 0.05,
            "tokens_per_target_forward": 1.2}  # fmt: skip
    assert bench_decode.loss_reason(base) == "low acceptance"
    assert bench_decode.loss_reason(base | {"time_drafting_per_token": 0.4}) == "heavy drafter"
    assert bench_decode.loss_reason(base | {"tokens_per_target_forward": 2.0}) == (
        "verify and overhead"
    )
    assert bench_decode.loss_reason(base | {"speedup": 1.2}) is None
    assert bench_decode.loss_reason(base | {"speedup": 0.996}) is None  # printed 1.00x
    assert bench_decode.loss_reason(base | {"speedup": 0.994}) == "low acceptance"  # 0.99x
    assert bench_decode.loss_reason(base | {"drafter": "none"}) is None
    assert set(bench_decode.LOSS_REASONS) == {
        "heavy drafter",
        "low acceptance",
        "verify and overhead",
    }


def test_copy_goal_says_whether_the_output_was_a_copy_or_a_loop():
    name = bench_decode.COPY_GOAL
    goals = {name: {"value": 3.0, "goal": ">= 2.5", "met": True}}
    looped = bench_decode.copy_note(goals, {"copy-heavy": {"prompt": 0.1, "loop": 0.8}})
    assert "loop" in looped[name]["note"]
    assert looped[name]["met"]  # the speed goal itself is unchanged
    copied = bench_decode.copy_note(goals, {"copy-heavy": {"prompt": 0.9, "loop": 0.0}})
    assert "note" not in copied[name]
    assert copied[name]["output_copied_from_prompt"] == 0.9
    assert bench_decode.copy_note({}, {}) == {}


def test_copy_goals_read_as_the_issue_sets_them():
    """Copy-heavy prompts: at least 2.5x at the lookup's best *fixed* k, and 2.2x with the
    default adaptive policy (the issue on a copying target). A fast adaptive row must not
    stand in for a slow fixed k, as it once did."""

    def result(method, speedup, scenario="copy-heavy"):
        drafter, _, k = method.partition(" ")
        return {"scenario": scenario, "method": method, "drafter": drafter,
                "adaptive": k == "adaptive", "speedup": speedup,
                "draft_cost_per_round": 0.01, "predicted_with_costs": float("nan")}  # fmt: skip

    results = [result("greedy", 1.0), result("lookup k=4", 2.4), result("lookup k=8", 2.3),
               result("lookup adaptive", 2.6), result("model k=4", 2.9)]  # fmt: skip
    goals = bench_decode.check_goals(results)
    assert goals[bench_decode.COPY_GOAL] | {"met": None} == {
        "method": "lookup k=4", "value": 2.4, "goal": ">= 2.5", "met": None
    }  # fmt: skip
    assert not goals[bench_decode.COPY_GOAL]["met"]
    assert goals["copy-heavy default speedup"]["goal"] == ">= 2.2"
    assert goals["copy-heavy default speedup"]["met"]
    results[3]["speedup"] = 2.1
    assert not bench_decode.check_goals(results)["copy-heavy default speedup"]["met"]
    free = bench_decode.check_goals([result("lookup adaptive", 0.98, "free text")])
    assert free["free text default speedup"]["goal"] == ">= 0.97"
    assert free["free text default speedup"]["met"]


def test_the_summary_shows_a_scenario_name_escaped_not_obeyed(report):
    hostile = json.loads(json.dumps(report).replace('"free text"', '"free\\u001b[2Jtext"'))
    printed = bench_decode.describe_report(hostile)
    assert "\x1b" not in printed and "free\\x1b[2Jtext:" in printed


def test_the_summary_counts_scenarios_and_repeats_in_the_right_number(report):
    n = len(report["prompts"]["scenarios"])
    assert bench_decode.describe_report(report).startswith(f"{n} scenario{'' if n == 1 else 's'}, ")
    one = json.loads(json.dumps(report))
    one["prompts"]["scenarios"] = one["prompts"]["scenarios"][:1]
    one["settings"]["repeats"] = 1
    assert bench_decode.describe_report(one).startswith("1 scenario, 1 repeat (+")


def test_a_lesson_shows_the_report_without_the_projects_goals(report):
    assert "goal" in bench_decode.describe_report(report)  # the command prints them
    assert "goal" not in bench_decode.describe_report(report, goals=False)
    from speclab.paths import repo_root

    lesson = (repo_root() / "notebooks" / "06_benefit_boundary.ipynb").read_text(encoding="utf-8")
    assert "describe_report(report, goals=False)" in lesson and "NOT met" not in lesson


def test_only_a_full_run_is_judged_against_the_projects_goals(report):
    """A 3-token --quick run printed "goal copy-heavy lookup speedup at its best fixed k:
    1.22 (>= 2.5): NOT met", as if the project had failed, and a share of 100 % as "1"."""
    from speclab.decode_reports import is_full_run, load_report
    from speclab.paths import data_dir

    assert not is_full_run(report)  # the fixture: a quick run
    printed = bench_decode.describe_report(report, full=is_full_run(report))
    assert "goals: not judged, as this run measured less than `make bench` does" in printed
    assert "NOT met" not in printed and ": met" not in printed
    shipped = load_report(data_dir() / "bench" / "decode.json")
    assert is_full_run(shipped)
    printed = bench_decode.describe_report(shipped, full=is_full_run(shipped))
    assert "not judged" not in printed
    share = shipped["goals"]["prediction within 10 %"]["value"]
    assert f"goal prediction within 10 %: {share:.0%} (share of fixed-k rows)" in printed
    loop = shipped["goals"]["free text output is not a loop"]["value"]
    assert f"goal free text output is not a loop: {loop:.0%} (<= 0.3 of the output" in printed
    assert f"goal {bench_decode.COPY_GOAL}: " in printed


def test_quick_caps_the_new_tokens_without_raising_a_prompts_own_budget():
    """--quick used to force 64 new tokens, so a long prompt with a budget of 3 no longer fit."""
    from speclab.bench_decode import QUICK, Settings

    assert QUICK.new_tokens(3) == 3 and QUICK.new_tokens(128) == 64
    assert Settings().new_tokens(128) == 128  # the full run: each prompt's own budget
    assert Settings(max_new_tokens=6).new_tokens(128) == 6  # --max-new-tokens wins


@pytest.mark.parametrize(
    "change, named",
    [
        ({"repeats": 0}, "repeats must be a whole number of at least 1, got 0"),
        ({"repeats": 2.5}, "repeats must be a whole number"),
        ({"repeats": True}, "repeats must be a whole number"),
        ({"max_new_tokens": 0}, "max_new_tokens must be a whole number of at least 1 or None"),
        ({"max_new_tokens": 48.0}, "max_new_tokens must be a whole number"),
        ({"prompts_per_scenario": 0}, "prompts_per_scenario must be"),
        ({"k_values": (4, 0)}, "k_values must be a whole number of at least 1, got 0"),
        ({"warmup": -1}, "warmup must be a whole number of at least 0"),
        ({"min_ngram": 4}, r"min_ngram \(4\) is above max_ngram \(3\)"),
        ({"drafters": ("lookup", "modle")}, "drafters: 'modle' is not one of lookup, model"),
        ({"drafters": "model"}, r"drafters must be a tuple, e.g. \('lookup',\), got 'model'"),
        ({"k_values": 4}, r"k_values must be a tuple, e.g. \(1, 2, 4, 8\), got 4"),
    ],
)
def test_settings_name_a_bad_value_where_they_are_made(change, named):
    """Lesson 06 builds its quick run as Settings(...) for a student to edit: repeats=0 ended
    in a ZeroDivisionError; max_new_tokens=0 silently meant each prompt's whole budget."""
    with pytest.raises(ValueError, match=named):
        Settings(**change)
    Settings(repeats=np.int64(2), max_new_tokens=None, k_values=(1, 2))  # numpy ints are whole


def test_what_fits_is_what_will_run_not_each_prompts_own_budget(models, prompts):
    """n_ctx 48: "abcabcabcabcabc" (15) + its own budget of 40 does not fit, but with
    --max-new-tokens 6 the run fits and is made; without it, the error names the prompt."""
    target, _ = models
    (scenario,) = load_scenarios(prompts, ["free text"])
    own = tuple(replace(prompt, max_new_tokens=40) for prompt in scenario.prompts)
    scenarios = [replace(scenario, prompts=own)]  # each prompt's own budget: more than fits
    settings = Settings(repeats=1, warmup=0, k_values=(2,), k_max=2, drafters=("lookup",))
    with pytest.raises(
        ValueError,
        match=r"'repeat' \(15 tokens\) \+ 40 new tokens exceeds the target model's context window of 48 tokens: give --max-new-tokens of at most 33$",
    ):
        run_decodes(target, None, scenarios, settings)
    runs, reference, _ = run_decodes(target, None, scenarios, replace(settings, max_new_tokens=6))
    assert {len(tokens) for tokens in reference.values()} == {6}


def test_a_partial_run_never_replaces_the_full_report_lesson_06_shows(report, tmp_path):
    from speclab.decode_reports import is_full_run, lesson_report
    from speclab.paths import data_dir

    shipped = load_report(data_dir() / "bench" / "decode.json")  # a full run: `make bench`
    assert lesson_report(shipped) and not is_full_run(report)  # the tiny run: other prompts
    for change in ({"quick": True}, {"k_values": [4]}, {"drafters": ["lookup"]},
                   {"prompts_per_scenario": 1}, {"max_new_tokens": 8}, {"repeats": 1},
                   {"blas_threads": 2}, {"blas_threads": None}):  # fmt: skip
        assert not is_full_run(shipped | {"settings": shipped["settings"] | change}), change
    assert is_full_run(shipped | {"settings": shipped["settings"] | {"repeats": 15}})
    in_float32 = shipped["models"] | {"target": shipped["models"]["target"] | {"dtype": "float32"}}
    assert not is_full_run(shipped | {"models": in_float32})  # --dtype float32: another model
    out = tmp_path / "bench"
    save_decode_report(report, out)  # no full report there yet: the usual names
    json_path, _ = save_decode_report(shipped, out)  # a full run replaces a partial one
    full = json_path.read_bytes()
    assert json_path.name == "decode.json"
    kept_path, csv_path = save_decode_report(report, out)
    assert (kept_path.name, csv_path.name) == ("decode-partial.json", "decode-partial.csv")
    assert json_path.read_bytes() == full


def test_a_file_of_the_users_where_a_report_goes_is_left_alone(tmp_path, capsys):
    out = tmp_path / "desk"
    out.mkdir()
    (out / "forward.csv").write_text("name,score\nana,3\n", encoding="utf-8")
    assert main(["bench", "forward", "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert "forward.csv is not a speclab report" in err
    assert (out / "forward.csv").read_text(encoding="utf-8") == "name,score\nana,3\n"


def test_a_scenario_file_being_edited_never_crashes_the_save_or_replaces_the_report(
    report, tmp_path, monkeypatch
):
    from speclab.paths import data_dir

    out = tmp_path / "bench"
    full = load_report(data_dir() / "bench" / "decode.json")
    assert save_decode_report(full, out)[0].name == "decode.json"
    monkeypatch.setattr(decode_reports, "_shipped_prompts_sha256", lambda: None)  # unreadable
    for run in (report, full):  # neither can be told full now: both kept beside it
        assert save_decode_report(run, out)[0].name == "decode-partial.json"
    assert load_report(out / "decode.json") == full


def test_a_report_made_on_a_busy_machine_is_named_so_once(report):
    """Lesson 06 printed its own warning above describe_report's "CONTAMINATED" line: the
    learner read the same thing twice, once in a word the lesson never explains."""
    busy = json.loads(json.dumps(report))
    busy["machine"]["load_average_before"] = [1.7, 1.2, 0.9]
    busy["machine"]["cpu_count"] = 2
    printed = bench_decode.describe_report(busy, goals=False)
    assert printed.count("busy") == 1 and "load average 1.7" in printed
    busy["machine"]["load_average_before"] = [0.3, 0.2, 0.1]
    assert "busy" not in bench_decode.describe_report(busy, goals=False)
    from speclab.paths import repo_root

    lesson = (repo_root() / "notebooks" / "06_benefit_boundary.ipynb").read_text(encoding="utf-8")
    assert "machine was busy" not in lesson  # describe_report says it, once
    # the lesson's quick run, made on the learner's machine, gets the same warning
    assert "bench_decode.busy_warning(quick)" in lesson
    assert bench_decode.busy_warning(busy) == ""  # the quiet machine above
    busy["machine"]["load_average_before"] = [1.7, 1.2, 0.9]
    assert "load average 1.7" in bench_decode.busy_warning(busy)


@pytest.mark.parametrize(
    ("cores", "load", "busy"),
    [(2, 1.1, False), (2, 1.6, True), (1, 1.1, True), (1, 0.9, False), (8, 4.0, False),
     (8, 7.6, True), (None, 1.2, True)],
)  # fmt: skip
def test_busy_means_other_work_likely_took_a_core(report, cores, load, busy):
    """A load average of 1.1 on two cores, which a notebook's own earlier cells leave, warned
    after every Run All: one core was still the benchmark's."""
    run = json.loads(json.dumps(report))
    run["machine"]["cpu_count"], run["machine"]["load_average_before"] = cores, [load, 0, 0]
    assert bool(bench_decode.busy_warning(run)) == busy


def test_adaptive_against_fixed_names_a_switch_off_where_every_fixed_k_won():
    """Lesson 06's table and its sentence: the policy off in a quarter of its rounds on free
    text while every fixed k of that drafter beat greedy (the fifth saved run did that)."""

    def rows(scenario, speedups, adaptive):
        fixed = [{"scenario": scenario, "drafter": "model", "adaptive": False, "k": k,
                  "speedup": s} for k, s in zip((1, 2, 4, 8), speedups, strict=True)]  # fmt: skip
        return fixed + [{"scenario": scenario, "drafter": "model", "adaptive": True, "k": 8,
                         "speedup": adaptive}]  # fmt: skip

    report = {
        "results": rows("free text", [1.27, 1.38, 1.49, 1.42], 1.46)
        + rows("counting", [0.9, 1.1, 1.2, 1.3], 1.0)
        + rows("copy-heavy", [1.2, 1.2, 1.2, 1.2], 1.24),
        "adaptive": {
            "free text": {"model": {"share_off": 0.253}},
            "counting": {"model": {"share_off": 0.4}},  # k = 1 lost: off may be right
            "copy-heavy": {"model": {"share_off": 0.05}},
        },
    }
    got = {r["scenario"]: r for r in bench_decode.adaptive_against_fixed(report)}
    assert got["free text"]["misjudged"] and got["free text"]["that k"] == 4
    assert got["free text"]["best fixed k"] == 1.49 and got["free text"]["adaptive"] == 1.46
    assert not got["counting"]["misjudged"] and not got["copy-heavy"]["misjudged"]
    assert got["copy-heavy"]["that k"] == 1  # ties: the first, the smallest k


def test_a_saved_report_is_strict_json_and_loads_its_nans_back(report, tmp_path):
    """Greedy rows have no alpha (NaN): json.dumps wrote bare NaN, which is not JSON (a
    browser's JSON.parse or jq refused decode.json). Saved as null, loaded back as NaN."""
    assert any(math.isnan(row["alpha_leviathan"]) for row in report["results"])  # greedy rows
    json_path, _ = save_decode_report(report, tmp_path / "out")

    def refuse(constant):
        raise ValueError(f"not JSON: {constant}")

    strict = json.loads(json_path.read_text(encoding="utf-8"), parse_constant=refuse)
    again = load_report(json_path)
    for saved, loaded, row in zip(
        strict["results"], again["results"], report["results"], strict=True
    ):
        for key, value in row.items():
            if isinstance(value, float) and math.isnan(value):
                assert saved[key] is None and math.isnan(loaded[key])
            else:
                assert loaded[key] == value
    from speclab.paths import data_dir

    shipped = (data_dir() / "bench" / "decode.json").read_text(encoding="utf-8")
    json.loads(shipped, parse_constant=refuse)  # the report lesson 06 ships, too


def test_a_prompt_longer_than_the_draft_model_names_the_fixes_that_work():
    """With --max-new-tokens 1 there is no fewer to ask for: the message had said "shorten
    the prompt and ask for fewer new tokens", neither of which a bench run can do."""
    from pathlib import Path
    from types import SimpleNamespace as NS

    from speclab.bench_decode import check_fits

    model = NS(config=NS(n_ctx=16))
    scenario = NS(path=Path("f.toml"), prompts=[NS(id="long", tokens=list(range(20)),
                                                    max_new_tokens=6)])  # fmt: skip
    with pytest.raises(ValueError) as raised:
        check_fits(model, "draft model", [scenario], Settings(max_new_tokens=1))
    message = str(raised.value)
    assert "f.toml prompt 'long' (20 tokens) + 1 new token exceeds the draft model's" in message
    assert message.endswith("give --draft-weights of a model with a longer context, or "
                            "--drafter lookup")  # fmt: skip


def test_a_nan_anywhere_in_a_report_is_saved_not_lost(report, tmp_path):
    """Only the results' NaN had been made null, while the file is written with NaN refused:
    a NaN elsewhere would have stopped the save at the end of a whole benchmark."""
    odd = copy.deepcopy(report) | {"adaptive": {"alpha": float("nan"), "k": [1.0, float("inf")]}}
    json_path, _ = save_decode_report(odd, tmp_path / "out")
    saved = json.loads(json_path.read_text(encoding="utf-8"))
    assert saved["adaptive"] == {"alpha": None, "k": [1.0, None]}
    (tmp_path / "latin1.json").write_bytes(b"\xff\xfe{}")
    with pytest.raises(ValueError, match="latin1.json is not a readable JSON file"):
        load_report(tmp_path / "latin1.json")
