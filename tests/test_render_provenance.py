"""provenance_html: lesson 06's copied / loop / new labels shown on the output's text."""

import html
import re

import pytest

from speclab.decode_reports import load_report
from speclab.render import provenance_html
from speclab.scenarios import output_provenance
from speclab.tokenizer import encode


def _runs(block: str) -> list[tuple[str, str]]:
    """(label, text) for each run of the block's text, "new" for unmarked text."""
    body = re.search(r"<pre[^>]*>(.*?)</pre>", block, re.S).group(1)
    runs = []
    for marked, label, text, plain in re.findall(
        r"(<span class='speclab-(\w+)'[^>]*>(.*?)</span>)|([^<]+)", body, re.S
    ):
        runs.append((label, html.unescape(text)) if marked else ("new", html.unescape(plain)))
    return runs


def test_each_byte_is_shown_once_with_its_label():
    prompt = encode("def area(width, height):\n    return width * height\n")
    output = encode("    return width * height\nx = 1 < 2\nx = 1 < 2\nx = 1 < 2\nx = 1 < 2\n")
    labels = output_provenance(prompt, output, min_span=8)
    assert {"prompt", "loop", "new"} <= set(labels)  # the example shows all three
    runs = _runs(provenance_html(output, labels))
    assert "".join(text for _, text in runs) == bytes(output).decode()  # < escaped, not lost
    by_byte = [label for label, text in runs for _ in text.encode()]
    assert by_byte == labels


def test_a_split_character_takes_its_last_byte_s_label():
    output = encode("é!")  # two bytes for é
    runs = _runs(provenance_html(output, ["new", "prompt", "prompt"]))
    assert runs == [("prompt", "é!")]


@pytest.mark.parametrize("labels", [["new"], ["new", "new", "copied"]])
def test_labels_must_match_the_output(labels):
    with pytest.raises(ValueError, match="one label per output token"):
        provenance_html(encode("ab!"), labels)


def test_the_saved_reports_outputs_give_back_its_shares():
    """Notebook 06 labels the saved report's outputs (text) again to show them: the labels
    must be the ones the report counted, per prompt."""

    from speclab.paths import data_dir
    from speclab.scenarios import load_scenarios, provenance_fractions

    report = load_report(data_dir() / "bench" / "decode.json")
    prompts = {f"{s.name} / {p.id}": p.text for s in load_scenarios() for p in s.prompts}
    min_span = report["settings"]["min_span"]
    for name, text in report["outputs"].items():
        assert "\ufffd" not in text, name  # bytes that were not UTF-8 could not be rebuilt
        labels = output_provenance(encode(prompts[name]), encode(text), min_span)
        assert provenance_fractions(labels) == report["provenance_per_prompt"][name], name
