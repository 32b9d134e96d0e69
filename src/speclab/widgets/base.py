"""What every widget shares: shown by evaluating it, figures as PNG in an Image widget.

Each widget is a small class whose callback is a plain method (`update`), so pytest can
set a value and read what is shown (`.text.value`, `.figure`, `.picture.value`) without
a browser. Figures are drawn by `speclab.figures` and shown as PNG. Lessons 01-03's widgets
speak en, zh or fa (`lang=`, see speclab.i18n): `in_language` lays a Persian widget out
right to left and `paragraph` marks each sentence with its language and direction.
"""

import io
import math
import numbers
import re
import warnings

import ipywidgets as widgets
from matplotlib.figure import Figure

from speclab.i18n import DIRECTION


def figure_png(fig: Figure, dpi: int = 72) -> bytes:
    """The figure as PNG bytes, cropped to its content.

    A character the fonts lack (an emoji a student typed) is drawn as an empty box, without
    matplotlib's "Glyph missing" warning in the cell's output.
    """
    buffer = io.BytesIO()
    with warnings.catch_warnings():
        warnings.filterwarnings(
            "ignore", message=r"Glyph \d+ .* missing from", category=UserWarning
        )
        fig.savefig(buffer, format="png", dpi=dpi, bbox_inches="tight")
    return buffer.getvalue()


class Shown:
    """A widget holder that notebooks display by evaluating it."""

    box: widgets.Widget

    def _repr_mimebundle_(self, **kwargs):
        return self.box._repr_mimebundle_(**kwargs)

    def _on_change(self, change) -> None:
        if not self._settle(change):
            self.update()

    def _settle(self, change) -> bool:
        """Put a slider's new value right, if it needs it, and say so (its own change then
        updates the widget): nan or inf set from code goes back, and a value the readout
        shows otherwise becomes the value shown."""
        if _not_a_number(change):
            change["owner"].value = change["old"]
            return True
        if (shown := _as_shown(change)) is not None:
            change["owner"].value = shown
            return True
        return False

    def update(self) -> None:  # pragma: no cover - every subclass defines it
        raise NotImplementedError


def checked_choice(value, options, name: str):
    """value if it is one of options; else a ValueError listing them (a Dropdown given
    another value raised traitlets' "Invalid selection: value not found")."""
    options = list(options)
    if value not in options:
        raise ValueError(f"{name} {value!r}: choose one of {', '.join(map(str, options))}")
    return value


def checked_number(value, low, high, name: str, whole: bool = False):
    """value if it is a number (whole, if asked) from low to high; else a ValueError naming
    the range (a slider given a value outside it kept the nearest end without a word)."""
    kind = numbers.Integral if whole else numbers.Real
    if isinstance(value, bool) or not isinstance(value, kind) or not low <= value <= high:
        what = "a whole number" if whole else "a number"
        low, high = (x if isinstance(x, int) else f"{x:g}" for x in (low, high))  # 4294967295
        upto = f"from {low} to {high}" if high != "inf" else f"of {low} or more"
        raise ValueError(f"{name} {value!r}: choose {what} {upto}")
    return value


def float_slider(**options) -> widgets.FloatSlider:
    """A FloatSlider that starts at the value its readout shows: `BoundaryExplorer(c=0.004)`
    was computed with 0.004 while the readout and every sentence said 0.00 (see _as_shown,
    which does the same for a value typed in later)."""
    slider = widgets.FloatSlider(**options)
    if (shown := _as_shown({"owner": slider, "new": slider.value})) is not None:
        slider.value = shown
    return slider


def _as_shown(change) -> float | None:
    """The value a float slider's readout shows, where the slider holds another (None where
    they agree): a value typed into the readout is only kept within min and max by the front
    end, so c = 0.004 was computed with while the readout and every sentence said 0.00.
    Only for a readout of fixed decimals that can show every step (".2f" for steps of 0.01
    or 0.05, not for 0.001), rounding halves up as the browser's toFixed does."""
    from decimal import ROUND_HALF_UP, Decimal

    owner, new = change.get("owner"), change.get("new")
    if (
        not isinstance(owner, widgets.FloatSlider)
        or not isinstance(new, float)
        or not owner.readout
    ):
        return None
    fixed = re.fullmatch(r"\.(\d+)f", owner.readout_format or "")
    if fixed is None or round(owner.step, int(fixed[1])) != owner.step:
        return None
    places = Decimal(1).scaleb(-int(fixed[1]))  # 0.01 for ".2f"
    shown = float(Decimal(repr(new)).quantize(places, rounding=ROUND_HALF_UP))
    shown = min(owner.max, max(owner.min, shown))
    return None if shown == new else shown


def _not_a_number(change) -> bool:
    """Whether a change sets a float to NaN or an infinity, which a float slider takes from
    code (`explorer.c.value = float("nan")`) and every picture would then show as 0 or fail
    on; the slider is then set back to its old value (its own change updates the widget)."""
    new = change.get("new")
    return isinstance(new, float) and not math.isfinite(new) and "owner" in change


# Characters a reader cannot see, which copying from a chat or right-to-left text brings
# along: zero-width space, joiners, direction marks, word joiner, byte order mark, and the
# embeddings, overrides and isolates of bidirectional text (U+202A-U+202E, U+2066-U+2069).
INVISIBLE = dict.fromkeys(
    map(
        ord,
        "\u200b\u200c\u200d\u200e\u200f\u2060\u061c\ufeff\u202a\u202b\u202c\u202d\u202e"
        "\u2066\u2067\u2068\u2069",
    )
)
# Persian (۰-۹) and Arabic-Indic (٠-٩) digits, as a keyboard in Persian or Arabic types them:
# the same answer as the Latin digits.
OTHER_DIGITS = str.maketrans("۰۱۲۳۴۵۶۷۸۹٠١٢٣٤٥٦٧٨٩", "0123456789" * 2)
# Full-width forms (！ to ～: digits, the point, letters), as a Chinese input method in
# full-width mode types them: ８．０ is 8.0
FULL_WIDTH = {code: code - 0xFEE0 for code in range(0xFF01, 0xFF5F)}


def typed_text(value: str) -> str:
    """A text box's value with any lone surrogate (half of a character, which a browser can
    send and UTF-8 cannot hold) shown as the replacement character \ufffd."""
    return re.sub("[\ud800-\udfff]", "\ufffd", value)


def visible_text(value: str) -> str:
    """A text box's value as its reader sees it: typed_text without the INVISIBLE marks."""
    return typed_text(value).translate(INVISIBLE)


# Chinese numerals, as a Chinese learner may answer lesson 01's quiz (八, 五十六, 九十).
CHINESE_DIGITS = dict(
    zip("零〇一二两三四五六七八九", (0, 0, 1, 2, 2, 3, 4, 5, 6, 7, 8, 9), strict=True)
)
CHINESE_UNITS = {"十": 10, "百": 100, "千": 1000}


def chinese_number(text: str) -> int | None:
    """A whole number below 10,000 written in Chinese numerals (五十六 -> 56, 十 -> 10,
    一百零五 -> 105, 一百五 -> 150, the short form), or None if text is not one."""
    if text in ("零", "〇"):
        return 0
    if not text or any(c not in CHINESE_DIGITS and c not in CHINESE_UNITS for c in text):
        return None
    total, digit, last_unit, zero, previous = 0, None, 10_000, False, None
    for char in text:
        if char in ("零", "〇"):
            if previous not in CHINESE_UNITS:  # 零 only fills a gap after a unit: 一百零五
                return None
            zero = True
        elif char in CHINESE_DIGITS:
            if digit is not None:
                return None  # two digits in a row (五六) is not a number's Chinese form
            digit = CHINESE_DIGITS[char]
        else:
            unit = CHINESE_UNITS[char]
            if unit >= last_unit or (digit is None and not (char == "十" and previous is None)):
                return None  # 十百, 千百, 零十: units fall, each after its digit (十五 aside)
            total += (1 if digit is None else digit) * unit
            digit, last_unit, zero = None, unit, False
        previous = char
    if digit is None:
        return None if zero else total  # 十零 is no number
    short = not zero and last_unit in (100, 1000)  # 一百五 is 150, 三千五 is 3,500
    return total + (digit * last_unit // 10 if short else digit)


def normalise(answer: str) -> str:
    """A typed answer as the host reads it: no stray spaces or invisible marks, any case,
    digits of any script or Chinese numerals, and a whole number however it is written
    ("08", "8.0", "八" are 8; so are "８．０" and "8。" from a Chinese input method)."""
    text = visible_text(answer).translate(FULL_WIDTH)  # ８．０ is 8.0; NFKC would make 5⁶ 56
    text = text.strip().removesuffix("。").strip().casefold().translate(OTHER_DIGITS)
    if (number := chinese_number(text)) is not None:
        return str(number)
    whole = re.fullmatch(r"([+-]?\d{1,30})(?:[.\u066b]0*)?", text)  # ٫: the Persian decimal mark
    return str(int(whole.group(1))) if whole else text


RTL_STYLE = "<style>.speclab-rtl { direction: rtl; text-align: right; }</style>"


def in_language(box: widgets.Box, lang: str) -> widgets.Box:
    """The box laid out in lang's direction: Persian widgets read right to left.

    A CSS class on the box (its labels, text boxes and sentences follow `direction: rtl`);
    the <style> that defines it travels with the widget, so it works in any notebook.
    """
    if DIRECTION[lang] == "rtl":
        box.add_class("speclab-rtl")
        box.children = (widgets.HTML(RTL_STYLE), *box.children)
    return box


def paragraph(html_text: str, lang: str, size: str = "1.3em") -> str:
    """One paragraph of a widget's sentence, with its language and direction set."""
    return f"<p lang='{lang}' dir='{DIRECTION[lang]}' style='font-size:{size}'>{html_text}</p>"
