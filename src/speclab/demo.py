"""`speclab demo`: speculative decoding on the shipped model, shown round by round (lesson 05).

Runs plain greedy decoding and speculative decoding on one prompt, prints the continuation
with every token marked by where it came from (accepted draft, the target's correction,
bonus token, plain step; see `speclab.render`), then the round statistics and whether the
two outputs are the same bytes. Colour follows the usual conventions: only on a terminal,
never when NO_COLOR is set and non-empty, unless `--color always` asks for it.

`EXAMPLES` are the built-in prompts that lesson 05 offers too: a code edit (a function
and the start of its edited copy), a verbatim repeat, and free text. They were written
for this project.

Left out: timing worth the name (one run each here; `speclab bench` interleaves repeats).
"""

import argparse
import os
import re
import sys

from speclab.adaptive import AdaptiveK
from speclab.cli import as_typed, path_argument
from speclab.decoding import context_overflow, greedy_decode, speculative_decode
from speclab.drafters import MAX_NGRAM, ModelDrafter, PromptLookupDrafter
from speclab.render import counted, legend_ansi, render_ansi
from speclab.student_files import printable
from speclab.timing import blas_threads
from speclab.tokenizer import decode, encode
from speclab.weights import DRAFT_DTYPE, load, load_draft, load_target

_FUNCTION = '''def moving_average(values, window):
    """Return the mean of every run of `window` neighbouring values."""
    averages = []
    for start in range(len(values) - window + 1):
        chunk = values[start:start + window]
        averages.append(sum(chunk) / window)
    return averages
'''
EXAMPLES = {
    # copy-heavy: the prompt asks for the function again with one name changed
    "code-edit": _FUNCTION + "\n# edited:\ndef moving_average(values_2, window):\n",
    # copy-heavy: the prompt asks for the function again as it is
    "repeat": _FUNCTION + "\n# again:\n" + _FUNCTION.split("\n")[0] + "\n",
    # free text: the prompt asks for new words (what the model writes may still repeat)
    "free-text": (
        "# Notes on the design of the scheduler\n"
        "#\n"
        "# Each worker takes the oldest job from the queue, runs it, and reports the\n"
        "# result to the main thread. When a job fails, the"
    ),
}

# The edited copy: the original body with the parameter's uses renamed (the docstring's
# plain word "values" stays).
_EDITED_BODY = re.sub(r"\bvalues\b(?=[)\[])", "values_2", _FUNCTION.split("\n", 1)[1])


def code_edit_note(result, drafter) -> str:
    """Lesson 05's sentences on a *code-edit* run: did the model write the renamed name, which
    corrections come from the edit (the drafter copying the rename's `_2` from the edited
    line), and where, if anywhere, the model's own copy of the edited function breaks.

    result: the speculative DecodeResult of EXAMPLES["code-edit"]; drafter: a fresh
    PromptLookupDrafter like the one that made it (asked again where each rejected draft
    was copied from)."""
    from speclab.render import token_markdown, token_roles

    prompt, wanted = EXAMPLES["code-edit"], _EDITED_BODY.encode()
    written, n = decode(result.tokens), len(result.tokens)
    if "values_2" in written:
        sentences = ["The model wrote the renamed `values_2`."]
    elif "(values)" in written or "values[" in written:  # the body's uses, not the docstring's
        sentences = ["Where the edit asks for `values_2` the model wrote the old `values`."]
    else:
        sentences = [
            f"In its {n} byte{'s' * (n != 1)} the model has not yet written a use of the "
            "parameter in the function's body, old name or new."
        ]
    pairs = enumerate(zip(result.tokens, wanted, strict=False))
    broken = next((i for i, (got, want) in pairs if got != want), None)  # the copy's first slip
    end = n if broken is None else broken  # up to here the model copies the edited function
    rename = prompt.index("values_2", prompt.index("# edited:")) + len("values")
    text, position, corrected, from_edit = list(result.prompt_tokens), 0, 0, []
    for number, round_ in enumerate(result.rounds, 1):
        at = position + round_.accepted  # where the target corrected a draft, if it did
        if round_.accepted < len(round_.drafted) and at < end:
            corrected += 1
            start = drafter.source(text)
            if start is not None and rename <= start + round_.accepted < rename + 2:
                from_edit.append(number)
        text += round_.new_tokens
        position += len(round_.new_tokens)
    before = "" if broken is None else " before the copy breaks"
    if from_edit:
        rounds = " and ".join(map(str, from_edit[-2:]))
        rounds = ", ".join([*map(str, from_edit[:-2]), rounds])
        sentences.append(
            f"At round{'s' * (len(from_edit) > 1)} {rounds} the drafter copied the rename's "
            "`_2` from the edited line where the model went on as the function does: "
            f"{'those corrections come' if len(from_edit) > 1 else 'that correction comes'} "
            "from the edit."
        )
    elif corrected:
        sentences.append(f"None of the corrections{before} comes from the edit.")
    others = corrected - len(from_edit)
    drafters_own = (
        f"{'every other correction' if from_edit else 'every correction'}{before} is the "
        "drafter's: its last few bytes also occur at another earlier place, and it proposed "
        "what followed that place (find it for one correction)."
    )
    if broken is None:
        so_far = "" if n >= len(wanted) else " so far"
        sentences.append(
            f"The model copied the function byte for byte{so_far}"
            + (f", so {drafters_own}" if others else ".")
        )
    else:
        sentences.append(
            f"The model's own copy breaks at round {token_roles(result)[broken][2] + 1}: it wrote "
            f"{token_markdown(result.tokens[broken])} where the function it copies, with the "
            f"edit's rename, has "
            f"{token_markdown(wanted[broken])}, and from there it no longer follows the function "
            "byte for byte." + (f" {drafters_own[0].upper()}{drafters_own[1:]}" if others else "")
        )
    return " ".join(sentences)


# Most drafts per round: far above any useful k. The adaptive policy's planning costs O(k)
# per round, so a mistyped 10**9 would hang instead of failing.
MAX_K = 64


EXIT_STATUS = (
    "0 the two outputs are the same bytes, 1 they are not (a bug: please report it) or a "
    "weights file cannot be read, 2 a bad argument"
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.description = (
        "Decode a prompt with the shipped target model twice, plain greedy and speculative\n"
        "(draft k tokens, verify them in one target forward). Print the continuation with\n"
        "each token marked by where it came from, the round statistics, and whether both\n"
        "outputs are the same bytes."
    )
    parser.epilog = (
        "examples:  speclab demo --example code-edit --k 4\n"
        "           speclab demo $'def add(a, b):\\n    return a + b\\n\\ndef add(' --drafter model\n"
        "Prompts are bytes (one token each); use $'...' in bash for line breaks."
    )
    parser.formatter_class = argparse.RawDescriptionHelpFormatter
    parser.add_argument("prompt", nargs="?", help="the prompt text (or use --example)")
    parser.add_argument(
        "--example",
        choices=sorted(EXAMPLES),
        help="a built-in prompt instead: code-edit and repeat are copy-heavy, free-text is not",
    )
    parser.add_argument(
        "--k", type=int, default=4, help=f"most drafts per round (default 4, at most {MAX_K})"
    )
    parser.add_argument(
        "--drafter",
        choices=("lookup", "model"),
        default="lookup",
        help="lookup: propose what followed the last n-gram earlier in the text (default); "
        "model: the shipped small draft model",
    )
    parser.add_argument(
        "--max-new-tokens", type=int, default=120, help="tokens to generate (default 120)"
    )
    parser.add_argument(
        "--fixed-k",
        action="store_true",
        help="draft exactly k every round (default: the adaptive policy picks at most k)",
    )
    parser.add_argument(
        "--max-ngram", type=int, help=f"lookup: longest n-gram (3, at most {MAX_NGRAM})"
    )
    parser.add_argument("--min-ngram", type=int, help="lookup: shortest n-gram (1)")
    parser.add_argument(
        "--color",
        choices=("auto", "always", "never"),
        default="auto",
        help="auto (default): colour only on a terminal and when NO_COLOR is unset or empty",
    )
    parser.add_argument(
        "--target", metavar="NPZ", type=path_argument, help="target weights (default: shipped)"
    )
    parser.add_argument(
        "--draft", metavar="NPZ", type=path_argument, help="draft weights (default: shipped)"
    )


def use_color(choice: str, stream=None) -> bool:
    """Whether to write escape codes: `always`, `never`, or auto (a terminal and no NO_COLOR)."""
    if choice != "auto":
        return choice == "always"
    stream = stream or sys.stdout
    if os.environ.get("NO_COLOR"):
        return False
    return bool(getattr(stream, "isatty", lambda: False)())


class DemoError(Exception):
    """A one-line problem with the arguments or the files (status 2 or 1)."""

    def __init__(self, message: str, status: int = 2):
        super().__init__(message)
        self.status = status


def _prompt_text(args) -> tuple[str, str]:
    """(label, text) of the prompt from the positional argument or --example."""
    if args.example and args.prompt is not None:
        raise DemoError("give a prompt or --example, not both")
    if args.example:
        return args.example, EXAMPLES[args.example]
    if args.prompt is None:
        raise DemoError("give a prompt (text) or --example NAME; see speclab demo --help")
    if not args.prompt:
        raise DemoError("the prompt is empty: give at least one character")
    return "your prompt", _check_text(args.prompt)


def _check_text(prompt: str) -> str:
    """The prompt as text that UTF-8 can encode (it becomes one token per byte).

    Bytes that are not UTF-8 reach Python's argv as lone surrogates U+DC80..U+DCFF
    (surrogateescape), so name the byte the user typed rather than the surrogate. Under an
    ASCII locale (LC_ALL=C with PYTHONUTF8=0) even UTF-8 arrives so: such bytes are read as
    UTF-8 first.
    """
    prompt = as_typed(prompt)  # not UTF-8 either: named below
    try:
        prompt.encode("utf-8")
        return prompt
    except UnicodeEncodeError as error:
        character = prompt[error.start]
        code = ord(character)
        what = f"byte 0x{code - 0xDC00:02x}" if 0xDC80 <= code <= 0xDCFF else f"U+{code:04X}"
        raise DemoError(
            f"the prompt is not valid UTF-8 text ({what} at character {error.start + 1}); "
            "give text, e.g. $'...' in bash for line breaks"
        ) from None


# Stand-ins for the marks of speclab.render on a console that cannot show them (an ASCII or
# Windows code-page console would otherwise print them as \u2039 escapes).
ASCII_MARKS = str.maketrans(
    {"\u2039": "<", "\u203a": ">", "\u00b7": ".", "\u21b5": "~", "\u2192": ">"}
)


def _for_console(text: str) -> str:
    """text with ASCII_MARKS for the marks the console's encoding cannot show, and only those:
    a Windows console (cp1252) shows ‹ › and ·, so a space stays · there, never a '.' that
    reads as a full stop."""
    encoding = getattr(sys.stdout, "encoding", None) or "utf-8"
    missing = {}
    for mark, stand_in in ASCII_MARKS.items():
        try:
            chr(mark).encode(encoding)
        except (UnicodeEncodeError, LookupError):
            missing[mark] = stand_in
    return text.translate(missing) if missing else text


def _load(path, default_loader, what: str):
    try:  # a file given loads as the default one does: the draft in float32, the target float64
        if path is not None:
            return load(path, **({"dtype": DRAFT_DTYPE} if what == "draft" else {}))
        return default_loader()
    except FileNotFoundError as error:
        if path is not None:  # named with its role, as a refused file is (below)
            raise DemoError(f"the {what} model (--{what}): {error}", status=1) from None
        raise DemoError(f"{error} (train it: speclab train {what})", status=1) from None
    except ValueError as error:  # named with its role: a draft and a target may share a name
        raise DemoError(f"the {what} model (--{what}): {error}", status=1) from None


def _check_numbers(args) -> None:
    """The settings that need no model: checked before anything is loaded."""
    if args.k < 1:
        raise DemoError(f"--k must be at least 1, got {args.k}")
    if args.k > MAX_K:
        raise DemoError(f"--k must be at most {MAX_K}, got {args.k}")
    if args.max_new_tokens < 1:
        raise DemoError(f"--max-new-tokens must be at least 1, got {args.max_new_tokens}")
    if not 1 <= args.min_ngram <= args.max_ngram:
        raise DemoError(
            f"need 1 <= --min-ngram <= --max-ngram, got {args.min_ngram} and {args.max_ngram}"
        )
    if args.max_ngram > MAX_NGRAM:  # the lookup drafter indexes n-grams up to MAX_NGRAM
        raise DemoError(f"--max-ngram must be at most {MAX_NGRAM}, got {args.max_ngram}")


def _check_context(args, prompt_tokens: list[int], n_ctx: int, which: str = "model") -> None:
    """Prompt and output must fit the window: a draft model beyond its own would crash
    reading a long prompt, or silently stop drafting and make speculation look useless."""
    window, new = f"the {which}'s context window", "--max-new-tokens ({})"
    fewer = "give --max-new-tokens of at most {}"
    problem = context_overflow(len(prompt_tokens), args.max_new_tokens, n_ctx, "the prompt",
                               new=new, window=window, fewer=fewer,
                               shorter="give a prompt of at most {} tokens")  # fmt: skip
    if problem:
        raise DemoError(problem)


def statistics_lines(spec, greedy) -> list[str]:
    """The round statistics of a speculative run next to its greedy reference."""
    saved = greedy.target_forwards - spec.target_forwards
    rate = f"{spec.accepted_over_drafted:.2f}" if spec.drafted_count else "n/a, nothing drafted"
    return [
        f"rounds: {len(spec.rounds)}   target forwards: {spec.target_forwards} "
        f"(greedy: {greedy.target_forwards}, saved: {saved})   "
        f"tokens per target forward: {spec.tokens_per_target_forward:.2f}",
        f"drafted: {spec.drafted_count}   accepted: {spec.accepted_count} "
        f"(accepted/drafted: {rate})   "
        f"tokens per round: {spec.mean_accepted_length:.2f} (accepted drafts + the target's own)",
        f"time: speculative {spec.seconds:.3f} s, greedy {greedy.seconds:.3f} s "
        "(one run each, not a benchmark: see speclab bench)",
    ]


def drafts_per_round(how: str, k: int) -> str:
    """'exactly k = 1 draft per round', 'adaptive, at most k = 4 drafts per round'."""
    return f"{how} k = {counted(k, 'draft')} per round"


def policy_off_line(policy: AdaptiveK, rounds: int, fixed: str = "--fixed-k drafts") -> str:
    """Why some of the run's `rounds` drafted nothing, or "" if the adaptive policy never
    switched drafting off. (Its last round, which the decoder runs without asking the
    policy, and rounds it spends timing a plain step are not 'off'.) fixed: how to draft
    every round instead, in the words of the command or widget that ran it."""
    off = sum(decision.mode == "off" for decision in policy.decisions)
    if not off:
        return ""
    timed = sum(decision.mode == "time plain step" for decision in policy.decisions)
    timing = f", besides {counted(timed, 'plain step')} it took to time one" if timed else ""
    return (
        f"drafting off in {off} of {counted(rounds, 'round')}{timing}: from its own timings on "
        "this machine the adaptive policy predicted that drafting would not pay there (a busy "
        f"machine can mislead it); {fixed} every round"
    )


def match_line(spec, greedy) -> tuple[bool, str]:
    """Whether the two outputs are the same bytes, said in one line."""
    same = bytes(spec.tokens) == bytes(greedy.tokens)
    if same:
        return (
            True,
            f"matches greedy decoding byte for byte: yes ({counted(len(spec.tokens), 'byte')})",
        )
    first = next(
        (i for i, (a, b) in enumerate(zip(spec.tokens, greedy.tokens, strict=False)) if a != b),
        min(len(spec.tokens), len(greedy.tokens)),
    )
    return False, f"matches greedy decoding byte for byte: NO (first difference at byte {first})"


def run(args) -> int:
    try:
        return _run(args)
    except DemoError as error:
        print(printable(f"speclab demo: error: {error}"), file=sys.stderr)
        return error.status


def _run(args) -> int:
    ngrams_given = args.max_ngram is not None or args.min_ngram is not None
    args.max_ngram = 3 if args.max_ngram is None else args.max_ngram
    args.min_ngram = 1 if args.min_ngram is None else args.min_ngram
    label, prompt = _prompt_text(args)
    prompt_tokens = encode(prompt)
    _check_numbers(args)
    target = _load(args.target, load_target, "target")
    _check_context(args, prompt_tokens, target.config.n_ctx)
    if args.drafter == "lookup":
        if args.draft is not None:  # said, not ignored in silence
            print("speclab demo: note: --draft is read only with --drafter model; the lookup "
                  "drafter needs no draft model", file=sys.stderr)  # fmt: skip
        drafter = PromptLookupDrafter(args.max_ngram, args.min_ngram)
    else:
        if ngrams_given:  # said, not ignored in silence
            print("speclab demo: note: --max-ngram and --min-ngram are read only with the lookup "
                  "drafter; the draft model needs no n-grams", file=sys.stderr)  # fmt: skip
        draft = _load(args.draft, load_draft, "draft")
        _check_context(args, prompt_tokens, draft.config.n_ctx, "draft model")
        drafter = ModelDrafter(draft)
    # one BLAS thread, as speclab bench decode times: a second thread fighting other programs
    # for the cores made the adaptive policy's timings, and so its choices, erratic
    policy = None if args.fixed_k else AdaptiveK(args.k)
    with blas_threads(1):
        greedy = greedy_decode(target, prompt_tokens, args.max_new_tokens)
        spec = speculative_decode(
            target,
            drafter,
            prompt_tokens,
            args.max_new_tokens,
            args.k,
            policy=policy,
            adaptive=not args.fixed_k,
        )
    color = use_color(args.color)
    how = "exactly" if args.fixed_k else "adaptive, at most"
    print(f"== prompt ({label}, {counted(len(prompt_tokens), 'byte')}) ==")
    shown = printable(prompt)  # escape codes and bidi controls shown, not obeyed
    print(f"\x1b[2m{shown}\x1b[0m" if color else shown)
    print(
        f"== continuation: {counted(len(spec.tokens), 'token')}; target: "
        f"{printable(target.name or 'model')}, drafter: {printable(drafter.name)}, "
        f"{drafts_per_round(how, args.k)} =="
    )
    print(_for_console(render_ansi(spec, color=color)))
    print(_for_console(f"== legend == {legend_ansi(color)}"))
    print("\n".join(statistics_lines(spec, greedy)))
    if policy is not None and (off := policy_off_line(policy, len(spec.rounds))):
        print(off)
    same, line = match_line(spec, greedy)
    print(line)
    if not same:  # cannot happen unless decoding is broken: say what to compare
        print(f"greedy continuation was: {decode(greedy.tokens)!r}")
    return 0 if same else 1
