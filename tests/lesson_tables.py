"""Reading the machine-checked tables of the answer keys (used by the tests/test_lessons_*.py).

An answer key marks a table with `<!-- MARKER: NAME -->` on the line before it; the tests
recompute every row with speclab.
"""

import re


def cells(line: str) -> list[str]:
    return [cell.strip() for cell in line.strip().strip("|").split("|")]


def checked_tables(text: str, marker: str) -> dict[str, list[list[str]]]:
    """NAME -> data rows of the table after each `<!-- marker: NAME -->`."""
    tables: dict[str, list[list[str]]] = {}
    lines = text.splitlines()
    for index, line in enumerate(lines):
        found = re.fullmatch(rf"<!-- {marker}: (\w+) -->", line.strip())
        if not found:
            continue
        body = []
        for row in lines[index + 1 :]:
            if not row.startswith("|"):
                break
            body.append(row)
        assert len(body) >= 3, f"the table after {line} needs a header, a rule and rows"
        tables.setdefault(found.group(1), []).extend(cells(row) for row in body[2:])
    return tables


def close(shown: str, exact: float) -> bool:
    """A number shown with its decimals agrees with the exact value to that precision."""
    decimals = len(shown.split(".")[1]) if "." in shown and "e" not in shown else 0
    return abs(float(shown) - exact) <= 0.5 * 10**-decimals + 1e-12
