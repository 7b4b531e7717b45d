"""JSON output is strict and follows its schema."""

import pytest

from helpers.cli import call


SCHEMAS = __import__("pathlib").Path(__file__).parent.parent / "docs" / "json-schemas"


def strict_json(text: str):
    import json

    def refuse(token):
        raise AssertionError(f"non-strict JSON constant {token}")

    return json.loads(text, parse_constant=refuse)


@pytest.mark.parametrize("schema,argv", [
    ("prove", ["algo1-printed", "--property", "ring-locality", "--json"]),
    ("prove", ["algo1", "--property", "coverage", "--json", "--tier", "bounded", "--max-n", "4"]),
    ("prove", ["algo1", "--property", "counts", "--property", "balance", "--property", "memory", "--json"]),
    ("simulate", ["simulate", "algo1-printed", "-n", "4", "-m", "2", "--json"]),
    ("simulate", ["simulate", "algo1", "-n", "4", "-m", "2", "--json"]),
    ("../report.schema", ["report", "algo1", "--format", "json", "--tier", "bounded", "--max-n", "4",
                          "--property", "coverage"]),
    ("search", ["search", "plain", "-n", "2", "-m", "1", "--json"]),
    ("balance", ["balance", "--patches", "8", "--clusters", "4", "--json"]),
    ("unroll", ["unroll", "--pes", "256", "--json"]),
])
def test_json_is_strict_and_follows_its_schema(schema, argv):
    import json

    import jsonschema

    code, out, err = call(*argv)
    assert code in (0, 1), err
    doc = strict_json(out)
    jsonschema.validate(doc, json.loads((SCHEMAS / f"{schema}.json").read_text()))
    assert doc["schema_version"] == 1


def test_an_infinite_error_is_null_with_a_reason():
    code, out, _ = call("simulate", "algo1-printed", "-n", "4", "-m", "2", "--json")
    doc = strict_json(out)
    assert code == 1 and doc["max_rel_error"] is None and "finite" in doc["max_rel_error_reason"]


def test_every_schema_is_a_valid_schema():
    import json

    import jsonschema

    for path in SCHEMAS.glob("*.json"):
        jsonschema.Draft202012Validator.check_schema(json.loads(path.read_text()))
