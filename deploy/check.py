#!/usr/bin/env python3
"""Static checks for deploy/ (Docker and Kubernetes are not available everywhere Reel is built):
every YAML file parses; Kubernetes objects are well-formed and consistent with each other
(selectors match pod labels, referenced ConfigMaps/Secrets/PVCs/keys exist, kustomization lists
existing files); compose services only use declared secrets and volumes. Exit 1 on a problem."""
import glob, os, sys
import yaml

here = os.path.dirname(os.path.abspath(__file__))
problems = []

def check(ok, message):
    if not ok:
        problems.append(message)

# Kubernetes
objects = []
for path in sorted(glob.glob(os.path.join(here, "k8s", "*.yaml"))):
    for doc in yaml.safe_load_all(open(path)):
        if doc is None:
            continue
        name = os.path.basename(path)
        check("apiVersion" in doc and "kind" in doc, f"{name}: an object without apiVersion/kind")
        if doc.get("kind") == "Kustomization":
            for resource in doc.get("resources", []):
                check(os.path.exists(os.path.join(here, "k8s", resource)), f"{name}: resource {resource} does not exist")
            continue
        check(doc.get("metadata", {}).get("name"), f"{name}: {doc.get('kind')} without metadata.name")
        if doc.get("kind") != "Namespace":
            check(doc["metadata"].get("namespace") == "reel", f"{name}: {doc['metadata'].get('name')} is not in namespace reel")
        objects.append((name, doc))

def named(kind):
    return {d["metadata"]["name"]: d for _, d in objects if d["kind"] == kind}

configmaps, secrets, pvcs = named("ConfigMap"), named("Secret"), named("PersistentVolumeClaim")
for name, doc in objects:
    if doc["kind"] not in ("Deployment", "StatefulSet"):
        continue
    spec = doc["spec"]
    labels = spec["template"]["metadata"]["labels"]
    for key, value in spec["selector"]["matchLabels"].items():
        check(labels.get(key) == value, f"{name}: selector {key}={value} does not match the pod labels")
    pod = spec["template"]["spec"]
    volumes = {v["name"]: v for v in pod.get("volumes", [])}
    claim_templates = {t["metadata"]["name"] for t in spec.get("volumeClaimTemplates", [])}
    for volume in volumes.values():
        if "persistentVolumeClaim" in volume:
            check(volume["persistentVolumeClaim"]["claimName"] in pvcs, f"{name}: unknown PVC {volume['persistentVolumeClaim']['claimName']}")
        if "secret" in volume:
            secret = secrets.get(volume["secret"]["secretName"])
            check(secret is not None, f"{name}: unknown Secret {volume['secret']['secretName']}")
            for item in volume["secret"].get("items", []):
                check(secret and item["key"] in secret.get("stringData", {}), f"{name}: Secret has no key {item['key']}")
            # reel refuses secret files other users can read; the Kubernetes default mode is 0644.
            mode = volume["secret"].get("defaultMode", 0o644)
            check(mode & 0o007 == 0, f"{name}: secret volume {volume['name']} has defaultMode {mode:o}; reel refuses world-readable secret files (use 0440)")
    for container in pod["containers"]:
        for mount in container.get("volumeMounts", []):
            check(mount["name"] in volumes or mount["name"] in claim_templates, f"{name}: mount of undeclared volume {mount['name']}")
        for source in container.get("envFrom", []):
            check(source["configMapRef"]["name"] in configmaps, f"{name}: unknown ConfigMap {source['configMapRef']['name']}")
        for env in container.get("env", []):
            ref = env.get("valueFrom", {}).get("secretKeyRef")
            if ref:
                check(ref["key"] in secrets.get(ref["name"], {}).get("stringData", {}), f"{name}: unknown secret key {ref['name']}/{ref['key']}")
for name, doc in objects:
    if doc["kind"] == "Service":
        selected = doc["spec"]["selector"]
        check(any(all(d["spec"]["template"]["metadata"]["labels"].get(k) == v for k, v in selected.items())
                  for _, d in objects if d["kind"] in ("Deployment", "StatefulSet")),
              f"{name}: Service {doc['metadata']['name']} selects no pods")

# Compose
compose = yaml.safe_load(open(os.path.join(here, "compose.yaml")))
declared_secrets, declared_volumes = set(compose.get("secrets", {})), set(compose.get("volumes", {}))
for service, spec in compose["services"].items():
    for secret in spec.get("secrets", []):
        check(secret in declared_secrets, f"compose.yaml: {service} uses undeclared secret {secret}")
    for volume in spec.get("volumes", []):
        source = volume.split(":")[0]
        check(source.startswith((".", "/")) or source in declared_volumes, f"compose.yaml: {service} uses undeclared volume {source}")
    for dependency in spec.get("depends_on", []):
        check(dependency in compose["services"], f"compose.yaml: {service} depends on unknown {dependency}")
check(not any(v for v in compose["services"]["agent"].get("volumes", [])), "compose.yaml: agents must share no volume")

for problem in problems:
    print(problem, file=sys.stderr)
print(f"deploy/: {len(objects)} Kubernetes objects, {len(compose['services'])} compose services, {len(problems)} problems")
sys.exit(1 if problems else 0)
