"""`speclab demo`: output, colour rules (NO_COLOR, pipes, terminals) and one-line errors.

Most tests use small random models written to a temporary folder (`--target/--draft`), so
they are fast and need no shipped weights; one runs the shipped models.
"""

import os
import pty
import re
import subprocess
import sys

import numpy as np
import pytest

from speclab.cli import main
from speclab.decoding import greedy_decode, speculative_decode
from speclab.demo import EXAMPLES, use_color
from speclab.drafters import PromptLookupDrafter
from speclab.gpt import GPTConfig
from speclab.tokenizer import encode
from speclab.weights import init_params, load, save

SGR = re.compile(r"\x1b\[[0-9;]*m")
PROMPT = "abcabcabcabc"


@pytest.fixture(scope="module")
def weights(tmp_path_factory):
    folder = tmp_path_factory.mktemp("weights")
    paths = {}
    for name, config, seed in (
        ("target", GPTConfig(n_layer=2, n_head=2, n_embd=16, n_ctx=256), 1),
        ("draft", GPTConfig(n_layer=1, n_head=2, n_embd=8, n_ctx=256), 2),
    ):
        paths[name] = folder / f"{name}.npz"
        save(paths[name], init_params(config, np.random.default_rng(seed)), config)
    return paths


def demo_args(weights, *extra) -> list[str]:
    return ["demo", *extra, "--target", str(weights["target"]), "--draft", str(weights["draft"])]


def run_cli(args, env_extra=None, tty=False):
    """speclab in a subprocess: (status, stdout, stderr); stdout a pseudo-terminal if tty."""
    env = {k: v for k, v in os.environ.items() if k != "NO_COLOR"} | (env_extra or {})
    command = [sys.executable, "-m", "speclab", *args]
    if not tty:
        done = subprocess.run(command, capture_output=True, text=True, env=env, timeout=120)
        return done.returncode, done.stdout, done.stderr
    leader, follower = pty.openpty()
    process = subprocess.Popen(command, stdout=follower, stderr=subprocess.PIPE, env=env)
    os.close(follower)
    chunks = []
    while True:
        try:
            chunk = os.read(leader, 4096)
        except OSError:  # the terminal closes when the process ends
            break
        if not chunk:
            break
        chunks.append(chunk)
    os.close(leader)
    stderr = process.stderr.read().decode()
    process.wait(timeout=120)
    return process.returncode, b"".join(chunks).decode(), stderr


def test_prints_continuation_statistics_and_match(weights, capsys):
    status = main(demo_args(weights, PROMPT, "--k", "3", "--max-new-tokens", "20", "--fixed-k"))
    out = capsys.readouterr().out
    assert status == 0
    assert "\x1b" not in out  # captured output is not a terminal
    # the numbers printed are those of the library's own run
    target = load(weights["target"])
    spec = speculative_decode(target, PromptLookupDrafter(), encode(PROMPT), 20, 3, adaptive=False)
    greedy = greedy_decode(target, encode(PROMPT), 20)
    assert f"rounds: {len(spec.rounds)}   target forwards: {spec.target_forwards} " in out
    assert f"(greedy: {greedy.target_forwards}, saved: {20 - spec.target_forwards})" in out
    assert f"tokens per target forward: {spec.tokens_per_target_forward:.2f}" in out
    assert f"drafted: {spec.drafted_count}   accepted: {spec.accepted_count}" in out
    assert "tokens per round:" in out and "time: speculative" in out
    assert "matches greedy decoding byte for byte: yes (20 bytes)" in out
    assert "exactly k = 3" in out and "lookup (n = 3..1)" in out
    assert PROMPT in out


def test_marks_without_colour_carry_the_roles(weights, capsys):
    assert main(demo_args(weights, "aaaaaaaa", "--max-new-tokens", "12")) == 0
    out = capsys.readouterr().out
    assert "\u2039accepted\u203a" in out and "[correction]" in out and "{bonus}" in out


def test_a_drafter_without_matches_is_plain_greedy(weights, capsys):
    assert main(demo_args(weights, "abcdefgh", "--max-new-tokens", "1")) == 0
    out = capsys.readouterr().out  # one token left: no round drafts
    assert "drafted: 0   accepted: 0 (accepted/drafted: n/a, nothing drafted)" in out


def test_model_drafter_and_examples(weights, capsys):
    status = main(demo_args(weights, "--example", "free-text", "--drafter", "model",
                            "--max-new-tokens", "8"))  # fmt: skip
    assert status == 0
    out = capsys.readouterr().out
    assert "model (draft)" in out and "matches greedy decoding byte for byte: yes" in out
    assert EXAMPLES["free-text"].splitlines()[0] in out


def test_pipe_gets_no_colour_and_always_forces_it(weights):
    args = demo_args(weights, PROMPT, "--max-new-tokens", "10")
    status, out, _ = run_cli(args)
    assert status == 0 and "\x1b" not in out
    status, out, _ = run_cli(args + ["--color", "always"])
    assert status == 0 and "\x1b[" in out
    assert "matches greedy decoding byte for byte: yes" in SGR.sub("", out)


def test_terminal_gets_colour_unless_no_color_is_set(weights):
    args = demo_args(weights, PROMPT, "--max-new-tokens", "10")
    status, out, _ = run_cli(args, tty=True)
    assert status == 0 and "\x1b[" in out
    status, out, _ = run_cli(args, env_extra={"NO_COLOR": "1"}, tty=True)
    assert status == 0 and "\x1b" not in out
    assert "matches greedy decoding byte for byte: yes" in out
    status, out, _ = run_cli(args, env_extra={"NO_COLOR": ""}, tty=True)  # empty: ignored
    assert status == 0 and "\x1b[" in out


def test_use_color_rules(monkeypatch):
    class Terminal:
        def isatty(self):
            return True

    monkeypatch.delenv("NO_COLOR", raising=False)
    assert use_color("auto", Terminal()) and not use_color("auto", object())
    monkeypatch.setenv("NO_COLOR", "yes")
    assert not use_color("auto", Terminal())
    assert use_color("always", object()) and not use_color("never", Terminal())


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["x", "--k", "0"], "--k must be at least 1"),
        (["x", "--k", "-2"], "--k must be at least 1"),
        ([""], "the prompt is empty"),
        ([], "give a prompt"),
        (["x", "--example", "repeat"], "not both"),
        (["x" * 250, "--max-new-tokens", "10"], "exceeds the model's context window of 256"),
        (["x", "--max-new-tokens", "300"], "the prompt (1 token) + --max-new-tokens (300)"),
        (["x", "--max-new-tokens", "0"], "--max-new-tokens must be at least 1"),
        (["x", "--min-ngram", "3", "--max-ngram", "2"], "--min-ngram"),
        (["x", "--max-ngram", "16"], "--max-ngram must be at most 15"),
        (["x", "--min-ngram", "16", "--max-ngram", "20"], "--max-ngram must be at most 15"),
        (["x", "--min-ngram", "0"], "--min-ngram"),
        (["x", "--k", "1000000000"], "--k must be at most 64"),
        (["ab\udcffcd"], "the prompt is not valid UTF-8 text (byte 0xff at character 3)"),
        (["\ud800"], "the prompt is not valid UTF-8 text"),
    ],
)
def test_bad_arguments_give_one_line(weights, capsys, args, message):
    assert main(demo_args(weights, *args)) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    lines = captured.err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("speclab demo: error: ") and message in lines[0]


def test_missing_or_broken_weights_give_one_line(tmp_path, capsys):
    assert main(["demo", "x", "--target", str(tmp_path / "nope.npz")]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "no weights file at" in err[0]
    broken = tmp_path / "broken.npz"
    broken.write_bytes(b"not a zip file")
    assert main(["demo", "x", "--target", str(broken)]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "not a readable .npz" in err[0]


@pytest.fixture(scope="module")
def short_draft(tmp_path_factory):
    """A draft model that sees only 32 positions (the target sees 256)."""
    path = tmp_path_factory.mktemp("short") / "short.npz"
    config = GPTConfig(n_layer=1, n_head=2, n_embd=8, n_ctx=32)
    save(path, init_params(config, np.random.default_rng(3)), config)
    return path


@pytest.mark.parametrize(("prompt", "new"), [("abc" * 14, "20"), ("abc" * 5, "30")])
def test_a_draft_model_with_a_short_context_is_named(weights, short_draft, capsys, prompt, new):
    argv = ["demo", prompt, "--drafter", "model", "--max-new-tokens", new,
            "--target", str(weights["target"]), "--draft", str(short_draft)]  # fmt: skip
    assert main(argv) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "the draft model's context window of 32 tokens" in err[0]
    # the lookup drafter needs no draft model: the same settings run
    argv.remove("model")
    argv.remove("--drafter")
    assert main(argv) == 0


def test_hostile_weights_give_one_line(weights, tmp_path, capsys):
    plain = tmp_path / "plain.npy"
    np.save(plain, np.ones(3))
    wide = tmp_path / "wide.npz"
    config = GPTConfig(n_layer=1, n_head=2, n_embd=8, n_ctx=32, n_vocab=300)
    save(wide, init_params(config, np.random.default_rng(0)), config)
    for path, message in ((plain, "a single .npy array"), (wide, "n_vocab is 300"),
                          (tmp_path, "not a regular file")):  # fmt: skip
        for option in ("--target", "--draft"):
            argv = demo_args(weights, "x", "--drafter", "model") + [option, str(path)]
            assert main(argv) == 1
            err = capsys.readouterr().err.strip().splitlines()
            assert len(err) == 1 and message in err[0], err


def test_a_prompt_of_undecodable_bytes_in_a_subprocess(weights):
    command = [sys.executable, "-m", "speclab", *demo_args(weights, "x")]
    command[command.index("x")] = b"ab\xffcd"  # argv as a terminal in a UTF-8 locale gives it
    done = subprocess.run(command, capture_output=True, timeout=120)
    err = done.stderr.decode()
    assert done.returncode == 2 and "Traceback" not in err and "not valid UTF-8" in err


def test_a_utf8_prompt_under_an_ascii_locale_is_read_as_typed(weights):
    # LC_ALL=C: Python reads argv as ASCII, so é's two UTF-8 bytes arrive as surrogates.
    command = [sys.executable, "-m", "speclab", *demo_args(weights, "x")]
    command[command.index("x")] = "h\u00e9".encode()
    env = os.environ | {"LC_ALL": "C", "PYTHONCOERCECLOCALE": "0", "PYTHONUTF8": "0"}
    done = subprocess.run(command, capture_output=True, timeout=120, env=env)
    assert done.returncode == 0, done.stderr.decode(errors="replace")


def test_no_traceback_in_a_subprocess(weights):
    status, out, err = run_cli(["demo", "x", "--k", "0"])
    assert status == 2 and "Traceback" not in err and err.count("\n") == 1
    status, out, err = run_cli(["demo", "x", "--k", "four"])  # argparse's own message
    assert status == 2 and "Traceback" not in err and "invalid int value" in err


def test_help_is_clear():
    status, out, _ = run_cli(["demo", "--help"])
    assert status == 0
    for text in ("--k", "--drafter", "{lookup,model}", "--max-new-tokens", "--fixed-k",
                 "--example", "NO_COLOR", "Exit status"):  # fmt: skip
        assert text in out, text


def test_shipped_models_match_greedy(capsys):
    status = main(["demo", "--example", "code-edit", "--k", "4", "--max-new-tokens", "30"])
    out = capsys.readouterr().out
    assert status == 0, out
    assert "matches greedy decoding byte for byte: yes (30 bytes)" in out
    assert "target: target, drafter: lookup" in out and "target target" not in out


def test_the_teacher_guide_describes_what_the_demo_shows_with_the_shipped_target():
    """lessons/teacher-guide.md, "What the demo shows with the shipped model": each claim
    re-run with the shipped target (and must be rewritten when the target changes)."""
    from speclab.paths import repo_root
    from speclab.tokenizer import decode
    from speclab.weights import load_target

    guide = " ".join((repo_root() / "lessons" / "teacher-guide.md").read_text("utf-8").split())
    target = load_target()
    prompt = encode(EXAMPLES["code-edit"])
    body = EXAMPLES["code-edit"].split("\n# edited:\n")[0].split("\n", 1)[1]
    spec = speculative_decode(target, PromptLookupDrafter(3, 1), prompt, 120, 4, adaptive=False)
    # "as in the prompt but for one byte: it indents `averages = []` by three spaces, not
    # four, so the run ends before the body uses the renamed `values_2`"
    wrote = decode(spec.tokens)
    assert "as in the prompt but for one byte: it indents `averages = []` by three spaces" in guide
    miss = next(i for i, (a, b) in enumerate(zip(wrote, body, strict=False)) if a != b)
    assert body[miss - 4 : miss + 9] == "\n    averages" and wrote[miss : miss + 8] == "averages"
    assert len(wrote) == 120 and wrote == body[:miss] + body[miss + 1 : 121]
    assert body.index("len(values)") + len("len(values") >= 121  # where `_2` would come
    # "Every correction is the drafter's alone ... At `window` in the docstring, for instance,
    # it proposed `)` (what follows `window` in the def line) and the model wrote the backquote"
    corrections, at = {}, 0
    for r in spec.rounds:
        if r.accepted < len(r.drafted):
            corrections[at + r.accepted] = decode([r.drafted[r.accepted]])
        at += r.accepted + 1
    # "All corrections but one are the drafter's ... The one that is the model's: at the
    # fourth space before `averages`, the drafter proposed the space ... and the model wrote `a`"
    assert corrections.pop(miss) == " " and wrote[miss] == "a"
    assert corrections and all(wrote[q] == body[q] for q in corrections if q < miss)
    assert all(wrote[q] == body[q + 1] for q in corrections if q > miss)
    assert "All corrections but one are the drafter's" in guide
    # "its last bytes occur more than once earlier ..., and it proposed what followed the
    # wrong place": the n-gram each such round matched (the longest of 3..1 bytes found
    # earlier, by string search) has at least two earlier places
    assert "its last bytes occur more than once earlier" in guide
    text, matched = EXAMPLES["code-edit"], []
    for r in spec.rounds:
        if (
            r.drafted
            and r.accepted < len(r.drafted)
            and len(text) - len(EXAMPLES["code-edit"]) + r.accepted != miss
        ):
            gram = next(text[-n:] for n in (3, 2, 1) if text[-n:] in text[:-1])
            places = [i for i in range(len(text) - len(gram)) if text.startswith(gram, i)]
            matched.append((gram, len(places)))
        text += decode(r.new_tokens)
    assert len(matched) == len(corrections) and all(count >= 2 for _, count in matched), matched
    assert "the drafter proposed the space the prompt has and the model wrote `a`" in guide
    star = body.index("`window`") + len("`window")
    assert corrections.get(star) == ")" and wrote[star] == "`" and "window)" in body
    assert (
        "At `window` in the docstring, for instance, it proposed `)` (what follows `window` in "
        "the def line) and the model wrote the backquote" in guide
    )
    # "One of them comes from the edit itself: after `values` at the end of the docstring it
    # proposed `_2` (what follows `values` in the edited def line) and the model wrote the
    # docstring's full stop"
    stop = body.index('values."""') + len("values")
    assert corrections.get(stop) == "_" and wrote[stop] == "."
    assert "def moving_average(values_2, window)" in EXAMPLES["code-edit"]
    assert (
        "after `values` at the end of the docstring it proposed `_2` (what follows `values` in "
        "the edited def line) and the model wrote the docstring's full stop" in guide
    )
    # "Most rounds add all 4 drafts and a bonus token"
    assert sum(r.accepted == 4 for r in spec.rounds) > len(spec.rounds) / 2
    # "writes the whole body with `values`, not `values_2`, then starts the function a third time"
    longer = decode(greedy_decode(target, prompt, 360).tokens)
    assert "writes the whole body with `values`, not `values_2`, then `# edited:` and the" in guide
    again = body[:miss] + body[miss + 1 :]
    assert longer.startswith(again) and "values_2" not in longer
    assert "# edited:\ndef moving_average(values, window):" in longer[len(again) :]
    # free text: "this small model soon repeats a phrase of its own"
    free = decode(greedy_decode(target, encode(EXAMPLES["free-text"]), 120).tokens)
    assert "(`the scheduler is the scheduler is the ...`)" in guide
    assert free.count("scheduler is the scheduler is the") >= 2


def test_the_teacher_guide_explorer_surprise_holds_for_the_shipped_models():
    """lessons/teacher-guide.md, lesson 05's explorer row: "the free-text prompt scores about
    as high as the code edit with prompt lookup (higher at some k, lower at others), ...; with
    the draft model the code edit scores higher at every k (free text 14 to 43 % lower)", at
    the explorer's default 80 new tokens."""
    from speclab.drafters import ModelDrafter
    from speclab.paths import repo_root
    from speclab.weights import load_draft, load_target

    guide = " ".join((repo_root() / "lessons" / "teacher-guide.md").read_text("utf-8").split())
    assert (
        "the free-text prompt scores about as high as the code edit with prompt lookup (higher "
        "at some k, lower at others)" in guide
    )
    target, draft = load_target(), load_draft()
    drafters = {"lookup": lambda: PromptLookupDrafter(3, 1), "model": lambda: ModelDrafter(draft)}
    per_forward = {}
    for example in ("free-text", "code-edit"):
        for name, make in drafters.items():
            for k in range(1, 9):
                run = speculative_decode(target, make(), encode(EXAMPLES[example]), 80, k,
                                         adaptive=False)  # fmt: skip
                per_forward[example, name, k] = len(run.tokens) / run.target_forwards
    ratio = {
        (name, k): per_forward["free-text", name, k] / per_forward["code-edit", name, k]
        for name in drafters
        for k in range(1, 9)
    }
    lookup = [ratio["lookup", k] for k in range(1, 9)]
    assert min(lookup) < 1 < max(lookup) and min(lookup) > 0.8  # about as high, either way
    lower = [1 - ratio["model", k] for k in range(1, 9)]
    assert min(lower) > 0  # the code edit higher at every k
    assert (
        "with the draft model the code edit scores higher at every k (free text "
        f"{100 * min(lower):.0f} to {100 * max(lower):.0f} % lower)" in guide
    )


def test_an_empty_weights_path_is_refused_not_taken_for_the_shipped_model(capsys):
    for option in ("--target", "--draft"):
        with pytest.raises(SystemExit) as ended:
            main(["demo", option, ""])
        assert ended.value.code == 2 and "an empty path" in capsys.readouterr().err


def demo_on_a_console(encoding: str) -> str:
    """What `speclab demo` prints, without colour, on a console of this encoding."""
    result = subprocess.run(
        [sys.executable, "-m", "speclab", "demo", "--example", "repeat", "--color", "never",
         "--max-new-tokens", "30", "--k", "4", "--fixed-k"],
        capture_output=True, env=os.environ | {"PYTHONIOENCODING": encoding}, timeout=300,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    return result.stdout.decode(encoding)


def test_an_ascii_console_gets_ascii_marks_not_escapes():
    out = demo_on_a_console("ascii")
    assert "\\u2039" not in out and "\\xb7" not in out
    continuation = out.split("==\n", 2)[2].split("\n== legend")[0]
    assert "<" in continuation and ">" in continuation and "<accepted>" in out


def test_a_windows_console_keeps_the_marks_it_can_show():
    """cp1252 has ‹ › and · but not ↵ or →: every mark became ASCII there, and a space marked
    '.' read as a full stop."""
    legend = demo_on_a_console("cp1252").split("== legend ==")[1]
    assert "\u00b7 a space, ~ a line break, > a tab" in legend  # ↵ and → are not in cp1252
    assert "\u2039accepted\u203a" in legend


def test_escape_codes_in_the_prompt_are_shown_not_obeyed(weights, capsys):
    """The prompt is echoed: ESC [2J would clear the learner's screen, a C1 CSI likewise,
    and a right-to-left override would reverse what follows it."""
    status = main(demo_args(weights, "x\x1b[2J\x9b31my\u202ez\nw", "--color", "never",
                            "--max-new-tokens", "3"))  # fmt: skip
    printed = capsys.readouterr().out
    assert status == 0 and not {"\x1b", "\x9b", "\u202e"} & set(printed)
    assert "x\\x1b[2J\\x9b31my\\u202ez\nw" in printed  # the line break kept


def test_escape_codes_in_a_weights_file_name_are_shown_not_obeyed(weights, tmp_path, capsys):
    """The header names both models' files; a name holding ESC [41m had coloured the rest of
    the learner's terminal red (bench and the error messages escaped it already)."""
    odd = {}
    for role in ("target", "draft"):
        odd[role] = tmp_path / f"{role}\x1b[41mRED\u202e.npz"
        odd[role].write_bytes(weights[role].read_bytes())
    status = main(demo_args(odd, "abc", "--drafter", "model", "--max-new-tokens", "3"))
    printed = capsys.readouterr().out
    assert status == 0 and not {"\x1b", "\u202e"} & set(printed)
    assert "target: target\\x1b[41mRED\\u202e, drafter: model (draft\\x1b[41mRED\\u202e)" in printed


def test_a_draft_file_with_the_lookup_drafter_is_noted_not_ignored_in_silence(weights, capsys):
    assert main(demo_args(weights, "abcabc", "--max-new-tokens", "3")) == 0
    assert "--draft is read only with --drafter model" in capsys.readouterr().err
    assert main(demo_args(weights, "abcabc", "--max-new-tokens", "3", "--drafter", "model")) == 0
    assert "--draft is read only" not in capsys.readouterr().err


def test_ngram_options_with_the_model_drafter_are_noted_not_ignored_in_silence(weights, capsys):
    args = demo_args(weights, "abcabc", "--max-new-tokens", "3", "--drafter", "model")
    assert main([*args, "--max-ngram", "2"]) == 0
    assert "--max-ngram and --min-ngram are read only with the lookup" in capsys.readouterr().err
    assert main(args) == 0
    assert main(demo_args(weights, "abcabc", "--max-new-tokens", "3", "--min-ngram", "2")) == 0
    assert "--max-ngram" not in capsys.readouterr().err


def test_rounds_the_adaptive_policy_switched_off_are_explained(weights, capsys, monkeypatch):
    """A policy that finds drafting too dear (here: a verify position costing 10 steps) drafts
    nothing in most rounds; the demo says so and how to draft anyway."""
    import speclab.demo
    from speclab.adaptive import AdaptiveK, CostModel

    made = []

    def dear(k):
        made.append(AdaptiveK(k, cost=CostModel(verify_per_position=10.0)))
        return made[-1]

    monkeypatch.setattr(speclab.demo, "AdaptiveK", dear)
    assert main(demo_args(weights, "abcabcabcabc", "--max-new-tokens", "40")) == 0
    out = capsys.readouterr().out
    off = sum(d.mode == "off" for d in made[0].decisions)
    assert off > 0
    rounds = int(re.search(r"rounds: (\d+)", out).group(1))  # as the line above counts them
    assert rounds == len(made[0].decisions) + 1  # the last round is run without asking it
    assert f"drafting off in {off} of {rounds} rounds:" in out
    assert "--fixed-k drafts every round" in out
    monkeypatch.setattr(speclab.demo, "AdaptiveK", lambda k: AdaptiveK(k, cost=CostModel()))
    assert main(demo_args(weights, "abcabcabcabc", "--max-new-tokens", "40")) == 0
    assert "drafting off" not in capsys.readouterr().out  # a free drafter is never switched off


def test_the_off_line_counts_rounds_in_the_right_number_and_names_timing_steps():
    from speclab.adaptive import AdaptiveK, Decision
    from speclab.demo import policy_off_line

    policy = AdaptiveK(4)
    policy.decisions = [Decision("time plain step", 0, 0.5, 1.0), Decision("off", 0, 0.5, 1.0)]
    assert policy_off_line(policy, 3).startswith(
        "drafting off in 1 of 3 rounds, besides 1 plain step it took to time one:"
    )
    policy.decisions = [Decision("draft", 4, 0.5, 2.0)]
    assert policy_off_line(policy, 2) == ""


def test_the_demo_decodes_on_one_blas_thread(weights, capsys, monkeypatch):
    import contextlib

    import speclab.demo

    asked = []

    def record(n):
        asked.append(n)
        return contextlib.nullcontext()

    monkeypatch.setattr(speclab.demo, "blas_threads", record)
    assert main(demo_args(weights, "abcabc", "--max-new-tokens", "3")) == 0
    assert asked == [1]


def _run_of(prompt: str, rounds: list[tuple[bytes, int, str]]):
    """A DecodeResult built by hand: (drafted, accepted, appended) for each round."""
    from speclab.decoding import DecodeResult, Round

    result = DecodeResult(prompt_tokens=encode(prompt))
    for drafted, accepted, appended in rounds:
        result.rounds.append(Round(list(drafted), accepted, ord(appended)))
        result.tokens += result.rounds[-1].new_tokens
    return result


def _plain(text: str) -> list[tuple[bytes, int, str]]:
    return [(b"", 0, char) for char in text]  # one plain step a byte


def test_code_edit_note_finds_the_corrections_that_come_from_the_edit():
    """Hand-built runs, each with a known answer: a draft of the rename's `_2` copied from
    the edited line and corrected; a copy that breaks at a known byte; a clean copy with
    the renamed name."""
    from speclab.demo import _EDITED_BODY, code_edit_note

    prompt = EXAMPLES["code-edit"]
    docstring = '    """Return the mean of every run of `window` neighbouring values'
    assert _EDITED_BODY.startswith(docstring + '."""')
    # after "values" the latest "ues" is the edited line's, followed by "_2, "
    assert PromptLookupDrafter(3, 1).propose(encode(prompt + docstring), 4) == list(b"_2, ")
    run = _run_of(prompt, _plain(docstring) + [(b"_2, ", 0, "."), (b"", 0, '"')])
    note = code_edit_note(run, PromptLookupDrafter(3, 1))
    assert f"At round {len(docstring) + 1} the drafter copied the rename's `_2`" in note
    assert "that correction comes from the edit" in note
    assert "The model copied the function byte for byte" in note
    assert (
        "has not yet written a use of the parameter in the function's body, old name or new."
        in note
    )

    run = _run_of(prompt, _plain('    """Return the meanX'))  # the 23rd byte should be " "
    note = code_edit_note(run, PromptLookupDrafter(3, 1))
    assert "correction" not in note  # there is none to explain
    assert "The model's own copy breaks at round 23: it wrote `'X'` where the function it " in note
    assert "copies, with the edit's rename, has `'␣'`" in note  # the prompt's edit is one line

    # after the copy broke, a draft of `_2` corrected is not the edit's doing: not listed
    broke = '    """ReturnX' + docstring[len('    """Return') :]
    run = _run_of(prompt, _plain(broke) + [(b"_2, ", 0, ".")])
    note = code_edit_note(run, PromptLookupDrafter(3, 1))
    assert "At round" not in note and "The model's own copy breaks at round 14" in note

    note = code_edit_note(_run_of(prompt, _plain(" ")), PromptLookupDrafter(3, 1))
    assert note == (
        "In its 1 byte the model has not yet written a use of the parameter in the function's body, old name or new. "
        "The model copied the function byte for byte so far."
    )

    run = _run_of(prompt, _plain(_EDITED_BODY))
    note = code_edit_note(run, PromptLookupDrafter(3, 1))
    assert note.startswith("The model wrote the renamed `values_2`.")
    assert "byte for byte" in note and "breaks" not in note
    old_name = _EDITED_BODY.replace("values_2", "values")
    note = code_edit_note(_run_of(prompt, _plain(old_name)), PromptLookupDrafter(3, 1))
    assert note.startswith("Where the edit asks for `values_2` the model wrote the old `values`.")
    assert "breaks at round" in note


def test_one_byte_and_one_token_are_singular(weights, capsys):
    assert main(demo_args(weights, "a", "--max-new-tokens", "1", "--k", "1")) == 0
    out = capsys.readouterr().out
    assert "1 byte) ==" in out and "== continuation: 1 token;" in out
    assert "exactly" not in out and "at most k = 1 draft per round" in out
    assert "yes (1 byte)" in out and "1 bytes" not in out and "1 tokens" not in out


def test_a_refused_model_file_is_named_with_its_role_and_whole_path(tmp_path, capsys):
    """A broken draft saved as B/target.npz was reported as 'target.npz: ...', which reads
    as the target; the message now says which model, which option, and the whole path."""
    from speclab.cli import main

    draft = tmp_path / "B" / "target.npz"
    draft.parent.mkdir()
    draft.write_text("not weights", "utf-8")
    status = main(["demo", "--example", "repeat", "--max-new-tokens", "2", "--drafter", "model",
                   "--draft", str(draft)])  # fmt: skip
    err = capsys.readouterr().err
    assert status == 1
    assert f"the draft model (--draft): {draft} is not a readable .npz weights file" in err
    status = main(["bench", "decode", "--quick", "--drafter", "model", "--draft-weights",
                   str(draft), "--out", str(tmp_path / "out")])  # fmt: skip
    err = capsys.readouterr().err
    assert status == 1 and f"the draft model (--draft-weights): {draft} is not" in err
    missing = tmp_path / "C" / "target.npz"  # a file that is not there: named the same way
    status = main(["demo", "--example", "repeat", "--max-new-tokens", "2", "--drafter", "model",
                   "--draft", str(missing)])  # fmt: skip
    err = capsys.readouterr().err
    assert status == 1 and f"the draft model (--draft): no weights file at {missing}" in err
    status = main(["bench", "decode", "--quick", "--drafter", "model", "--draft-weights",
                   str(missing), "--out", str(tmp_path / "out")])  # fmt: skip
    err = capsys.readouterr().err
    assert status == 1 and f"the draft model (--draft-weights): no weights file at {missing}" in err
