"""Speculative decoding's rounds shown as text for people (lesson 05 and `speclab demo`).

Every new token of a `DecodeResult` came from one of four places, its *role*:

- ``accepted``:   drafted, and the target agreed (the tokens speculation gets for free)
- ``correction``: the target's own token at the first rejected draft (the rest is dropped)
- ``bonus``:      the target's own token after a round whose drafts were all accepted
- ``plain``:      the target's own token in a round with no draft (a plain greedy step)

`token_roles` lists them; `render_html` (notebooks) and `render_ansi` (terminals) colour
them. `provenance_html` shows another labelling, lesson 06's: which bytes of an output were
copied from the prompt, which repeat the model's own output (a loop), which are new. Colour is never the only cue, so a page printed in black and white or read by a
colour-blind learner still tells the roles apart:

| role       | colour (Okabe-Ito)  | HTML                   | terminal             | no colour |
|------------|---------------------|------------------------|----------------------|-----------|
| accepted   | bluish green        | underlined             | underlined           | ‹abc›     |
| correction | vermillion          | bold, wavy underline   | bold                 | [x]       |
| bonus      | blue                | bold, boxed            | reverse video        | {x}       |
| plain      | none                | as is                  | as is                | as is     |

Tokens are bytes: a character split over two roles takes the role of its last byte.
A marked run that is only whitespace shows its line breaks, tabs and spaces as ↵, → and ·,
so that a correction that is a newline can still be seen.
Left out: the rejected drafts themselves (the per-round table shows them).
`counted` writes a count with its English noun ('1 byte', '30 bytes') for the lines the
commands, widgets and figures print.
"""

import codecs
import html
import re
from dataclasses import dataclass

from speclab.tokenizer import token_str

ROLES = ("accepted", "correction", "bonus", "plain")
ROLE_MEANING = {
    "accepted": "draft token the target accepted",
    "correction": "the target's token where it rejected a draft",
    "bonus": "the target's bonus token after a fully accepted draft",
    "plain": "the target's token in a round with no draft",
}
PLAIN_MARKS = {"accepted": ("\u2039", "\u203a"), "correction": ("[", "]"), "bonus": ("{", "}")}
HTML_STYLES = {
    "accepted": "background:#CCEBDF;color:#00573F;text-decoration:underline 2px #009E73;"
    "text-underline-offset:3px",
    "correction": "background:#F6D2BC;color:#7A2E00;font-weight:bold;"
    "text-decoration:underline wavy #D55E00;text-underline-offset:3px",
    "bonus": "background:#CFE2F1;color:#003F66;font-weight:bold;outline:2px solid #0072B2;"
    "outline-offset:-1px",
    "plain": "",
}
# SGR codes: 256-colour foregrounds near Okabe-Ito, plus the style that survives monochrome
ANSI_STYLES = {
    "accepted": "38;5;36;4",  # bluish green, underlined
    "correction": "38;5;166;1",  # vermillion, bold
    "bonus": "38;5;32;1;7",  # blue, bold, reverse video
    "plain": "",
}
ANSI_RESET = "\x1b[0m"
VISIBLE = {"\n": "\u21b5\n", "\t": "\u2192\t", " ": "\u00b7"}


@dataclass(frozen=True)
class Piece:
    """A run of decoded text from one round with one role."""

    text: str
    role: str
    round_index: int  # 0-based index into result.rounds


def decimals(*values: float, least: int = 2, most: int = 8) -> int:
    """The fewest decimals, from `least`, that show every value that is not 0 as not 0 and any
    two values that differ as different: lesson 07 prints p and q to 2, but a p of 0.0005
    read "min(1, 0.00 / 0.00) = 0.50", and rule (b)'s 0.29985 "0.30 instead of 0.30"."""
    for digits in range(least, most + 1):
        shown = [round(float(v), digits) for v in values]
        if all(s != 0 for s, v in zip(shown, values, strict=True) if v != 0) and len(
            set(shown)
        ) == len(set(map(float, values))):
            return digits
    return most


def counted(n: int, word: str) -> str:
    """'1 byte', '30 bytes', '100,000 bytes': a count with its noun, singular for one."""
    return f"{n:,} {word}{'' if n == 1 else 's'}"


def round_role(drafted: list[int], accepted: int) -> str:
    """The role of the token the target appends at the end of a round."""
    if not drafted:
        return "plain"
    return "bonus" if accepted == len(drafted) else "correction"


def checked_result(result, name: str = "result"):
    """result, if it is a decoder's DecodeResult (its rounds, not only its tokens)."""
    if not (hasattr(result, "rounds") and hasattr(result, "tokens")):
        raise TypeError(f"{name} must be the DecodeResult a decoder returned (the run itself, "
                        f"not run.tokens or run.rounds), got a {type(result).__name__}")  # fmt: skip
    return result


def token_roles(result) -> list[tuple[int, str, int]]:
    """(token, role, round index) for every new token of a DecodeResult, in order.

    A stop sequence can cut the last round short: only len(result.tokens) are listed.
    """
    checked_result(result)
    roles = []
    for index, round_ in enumerate(result.rounds):
        for token in round_.drafted[: round_.accepted]:
            roles.append((token, "accepted", index))
        roles.append((round_.appended, round_role(round_.drafted, round_.accepted), index))
    roles = roles[: len(result.tokens)]
    if [token for token, _, _ in roles] != list(result.tokens):
        raise ValueError("the rounds of this result do not add up to its tokens")
    return roles


def pieces(result) -> list[Piece]:
    """The new text split into runs of one role and one round (UTF-8 decoded per byte)."""
    decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
    runs: list[Piece] = []
    for token, role, index in token_roles(result):
        text = decoder.decode(bytes([token]))
        if not text:
            continue  # the middle of a multi-byte character
        if runs and (runs[-1].role, runs[-1].round_index) == (role, index):
            runs[-1] = Piece(runs[-1].text + text, role, index)
        else:
            runs.append(Piece(text, role, index))
    tail = decoder.decode(b"", final=True)
    if tail and runs:
        runs[-1] = Piece(runs[-1].text + tail, runs[-1].role, runs[-1].round_index)
    return runs


def visible(text: str, role: str = "plain") -> str:
    """A marked run of whitespace only is shown with symbols; other control bytes escaped."""
    only_whitespace = role != "plain" and not text.strip()
    shown = []
    for char in text:
        if only_whitespace and char in VISIBLE:
            shown.append(VISIBLE[char])
        elif (ord(char) < 32 or 127 <= ord(char) < 160) and char not in "\n\t":  # C0, DEL, C1
            shown.append(token_str(ord(char)))
        else:
            shown.append(char)
    return "".join(shown)


WHITESPACE_MARKS = (
    "in a marked run of whitespace: \u00b7 a space, \u21b5 a line break, \u2192 a tab"
)


def legend_html() -> str:
    """One line naming each role with a sample in its style."""
    samples = [
        f"<span style='{HTML_STYLES[role]};padding:0 2px'>{role}</span> "
        f"{html.escape(ROLE_MEANING[role])}"
        for role in ROLES
    ]
    return (
        "<div style='font-size:0.9em;line-height:2'>"
        + " &nbsp;|&nbsp; ".join(samples)
        + f" &nbsp;({html.escape(WHITESPACE_MARKS)})</div>"
    )


def render_html(result, prompt: str | None = None, legend: bool = True) -> str:
    """The continuation as an HTML block, each role styled; the prompt (if given) in grey."""
    spans = []
    if prompt is not None:
        spans.append(f"<span style='color:#767676'>{html.escape(prompt)}</span>")
    for piece in pieces(result):
        text = html.escape(visible(piece.text, piece.role))
        if piece.role == "plain":
            spans.append(text)
            continue
        title = f"round {piece.round_index + 1}: {ROLE_MEANING[piece.role]}"
        spans.append(
            f"<span class='speclab-{piece.role}' title='{html.escape(title)}' "
            f"style='{HTML_STYLES[piece.role]}'>{text}</span>"
        )
    block = (
        "<pre style='font-family:monospace;white-space:pre-wrap;font-size:1.05em;line-height:1.6;"
        "border:1px solid #BBBBBB;padding:0.5em'>" + "".join(spans) + "</pre>"
    )
    return block + (legend_html() if legend else "")


def _ansi_wrap(text: str, role: str, color: bool) -> str:
    if not color:
        start, end = PLAIN_MARKS.get(role, ("", ""))
        return start + text + end
    if not ANSI_STYLES[role]:
        return text
    # close the style before every line break, so no colour bleeds into the margin
    lines = text.split("\n")
    return "\n".join(
        f"\x1b[{ANSI_STYLES[role]}m{line}{ANSI_RESET}" if line else "" for line in lines
    )


def legend_ansi(color: bool) -> str:
    """The legend line for render_ansi, in the same styles (or marks, without colour), and
    what the marks of a run of whitespace stand for (they read as text otherwise)."""
    roles = "   ".join(_ansi_wrap(role, role, color) + f" {ROLE_MEANING[role]}" for role in ROLES)
    return f"{roles}   ({WHITESPACE_MARKS})"


def render_ansi(result, color: bool = True, prompt: str | None = None) -> str:
    """The continuation as terminal text: SGR colour and style, or marks when color=False.

    With color=False the text has no escape codes at all (NO_COLOR, a pipe, a printer):
    ‹accepted›, [correction] and {bonus} marks carry the roles instead.
    """
    parts = []
    if prompt is not None:
        prompt = visible(prompt, "plain")  # escape codes in a prompt are shown, not obeyed
        parts.append(f"\x1b[2m{prompt}{ANSI_RESET}" if color else prompt)
    for piece in pieces(result):
        parts.append(_ansi_wrap(visible(piece.text, piece.role), piece.role, color))
    return "".join(parts)


def shown_probability(p: float) -> str:
    """A probability as a percentage to one decimal, never rounded onto 0 % or 100 %: a token
    given 0.9995 is not certain (">99.9%"), one given 4e-5 is still possible ("<0.1%")."""
    if not -1e-9 <= p <= 1 + 1e-9:  # 1.5 had been shown as "150.0%"; round-off is fine
        raise ValueError(f"a probability lies between 0 and 1, got {p!r}")
    p = min(max(p, 0.0), 1.0)
    if 0 < p < 0.0005:
        return "<0.1%"
    if 0.9995 <= p < 1:
        return ">99.9%"
    return f"{p:.1%}"


def shown_token(token: int) -> str:
    """One token for a table cell: a space as ␣, other invisible bytes escaped."""
    return "\u2423" if token == 32 else token_str(token)


def code_span(text: str) -> str:
    """`text` as a Markdown code span, shown as it is whatever it holds: a backtick, `*`, `<`
    (CommonMark: a fence longer than any run of backticks inside, and a space on each side,
    which the renderer removes, where the text starts or ends with one)."""
    fence = "`" * (max((len(run) for run in re.findall("`+", text)), default=0) + 1)
    spaced = text[:1] == text[-1:] == " " and text.strip(" ")  # would lose a space each side
    pad = " " if text[:1] == "`" or text[-1:] == "`" or spaced else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def token_markdown(token: int) -> str:
    """One token in a sentence of Markdown: its shown_token in quotes, as code, so that a
    backtick, `*` or `<` shows as itself and a newline as '\\n' (not as Markdown)."""
    return code_span(f"'{shown_token(token)}'")


def round_rows(result) -> list[dict]:
    """One dict per round for a table: what was drafted, accepted and appended.

    Columns: round, drafted (text), k (drafts), accepted (m), appended (text), role of the
    appended token, tokens gained, and the running total of tokens per target forward.
    """
    checked_result(result)
    rows, tokens = [], 0
    for index, round_ in enumerate(result.rounds):
        tokens += len(round_.new_tokens)
        rows.append(
            {
                "round": index + 1,
                "drafted": "".join(shown_token(t) for t in round_.drafted),
                "k": len(round_.drafted),
                "accepted": round_.accepted,
                "kept": "".join(shown_token(t) for t in round_.drafted[: round_.accepted]),
                "appended": shown_token(round_.appended),
                "appended as": round_role(round_.drafted, round_.accepted),
                "tokens gained": len(round_.new_tokens),
                "tokens per forward so far": min(tokens, len(result.tokens)) / (index + 1),
            }
        )
    return rows


# --- where an output's bytes came from (lesson 06: copied, a loop, or new) -------------------

PROVENANCE_MEANING = {
    "prompt": "copied from the prompt",
    "loop": "repeats the model's own earlier output",
    "new": "new",
}
PROVENANCE_STYLES = {
    "prompt": "background:#CFE2F1;color:#003F66;text-decoration:underline 2px #0072B2;"
    "text-underline-offset:3px",
    "loop": "background:#F6D2BC;color:#7A2E00;text-decoration:underline dotted 2px #D55E00;"
    "text-underline-offset:3px",
    "new": "",
}


def provenance_html(output_tokens, labels: list[str]) -> str:
    """An output as an HTML block, each byte styled by its label (scenarios.output_provenance).

    Copies of the prompt are underlined, loops underlined with dots, new text as is; each
    marked run also names its label on hover.
    """
    tokens = list(output_tokens)
    if len(labels) != len(tokens) or set(labels) - set(PROVENANCE_STYLES):
        raise ValueError("need one label per output token: 'prompt', 'loop' or 'new'")
    decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
    runs: list[list[str]] = []  # [label, text]
    for token, label in zip(tokens, labels, strict=True):
        text = decoder.decode(bytes([token]))  # a character takes the label of its last byte
        if not text:
            continue  # the middle of a multi-byte character
        if runs and runs[-1][0] == label:
            runs[-1][1] += text
        else:
            runs.append([label, text])
    if tail := decoder.decode(b"", final=True):  # a character cut off at the end
        runs.append([labels[-1], tail])
    spans = []
    for label, text in runs:
        shown = html.escape(visible(text, "plain"))
        if label == "new":
            spans.append(shown)
        else:
            spans.append(
                f"<span class='speclab-{label}' title='{PROVENANCE_MEANING[label]}' "
                f"style='{PROVENANCE_STYLES[label]}'>{shown}</span>"
            )
    legend = " &nbsp;|&nbsp; ".join(
        f"<span style='{PROVENANCE_STYLES[label]};padding:0 2px'>{label}</span> "
        f"{PROVENANCE_MEANING[label]}"
        for label in ("prompt", "loop")
    )
    return (
        "<pre style='font-family:monospace;white-space:pre-wrap;line-height:1.6;"
        "border:1px solid #BBBBBB;padding:0.5em'>" + "".join(spans) + "</pre>"
        f"<div style='font-size:0.9em'>{legend} &nbsp;|&nbsp; plain: new</div>"
    )
