"""speclab.handout_figures: a `figure:` address read, given a file name of its own, and drawn
from speclab.figures, or refused with the handout's line named (through render_body, as a
build meets it)."""

import re

import pytest

from speclab.handout_figures import parse_figure
from speclab.handout_folder import HandoutError
from speclab.handouts import render_body


def test_figure_address_is_parsed():
    request = parse_figure("figure:forwards_per_case?cases=0,2,4&k=4&alpha=0.8&prefix=&draft=ABX")
    assert request.name == "forwards_per_case"
    assert dict(request.kwargs) == {
        "cases": (0, 2, 4),
        "k": 4,
        "alpha": 0.8,
        "prefix": "",
        "draft": "ABX",
    }
    assert isinstance(dict(request.kwargs)["k"], int)
    assert re.fullmatch(
        r"forwards_per_case-cases0_2_4-k4-alpha0\.8-prefixempty-draftABX-[0-9a-f]{10}\.svg",
        request.file_name,
    )


def test_figure_requests_that_read_alike_get_files_of_their_own(tmp_path):
    """The readable part of a name loses characters; the hash of the request keeps them apart."""
    alike = [
        "figure:check_row?draft=A,B&target=A,C",
        "figure:check_row?draft=A_B&target=A_C",
        "figure:check_row?draft=A%20B&target=A%20C",
        "figure:check_row?draft=AB&target=AC&title=%E7%AC%AC%E4%B8%80%E8%BD%AE",  # 第一轮
        "figure:check_row?draft=AB&target=AC&title=%E7%AC%AC%E4%BA%8C%E8%BD%AE",  # 第二轮
    ]
    names = [parse_figure(address).file_name for address in alike]
    assert len(set(names)) == len(names)
    assert parse_figure(alike[0]).file_name == parse_figure(alike[0]).file_name  # reusable
    long_title = "figure:check_row?draft=AB&target=AC&title=" + "x" * 3000
    assert len(parse_figure(long_title).file_name.encode()) <= 100
    body = render_body(f"![t]({long_title})\n", tmp_path / "figures", "figures")
    assert "<img src=" in body and len(list((tmp_path / "figures").glob("*.svg"))) == 1


def test_figure_is_drawn_from_speclab_figures(tmp_path):
    markdown_text = "Intro.\n\n![One round, m = 2](figure:draft_verify?k=4&accepted=2)\n"
    body = render_body(markdown_text, tmp_path / "figures", "figures")
    (drawn,) = (tmp_path / "figures").glob("draft_verify-k4-accepted2-*.svg")
    assert "<svg" in drawn.read_text("utf-8")[:500]
    assert f'<img src="figures/{drawn.name}" alt="One round, m = 2">' in body
    assert '<span class="caption">One round, m = 2</span>' in body


@pytest.mark.parametrize(
    "address, message",
    [
        ("figure:no_such_thing", "unknown figure 'no_such_thing'"),
        ("figure:draft_verify?colour=red", "unexpected keyword"),
        ("figure:Bad-Name", "bad figure name"),
        ("figure:draft_verify?k=-1", "figure 'draft_verify': k must be"),  # a value it refuses
        ("figure:draft_verify?k", "write key=value"),
        ("figure:draft_verify?k=100000", "numbers up to 1,000"),  # would draw for minutes
        ("figure:draft_verify?k=nan", "a figure takes finite numbers up to 1,000"),
        # an image file: never copied into the build, so it showed broken with status 0
        ("nothere.png", "image 'nothere.png': a build does not copy image files"),
        ("../photos/board.jpg", "image '../photos/board.jpg': a build does not copy"),
        # values of a kind the figure cannot use (a number where it needs a decoding run)
        ("figure:rounds?result=1", "figure 'rounds': result must be the DecodeResult"),
        ("figure:cache?result=x", "figure 'cache' cannot be drawn from these values"),
        # values it would draw, but not usably: matplotlib's warnings were printed, status 0
        ("figure:forwards_per_case?cases=1000,1000,1000&k=1000",
         "figure 'forwards_per_case' cannot be drawn: constrained_layout not applied"),
        ("figure:roofline?n_params=-1&bandwidth=2&peak_flops=3&bytes_per_param=2&name=x",
         "figure 'roofline' cannot be drawn well from these values: Data has no positive"),
        # impossible values, drawn as if they could be (status 0)
        ("figure:temperature_acceptance?temperatures=0,1&exact=2,3&match=0.5,0.6",
         "every value of exact must be a number in [0, 1]"),
        ("figure:temperature_acceptance?temperatures=-1,0&exact=0.5,0.6&match=0.5,0.6",
         "every value of temperatures must be a number >= 0"),
        ("figure:boundary?k=4&c=-1&verify_per_position=0.1", "c must be a finite number >= 0"),
        ("figure:boundary?k=4&c=0.1&verify_per_position=-1", "verify_per_position must be"),
        ("figure:eq1?alpha=0.5&k=4&c=0.1&simulated_mean=-5",
         "simulated_mean must lie between 1 and k + 1 = 5"),
        ("figure:eq1?alpha=1.5&k=4&c=0.1", "figure 'eq1': alpha"),
        # each number small, but 3,000 of them took 22 s to refuse and 20,000 minutes
        ("figure:forwards_per_case?cases=" + ",".join(["4"] * 101),
         "cases in 'figure:forwards_per_case?cases=4,4,4"),
        ("figure:forwards_per_case?cases=" + ",".join(["4"] * 101),
         "a figure takes at most 100 values in a list, not 101"),
    ],
)  # fmt: skip
def test_bad_figure_names_its_line(address, message, tmp_path):
    markdown_text = f"# Title\n\nText.\n\n![x]({address})\n"
    with pytest.raises(HandoutError, match=f"line 5: .*{re.escape(message)}"):
        render_body(markdown_text, tmp_path, "figures")


def test_one_case_needs_no_list(tmp_path):
    """`cases=0` is one case: it had failed with "'int' object is not iterable"."""
    body = render_body("# T\n\n![one](figure:forwards_per_case?cases=0)\n", tmp_path, "figures")
    assert "forwards_per_case" in body


def test_a_list_of_the_most_values_is_read():
    request = parse_figure("figure:temperature_acceptance?temperatures=" + ",".join(["1"] * 100))
    assert request.kwargs == (("temperatures", (1,) * 100),)
