"""Tests for speclab.bench: shapes, records and arithmetic, never speed.

Timings themselves are not asserted (they depend on the machine); what is checked is
that the right things are timed, interleaved, summarised and saved.
"""

import csv
import json

import numpy as np
import pytest

from speclab import bench
from speclab.cli import main
from speclab.counting import expected_tokens_per_round
from speclab.gpt import GPTConfig, forward
from speclab.kv_cache import KVCache
from speclab.weights import random_model, save


def test_machine_record_fields():
    record = bench.machine_record()
    for field in ("speclab", "python", "numpy", "cpu", "blas", "OPENBLAS_CORETYPE",
                  "load_average_1min"):  # fmt: skip
        assert field in record
    assert record["numpy"] == np.__version__
    assert isinstance(record["cpu"], str) and record["cpu"]
    for library in record["blas"]:
        assert {"library", "version", "kernel", "threads"} <= set(library)
    json.dumps(record)  # JSON-able


def test_interleaved_times_runs_every_task_in_shuffled_rounds():
    log = []
    tasks = {
        name: (lambda name=name: log.append(("prepare", name)), lambda name=name: log.append(name))
        for name in "abc"
    }
    times = bench.interleaved_times(tasks, repeats=6, rng=np.random.default_rng(1), warmup=2)
    assert set(times) == set("abc")
    assert all(t.shape == (6,) and np.all(t >= 0) for t in times.values())
    worked = [entry for entry in log if isinstance(entry, str)]
    assert len(worked) == 3 * (6 + 2)
    rounds = [worked[i : i + 3] for i in range(0, len(worked), 3)]
    assert all(sorted(r) == ["a", "b", "c"] for r in rounds)  # every task once per round
    assert len({tuple(r) for r in rounds}) > 1  # and not always in the same order
    for i, entry in enumerate(log):  # each work is right after its own prepare
        if isinstance(entry, str):
            assert log[i - 1] == ("prepare", entry)


def test_interleaved_times_needs_a_repeat():
    with pytest.raises(ValueError, match="repeats"):
        bench.interleaved_times({}, repeats=0, rng=np.random.default_rng(0))


def test_timings_summaries_against_numpy():
    times = np.array([[1.0, 2.0, 3.0, 4.0], [2.0, 4.0, 9.0, 8.0]])  # [2 settings, 4 rounds]
    timings = bench.Timings("n_new", np.array([1, 5]), times)
    assert np.allclose(timings.median, [2.5, 6.0])
    assert np.allclose(timings.q25, np.quantile(times, 0.25, axis=1))
    assert np.allclose(timings.q75, np.quantile(times, 0.75, axis=1))
    paired = times[1] / times[0]  # [2, 2, 3, 2]
    assert timings.ratio(5, 1)["median"] == pytest.approx(np.median(paired))
    assert timings.ratio(5, 1)["q75"] == pytest.approx(np.quantile(paired, 0.75))
    rows = timings.rows(base=1)
    assert [row["n_new"] for row in rows] == [1, 5]
    assert rows[1]["ratio_to_1"] == pytest.approx(2.0)
    assert rows[0]["repeats"] == 4
    with pytest.raises(KeyError, match="not measured"):
        timings.index(3)


def test_forward_cost_shape_and_cache_left_usable(tiny_model):
    timings = bench.forward_cost(tiny_model, np.random.default_rng(0), n_past=20,
                                 n_new_values=[1, 2, 5], repeats=3)  # fmt: skip
    assert timings.label == "n_new"
    assert timings.values.tolist() == [1, 2, 5]
    assert timings.times.shape == (3, 3)
    assert np.all(timings.times > 0)


def test_forward_cost_from_an_empty_past(tiny_model):
    timings = bench.forward_cost(tiny_model, np.random.default_rng(0), n_past=0,
                                 n_new_values=[1, 4], repeats=2)  # fmt: skip
    assert timings.times.shape == (2, 2)


def test_forward_cost_refuses_what_does_not_fit(tiny_model):
    with pytest.raises(ValueError, match="context window"):
        bench.forward_cost(tiny_model, np.random.default_rng(0), n_past=60, n_new_values=[8])


def test_cache_vs_recompute_shapes(tiny_model):
    result = bench.cache_vs_recompute(tiny_model, np.random.default_rng(0), seq_lens=[4, 16, 64],
                                      repeats=2)  # fmt: skip
    assert set(result) == {"with cache", "without cache"}
    for timings in result.values():
        assert timings.label == "n_seq"
        assert timings.values.tolist() == [4, 16, 64]
        assert timings.times.shape == (3, 2)


def test_instrumented_forward_equals_gpt_forward(tiny_model):
    params, config = tiny_model.params, tiny_model.config
    tokens = np.random.default_rng(3).integers(0, 256, 30)
    plain_cache, timed_cache = KVCache(config), KVCache(config)
    for chunk in (tokens[:10], tokens[10:11], tokens[11:16], tokens[16:]):
        expected = forward(params, config, chunk, plain_cache)
        logits, seconds, calls = bench.instrumented_forward(params, config, chunk, timed_cache)
        assert logits.shape == (len(chunk), config.n_vocab)
        np.testing.assert_array_equal(logits, expected)  # same arithmetic, same order
        assert len(timed_cache) == len(plain_cache)
        assert set(seconds) == set(calls) == set(bench.TIMED_PARTS)
        assert all(value >= 0 for value in seconds.values())
    n_layer = config.n_layer
    assert calls["weight matmuls"] == 4 * n_layer + 1  # qkv, proj, fc, proj; the LM head
    assert calls["attention matmuls"] == 2 * n_layer
    assert calls["GELU"] == n_layer
    assert calls["LayerNorm"] == 2 * n_layer + 1
    np.testing.assert_array_equal(timed_cache.keys[:, :, :30], plain_cache.keys[:, :, :30])


def test_step_breakdown_parts_add_up_to_the_forward(tiny_model):
    result = bench.step_breakdown(tiny_model, np.random.default_rng(0), n_new=3, n_past=10,
                                  repeats=3)  # fmt: skip
    assert result.parts == bench.PARTS and result.parts[-1] == "Python overhead"
    assert result.seconds.shape == result.calls.shape == (len(bench.PARTS),)
    assert result.part_times.shape == (3, len(bench.PARTS) - 1)
    assert result.forward_times.shape == (3,)
    overhead = result.forward_times - result.part_times.sum(axis=1)  # per round
    assert result.seconds[-1] == pytest.approx(np.median(overhead))
    assert np.allclose(result.seconds[:-1], np.median(result.part_times, axis=0))
    assert result.forward_seconds == pytest.approx(np.median(result.forward_times))
    assert result.calls[-1] == 0 and result.calls[0] == 4 * tiny_model.config.n_layer + 1
    assert [row["part"] for row in result.rows()] == list(bench.PARTS)


def test_numpy_call_seconds_is_a_small_positive_time():
    seconds = bench.numpy_call_seconds(np.random.default_rng(0), n_calls=10, repeats=2)
    assert 0 < seconds < 1


def test_cpu_caches_are_sizes_in_bytes():
    caches = bench.cpu_caches()
    assert all(isinstance(size, int) and size > 0 for size in caches.values())
    assert all(name in {"L1d", "L1", "L2", "L3", "L4"} for name in caches)
    assert bench.machine_record()["caches"] == caches


def test_skeleton_model_makes_the_same_calls_on_tiny_arrays(tiny_model):
    skeleton = bench.skeleton_model(tiny_model.config, np.random.default_rng(0))
    assert skeleton.config.n_embd == tiny_model.config.n_head
    assert skeleton.config.n_layer == tiny_model.config.n_layer
    tokens = [1, 2, 3]
    _, _, calls = bench.instrumented_forward(skeleton.params, skeleton.config, tokens,
                                             KVCache(skeleton.config))  # fmt: skip
    _, _, real_calls = bench.instrumented_forward(tiny_model.params, tiny_model.config, tokens,
                                                  KVCache(tiny_model.config))  # fmt: skip
    assert calls == real_calls


def test_forward_times_per_model(tiny_model):
    skeleton = bench.skeleton_model(tiny_model.config, np.random.default_rng(0))
    times = bench.forward_times({"model": tiny_model, "skeleton": skeleton},
                                np.random.default_rng(0), n_past=8, n_new=2, repeats=3)  # fmt: skip
    assert set(times) == {"model", "skeleton"}
    assert all(t.shape == (3,) for t in times.values())


def test_width_sweep_one_curve_per_width():
    curves = bench.width_sweep([32, 64], np.random.default_rng(0), n_new_values=[1, 5],
                               n_past=8, n_layer=1, repeats=2)  # fmt: skip
    assert list(curves) == [32, 64]
    assert all(c.times.shape == (2, 2) for c in curves.values())
    model = bench.width_model(768, np.random.default_rng(0), n_layer=1, n_ctx=24)
    assert model.config.n_head == 12 and model.config.n_embd == 768  # GPT-2 small's heads


def test_free_positions_reads_up_to_the_first_costly_setting():
    times = np.array([[1.0] * 3, [1.1] * 3, [1.5] * 3, [1.2] * 3])  # ratios 1, 1.1, 1.5, 1.2
    timings = bench.Timings("n_new", np.array([1, 2, 4, 8]), times)
    assert bench.free_positions(timings, tolerance=1.3) == 2  # 8 is cheap again, but after 4
    assert bench.free_positions(timings, tolerance=2.0) == 8


def test_matmul_params_of_gpt2_small():
    config = GPTConfig(n_layer=12, n_head=12, n_embd=768, n_ctx=1024, n_vocab=50257)
    # GPT-2 small has 124M parameters; position embeddings (0.8M) and biases/gains are not
    # read by the matrix products.
    assert bench.matmul_params(config) == 12 * 12 * 768**2 + 50257 * 768
    assert 123e6 < bench.matmul_params(config) < 124e6


def test_roofline_model_by_hand():
    # 1e9 weights of 2 bytes at 1e12 bytes/s: 2 ms to read; 1e14 flop/s: 2e9 flop per position.
    times = bench.roofline_time([1, 50, 100, 200], 1e9, 2, 1e12, 1e14)
    assert np.allclose(times, [2e-3, 2e-3, 2e-3, 4e-3])
    assert bench.roofline_free_positions(2, 1e12, 1e14) == pytest.approx(100)


def test_break_even_alpha_solves_the_speedup_equation():
    for k, ratio, c in [(4, 1.3, 0.0), (4, 2.0, 0.05), (2, 1.1, 0.1)]:
        alpha = bench.break_even_alpha(k, ratio, c)
        assert 0 < alpha < 1
        assert expected_tokens_per_round(alpha, k) == pytest.approx(k * c + ratio, rel=1e-9)
        assert bench.speedup_with_verify_cost(alpha, k, ratio, c) == pytest.approx(1.0)
    assert bench.break_even_alpha(4, 1.0) == 0.0  # Leviathan's assumption: never loses
    assert bench.break_even_alpha(4, 5.0) == 1.0  # a round costs as much as 5 plain steps


def test_speedup_with_verify_cost_reduces_to_leviathan():
    from speclab.counting import expected_speedup

    for alpha in (0.0, 0.5, 0.9):
        assert bench.speedup_with_verify_cost(alpha, 4, 1.0, 0.1) == pytest.approx(
            expected_speedup(alpha, 4, 0.1)
        )


def test_greedy_seconds_matches_an_uncached_greedy_loop(tiny_model):
    prompt = [10, 20, 30, 40]
    seconds, produced = bench.greedy_seconds(tiny_model, prompt, 6, 2, np.random.default_rng(0))
    assert seconds.shape == (2,)
    sequence = list(prompt)
    for _ in range(6):  # the oracle: recompute the whole sequence, no cache
        sequence.append(int(np.argmax(forward(tiny_model.params, tiny_model.config, sequence)[-1])))
    assert produced == sequence[len(prompt) :]


def test_greedy_seconds_decodes_what_the_lesson_05_decoder_decodes(tiny_model):
    from speclab.decoding import greedy_decode

    prompt = [65, 66, 67, 10, 65]
    _, produced = bench.greedy_seconds(tiny_model, prompt, 12, 1, np.random.default_rng(0))
    assert produced == greedy_decode(tiny_model, prompt, 12).tokens


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


def test_cli_bench_forward_float32_and_one_thread(tiny_weights, tmp_path):
    argv = ["bench", "forward", "--weights", str(tiny_weights), "--quick", "--n-past", "4",
            "--greedy-tokens", "4", "--dtype", "float32", "--blas-threads", "1",
            "--out", str(tmp_path)]  # fmt: skip
    assert main(argv) == 0
    report = json.loads((tmp_path / "forward.json").read_text(encoding="utf-8"))
    assert report["model"]["dtype"] == "float32"
    assert all(library["threads"] == 1 for library in report["machine"]["blas"])


def test_cli_bench_decode_is_the_default(capsys, tmp_path):
    # the decode benchmark itself is tested in test_bench_decode.py
    missing = ["--weights", str(tmp_path / "none.npz"), "--out", str(tmp_path)]
    assert main(["bench", *missing]) == 1
    assert "speclab bench decode: no weights file" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("extra", "status", "message"),
    [
        (["--weights", "no-such-file.npz"], 1, "no weights file"),
        (["--n-past", "60"], 1, "context window"),
        (["--repeats", "0"], 2, "--repeats"),
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


def test_random_model_is_what_the_width_slider_uses():
    model = random_model(GPTConfig(1, 2, 128, 32), np.random.default_rng(0))
    assert bench.model_record(model)["dtype"] == "float64"


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--blas-threads", "0"], "--blas-threads must be at least 1, got 0"),
        (["--blas-threads", "-1"], "--blas-threads must be at least 1, got -1"),
        (["--greedy-tokens", "0"], "--greedy-tokens must be at least 1, got 0"),
        (["--n-past", "-1"], "--n-past must be at least 0, got -1"),
        (["--seed", "-5"], "--seed must be at least 0, got -5"),
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
    assert "--greedy-tokens 5000 leaves no room" in capsys.readouterr().err


def test_cli_bench_forward_hostile_weights_give_one_line(tmp_path, capsys):
    np.save(tmp_path / "plain.npy", np.ones(3))
    argv = ["bench", "forward", "--weights", str(tmp_path / "plain.npy"), "--out", str(tmp_path)]
    assert main(argv) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "a single .npy array" in err[0], err


def test_forward_report_pair_is_written_together(tmp_path):
    rows = [{"n_new": 1, "median_s": 0.5}]
    json_path, csv_path = bench.save_report({"forward_cost": rows}, tmp_path)
    before = json_path.read_bytes(), csv_path.read_bytes()
    with pytest.raises(TypeError):
        bench.save_report({"forward_cost": rows, "machine": object()}, tmp_path)
    assert (json_path.read_bytes(), csv_path.read_bytes()) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["forward.csv", "forward.json"]
