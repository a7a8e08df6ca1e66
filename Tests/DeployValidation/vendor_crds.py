#!/usr/bin/env python3
"""Extracts the schemas of CustomResourceDefinitions into crds/, for validate_custom_resources.py.

    python3 Tests/DeployValidation/vendor_crds.py [--out DIR] CRD.yaml [CRD.yaml ...]

For every CustomResourceDefinition in the files given and every version it serves, writes
DIR/<group>_<version>_<Kind>.json: that version's `schema.openAPIV3Schema`, with every schema's `description`
dropped (to keep the files small; nothing validates against a description) and nothing else changed, as compact
JSON with sorted keys. DIR defaults to the crds/ folder beside this script. Prints what it wrote. Never uses the
network: get the CRD files first (see crds/README.md).
"""

import argparse
import json
import os
import sys

import yaml

# Keywords whose value is a map of names to schemas, or a schema, or a list of schemas.
SCHEMA_MAPS = ("properties", "patternProperties", "definitions")
SCHEMA_VALUES = ("items", "additionalProperties", "not", "additionalItems")
SCHEMA_LISTS = ("allOf", "anyOf", "oneOf")


def strip_descriptions(schema):
    """A copy of `schema` without the `description` keyword of any (sub)schema; a property *named* description stays."""
    if isinstance(schema, list):  # `items` may be a list of schemas
        return [strip_descriptions(item) for item in schema]
    if not isinstance(schema, dict):
        return schema
    result = {}
    for key, value in schema.items():
        if key == "description":
            continue
        if key in SCHEMA_MAPS and isinstance(value, dict):
            result[key] = {name: strip_descriptions(sub) for name, sub in value.items()}
        elif key in SCHEMA_VALUES:
            result[key] = strip_descriptions(value)
        elif key in SCHEMA_LISTS and isinstance(value, list):
            result[key] = [strip_descriptions(sub) for sub in value]
        else:
            result[key] = value
    return result


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "crds"))
    parser.add_argument("files", nargs="+", help="CRD YAML files (several documents each are fine)")
    arguments = parser.parse_args()
    os.makedirs(arguments.out, exist_ok=True)
    written = 0
    for path in arguments.files:
        with open(path, encoding="utf-8") as file:
            documents = [d for d in yaml.safe_load_all(file) if d]
        for crd in documents:
            if crd.get("kind") != "CustomResourceDefinition":
                continue
            group = crd["spec"]["group"]
            kind = crd["spec"]["names"]["kind"]
            for version in crd["spec"]["versions"]:
                if not version.get("served", False):
                    continue
                schema = version.get("schema", {}).get("openAPIV3Schema")
                if schema is None:
                    sys.exit(f"{path}: {kind} {version['name']} has no openAPIV3Schema")
                name = f"{group}_{version['name']}_{kind}.json"
                with open(os.path.join(arguments.out, name), "w", encoding="utf-8") as out:
                    json.dump(strip_descriptions(schema), out, sort_keys=True, separators=(",", ":"))
                    out.write("\n")
                print(f"{path} -> {name}")
                written += 1
    if written == 0:
        sys.exit("no served CRD version found in the files given")


if __name__ == "__main__":
    main()
