"""Scenario files: the shipped ones are valid, bad ones fail with clear errors; provenance."""

import os

import numpy as np
import pytest

from speclab.paths import prompts_dir
from speclab.scenarios import (
    ScenarioError,
    load_scenario,
    load_scenarios,
    output_provenance,
    prompts_sha256,
    provenance_fractions,
)

GOOD = """name = "tiny"
description = "two prompts"
max_new_tokens = 8

[[prompts]]
id = "one"
source = "written for the project"
text = "abc"

[[prompts]]
id = "two"
source = "standard library: textwrap.py"
text = '''
def f(x):
    return x
'''
max_new_tokens = 4
"""


def write(folder, name, text):
    path = folder / name
    path.write_text(text, encoding="utf-8")
    return path


def test_shipped_scenarios():
    scenarios = load_scenarios()
    names = [s.name for s in scenarios]
    assert names == ["copy-heavy", "structured", "counting", "free text"]
    readme = (prompts_dir() / "README.md").read_text(encoding="utf-8")
    for scenario in scenarios:
        assert len(scenario.prompts) >= 3, scenario.name  # several prompts each
        assert scenario.path.name in readme
        scenario.check_fits(1024)  # the shipped target's context window
        for prompt in scenario.prompts:
            assert prompt.id in readme, prompt.id
            assert prompt.tokens == list(prompt.text.encode("utf-8"))
    assert len(prompts_sha256(scenarios)) == 64


def test_the_readme_states_the_rules_a_groups_own_file_meets(tmp_path):
    """A class writes its own scenario (teacher guide, week 3): the README names the rules."""
    from speclab.scenarios import MIN_PROMPTS, SOURCES

    readme = (prompts_dir() / "README.md").read_text(encoding="utf-8")
    assert f"at least {MIN_PROMPTS} of these" in readme
    assert all(f'"{source}' in readme for source in SOURCES)
    own = 'name = "ours"\ndescription = "d"\n' + "".join(
        f'[[prompts]]\nid = "p{i}"\nsource = "written for the project by group 3"\ntext = "x"\n'
        for i in range(MIN_PROMPTS)
    )
    write(tmp_path, "ours.toml", own)
    assert [s.name for s in load_scenarios(tmp_path)] == ["ours"]


def test_free_text_prompts_are_picked_from_the_candidates():
    """benchmarks/pick_free_text.py ranks the candidates; the scenario takes some of them."""
    candidates = load_scenario(prompts_dir() / "candidates" / "free_text.toml")
    by_id = {p.id: p for p in candidates.prompts}
    free_text = load_scenarios(names=["free text"])[0]
    for prompt in free_text.prompts:
        assert prompt.id in by_id, prompt.id
        assert (prompt.text, prompt.max_new_tokens) == (
            by_id[prompt.id].text,
            by_id[prompt.id].max_new_tokens,
        )
    assert len(candidates.prompts) > len(free_text.prompts)


def test_free_text_prompts_are_the_least_looping_for_the_shipped_target():
    """The scenario file says its prompts are the candidates whose greedy output loops least
    with the shipped target: a new target must re-pick them (benchmarks/pick_free_text.py)."""
    from benchmark_scripts import load

    from speclab.weights import load_target

    pick = load("pick_free_text")
    ranked = pick.rank(
        load_target(), load_scenario(prompts_dir() / "candidates" / "free_text.toml")
    )
    free_text = load_scenarios(names=["free text"])[0]
    n = len(free_text.prompts)
    assert {p.id for p in free_text.prompts} == {row["id"] for row in ranked[:n]}
    assert ranked[n - 1]["loop"] < ranked[n]["loop"] or ranked[n - 1]["id"] < ranked[n]["id"]


def test_counting_prompts_count():
    counting = load_scenarios(names=["counting"])[0]
    for prompt in counting.prompts:
        assert any(f"{n}" in prompt.text and f"{n + 1}" in prompt.text for n in range(1, 4))


def test_a_good_file(tmp_path):
    scenario = load_scenario(write(tmp_path, "a.toml", GOOD))
    assert scenario.name == "tiny" and [p.id for p in scenario.prompts] == ["one", "two"]
    assert [p.max_new_tokens for p in scenario.prompts] == [8, 4]
    assert scenario.prompts[1].text == "def f(x):\n    return x\n"  # TOML drops the first newline
    with pytest.raises(ScenarioError, match=r"a.toml: prompt 'two' \(23 tokens\) \+ 4 new"):
        scenario.check_fits(26)


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda t: t.replace('name = "tiny"\n', ""), r"bad.toml: missing 'name'"),
        (lambda t: "colour = 3\n" + t, r"bad.toml: unknown key 'colour'"),
        (lambda t: t.replace('id = "two"', 'id = "one"'), r"bad.toml: prompt id 'one' is used"),
        (
            lambda t: t.replace('id = "two"', 'id = "Two Words"'),
            r"prompt 2 \('Two Words'\): id must",
        ),
        (
            lambda t: t.replace("standard library: textwrap.py", "the web"),
            r"prompt 2 .*source must",
        ),
        (
            lambda t: t.replace('text = "abc"', 'text = "  "'),
            r"prompt 1 \('one'\): 'text' holds only white space; give it some text",
        ),
        (lambda t: t.replace('text = "abc"', 'text = ""'), r"'text' is empty; give it some text"),
        (lambda t: t.replace('text = "abc"', "text = 3"), r"'text' must be a string, got int"),
        (lambda t: t.replace('text = "abc"\n', ""), r"prompt 1 \('one'\): missing 'text'"),
        (
            lambda t: t.replace("max_new_tokens = 8", "max_new_tokens = 0"),
            r"bad.toml: max_new_tokens",
        ),
        (lambda t: t.replace("max_new_tokens = 4", "max_new_tokens = true"), r"prompt 2.*max_new"),
        (lambda t: t.replace("max_new_tokens = 4", "mood = 4"), r"prompt 2: unknown key 'mood'"),
        (lambda t: t.split('[[prompts]]\nid = "two"')[0], r"bad.toml: needs at least 2"),
        (lambda t: t.replace('name = "tiny"', "name = "), r"bad.toml: not valid TOML"),
        # tomllib's own ValueError, not a TOMLDecodeError: it had named no file, and advised
        # sys.set_int_max_str_digits()
        (
            lambda t: t.replace("max_new_tokens = 8", "max_new_tokens = " + "9" * 5000),
            r"^bad.toml: not valid TOML \(Exceeds the limit \(4300 digits\)[^;]*\)$",
        ),
        (
            lambda t: t.replace('description = "two prompts"', "description = 5"),
            r"'description' must be a string, got int",
        ),
    ],
)
def test_bad_files_name_the_file_and_the_problem(tmp_path, change, message):
    path = write(tmp_path, "bad.toml", change(GOOD))
    with pytest.raises(ScenarioError, match=message):
        load_scenario(path)
    with pytest.raises(ValueError):  # a ScenarioError is a ValueError
        load_scenarios(tmp_path)


def test_folder_level_errors(tmp_path):
    with pytest.raises(ScenarioError, match="no scenario files"):
        load_scenarios(tmp_path)
    with pytest.raises(ScenarioError, match="no such folder"):
        load_scenarios(tmp_path / "missing")
    (tmp_path / "one.toml").write_text(GOOD, encoding="utf-8")
    with pytest.raises(ScenarioError, match="is a file; give the folder that holds it"):
        load_scenarios(tmp_path / "one.toml")
    (tmp_path / "one.toml").unlink()
    if hasattr(os, "mkfifo"):  # a FIFO is no file to find a folder around (a review's try)
        os.mkfifo(tmp_path / "pipe")
        with pytest.raises(ScenarioError, match=r"pipe: is not a folder \(a folder of"):
            load_scenarios(tmp_path / "pipe")
        (tmp_path / "pipe").unlink()
    (tmp_path / "loop").symlink_to(tmp_path / "loop")
    with pytest.raises(ScenarioError, match="loop: leads into a symbolic link loop"):
        load_scenarios(tmp_path / "loop")  # it had said "no such folder"
    (tmp_path / "loop").unlink()
    (tmp_path / "latin1.toml").write_bytes(GOOD.replace("abc", "caf\xe9").encode("latin-1"))
    with pytest.raises(ScenarioError, match="latin1.toml: not UTF-8"):
        load_scenarios(tmp_path)
    (tmp_path / "latin1.toml").unlink()
    write(tmp_path, "a.toml", GOOD)
    write(tmp_path, "b.toml", GOOD)
    with pytest.raises(ScenarioError, match="two files use the scenario name 'tiny'"):
        load_scenarios(tmp_path)
    (tmp_path / "b.toml").unlink()
    with pytest.raises(ScenarioError, match="no scenario named 'huge'"):
        load_scenarios(tmp_path, names=["huge"])
    # as `speclab demo --example free-text` spells a name: hyphens, case and spaces loose
    assert [s.name for s in load_scenarios(tmp_path, names=["TINY"])] == ["tiny"]
    assert [s.name for s in load_scenarios(prompts_dir(), names=["free-text"])] == ["free text"]
    with pytest.raises(ScenarioError, match="no such scenario file"):
        load_scenario(tmp_path / "missing.toml")


def test_odd_things_named_toml_are_a_message_not_a_hang(tmp_path):
    (tmp_path / "folder.toml").mkdir()
    with pytest.raises(ScenarioError, match="folder.toml: not a regular file"):
        load_scenario(tmp_path / "folder.toml")
    if hasattr(os, "mkfifo"):  # reading a pipe with no writer would wait for ever
        os.mkfifo(tmp_path / "pipe.toml")
        with pytest.raises(ScenarioError, match="pipe.toml: not a regular file"):
            load_scenario(tmp_path / "pipe.toml")
    (tmp_path / "bom.toml").write_bytes("\ufeff".encode() + GOOD.encode())  # Notepad's BOM
    assert load_scenario(tmp_path / "bom.toml").name == "tiny"


def test_prompts_hash_changes_with_any_text(tmp_path):
    first = prompts_sha256([load_scenario(write(tmp_path, "a.toml", GOOD))])
    again = prompts_sha256([load_scenario(write(tmp_path, "a.toml", GOOD))])
    edited = prompts_sha256([load_scenario(write(tmp_path, "a.toml", GOOD.replace("abc", "abd")))])
    assert first == again != edited


def provenance_oracle(prompt, output, min_span):
    """The same parse by brute force over every start and length (independent of _longest)."""
    labels, i = [], 0
    while i < len(output):
        best_prompt = best_output = 0
        for n in range(1, len(output) - i + 1):
            piece = output[i : i + n]
            if any(prompt[j : j + n] == piece for j in range(len(prompt) - n + 1)):
                best_prompt = n
            if any(output[j : j + n] == piece for j in range(i)):
                best_output = n
        span = max(best_prompt, best_output)
        if span >= min_span:
            labels += ["prompt" if best_prompt >= best_output else "loop"] * span
            i += span
        else:
            labels.append("new")
            i += 1
    return labels


def test_provenance_examples():
    prompt = list(b"def add(a, b):\n    return a + b\n")
    copied = list(b"    return a + b\n")
    assert output_provenance(prompt, copied, min_span=8) == ["prompt"] * len(copied)
    loop = list(b"xyz!" * 6)  # the first period is new, the rest repeats it
    labels = output_provenance(prompt, loop, min_span=8)
    assert labels == ["new"] * 4 + ["loop"] * 20
    assert provenance_fractions(labels) == {"prompt": 0.0, "loop": 20 / 24, "new": 4 / 24}
    assert output_provenance(prompt, [], 8) == []
    assert provenance_fractions([]) == {"prompt": 0.0, "loop": 0.0, "new": 0.0}


def test_provenance_matches_brute_force_on_random_sequences():
    rng = np.random.default_rng(3)
    for _ in range(60):
        alphabet = int(rng.integers(2, 5))
        prompt = rng.integers(0, alphabet, int(rng.integers(0, 30))).tolist()
        output = rng.integers(0, alphabet, int(rng.integers(0, 40))).tolist()
        if rng.random() < 0.5 and prompt:  # splice in a copy of the prompt
            start = int(rng.integers(0, len(prompt)))
            output[5:5] = prompt[start : start + 12]
        min_span = int(rng.integers(2, 7))
        assert output_provenance(prompt, output, min_span) == provenance_oracle(
            prompt, output, min_span
        )


def test_prompts_readme_says_where_copy_heavy_stands_in_the_saved_report():
    """data/prompts/README.md: where copy-heavy and counting stand among the scenarios in the
    saved report, read from data/bench/decode.json."""
    import json

    from speclab.paths import data_dir

    readme = " ".join((prompts_dir() / "README.md").read_text(encoding="utf-8").split())
    assert (
        "with the lookup drafter, copy-heavy's speedup is below structured's at every k" in readme
    )
    report = json.loads((data_dir() / "bench" / "decode.json").read_text(encoding="utf-8"))
    rows = [r for r in report["results"] if r["drafter"] == "lookup" and not r["adaptive"]]
    speedup = {(r["scenario"], r["k"]): r["speedup"] for r in rows}
    ks = sorted({k for _, k in speedup})
    assert ks == [1, 2, 4, 8]
    scenarios = ("copy-heavy", "structured", "counting", "free text")
    highest = {k: max(scenarios, key=lambda s: speedup[s, k]) for k in ks}
    if set(highest.values()) == {"counting"}:
        assert "and counting's is the highest of the four at every k" in readme
        second = max((s for s in scenarios if s != "counting"), key=lambda s: speedup[s, 1])
        margin = speedup["counting", 1] - speedup[second, 1]
        said = f"(at k = 1 by less than 0.01 over {second}'s)" in readme
        assert said == (margin < 0.01), (second, margin)
    else:
        ks_counting = [k for k in ks if highest[k] == "counting"]
        at = ", ".join(map(str, ks_counting))
        assert f"counting's is the highest of the four at k = {at}" in readme, highest
    for k in ks:
        assert speedup["copy-heavy", k] < speedup["structured", k], k


def test_a_prompt_file_nested_too_deeply_is_one_error(tmp_path):
    deep = write(tmp_path, "deep.toml", "x = " + "[" * 100_000 + "]" * 100_000 + "\n")
    with pytest.raises(ScenarioError, match="deep.toml: not valid TOML"):
        load_scenario(deep)


def test_pick_free_text_writes_only_its_own_ranking(tmp_path):
    """benchmarks/pick_free_text.py --out: never the candidates, another file or a link's target."""
    import subprocess
    import sys

    from benchmark_scripts import FOLDER, load

    pick = load("pick_free_text")
    candidates = tmp_path / "candidates.toml"
    candidates.write_text("kept", encoding="utf-8")
    precious = tmp_path / "precious.csv"
    precious.write_text("name,mark\nalice,9\n", encoding="utf-8")
    (tmp_path / "link.csv").symlink_to(precious)
    (tmp_path / "ranking.csv").write_text(",".join(pick.FIELDS) + "\r\nx,1,0,0,y\r\n", "utf-8")
    problems = {
        name: pick.out_problem(tmp_path / name, candidates)
        for name in ("candidates.toml", "precious.csv", "link.csv", "ranking.txt", "ranking.csv",
                     "new.csv")
    }  # fmt: skip
    assert "is a symbolic link" in problems["link.csv"]
    assert "not a ranking this script wrote; it is left as it is" in problems["precious.csv"]
    assert "give a name ending in .csv" in problems["ranking.txt"]
    assert "give a name ending in .csv" in problems["candidates.toml"]
    assert problems["ranking.csv"] is None and problems["new.csv"] is None
    (tmp_path / "same.csv").symlink_to(candidates)  # the candidates under a .csv name
    assert "symbolic link" in pick.out_problem(tmp_path / "same.csv", candidates)
    if hasattr(os, "mkfifo"):  # reading a pipe's first line would wait forever
        os.mkfifo(tmp_path / "fifo.csv")
        assert "is a pipe or a device" in pick.out_problem(tmp_path / "fifo.csv", candidates)
    run = subprocess.run(
        [sys.executable, str(FOLDER / "pick_free_text.py"), "--candidates", str(precious),
         "--out", str(precious)],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert run.returncode == 2 and "Traceback" not in run.stderr
    assert "is the --candidates file" in run.stderr.splitlines()[-1]
    too_long = tmp_path / ("x" * 250 + ".csv")  # found before the decoding, not after it
    run = subprocess.run([sys.executable, str(FOLDER / "pick_free_text.py"), "--out", str(too_long)],
                         capture_output=True, text=True, timeout=120)  # fmt: skip
    assert run.returncode == 1 and "cannot write a file of that name" in run.stderr
    assert "target:" not in run.stdout
    assert precious.read_text(encoding="utf-8") == "name,mark\nalice,9\n"


def test_pick_free_text_checks_every_candidate_before_decoding_or_making_a_folder(tmp_path):
    """A candidate too long for the context is one line naming the file and the prompt, at
    once (not after the earlier candidates are decoded), and no --out folder is left behind."""
    import subprocess
    import sys

    from benchmark_scripts import FOLDER

    candidates = tmp_path / "late.toml"
    prompt = '[[prompts]]\nid = "{}"\nsource = "written for the project"\ntext = "def f():"\n'
    candidates.write_text(
        'name = "x"\ndescription = "y"\n' + prompt.format("a") + "max_new_tokens = 300\n"
        + prompt.format("b") + "max_new_tokens = 5000\n", encoding="utf-8",
    )  # fmt: skip
    out = tmp_path / "new" / "sub" / "ranking.csv"
    run = subprocess.run(
        [sys.executable, str(FOLDER / "pick_free_text.py"), "--candidates", str(candidates),
         "--out", str(out)],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert run.returncode != 0 and "Traceback" not in run.stderr, run.stderr
    assert "late.toml: prompt 'b'" in run.stderr and "context window" in run.stderr
    assert not (tmp_path / "new").exists()


def test_pick_free_text_interrupted_while_decoding_leaves_no_folder_it_made(tmp_path, monkeypatch):
    """Ctrl-C during the decoding (here: rank raising KeyboardInterrupt) removes the --out
    folders the script made for its ranking, as `speclab bench` does."""
    import sys

    from benchmark_scripts import load

    pick = load("pick_free_text")

    def interrupted(model, scenario):
        assert (tmp_path / "new" / "sub").is_dir()  # made before the decoding, as it should be
        raise KeyboardInterrupt

    monkeypatch.setattr(pick, "rank", interrupted)
    out = tmp_path / "new" / "sub" / "ranking.csv"
    monkeypatch.setattr(sys, "argv", ["pick_free_text.py", "--out", str(out)])
    with pytest.raises(KeyboardInterrupt):
        pick.main()
    assert not (tmp_path / "new").exists()


def test_a_prompts_folder_that_cannot_be_listed_is_not_called_empty(tmp_path, refuse_to_list):
    """It was reported as 'no scenario files (*.toml)' while holding them."""
    from pathlib import Path

    from speclab.scenarios import ScenarioError

    locked = tmp_path / "prompts"
    locked.mkdir()
    for path in Path(prompts_dir()).glob("*.toml"):
        (locked / path.name).write_bytes(path.read_bytes())
    assert load_scenarios(locked)  # readable: the copies load
    refuse_to_list(locked)
    with pytest.raises(
        ScenarioError, match=r"prompts: folder cannot be listed \(Permission denied\)"
    ):
        load_scenarios(locked)


def test_a_file_too_big_to_hold_prompts_is_refused_before_it_is_read(tmp_path):
    """A 1 GB file took 2 GB of memory and seconds before 'not valid TOML'; the limit is far
    above any scenario (the shipped ones: a few kB), and a file at it is read as usual."""
    from speclab.scenarios import MAX_SCENARIO_BYTES

    at_the_limit = GOOD + "#" * (MAX_SCENARIO_BYTES - len(GOOD.encode()) - 1) + "\n"
    path = write(tmp_path, "big.toml", at_the_limit)
    assert path.stat().st_size == MAX_SCENARIO_BYTES and load_scenario(path).name == "tiny"
    write(tmp_path, "big.toml", at_the_limit + "\n")
    with pytest.raises(ScenarioError, match=f"big.toml: {MAX_SCENARIO_BYTES + 1:,} bytes"):
        load_scenario(path)
