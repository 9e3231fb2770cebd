"""An independent verdict on schemascope's inferred JSON Schemas: Python's `jsonschema`
Draft202012Validator (formats not asserted, unknown keywords such as `x-observed` ignored, as the
2020-12 default is).

Reads a JSON file given as the only argument:
    {"cases": [{"name": str, "schema": {...}, "valid": [values...], "invalid": [values...]}]}
and prints one JSON line per case: {"name", "schema_ok", "rejected_valid": [[index, message]],
"accepted_invalid": [index]}. Exits 0 when it ran; the caller asserts on the lines.
"""

import json
import sys

from jsonschema import Draft202012Validator
from jsonschema.exceptions import SchemaError


def check(case: dict) -> dict:
    out = {"name": case["name"], "schema_ok": True, "rejected_valid": [], "accepted_invalid": []}
    try:
        Draft202012Validator.check_schema(case["schema"])
    except SchemaError as error:
        out["schema_ok"] = False
        out["schema_error"] = error.message
        return out
    validator = Draft202012Validator(case["schema"])
    for index, value in enumerate(case.get("valid", [])):
        errors = [f"{list(e.absolute_path)}: {e.message[:200]}" for e in validator.iter_errors(value)]
        if errors:
            out["rejected_valid"].append([index, errors])
    for index, value in enumerate(case.get("invalid", [])):
        if validator.is_valid(value):
            out["accepted_invalid"].append(index)
    return out


def main() -> None:
    with open(sys.argv[1], encoding="utf-8") as f:
        cases = json.load(f)["cases"]
    for case in cases:
        print(json.dumps(check(case), ensure_ascii=False))


if __name__ == "__main__":
    main()
