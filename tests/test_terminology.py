"""One word per idea across the English text a learner reads: handouts, keys, the teacher
guide, the glossary, notebooks, the README and the package's own strings (CLI output,
figure labels, docstrings).

accepted drafts m ("accepted length" in the glossary); tokens per round m + 1 (engines'
"mean accepted length", named only in quotes); drafts after the first mismatch are
*dropped* and the KV cache is *rolled back* (never "wiped"); nothing cites "one source"
the learner has not seen.
"""

import json
import re

import pytest

from speclab.paths import repo_root

ROOT = repo_root()
BANNED = {
    r"\bwip(e|ed|es|ing)\b": "say dropped (drafts) or rolled back (the cache)",
    r'(?<!")\bmean accepted length\b': 'say tokens per round (engines\' "mean accepted length" in quotes)',
    r"\bone source\b": "a source the learner never saw",
    r"\broll(ed)?-back\b": "say rolled back or rollback",
    r"nothing \(end of the path\)": 'say "none (end)", as the tables and keys do',
    r"(?i)\bsquares advanced\b|\byou advance\b": 'say "squares moved", "you move", as lesson 01 does',
}


def english_texts() -> list[tuple[str, str]]:
    paths = [
        *sorted((ROOT / "lessons").glob("*.md")),
        *sorted((ROOT / "lessons" / "answers").glob("*.md")),
        ROOT / "README.md",
        *sorted((ROOT / "docs").glob("*.md")),
        *sorted((ROOT / "src" / "speclab").rglob("*.py")),
    ]
    texts = [(p.relative_to(ROOT).as_posix(), p.read_text(encoding="utf-8")) for p in paths]
    for notebook in sorted((ROOT / "notebooks").glob("*.ipynb")):  # the English ones
        cells = json.loads(notebook.read_text(encoding="utf-8"))["cells"]
        texts.append((notebook.name, "\n".join("".join(c["source"]) for c in cells)))
    return texts


@pytest.mark.parametrize("pattern", BANNED)
def test_one_word_per_idea(pattern):
    found = [
        f"{name}: {match.group(0)!r}"
        for name, text in english_texts()
        for match in re.finditer(pattern, " ".join(text.split()), flags=re.I)
    ]
    assert not found, f"{BANNED[pattern]}:\n" + "\n".join(found)


def test_the_glossary_tells_accepted_drafts_from_tokens_per_round():
    rows = (ROOT / "lessons" / "glossary.md").read_text(encoding="utf-8").splitlines()
    accepted = next(row for row in rows if row.startswith("| accepted length |"))
    per_round = next(row for row in rows if row.startswith("| tokens per round |"))
    assert "(m)" in accepted and "m + 1" in per_round
    assert '"mean accepted length"' in per_round


def test_the_banned_words_are_found_where_they_stand():
    text = " ".join('The rest is wiped; the mean accepted length; "mean accepted length"'.split())
    assert re.search(r"\bwip(e|ed|es|ing)\b", text)
    assert len(re.findall(r'(?<!")\bmean accepted length\b', text)) == 1


def test_the_checkers_translated_headers_are_the_glossarys_words_or_shortened_from_them():
    """The glossary: check-guesses uses its words, "only the checker's column headers ...
    shorten the longer ones (追加 for 目标模型追加的词元, ...)"."""
    from speclab.exercises import TABLE_HEADER
    from speclab.i18n import translator

    rows = (ROOT / "lessons" / "glossary.md").read_text(encoding="utf-8").splitlines()
    cells = {row.split("|")[1].strip(): row.split("|") for row in rows if row.startswith("| ")}
    glossary_row = {"prefix": "prefix", "guess": "draft", "accepted": "accept",
                    "added": "added by the target", "output": "new output"}  # fmt: skip
    assert set(glossary_row) < set(TABLE_HEADER)
    for column, lang in ((3, "zh"), (4, "fa")):
        said = translator(lang).gettext
        for header, term in glossary_row.items():
            assert said(header) in cells[term][column], (lang, header, said(header))
    intro = " ".join(rows[:12])
    assert "追加 for 目标模型追加的词元" in intro and translator("zh").gettext("added") == "追加"
    assert "<bdi>افزوده</bdi> for <bdi>افزودهٔ هدف</bdi>" in intro
    assert translator("fa").gettext("added") == "افزوده"
