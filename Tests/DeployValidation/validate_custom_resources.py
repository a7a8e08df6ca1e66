#!/usr/bin/env python3
"""Validates the Kubernetes custom resources of Deploy/kubernetes against their operators' CRD schemas, offline.

    python3 Tests/DeployValidation/validate_custom_resources.py [--crds DIR] PATH [PATH ...]

Each PATH is a directory (searched recursively for *.yaml and *.yml) or a file. A custom resource is any YAML
document whose apiVersion group is not one of Kubernetes' own (keda.sh, monitoring.coreos.com, kafka.strimzi.io...).
Every one is checked against crds/<group>_<version>_<Kind>.json (vendored by vendor_crds.py; see crds/README.md)
with the API server's structural-schema rules: unknown fields refused (strict field validation),
`nullable`, `x-kubernetes-int-or-string`, `x-kubernetes-list-type`, and metadata checked as ObjectMeta. A kind with
no vendored schema, or an apiVersion the vendored CRD does not serve, is a failure.

Files listed as patches in a kustomization (`patches`, `patchesStrategicMerge`) are partial resources: they are
not checked alone but merged into the resources of that kustomization they target, as kustomize does for custom
resources (a JSON merge patch, RFC 7386), and the result is checked. A kustomize Component (`kind: Component`) is
built only where a kustomization lists it under `components`: its resources join that kustomization's, and its
patches apply to them all.

Prints one line per problem (file, document index, Kind/name, JSON path, message) and exits 1 if there is any;
otherwise prints a summary naming every resource checked and exits 0. Needs PyYAML and jsonschema 4.x.
"""

import argparse
import copy
import json
import os
import re
import sys

import jsonschema
import yaml

# API groups the Kubernetes API server serves itself ("" is the core group, apiVersion: v1). Anything else is a
# custom resource (including *.k8s.io groups served by CRDs, such as gateway.networking.k8s.io).
BUILT_IN_GROUPS = {
    "",
    "admissionregistration.k8s.io",
    "apiextensions.k8s.io",
    "apiregistration.k8s.io",
    "apps",
    "authentication.k8s.io",
    "authorization.k8s.io",
    "autoscaling",
    "batch",
    "certificates.k8s.io",
    "coordination.k8s.io",
    "discovery.k8s.io",
    "events.k8s.io",
    "extensions",
    "flowcontrol.apiserver.k8s.io",
    "internal.apiserver.k8s.io",
    "networking.k8s.io",
    "node.k8s.io",
    "policy",
    "rbac.authorization.k8s.io",
    "resource.k8s.io",
    "scheduling.k8s.io",
    "storage.k8s.io",
    "storagemigration.k8s.io",
}
KUSTOMIZE_GROUP = "kustomize.config.k8s.io"
KUSTOMIZATION_FILES = {"kustomization.yaml", "kustomization.yml", "Kustomization"}

# metadata is validated by the API server as ObjectMeta, not by the CRD's schema (usually just `type: object`).
STRING_MAP = {"type": "object", "additionalProperties": {"type": "string"}}
DNS_SUBDOMAIN = r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$"
OBJECT_META = {
    "type": "object",
    "required": ["name"],
    "properties": {
        "name": {"type": "string", "pattern": DNS_SUBDOMAIN, "maxLength": 253},
        "namespace": {"type": "string", "pattern": r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$", "maxLength": 63},
        "labels": STRING_MAP,
        "annotations": STRING_MAP,
        "finalizers": {"type": "array", "items": {"type": "string"}},
        "generateName": {"type": "string"},
        "ownerReferences": {"type": "array", "items": {"type": "object"}},
        "uid": {"type": "string"},
        "resourceVersion": {"type": "string"},
        "generation": {"type": "integer"},
        "creationTimestamp": {"type": ["string", "null"]},
        "deletionTimestamp": {"type": ["string", "null"]},
        "deletionGracePeriodSeconds": {"type": "integer"},
        "managedFields": {"type": "array", "items": {"type": "object"}},
        "selfLink": {"type": "string"},
    },
    "additionalProperties": False,
}

# CEL rules (x-kubernetes-validations) cannot be evaluated here; those known by their exact text are, in Python.
KNOWN_CEL_RULES = {
    "!has(self.minReplicaCount) || self.minReplicaCount <= (has(self.maxReplicaCount) ? self.maxReplicaCount : 100)": (
        lambda s: "minReplicaCount" not in s or s["minReplicaCount"] <= s.get("maxReplicaCount", 100)
    ),
    # Gateway API: a listener that terminates TLS names its certificate; a Service backend names its port; Exact
    # and PathPrefix paths are absolute and have no empty segment.
    "self.mode == 'Terminate' ? size(self.certificateRefs) > 0 || size(self.options) > 0 : true": (
        lambda s: s.get("mode", "Terminate") != "Terminate" or bool(s.get("certificateRefs")) or bool(s.get("options"))
    ),
    "(size(self.group) == 0 && self.kind == 'Service') ? has(self.port) : true": (
        lambda s: not (s.get("group", "") == "" and s.get("kind", "Service") == "Service") or "port" in s
    ),
    "(self.type in ['Exact','PathPrefix']) ? self.value.startsWith('/') : true": (
        lambda s: s.get("type", "PathPrefix") not in ("Exact", "PathPrefix") or s.get("value", "/").startswith("/")
    ),
    "(self.type in ['Exact','PathPrefix']) ? !self.value.contains('//') : true": (
        lambda s: s.get("type", "PathPrefix") not in ("Exact", "PathPrefix") or "//" not in s.get("value", "/")
    ),
}


class Problems:
    def __init__(self):
        self.lines = []

    def add(self, file, index, resource, path, message):
        self.lines.append(f"{file}: document {index}: {resource}: {path}: {message}")


def api_group(api_version):
    return api_version.rpartition("/")[0] if "/" in api_version else ""


def resource_name(document):
    metadata = document.get("metadata") if isinstance(document.get("metadata"), dict) else {}
    return f"{document.get('kind', '?')}/{metadata.get('name', '?')}"


def merge_patch(target, patch):
    """RFC 7386 JSON merge patch: objects merge key by key, null deletes, anything else (arrays too) replaces."""
    if not isinstance(patch, dict):
        return copy.deepcopy(patch)
    result = copy.deepcopy(target) if isinstance(target, dict) else {}
    for key, value in patch.items():
        if value is None:
            result.pop(key, None)
        else:
            result[key] = merge_patch(result.get(key), value)
    return result


# Structural schemas -> JSON Schema (draft 4, which OpenAPI 3.0's schema objects follow).


def structural(schema, in_logic=False):
    """The Kubernetes structural schema as a draft-4 JSON Schema with the API server's semantics made explicit."""
    if not isinstance(schema, dict):
        return schema
    result = {}
    for key, value in schema.items():
        if key in ("properties", "patternProperties", "definitions") and isinstance(value, dict):
            result[key] = {name: structural(sub, in_logic) for name, sub in value.items()}
        elif key in ("items", "additionalProperties", "not", "additionalItems") and isinstance(value, dict):
            result[key] = structural(value, in_logic or key == "not")
        elif key in ("allOf", "anyOf", "oneOf") and isinstance(value, list):
            # Value validations only: their properties add nothing to the object's known fields.
            result[key] = [structural(sub, True) for sub in value]
        else:
            result[key] = value
    if result.get("x-kubernetes-int-or-string"):
        result["type"] = ["integer", "string"]
    if result.get("nullable") and "type" in result:
        types = result["type"] if isinstance(result["type"], list) else [result["type"]]
        result["type"] = types + ["null"]
        if "enum" in result:
            result["enum"] = list(result["enum"]) + [None]
    # Strict field validation: an object that lists its fields and neither keeps unknown ones nor is a map.
    if (
        not in_logic
        and "properties" in result
        and "additionalProperties" not in result
        and not result.get("x-kubernetes-preserve-unknown-fields")
    ):
        result["additionalProperties"] = False
    return result


def list_type(validator, value, instance, schema):
    if not isinstance(instance, list):
        return
    if value == "set":
        seen = []
        for item in instance:
            if item in seen:
                yield jsonschema.ValidationError(f"duplicate item {json.dumps(item)} in a list of type set")
            seen.append(item)
    elif value == "map":
        keys = schema.get("x-kubernetes-list-map-keys", [])
        seen = set()
        for item in instance:
            if isinstance(item, dict):
                key = tuple(json.dumps(item.get(k)) for k in keys)
                if key in seen:
                    yield jsonschema.ValidationError(f"duplicate entry for key {keys} = {key} in a list of type map")
                seen.add(key)


def cel_rules(validator, rules, instance, schema):
    for rule in rules:
        check = KNOWN_CEL_RULES.get(rule.get("rule"))
        if check is not None:
            try:
                ok = check(instance)
            except (TypeError, AttributeError):
                ok = True  # the schema's type checks report that
            if not ok:
                yield jsonschema.ValidationError(rule.get("message") or f"CEL rule failed: {rule['rule']}")


KubernetesValidator = jsonschema.validators.extend(
    jsonschema.Draft4Validator,
    {"x-kubernetes-list-type": list_type, "x-kubernetes-validations": cel_rules},
)


def json_path(path):
    text = "$"
    for part in path:
        if isinstance(part, int):
            text += f"[{part}]"
        elif re.fullmatch(r"[A-Za-z_$][A-Za-z0-9_$-]*", str(part)):
            text += f".{part}"
        else:
            text += f"[{json.dumps(str(part))}]"
    return text


def load_schemas(directory):
    schemas = {}
    for name in sorted(os.listdir(directory)):
        if not name.endswith(".json"):
            continue
        group, version, kind = name[: -len(".json")].rsplit("_", 2)
        with open(os.path.join(directory, name), encoding="utf-8") as file:
            schema = structural(json.load(file))
        properties = schema.setdefault("properties", {})
        properties["apiVersion"] = {"enum": [f"{group}/{version}"]}
        properties["kind"] = {"enum": [kind]}
        properties["metadata"] = OBJECT_META
        schema["required"] = sorted(set(schema.get("required", [])) | {"apiVersion", "kind", "metadata"})
        schemas[(group, version, kind)] = KubernetesValidator(schema)
    return schemas


def validate(document, file, index, schemas, problems):
    """Checks one custom resource; True if it was checked against a schema (whether or not it passed)."""
    api_version, kind = str(document.get("apiVersion")), str(document.get("kind"))
    group, _, version = api_version.rpartition("/")
    name = resource_name(document)
    # As kubectl sends it: JSON, where YAML's timestamps are strings and every key is a string.
    document = json.loads(json.dumps(document, default=str))
    validator = schemas.get((group, version, kind))
    if validator is None:
        served = sorted(f"{g}/{v}" for g, v, k in schemas if g == group and k == kind)
        if served:
            message = (
                f"apiVersion {api_version} is not served by the vendored {kind} CRD (it serves {', '.join(served)})"
            )
        else:
            message = (
                f"no vendored CRD schema for {kind} ({api_version}): add its CRD to "
                "Tests/DeployValidation/crds with vendor_crds.py (see crds/README.md)"
            )
        problems.add(file, index, name, "$", message)
        return False
    for error in sorted(validator.iter_errors(document), key=lambda e: [str(p) for p in e.absolute_path]):
        path = list(error.absolute_path)
        if error.validator == "additionalProperties" and isinstance(error.instance, dict):
            known = set(error.schema.get("properties", {}))
            patterns = error.schema.get("patternProperties", {})
            for key in sorted(error.instance):
                if key not in known and not any(re.search(p, key) for p in patterns):
                    problems.add(file, index, name, json_path(path + [key]), f'unknown field "{key}"')
            continue
        message = error.message
        if error.context:
            best = jsonschema.exceptions.best_match(error.context)
            message += f" ({json_path(path + list(best.relative_path))}: {best.message})"
        problems.add(file, index, name, json_path(path), message)
    return True


def load_documents(path, problems):
    try:
        with open(path, encoding="utf-8") as file:
            return list(yaml.safe_load_all(file))
    except (OSError, yaml.YAMLError) as error:
        problems.add(path, 0, "?", "$", f"cannot read: {error}")
        return []


def is_custom(document):
    if not isinstance(document, dict) or "apiVersion" not in document or "kind" not in document:
        return False
    group = api_group(str(document["apiVersion"]))
    return group not in BUILT_IN_GROUPS and group != KUSTOMIZE_GROUP


def kustomization_in(directory):
    for name in sorted(KUSTOMIZATION_FILES):
        path = os.path.join(directory, name)
        if os.path.isfile(path):
            return path
    return None


def patch_entries(kustomization_path, kustomization):
    """(label, file or None, inline text or None, target selector or None) for every patch of a kustomization."""
    directory = os.path.dirname(kustomization_path)
    inline = f"{kustomization_path} (inline patch)"
    entries = []
    for entry in kustomization.get("patches") or []:
        if isinstance(entry, dict) and "path" in entry:
            path = os.path.normpath(os.path.join(directory, entry["path"]))
            entries.append((path, path, None, entry.get("target")))
        elif isinstance(entry, dict) and "patch" in entry:
            entries.append((inline, None, str(entry["patch"]), entry.get("target")))
    for entry in kustomization.get("patchesStrategicMerge") or []:
        if isinstance(entry, str) and "\n" not in entry.strip():
            path = os.path.normpath(os.path.join(directory, entry))
            entries.append((path, path, None, None))
        elif isinstance(entry, str):
            entries.append((inline, None, entry, None))
    return entries


def matches_target(document, target):
    """kustomize's patch target selector (anchored regular expressions on group, version, kind, name, namespace)."""
    group, _, version = str(document.get("apiVersion", "")).rpartition("/")
    metadata = document.get("metadata") or {}
    fields = {
        "group": group,
        "version": version,
        "kind": document.get("kind", ""),
        "name": metadata.get("name", ""),
        "namespace": metadata.get("namespace", ""),
    }
    for key, value in fields.items():
        if key in target and not re.fullmatch(str(target[key]), str(value)):
            return False
    selector = target.get("labelSelector")
    if selector:
        labels = metadata.get("labels") or {}
        for term in str(selector).split(","):
            key, _, value = term.partition("=")
            if labels.get(key.strip()) != value.strip():
                return False
    return True


def same_resource(document, patch):
    """What a patch without a target applies to: the resource of the same group, kind and name."""

    def identity(item):
        metadata = item.get("metadata") if isinstance(item.get("metadata"), dict) else {}
        return api_group(str(item.get("apiVersion", ""))), item.get("kind"), metadata.get("name")

    return identity(document) == identity(patch)


class Build:
    """The resources a kustomization produces (as far as custom resources are concerned), patches applied."""

    def __init__(self, problems):
        self.problems = problems
        self.cache = {}

    def resources(self, kustomization_path, stack=()):
        if kustomization_path in self.cache:
            return self.cache[kustomization_path]
        if kustomization_path in stack:
            return []
        documents = load_documents(kustomization_path, self.problems)
        kustomization = documents[0] if documents and isinstance(documents[0], dict) else {}
        result = []  # [document, origin file, document index, [patch files applied]]
        self.accumulate(kustomization_path, kustomization, result, stack)
        # A component's resources, then its patches, over everything accumulated so far (as kustomize orders them).
        for entry in kustomization.get("components") or []:
            if not isinstance(entry, str) or "://" in entry:
                continue
            directory = os.path.normpath(os.path.join(os.path.dirname(kustomization_path), entry))
            component_path = kustomization_in(directory)
            if component_path is None:
                self.problems.add(kustomization_path, 0, "?", "$", f"component {entry} has no kustomization")
                continue
            loaded = load_documents(component_path, self.problems)
            component = loaded[0] if loaded and isinstance(loaded[0], dict) else {}
            self.accumulate(component_path, component, result, stack + (kustomization_path,), owner=kustomization_path)
        self.cache[kustomization_path] = result
        return result

    def accumulate(self, kustomization_path, kustomization, result, stack, owner=None):
        """Adds a kustomization's (or component's) resources to `result`, then applies its patches to `result`; the
        patches are reported as `owner`'s (the kustomization that lists the component), or its own."""
        owner = owner or kustomization_path
        directory = os.path.dirname(kustomization_path)
        for entry in (kustomization.get("resources") or []) + (kustomization.get("bases") or []):
            if not isinstance(entry, str) or "://" in entry or entry.startswith(("github.com/", "git@")):
                continue  # remote: not here
            path = os.path.normpath(os.path.join(directory, entry))
            if os.path.isdir(path):
                sub = kustomization_in(path)
                if sub:
                    built = self.resources(sub, stack + (kustomization_path,))
                    result += [[copy.deepcopy(d), f, i, list(p)] for d, f, i, p in built]
            elif os.path.isfile(path):
                for index, document in enumerate(load_documents(path, self.problems)):
                    if isinstance(document, dict):
                        result.append([document, path, index, []])
        for label, source, text, target in patch_entries(kustomization_path, kustomization):
            patches = load_documents(source, self.problems) if source else list(yaml.safe_load_all(text))
            for index, patch in enumerate(patches):
                if isinstance(patch, list):
                    if target and target.get("group", "") not in BUILT_IN_GROUPS:
                        message = "JSON 6902 patches of custom resources are not checked by this validator"
                        self.problems.add(label, index, "?", "$", message)
                    continue
                if not isinstance(patch, dict):
                    continue
                targets_custom = target is not None and str(target.get("group", "")) not in BUILT_IN_GROUPS
                if not (is_custom(patch) or targets_custom):
                    continue
                applied = 0
                for item in result:
                    document = item[0]
                    if matches_target(document, target) if target is not None else same_resource(document, patch):
                        item[0] = merge_patch(document, patch)
                        item[3].append((label, owner))
                        applied += 1
                if applied == 0:
                    message = f"the patch matches no resource of {owner}"
                    self.problems.add(label, index, resource_name(patch), "$", message)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--crds", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "crds"))
    parser.add_argument("paths", nargs="+", help="directories (searched recursively) or YAML files")
    arguments = parser.parse_args()

    problems = Problems()
    schemas = load_schemas(arguments.crds)
    files = []
    for path in arguments.paths:
        if os.path.isdir(path):
            for root, directories, names in os.walk(path):
                directories.sort()
                wanted = [n for n in sorted(names) if n.endswith((".yaml", ".yml")) or n in KUSTOMIZATION_FILES]
                files += [os.path.join(root, n) for n in wanted]
        else:
            files.append(path)
    files = [os.path.normpath(f) for f in files]

    kustomizations = [f for f in files if os.path.basename(f) in KUSTOMIZATION_FILES]
    patch_files = set()
    for path in kustomizations:
        documents = load_documents(path, problems)
        if documents and isinstance(documents[0], dict):
            patch_files |= {source for _, source, _, _ in patch_entries(path, documents[0]) if source}

    checked = []
    for path in files:
        if path in kustomizations or path in patch_files:
            continue
        for index, document in enumerate(load_documents(path, problems)):
            if is_custom(document):
                if validate(document, path, index, schemas, problems):
                    checked.append(f"{resource_name(document)} ({os.path.basename(os.path.dirname(path))})")

    build = Build(problems)
    for path in kustomizations:
        documents = load_documents(path, problems)
        if documents and isinstance(documents[0], dict) and documents[0].get("kind") == "Component":
            continue  # built where a kustomization lists it
        for document, origin, index, applied in build.resources(path):
            mine = [label for label, owner in applied if owner == path]
            if mine and is_custom(document):
                where = f"{origin} + {', '.join(mine)}"
                if validate(document, where, index, schemas, problems):
                    checked.append(f"{resource_name(document)} ({os.path.basename(os.path.dirname(path))}, patched)")

    for line in problems.lines:
        print(line)
    if problems.lines:
        print(f"FAILED: {len(problems.lines)} problem(s) in custom resources")
        return 1
    if not checked:
        print("FAILED: no custom resource found")
        return 1
    print(f"validated {len(checked)} custom resources: {', '.join(checked)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
