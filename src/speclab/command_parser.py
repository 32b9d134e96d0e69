"""The parser of the `speclab` command: argparse's, with a hint for each mistake people make
typing a command, and its messages in the learner's language where the command speaks it.

The hints: a student's file whose name starts with "-" (read as an unknown option), a value
that starts with "-" (`--max-min -inf`), a prompt that starts with "-", a prompt of several
words typed without quotes (the command line given back, the prompt quoted), options written
after `--`. A word a command does not take gets that command's usage, not the top one's.
Used by `speclab.cli.build_parser`. Left out: an option given twice takes its last value, as
argparse (and most commands) do, so that a later option can override an earlier one.
"""

import argparse
import os
import re
import shlex
import sys

from speclab import argparse_words
from speclab.i18n import Message
from speclab.student_files import shown  # escapes what a terminal would obey


def parser_class(tr, arguments: list[str]) -> type[argparse.ArgumentParser]:
    """An ArgumentParser class (its subparsers are made of the same class) whose errors
    speak `tr`'s language (None: English) and explain a mistake in `arguments`, the
    command line it will parse."""

    class Parser(argparse.ArgumentParser):  # subparsers are made of the same class
        def error(self, message):
            if tr is not None:
                message = argparse_words.error_text(message, tr)
            # a student's file named "-guesses.csv" is read as an unknown option
            if name := _dashed_file(arguments):
                hint = Message(argparse_words.DASHED_FILE, {"name": shown(name)}).text(tr)
                joined = (
                    argparse_words.WITH_HINT if tr is None else tr.gettext(argparse_words.WITH_HINT)
                )
                message = joined.format(problem=message, hint=hint)
            elif dashed := _dashed_value(message, arguments, self._option_string_actions):
                option, value = dashed
                message += f"; to give a value that starts with '-', write {option}={value}"
            elif found := self._dashed_prompts(arguments):
                prog, text = found[0], found[1][0]
                message += (f"; '{shown(text)}' is read as an option: to give a prompt that "
                            f"starts with '-', put -- before it, after every option "
                            f"({prog} -- '{shown(text)}')")  # fmt: skip
            elif again := self._prompt_in_pieces(message, arguments):
                message += f"; a prompt of several words goes in quotes, as one argument: {again}"
            elif self._options_after_dashes(message, arguments):
                message += "; every word after -- is read as the prompt: give the options first"
            if tr is None:
                super().error(message)
            self.print_usage(sys.stderr)
            problem = tr.gettext("error: {problem}").format(problem=message)
            self.exit(2, f"{self.prog}: {problem}\n")

        def parse_args(self, args=None, namespace=None):
            # Python 3.13 reads `demo -hello` (or `demo -x -hello`, `check-guesses -hw1.csv`)
            # as -h and prints the help, status 0 (3.11: an error that gets the hint below):
            # such a word, -h and more, is refused before argparse acts, by its command
            found = self._dashed_words(arguments if args is None else list(args))
            if found and any(text.startswith("-h") and text[1] != "-" for text in found[1]):
                prog, texts = found
                self._command(prog.split()[-1]).error(f"unrecognized arguments: {' '.join(texts)}")
            parsed, extras = self.parse_known_args(args, namespace)
            if extras:  # argparse blames the top parser: the command's own usage helps more
                command = getattr(parsed, "command", None)
                self._command(command).error(f"unrecognized arguments: {' '.join(extras)}")
            return parsed

        def _command(self, name: str | None) -> argparse.ArgumentParser:
            """The parser of the command `name` (this one where there is no such command)."""
            if not self._subparsers:
                return self
            return self._subparsers._group_actions[0].choices.get(name) or self

        def format_usage(self):
            text = super().format_usage()
            return text if tr is None else argparse_words.help_text(text, tr)

        def format_help(self):
            text = super().format_help()
            return text if tr is None else argparse_words.help_text(text, tr)

        def _reads_as_number(self, text: str) -> bool:
            """Whether argparse takes text as a negative number, a value and never an option:
            "-5" and "-.5", but not "-1e5", which float() reads and argparse (3.11, 3.13.0)
            takes for an option."""
            matcher = getattr(self, "_negative_number_matcher", None)  # argparse's own
            return bool(matcher.match(text)) if matcher is not None else _float(text)

        def _prompt_in_pieces(self, message: str, argv: list[str]) -> str | None:
            """The command line again with the words of a prompt typed without quotes
            (`speclab demo hello world`: argparse takes "hello" as the prompt and refuses
            "world") as one quoted argument, after the options typed; None otherwise."""
            unknown, command = _unrecognized(message), self.prog.split()[-1]
            if not self._takes_a_prompt() or not unknown or command not in argv:
                return None
            if any(word.startswith("-") and len(word) > 1 for word in unknown):
                return None  # an unknown option: not this mistake (a lone "-" is a word)
            typed, options, words, value_next = argv[argv.index(command) + 1 :], [], [], False
            if "--" in typed:  # `demo --k 3 -- -x foo`: all of it after -- is the prompt
                options, words = typed[: typed.index("--") + 1], typed[typed.index("--") + 1 :]
            else:
                for word in typed:
                    if value_next or (word.startswith("-") and len(word) > 1):
                        options.append(word)  # an option, or its value
                        action = None if value_next else self._option_named(word)
                        value_next = action is not None and action.nargs != 0 and "=" not in word
                    else:
                        words.append(word)
            if len(words) < 2:
                return None
            return shown(shlex.join([*self.prog.split(), *options, " ".join(words)]))

        def _option_named(self, word: str):
            """The option `word` names as argparse reads it: the whole name, or a prefix of
            one long option only (`--max-new` for --max-new-tokens); None if none."""
            name = word.split("=", 1)[0]
            if name in self._option_string_actions:
                return self._option_string_actions[name]
            found = {action for option, action in self._option_string_actions.items()
                     if name.startswith("--") and option.startswith(name)}  # fmt: skip
            return found.pop() if len(found) == 1 else None

        def _takes_a_prompt(self) -> bool:
            return any(action.dest == "prompt" for action in self._get_positional_actions())

        def _options_after_dashes(self, message: str, argv: list[str]) -> bool:
            """`speclab demo -- -x --k 2`: after --, every word is the prompt's."""
            unknown = _unrecognized(message)
            if not unknown or "--" not in argv or not self._takes_a_prompt():
                return False
            after = argv[argv.index("--") + 1 :]
            return any(word.startswith("-") for word in unknown) and unknown[0] in after

        def _dashed_prompts(self, argv: list[str]) -> tuple[str, list[str]] | None:
            """_dashed_words, where the command takes a prompt."""
            found = self._dashed_words(argv)
            if found and self._command(found[0].split()[-1])._takes_a_prompt():
                return found
            return None

        def _dashed_words(self, argv: list[str]) -> tuple[str, list[str]] | None:
            """(command, the arguments before "--" that start with "-" and are not its
            options: "-hello" is read as -h ello, `check-guesses -hw1.csv` as -h w1.csv);
            None where there are none."""
            for action in self._subparsers._group_actions if self._subparsers else ():
                # `speclab demo --k 3 -x`: argparse blames the top parser for "-x"
                for i, text in enumerate(argv):
                    if text in action.choices:
                        return action.choices[text]._dashed_words(argv[i + 1 :])
                return None
            options, found = self._option_string_actions, []
            for i, text in enumerate(argv):
                if text == "--":
                    break
                # `--target -my.npz`, `--init -hx.npz` (a prefix argparse takes): a value
                before = self._option_named(argv[i - 1]) if i and "=" not in argv[i - 1] else None
                if before is not None and before.nargs != 0:
                    continue
                name = text.split("=", 1)[0]
                if (
                    text.startswith("-")
                    and len(text) > 1
                    and name not in options
                    and not any(o.startswith(name) for o in options if o.startswith("--"))
                    and not self._reads_as_number(text)
                    # with a space argparse takes it as text, unless it starts with a short
                    # option: "-h is it" is -h with " is it"
                    and (" " not in text or (text[1] != "-" and text[:2] in options))
                ):
                    found.append(text)
            return (self.prog, found) if found else None

        def _print_message(self, message, file=None):
            # argparse drops an OSError here (unbuffered output, PYTHONUNBUFFERED=1):
            # `speclab --help > /dev/full` would end in 0. An error message to a stderr that
            # cannot be written is dropped as argparse drops it: the status, 2, still says it.
            file = file or sys.stderr
            if message and file is not None:
                try:
                    file.write(message)
                except OSError:
                    if file is not sys.stderr:
                        raise

    return Parser


def _unrecognized(message: str) -> list[str]:
    """The words argparse's "unrecognized arguments: ..." message names ([] for another)."""
    prefix = "unrecognized arguments: "
    return message.removeprefix(prefix).split(" ") if message.startswith(prefix) else []


def _dashed_value(message: str, argv: list[str], options) -> tuple[str, str] | None:
    """(option, value) where argparse said an option expected an argument because the value
    given after it starts with '-' (argparse reads "-inf" or "-0.1=2" as an option; `--max-min
    -inf` too); None where the word after it is one of the command's own options (a value
    forgotten, as in `--out --quick`)."""
    found = re.fullmatch(r"argument (\S+): expected one argument", message)
    if found is None:
        return None
    names = found[1].split("/")  # "-o/--out"

    def names_an_option(word: str, among) -> bool:  # argparse takes --max-min for --max-minutes
        word = word.split("=", 1)[0]
        return word in among or word.startswith("--") and any(o.startswith(word) for o in among)

    for i, text in enumerate(argv[:-1]):
        value = argv[i + 1]
        if (names_an_option(text, names) and value.startswith("-") and value != "--"
                and not names_an_option(value, options)):  # fmt: skip
            return text, value
    return None


def _dashed_file(argv: list[str]) -> str | None:
    """The first argument before any "--" that starts with "-" and names an existing file."""
    for text in argv:
        if text == "--":
            return None
        if text.startswith("-") and len(text) > 1 and os.path.isfile(text):
            return text
    return None


def _float(text: str) -> bool:
    """Whether text reads as a number (where argparse's own pattern is not there to ask)."""
    try:
        float(text)
    except ValueError:
        return False
    return True
