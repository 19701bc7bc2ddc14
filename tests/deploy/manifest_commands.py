#!/usr/bin/env python3
"""Reads every Kubernetes manifest given on the command line (python3-yaml)
and prints, one JSON array per line, the argv of every container command and
exec probe, with Kubernetes' $(VAR) references replaced by sample values from
the container's env so the argv can be run. Exits 1 with a message naming the
file on anything that is not a well-formed kiln manifest."""
import json
import re
import sys

import yaml

SAMPLE_VALUES = {"status.podIP": "10.0.0.7"}


def fail(message):
    print("manifest_commands: " + message, file=sys.stderr)
    sys.exit(1)


def substitute(argv, env, where):
    def value(match):
        name = match.group(1)
        if name not in env:
            fail(f"{where}: $({name}) is not defined in the container's env")
        return env[name]
    return [re.sub(r"\$\(([A-Za-z_][A-Za-z0-9_]*)\)", value, arg) for arg in argv]


def container_env(container, where):
    env = {}
    for entry in container.get("env", []) or []:
        if "value" in entry:
            env[entry["name"]] = str(entry["value"])
        elif "valueFrom" in entry and "fieldRef" in entry["valueFrom"]:
            field = entry["valueFrom"]["fieldRef"]["fieldPath"]
            if field not in SAMPLE_VALUES:
                fail(f"{where}: no sample value for fieldRef {field}")
            env[entry["name"]] = SAMPLE_VALUES[field]
        else:
            fail(f"{where}: env {entry.get('name')} has neither value nor fieldRef")
    return env


def commands_of(document, path):
    kind = document.get("kind")
    if kind in ("Deployment", "DaemonSet", "StatefulSet"):
        spec = document["spec"]["template"]["spec"]
        for container in spec["containers"]:
            where = f"{path}: {kind} {document['metadata']['name']} container {container['name']}"
            env = container_env(container, where)
            if "command" not in container:
                fail(f"{where}: no command (the image's default is only --help)")
            yield substitute(container["command"] + container.get("args", []), env, where)
            for probe in ("readinessProbe", "livenessProbe", "startupProbe"):
                if probe in container and "exec" in container[probe]:
                    yield substitute(container[probe]["exec"]["command"], env, where + " " + probe)
            if "resources" not in container or "requests" not in container["resources"]:
                fail(f"{where}: no resource requests")
            if "readinessProbe" not in container or "livenessProbe" not in container:
                fail(f"{where}: needs both a readiness and a liveness probe")
    elif kind not in ("Service", "Secret", "ConfigMap"):
        fail(f"{path}: unexpected kind {kind!r}")


def main(paths):
    if not paths:
        fail("usage: manifest_commands.py MANIFEST.yaml...")
    for path in paths:
        try:
            with open(path) as stream:
                documents = [d for d in yaml.safe_load_all(stream) if d is not None]
        except (OSError, UnicodeDecodeError, yaml.YAMLError) as error:
            fail(f"{path}: {error}")
        if not documents:
            fail(f"{path}: no YAML documents")
        for document in documents:
            if not isinstance(document, dict) or "apiVersion" not in document:
                fail(f"{path}: a document without apiVersion")
            try:
                for argv in commands_of(document, path):
                    print(json.dumps(argv))
            except (KeyError, TypeError) as error:
                fail(f"{path}: {document.get('kind')} is missing {error}")


if __name__ == "__main__":
    main(sys.argv[1:])
