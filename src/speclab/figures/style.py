"""The one look of every figure: palette, projector sizes, ticks and crosses, shared helpers.

Conventions: the Okabe-Ito colour-blind-safe palette; colour is never the only cue (ticks,
crosses, hatching and words say the same thing); fonts sized for a classroom projector
(`PROJECTOR`, applied with `rc_context`, so importing or calling a figure never changes
the caller's matplotlib settings). Every figure function closes its figure in pyplot and
returns it: a notebook shows it by evaluating it, `fig.savefig` writes it.
Also here: how lesson 06's figures read a `speclab bench decode` report (one marker per
scenario, one colour and line style per drafter), so a quick run in the notebook and a
saved full run draw alike.
Languages (lessons 01-03): `FigureWords(lang)` translates a label through speclab.i18n's
catalogue, shapes Persian for matplotlib, and `projector_style(lang)` picks fonts that
hold its letters.
"""

import functools

from matplotlib.patches import Rectangle

# Okabe & Ito (2008), "Color Universal Design": distinguishable with every common colour deficiency.
OKABE_ITO = {
    "black": "#000000",
    "orange": "#E69F00",
    "sky_blue": "#56B4E9",
    "bluish_green": "#009E73",
    "yellow": "#F0E442",
    "blue": "#0072B2",
    "vermillion": "#D55E00",
    "reddish_purple": "#CC79A7",
}


ROLE_COLOURS = {
    "accepted": OKABE_ITO["bluish_green"],  # with a tick
    "rejected": OKABE_ITO["vermillion"],  # with a cross
    "dropped": "#D9D9D9",  # with hatching and the word "dropped"
    "target": OKABE_ITO["blue"],  # the target's own symbol, labelled "target"
    "draft": OKABE_ITO["sky_blue"],
    "prefix": "#F2F2F2",
    "greedy": "#8C8C8C",  # the grey baseline, hatched
    "speculative": OKABE_ITO["blue"],
}


TICK, CROSS = "\u2713", "\u2717"  # check mark, ballot x (both in DejaVu Sans)


PROJECTOR = {
    "font.size": 16,
    "axes.titlesize": 18,
    "axes.labelsize": 16,
    "xtick.labelsize": 15,
    "ytick.labelsize": 15,
    "legend.fontsize": 14,
    "figure.dpi": 100,
    "savefig.bbox": "tight",
    "hatch.linewidth": 1.5,
    "text.parse_math": False,  # a name with "$" in it (a student's scenario) is drawn as typed
}


def cell(ax, x: float, y: float, text: str, face: str, hatch: str | None = None, **text_kw):
    """One unit box centred at (x, y) with its symbol; white text on dark faces."""
    ax.add_patch(
        Rectangle((x - 0.45, y - 0.4), 0.9, 0.8, facecolor=face, edgecolor="black", hatch=hatch)
    )
    dark = face in (ROLE_COLOURS["accepted"], ROLE_COLOURS["rejected"], ROLE_COLOURS["target"])
    colour = "white" if dark else "black"
    backing = (
        {"boxstyle": "round,pad=0.1", "facecolor": face, "edgecolor": "none"} if hatch else None
    )
    ax.text(
        x,
        y,
        text,
        ha="center",
        va="center",
        color=colour,
        fontweight="bold",
        bbox=backing,
        **text_kw,
    )


def dropped_label(ax, first_x: float, last_x: float, y: float, word: str = "dropped") -> None:
    """One word under a run of dropped cells (hatching says it too)."""
    ax.text((first_x + last_x) / 2, y, word, ha="center", va="center", fontsize=14)


def blank_axes(ax, left: float, width: float, height: float) -> None:
    """An axes in cell units, from x = left (room for row labels) to width."""
    ax.set_xlim(left, width)
    ax.set_ylim(-0.5, height)
    ax.set_aspect("equal")
    ax.axis("off")


def tidy(ax) -> None:
    ax.spines[["top", "right"]].set_visible(False)
    ax.grid(alpha=0.3)


# Read from the report's dicts, so a quick run in the notebook and a saved full run draw
# alike. Scenarios get one marker each; drafters one colour and one line style each.
SCENARIO_MARKERS = ("o", "s", "^", "D", "v", "X")


DRAFTER_STYLES = {
    "lookup": {"color": OKABE_ITO["blue"], "linestyle": "-", "hatch": ""},
    "model": {"color": OKABE_ITO["vermillion"], "linestyle": "--", "hatch": "//"},
}


def scenario_names(report: dict) -> list[str]:
    return [s["name"] for s in report["prompts"]["scenarios"]]


def report_rows(report: dict, scenario: str, drafter: str | None = None) -> list[dict]:
    return [
        r for r in report["results"]
        if r["scenario"] == scenario and (drafter is None or r["drafter"] == drafter)
    ]  # fmt: skip


def report_row(report: dict, scenario: str, method: str) -> dict | None:
    return next((r for r in report_rows(report, scenario) if r["method"] == method), None)


# --- languages: fonts and shaping (lessons 01-03 draw in en, zh and fa) --------------------
# Debian: fonts-noto-cjk (Chinese), fonts-noto-core (Persian); DejaVu Sans, matplotlib's own
# font, follows each list for what the first lacks (the ticks and crosses, Latin letters).
FONTS = {
    "en": ["DejaVu Sans"],
    "zh": ["Noto Sans CJK SC", "DejaVu Sans"],
    "fa": ["Noto Sans Arabic", "DejaVu Sans"],
}


FONT_FILES = {"Noto Sans CJK SC": "NotoSansCJK", "Noto Sans Arabic": "NotoSansArabic"}


def _find_fonts(families: list[str]) -> None:
    """Make sure matplotlib knows the families: its font list is cached on first use, so
    fonts installed later (apt-get install fonts-noto-cjk) are added from the system here."""
    from matplotlib import font_manager

    known = {font.name for font in font_manager.fontManager.ttflist}
    missing = [FONT_FILES[family] for family in families if family not in known]
    if not missing:
        return
    for path in font_manager.findSystemFonts():
        if any(stem in path for stem in missing):
            font_manager.fontManager.addfont(path)


def projector_style(lang: str) -> dict:
    """PROJECTOR with the fonts that hold `lang`'s letters (for matplotlib.rc_context)."""
    _find_fonts(FONTS[lang])
    return {**PROJECTOR, "font.family": FONTS[lang]}


def matplotlib_shapes_text() -> bool:
    """True when matplotlib lays text out itself (libraqm: joins letters, orders bidi runs).

    matplotlib 3.11 builds with libraqm; before, it drew characters one by one, left to
    right, and Persian came out as separate letters in reverse order.
    """
    from matplotlib import ft2font

    return hasattr(ft2font, "__libraqm_version__")


def shape(text: str, lang: str) -> str:
    """Persian as matplotlib must be given it: joined and in display order where it cannot.

    Where matplotlib shapes text itself (`matplotlib_shapes_text`), the text is given as it
    is (shaping it twice would reverse it again). Elsewhere arabic-reshaper picks each
    letter's joined form and python-bidi reorders each line for display (Latin letters,
    digits and formulas inside keep their left-to-right order). Chinese and English need
    neither.
    """
    if lang != "fa" or not text or matplotlib_shapes_text():
        return text
    import arabic_reshaper
    from bidi.algorithm import get_display

    return "\n".join(get_display(arabic_reshaper.reshape(line)) for line in text.split("\n"))


def drawable(text: str) -> str:
    """`text` with each character that no font of the current `font.family` holds written as
    its escape (\\U0001f600), which matplotlib can draw: a student's emoji or Chinese prompt
    in an English figure had drawn as empty boxes under a "Glyph ... missing" warning.
    Call it inside the figure's `rc_context`, whose fonts it asks."""
    import matplotlib

    fonts = _fonts_of(tuple(matplotlib.rcParams["font.family"]))
    return "".join(
        char if char in "\n\t" or any(font.get_char_index(ord(char)) for font in fonts)
        else ascii(char)[1:-1]
        for char in text
    )  # fmt: skip


@functools.cache
def _fonts_of(families: tuple[str, ...]) -> list:
    from matplotlib import font_manager, ft2font

    paths = []
    for family in families:
        try:
            prop = font_manager.FontProperties(family=[family])  # a lone string reads as a pattern
            path = font_manager.findfont(prop, fallback_to_default=False)
        except ValueError:  # not installed: matplotlib skips it as well
            continue
        if path not in paths:
            paths.append(path)
    return [ft2font.FT2Font(path) for path in paths]


def text_width(text: str) -> float:
    """The width of a label in Latin characters: a Chinese character counts two."""
    import unicodedata

    longest = max(text.split("\n"), key=len, default="")
    return sum(2 if unicodedata.east_asian_width(char) in "WF" else 1 for char in longest)


class FigureWords:
    """A figure's words in one language: `words("accept {m}", m=2)` translates and shapes."""

    def __init__(self, lang: str | None = None):
        from speclab.i18n import resolve, translator

        self.lang = resolve(lang)
        self.tr = translator(self.lang)

    def __call__(self, template: str, **values) -> str:
        return shape(self.tr.gettext(template).format(**values), self.lang)

    def plural(self, singular: str, plural: str, count: int, **values) -> str:
        text = self.tr.ngettext(singular, plural, count).format(count=count, **values)
        return shape(text, self.lang)

    def shape(self, text: str) -> str:
        """Text already in the figure's language (a caller's title or labels); a character no
        font of the language holds is written as its escape (`drawable`)."""
        import matplotlib

        with matplotlib.rc_context(self.style):
            return shape(drawable(text), self.lang)

    @property
    def style(self) -> dict:
        return projector_style(self.lang)
