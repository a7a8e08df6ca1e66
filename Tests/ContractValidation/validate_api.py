#!/usr/bin/env python3
"""Check the read API's contract (Docs/contract/openapi.yaml) and answers against it.

    validate_api.py --contract Docs/contract spec
        Validates openapi.yaml with openapi-spec-validator (OpenAPI 3.1, its schemas as JSON Schema 2020-12), with
        every `$ref` to a schema file resolved from the contract directory.

    validate_api.py --contract Docs/contract responses [FILE ...]
        Reads exchanges as JSON lines (from the files, or stdin when none), one a line:
            {"method": "GET", "path": "/v1/...", "query": "a=b", "status": 200,
             "headers": {"name": "value", ...}, "body": "<the body as text>" | null}
        For each: finds the operation by path template and method, the response by status (an undocumented status
        fails), checks its required headers are there (and integers where the contract says so), that a documented
        body has the documented content type and validates against its schema (JSON Schema 2020-12, formats date-time
        and uuid checked, references into the schema files resolved from the contract directory), and that a
        response documented without a body has none. Prints one line per failure and a summary; exits 1 if any
        exchange failed or none was read.

Needs Python 3.11, jsonschema 4.x, referencing, PyYAML and openapi-spec-validator. Never touches the network.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections import Counter
from pathlib import Path
from typing import Any, Iterator, TextIO

import yaml
from jsonschema import Draft202012Validator
from referencing import Registry, Resource
from referencing.jsonschema import DRAFT202012

sys.path.insert(0, str(Path(__file__).resolve().parent))
from validate_events import format_checker  # noqa: E402  (the same format checks as the event contract)


class Contract:
    def __init__(self, directory: Path) -> None:
        self.directory = directory.resolve()
        self.path = self.directory / "openapi.yaml"
        self.uri = self.path.as_uri()
        self.document: dict[str, Any] = yaml.safe_load(self.path.read_text(encoding="utf-8"))

    def registry(self) -> Registry:
        """openapi.yaml and every schema file under their file URIs (what the relative `$ref`s resolve to)."""
        resources = [(self.uri, DRAFT202012.create_resource(self.document))]
        for schema_file in sorted(self.directory.glob("*/*.schema.json")):
            contents = json.loads(schema_file.read_text(encoding="utf-8"))
            resources.append((schema_file.as_uri(), Resource.from_contents(contents, default_specification=DRAFT202012)))
        return Registry().with_resources(resources)

    def lookup(self, pointer: str) -> Any:
        node: Any = self.document
        for part in pointer[2:].split("/"):
            node = node[part.replace("~1", "/").replace("~0", "~")]
        return node

    def follow(self, node: Any) -> Any:
        while isinstance(node, dict) and isinstance(node.get("$ref"), str) and node["$ref"].startswith("#/"):
            node = self.lookup(node["$ref"])
        return node

    def operations(self) -> Iterator[tuple[re.Pattern[str], str, str, dict[str, Any]]]:
        for template, item in self.document.get("paths", {}).items():
            pattern = re.compile("^" + re.sub(r"\\\{[^/]+?\\\}", "[^/]+", re.escape(template)) + "$")
            for method, operation in item.items():
                if method in {"get", "put", "post", "delete", "patch", "head", "options"}:
                    yield pattern, template, method.upper(), operation


def check_spec(contract: Contract) -> int:
    from openapi_spec_validator import validate

    try:
        validate(contract.document, base_uri=contract.uri)
    except Exception as error:  # noqa: BLE001 (the validator's errors have no common base worth naming)
        print(f"openapi.yaml: invalid: {error}")
        return 1
    missing = []

    def walk(node: Any) -> None:
        if isinstance(node, dict):
            reference = node.get("$ref")
            if isinstance(reference, str):
                if reference.startswith("#/"):
                    try:
                        contract.lookup(reference)
                    except (KeyError, TypeError):
                        missing.append(reference)
                elif not (contract.directory / reference).resolve().is_file():
                    missing.append(reference)
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    walk(contract.document)
    for reference in missing:
        print(f"openapi.yaml: $ref {reference} does not resolve")
    if missing:
        return 1
    print(f"openapi.yaml: valid OpenAPI {contract.document.get('openapi')}, "
          f"{sum(1 for _ in contract.operations())} operations")
    return 0


def exchanges(files: list[str]) -> Iterator[tuple[str, dict[str, Any]]]:
    streams: list[tuple[str, TextIO]] = [(name, open(name, encoding="utf-8")) for name in files] or [("stdin", sys.stdin)]
    for name, stream in streams:
        for number, line in enumerate(stream, 1):
            if line.strip():
                yield f"{name}:{number}", json.loads(line)


def check_responses(contract: Contract, files: list[str]) -> int:
    registry = contract.registry()
    checker = format_checker()
    operations = list(contract.operations())
    failures: list[str] = []
    counts: Counter[str] = Counter()
    for where, exchange in exchanges(files):
        method, path, status = exchange["method"], exchange["path"], str(exchange["status"])
        label = f"{where} {method} {path} -> {status}"
        headers = {name.lower(): value for name, value in exchange.get("headers", {}).items()}
        body = exchange.get("body")
        found = [(template, operation) for pattern, template, verb, operation in operations
                 if verb == method and pattern.match(path)]
        if not found:
            # No operation: the API answers 404 as a problem for any path it does not serve.
            found = [("(unmatched)", {"responses": {"404": {"$ref": "#/components/responses/NotFound"}}})]
        template, operation = found[0]
        response = operation["responses"].get(status) or operation["responses"].get("default")
        if response is None:
            failures.append(f"{label}: status {status} is not documented for {template}")
            continue
        response = contract.follow(response)
        counts[f"{template} {status}"] += 1
        for name, header in response.get("headers", {}).items():
            header = contract.follow(header)
            value = headers.get(name.lower())
            if value is None:
                if header.get("required"):
                    failures.append(f"{label}: header {name} is required")
                continue
            schema = contract.follow(header.get("schema", {}))
            if schema.get("type") == "integer":
                if not re.fullmatch(r"[0-9]+", value):
                    failures.append(f"{label}: header {name} is not an integer: {value!r}")
                    continue
                instance: Any = int(value)
            else:
                instance = value
            for error in Draft202012Validator(schema, format_checker=checker).iter_errors(instance):
                failures.append(f"{label}: header {name}: {error.message}")
        content = response.get("content")
        if not content:
            if body:
                failures.append(f"{label}: the contract documents no body, the answer has {len(body)} characters")
            continue
        content_type = headers.get("content-type", "").split(";")[0].strip()
        if content_type not in content:
            failures.append(f"{label}: content type {content_type!r}, not one of {sorted(content)}")
            continue
        try:
            instance = json.loads(body or "")
        except json.JSONDecodeError as error:
            failures.append(f"{label}: the body is not JSON: {error}")
            continue
        schema = {"$ref": contract.uri + "#" + pointer_of(contract, content[content_type]["schema"])}
        validator = Draft202012Validator(schema, registry=registry, format_checker=checker)
        for error in sorted(validator.iter_errors(instance), key=lambda error: list(error.absolute_path)):
            location = "/".join(str(part) for part in error.absolute_path) or "(root)"
            failures.append(f"{label}: {location}: {error.message[:300]}")
    for failure in failures:
        print(failure)
    total = sum(counts.values())
    for key, count in sorted(counts.items()):
        print(f"{count:5d} {key}")
    print(f"{total} answers checked, {len(failures)} failures")
    return 1 if failures or total == 0 else 0


def pointer_of(contract: Contract, schema: dict[str, Any]) -> str:
    """The JSON pointer of a response's schema in openapi.yaml (schemas are always `$ref`s to components)."""
    reference = schema.get("$ref")
    if not isinstance(reference, str) or not reference.startswith("#/"):
        raise SystemExit("validate_api.py: every response schema must be a $ref to #/components/schemas")
    return reference[1:]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--contract", required=True, type=Path)
    commands = parser.add_subparsers(dest="command", required=True)
    commands.add_parser("spec")
    responses = commands.add_parser("responses")
    responses.add_argument("files", nargs="*")
    arguments = parser.parse_args()
    contract = Contract(arguments.contract)
    if arguments.command == "spec":
        return check_spec(contract)
    return check_responses(contract, arguments.files)


if __name__ == "__main__":
    sys.exit(main())
