#!/usr/bin/env python3
"""Plays KEDA and the Horizontal Pod Autoscaler on one machine (Kubernetes does not run here):
polls the coordinator's GET /scale every POLL seconds, sizes a pool of real `reel agent`
processes as deploy/k8s-autoscaling/scaledobject.yaml asks (metrics-api trigger on
agentsWanted with targetValue 1, min 0, max MAX_AGENTS, scale-down stabilisation window,
cooldown before going to zero, at most one agent removed per SCALE_DOWN_PERIOD), and stops an
agent as the kubelet does: SIGTERM (the agent drains), SIGKILL after GRACE seconds. Idle agents
go first (what pod-deletion-cost does).

    ops/autoscale-sim.sh [REEL_BINARY]   (sets up a private PostgreSQL, a coordinator and a job;
                                          see there for the settings)

Prints one line per decision and, at the end, the figures docs/scaling.md asks for: how many
polling intervals after the submit the first chunk was claimed, whether any agent was stopped
while it held a chunk or exited other than 0, and the job's end. Nothing here is a test: figures
go to BENCHMARKS.md / docs/scaling.md with the command."""
import json, math, os, signal, subprocess, sys, time, urllib.request

reel, work, coordinator, metrics = sys.argv[1:5]
composition = sys.argv[5]
poll = float(os.environ.get("POLL", "5"))
max_agents = int(os.environ.get("MAX_AGENTS", "3"))
cooldown = float(os.environ.get("COOLDOWN", "30"))
stabilisation = float(os.environ.get("STABILISATION", "20"))
scale_down_period = float(os.environ.get("SCALE_DOWN_PERIOD", "10"))
grace = float(os.environ.get("GRACE", "45"))
drain_seconds = int(os.environ.get("DRAIN_SECONDS", "30"))
chunk_seconds = os.environ.get("CHUNK_SECONDS", "2")
env = dict(os.environ, REEL_COORDINATOR=coordinator, REEL_SECRET_FILE=os.path.join(work, "secret"))
start = time.monotonic()


def log(message):
    print(f"autoscale-sim: {time.monotonic() - start:7.1f} s  {message}", flush=True)


def reel_json(*args):
    return json.loads(subprocess.run([reel, *args, "--json"], env=env, check=True, capture_output=True, text=True).stdout)


def scale():
    with urllib.request.urlopen(f"http://{metrics}/scale", timeout=10) as answer:
        return json.load(answer)


agents = {}      # name -> Popen
stopped = []     # (name, exit status, state when stopped)
serial = 0


def start_agent():
    global serial
    serial += 1
    name = f"sim-{serial}"
    log_file = open(os.path.join(work, f"{name}.log"), "w")
    agents[name] = subprocess.Popen([reel, "agent", "--name", name, "--cache", os.path.join(work, "cache", name),
                                     "--claim-wait", "5", "--drain-seconds", str(drain_seconds)],
                                    env=env, stdout=log_file, stderr=subprocess.STDOUT)
    log(f"started {name}")


def agent_states():
    report = reel_json("agents")
    return {a["name"]: a["state"] for a in report["agents"]}


def stop_agent():
    states = agent_states()
    # Idle first, as a low pod-deletion-cost makes the ReplicaSet choose.
    name = sorted(agents, key=lambda n: (states.get(n) != "idle", n))[0]
    state = states.get(name, "?")
    process = agents.pop(name)
    process.send_signal(signal.SIGTERM)
    try:
        status = process.wait(timeout=grace)
    except subprocess.TimeoutExpired:
        process.kill()
        status = process.wait()
        log(f"{name} did not drain within {grace} s: SIGKILL")
    stopped.append((name, status, state))
    log(f"stopped {name} (it was {state}); exit status {status}")


submitted = time.monotonic()
job = subprocess.run([reel, "submit", composition, "--chunk-seconds", chunk_seconds, "--quiet"], env=env, check=True,
                     capture_output=True, text=True).stdout.strip()
log(f"submitted job {job}")
first_claim = None
history = []          # (time, desired) for the stabilisation window
zero_since = None
last_scale_down = 0.0
job_state = "queued"
while True:
    report = scale()
    now = time.monotonic()
    wanted = report["agentsWanted"]
    desired = min(max_agents, math.ceil(wanted / 1))
    history = [(t, d) for t, d in history if now - t <= stabilisation] + [(now, desired)]
    if desired > len(agents):
        log(f"agentsWanted {wanted} (queued {report['tasksQueued']}, leased {report['tasksLeased']}): scale up to {desired}")
        while len(agents) < desired:
            start_agent()
    else:
        # Scale down to the highest recommendation of the window; to zero only after the cooldown.
        target = max(d for _, d in history)
        zero_since = (zero_since or now) if wanted == 0 else None
        if target == 0 and (zero_since is None or now - zero_since < cooldown):
            target = 1 if agents else 0
        if target < len(agents) and now - last_scale_down >= scale_down_period:
            log(f"agentsWanted {wanted} for the window: scale down to {len(agents) - 1}")
            stop_agent()
            last_scale_down = now
    report = json.loads(subprocess.run([reel, "status", job, "--json"], env=env, check=True, capture_output=True,
                                       text=True).stdout)
    status = report["status"]["jobs"][0]   # `reel status JOB --json`: {"status": {"jobs": [...]}, "agents": ...}
    job_state = status["state"]
    if first_claim is None and (status["tasks"]["running"] > 0 or status["tasks"]["done"] > 0):
        first_claim = now
        log(f"first chunk claimed {now - submitted:.1f} s after the submit ({(now - submitted) / poll:.1f} polling intervals)")
    if job_state in ("done", "failed", "cancelled") and not agents:
        break
    time.sleep(poll)

busy_stops = [s for s in stopped if s[2] not in ("idle", "offline", "draining")]
bad_exits = [s for s in stopped if s[1] != 0]
print(f"job {job}: {job_state}")
print(f"first chunk claimed: {(first_claim - submitted) if first_claim else float('nan'):.1f} s after the submit "
      f"({((first_claim - submitted) / poll) if first_claim else float('nan'):.1f} polling intervals of {poll} s)")
print(f"agents started: {serial}; stopped: {len(stopped)}; stopped while holding a chunk: {len(busy_stops)}; "
      f"exits other than 0: {len(bad_exits)}")
sys.exit(0 if job_state == "done" and not bad_exits else 1)
