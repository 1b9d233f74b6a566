#!/usr/bin/env python3
"""Mutation check of the task lifecycle (docs/task-lifecycle.md): changes one rule at a time in
Sources/ReelStore/Statements/Statements+Lifecycle.swift, rebuilds, runs ReelStoreTests, and
reports whether a test caught it. The file is restored whatever happens. Needs
REEL_TEST_DATABASE_URL (ops/postgres.sh start DIR PORT). Takes a few minutes per mutation.

    REEL_TEST_DATABASE_URL=$(ops/postgres.sh start /tmp/pg 54399) ops/lifecycle-mutations.py
"""
import os
import subprocess
os.chdir(os.path.join(os.path.dirname(os.path.abspath(__file__)), '..'))
P='Sources/ReelStore/Statements/Statements+Lifecycle.swift'
orig=open(P).read()
muts=[
 ("failTask: a task with attempts left fails", "UPDATE tasks SET state = CASE WHEN attempts < max_attempts THEN 'queued' ELSE 'failed' END,\n                         error = $4", "UPDATE tasks SET state = CASE WHEN attempts < max_attempts - 1 THEN 'queued' ELSE 'failed' END,\n                         error = $4"),
 ("releaseTask: a release uses up an attempt", "state = 'queued', attempts = greatest(attempts - 1, 0), lease_owner = NULL", "state = 'queued', attempts = attempts, lease_owner = NULL"),
 ("expireLeasesOfJob: the last attempt's expiry re-queues", "SET state = CASE WHEN t.attempts < t.max_attempts THEN 'queued' ELSE 'failed' END,", "SET state = CASE WHEN t.attempts <= t.max_attempts THEN 'queued' ELSE 'failed' END,"),
 ("shortenLease: no reconnect grace", "least(lease_expires_at, \\(at(4)) + $3::double precision * interval '1 second')", "least(lease_expires_at, \\(at(4)) + 0 * $3::double precision * interval '1 second')"),
 ("handBackRunningChunks: a budget's hand-back uses up an attempt", "SET state = 'queued', attempts = greatest(t.attempts - 1, 0), lease_owner = NULL,", "SET state = 'queued', attempts = t.attempts, lease_owner = NULL,"),
 ("setJobPaused: the operator resumes a job its budget paused", "AND ($2::boolean OR before.why IS DISTINCT FROM 'budget')", "AND ($2::boolean OR true)"),
 ("budgetResumeJob: a raised budget does not resume", "WHERE id = $1::bigint AND state NOT IN \\(terminalJobStates) AND pause_reason = 'budget' RETURNING id", "WHERE id = $1::bigint AND state NOT IN \\(terminalJobStates) AND false RETURNING id"),
 ("requeueDamagedTasks: damaged results keep their used attempts", "UPDATE tasks SET state = 'queued', attempts = 0, result_sha256 = NULL", "UPDATE tasks SET state = 'queued', result_sha256 = NULL"),
]
env=dict(os.environ)
results = []
try:
  for name, a, b in muts:
    assert orig.count(a)==1, name
    open(P,'w').write(orig.replace(a,b))
    r=subprocess.run(['swift','build','--build-tests'],capture_output=True,text=True)
    if r.returncode!=0:
        results.append((name,'BUILD FAILED')); print(name,'build failed',r.stdout[-2000:],flush=True); continue
    t=subprocess.run(['swift','test','--skip-build','--filter','ReelStoreTests'],capture_output=True,text=True,env=env)
    fails=[l for l in t.stdout.splitlines() if l.startswith('✘ Test') and 'failed after' in l]
    results.append((name, 'caught' if t.returncode!=0 else 'NOT CAUGHT', fails[:4]))
    print(results[-1],flush=True)
finally:
  open(P,'w').write(orig)
print('RESULTS')
for r in results: print(r)
