"""Tests for `speclab bench` (speclab.bench_cli): options checked first, one-line errors,
the forward benchmark end to end on a tiny model (the decode one: tests/test_bench_decode.py).
"""

import csv
import json
import os

import numpy as np
import pytest

from speclab import bench, bench_cli
from speclab.cli import main
from speclab.weights import load, save


@pytest.fixture
def tiny_weights(tmp_path, tiny_model):
    path = tmp_path / "tiny.npz"
    save(path, tiny_model.params, tiny_model.config, {"val_bits_per_byte": 7.5})
    return path


def test_cli_bench_forward_quick(tiny_weights, tmp_path, capsys):
    out = tmp_path / "bench"
    argv = ["bench", "forward", "--weights", str(tiny_weights), "--quick", "--n-past", "16",
            "--greedy-tokens", "8", "--out", str(out)]  # fmt: skip
    assert main(argv) == 0
    printed = capsys.readouterr().out
    assert "5-token / 1-token" in printed and "tokens/s" in printed and "kernel" in printed
    report = json.loads((out / "forward.json").read_text(encoding="utf-8"))
    assert report["benchmark"] == "forward"
    assert report["ratio_5_to_1"]["goal_at_most"] == 1.3
    assert report["ratio_5_to_1"]["q25"] <= report["ratio_5_to_1"]["median"]
    assert report["ratio_5_to_1"]["median"] <= report["ratio_5_to_1"]["q75"]
    assert len(report["greedy"]["tokens"]) == 8 and report["greedy"]["tokens_per_second"] > 0
    assert report["model"]["config"]["n_embd"] == 32
    assert report["model"]["val_bits_per_byte"] == 7.5
    assert report["machine"]["numpy"] == np.__version__
    assert report["settings"]["n_past"] == 16
    with (out / "forward.csv").open(encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    assert [int(row["n_new"]) for row in rows] == [1, 2, 5]
    assert float(rows[0]["ratio_to_1"]) == 1.0


def test_a_quick_forward_run_never_replaces_a_full_one(tiny_weights, tmp_path, capsys):
    """`bench forward --quick` replaced a class's full forward.json in silence (decode kept
    its full report and wrote decode-partial.json beside it)."""
    out = tmp_path / "bench"
    argv = ["bench", "forward", "--weights", str(tiny_weights), "--quick", "--n-past", "8",
            "--greedy-tokens", "4", "--out", str(out)]  # fmt: skip
    assert main(argv) == 0
    capsys.readouterr()
    first = json.loads((out / "forward.json").read_text(encoding="utf-8"))
    first["settings"]["quick"] = False  # as `make bench` leaves it
    full = json.dumps(first)
    (out / "forward.json").write_text(full, encoding="utf-8")
    before_csv = (out / "forward.csv").read_bytes()
    assert main(argv) == 0
    printed = capsys.readouterr().out
    assert "forward-partial.json" in printed
    assert f"kept {out / 'forward.json'}: it holds a full run" in printed
    assert (out / "forward.json").read_text(encoding="utf-8") == full
    assert (out / "forward.csv").read_bytes() == before_csv
    assert json.loads((out / "forward-partial.json").read_text("utf-8"))["settings"]["quick"]
    (out / "forward.json").write_text(json.dumps(first | {"settings": {"quick": True}}))
    assert main(argv) == 0  # a quick run replaces a quick one
    assert json.loads((out / "forward.json").read_text("utf-8"))["settings"]["quick"]


def test_cli_bench_forward_float32_and_one_thread(tiny_weights, tmp_path):
    argv = ["bench", "forward", "--weights", str(tiny_weights), "--quick", "--n-past", "4",
            "--greedy-tokens", "4", "--dtype", "float32", "--blas-threads", "1",
            "--out", str(tmp_path)]  # fmt: skip
    assert main(argv) == 0
    report = json.loads((tmp_path / "forward.json").read_text(encoding="utf-8"))
    assert report["model"]["dtype"] == "float32"
    assert all(library["threads"] == 1 for library in report["machine"]["blas"])


def test_cli_bench_forward_counts_in_the_right_number(tiny_weights, tmp_path, capsys):
    argv = ["bench", "forward", "--weights", str(tiny_weights), "--quick", "--n-past", "4",
            "--greedy-tokens", "4", "--blas-threads", "1", "--out", str(tmp_path)]  # fmt: skip
    assert main(argv) == 0
    out = capsys.readouterr().out
    runs = len(json.loads((tmp_path / "forward.json").read_text("utf-8"))["greedy"]["seconds"])
    assert f"median of {runs} run{'' if runs == 1 else 's'})" in out
    assert "1 threads" not in out and ", 1 thread" in out


def test_cli_bench_decode_is_the_default(capsys, tmp_path):
    # the decode benchmark itself is tested in test_bench_decode.py
    missing = ["--weights", str(tmp_path / "none.npz"), "--out", str(tmp_path)]
    assert main(["bench", *missing]) == 1
    assert (
        "speclab bench decode: the target model (--weights): no weights file"
        in capsys.readouterr().err
    )


@pytest.mark.parametrize(
    ("extra", "status", "message"),
    [
        (["--weights", "no-such-file.npz"], 1, "no weights file"),
        (["--n-past", "60"], 1, "context window"),
        (["--repeats", "0"], 2, "--repeats"),
        # the default of 128 greedy tokens, which the user never typed: named as a number
        (["--n-past", "16"], 1, "128 greedy tokens leave no room for a prompt in the context"),
    ],
)
def test_cli_bench_forward_errors(tiny_weights, tmp_path, capsys, extra, status, message):
    argv = ["bench", "forward", "--weights", str(tiny_weights), "--quick", "--out", str(tmp_path)]
    assert main(argv + extra) == status
    assert message in capsys.readouterr().err


def test_cli_bad_choice_is_an_argparse_error():
    with pytest.raises(SystemExit) as exit_info:
        main(["bench", "backward"])
    assert exit_info.value.code == 2


CORES = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--blas-threads", "0"], "--blas-threads must be at least 1, got 0"),
        (["--blas-threads", "-1"], "--blas-threads must be at least 1, got -1"),
        (["--greedy-tokens", "0"], "--greedy-tokens must be at least 1, got 0"),
        (["--n-past", "-1"], "--n-past must be at least 0, got -1"),
        (["--seed", "-5"], "--seed must be at least 0, got -5"),
        (["--k", "1000000000"], "--k must be at most 64, got 1000000000"),
        (["--repeats", str(10**12)], f"--repeats must be at most 10000, got {10**12}"),  # memory
        # more than the cores: once ignored by OpenBLAS (and recorded), or a ctypes traceback
        (["--blas-threads", str(10**20)], f"--blas-threads must be at most {CORES}, got {10**20}"),
    ],
)
def test_cli_bench_forward_numbers_are_checked_first(tiny_weights, tmp_path, capsys, monkeypatch,
                                                     extra, message):  # fmt: skip
    monkeypatch.setattr(bench, "_load_for_bench", lambda args: pytest.fail("loaded a model"))
    argv = ["bench", "forward", "--weights", str(tiny_weights), "--quick", "--out", str(tmp_path)]
    assert main(argv + extra) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and message in err[0], err


def test_cli_bench_forward_greedy_tokens_beyond_the_window_fail_before_timing(
    tiny_weights, tmp_path, capsys, monkeypatch
):
    monkeypatch.setattr(bench, "forward_cost", lambda *a, **k: pytest.fail("timed the curve"))
    argv = ["bench", "forward", "--weights", str(tiny_weights), "--quick", "--out", str(tmp_path),
            "--greedy-tokens", "5000"]  # fmt: skip
    assert main(argv) == 1
    assert "5000 greedy tokens leave no room" in capsys.readouterr().err


@pytest.mark.parametrize("n_past", ["60", str(10**20)])
def test_cli_bench_forward_n_past_beyond_the_window_is_named(tiny_weights, tmp_path, capsys,
                                                              monkeypatch, n_past):  # fmt: skip
    # once "100000000000000000005 positions do not fit ...": a sum the user never typed
    monkeypatch.setattr(bench, "forward_cost", lambda *a, **k: pytest.fail("timed the curve"))
    argv = ["bench", "forward", "--weights", str(tiny_weights), "--quick", "--out", str(tmp_path),
            "--greedy-tokens", "4", "--n-past", n_past]  # fmt: skip
    assert main(argv) == 1
    n_ctx = load(tiny_weights).config.n_ctx
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1, err
    assert f"--n-past {n_past} leaves no room" in err[0]
    assert f"at most {n_ctx - 5}" in err[0]  # --quick times up to 5 new positions


def test_cli_bench_forward_hostile_weights_give_one_line(tmp_path, capsys):
    np.save(tmp_path / "plain.npy", np.ones(3))
    argv = ["bench", "forward", "--weights", str(tmp_path / "plain.npy"), "--out", str(tmp_path)]
    assert main(argv) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "a single .npy array" in err[0], err


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["bench", "forward", "--scenario", "nosuch"],
         "--scenario is an option of `speclab bench decode`, not of forward"),
        (["bench", "forward", "--k", "4"], "--k is an option of `speclab bench decode`, not of forward"),
        (["bench", "decode", "--n-past", "5000"],
         "--n-past is an option of `speclab bench forward`, not of decode"),
        (["bench", "--greedy-tokens", "9"],  # decode, the default
         "--greedy-tokens is an option of `speclab bench forward`, not of decode"),
    ],
)  # fmt: skip
def test_an_option_of_the_other_benchmark_is_refused_not_ignored(tmp_path, capsys, monkeypatch,
                                                                 argv, message):  # fmt: skip
    monkeypatch.setattr(bench, "_load_for_bench", lambda args: pytest.fail("loaded a model"))
    assert main(argv + ["--out", str(tmp_path)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [
        f"speclab bench {argv[1] if argv[1] != '--greedy-tokens' else 'decode'}: {message}"
    ]


def test_a_forward_report_too_deep_to_read_is_kept_and_the_quick_run_saved_beside_it(tmp_path):
    """save_report reads the forward.json it might replace after the timing: a file nested
    deeper than json.loads can follow had cost the measurement a RecursionError."""
    deep = '{"benchmark": "forward", "settings": ' + "[" * 100_000 + "]" * 100_000 + "}"
    (tmp_path / "forward.json").write_text(deep, encoding="utf-8")
    report = {"settings": {"quick": True}, "forward_cost": [{"n_new": 1, "ms": 1.0}]}
    json_path, _ = bench.save_report(report, tmp_path)
    assert json_path.name == "forward-partial.json"
    assert (tmp_path / "forward.json").read_text(encoding="utf-8") == deep


@pytest.mark.parametrize(
    "what, file",
    [
        ("forward", "forward.csv"),
        ("forward", "forward-partial.json"),
        ("decode", "decode.csv"),
        ("decode", "decode-partial.json"),
    ],  # fmt: skip
)
def test_a_folder_where_the_report_goes_is_refused_before_timing(tmp_path, capsys, monkeypatch,
                                                                 what, file):  # fmt: skip
    """Found only after the timing, it would cost the whole measurement. A decode run
    beside a full report goes to decode-partial.json, so that name is checked too."""
    monkeypatch.setattr(bench, "_load_for_bench", lambda args: pytest.fail("loaded a model"))
    monkeypatch.setattr(bench_cli, "load_scenarios", lambda *a: pytest.fail("read prompts"))
    (tmp_path / file).mkdir()
    assert main(["bench", what, "--quick", "--out", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert f"{tmp_path / file} is a folder, a pipe or a device" in err


def test_draft_weights_unused_by_the_lookup_drafter_are_named(tmp_path, capsys):
    argv = ["bench", "decode", "--quick", "--scenario", "counting", "--drafter", "lookup",
            "--k", "1", "--repeats", "1", "--max-new-tokens", "2", "--out", str(tmp_path),
            "--draft-weights", str(tmp_path / "not-read.npz")]  # fmt: skip
    assert main(argv) == 0
    err = capsys.readouterr().err
    assert f"note: --draft-weights {tmp_path / 'not-read.npz'} is not used" in err


def test_a_failed_benchmark_leaves_no_empty_out_folder(tmp_path, capsys):
    out = tmp_path / "new" / "reports"  # both made by the checks, both gone after the failure
    argv = [
        "bench",
        "forward",
        "--quick",
        "--weights",
        str(tmp_path / "none.npz"),
        "--out",
        str(out),
    ]
    assert main(argv) == 1 and "no weights file" in capsys.readouterr().err
    assert not (tmp_path / "new").exists()
    (tmp_path / "kept").mkdir()  # a folder that was there stays
    argv[-1] = str(tmp_path / "kept")
    assert main(argv) == 1 and (tmp_path / "kept").is_dir()


def test_sigterm_during_a_benchmark_leaves_no_folder_it_made(tmp_path, monkeypatch, capsys):
    import os
    import signal

    from speclab import bench
    from speclab.cli import main

    def killed(args):  # `timeout` or `kill` while the benchmark runs
        os.kill(os.getpid(), signal.SIGTERM)
        raise AssertionError("SIGTERM should have stopped the benchmark")

    monkeypatch.setattr(bench, "run_forward", killed)
    out = tmp_path / "new" / "bench"
    assert main(["bench", "forward", "--out", str(out)]) == 143
    assert "interrupted" in capsys.readouterr().err and not (tmp_path / "new").exists()


def test_help_says_what_speclab_is_the_default_benchmark_and_the_exit_statuses(capsys):
    for argv in (["--help"], ["bench", "--help"], ["handouts", "--help"]):
        with pytest.raises(SystemExit):
            main(argv)
    printed = " ".join(capsys.readouterr().out.split())  # argparse wraps lines
    assert "the commands of the speclab lessons" in printed
    assert "one subcommand per task" not in printed  # a note for developers, not users
    assert (
        "decode (the default)" in printed and "3 decode: a speculative output differed" in printed
    )
    assert "default: lessons/ of this checkout" in printed
    assert "default: PDFs when Chromium is installed" in printed


@pytest.mark.skipif(os.name == "nt", reason="no flock on Windows: nothing is locked there")
def test_a_second_benchmark_on_the_same_out_is_refused_at_once(tiny_weights, tmp_path, capsys):
    """Two benchmarks on one --out both said "saved", the later replacing the earlier, and each
    timed the other's work."""
    from speclab.report_files import one_at_a_time

    out = tmp_path / "bench"
    out.mkdir()
    argv = ["bench", "forward", "--weights", str(tiny_weights), "--quick", "--n-past", "16",
            "--greedy-tokens", "8", "--out", str(out)]  # fmt: skip
    with one_at_a_time(out, "busy", "--out", bench_cli.LOCK):  # as a running benchmark holds it
        assert main(argv) == 1
    err = capsys.readouterr().err
    assert f"another speclab bench is running with --out {out}; wait for it to end" in err
    assert not (out / "forward.json").exists()
    assert main(argv) == 0 and (out / "forward.json").exists()  # the lock ended with its holder


@pytest.mark.parametrize("saved", [False, True])
def test_ctrl_c_says_whether_anything_was_saved(tmp_path, monkeypatch, capsys, saved):
    """Ctrl-C during a benchmark said only "interrupted": a user could not tell whether the
    minutes measured were lost, or whether the earlier report in --out survived."""
    from speclab.paths import data_dir

    out = tmp_path / "bench"
    out.mkdir()
    earlier = out / "forward.json"  # a full run's report, as `make bench` leaves it
    earlier.write_bytes((data_dir() / "bench" / "forward.json").read_bytes())

    def stopped(args):
        if saved:  # the report written, then the stop came
            (out / "forward.csv").write_text("new\n", "utf-8")
        raise KeyboardInterrupt

    monkeypatch.setattr(bench, "run_forward", stopped)
    assert main(["bench", "forward", "--out", str(out)]) == 130
    err = capsys.readouterr().err
    assert err.endswith("interrupted\n")
    if saved:
        assert f"stopped after its report was saved in {out}" in err
    else:
        assert f"nothing saved, the reports in {out} are as they were" in err
    assert earlier.read_bytes() == (data_dir() / "bench" / "forward.json").read_bytes()


def test_ctrl_c_into_a_new_out_folder_speaks_of_no_earlier_reports(tmp_path, monkeypatch, capsys):
    def stopped(args):
        raise KeyboardInterrupt

    monkeypatch.setattr(bench, "run_forward", stopped)
    out = tmp_path / "new"
    assert main(["bench", "forward", "--out", str(out)]) == 130
    err = capsys.readouterr().err
    assert err == "speclab bench forward: stopped before the end: nothing saved\ninterrupted\n"
    assert not out.exists()  # the folder the run made is gone again


def test_a_full_disk_at_the_end_keeps_the_forward_figures_on_screen(
    tiny_weights, tmp_path, capsys, monkeypatch
):
    """The report could not be saved (the disk filled while it ran): the command said only
    "cannot save the report ([Errno 28] No space left on device)", and the timings were lost."""

    def full(report, out):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(bench, "save_report", full)
    out = tmp_path / "bench"
    argv = ["bench", "forward", "--weights", str(tiny_weights), "--quick", "--n-past", "16",
            "--greedy-tokens", "8", "--out", str(out)]  # fmt: skip
    assert main(argv) == 1
    printed = capsys.readouterr()
    assert "5-token / 1-token cached forward: " in printed.out and "tokens/s" in printed.out
    assert "saved" not in printed.out
    assert printed.err.endswith(  # after the progress bar, where a terminal shows one
        "speclab bench forward: cannot save the report (No space left on device): its figures "
        f"are the ones printed above, and the reports in {out} are as they were\n"
    )


def test_a_full_disk_at_the_end_keeps_the_decode_figures_on_screen(tmp_path, capsys, monkeypatch):
    from speclab import decode_reports

    def full(report, out):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(decode_reports, "save_decode_report", full)
    out = tmp_path / "bench"
    argv = ["bench", "decode", "--quick", "--scenario", "copy-heavy", "--drafter", "lookup",
            "--k", "1", "--repeats", "1", "--max-new-tokens", "4", "--out", str(out)]  # fmt: skip
    assert main(argv) == 1
    printed = capsys.readouterr()
    assert "copy-heavy" in printed.out and "lookup k=1" in printed.out, printed.out
    assert (
        "cannot save the report (No space left on device): its figures are the ones" in printed.err
    )


def test_a_scenario_named_in_utf8_is_found_under_an_ascii_locale(tmp_path, capsys):
    """LC_ALL=C with PYTHONUTF8=0 hands argv's UTF-8 bytes over as surrogates: --scenario
    'copy-é' was "no scenario named 'copy-\\udcc3\\udca9' (have: ..., copy-\\xe9)"."""
    from speclab.paths import data_dir

    prompts = tmp_path / "prompts"
    prompts.mkdir()
    text = (data_dir() / "prompts" / "01_copy_heavy.toml").read_text("utf-8")
    (prompts / "01.toml").write_text(
        text.replace('name = "copy-heavy"', 'name = "copy-é"'), "utf-8"
    )
    typed = "copy-é".encode().decode("ascii", "surrogateescape")  # as such a locale's argv has it
    argv = ["bench", "decode", "--prompts-dir", str(prompts), "--scenario", typed, "--quick",
            "--drafter", "lookup", "--k", "1", "--repeats", "1", "--max-new-tokens", "4",
            "--out", str(tmp_path / "out")]  # fmt: skip
    assert main(argv) == 0, capsys.readouterr().err
    assert "copy-é" in capsys.readouterr().out


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="/dev/full is Linux's")
def test_a_full_stdout_after_saving_says_the_report_was_saved(tiny_weights, tmp_path):
    """`speclab bench forward > /dev/full` saved its report, then said only "cannot write the
    standard output": whether the minutes of timing were lost, it did not say."""
    import subprocess
    import sys

    out = tmp_path / "bench"
    argv = ["bench", "forward", "--weights", str(tiny_weights), "--quick", "--n-past", "16",
            "--greedy-tokens", "8", "--out", str(out)]  # fmt: skip
    with open("/dev/full", "wb") as full:
        result = subprocess.run([sys.executable, "-m", "speclab", *argv], stdout=full,
                                stderr=subprocess.PIPE, timeout=120)  # fmt: skip
    assert result.returncode == 1
    assert (out / "forward.json").is_file() and (out / "forward.csv").is_file()
    assert result.stderr.decode().endswith(
        "speclab: cannot write the standard output: No space left on device; the files were "
        f"saved: {out / 'forward.json'}, {out / 'forward.csv'}\n"
    )
