#!/usr/bin/env python3
"""Reference validation of eval files with the Python `jsonschema` package (Draft 2020-12).

Used by tests/tests/evalspec_schema_reference.rs (and index_schema_reference.rs, for the discovery
index schema, in `json` mode) to check skillwatch's embedded schemas with an independent implementation, the kind editors use: the schema must be valid against the 2020-12
metaschema, and the set of instance locations with errors must match skillwatch's for every
file. Usage: eval_schema_check.py SCHEMA (yaml|json) FILE... ; prints one JSON object per file:
{"file": ..., "pointers": [...]} (sorted, unique JSON Pointers of failing instances).
"""

import json
import sys

import yaml
from jsonschema import Draft202012Validator


def pointer(path):
    return "".join("/" + str(p).replace("~", "~0").replace("/", "~1") for p in path)


def main():
    schema_path, kind, files = sys.argv[1], sys.argv[2], sys.argv[3:]
    with open(schema_path, encoding="utf-8") as f:
        schema = json.load(f)
    Draft202012Validator.check_schema(schema)
    validator = Draft202012Validator(schema)
    for name in files:
        with open(name, encoding="utf-8") as f:
            instance = yaml.safe_load(f) if kind == "yaml" else json.load(f)
        pointers = sorted({pointer(e.absolute_path) for e in validator.iter_errors(instance)})
        print(json.dumps({"file": name, "pointers": pointers}))


if __name__ == "__main__":
    main()
