"""The application's CPU time while a node is dead: what its initialisations cost inside it.

Usage: python3 cpu_budget.py VERSION RATE IN_FLIGHT STARTUP_PORT KILL_PID KILL_AT_S DURATION_S

Runs the fidelity matrix's application (app.py) with the virtualenv of redis-py VERSION
(.tools/py/redis-VERSION) against the cluster node on 127.0.0.1:STARTUP_PORT, kills the node
whose PID is KILL_PID (SIGKILL; a node of a cluster the caller started) after KILL_AT_S
seconds, and prints the application's CPU time (user + system) beside its counts.
On a dead node every failed command costs one initialisation, so the CPU time, less the
application's start and its measured costs per command and per connection, over its
initialisations is what one costs inside the application (crates/core/src/replay/models/
redis_py/settings.rs). Restart the killed node afterwards.
"""

import json
import os
import resource
import signal
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def main(version, rate, in_flight, startup, kill_pid, kill_at, duration):
    settings = json.dumps(
        {
            "startup": f"127.0.0.1:{startup}",
            "rate": rate,
            "in_flight": in_flight,
            "duration_s": duration,
            "keys": 1000,
        }
    )
    python = os.path.join(ROOT, ".tools", "py", f"redis-{version}", "bin", "python")
    app = os.path.join(ROOT, "tests", "scenarios", "app.py")
    child = subprocess.Popen(
        [python, app, settings], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    time.sleep(kill_at)
    os.kill(kill_pid, signal.SIGKILL)
    out, _ = child.communicate(timeout=duration + 60)
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    report = json.loads(out)
    keys = ("initializations", "cluster_slots_calls", "new_connections", "errors", "issued",
            "skipped", "calls")
    print("cpu %.2f s" % (usage.ru_utime + usage.ru_stime), {k: report[k] for k in keys})


if __name__ == "__main__":
    if len(sys.argv) != 8:
        sys.exit(__doc__)
    v, r, n, s, k, at, d = sys.argv[1:]
    main(v, int(r), int(n), int(s), int(k), float(at), int(d))
