"""Figures in handouts: a `figure:NAME?key=value` address read, drawn and saved as SVG.

`speclab.handouts` finds the addresses in a lesson's Markdown (its docstring gives the
syntax a handout writes); this module parses one (`parse_figure`), names the file it is drawn
into so that two requests never share one (`FigureRequest.file_name`), and draws it from
`speclab.figures` with every warning raised as an error (`draw_figure`): a figure drawn from
values it cannot show well would print wrong, so the build stops and names it.
"""

import hashlib
import re
import urllib.parse
import warnings
from dataclasses import dataclass
from pathlib import Path

from speclab.chromium import one_line
from speclab.handout_folder import HandoutError

FIGURE_NAME_CHARS = 80  # of a figure file's readable part (file systems allow 255 bytes)
FIGURE_SCHEME = "figure:"
MAX_FIGURE_NUMBER = 1000  # a handout's figure never needs more; k=100000 would draw for minutes
MAX_FIGURE_VALUES = 100  # in one list (cases=4,4,...): 3,000 took 22 s to refuse, 20,000 minutes


@dataclass(frozen=True)
class FigureRequest:
    """`figure:NAME?key=value` parsed: the speclab.figures function and its keyword arguments."""

    name: str
    kwargs: tuple[tuple[str, object], ...]

    @property
    def file_name(self) -> str:
        """A readable name, cut short, and a hash of the whole request: two requests that read
        alike (a title in Chinese, `A,B` and `A_B`) never share a file."""
        parts = [self.name] + [f"{key}{_slug(value)}" for key, value in self.kwargs]
        digest = hashlib.sha256(repr((self.name, self.kwargs)).encode()).hexdigest()[:10]
        return "-".join(parts)[:FIGURE_NAME_CHARS] + f"-{digest}.svg"


def _slug(value) -> str:
    text = ",".join(map(str, value)) if isinstance(value, tuple) else str(value)
    return re.sub(r"[^A-Za-z0-9.,]+", "_", text).replace(",", "_") or "empty"


def _parse_value(text: str):
    """'4' -> 4, '0.8' -> 0.8, 'true' -> True, '0,2,4' -> (0, 2, 4), anything else -> text."""
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            pass
    if text.lower() in ("true", "false"):
        return text.lower() == "true"
    if "," in text:
        return tuple(_parse_value(part) for part in text.split(","))
    return text


def parse_figure(src: str) -> FigureRequest:
    """Read a `figure:NAME?key=value&...` address (see the module docstring)."""
    if not src.startswith(FIGURE_SCHEME):
        raise HandoutError(f"not a figure address: {src!r}")
    name, _, query = src[len(FIGURE_SCHEME) :].partition("?")
    name = urllib.parse.unquote(name)
    if not re.fullmatch(r"[a-z][a-z0-9_]*", name):
        raise HandoutError(f"bad figure name {name!r} in {src!r}")
    try:
        pairs = urllib.parse.parse_qsl(query, keep_blank_values=True, strict_parsing=bool(query))
    except ValueError as error:  # e.g. `?k` with no `=`
        raise HandoutError(f"bad figure address {src!r}: write key=value&key=value") from error
    kwargs = tuple((key, _parse_value(value)) for key, value in pairs)
    for key, value in kwargs:
        if isinstance(value, tuple) and len(value) > MAX_FIGURE_VALUES:
            raise HandoutError(f"{key} in {src[:80]!r}...: a figure takes at most "
                               f"{MAX_FIGURE_VALUES} values in a list, not {len(value):,}")  # fmt: skip
        for number in value if isinstance(value, tuple) else (value,):
            if isinstance(number, (int, float)) and not abs(number) <= MAX_FIGURE_NUMBER:
                raise HandoutError(f"{key}={number} in {src!r}: a figure takes finite numbers "
                                   f"up to {MAX_FIGURE_NUMBER:,}")  # fmt: skip
    return FigureRequest(name, kwargs)


def available_figures() -> list[str]:
    """Names usable after `figure:`: every `speclab.figures.*_figure` function."""
    from speclab import figures

    return sorted(
        name.removesuffix("_figure")
        for name in dir(figures)
        if name.endswith("_figure") and callable(getattr(figures, name))
    )


def draw_figure(request: FigureRequest, figure_dir: Path) -> Path:
    """Draw the requested figure into figure_dir as SVG (once per address); returns its path."""
    from speclab import figures

    function = getattr(figures, f"{request.name}_figure", None)
    if function is None:
        known = ", ".join(available_figures())
        raise HandoutError(f"unknown figure {request.name!r}; speclab.figures has: {known}")
    path = figure_dir / request.file_name
    if not path.exists():
        with warnings.catch_warnings():  # a warning here means an unusable figure: say so
            warnings.simplefilter("error", UserWarning)
            warnings.simplefilter("error", RuntimeWarning)  # numpy: log of a negative number
            # but a letter the installed fonts lack is drawn as a box and only warned about,
            # as before: a teacher's title in Chinese must not stop the build
            warnings.filterwarnings("default", r"Glyph \d+ .* missing from font", UserWarning)
            return _draw(function, request, path, figure_dir)
    return path


def _draw(function, request: FigureRequest, path: Path, figure_dir: Path) -> Path:
    """draw_figure's work, with warnings raised as errors (see draw_figure)."""
    try:
        figure = function(**dict(request.kwargs))
    except (TypeError, ValueError) as error:  # a wrong keyword, or a value it refuses
        raise HandoutError(f"figure {request.name!r}: {error}") from error
    except (AttributeError, LookupError, ArithmeticError) as error:
        # a value of the wrong kind (a number where the figure needs a decoding run, a
        # text where it needs a list) or out of range (zero where it divides)
        raise HandoutError(
            f"figure {request.name!r} cannot be drawn from these values "
            f"({type(error).__name__}: {error})"
        ) from error
    except Warning as error:  # values it draws, but not usably: a log axis of negatives
        raise HandoutError(
            f"figure {request.name!r} cannot be drawn well from these values: "
            f"{one_line(str(error))}"
        ) from error
    figure_dir.mkdir(parents=True, exist_ok=True)
    try:
        figure.savefig(path, format="svg", bbox_inches="tight")
    except (ValueError, Warning) as error:  # `$x^$`, or axes the values shrink to nothing
        path.unlink(missing_ok=True)  # half written: a later page would reuse it
        reason = one_line(str(error))  # matplotlib's message spans lines
        raise HandoutError(f"figure {request.name!r} cannot be drawn: {reason}") from error
    return path
