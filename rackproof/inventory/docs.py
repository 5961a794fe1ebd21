"""docs/inventory.md's [expect] section, written from inventory.model.Expect: each field's type, range,
default (and each platform's own) and line, so that the page says what a file is checked
against. The fields a bound follows from are made from references.SETTINGS, which name their
unit; the page names the references judged against each of them.

    python -m rackproof.inventory.docs docs/inventory.md    # rewrites the section in place

selftests/test_inventory_docs.py fails when the page and the code differ.
"""

from __future__ import annotations

import json
import sys
import textwrap
import types
from typing import Annotated, Literal, Union, get_args, get_origin

import annotated_types

from rackproof.inventory.model import PLATFORM_DEFAULTS, Expect, Label
from rackproof.inventory.references import REFERENCES

HEADING = "## [expect]"
EXAMPLE = REFERENCES["bond.rate"]


def _paragraph(text: str) -> str:
    return textwrap.fill(text, 95, break_on_hyphens=False, break_long_words=False)


def _number(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else f"{value:g}"


def _toml(value) -> str:
    return json.dumps(value) if isinstance(value, (bool, str)) else _number(value)


def _shown(value, none: str) -> str:
    if value is None:
        return none or "none"
    if isinstance(value, bool):
        return str(value).lower()
    return f"`{value}`" if isinstance(value, str) else _number(value)


def _parts(annotation) -> tuple[object, list]:
    """The field's type without None and Annotated, and the constraints found on the way."""
    if get_origin(annotation) in (Union, types.UnionType):
        (annotation,) = [a for a in get_args(annotation) if a is not type(None)]
    if annotation == Label:
        return Label, []
    if get_origin(annotation) is Annotated:
        base, *extra = get_args(annotation)
        return base, [m for e in extra for m in getattr(e, "metadata", [e])]
    return annotation, []


def _kind(base, unit: str) -> str:
    if base is Label:
        return "label"
    if get_origin(base) is list:
        return "list of " + _kind(_parts(get_args(base)[0])[0], unit)
    if base is str:
        return "text"
    if base is bool:
        return "true/false"
    if get_origin(base) is Literal:
        names = [f"`{name}`" for name in get_args(base)]
        return " or ".join(names) if len(names) == 2 else "one of " + ", ".join(names)
    return ("integer" if base is int else "number") + (f", {unit}" if unit else "")


def _range(base, limits: list, also: str) -> str:
    if base is Label:
        text = "1-64 characters"
    else:
        bounds = {type(m): m for m in limits}
        ge, le = bounds.get(annotated_types.Ge), bounds.get(annotated_types.Le)
        if base is int and ge and le:
            text = f"{ge.ge}-{le.le}"
        else:
            signs = [(annotated_types.Gt, "gt", ">"), (annotated_types.Ge, "ge", ">="), (annotated_types.Lt, "lt", "<"),
                     (annotated_types.Le, "le", "<=")]
            text = " and ".join(f"{sign} {_number(getattr(bounds[kind], attr))}" for kind, attr, sign in signs
                                if kind in bounds)
    return "; ".join(t for t in (text, also) if t)


def _default(name: str, default, none: str) -> str:
    first, *others = PLATFORM_DEFAULTS
    value = PLATFORM_DEFAULTS[first].get(name, default)
    own = [f"{platform.capitalize()} {_shown(PLATFORM_DEFAULTS[platform].get(name, default), none)}"
           for platform in others if PLATFORM_DEFAULTS[platform].get(name, default) != value]
    return _shown(value, none) + (f" ({', '.join(own)})" if own else "")


def _line(name: str, description: str) -> str:
    judged = [f"`{ref.name}`" for ref in REFERENCES.values() if ref.setting and ref.setting.name == name]
    return description + (f" (bound of {', '.join(judged)})" if judged else "")


def _rows() -> list[list[str]]:
    """One row per field; fields one after another with the same cells share a row."""
    rows: list[list[str]] = []
    for name, field in Expect.model_fields.items():
        extra = field.json_schema_extra or {}
        base, limits = _parts(field.annotation)
        cells = [_kind(base, extra.get("unit", "")), _range(base, [*field.metadata, *limits], extra.get("also", "")),
                 _default(name, field.default, extra.get("none", "")), _line(name, field.description or "")]
        if rows and rows[-1][1:] == cells:
            rows[-1][0] += f", `{name}`"
        else:
            rows.append([f"`{name}`", *cells])
    return rows


def section() -> str:
    platforms = "; ".join(f"a {platform.capitalize()}: " + ", ".join(f"`{k} = {_toml(v)}`" for k, v in values.items())
                          for platform, values in PLATFORM_DEFAULTS.items())
    intro = [
        f"Platform defaults apply first ({platforms}); a field written here overrides them. Every field the file "
        "sets to another value than the default is listed in the report beside the verdict (results.json "
        "`run.expectations_changed`), so a reviewer sees a lowered bound. Each figure's bound follows from these "
        f"fields as `rackproof/inventory/references.py` states (for example the {EXAMPLE.kind}: at least {EXAMPLE.rule}); "
        "a field's line names the references judged against it.",
        "This section is written from `Expect` (rackproof/inventory/model.py), whose bounds are made from "
        "`SETTINGS` (rackproof/inventory/references.py), by `python -m rackproof.inventory.docs docs/inventory.md`: change "
        "them, not the text here (selftests/test_inventory_docs.py fails when the two differ).",
    ]
    table = ["| field | type | range | default | what it is |", "|---|---|---|---|---|"]
    table += ["|" + "|".join(f" {cell} ".replace("|", "\\|") if cell else " " for cell in row) + "|"
              for row in _rows()]
    return "\n\n".join([HEADING, *map(_paragraph, intro), "\n".join(table)]) + "\n\n"


def rewritten(page: str) -> str:
    """The page with its [expect] section (up to the next `## ` heading) written anew."""
    start = page.index(f"\n{HEADING}\n") + 1
    end = page.find("\n## ", start) + 1 or len(page)
    return page[:start] + section() + page[end:]


def main(argv: list[str]) -> int:
    for path in argv:
        with open(path, encoding="utf-8") as f:
            page = rewritten(f.read())   # built whole before the file is opened for writing: a failure loses no page
        with open(path, "w", encoding="utf-8") as f:
            f.write(page)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
