"""Checks JSON files against a JSON schema: validate_schema.py SCHEMA FILE...

Prints "valid" when every file is valid, else the first error of each file
(its path in the document and the message), and exits 1.
"""
import gzip
import json
import sys

import jsonschema


def load(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt") as f:
        return json.load(f)


def main():
    schema = load(sys.argv[1])
    validator = jsonschema.Draft202012Validator(schema)
    bad = 0
    for path in sys.argv[2:]:
        error = next(iter(validator.iter_errors(load(path))), None)
        if error is not None:
            bad += 1
            where = "/".join(str(p) for p in error.absolute_path)
            print(f"{path}: {where}: {error.message}")
    if not bad:
        print("valid")
    sys.exit(1 if bad else 0)


main()
