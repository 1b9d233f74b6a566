#!/usr/bin/env python3
"""Static checks for deploy/ (Docker and Kubernetes are not available everywhere Reel is built):
every YAML file parses; Kubernetes objects are well-formed and consistent with each other
(selectors match pod labels, referenced ConfigMaps/Secrets/PVCs/keys exist, kustomization lists
existing files); the autoscaling overlay's KEDA objects validate against KEDA's CRD schemas
(vendored in schemas/) and point at what exists; compose services only use declared secrets and
volumes. Exit 1 on a problem. Run by the test suite (DeployManifestTests)."""
import glob, json, os, sys
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

# The autoscaling overlay (k8s-autoscaling/): KEDA's objects against KEDA's own CRD schemas,
# vendored in schemas/ (no cluster or network needed), and consistent with the base objects.
import jsonschema
keda_schemas = {}
for path in glob.glob(os.path.join(here, "schemas", "keda-*.json")):
    schema = json.load(open(path))
    kind = {"scaledobject": "ScaledObject", "scaledjob": "ScaledJob", "triggerauthentication": "TriggerAuthentication"}[
        os.path.basename(path).split("-")[1]]
    keda_schemas[kind] = schema
overlay = os.path.join(here, "k8s-autoscaling")
keda_objects, patches = [], []
for path in sorted(glob.glob(os.path.join(overlay, "*.yaml"))):
    name = "k8s-autoscaling/" + os.path.basename(path)
    for doc in yaml.safe_load_all(open(path)):
        if doc is None:
            continue
        if doc.get("kind") == "Kustomization":
            for resource in doc.get("resources", []):
                check(os.path.exists(os.path.join(overlay, resource)), f"{name}: resource {resource} does not exist")
            for patch in doc.get("patches", []):
                check(os.path.exists(os.path.join(overlay, patch["path"])), f"{name}: patch {patch['path']} does not exist")
            continue
        check(doc.get("metadata", {}).get("namespace") == "reel", f"{name}: {doc.get('kind')} is not in namespace reel")
        if doc.get("apiVersion", "").startswith("keda.sh/"):
            schema = keda_schemas.get(doc["kind"])
            check(schema is not None, f"{name}: no vendored schema for {doc['kind']}")
            if schema:
                for error in jsonschema.Draft7Validator(schema).iter_errors(doc):
                    check(False, f"{name}: {doc['kind']} {'.'.join(map(str, error.absolute_path))}: {error.message}")
            keda_objects.append((name, doc))
        else:
            patches.append((name, doc))

base = {(d["kind"], d["metadata"]["name"]): d for _, d in objects}
for name, patch in patches:
    target = base.get((patch["kind"], patch["metadata"]["name"]))
    check(target is not None, f"{name}: patches {patch['kind']} {patch['metadata']['name']}, which deploy/k8s does not have")
    if patch["kind"] == "Deployment" and target:
        names = {c["name"] for c in target["spec"]["template"]["spec"]["containers"]}
        for container in patch["spec"]["template"]["spec"].get("containers", []):
            check(container["name"] in names, f"{name}: patches container {container['name']}, which {patch['metadata']['name']} does not have")
            if container["name"] == "agent" and "lifecycle" in container:
                grace = patch["spec"]["template"]["spec"].get("terminationGracePeriodSeconds", 30)
                drain = int(container["args"][container["args"].index("--drain-seconds") + 1]) if "--drain-seconds" in container.get("args", []) else 120
                check(grace > drain, f"{name}: terminationGracePeriodSeconds {grace} must exceed the agents' --drain-seconds {drain}")
service_ports = {p["port"] for _, d in patches if d["kind"] == "Service" and d["metadata"]["name"] == "reel-coordinator" for p in d["spec"]["ports"]}
service_ports |= {p["port"] for p in base[("Service", "reel-coordinator")]["spec"]["ports"]}
for name, doc in keda_objects:
    if doc["kind"] == "ScaledObject":
        check(("Deployment", doc["spec"]["scaleTargetRef"]["name"]) in base, f"{name}: scales {doc['spec']['scaleTargetRef']['name']}, which deploy/k8s does not have")
    if doc["kind"] == "ScaledJob":
        pod = doc["spec"]["jobTargetRef"]["template"]["spec"]
        volumes = {v["name"] for v in pod.get("volumes", [])}
        for container in pod["containers"]:
            for mount in container.get("volumeMounts", []):
                check(mount["name"] in volumes, f"{name}: mount of undeclared volume {mount['name']}")
            for source in container.get("envFrom", []):
                check(source["configMapRef"]["name"] in configmaps, f"{name}: unknown ConfigMap {source['configMapRef']['name']}")
        for volume in pod.get("volumes", []):
            if "secret" in volume:
                check(volume["secret"].get("defaultMode", 0o644) & 0o007 == 0, f"{name}: secret volume {volume['name']} is world-readable")
    for trigger in doc["spec"].get("triggers", []):
        if trigger["type"] == "metrics-api":
            url = trigger["metadata"]["url"]
            check(url.startswith("http://reel-coordinator.reel.svc:") and url.endswith("/scale"), f"{name}: metrics-api url {url} is not the coordinator's /scale")
            port = int(url.split(":")[2].split("/")[0])
            check(port in service_ports, f"{name}: the coordinator's Service has no port {port}")
            check(trigger["metadata"].get("valueLocation") == "agentsWanted", f"{name}: valueLocation must be agentsWanted (GET /scale)")
        if "authenticationRef" in trigger:
            check(any(d["kind"] == "TriggerAuthentication" and d["metadata"]["name"] == trigger["authenticationRef"]["name"] for _, d in keda_objects),
                  f"{name}: unknown TriggerAuthentication {trigger['authenticationRef']['name']}")
objects += keda_objects + patches

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
