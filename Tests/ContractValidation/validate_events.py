#!/usr/bin/env python3
"""Check the output-event contract (Docs/contract) and events against it.

    validate_events.py --contract Docs/contract asyncapi
        Validates asyncapi.yaml against AsyncAPI's own JSON Schema for 3.0.0 (vendored next to this script, draft-07),
        checks that every local `$ref` in it resolves, that every `$ref` to a schema file names an existing
        `<name>/<major>.schema.json` whose `$id` is `urn:asnp:contract:<name>:<major>`, that each such file is a valid
        JSON Schema 2020-12, and that each message's `ce_dataschema` header names its payload's schema.

    validate_events.py --contract Docs/contract events [FILE ...]
        Reads events as JSON lines (from the files, or stdin when none), one event a line, as `asnp tail` prints them:
            {"topic": "...", "partition": 0, "offset": 12, "key": "..." | null,
             "headers": {"name": "value", ...}, "value": <JSON value>}
        or, for a value that is not JSON, "valueBase64": "..." instead of "value". For each event: finds the message of
        the AsyncAPI document by topic (channel address) and `ce_dataschema`, validates the headers against that
        message's headers schema, validates the value against the schema file the `ce_dataschema` URN names (JSON
        Schema 2020-12, formats date-time and uuid checked), and checks the cross-field rules of the contract (key,
        `ce_id`, `ce_type`, `ce_time`... against the value). Prints a summary line per schema and every failure with
        its topic/partition/offset and JSON path. Exits 1 if any event failed or no event was read.

Needs only Python 3.11, jsonschema 4.x, referencing and PyYAML. Never touches the network: every reference is resolved
from the contract directory or the vendored AsyncAPI schema.
"""

from __future__ import annotations

import argparse
import base64
import binascii
import datetime as dt
import json
import re
import sys
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Iterator, TextIO

import jsonschema
import yaml
from jsonschema import Draft7Validator, Draft202012Validator, FormatChecker
from referencing import Registry, Resource
from referencing.jsonschema import DRAFT7, DRAFT202012

HERE = Path(__file__).resolve().parent
DEFAULT_CONTRACT = HERE.parent.parent / "Docs" / "contract"
DEFAULT_ASYNCAPI_SCHEMA = HERE / "asyncapi-3.0.0.schema.json"
ASYNCAPI_FILE = "asyncapi.yaml"

URN_PREFIX = "urn:asnp:contract:"
URN_PATTERN = re.compile(r"^urn:asnp:contract:([a-z0-9]+(?:-[a-z0-9]+)*):([1-9][0-9]*)$")
SCHEMA_FILE_PATTERN = re.compile(r"^([a-z0-9]+(?:-[a-z0-9]+)*)/([1-9][0-9]*)\.schema\.json$")
DRAFT_2020_12 = "https://json-schema.org/draft/2020-12/schema"


class ContractError(Exception):
    """The contract directory itself cannot be used (missing or unreadable files)."""


# --------------------------------------------------------------------------------------------------------------------
# Formats


_RFC3339 = re.compile(
    r"^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(\.\d+)?([Zz]|[+-](\d{2}):(\d{2}))$"
)
_UUID = re.compile(r"^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$")


def is_rfc3339_date_time(value: object) -> bool:
    """RFC 3339 `date-time` (what JSON Schema's `date-time` format means), without any optional package."""
    if not isinstance(value, str):
        return True
    match = _RFC3339.match(value)
    if not match:
        return False
    year, month, day, hour, minute, second = (int(match.group(i)) for i in range(1, 7))
    try:
        dt.date(year, month, day)
    except ValueError:
        return False
    if hour > 23 or minute > 59 or second > 60:
        return False
    if match.group(9) is not None and (int(match.group(9)) > 23 or int(match.group(10)) > 59):
        return False
    return True


def is_uuid(value: object) -> bool:
    return not isinstance(value, str) or bool(_UUID.match(value))


def format_checker() -> FormatChecker:
    """A checker for exactly the formats the contract uses, independent of optional jsonschema extras."""
    checker = FormatChecker(formats=())
    checker.checks("date-time")(is_rfc3339_date_time)
    checker.checks("uuid")(is_uuid)
    return checker


# --------------------------------------------------------------------------------------------------------------------
# The contract


def urn_for_schema_path(relative: str) -> str | None:
    """`decoded-v2/1.schema.json` -> `urn:asnp:contract:decoded-v2:1`; None for a path not of that form."""
    match = SCHEMA_FILE_PATTERN.match(relative)
    return f"{URN_PREFIX}{match.group(1)}:{match.group(2)}" if match else None


def schema_path_for_urn(urn: str) -> str | None:
    """`urn:asnp:contract:decoded-v2:1` -> `decoded-v2/1.schema.json`; None for anything else."""
    match = URN_PATTERN.match(urn)
    return f"{match.group(1)}/{match.group(2)}.schema.json" if match else None


def short_name(urn: str) -> str:
    """`urn:asnp:contract:decoded-v2:1` -> `decoded-v2/1`."""
    match = URN_PATTERN.match(urn)
    return f"{match.group(1)}/{match.group(2)}" if match else urn


def load_json(path: Path) -> Any:
    try:
        with path.open(encoding="utf-8") as handle:
            return json.load(handle)
    except OSError as error:
        raise ContractError(f"cannot read {path}: {error.strerror}") from error
    except json.JSONDecodeError as error:
        raise ContractError(f"{path} is not JSON: {error}") from error


def load_yaml(path: Path) -> Any:
    try:
        with path.open(encoding="utf-8") as handle:
            return yaml.safe_load(handle)
    except OSError as error:
        raise ContractError(f"cannot read {path}: {error.strerror}") from error
    except yaml.YAMLError as error:
        raise ContractError(f"{path} is not YAML: {error}") from error


def json_pointer_get(document: Any, pointer: str) -> Any:
    """The value at a JSON Pointer (RFC 6901, the part after `#`); KeyError when there is none."""
    if pointer in ("", "/"):
        return document if pointer == "" else document[""]
    if not pointer.startswith("/"):
        raise KeyError(pointer)
    node = document
    for raw in pointer[1:].split("/"):
        token = raw.replace("~1", "/").replace("~0", "~")
        if isinstance(node, dict) and token in node:
            node = node[token]
        elif isinstance(node, list) and token.isdigit() and int(token) < len(node):
            node = node[int(token)]
        else:
            raise KeyError(pointer)
    return node


def walk_refs(node: Any, pointer: str = "") -> Iterator[tuple[str, str]]:
    """Every `$ref` string in a YAML/JSON tree, with the JSON Pointer of the object holding it."""
    if isinstance(node, dict):
        ref = node.get("$ref")
        if isinstance(ref, str):
            yield pointer, ref
        for key, value in node.items():
            yield from walk_refs(value, f"{pointer}/{str(key).replace('~', '~0').replace('/', '~1')}")
    elif isinstance(node, list):
        for index, value in enumerate(node):
            yield from walk_refs(value, f"{pointer}/{index}")


@dataclass
class Message:
    """One message of one channel, as the events check needs it."""

    channel: str
    name: str
    address: str
    pointer: str  # JSON Pointer of the (resolved) message object in asyncapi.yaml
    dataschema: str | None  # the URN of its payload's schema file; None when its payload is no schema file
    content_type: str | None
    headers_pointer: str | None


@dataclass
class Contract:
    directory: Path
    asyncapi: dict[str, Any]
    asyncapi_uri: str
    schemas: dict[str, Any] = field(default_factory=dict)  # URN -> schema
    messages: list[Message] = field(default_factory=list)

    @classmethod
    def load(cls, directory: Path) -> "Contract":
        directory = directory.resolve()
        asyncapi_path = directory / ASYNCAPI_FILE
        document = load_yaml(asyncapi_path)
        if not isinstance(document, dict):
            raise ContractError(f"{asyncapi_path} is not a YAML mapping")
        contract = cls(directory=directory, asyncapi=document, asyncapi_uri=asyncapi_path.as_uri())
        for path in sorted(directory.glob("*/*.schema.json")):
            relative = path.relative_to(directory).as_posix()
            urn = urn_for_schema_path(relative)
            if urn is not None:
                contract.schemas[urn] = load_json(path)
        contract.messages = list(contract._messages())
        return contract

    def resolve_local(self, ref: str) -> tuple[str, Any]:
        """A `#/...` reference of asyncapi.yaml: (its pointer, its value), following chains of references."""
        seen: set[str] = set()
        while True:
            if not ref.startswith("#"):
                raise KeyError(ref)
            pointer = ref[1:]
            if pointer in seen:
                raise KeyError(f"{ref} (a cycle)")
            seen.add(pointer)
            value = json_pointer_get(self.asyncapi, pointer)
            if isinstance(value, dict) and isinstance(value.get("$ref"), str) and value["$ref"].startswith("#"):
                ref = value["$ref"]
                continue
            return pointer, value

    def _payload_urn(self, payload: Any) -> str | None:
        if not isinstance(payload, dict):
            return None
        target = payload.get("schema", payload) if "schemaFormat" in payload or "schema" in payload else payload
        ref = target.get("$ref") if isinstance(target, dict) else None
        if not isinstance(ref, str) or ref.startswith("#"):
            return None
        relative = ref.split("#", 1)[0]
        relative = relative[2:] if relative.startswith("./") else relative
        return urn_for_schema_path(relative)

    def _messages(self) -> Iterator[Message]:
        channels = self.asyncapi.get("channels") or {}
        for channel_name, channel in channels.items():
            if isinstance(channel, dict) and isinstance(channel.get("$ref"), str):
                try:
                    _, channel = self.resolve_local(channel["$ref"])
                except KeyError:
                    continue
            if not isinstance(channel, dict):
                continue
            address = channel.get("address")
            for message_name, message in (channel.get("messages") or {}).items():
                pointer = f"/channels/{channel_name}/messages/{message_name}"
                if isinstance(message, dict) and isinstance(message.get("$ref"), str):
                    try:
                        pointer, message = self.resolve_local(message["$ref"])
                    except KeyError:
                        continue
                if not isinstance(message, dict):
                    continue
                headers_pointer = f"{pointer}/headers" if "headers" in message else None
                yield Message(
                    channel=channel_name,
                    name=message_name,
                    address=address,
                    pointer=pointer,
                    dataschema=self._payload_urn(message.get("payload")),
                    content_type=message.get("contentType", self.asyncapi.get("defaultContentType")),
                    headers_pointer=headers_pointer,
                )

    def registry(self) -> Registry:
        """Every schema file under its URN, and asyncapi.yaml (draft-07) under its file URI; nothing is fetched."""
        resources = [(urn, Resource.from_contents(schema, default_specification=DRAFT202012))
                     for urn, schema in self.schemas.items()]
        resources.append((self.asyncapi_uri, DRAFT7.create_resource(self.asyncapi)))
        return Registry().with_resources(resources)


# --------------------------------------------------------------------------------------------------------------------
# `asyncapi`: the document itself


def check_asyncapi(contract: Contract, asyncapi_schema_path: Path, out: TextIO) -> list[str]:
    """Every problem of the contract directory, as sentences; prints what was checked."""
    problems: list[str] = []
    document = contract.asyncapi

    meta = load_json(asyncapi_schema_path)
    errors = sorted(Draft7Validator(meta).iter_errors(document), key=lambda e: list(e.absolute_path))
    for error in errors:
        problems.append(f"{ASYNCAPI_FILE} {error.json_path}: {describe(error)}")
    version = document.get("asyncapi")
    print(f"checked {ASYNCAPI_FILE} (asyncapi {version}) against {asyncapi_schema_path.name}: "
          f"{'valid' if not errors else f'{len(errors)} error(s)'}", file=out)

    local = external = 0
    referenced: dict[str, str] = {}
    for holder, ref in walk_refs(document):
        where = f"{ASYNCAPI_FILE} #{holder}"
        if ref.startswith("#"):
            local += 1
            try:
                contract.resolve_local(ref)
            except KeyError:
                problems.append(f"{where}: $ref {ref!r} does not resolve in the document")
            continue
        external += 1
        relative = ref.split("#", 1)[0]
        fragment = ref.split("#", 1)[1] if "#" in ref else ""
        if re.match(r"^[a-zA-Z][a-zA-Z0-9+.-]*:", relative) or relative.startswith("/"):
            problems.append(f"{where}: $ref {ref!r} is not a relative path (the contract resolves no URLs)")
            continue
        path = (contract.directory / relative).resolve()
        try:
            normalized = path.relative_to(contract.directory).as_posix()
        except ValueError:
            problems.append(f"{where}: $ref {ref!r} points outside the contract directory")
            continue
        expected = urn_for_schema_path(normalized)
        if expected is None:
            problems.append(f"{where}: $ref {ref!r} is not of the form <name>/<major>.schema.json")
            continue
        if not path.is_file():
            problems.append(f"{where}: $ref {ref!r}: no file {normalized}")
            continue
        schema = contract.schemas.get(expected)
        if schema is None:
            schema = load_json(path)
        if fragment:
            try:
                json_pointer_get(schema, fragment)
            except KeyError:
                problems.append(f"{where}: $ref {ref!r}: {normalized} has no #{fragment}")
        referenced[normalized] = where
        print(f"  $ref {ref} -> {normalized} ($id {schema.get('$id') if isinstance(schema, dict) else None})",
              file=out)
    print(f"checked {local} local $ref(s) in {ASYNCAPI_FILE} and {external} $ref(s) to schema files", file=out)

    for urn, schema in sorted(contract.schemas.items()):
        relative = schema_path_for_urn(urn)
        label = f"{relative}"
        if not isinstance(schema, dict):
            problems.append(f"{label}: not a JSON object")
            continue
        if schema.get("$id") != urn:
            problems.append(f"{label}: $id is {schema.get('$id')!r}, the URN rule wants {urn!r}")
        if schema.get("$schema") != DRAFT_2020_12:
            problems.append(f"{label}: $schema is {schema.get('$schema')!r}, expected {DRAFT_2020_12!r}")
        try:
            Draft202012Validator.check_schema(schema)
        except jsonschema.SchemaError as error:
            problems.append(f"{label}: not a valid JSON Schema 2020-12 ({error.json_path}: {error.message})")
        for holder, ref in walk_refs(schema):
            if not ref.startswith("#"):
                problems.append(f"{label} #{holder}: $ref {ref!r} leaves the file (each schema must stand alone)")
            else:
                try:
                    json_pointer_get(schema, ref[1:])
                except KeyError:
                    problems.append(f"{label} #{holder}: $ref {ref!r} does not resolve")
        if relative not in referenced:
            problems.append(f"{label}: no message of {ASYNCAPI_FILE} uses it as its payload")
        print(f"checked {label}: $id {schema.get('$id')}, JSON Schema 2020-12", file=out)

    for message in contract.messages:
        label = f"message {message.channel}/{message.name}"
        if message.headers_pointer is None:
            problems.append(f"{label}: has no headers schema")
            continue
        try:
            _, headers = contract.resolve_local("#" + message.headers_pointer)
        except KeyError:
            problems.append(f"{label}: its headers schema does not resolve")
            continue
        declared = header_const(contract, headers, "ce_dataschema")
        if message.dataschema != declared:
            problems.append(f"{label}: headers say ce_dataschema {declared!r}, "
                            f"but its payload is {message.dataschema!r}")
        content_type = header_const(contract, headers, "content-type")
        if content_type != message.content_type:
            problems.append(f"{label}: headers say content-type {content_type!r}, "
                            f"the message's contentType is {message.content_type!r}")
        print(f"checked {label} on {message.address}: ce_dataschema {declared}, content-type {content_type}",
              file=out)
    if not contract.messages:
        problems.append(f"{ASYNCAPI_FILE}: no channel has a message")
    return problems


def header_const(contract: Contract, schema: Any, name: str) -> str | None:
    """The `const` a headers schema gives one header (following `$ref` and `allOf`), or None."""
    if not isinstance(schema, dict):
        return None
    if isinstance(schema.get("$ref"), str):
        try:
            _, schema = contract.resolve_local(schema["$ref"])
        except KeyError:
            return None
        return header_const(contract, schema, name)
    prop = (schema.get("properties") or {}).get(name)
    if isinstance(prop, dict):
        if isinstance(prop.get("$ref"), str):
            try:
                _, prop = contract.resolve_local(prop["$ref"])
            except KeyError:
                prop = {}
        if "const" in prop:
            return prop["const"]
    for part in schema.get("allOf") or []:
        found = header_const(contract, part, name)
        if found is not None:
            return found
    return None


# --------------------------------------------------------------------------------------------------------------------
# `events`: events against the contract


@dataclass
class Failure:
    where: str
    schema: str
    part: str  # value, headers, key, event
    path: str
    message: str

    def __str__(self) -> str:
        return f"FAIL {self.where} [{self.schema}] {self.part} {self.path}: {self.message}"


def describe(error: jsonschema.ValidationError) -> str:
    """One line for an error; for anyOf/oneOf failures, the most relevant reason inside."""
    message = error.message
    if error.validator == "not" and isinstance(error.validator_value, dict):
        rule = error.validator_value
        reason = rule.get("description")
        if not reason and isinstance(error.schema, dict):
            reason = error.schema.get("description")
        reason = reason or json.dumps(rule)
        return f"must not be present or match here: {reason}"
    if error.context:
        # Skip the "not a Reference Object" alternative of AsyncAPI's oneOf [Reference, X]: the other one explains.
        reasons = [e for e in error.context if not (e.validator == "required" and e.validator_value == ["$ref"])]
        best = jsonschema.exceptions.best_match(reasons or error.context)
        message = (f"matches none of its {error.validator} alternatives; "
                   f"the closest fails at {best.json_path}: {best.message[:200]}")
    return message


def millis_to_rfc3339(millis: int) -> str:
    """Milliseconds since 1970 -> `2026-11-02T10:00:00.000Z`, exactly."""
    seconds, ms = divmod(millis, 1000)
    instant = dt.datetime(1970, 1, 1, tzinfo=dt.timezone.utc) + dt.timedelta(seconds=seconds)
    return f"{instant:%Y-%m-%dT%H:%M:%S}.{ms:03d}Z"


def timestamptz_to_rfc3339_millis(text: str) -> str | None:
    """PostgreSQL's `2026-11-23T23:30:01.123456+00:00` -> `2026-11-23T23:30:01.123Z` (truncated); None if unreadable."""
    if not is_rfc3339_date_time(text):
        return None
    try:
        instant = dt.datetime.fromisoformat(text.replace("z", "Z"))
    except ValueError:
        return None
    instant = instant.astimezone(dt.timezone.utc)
    return f"{instant:%Y-%m-%dT%H:%M:%S}.{instant.microsecond // 1000:03d}Z"


def cross_checks(schema: str | None, event: dict[str, Any]) -> list[tuple[str, str, str]]:
    """The contract rules between key, headers and value that JSON Schema cannot express: (part, path, message)."""
    problems: list[tuple[str, str, str]] = []
    headers: dict[str, Any] = event.get("headers") or {}
    key = event.get("key")
    value = event.get("value")

    def expect(part: str, path: str, actual: Any, wanted: Any, why: str) -> None:
        if actual != wanted:
            problems.append((part, path, f"{actual!r} should be {wanted!r} ({why})"))

    if schema in ("urn:asnp:contract:decoded-v2:1", "urn:asnp:contract:decoded-v1:1"):
        subject = headers.get("ce_subject")
        expect("key", "$", key, subject if subject is not None else headers.get("ce_id"),
               "the key is ce_subject (the originalTransactionId), or ce_id without one")
    if schema == "urn:asnp:contract:decoded-v2:1" and isinstance(value, dict):
        payload = value.get("payload") if isinstance(value.get("payload"), dict) else {}
        uuid = payload.get("notificationUUID")
        if isinstance(uuid, str):
            expect("headers", "$.ce_id", headers.get("ce_id"), uuid.lower(), "the notificationUUID in lower case")
        if isinstance(payload.get("notificationType"), str):
            expect("headers", "$.ce_type", headers.get("ce_type"),
                   "com.apple.appstore.v2." + payload["notificationType"], "from payload.notificationType")
        subtype = payload.get("subtype")
        expect("headers", "$.ce_subtype", headers.get("ce_subtype"), subtype if isinstance(subtype, str) else None,
               "payload.subtype, absent without one")
        if isinstance(payload.get("signedDate"), int) and not isinstance(payload.get("signedDate"), bool):
            expect("headers", "$.ce_time", headers.get("ce_time"), millis_to_rfc3339(payload["signedDate"]),
                   "payload.signedDate")
        transaction = value.get("transactionInfo")
        if isinstance(transaction, dict) and isinstance(transaction.get("originalTransactionId"), str):
            expect("headers", "$.ce_subject", headers.get("ce_subject"), transaction["originalTransactionId"],
                   "transactionInfo.originalTransactionId")
    if schema == "urn:asnp:contract:decoded-v1:1" and isinstance(value, dict):
        if isinstance(value.get("notification_type"), str):
            expect("headers", "$.ce_type", headers.get("ce_type"),
                   "com.apple.appstore.v1." + value["notification_type"], "from notification_type")
    if schema == "urn:asnp:contract:subscription-state:1" and isinstance(value, dict):
        otid = value.get("original_transaction_id")
        expect("key", "$", key, otid, "the key is original_transaction_id")
        expect("headers", "$.ce_subject", headers.get("ce_subject"), otid, "original_transaction_id")
        expect("headers", "$.ce_id", headers.get("ce_id"), value.get("last_notification_uuid"),
               "last_notification_uuid")
        signed = value.get("last_signed_date")
        if isinstance(signed, str) and timestamptz_to_rfc3339_millis(signed) is not None:
            expect("headers", "$.ce_time", headers.get("ce_time"), timestamptz_to_rfc3339_millis(signed),
                   "last_signed_date in UTC with milliseconds")
        if isinstance(value.get("bundle_id"), str) and isinstance(value.get("environment"), str):
            expect("headers", "$.ce_source", headers.get("ce_source"),
                   f"asnp/subscriptions/{value['bundle_id']}/{value['environment']}", "bundle_id and environment")
    # The trace context twice, as W3C headers and as CloudEvents' distributed tracing extension: the same values.
    if "ce_traceparent" in headers or schema in ("urn:asnp:contract:decoded-v2:1", "urn:asnp:contract:decoded-v1:1",
                                                  "urn:asnp:contract:subscription-state:1"):
        for name in ("traceparent", "tracestate"):
            expect("headers", f"$.ce_{name}", headers.get(f"ce_{name}"), headers.get(name),
                   f"the same value as {name}")
    if headers.get("ce_type") == "asnp.notification.rejected":  # a dead letter, JSON or not
        topic, partition, offset = (headers.get(n) for n in ("ce_sourcetopic", "ce_sourcepartition", "ce_sourceoffset"))
        expect("headers", "$.ce_id", headers.get("ce_id"), f"{topic}/{partition}/{offset}",
               "ce_sourcetopic/ce_sourcepartition/ce_sourceoffset")
        expect("headers", "$.ce_source", headers.get("ce_source"), f"asnp/{topic}", "asnp/<ce_sourcetopic>")
    return problems


@dataclass
class EventChecker:
    contract: Contract
    topic_aliases: dict[str, str] = field(default_factory=dict)  # actual topic -> contract address

    def __post_init__(self) -> None:
        self._registry = self.contract.registry()
        self._checker = format_checker()
        self._value_validators = {
            urn: Draft202012Validator(schema, registry=self._registry, format_checker=self._checker)
            for urn, schema in self.contract.schemas.items()
        }
        self._header_validators: dict[str, Draft7Validator] = {}

    def _headers_validator(self, message: Message) -> Draft7Validator:
        pointer = message.headers_pointer or ""
        if pointer not in self._header_validators:
            schema = {"$ref": f"{self.contract.asyncapi_uri}#{pointer}"}
            self._header_validators[pointer] = Draft7Validator(
                schema, registry=self._registry, format_checker=self._checker
            )
        return self._header_validators[pointer]

    def match(self, topic: str, dataschema: str | None) -> tuple[Message | None, str]:
        address = self.topic_aliases.get(topic, topic)
        on_channel = [m for m in self.contract.messages if m.address == address]
        if not on_channel:
            known = ", ".join(sorted({m.address for m in self.contract.messages}))
            return None, f"topic {topic!r} is no channel address of the contract ({known}); map it with --topic"
        found = [m for m in on_channel if m.dataschema == dataschema]
        if len(found) == 1:
            return found[0], ""
        if not found:
            wanted = ", ".join(repr(m.dataschema) for m in on_channel)
            return None, f"no message on {address} has ce_dataschema {dataschema!r} (it has {wanted})"
        return None, f"{len(found)} messages on {address} match ce_dataschema {dataschema!r}"

    def check(self, event: Any, where: str) -> tuple[str, list[Failure]]:
        """The summary label of the event and its failures."""
        if not isinstance(event, dict):
            return "(not an event)", [Failure(where, "-", "event", "$", "an event line must be a JSON object")]
        failures: list[Failure] = []
        headers = event.get("headers")
        if not isinstance(headers, dict):
            return "(not an event)", [Failure(where, "-", "event", "$.headers", "missing or not an object")]
        for name in ("topic", "partition", "offset"):
            if name not in event:
                failures.append(Failure(where, "-", "event", f"$.{name}", "missing"))
        has_value, has_base64 = "value" in event, "valueBase64" in event
        if has_value == has_base64:
            failures.append(Failure(where, "-", "event", "$", "needs exactly one of value and valueBase64"))
        if has_base64:
            try:
                base64.b64decode(event["valueBase64"], validate=True)
            except (binascii.Error, TypeError, ValueError):
                failures.append(Failure(where, "-", "event", "$.valueBase64", "not base64"))

        content_type = headers.get("content-type")
        dataschema = headers.get("ce_dataschema")
        label = short_name(dataschema) if isinstance(dataschema, str) else f"(no ce_dataschema, {content_type})"
        if content_type == "application/json" and dataschema is None:
            failures.append(Failure(where, label, "headers", "$",
                                    "ce_dataschema is required when content-type is application/json"))
        if content_type == "application/json" and has_base64:
            failures.append(Failure(where, label, "event", "$", "content-type is application/json but the value is "
                                                               "not JSON (valueBase64)"))
        if has_value and content_type != "application/json":
            failures.append(Failure(where, label, "event", "$", f"a JSON value with content-type {content_type!r}"))
        if dataschema is not None and not (isinstance(dataschema, str) and dataschema in self._value_validators):
            expected_file = schema_path_for_urn(str(dataschema)) or "file of that name"
            failures.append(Failure(where, label, "headers", "$.ce_dataschema",
                                    f"unknown schema {dataschema!r}: no {expected_file} in {self.contract.directory}"))
            return label, failures

        message, why = self.match(str(event.get("topic")), dataschema)
        if message is None:
            failures.append(Failure(where, label, "event", "$.topic", why))
        else:
            if message.content_type != content_type:
                failures.append(Failure(where, label, "headers", "$['content-type']",
                                        f"{content_type!r}, the message {message.name} is {message.content_type!r}"))
            for error in sorted(self._headers_validator(message).iter_errors(headers), key=lambda e: e.json_path):
                failures.append(Failure(where, label, "headers", error.json_path, describe(error)))
        if dataschema is not None and has_value:
            validator = self._value_validators[dataschema]
            for error in sorted(validator.iter_errors(event["value"]), key=lambda e: e.json_path):
                failures.append(Failure(where, label, "value", error.json_path, describe(error)))
        for part, path, text in cross_checks(dataschema, event):
            failures.append(Failure(where, label, part, path, text))
        return label, failures


def read_events(sources: Iterable[tuple[str, TextIO]]) -> Iterator[tuple[str, Any]]:
    """(where, event) for each non-blank line; a line that is not JSON yields (where, ValueError)."""
    for name, handle in sources:
        for number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            try:
                event = json.loads(line)
            except json.JSONDecodeError as error:
                yield f"{name}:{number}", ValueError(f"not JSON: {error}")
                continue
            yield f"{name}:{number}", event


def event_location(event: Any, fallback: str) -> str:
    if isinstance(event, dict) and all(k in event for k in ("topic", "partition", "offset")):
        return f"{event['topic']}/{event['partition']}/{event['offset']}"
    return fallback


def check_events(contract: Contract, sources: Iterable[tuple[str, TextIO]], out: TextIO,
                 topic_aliases: dict[str, str] | None = None) -> tuple[int, int]:
    """Validates every event; prints failures, then the summary. Returns (events read, events failed)."""
    checker = EventChecker(contract, topic_aliases or {})
    valid: Counter[str] = Counter()
    invalid: Counter[str] = Counter()
    read = failed = 0
    for line_where, event in read_events(sources):
        read += 1
        if isinstance(event, ValueError):
            failed += 1
            invalid["(unreadable)"] += 1
            print(f"FAIL {line_where} [-] event $: {event}", file=out)
            continue
        where = f"{event_location(event, line_where)} ({line_where})"
        label, failures = checker.check(event, where)
        if failures:
            failed += 1
            invalid[label] += 1
            for failure in failures:
                print(failure, file=out)
        else:
            valid[label] += 1
    for label in sorted(set(valid) | set(invalid)):
        text = f"{label}: {valid[label]} valid"
        if invalid[label]:
            text += f", {invalid[label]} invalid"
        print(text, file=out)
    print(f"{read} event(s) read, {read - failed} valid, {failed} invalid", file=out)
    return read, failed


# --------------------------------------------------------------------------------------------------------------------
# Command line


def parse_topic_alias(text: str) -> tuple[str, str]:
    if "=" not in text:
        raise argparse.ArgumentTypeError("expected ACTUAL=ADDRESS, e.g. prod.decoded=appstore.notifications.decoded")
    actual, address = text.split("=", 1)
    return actual, address


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        description="Validate the output-event contract (asyncapi) or events against it (events).",
    )
    parser.add_argument("--contract", type=Path, default=DEFAULT_CONTRACT,
                        help=f"the contract directory (default: {DEFAULT_CONTRACT})")
    sub = parser.add_subparsers(dest="command", required=True)
    asyncapi = sub.add_parser("asyncapi", help="validate asyncapi.yaml and the schema files it references")
    asyncapi.add_argument("--asyncapi-schema", type=Path, default=DEFAULT_ASYNCAPI_SCHEMA,
                          help="AsyncAPI's JSON Schema for 3.0.0 (default: the vendored copy)")
    events = sub.add_parser("events", help="validate events (JSON lines, as `asnp tail` prints them)")
    events.add_argument("files", nargs="*", type=Path, help="JSON-lines files (default: stdin)")
    events.add_argument("--topic", action="append", type=parse_topic_alias, default=[], metavar="ACTUAL=ADDRESS",
                        help="an actual topic name and the contract channel address it stands for "
                             "(for renamed topics); repeatable")
    return parser


def main(argv: list[str] | None = None, out: TextIO = sys.stdout) -> int:
    args = build_parser().parse_args(argv)
    try:
        contract = Contract.load(args.contract)
        if args.command == "asyncapi":
            problems = check_asyncapi(contract, args.asyncapi_schema, out)
            for problem in problems:
                print(f"FAIL {problem}", file=out)
            print("contract OK" if not problems else f"contract has {len(problems)} problem(s)", file=out)
            return 1 if problems else 0
        if args.files:
            handles = [(str(path), path.open(encoding="utf-8")) for path in args.files]
        else:
            handles = [("<stdin>", sys.stdin)]
        try:
            read, failed = check_events(contract, handles, out, dict(args.topic))
        finally:
            for name, handle in handles:
                if handle is not sys.stdin:
                    handle.close()
        if read == 0:
            print("FAIL no event was read", file=out)
            return 1
        return 1 if failed else 0
    except (ContractError, OSError) as error:
        print(f"FAIL {error}", file=out)
        return 1


if __name__ == "__main__":
    sys.exit(main())
