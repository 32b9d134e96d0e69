"""`speclab bench decode`: where speculative decoding pays, measured in wall-clock time (lesson 06).

Every scenario of `data/prompts/` (see speclab.scenarios) is decoded by plain greedy
decoding (the project's KV-cached decoder, the baseline) and by speculative decoding with
each drafter (prompt lookup, the draft model), k in 1, 2, 4, 8, and the adaptive policy
(speclab.adaptive.AdaptiveK, what `adaptive=True` uses). Honesty rules of the brief:

- methods are interleaved: each repeat runs every (prompt, method) pair once, the methods
  in a fresh random order; the first repeat is a warm-up and is not kept;
- speedup = greedy seconds / method seconds within the same repeat (paired), summed over
  the scenario's prompts; reported as the median with its interquartile range. Seconds are
  decoding time, the prompt's prefill (the same for every method) left out;
- every speculative output is compared with the greedy output of the same prompt, in the
  same run, and the report says whether all were equal.

Next to the measured speedup stand two predictions from the run's own measurements:
Leviathan et al. (2023)'s `expected_speedup(alpha, k, c)`, which assumes that verifying
k + 1 tokens costs one plain step, and the same with the measured cost of that verify
forward. alpha is estimated under their model (maximum likelihood: accepted / (accepted +
rejections)); c is the measured drafting time per drafted token over one plain step.
The three acceptance figures of the literature stand side by side: Leviathan's alpha,
accepted / drafted (vLLM's "draft acceptance rate") and the tokens per round (engines'
"mean accepted length"; tokens gained per round = tokens per target forward).

Left out: batching, sampling (lesson 07), GPUs. The numbers depend on the machine; a
concurrent heavy job (a training run) makes them meaningless, and the report records the
load average so a reader can tell.
"""

import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np

from speclab.adaptive import AdaptiveK, FixedK, estimate_alpha
from speclab.counting import expected_speedup, speedup_with_verify_cost
from speclab.decoding import DecodeResult, context_overflow, greedy_decode, speculative_decode
from speclab.drafters import ModelDrafter, PromptLookupDrafter
from speclab.render import counted
from speclab.scenarios import (
    Scenario,
    output_provenance,
    prompts_sha256,
    provenance_fractions,
)
from speclab.student_files import shown as shown_text
from speclab.timing import blas_threads, load_average, machine_record, model_record

K_VALUES = (1, 2, 4, 8)
DRAFTERS = ("lookup", "model")
GOALS = {
    "copy_lookup_speedup_at_least": 2.5,  # copy-heavy, lookup drafter, its best fixed k
    "copy_default_speedup_at_least": 2.2,  # copy-heavy, adaptive lookup (the default)
    "default_speedup_at_least": 0.97,  # free text and counting, adaptive lookup (the default)
    "lookup_cost_at_most": 0.05,  # lookup call per round / one plain target step
    "prediction_within": 0.10,  # measured vs predicted with measured costs
}
DEFAULT_DRAFTER = "lookup"  # what `speclab demo` and the lessons use when none is named
COPY_GOAL = "copy-heavy lookup speedup at its best fixed k"
SHARE_GOALS = ("prediction within 10 %", "free text output is not a loop")  # printed as %


def is_whole(value) -> bool:
    """A whole number as a setting needs it: an int (numpy's too), not a bool or a float."""
    return isinstance(value, (int, np.integer)) and not isinstance(value, bool)


@dataclass(frozen=True)
class Method:
    drafter: str | None  # None: plain greedy
    k: int = 0  # drafts per round (the most per round if adaptive)
    adaptive: bool = False

    @property
    def label(self) -> str:
        if self.drafter is None:
            return "greedy"
        return f"{self.drafter} adaptive" if self.adaptive else f"{self.drafter} k={self.k}"


@dataclass(frozen=True)
class Settings:
    repeats: int = 7  # kept repeats (each also has one warm-up repeat before it)
    warmup: int = 1
    max_new_tokens: int | None = None  # None: each prompt's own budget
    most_new_tokens: int | None = None  # --quick: at most this many (None: no cap)
    prompts_per_scenario: int | None = None  # None: all
    drafters: tuple[str, ...] = DRAFTERS
    k_values: tuple[int, ...] = K_VALUES
    k_max: int = 8  # the adaptive policy's most drafts per round
    max_ngram: int = 3  # the lookup drafter's n-gram range
    min_ngram: int = 1
    min_span: int = 16  # output_provenance: shortest repeat that counts as a copy or loop
    seed: int = 0
    quick: bool = False
    # BLAS threads while timing (None: the library's default). One: these models are tiny,
    # and a second thread only adds start-up cost, or worse, waits for a busy core.
    blas_threads: int | None = 1

    def __post_init__(self):  # lesson 06 builds its quick run by hand: name a bad value here
        for name, example in (("k_values", "(1, 2, 4, 8)"), ("drafters", "('lookup',)")):
            if not isinstance(getattr(self, name), (tuple, list)):
                raise ValueError(f"{name} must be a tuple, e.g. {example}, got "
                                 f"{getattr(self, name)!r}")  # fmt: skip
        whole = {"repeats": 1, "warmup": 0, "k_max": 1, "max_ngram": 1, "min_ngram": 1,
                 "min_span": 1, "seed": 0}  # fmt: skip
        optional = {"max_new_tokens": 1, "most_new_tokens": 1, "prompts_per_scenario": 1,
                    "blas_threads": 1}  # fmt: skip
        checks = [(name, getattr(self, name), least) for name, least in whole.items()]
        checks += [(name, getattr(self, name), least) for name, least in optional.items()
                   if getattr(self, name) is not None]  # fmt: skip
        checks += [("k_values", k, 1) for k in self.k_values]
        for name, value, least in checks:
            if not is_whole(value) or value < least:
                none = " or None" if name in optional else ""
                raise ValueError(f"{name} must be a whole number of at least {least}{none}, "
                                 f"got {value!r}")  # fmt: skip
        if self.min_ngram > self.max_ngram:
            raise ValueError(f"min_ngram ({self.min_ngram}) is above max_ngram ({self.max_ngram})")
        if unknown := [d for d in self.drafters if d not in DRAFTERS]:
            raise ValueError(f"drafters: {unknown[0]!r} is not one of {', '.join(DRAFTERS)}")

    def new_tokens(self, prompt_budget: int) -> int:
        """Tokens to generate for a prompt whose own budget is prompt_budget."""
        if self.max_new_tokens:
            return self.max_new_tokens
        return min(prompt_budget, self.most_new_tokens or prompt_budget)

    def methods(self) -> list[Method]:
        methods = [Method(None)]
        for drafter in self.drafters:
            methods += [Method(drafter, k) for k in self.k_values]
            methods.append(Method(drafter, self.k_max, adaptive=True))
        return methods


QUICK = Settings(repeats=3, most_new_tokens=64, prompts_per_scenario=2, quick=True)


@dataclass
class Run:
    """One timed decode: which prompt and method, its seconds, and what it did."""

    scenario: str
    prompt: str
    method: Method
    repeat: int
    seconds: float  # decoding time, prefill excluded
    result: DecodeResult
    decisions: list = field(default_factory=list)  # the adaptive policy's rounds


# --- running ---------------------------------------------------------------------------------


def _drafter(method: Method, draft_model, settings: Settings):
    if method.drafter == "lookup":
        return PromptLookupDrafter(settings.max_ngram, settings.min_ngram)
    if method.drafter == "model":
        if draft_model is None:
            raise ValueError("the model drafter needs a draft model")
        return ModelDrafter(draft_model)
    raise ValueError(f"unknown drafter {method.drafter!r} (choose from {DRAFTERS})")


def decode_once(method: Method, target, draft_model, prompt_tokens, max_new, settings):
    """(DecodeResult, the adaptive policy's decisions or []) for one method on one prompt."""
    if method.drafter is None:
        return greedy_decode(target, prompt_tokens, max_new), []
    drafter = _drafter(method, draft_model, settings)
    # AdaptiveK(k) is exactly what speculative_decode(..., adaptive=True) builds; made
    # here so that its decisions can be read afterwards.
    policy = AdaptiveK(method.k) if method.adaptive else FixedK(method.k)
    result = speculative_decode(target, drafter, prompt_tokens, max_new, method.k, policy=policy)
    return result, list(getattr(policy, "decisions", []))


def check_fits(model, which: str, scenarios: list[Scenario], settings: Settings) -> None:
    """Every prompt + its new tokens must fit the model's context window: checked before
    timing, with the --max-new-tokens in force, so a short draft model fails at once."""
    window, fewer = f"the {which}'s context window", "give --max-new-tokens of at most {}"
    stuck = ("the prompt alone fills it: give --draft-weights of a model with a longer context, "
             "or --drafter lookup" if which == "draft model" else "leave that prompt out")  # fmt: skip
    for scenario in scenarios:
        for prompt in scenario.prompts[: settings.prompts_per_scenario]:
            where = f"{scenario.path.name} prompt {prompt.id!r}"
            n_new = settings.new_tokens(prompt.max_new_tokens)
            problem = context_overflow(len(prompt.tokens), n_new, model.config.n_ctx, where,
                                       window=window, fewer=fewer, shorter="", stuck=stuck)  # fmt: skip
            if problem:
                raise ValueError(problem)


def run_decodes(target, draft_model, scenarios: list[Scenario], settings: Settings, progress=False):
    """Every (scenario, prompt, method) decoded settings.warmup + settings.repeats times.

    Returns (runs kept, greedy reference tokens {(scenario, prompt id): tokens}, check):
    check counts the speculative runs compared with greedy (warm-up included) and lists
    every one whose tokens differ.
    """
    rng = np.random.default_rng(settings.seed)
    methods = settings.methods()
    jobs = []  # (scenario name, prompt id, prompt tokens, max_new)
    check_fits(target, "target model", scenarios, settings)  # what will run, not each budget
    for scenario in scenarios:
        for prompt in scenario.prompts[: settings.prompts_per_scenario]:
            max_new = settings.new_tokens(prompt.max_new_tokens)
            jobs.append((scenario.name, prompt.id, prompt.tokens, max_new))
    total = (settings.warmup + settings.repeats) * len(jobs) * len(methods)
    from tqdm.auto import tqdm

    runs, reference, mismatches = [], {}, []
    # closed on the way out, Ctrl-C too: not redrawn after the command's "interrupted"
    # disable only to turn the bar off: an explicit disable=False would override TQDM_DISABLE=1
    quiet = {} if progress else {"disable": True}
    with tqdm(total=total, desc="bench decode", unit="run", **quiet) as bar:
        for repeat in range(-settings.warmup, settings.repeats):
            for job_index in rng.permutation(len(jobs)):
                name, prompt_id, tokens, max_new = jobs[job_index]
                for method_index in rng.permutation(len(methods)):
                    method = methods[method_index]
                    result, decisions = decode_once(
                        method, target, draft_model, tokens, max_new, settings
                    )
                    if method.drafter is None:
                        reference.setdefault((name, prompt_id), result.tokens)
                    runs.append((name, prompt_id, method, repeat, result, decisions))
                    bar.update()
    kept, checked = [], 0
    for name, prompt_id, method, repeat, result, decisions in runs:
        if method.drafter is not None:
            checked += 1
            if result.tokens != reference[name, prompt_id]:
                mismatches.append({"scenario": name, "prompt": prompt_id, "method": method.label})
        if repeat >= 0:
            seconds = result.seconds - result.prefill_seconds
            kept.append(Run(name, prompt_id, method, repeat, seconds, result, decisions))
    check = {"speculative_runs_checked": checked, "mismatches": mismatches}
    return kept, reference, check | {"all_equal": not mismatches}


# --- summarising -------------------------------------------------------------------------------


def _quartiles(values) -> dict:
    values = np.asarray(values, dtype=np.float64)
    if values.size == 0:
        return {"median": float("nan"), "q25": float("nan"), "q75": float("nan")}
    low, mid, high = np.quantile(values, [0.25, 0.5, 0.75])
    return {"median": float(mid), "q25": float(low), "q75": float(high)}


def alpha_estimate(rounds) -> float:
    """Leviathan's per-draft acceptance rate, by maximum likelihood over drafting rounds.

    Under the model "each draft accepted with probability alpha until the first rejection",
    a round contributes `accepted` successes and one failure if accepted < drafted.
    """
    if hasattr(rounds, "rounds") or not all(hasattr(r, "drafted") for r in rounds):
        raise TypeError("alpha_estimate takes a run's rounds: alpha_estimate(run.rounds)")
    accepted = sum(r.accepted for r in rounds if r.drafted)
    rejections = sum(1 for r in rounds if r.drafted and r.accepted < len(r.drafted))
    return estimate_alpha(accepted, rejections)  # the adaptive policy's estimate, undiscounted


def position_counts(rounds, k_max: int) -> tuple[list[int], list[int]]:
    """(reached[i], accepted[i]) for draft position i + 1: drafted and every earlier one kept."""
    reached, accepted = [0] * k_max, [0] * k_max
    for r in rounds:
        for i in range(min(len(r.drafted), k_max)):
            if r.accepted >= i:
                reached[i] += 1
                accepted[i] += r.accepted > i
    return reached, accepted


def speedup_with_costs(alpha: float, k: int, verify_ratio: float, draft_cost: float) -> float:
    if not np.isfinite([alpha, verify_ratio, draft_cost]).all():
        return float("nan")
    return float(speedup_with_verify_cost(alpha, k, verify_ratio, draft_cost))


def summarise_method(runs: list[Run], greedy_runs: list[Run], method: Method, k_max: int) -> dict:
    """One row: speedup with spread, costs, the three acceptance figures, predictions."""
    greedy_by_repeat, method_by_repeat = {}, {}
    for run in greedy_runs:
        greedy_by_repeat[run.repeat] = greedy_by_repeat.get(run.repeat, 0.0) + run.seconds
    for run in runs:
        method_by_repeat[run.repeat] = method_by_repeat.get(run.repeat, 0.0) + run.seconds
    speedups = [greedy_by_repeat[r] / method_by_repeat[r] for r in sorted(method_by_repeat)]
    # means throughout, as the speedup's sums: on a busy machine medians favour short rounds
    plain_step = float(np.mean([r.verify_seconds for g in greedy_runs for r in g.result.rounds]))
    rounds = [r for run in runs for r in run.result.rounds]
    tokens = sum(len(run.result.tokens) for run in runs)
    drafted = sum(len(r.drafted) for r in rounds)
    accepted = sum(r.accepted for r in rounds)
    drafting_rounds = [r for r in rounds if r.drafted]
    full_k = [r for r in rounds if len(r.drafted) == method.k] or drafting_rounds
    draft_seconds = sum(r.draft_seconds for r in rounds)
    alpha = alpha_estimate(rounds)
    verify_ratio = (
        float(np.mean([r.verify_seconds for r in full_k])) / plain_step if full_k else np.nan
    )
    draft_cost = draft_seconds / drafted / plain_step if drafted else float("nan")
    round_seconds = sum(r.draft_seconds + r.verify_seconds for r in rounds)
    # greedy's decoding seconds per token (a mean, as the speedup's sums are)
    greedy_tokens = sum(len(g.result.tokens) for g in greedy_runs)
    per_token = sum(g.seconds for g in greedy_runs) / max(1, greedy_tokens)
    row = {
        "method": method.label,
        "drafter": method.drafter or "none",
        "k": method.k,
        "adaptive": method.adaptive,
        "speedup": _quartiles(speedups)["median"],
        "speedup_q25": _quartiles(speedups)["q25"],
        "speedup_q75": _quartiles(speedups)["q75"],
        "runs": len(runs),
        "tokens": tokens,
        "rounds": len(rounds),
        "tokens_per_target_forward": tokens / max(1, sum(r.result.target_forwards for r in runs)),
        "rounds_with_drafts": len(drafting_rounds) / max(1, len(rounds)),
        "alpha_leviathan": alpha,
        "accepted_over_drafted": accepted / drafted if drafted else float("nan"),
        "mean_accepted_length": tokens / max(1, len(rounds)),
        "plain_step_ms": plain_step * 1e3,
        "draft_cost_per_token": draft_cost,  # Leviathan's c
        "draft_cost_per_round": draft_seconds / max(1, len(rounds)) / plain_step,
        "verify_ratio": verify_ratio,  # forward over k + 1 positions / one plain step
        "predicted_leviathan": float("nan"),
        "predicted_with_costs": float("nan"),
        "predicted_from_rounds": tokens * per_token / round_seconds if rounds else np.nan,
        # time per generated token in units of greedy's time per token
        "time_drafting_per_token": draft_seconds / max(1, tokens) / per_token,
        "time_verifying_per_token": (round_seconds - draft_seconds) / max(1, tokens) / per_token,
    }
    if method.drafter is not None and not method.adaptive and np.isfinite(alpha):
        row["predicted_leviathan"] = float(expected_speedup(alpha, method.k, draft_cost))
        row["predicted_with_costs"] = speedup_with_costs(alpha, method.k, verify_ratio, draft_cost)
    reached, kept = position_counts(rounds, k_max)
    row["position_reached"], row["position_accepted"] = reached, kept
    row["speedups"] = speedups
    return row


def summarise_adaptive(runs: list[Run]) -> dict:
    """What the adaptive policy did: modes, the k it chose, its last alpha estimates."""
    decisions = [d for run in runs for d in run.decisions]
    modes = [d.mode for d in decisions]
    ks = [d.k for d in decisions if d.mode in ("draft", "probe", "warm-up")]
    return {
        "rounds": len(decisions),
        "modes": {mode: modes.count(mode) for mode in sorted(set(modes))},
        "share_off": modes.count("off") / max(1, len(modes)),
        "k_chosen": {int(k): ks.count(k) for k in sorted(set(ks))},
        "mean_k_when_drafting": float(np.mean(ks)) if ks else 0.0,
        "final_alpha": [run.decisions[-1].alpha for run in runs if run.decisions],
        "trace": [
            {"mode": d.mode, "k": d.k, "drafted": d.drafted, "accepted": d.accepted}
            for d in (runs[0].decisions if runs else [])
        ],  # one run's rounds, for the lesson's picture
        "trace_prompt": runs[0].prompt if runs else None,  # which prompt that run decoded
    }


def summarise(runs, reference, scenarios, settings: Settings, prompts: dict) -> dict:
    """The results part of the report: per scenario, per method; adaptive; provenance."""
    results, adaptive, provenance, per_prompt = [], {}, {}, {}
    for scenario in scenarios:
        mine = [run for run in runs if run.scenario == scenario.name]
        greedy_runs = [run for run in mine if run.method.drafter is None]
        for method in settings.methods():
            chosen = [run for run in mine if run.method == method]
            row = summarise_method(chosen, greedy_runs, method, settings.k_max)
            results.append({"scenario": scenario.name} | row)
            if method.adaptive:
                adaptive.setdefault(scenario.name, {})[method.drafter] = summarise_adaptive(chosen)
        labels = []
        for prompt_id, tokens in reference.items():
            if prompt_id[0] == scenario.name:
                mine = output_provenance(prompts[prompt_id], tokens, settings.min_span)
                per_prompt[f"{prompt_id[0]} / {prompt_id[1]}"] = provenance_fractions(mine)
                labels += mine
        provenance[scenario.name] = provenance_fractions(labels) | {"tokens": len(labels)}
    return {
        "results": results,
        "adaptive": adaptive,
        "provenance": provenance,
        "provenance_per_prompt": per_prompt,  # to find the prompt a model loops on
    }


def check_goals(results: list[dict]) -> dict:
    """The issue's targets, each with the measured value and whether it was met."""

    def row(scenario, method):
        return next(
            (r for r in results if r["scenario"] == scenario and r["method"] == method), None
        )

    goals = {}
    copy = [
        r for r in results
        if r["scenario"] == "copy-heavy" and r["drafter"] == "lookup" and not r["adaptive"]
    ]  # fmt: skip
    if copy:  # the best fixed k, as the issue on a copying target asks; adaptive below
        best = max(copy, key=lambda r: r["speedup"])
        goal = GOALS["copy_lookup_speedup_at_least"]
        goals[COPY_GOAL] = {
            "method": best["method"], "value": best["speedup"], "goal": f">= {goal}",
            "met": bool(best["speedup"] >= goal),
        }  # fmt: skip
    defaults = {"copy-heavy": "copy_default_speedup_at_least"}  # the others: 0.97
    for scenario in ("copy-heavy", "free text", "counting"):
        if found := row(scenario, f"{DEFAULT_DRAFTER} adaptive"):
            goal = GOALS[defaults.get(scenario, "default_speedup_at_least")]
            goals[f"{scenario} default speedup"] = {
                "method": found["method"], "value": found["speedup"], "goal": f">= {goal}",
                "met": bool(found["speedup"] >= goal),
            }  # fmt: skip
    lookup = [r for r in results if r["drafter"] == "lookup" and not r["adaptive"]]
    if lookup:
        worst = float(np.nanmax([r["draft_cost_per_round"] for r in lookup]))
        goal = GOALS["lookup_cost_at_most"]
        goals["lookup draft cost per round"] = {
            "value": worst, "goal": f"<= {goal} of a plain step", "met": bool(worst <= goal)
        }  # fmt: skip
    fixed = [r for r in results if np.isfinite(r["predicted_with_costs"])]
    if fixed:
        gaps = [abs(r["speedup"] / r["predicted_with_costs"] - 1) for r in fixed]
        within = float(np.mean(np.array(gaps) <= GOALS["prediction_within"]))
        goals["prediction within 10 %"] = {
            "value": within, "goal": "share of fixed-k rows", "met": bool(within == 1.0),
            "largest_gap": float(max(gaps)),
        }  # fmt: skip
    return goals


def copy_note(goals: dict, provenance: dict) -> dict:
    """Say next to the copy-heavy goal whether the output copied the prompt or looped."""
    goal, shares = goals.get(COPY_GOAL), provenance.get("copy-heavy")
    if goal is None or shares is None:
        return goals
    goal = goal | {"output_copied_from_prompt": shares["prompt"], "output_loop": shares["loop"]}
    if shares["loop"] > shares["prompt"]:
        goal["note"] = "the output is mostly a loop of the model's own text, not a copy"
    return goals | {COPY_GOAL: goal}


def loop_goal(provenance: dict, most: float = 0.3) -> dict:
    """Free-text prompts must not simply make the model loop (issue 5); checked per run."""
    if "free text" not in provenance:
        return {}
    loop = provenance["free text"]["loop"]
    return {
        "free text output is not a loop": {
            "value": loop,
            "goal": f"<= {most} of the output repeats the model's own text",
            "met": bool(loop <= most),
        }  # fmt: skip
    }


# --- the record ----------------------------------------------------------------------------------


def model_entry(model, path: Path | None) -> dict:
    from speclab.weights import file_sha256

    entry = model_record(model)
    entry["file"] = path.name if path else None
    entry["sha256"] = file_sha256(path) if path and path.is_file() else None
    return entry


def decode_report(
    target, draft_model, scenarios, settings: Settings, paths=(None, None), progress=False
):
    """Run the benchmark and return the JSON-able report (see the module docstring)."""
    load_before = load_average()
    started = time.perf_counter()
    with blas_threads(settings.blas_threads):
        runs, reference, check = run_decodes(target, draft_model, scenarios, settings, progress)
        machine = machine_record()  # inside the limit: it records the threads used
    prompts = {(s.name, p.id): p.tokens for s in scenarios for p in s.prompts}
    summary = summarise(runs, reference, scenarios, settings, prompts)
    machine = machine | {
        "load_average_before": load_before,
        "load_average_after": load_average(),
    }
    return {
        "benchmark": "decode",
        "seconds": time.perf_counter() - started,
        "equal_to_greedy": check,
        **summary,
        "goals": copy_note(check_goals(summary["results"]), summary["provenance"])
        | loop_goal(summary["provenance"]),
        "settings": asdict(settings) | {"methods": [m.label for m in settings.methods()]},
        "prompts": {
            "sha256": prompts_sha256(scenarios),
            "scenarios": [
                {
                    "name": s.name,
                    "file": s.path.name,
                    "prompts": [p.id for p in s.prompts[: settings.prompts_per_scenario]],
                }
                for s in scenarios
            ],
        },  # fmt: skip
        "outputs": {
            f"{name} / {pid}": bytes(tokens).decode("utf-8", "replace")
            for (name, pid), tokens in reference.items()
        },
        "models": {
            "target": model_entry(target, paths[0]),
            "draft": model_entry(draft_model, paths[1]) if draft_model is not None else None,
        },
        "tokenizer": "bytes: each UTF-8 byte is one token, 256 ids (speclab.tokenizer)",
        "machine": machine,
    }


def adaptive_against_fixed(report: dict, off_share: float = 0.1) -> list[dict]:
    """Per drafter and scenario of a report: the adaptive policy's speedup beside the best
    fixed k's (which no policy knows before the run), the share of rounds it drafted
    nothing, and `misjudged`: off in at least off_share of its rounds where every fixed k
    beat greedy, so its estimates said drafting would lose where it would not (lesson 06)."""
    rows = []
    for scenario, by_drafter in report["adaptive"].items():
        for drafter, summary in by_drafter.items():
            mine = [r for r in report["results"]
                    if (r["scenario"], r["drafter"]) == (scenario, drafter)]  # fmt: skip
            fixed = [r for r in mine if not r["adaptive"]]
            best = max(fixed, key=lambda r: r["speedup"])
            rows.append({
                "drafter": drafter, "scenario": scenario,
                "adaptive": next(r for r in mine if r["adaptive"])["speedup"],
                "best fixed k": best["speedup"], "that k": best["k"],
                "share off": summary["share_off"],
                "misjudged": summary["share_off"] >= off_share
                and all(r["speedup"] > 1 for r in fixed),
            })  # fmt: skip
    return rows


LOSS_REASONS = {
    "heavy drafter": "drafting alone takes a quarter or more of greedy's time per token",
    "low acceptance": "under 1.5 tokens per target forward: too little gained per round",
    "verify and overhead": "each round's verify forward and bookkeeping cost more than it gains",
}


def loss_reason(row: dict) -> str | None:
    """Why a method loses time against greedy (None if it does not): see LOSS_REASONS.
    A speedup that prints as 1.00x (0.996) is not listed as a loss beside that number."""
    if not round(row["speedup"], 2) < 1.0 or row["drafter"] == "none":
        return None
    if row["time_drafting_per_token"] >= 0.25:
        return "heavy drafter"
    if row["tokens_per_target_forward"] < 1.5:
        return "low acceptance"
    return "verify and overhead"


# --- the summary `speclab bench decode` prints ------------------------------------------------


def describe_report(report: dict, goals: bool = True, full: bool = True) -> str:
    """A short text summary: speedups per scenario, the equality check, and (for the
    command, not for a lesson: goals=False) the project's goals met or not. full: whether the
    run measured what `make bench` does (`decode_reports.is_full_run`); else the goals are
    not judged."""
    lines = []
    settings = report["settings"]
    lines.append(
        f"{counted(len(report['prompts']['scenarios']), 'scenario')}, "
        f"{counted(settings['repeats'], 'repeat')} "
        f"(+{settings['warmup']} warm-up), interleaved; speedup over KV-cached greedy, "
        "median [interquartile]"
    )
    ends = (min(settings["k_values"]), max(settings["k_values"]))  # the fewest and most drafts
    for scenario in report["prompts"]["scenarios"]:
        name = scenario["name"]
        rows = [r for r in report["results"] if r["scenario"] == name and r["drafter"] != "none"]
        shown = ", ".join(
            f"{r['method']} {r['speedup']:.2f} [{r['speedup_q25']:.2f}-{r['speedup_q75']:.2f}]"
            for r in rows
            if r["adaptive"] or r["k"] in ends
        )
        loop = report["provenance"][name]
        lines.append(
            f"  {shown_text(name)}: {shown}; output {loop['prompt']:.0%} copied from prompt, "
            f"{loop['loop']:.0%} loop"
        )
    check = report["equal_to_greedy"]
    lines.append(
        f"every speculative output equal to greedy: {'yes' if check['all_equal'] else 'NO'} "
        f"({check['speculative_runs_checked']} runs checked)"
    )
    if goals and report["goals"] and not full:
        lines.append(
            "goals: not judged, as this run measured less than `make bench` does (--quick, or "
            "fewer prompts, drafters, k values, tokens or repeats)"
        )
    for name, goal in report["goals"].items() if goals and full else ():
        note = f" ({goal['note']})" if "note" in goal else ""
        value = f"{goal['value']:.0%}" if name in SHARE_GOALS else f"{goal['value']:.3g}"
        lines.append(
            f"goal {name}: {value} ({goal['goal']}): {'met' if goal['met'] else 'NOT met'}{note}"
        )
    if warning := busy_warning(report):
        lines.append(warning)
    return "\n".join(lines)


def busy_warning(report: dict) -> str:
    """A warning when the machine was busy as the run started, else "": a load average above
    the cores less half a core (at least 1), so that other work was likely taking a core from
    the benchmark's one thread. (A notebook's own earlier cells leave about 1 on the average:
    on two cores that alone warned after every Run All.)"""
    load = report["machine"].get("load_average_before")
    cores = report["machine"].get("cpu_count") or 1
    if load and load[0] > max(1.0, cores - 0.5):
        return (
            f"warning: the machine was busy (load average {load[0]:.1f} when the run "
            "started): its times are noisy"
        )
    return ""
