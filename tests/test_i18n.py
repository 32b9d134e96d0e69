"""Tests for speclab.i18n: language choice, the catalogues, and what lessons 01-03 show in zh/fa.

The catalogues are checked against the code itself: every message the code marks (an
ast walk over the modules that show lessons 01-03) has a translation in each language,
with the same {placeholders}, and no catalogue keeps a message the code no longer uses.
"""

import ast
import gettext
import hashlib
import io
import os
import re
import subprocess
import sys
import tomllib
import warnings

import pytest

from speclab.acceptance import InvalidGuess, verify_on_path
from speclab.cli import main
from speclab.exercises import GuessFileError, check_guesses, explain_invalid
from speclab.figures.style import matplotlib_shapes_text
from speclab.guesses_report import format_report
from speclab.i18n import (
    LANGUAGES,
    LOCALE_DIR,
    Message,
    catalogue_path,
    mo_bytes,
    persian_digits,
    prose_number,
    read_po,
    resolve,
    translator,
)
from speclab.paths import data_dir, repo_root

PACKAGE = repo_root() / "src" / "speclab"
# The modules whose every shown string goes through the catalogue.
TRANSLATED_MODULES = (
    "cli.py",
    "command_parser.py",
    "exercises.py",
    "guess_rows.py",
    "guesses_report.py",
    "student_files.py",
    "widgets/symbolic.py",
    "argparse_words.py",
    "figures/symbolic.py",
)
TRANSLATIONS = [lang for lang in LANGUAGES if lang != "en"]
LOCALE_VARIABLES = ("LANGUAGE", "LC_ALL", "LC_MESSAGES", "LANG")


@pytest.fixture(autouse=True)
def english_environment(monkeypatch):
    for variable in LOCALE_VARIABLES:
        monkeypatch.delenv(variable, raising=False)


def used_msgids() -> set[str]:
    """Every string passed to _(), N_(), gettext(), ngettext()/n_()/plural() in the modules."""
    found = set()
    for name in TRANSLATED_MODULES:
        tree = ast.parse((PACKAGE / name).read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if not isinstance(node, ast.Call):
                continue
            func = node.func
            called = func.id if isinstance(func, ast.Name) else getattr(func, "attr", None)
            texts = [
                arg.value
                for arg in node.args
                if isinstance(arg, ast.Constant) and isinstance(arg.value, str)
            ]
            if called in ("_", "N_", "gettext") and texts:
                found.add(texts[0])
            elif called in ("ngettext", "n_", "plural") and len(texts) >= 2:
                found.add(texts[0] + "\0" + texts[1])
    return found


def placeholders(text: str) -> set[str]:
    return {field for _, field, _, _ in __import__("string").Formatter().parse(text) if field}


# --- choosing the language ---------------------------------------------------------------


def test_the_argument_wins_and_unknown_languages_are_refused(monkeypatch):
    monkeypatch.setenv("LANG", "zh_CN.UTF-8")
    assert resolve("fa") == "fa" and resolve("fa_IR.UTF-8") == "fa" and resolve("EN") == "en"
    with pytest.raises(ValueError, match="unknown language 'de'.*en, zh, fa"):
        resolve("de")


@pytest.mark.parametrize(
    ("environment", "expected"),
    [
        ({}, "en"),
        ({"LANG": "C.UTF-8"}, "en"),
        ({"LANG": "fa_IR.UTF-8"}, "fa"),
        ({"LANG": "zh_CN.UTF-8", "LC_MESSAGES": "fa_IR"}, "fa"),
        ({"LANG": "fa_IR", "LC_ALL": "zh_TW.UTF-8"}, "zh"),
        ({"LANGUAGE": "de:fa:en", "LANG": "zh_CN"}, "fa"),  # the first of ours in the list
        ({"LANGUAGE": "de", "LANG": "zh_CN"}, "zh"),
        ({"LC_ALL": "de_DE.UTF-8", "LANG": "fa_IR"}, "en"),  # gettext stops at LC_ALL
    ],
)
def test_the_environment_as_gettext_reads_it(monkeypatch, environment, expected):
    for variable, value in environment.items():
        monkeypatch.setenv(variable, value)
    assert resolve() == expected


# --- the catalogues ----------------------------------------------------------------------


def test_the_catalogues_ship_with_the_package():
    for lang in TRANSLATIONS:
        assert catalogue_path(lang).is_file()
        assert catalogue_path(lang).parent.parent.parent == LOCALE_DIR
    pattern = tomllib.loads((repo_root() / "pyproject.toml").read_text("utf-8"))["tool"][
        "setuptools"
    ]["package-data"]["speclab"]
    shipped = {path for glob in pattern for path in PACKAGE.glob(glob)}
    assert shipped == {catalogue_path(lang) for lang in TRANSLATIONS}


@pytest.mark.parametrize("lang", TRANSLATIONS)
def test_every_message_the_code_shows_is_translated(lang):
    entries = read_po(catalogue_path(lang).read_text(encoding="utf-8"))
    header = entries.pop("")
    assert f"Language: {lang}" in header[0] or f"Language: {lang}_" in header[0]
    used = used_msgids()
    assert len(used) > 100  # the walk found the code's messages
    assert sorted(used - set(entries)) == [], "untranslated: add them to the catalogue"
    assert sorted(set(entries) - used) == [], "the code no longer uses these"
    for msgid, forms in entries.items():
        assert all(form.strip() for form in forms), f"empty translation of {msgid!r}"
        for form in forms:
            assert placeholders(form) == placeholders(msgid.split("\0")[0]), (msgid, form)


def test_the_in_memory_mo_is_what_gettext_reads():
    entries = {
        "": ["Plural-Forms: nplurals=2; plural=(n > 1);\n"],
        "a": ["b"],
        "x\0xs": ["y", "ys"],
    }
    catalogue = gettext.GNUTranslations(io.BytesIO(mo_bytes(entries)))
    assert catalogue.gettext("a") == "b" and catalogue.gettext("missing") == "missing"
    assert catalogue.ngettext("x", "xs", 1) == "y" and catalogue.ngettext("x", "xs", 2) == "ys"


def test_read_po_reads_continued_lines_escapes_and_plurals():
    text = (
        '# comment\nmsgid ""\nmsgstr "Language: fa\\n"\n\n'
        'msgid "a "\n"b\\n\\"c\\""\nmsgstr "x"\n\n'
        'msgid "one"\nmsgid_plural "many"\nmsgstr[0] "1"\nmsgstr[1] "2"\n'
    )
    assert read_po(text) == {"": ["Language: fa\n"], 'a b\n"c"': ["x"], "one\0many": ["1", "2"]}
    with pytest.raises(ValueError, match="line 2"):
        read_po('msgid "a"\nmsgstr "unclosed\n')


def test_a_message_is_english_text_and_translates_later():
    message = Message("{name}: no such file", {"name": "a.csv"})
    assert message == "a.csv: no such file" and isinstance(message, str)
    assert message.text(translator("fa")) == "a.csv: چنین پرونده‌ای نیست"


def test_persian_digits():
    assert persian_digits("3 of 10, k = 4") == "۳ of ۱۰, k = ۴"


def test_a_persian_prose_number_has_the_handouts_separators():
    # The Persian keys write 0.56 as ۰٫۵۶ (tests/test_i18n_lessons.py calls ۰.۹۷ a slip),
    # and a thousands separator is the Arabic ٬, not a Latin comma.
    assert prose_number(f"{0.5625:.2f}", "fa") == "۰٫۵۶"
    assert prose_number(f"{336304:,}", "fa") == "۳۳۶٬۳۰۴"
    assert prose_number(6, "fa") == "۶"
    assert prose_number(f"{5670.25:,}", "zh") == "5,670.25" == prose_number("5,670.25", "en")


# --- the checker in Persian and Chinese --------------------------------------------------

FA_HEADER = ["ردیف", "پیشوند", "حدس", "پذیرفته", "افزوده", "خروجی", "انتظار", "نتیجه"]
ZH_HEADER = ["行", "前缀", "猜测", "接受", "追加", "输出", "预期", "结果"]


@pytest.mark.parametrize(("lang", "header"), [("fa", FA_HEADER), ("zh", ZH_HEADER)])
def test_the_row_by_row_table_in_the_learners_language(capsys, lang, header):
    path = data_dir() / "guesses.csv"
    before = hashlib.sha256(path.read_bytes()).hexdigest()
    status = main(["check-guesses", "--lang", lang, str(path)])
    out = capsys.readouterr().out
    assert status == 0
    lines = out.splitlines()
    assert lines[1].split() == header
    rows = [line.split()[0] for line in lines[2:] if line[:1].isdigit()]
    assert rows == [str(n) for n in range(2, 11)]  # as the spreadsheet numbers them
    right, wrong = ("درست", "نادرست") if lang == "fa" else ("对", "错")
    row_6 = next(line for line in lines if line.startswith("6 "))
    assert row_6.split()[-1] == wrong and lines[2].split()[-1] == right
    assert "score" not in out and "row" not in out and "expected outputs" not in out
    assert hashlib.sha256(path.read_bytes()).hexdigest() == before  # only ever read


BAD_ROWS = (
    "prefix,guess,expected_output\n"
    ",,\n"  # row 2: blank -> skipped
    ",abx,\n"  # row 3
    "ABD,E,\n"  # row 4
    "ABCD,EFGH,\n"  # row 5
    ",A۱C,\n"  # row 6: a Persian digit
    ",ABC,١٢\n"  # row 7: Arabic-Indic digits
    ",AB،C,\n"  # row 8: a Persian comma inside a cell
    "ABCDEFG,A,\n"  # row 9
    ",ABX,ABC\n"  # row 10: valid
    ",ABX,abc\n"  # row 11: lower case where the checker expects capitals
)
EXPECTED = {
    "fa": {
        3: "حدس 'abx' در جایگاه 1 حرف کوچک 'a'",  # the column named as the table names it
        4: "پیشوندِ مسیر ABCDEFG نیست",
        5: "فقط 3 حرف مانده است",
        6: "رقم فارسی '۱'",
        7: "خروجی مورد انتظار '١٢' در جایگاه 1 رقم عربی '١'",
        8: "نویسهٔ فارسی «،»",
        9: "همین حالا کل مسیر",
        11: "خروجی مورد انتظار 'abc' حرف کوچک دارد",
    },
    "zh": {
        3: "猜测 'abx' 在第 1 位有小写字母 'a'",
        4: "不是路径 ABCDEFG 的前缀",
        5: "只剩 3 个",
        6: "波斯文数字 '۱'",
        7: "预期输出 '١٢' 在第 1 位有阿拉伯-印度数字 '١'",
        8: "波斯文的“،”",
        9: "已经是整条路径",
        11: "预期输出 'abc' 有小写字母",
    },
}
ROW_WORD = {"fa": "ردیف {row}: ", "zh": "第 {row} 行："}


@pytest.mark.parametrize("lang", TRANSLATIONS)
def test_bad_rows_are_named_by_row_in_the_learners_language(tmp_path, lang):
    path = tmp_path / "student.csv"
    path.write_text(BAD_ROWS, encoding="utf-8")
    frame = check_guesses(path, lang=lang)
    errors = dict(zip(frame["row"], frame["error"], strict=True))
    assert errors[10] == ""
    for row, phrase in EXPECTED[lang].items():
        assert phrase in errors[row], (row, errors[row])
    report = format_report(frame, "student.csv", lang=lang)
    for row in EXPECTED[lang]:
        assert any(line.startswith(ROW_WORD[lang].format(row=row)) for line in report.splitlines())
    assert "\\u200c" not in report  # Persian joiners are letters here, not escaped


@pytest.mark.parametrize("lang", LANGUAGES)
def test_the_table_lines_up_with_an_empty_guess_in_every_language(tmp_path, lang):
    """An empty guess was measured as "(empty)" but shown as "(blank)": in Persian the longer
    word pushed that row's later columns out of line with the header."""
    from speclab.guesses_report import Words, _display_width

    path = tmp_path / "student.csv"
    path.write_text("prefix,guess,expected_output\n,ABX,ABC\n,,A\nAB,C,\n", encoding="utf-8")
    report = format_report(check_guesses(path, lang=lang), "student.csv", lang=lang)
    words = Words(translator(lang))
    lines = report.splitlines()[1:5]  # the header and the three rows
    last = (words.header[-1], words.problem, words.right, words.wrong, "-")
    starts = set()
    for line in lines:
        end = next(word for word in last if line.endswith(word))
        starts.add(_display_width(line) - _display_width(end))  # where the last column starts
    assert len(starts) == 1, report


@pytest.mark.parametrize("lang", TRANSLATIONS)
def test_the_command_in_a_subprocess_never_shows_a_traceback(tmp_path, lang):
    bad = tmp_path / "comma.csv"
    bad.write_text("prefix،guess،expected_output\n،ABC،\n", encoding="utf-8")
    digits = tmp_path / "digits.csv"
    digits.write_text(BAD_ROWS, encoding="utf-8")
    result = subprocess.run(
        [sys.executable, "-m", "speclab", "check-guesses", "--lang", lang, str(bad), str(digits)],
        capture_output=True,
        text=True,
        encoding="utf-8",
        timeout=120,
        env={"PYTHONIOENCODING": "utf-8", "PATH": "/usr/bin:/bin"},
    )
    assert result.returncode == 1
    assert "Traceback" not in result.stderr + result.stdout
    assert "،" in result.stderr and ("Persian" not in result.stderr)
    assert ("فارسی" if lang == "fa" else "波斯文") in result.stderr
    assert ("خلاصه" if lang == "fa" else "汇总") in result.stdout


def test_file_errors_in_the_learners_language(tmp_path):
    with pytest.raises(GuessFileError) as caught:
        check_guesses(tmp_path / "missing.csv", lang="fa")
    assert caught.value.message.text(translator("fa")).endswith("چنین پرونده‌ای نیست")
    assert str(caught.value).endswith("no such file")  # the exception itself stays English


def test_persian_and_chinese_headers_are_the_english_columns(tmp_path):
    for header in ("پیشوند قبلی,حدس,خروجی مورد انتظار", "前缀,猜测,预期输出"):
        path = tmp_path / "h.csv"
        path.write_text(f"{header}\n,ABX,ABC\nABCD,EFG,ABCDEFG\n", encoding="utf-8")
        frame = check_guesses(path)
        assert frame["output"].tolist() == ["ABC", "ABCDEFG"]
        assert frame["matches"].tolist() == [True, True]


def test_an_unknown_language_is_a_usage_error(capsys):
    with pytest.raises(SystemExit) as caught:
        main(["check-guesses", "--lang", "de", str(data_dir() / "guesses.csv")])
    assert caught.value.code == 2 and "invalid choice: 'de'" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("argv", "environment", "said"),
    [
        (["--lang", "zh"], {}, "speclab check-guesses: 错误：缺少必需的参数：FILE"),
        (["--lang=fa"], {}, "speclab check-guesses: خطا: این آرگومان‌ها لازم‌اند: FILE"),
        (["--la", "zh", ""], {}, "错误：参数 FILE：文件名是空的：请写出文件或文件夹的名字"),
        (["--lang", "de", "a.csv"], {"LANG": "zh_CN.UTF-8"}, "错误：参数 --lang：无效的选择 'de'"),
        (["--bogus", "a.csv"], {"LANG": "fa_IR.UTF-8"}, "خطا: آرگومان‌های ناشناخته: \u200e--bogus"),
        (["--lang", "zh", "a.csv", "--lang"], {}, "错误：参数 --lang 后面需要一个值"),
    ],
)
def test_check_guesses_refuses_an_argument_in_the_learners_language(
    monkeypatch, capsys, argv, environment, said
):
    """Lesson 02 in Chinese and Persian has students type `speclab check-guesses --lang zh
    data/maria.csv`: a slip there (the file left out) was answered in English alone."""
    for variable, value in environment.items():
        monkeypatch.setenv(variable, value)
    with pytest.raises(SystemExit) as caught:
        main(["check-guesses", *argv])
    err = capsys.readouterr().err
    assert caught.value.code == 2 and said in err, err
    assert err.startswith("用法：" if "错误" in said else "کاربرد: ")


@pytest.mark.parametrize(
    ("lang", "words"),
    [
        ("zh", ["用法：speclab check-guesses", "位置参数：", "选项：", "显示本帮助并退出",
                "每个学生只显示一行汇总", "退出状态：0 每个文件都有效"]),
        ("fa", ["کاربرد: speclab check-guesses", "آرگومان‌های جایگاهی:", "گزینه‌ها:",
                "نمایش این راهنما و خروج", "فقط خلاصهٔ یک‌سطری هر دانش‌آموز", "وضعیت خروج: 0"]),
    ],
)  # fmt: skip
def test_check_guesses_help_in_the_learners_language(capsys, lang, words):
    with pytest.raises(SystemExit) as caught:
        main(["check-guesses", "--lang", lang, "--help"])
    out = " ".join(capsys.readouterr().out.split())  # argparse wraps lines
    assert caught.value.code == 0 and all(" ".join(w.split()) in out for w in words), out


def test_only_check_guesses_and_only_in_zh_or_fa_changes_argparses_words(monkeypatch, capsys):
    """The other commands serve lessons 04-07, written in English; an English run is as
    argparse writes it."""
    from speclab import argparse_words
    from speclab.cli import SUBCOMMANDS, path_argument

    monkeypatch.setenv("LANG", "zh_CN.UTF-8")
    with pytest.raises(SystemExit):
        main(["demo", "--k", "0x"])
    assert "error: argument --k: invalid int value" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["check-guesses", "--lang", "en"])
    assert capsys.readouterr().err.startswith("usage: ")
    # the catalogue's English is the code's
    assert SUBCOMMANDS["check-guesses"][1] == argparse_words.DESCRIPTION
    with pytest.raises(Exception, match=re.escape(argparse_words.EMPTY_PATH)):
        path_argument(" ")


def test_the_environment_chooses_the_report_language(monkeypatch, capsys):
    monkeypatch.setenv("LANG", "zh_CN.UTF-8")
    main(["check-guesses", str(data_dir() / "guesses.csv")])
    assert "得分" in capsys.readouterr().out
    monkeypatch.setenv("LANGUAGE", "fa")
    main(["check-guesses", str(data_dir() / "guesses.csv")])
    assert "امتیاز" in capsys.readouterr().out


INVALID = [
    ("", ""),
    ("", "abx"),
    ("", "A?C"),
    ("", "A C"),
    ("ab", "C"),
    ("ABD", "E"),
    ("ABCDEFG", "A"),
    ("ABCD", "EFGH"),
    ("", "ABCDEFGH"),
    ("A1", "B"),
    ("", "ＡＢＸ"),  # a Chinese input method in full-width mode
    ("ａ", "B"),
    ("", "aＢ"),
]


@pytest.mark.parametrize(("prefix", "guess"), INVALID)
def test_the_explained_rule_is_the_rule_of_verify_on_path(prefix, guess):
    """English: word for word verify_on_path's message; zh and fa: a translation of it."""
    with pytest.raises(InvalidGuess) as caught:
        verify_on_path(prefix, guess)
    assert explain_invalid(prefix, guess, lang="en") == str(caught.value)
    for lang in TRANSLATIONS:
        translated = explain_invalid(prefix, guess, lang=lang)
        assert translated and translated != str(caught.value)
    assert explain_invalid("AB", "CDX", lang="fa") == ""


# --- widgets and figures -----------------------------------------------------------------

ENGLISH_WORD = re.compile(r"\b(?![A-Z]+\b)[A-Za-z]{3,}\b")  # capitals alone are path symbols


def shown_texts(widget) -> list[str]:
    """Everything a widget shows as text: labels, placeholders, HTML without its markup."""
    texts = []
    for child in widget.box.children:
        for attribute in ("description", "placeholder", "value"):
            value = getattr(child, attribute, None)
            if isinstance(value, str):
                texts.append(re.sub(r"<style>.*?</style>|<[^>]+>|&\w+;", " ", value))
    return texts


def make_widgets(lang):
    from speclab.widgets import PathExplorer, QuizGame, SpeedupExplorer

    return [
        QuizGame(lang=lang),
        QuizGame(answers=("8", "56", "6", "90"), lang=lang),
        PathExplorer(lang=lang),
        PathExplorer(prefix="AB", guess="cx", lang=lang),
        PathExplorer(prefix="ABCD", guess="EFG", lang=lang),
        SpeedupExplorer(n_rounds=200, lang=lang),
    ]


@pytest.mark.parametrize("lang", TRANSLATIONS)
def test_widgets_show_no_untranslated_english(lang):
    for widget in make_widgets(lang):
        for text in shown_texts(widget):
            assert not ENGLISH_WORD.search(text), (type(widget).__name__, text)
    assert "speclab-rtl" in make_widgets(lang)[0].box._dom_classes or lang != "fa"


def test_the_english_widget_check_can_fail():
    texts = [t for w in make_widgets("en") for t in shown_texts(w)]
    assert any(ENGLISH_WORD.search(text) for text in texts)
    assert "speclab-rtl" not in make_widgets("en")[0].box._dom_classes


@pytest.mark.parametrize("lang", TRANSLATIONS)
def test_widget_sentences_carry_language_and_direction(lang):
    from speclab.widgets import PathExplorer

    explorer = PathExplorer(lang=lang)
    direction = "rtl" if lang == "fa" else "ltr"
    assert f"lang='{lang}' dir='{direction}'" in explorer.text.value
    explorer.guess.value = "ax"  # invalid: the message, in the widget's language
    shown = re.sub(r"<[^>]+>|&\w+;|&#x27;", " ", explorer.text.value)
    assert "'a'" in explorer.text.value.replace("&#x27;", "'")
    assert ENGLISH_WORD.findall(shown) == []
    assert explorer.figure is None


def all_lesson_figures(lang):
    from speclab.figures import (
        check_row_figure,
        draft_verify_figure,
        eq1_figure,
        forwards_per_case_figure,
    )

    return {
        "check_row": check_row_figure("ABX", "ABCD", lang=lang),
        "check_row_end": check_row_figure("EFG", "EFG", prefix="ABCD", lang=lang),
        "draft_verify": draft_verify_figure(4, 2, lang=lang),
        "draft_verify_all": draft_verify_figure(4, 4, lang=lang),
        "forwards_per_case": forwards_per_case_figure((0, 2, 4), lang=lang),
        "eq1": eq1_figure(0.8, 4, 0.05, 3.36, 0.01, lang=lang),
        **{f"widget_{i}": w.figure for i, w in enumerate(make_widgets(lang)) if w.figure},
    }


def test_persian_is_shaped_for_a_matplotlib_that_cannot(monkeypatch):
    from speclab.figures import style

    text = "پذیرش m = 2"
    monkeypatch.setattr(style, "matplotlib_shapes_text", lambda: True)
    assert style.shape(text, "fa") == text  # shaping twice would reverse it again
    monkeypatch.setattr(style, "matplotlib_shapes_text", lambda: False)
    shaped = style.shape(text, "fa")
    assert shaped.startswith("m = 2 ")  # display order: the Persian word goes to the right
    assert re.search("[\ufb50-\ufdff\ufe70-\ufeff]", shaped)  # joined letter forms
    assert style.shape("接受 m = 2", "zh") == "接受 m = 2"


def figure_texts(fig) -> list[str]:
    import matplotlib.text

    return [t.get_text() for t in fig.findobj(matplotlib.text.Text) if t.get_text()]


def skip_without_fonts(lang: str) -> None:
    """A machine without the Noto fonts (README: fonts-noto-cjk, fonts-noto-core) skips, and
    says which to install, unless SPECLAB_REQUIRE_FONTS=1 (as in CI) makes that a failure."""
    from matplotlib import font_manager

    from speclab.figures.style import FONTS, projector_style

    projector_style(lang)  # adds fonts installed since matplotlib's cache was written
    known = {font.name for font in font_manager.fontManager.ttflist}
    missing = [family for family in FONTS[lang] if family not in known]
    if missing:
        message = (
            f"{lang} figures need {', '.join(missing)} (Debian: apt-get install fonts-noto-cjk "
            "fonts-noto-core)"
        )
        if os.environ.get("SPECLAB_REQUIRE_FONTS") == "1":
            pytest.fail(f"{message}; SPECLAB_REQUIRE_FONTS=1 makes a missing font a failure")
        pytest.skip(f"{message}; SPECLAB_REQUIRE_FONTS=1 makes this a failure")


def test_a_missing_font_skips_with_the_packages_named_or_fails_when_required(monkeypatch):
    from speclab.figures import style

    monkeypatch.setitem(style.FONTS, "zh", ["No Such Font 123", "DejaVu Sans"])
    monkeypatch.setitem(style.FONT_FILES, "No Such Font 123", "NoSuchFont123")
    monkeypatch.delenv("SPECLAB_REQUIRE_FONTS", raising=False)
    with pytest.raises(pytest.skip.Exception, match="apt-get install fonts-noto-cjk"):
        skip_without_fonts("zh")
    monkeypatch.setenv("SPECLAB_REQUIRE_FONTS", "1")
    with pytest.raises(pytest.fail.Exception, match="No Such Font 123 .*a failure"):
        skip_without_fonts("zh")
    skip_without_fonts("en")  # DejaVu Sans comes with matplotlib: nothing to skip


@pytest.mark.parametrize("lang", LANGUAGES)
def test_every_lesson_figure_renders_with_no_missing_glyph(lang, caplog):
    """matplotlib only warns about a missing glyph or font; here each warning fails."""
    skip_without_fonts(lang)
    caplog.set_level("WARNING", logger="matplotlib.font_manager")
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # "Glyph ... missing from font(s)" is a UserWarning
        for name, fig in all_lesson_figures(lang).items():
            for form in ("png", "svg"):
                fig.savefig(io.BytesIO(), format=form)
            texts = " ".join(figure_texts(fig))
            if lang == "fa" and matplotlib_shapes_text():  # matplotlib joins and orders itself
                assert re.search("[\u0600-\u06ff]{3}", texts), name
            elif lang == "fa":  # shaped here: presentation forms, never plain letters
                assert re.search("[\ufb50-\ufdff\ufe70-\ufeff]", texts), name
                assert not re.search("[\u0600-\u06ff]", texts), name
            if lang == "zh":
                assert re.search("[\u4e00-\u9fff]", texts), name
    assert not [r for r in caplog.records if "findfont" in r.getMessage()]


def test_the_missing_glyph_check_can_fail():
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots()
    ax.set_title("\u6f22\u5b57")  # Chinese in DejaVu Sans alone
    plt.close(fig)
    with warnings.catch_warnings(), pytest.raises(UserWarning, match="missing from font"):
        warnings.simplefilter("error")
        fig.savefig(io.BytesIO(), format="png")


# --- the translated notebooks ------------------------------------------------------------

NOTEBOOKS = repo_root() / "notebooks"
LESSONS_01_03 = sorted(NOTEBOOKS.glob("0[123]_*.ipynb"))


def cells(path):
    import json

    return json.loads(path.read_text(encoding="utf-8"))["cells"]


@pytest.mark.parametrize("lang", TRANSLATIONS)
def test_each_lesson_01_03_notebook_has_its_translation(lang):
    assert [p.name for p in LESSONS_01_03] == [
        p.name for p in sorted((NOTEBOOKS / lang).glob("*.ipynb"))
    ]


@pytest.mark.parametrize("lang", TRANSLATIONS)
def test_translated_notebooks_speak_their_language(lang):
    for path in sorted((NOTEBOOKS / lang).glob("*.ipynb")):
        code = "\n".join("".join(c["source"]) for c in cells(path) if c["cell_type"] == "code")
        assert f'LANG = "{lang}"' in code, path.name
        calls = re.findall(r"\b(\w+(?:_figure|Game|Explorer))\((.*?)\n\)", code, flags=re.S)
        calls += re.findall(r"\b(\w+(?:_figure|Game|Explorer))\(([^\n]*)\)\n", code)
        assert calls, path.name
        for function, arguments in calls:
            assert "lang=LANG" in arguments, (path.name, function)
        for call in re.findall(r"check_guesses\([^)]*\)|check-guesses\"[^]]*\]", code):
            assert "LANG" in call, (path.name, call)
        script = "[\u0600-\u06ff]" if lang == "fa" else "[\u4e00-\u9fff]"
        for node in ast.walk(ast.parse(code)):  # what a student who edits a value is told
            if isinstance(node, ast.Assert) and node.msg is not None:
                assert re.search(script, ast.unparse(node.msg)), (path.name, ast.unparse(node))
        for cell in cells(path):
            text = "".join(cell["source"])
            if cell["cell_type"] == "markdown" and lang == "fa":
                assert text.startswith('<div dir="rtl" lang="fa">\n\n'), (path.name, text[:40])
                assert text.endswith("\n\n</div>")
            if cell["cell_type"] == "markdown":
                assert re.search("[\u0600-\u06ff]" if lang == "fa" else "[\u4e00-\u9fff]", text)


def test_a_command_in_a_persian_notebook_is_shown_right_to_left(monkeypatch, tmp_path):
    """Lesson 02 in Persian printed check-guesses' report, and the notebook showed it left to
    right: 'ردیف 3: guess 'abx' …' came out in pieces, in the wrong order."""
    import IPython.display

    from speclab.cli import command_in_notebook

    shown = []
    monkeypatch.setattr(IPython.display, "display", shown.append)
    path = tmp_path / "student.csv"
    path.write_text("prefix,guess,expected_output\n,abx,\n", encoding="utf-8")
    status = command_in_notebook(["check-guesses", "--lang", "fa", str(path)], "fa")
    assert status == main(["check-guesses", str(path)]) == 1
    html = shown[0].data
    assert html.startswith('<pre lang="fa">')  # laid out line by line (test_browser.py)
    assert '<div dir="rtl">ردیف 2: حدس &#x27;abx&#x27;' in html
    import json

    notebook = repo_root() / "notebooks" / "fa" / "02_symbolic_acceptance.ipynb"
    code = "\n".join(  # the notebook's code, comments left out
        line.split("#")[0]
        for cell in json.loads(notebook.read_text(encoding="utf-8"))["cells"]
        if cell["cell_type"] == "code"
        for line in "".join(cell["source"]).splitlines()
    )
    assert "print(" not in code and "main(" not in code  # all it shows is laid out rtl


@pytest.mark.parametrize("lang", LANGUAGES)
def test_the_arrow_to_the_added_cell_points_at_it_in_every_language(lang):
    """The note beside the target's added cell starts with a left arrow, as laid out on the
    page; in Persian, "← از مدل هدف" put the arrow at the far right, away from the cell."""
    from bidi.algorithm import get_display

    from speclab.figures import check_row_figure

    fig = check_row_figure("ABX", "ABCD", lang=lang)
    notes = [t.get_text() for t in fig.axes[0].texts if "\u2190" in t.get_text()]
    assert len(notes) == 1
    # matplotlib with libraqm lays the text out itself, by the bidi algorithm; without it
    # the text is given already in display order
    shown = get_display(notes[0]) if matplotlib_shapes_text() else notes[0]
    assert shown.startswith("\u2190"), shown


def test_a_refused_argument_in_a_notebook_command_is_a_status_not_an_exception(
    monkeypatch, tmp_path, capsys
):
    """A typo in a notebook's check-guesses call ended in SystemExit, which Jupyter shows as
    an exception under argparse's message; it is now the status a console would give."""
    import IPython.display

    from speclab.cli import command_in_notebook

    shown = []
    monkeypatch.setattr(IPython.display, "display", shown.append)
    path = tmp_path / "student.csv"
    path.write_text("prefix,guess,expected_output\n,ABX,\n", encoding="utf-8")
    assert command_in_notebook(["check-guesses", "--lang", "xx", str(path)], "fa") == 2
    assert "invalid choice: 'xx'" in capsys.readouterr().err
    assert command_in_notebook(["check-guesses", "--help"], "fa") == 0
    assert "usage: speclab check-guesses" in shown[-1].data


def test_persian_notebooks_show_their_persian_tables_right_to_left():
    """A DataFrame alone is laid out left to right, its first column on the left, where the
    lesson's Markdown tables (and the handouts') have theirs on the right. A Persian-headed
    table a Persian notebook shows goes through TableBlock (its layout: test_browser.py)."""
    import pandas as pd

    from speclab.i18n import TableBlock

    frame = pd.DataFrame({"حدس": ["ABX"], "خروجی تازه": ["ABC"]})
    html = TableBlock(frame, "fa")._repr_html_()
    assert html == f'<div lang="fa" dir="rtl">{frame.to_html()}</div>'
    assert TableBlock(frame, "fa").frame is frame
    assert repr(TableBlock(frame, "fa")) == repr(frame)  # a text-only front end shows the table
    with pytest.raises(ValueError, match="no such language: 'xx'"):
        TableBlock(frame, "xx")
    shown = 0
    for path in sorted((NOTEBOOKS / "fa").glob("*.ipynb")):
        for cell in cells(path):
            code = "".join(cell["source"])
            persian_keys = re.search(r'"[^"\n]*[\u0600-\u06ff][^"\n]*":', code)
            if cell["cell_type"] == "code" and "pd.DataFrame(" in code and persian_keys:
                assert code.splitlines()[-1].startswith("TableBlock("), (path.name, code[-80:])
                shown += 1
    assert shown >= 2


def test_translated_notebooks_share_one_say_and_it_carries_the_language(monkeypatch):
    """The notebooks import their helpers, never copy them: `say` lived as a copy in each of
    the six translated notebooks."""
    import IPython.display

    from speclab.i18n import speaker

    for path in sorted(NOTEBOOKS.glob("*/*.ipynb")):
        code = "\n".join("".join(c["source"]) for c in cells(path) if c["cell_type"] == "code")
        assert "def say(" not in code, path
        if "say(" in code:
            assert "say = speaker(LANG)" in code, path
    shown = []
    monkeypatch.setattr(IPython.display, "display", shown.append)
    speaker("fa")("**۳** حدس")
    assert shown[0].data == '<div lang="fa" dir="rtl">\n\n**۳** حدس\n\n</div>'
    with pytest.raises(ValueError, match="no such language: 'xx'"):
        speaker("xx")


def test_chinese_help_fits_the_terminals_columns(monkeypatch, capsys):
    """argparse wraps help by characters: a line of Chinese, two columns a character, came out
    100 columns wide on an 80-column terminal, which then broke it mid-phrase."""
    from speclab.argparse_words import columns

    monkeypatch.setenv("COLUMNS", "80")
    with pytest.raises(SystemExit):
        main(["check-guesses", "--lang", "zh", "--help"])
    lines = capsys.readouterr().out.splitlines()
    assert max(columns(line) for line in lines) <= 80, lines
    assert "141 输出写进了已关闭的管道" in "".join(lines)  # wrapped, nothing lost
    with pytest.raises(SystemExit):
        main(["check-guesses", "--lang", "zh", "--summary=3", "a.csv"])
    assert "错误：参数 --summary 不带值，却给了 '3'" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("lang", "said"), [("zh", "已中断"), ("fa", "متوقف شد"), ("en", "interrupted")]
)
def test_ctrl_c_in_check_guesses_is_said_in_the_learners_language(monkeypatch, capsys, lang, said):
    """Every other line of `check-guesses --lang zh` was Chinese; a Ctrl-C was "interrupted"."""
    import speclab.guesses_report

    def stopped(args):
        raise KeyboardInterrupt

    monkeypatch.setattr(speclab.guesses_report, "run", stopped)
    assert main(["check-guesses", "--lang", lang, str(data_dir() / "guesses.csv")]) == 130
    assert capsys.readouterr().err == f"{said}\n"


@pytest.mark.parametrize(
    "text", ["价格 ｱｲｳ 半角｡ and ￨bar", "abc 한국어 def", "退出状态：0 每个文件都有效，1 某个"]
)
@pytest.mark.parametrize("width", [6, 12, 40])
def test_wrapping_by_columns_keeps_every_character(text, width):
    """Half-width katakana and signs (U+FF61-U+FFDF) were neither wide letters nor word letters
    to the wrapper, and vanished: '价格 ｱｲｳ 半角｡' came out as '价格  半角'."""
    from speclab.argparse_words import columns, wrapped

    lines = wrapped(text, width)
    assert "".join(lines).replace(" ", "") == text.replace(" ", "")
    assert all(columns(line) <= width or " " not in line for line in lines)  # a long word alone


def test_no_persian_message_sets_a_quoted_value_beside_another_value():
    """ "حدس {guess!r} {length} حرف دارد": the bidi algorithm joins 'EFGH' and 4 into one
    left-to-right run, so the count showed before the guess. A Persian word between them
    keeps each where the sentence puts it."""
    import re

    from speclab.paths import repo_root

    po = repo_root() / "src" / "speclab" / "locale" / "fa" / "LC_MESSAGES" / "speclab.po"
    adjacent = [line for line in po.read_text("utf-8").splitlines()
                if line.startswith("msgstr") and re.search(r"!r\}\s+\{", line)]  # fmt: skip
    assert adjacent == []


@pytest.mark.parametrize("lang", LANGUAGES)
def test_a_notebook_shows_a_long_report_cut_with_a_word_in_its_language(
    monkeypatch, tmp_path, lang
):
    """A class file of 200,000 rows put 14 MB of report into lesson 02's notebook."""
    import IPython.display

    from speclab import cli

    shown = []
    monkeypatch.setattr(IPython.display, "display", shown.append)
    monkeypatch.setattr(cli, "NOTEBOOK_LINES", 5)
    monkeypatch.setattr(cli, "NOTEBOOK_TAIL", 2)  # the last lines: the score
    path = tmp_path / "many.csv"
    path.write_text("prefix,guess,expected_output\n" + ",ABX,\n" * 30, encoding="utf-8")
    cli.command_in_notebook(["check-guesses", "--lang", lang, str(path)], lang)
    html = shown[-1].data
    assert html.count("<div ") == 6  # 3 lines, the note, the last 2 lines
    import contextlib
    import html as html_module
    import io

    console = io.StringIO()
    with contextlib.redirect_stdout(console):
        cli.main(["check-guesses", "--lang", lang, str(path)])
    last = console.getvalue().splitlines()[-1]  # the score, which a cut must not lose
    assert html_module.escape(last) in html.split("<div ")[-1]
    from speclab.i18n import translator

    more = translator(lang).gettext(
        "... {count:,} more lines: the same command in a terminal prints them all"
    )
    assert more.split("}")[1].strip() in html  # the words after the count, in lang


@pytest.mark.parametrize("lang", LANGUAGES)
def test_path_explorer_asks_for_text_in_the_learners_language(lang):
    """PathExplorer(guess=5) had ended in traitlets' TraitError, in English."""
    from speclab.i18n import translator
    from speclab.widgets import PathExplorer

    wanted = translator(lang).gettext("{name} = {value!r}: write it as text in quotes, e.g. "
                                      '{name}="ABX"').format(name="guess", value=5)  # fmt: skip
    with pytest.raises(TypeError) as raised:
        PathExplorer(guess=5, lang=lang)
    assert str(raised.value) == wanted and (lang == "en") == ("write it as text" in wanted)
