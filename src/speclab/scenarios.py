"""Benchmark scenarios: prompt files, their validation, and where an output's text came from.

Lesson 06 asks which kinds of text make speculative decoding pay. Each scenario is one
TOML file in `data/prompts/` (copy-heavy, structured, counting, free text) holding
several prompts; `load_scenarios` reads and checks them all, and any problem is a
`ScenarioError` that names the file, the prompt and what is wrong.

A lookup drafter feeds on repeated text, and a repeat has two very different origins:
genuine copying of the prompt (an edit of a given function) and a loop, where a small
model under greedy decoding repeats what it has itself just written. `output_provenance`
labels every output token "prompt", "loop" or "new" by a left-to-right parse in the
manner of LZ77 (Ziv and Lempel 1977): at each position take the longest span of at least
`min_span` tokens that occurs earlier, in the prompt or in the output itself.

Left out: prompt templates and chat formats (the model continues raw bytes), and
deduplication of prompts across scenarios.
"""

import hashlib
import re
import tomllib
from dataclasses import dataclass
from pathlib import Path

from speclab.tokenizer import as_token_list, encode

SCENARIO_KEYS = {"name", "description", "max_new_tokens", "prompts"}
PROMPT_KEYS = {"id", "source", "text", "max_new_tokens"}
PROMPT_ID = re.compile(r"[a-z0-9][a-z0-9-]*")
SOURCES = ("written for the project", "standard library")  # a source starts with one of these
MIN_PROMPTS = 2  # "several prompts" per scenario


class ScenarioError(ValueError):
    """A prompt file that cannot be used; the message names the file and the problem."""


@dataclass(frozen=True)
class Prompt:
    id: str  # unique within its scenario: lowercase letters, digits, dashes
    text: str
    source: str  # "written for the project" or "standard library: <module>"
    max_new_tokens: int

    @property
    def tokens(self) -> list[int]:
        return encode(self.text)


@dataclass(frozen=True)
class Scenario:
    name: str
    description: str
    prompts: tuple[Prompt, ...]
    path: Path

    def check_fits(self, n_ctx: int) -> None:
        """Raise ScenarioError if some prompt + its new tokens exceed the context window."""
        from speclab.decoding import context_overflow

        for prompt in self.prompts:
            where = f"{self.path.name}: prompt {prompt.id!r}"
            fewer = "give it max_new_tokens = {} at most"
            if problem := context_overflow(
                len(prompt.tokens), prompt.max_new_tokens, n_ctx, where, fewer=fewer
            ):
                raise ScenarioError(problem)


def _positive_int(value, where: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ScenarioError(f"{where}: max_new_tokens must be a positive integer, got {value!r}")
    return value


def _string(table: dict, key: str, where: str) -> str:
    if key not in table:
        raise ScenarioError(f"{where}: missing {key!r}")
    value = table[key]
    if not isinstance(value, str):
        raise ScenarioError(f"{where}: {key!r} must be a string, got {type(value).__name__}")
    if not value.strip():  # a benchmark prompt of spaces would time nothing a lesson shows
        what = "is empty" if not value else "holds only white space"
        raise ScenarioError(f"{where}: {key!r} {what}; give it some text")
    return value


def _prompt(table, number: int, default_max_new: int, file: str) -> Prompt:
    where = f"{file}: prompt {number}"
    if not isinstance(table, dict):
        raise ScenarioError(f"{where}: must be a table ([[prompts]])")
    if unknown := sorted(set(table) - PROMPT_KEYS):
        raise ScenarioError(f"{where}: unknown key {unknown[0]!r} (allowed: {sorted(PROMPT_KEYS)})")
    prompt_id = _string(table, "id", where)
    where = f"{file}: prompt {number} ({prompt_id!r})"
    if not PROMPT_ID.fullmatch(prompt_id):
        raise ScenarioError(f"{where}: id must be lowercase letters, digits and dashes")
    source = _string(table, "source", where)
    if not source.startswith(SOURCES):
        raise ScenarioError(f"{where}: source must start with one of {SOURCES}, got {source!r}")
    max_new = _positive_int(table.get("max_new_tokens", default_max_new), where)
    return Prompt(prompt_id, _string(table, "text", where), source, max_new)


MAX_SCENARIO_BYTES = 2**20  # the shipped ones are 1-4 kB; a 1 GB file took 2 GB to refuse


def load_scenario(path) -> Scenario:
    """Read and check one scenario file (TOML: name, description, max_new_tokens, [[prompts]])."""
    path = Path(path)
    if path.exists() and not path.is_file():  # a folder named x.toml; a pipe would hang the read
        raise ScenarioError(f"{path}: not a regular file (a folder, a pipe or a device)")
    if path.is_file() and path.stat().st_size > MAX_SCENARIO_BYTES:  # read whole, then parsed
        raise ScenarioError(f"{path.name}: {path.stat().st_size:,} bytes; a scenario file holds "
                            f"a few prompts (at most {MAX_SCENARIO_BYTES:,} bytes)")  # fmt: skip
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8-sig"))  # -sig: Notepad's BOM too
    except FileNotFoundError:
        raise ScenarioError(f"{path}: no such scenario file") from None
    except UnicodeDecodeError as error:
        raise ScenarioError(f"{path.name}: not UTF-8 text ({error.reason})") from None
    except tomllib.TOMLDecodeError as error:
        raise ScenarioError(f"{path.name}: not valid TOML ({error})") from None
    except RecursionError:  # arrays nested deeper than the parser can follow: not a prompt file
        raise ScenarioError(f"{path.name}: not valid TOML (nested too deeply)") from None
    except ValueError as error:  # an integer of more than 4,300 digits (not a TOMLDecodeError)
        raise ScenarioError(f"{path.name}: not valid TOML ({str(error).split(';')[0]})") from None
    except OSError as error:  # unreadable: permissions, a broken disk
        raise ScenarioError(f"{path}: cannot read it ({error.strerror or error})") from None
    file = path.name
    if unknown := sorted(set(data) - SCENARIO_KEYS):
        raise ScenarioError(
            f"{file}: unknown key {unknown[0]!r} (allowed: {sorted(SCENARIO_KEYS)})"
        )
    name, description = _string(data, "name", file), _string(data, "description", file)
    default_max_new = _positive_int(data.get("max_new_tokens", 128), file)
    tables = data.get("prompts")
    if not isinstance(tables, list) or len(tables) < MIN_PROMPTS:
        raise ScenarioError(f"{file}: needs at least {MIN_PROMPTS} [[prompts]] tables")
    prompts = tuple(_prompt(t, i, default_max_new, file) for i, t in enumerate(tables, 1))
    ids = [p.id for p in prompts]
    if duplicate := next((i for i in ids if ids.count(i) > 1), None):
        raise ScenarioError(f"{file}: prompt id {duplicate!r} is used more than once")
    return Scenario(name, description, prompts, path)


def load_scenarios(folder=None, names=None) -> list[Scenario]:
    """Every `*.toml` scenario in folder (default data/prompts/), in file-name order.

    names: keep only these scenario names (each must exist).
    """
    from speclab.paths import prompts_dir

    folder = Path(folder) if folder is not None else prompts_dir()
    if not folder.is_dir():
        from speclab.report_files import broken_link

        if folder.is_file():
            what = "is a file; give the folder that holds it"
        elif folder.exists():  # a FIFO, a device
            what = "is not a folder"
        else:
            what = broken_link(folder) or "no such folder"
        raise ScenarioError(f"{folder}: {what} (a folder of scenario files, *.toml)")
    from speclab.report_files import unlisted

    if reason := unlisted(folder):  # else read as a folder with no scenario files
        raise ScenarioError(f"{folder}: folder cannot be listed ({reason})")
    files = sorted(folder.glob("*.toml"))
    if not files:
        raise ScenarioError(f"{folder}: no scenario files (*.toml)")
    scenarios = [load_scenario(file) for file in files]
    seen = [s.name for s in scenarios]
    if duplicate := next((n for n in seen if seen.count(n) > 1), None):
        raise ScenarioError(f"{folder}: two files use the scenario name {duplicate!r}")
    if names is not None:
        wanted = {_loose(n) for n in names}  # `free-text` as `speclab demo --example` spells it
        if missing := [n for n in names if _loose(n) not in map(_loose, seen)]:
            raise ScenarioError(f"no scenario named {missing[0]!r} (have: {', '.join(seen)})")
        scenarios = [s for s in scenarios if _loose(s.name) in wanted]
    return scenarios


def _loose(name: str) -> str:
    """A scenario's name as it may be typed: 'free-text', 'Free_Text' -> 'free text'."""
    return re.sub(r"[-_\s]+", " ", name).strip().lower()


def prompts_sha256(scenarios: list[Scenario]) -> str:
    """One hash over every scenario's name and every prompt's id, text and token budget."""
    digest = hashlib.sha256()
    for scenario in scenarios:
        digest.update(scenario.name.encode() + b"\0")
        for p in scenario.prompts:
            digest.update(f"{p.id}\0{p.max_new_tokens}\0".encode() + p.text.encode() + b"\0")
    return digest.hexdigest()


# --- where an output's text came from -------------------------------------------------------


def _longest(occurs, most: int) -> int:
    """Largest n in 0..most with occurs(n) true, for a predicate true up to some n."""
    low, high = 0, most
    while low < high:
        middle = (low + high + 1) // 2
        if occurs(middle):
            low = middle
        else:
            high = middle - 1
    return low


def output_provenance(prompt_tokens, output_tokens, min_span: int = 16) -> list[str]:
    """A label per output token: "prompt", "loop" or "new".

    Left to right, at each position find the longest span starting there that also occurs
    in the prompt and the longest that occurs earlier in the output (a loop; overlapping
    its source is allowed, as in "abababab"). A span of at least min_span tokens labels
    all its tokens with the longer source (the prompt on a tie); otherwise the token is new.
    """
    prompt = bytes(as_token_list(prompt_tokens, "prompt_tokens"))
    output = bytes(as_token_list(output_tokens, "output_tokens"))
    labels: list[str] = []
    i = 0
    while i < len(output):
        rest = len(output) - i
        from_prompt = _longest(lambda n, i=i: output[i : i + n] in prompt, rest)
        # a span of n tokens starting before i lies within output[: i + n - 1]
        from_output = _longest(lambda n, i=i: output[i : i + n] in output[: i + n - 1], rest)
        span = max(from_prompt, from_output)
        if span >= min_span:
            labels += ["prompt" if from_prompt >= from_output else "loop"] * span
            i += span
        else:
            labels.append("new")
            i += 1
    return labels


def provenance_fractions(labels: list[str]) -> dict[str, float]:
    """{"prompt": ..., "loop": ..., "new": ...}: the share of output tokens with each label."""
    total = max(1, len(labels))
    return {kind: labels.count(kind) / total for kind in ("prompt", "loop", "new")}
